"""llama.cpp's split GGUFs (``gguf-split``): ``NAME-00001-of-00003.gguf`` and its sibling parts.

Every part is a GGUF file with ``split.no`` (counting from 0) and ``split.count`` in its
metadata; the first part holds the tokenizer, and each tensor is in exactly one part.
The names follow llama.cpp's ``llama_split_path``: ``%s-%05d-of-%05d.gguf``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import CorruptWeightsError, ModelNotFoundError
from .gguf_file import GgufFile, read_gguf

SPLIT_NAME = re.compile(r"(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf", re.IGNORECASE)
SPLIT_NO = "split.no"
SPLIT_COUNT = "split.count"
# llama.cpp's gguf-split writes at most 99,999 parts (five digits); real models have a few dozen.
MAX_PARTS = 99_999


@dataclass(frozen=True)
class SplitName:
    """What a part's name says: the shared stem, this part's number (from 1) and how many parts there are."""

    folder: Path
    stem: str
    number: int
    count: int

    def part(self, number: int) -> Path:
        return self.folder / f"{self.stem}-{number:05d}-of-{self.count:05d}.gguf"

    def parts(self) -> list[Path]:
        return [self.part(number) for number in range(1, self.count + 1)]


def split_name(path: Path) -> SplitName | None:
    """The split a file's name says it belongs to, or None for a file of one piece."""
    match = SPLIT_NAME.fullmatch(path.name)
    if match is None:
        return None
    number, count = int(match["no"]), int(match["count"])
    if not 1 <= number <= count or count < 2:
        return None
    return SplitName(path.parent, match["stem"], number, count)


def missing_numbers(split: SplitName) -> list[int]:
    """The numbers (from 1) of the parts of ``split`` that are not regular files in its folder.

    The folder is listed once and each part looked up by name, so the time grows with the
    folder and the count, never with their product: one file that claims 99,999 parts
    costs a few milliseconds, not minutes.
    """
    present: set[str] = set()
    try:
        with os.scandir(split.folder) as entries:
            for entry in entries:
                if SPLIT_NAME.fullmatch(entry.name) is None:
                    continue
                try:
                    if entry.is_file():  # a FIFO or a folder under a part's name is no part
                        present.add(entry.name)
                except OSError:
                    continue
    except OSError:
        pass
    return [number for number in range(1, split.count + 1) if split.part(number).name not in present]


def missing_text(split: SplitName, missing: list[int]) -> str:
    """The missing parts in a few words: "part 2 of 3 missing", "parts 2, 3, 4 and 99,995 more of 99,999 missing"."""
    shown = ", ".join(f"{number:,}" for number in missing[:3])
    more = f" and {len(missing) - 3:,} more" if len(missing) > 3 else ""
    return f"part{'s' if len(missing) > 1 else ''} {shown}{more} of {split.count:,} missing"


def missing_sentence(split: SplitName, missing: list[int]) -> str:
    """One sentence naming the missing parts of a split model."""
    names = ", ".join(split.part(number).name for number in missing[:3])
    names += f" and {len(missing) - 3:,} more" if len(missing) > 3 else ""
    verb = "is" if len(missing) == 1 else "are"
    return (
        f"{split.part(split.number).name} is part of a model split into {split.count:,} files, and {names} {verb} "
        f"missing from {split.folder}; download every part into the same folder."
    )


def read_parts(path: Path) -> list[GgufFile]:
    """The headers of every part of the model ``path`` belongs to, first part first ([it] when not split).

    Any part opens the whole model; a missing part is named in one sentence, and parts
    whose numbers disagree with their names are refused.
    """
    header = read_gguf(path)
    count = header.metadata.get(SPLIT_COUNT, 1)
    if not isinstance(count, int) or count <= 1:
        return [header]
    split = split_name(path)
    if split is None or split.count != count:
        raise ModelNotFoundError(
            f"{path.name} is one of {count} parts of a split model, but its name does not say which "
            "(llama.cpp names them NAME-00001-of-00003.gguf); give the parts their original names."
        )
    absent = missing_numbers(split)
    if absent:
        raise ModelNotFoundError(missing_sentence(split, absent))
    headers = [header if part == path else read_gguf(part) for part in split.parts()]
    for number, part in enumerate(headers):
        if part.metadata.get(SPLIT_NO) != number or part.metadata.get(SPLIT_COUNT) != count:
            raise CorruptWeightsError(
                f"{part.path.name} says it is part {_part_no(part)} of {part.metadata.get(SPLIT_COUNT, 1)}, "
                f"but its name says part {number + 1} of {count}; the parts come from different models."
            )
    return headers


def _part_no(header: GgufFile) -> object:
    number = header.metadata.get(SPLIT_NO)
    return number + 1 if isinstance(number, int) else "(none)"
