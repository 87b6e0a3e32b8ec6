"""What the Layers pane writes and where: its table's columns, sentences about the output head and
the place, and the cosine axis's top that leaves room for the table line's label."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ...core.layers import output_head as oh

if TYPE_CHECKING:  # the engine's types, named only: it loads after the window shows
    from ...core.layers.trace import LayersAnswer

# The table's own cosine of a token's row with itself: where both texts start.
TABLE_COSINE = 1.0
LEGEND_TEXT_PT = 9.0
# The cosine axis's least extent; a lower value widens it (a cosine can end below zero).
COSINE_BOTTOM, COSINE_TOP = -0.1, 1.08
BELOW_LOWEST = 0.05
# The per-layer table's columns.
LAYER_COLUMN, ROW_COLUMN, TWO_COLUMN, GUESS_COLUMN, NEAREST_COLUMN = range(5)
COLUMNS = ("layer", "cos row", "cos two tokens", "the model's guess (probability)", "nearest table rows (cosine)")
COLUMN_TIPS = (
    "After which layer (input: what enters layer 1)",
    "Cosine of the vector and the token's own table row",
    "Cosine of the two compared tokens' vectors after the same layer",
    "What the model itself would say had it stopped here: its output head (final norm, dot product with "
    "every head row, length and all, softmax). After the last layer it is the model's real guess.",
    "The table rows pointing the same way as the vector (cosine, length ignored): which rows it "
    "resembles, not what the model would say",
)


def head_words(answer: LayersAnswer) -> str:
    """Whether the embedding table is used again at the end, and for an own head how alike the token's two rows are."""
    token = rich_text(answer.token.token.token)
    if answer.head_kind == oh.TIED:
        return "Output head: <b>the embedding table itself</b> (tied): the table is used again at the end."
    if answer.head_kind == oh.MASKED:
        return "Output head: a masked-LM head whose rows are <b>the embedding table</b> (tied), after a transform."
    if answer.head_kind == oh.OWN:
        cosine = answer.head_row_cosine
        shown = (
            "" if cosine is None else f" Cosine of <b>{token}</b>'s input row and its output row: <b>{cosine:.3f}</b>."
        )
        return f"Output head: <b>a table of its own</b> (untied), not the embedding table.{shown}"
    if answer.head_kind == oh.DECODER:
        return (
            "Output head: <b>the decoder's</b> (an encoder-decoder model): these layers are the encoder's, "
            "which reads the table; no guess to show."
        )
    return "Output head: <b>none</b> in this folder (an encoder saved without one): no guess to show."


def place_words(answer: LayersAnswer) -> str:
    """Which position row the place reads, counted from 1 as places are (BERT's [CLS] takes row 1)."""
    placed = answer.token
    row = next((name for name, _ in answer.input.parts if name.startswith("position row")), None)
    if row is None:
        return f"Place {placed.place} (counted from 1): this model has no position table."
    shift = " ([CLS] takes row 1, so each place reads the row after it)" if placed.position != placed.place - 1 else ""
    return f"Place {placed.place} reads {row}; both count from 1, as the chapter does{shift}."


def label_fits(plot_height: float, label_height: float) -> bool:
    """Whether a plot this tall has room for the table line's label above the curves (half of it at most)."""
    return plot_height > 2 * label_height


def top_with_room(bottom: float, plot_height: float, label_height: float) -> float:
    """The top of the cosine axis that leaves ``label_height`` pixels above the table's line at 1.0.

    A cosine is never above 1, so the label sits there and no curve can run through it. With
    ``H`` pixels for ``top - bottom``, the room above the line is ``(top - 1) H / (top - bottom)``;
    that equals the label's height ``h`` at ``top = (H - h bottom) / (H - h)``.
    """
    if not label_fits(plot_height, label_height):  # not laid out yet, or too short: the label is hidden
        return COSINE_TOP
    exact = (plot_height - label_height * bottom) / (plot_height - label_height)
    return max(COSINE_TOP, exact)


def rich_text(text: str) -> str:
    """Text for a rich-text label: markup characters escaped, quotes left as they are."""
    return escape(text, quote=False)


def size_words(n_bytes: int) -> str:
    """A model's size in GB or MB, as the download offer says it."""
    return f"{n_bytes / 1e9:,.1f} GB" if n_bytes >= 1e9 else f"{n_bytes / 1e6:,.0f} MB"
