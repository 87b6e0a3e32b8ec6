"""Argument types shared by the commands: whole numbers in their bounds, in one-line errors."""

from __future__ import annotations

import argparse

from ..core.common.constants import EXPORT_WIDTH_RANGE, MAX_SEED

MAX_PNG_WIDTH = EXPORT_WIDTH_RANGE[1]


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


def png_width(text: str) -> int:
    value = positive_int(text)
    if value > MAX_PNG_WIDTH:
        raise argparse.ArgumentTypeError(f"at most {MAX_PNG_WIDTH:,} pixels")
    return value
