"""Argument types shared by the commands: whole numbers in their bounds, in one-line errors; typed words."""

from __future__ import annotations

import argparse

from ..core.common.constants import EXPORT_WIDTH_RANGE, K_RANGE, MAX_SEED

MAX_PNG_WIDTH = EXPORT_WIDTH_RANGE[1]


def typed_text(text: str) -> str:
    """A word or text from the command line as the window holds one: bytes that are not UTF-8, which Python keeps
    as lone surrogates, become U+FFFD, so the answer and every sentence name what the tokenizer reads."""
    from ..core.text.vocabulary import clean_text  # the tokenizer's modules load with the command that needs them

    return clean_text(text)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_SEED:,}")
    return value


def window_k(text: str) -> int:
    """A neighbour count the window's k box allows (1 to 200)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not K_RANGE[0] <= value <= K_RANGE[1]:
        raise argparse.ArgumentTypeError(f"must be from {K_RANGE[0]} to {K_RANGE[1]}")
    return value


def png_width(text: str) -> int:
    value = positive_int(text)
    if value > MAX_PNG_WIDTH:
        raise argparse.ArgumentTypeError(f"at most {MAX_PNG_WIDTH:,} pixels")
    return value


def add_exact(parser: argparse.ArgumentParser) -> None:
    """``--exact``: the words read as the tokenizer reads exactly what was typed (as a word in double quotes)."""
    parser.add_argument(
        "--exact",
        action="store_true",
        help='read each word exactly as typed, as a word in double quotes is read (GPT-2: "Paris" is then '
        "the token that starts a text; default: a word alone is the word inside a sentence, _Paris)",
    )


def typed(args: argparse.Namespace, word: str) -> str:
    """``word`` as the window's one rule for typed words should read it (``core/tables/spelling.py``)."""
    from ..core.tables.spelling import exactly

    return exactly(word) if getattr(args, "exact", False) else word
