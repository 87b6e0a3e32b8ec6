"""``embedexplorer models``: the models on this computer, as File > Local models lists them."""

from __future__ import annotations

import argparse

from ...core.common.terminal import one_line
from ..command import Answer, Command, ProgressReport


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace, progress: ProgressReport | None) -> Answer:
    """The models File > Local models lists (without the window's recent files: they are its settings, in Qt)."""
    from ...core.common.files import size_text
    from ...core.sources.discovery import local_models

    models = local_models()
    rows: list[tuple[str, ...]] = [("NAME", "SOURCE", "FORMAT", "STORAGE", "SIZE", "WHERE")]
    for model in models:
        where = f"MISSING: {model.missing} ({model.location})" if model.missing else model.location
        size = size_text(model.size_bytes) if model.size_bytes else "-"
        # One row per model whatever its name holds: a newline in a folder name cannot forge a row.
        cells = (model.name, model.kind, model.file_format or "-", model.storage or "-", size, where)
        rows.append(tuple(one_line(cell) for cell in cells))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row[:5], widths, strict=True)) + "  " + row[5] for row in rows]
    if not models:
        lines = ["No models found (looked in the Hugging Face cache, Ollama's and LM Studio's folders)."]
    return {"models": [model.as_json() for model in models]}, "\n".join(lines)


COMMAND = Command(
    "models",
    "the models on this computer: Hugging Face cache, Ollama, LM Studio and recent files",
    arguments,
    run=run,
    json_key="models",
)
