"""Which model am I looking at: the chapter's numbers are GPT-2 small's, and a quiet notice says so."""

from __future__ import annotations

from ..common.constants import GPT2_HUB_ID

# What the analogy exercise says under every answer.
NO_CLAIM = (
    "The chapter makes no claim about this arithmetic: it only measured that king and queen "
    "are close neighbours (cosine 0.657 in GPT-2)."
)
# GPT-2 small's token table: the chapter's "(50257, 768)".
CHAPTER_SHAPE = (50_257, 768)
CHAPTER_MODEL = GPT2_HUB_ID


def is_chapter_model(rows: int, width: int) -> bool:
    """True for a table of GPT-2 small's shape (its vocabulary and width)."""
    return (rows, width) == CHAPTER_SHAPE


def chapter_notice(name: str, rows: int, width: int) -> str:
    """One quiet sentence when the open model is not GPT-2 small; "" when it is."""
    if is_chapter_model(rows, width):
        return ""
    return (
        f"The chapter's numbers are GPT-2 small's ({CHAPTER_SHAPE[0]:,} rows x {CHAPTER_SHAPE[1]} numbers). "
        f"This is {name} ({rows:,} x {width:,}), so its tokens, neighbours and cosines differ."
    )
