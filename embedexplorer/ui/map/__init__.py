"""The map: the pane, the view, the canvas and its parts, families, exports."""
