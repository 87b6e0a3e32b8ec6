"""The map's sizes in pixels at the normal scale: markers, labels, the caption's share, a picture's least scene."""

# Beyond this many points only family words (and rings) get labels; hover tips name the rest.
MAX_LABELLED_POINTS = 500
# Gap between a dot and its label, in pixels.
LABEL_GAP_PX = 4.0
# A big map's grey dots and its family dots, in pixels.
REST_SIZE, BIG_FAMILY_SIZE, SMALL_FAMILY_SIZE = 4, 9, 11
# The overlays' markers, in pixels at the normal scale.
HIGHLIGHT_SIZE, MATCH_SIZE, CURRENT_SIZE, STAR_SIZE, RING_SIZE = 16, 13, 22, 22, 15
LEGEND_TEXT_PT = 11.0
# The most of the canvas' height the whole caption may take before it shows its first line only.
CAPTION_SHARE = 0.3
# The least size, in scene pixels, the map is laid out at for a picture (the command line's canvas).
EXPORT_SCENE = (1000, 760)


# The corners of the star's name tried in turn: above right, below right, above left, below left.
STAR_LABEL_CORNERS = ((0.0, 1.0), (0.0, 0.0), (1.0, 1.0), (1.0, 0.0))
# How far (pixels) from a ring's or dot's centre the star's name keeps, at the normal scale.
STAR_LABEL_CLEARANCE = RING_SIZE / 2
