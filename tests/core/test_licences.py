"""The licences folder: written from a build's contents, read back for the About box."""

from __future__ import annotations

import importlib.util
import json
from importlib import metadata
from pathlib import Path

from embedexplorer import licences

ROOT = Path(__file__).resolve().parents[2]


def _writer():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("write_licences", ROOT / "packaging" / "write_licences.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_folder_holds_the_texts_of_what_was_collected(tmp_path) -> None:
    from embedexplorer.core.sources.resolve import bundled_model_dir

    pure = [("numpy._core", "", "PYMODULE"), ("torch.nn", "", "PYMODULE"), ("tokenizers", "", "PYMODULE")]
    binaries = [("PySide6/Qt/lib/libQt6Core.so.6", "/nowhere/site-packages/PySide6/Qt/lib/libQt6Core.so.6", "BINARY")]
    folder = _writer().write(tmp_path / "licences", pure, binaries, [], root=ROOT, model_dir=bundled_model_dir())
    items = {c.name: c for c in licences.components(folder)}
    for name, dist in (("numpy", "numpy"), ("torch", "torch"), ("tokenizers", "tokenizers")):
        assert items[name].version == metadata.version(dist)
    assert items["Qt 6 and PySide6"].version == metadata.version("pyside6-essentials")
    assert {"EmbedExplorer", "Python", "all-MiniLM-L6-v2 (the bundled model)", "DejaVu fonts"} <= set(items)
    assert "scipy" not in items  # installed here, but not collected
    for item in items.values():
        assert item.files and all((folder / f).is_file() for f in item.files), item
    qt_texts = {Path(f).name for f in items["Qt 6 and PySide6"].files}
    assert {"LGPL-3", "GPL-3"} <= qt_texts
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in (folder / items["Qt 6 and PySide6"].files[1]).read_text()
    model_files = {Path(f).name: f for f in items["all-MiniLM-L6-v2 (the bundled model)"].files}
    assert "license: apache-2.0" in (folder / model_files["README.md"]).read_text()  # the model card
    assert "Apache License" in (folder / model_files["Apache-2.0"]).read_text()
    assert items["tokenizers"].licence == "Apache Software License"
    assert any("Apache License" in (folder / f).read_text() for f in items["tokenizers"].files)
    index = json.loads((folder / "index.json").read_text())
    # The app's own licence first, then its parts by name.
    assert index[0]["name"] == "EmbedExplorer"
    assert [e["name"] for e in index[1:]] == sorted((e["name"] for e in index[1:]), key=str.lower)
    readme = (folder / "README.txt").read_text()
    assert f"torch {metadata.version('torch')}:" in readme


def test_a_source_checkout_lists_the_main_parts_from_metadata() -> None:
    items = {c.name: c for c in licences.components()}
    assert items["numpy"].version == metadata.version("numpy")
    assert items["pyqtgraph"].licence == "MIT"
    html = licences.about_html(list(items.values()), None)
    assert f"<td>numpy</td><td>{metadata.version('numpy')}</td>" in html
    assert "come with each installed package" in html


def test_the_debian_copyright_file_names_every_part(tmp_path, capsys) -> None:
    from embedexplorer.core.sources.resolve import bundled_model_dir

    folder = _writer().write(tmp_path / "licences", [("torch", "", "PYMODULE")], [], [], root=ROOT,
                             model_dir=bundled_model_dir())
    script = ROOT / "packaging" / "linux" / "debian_copyright.py"
    spec = importlib.util.spec_from_file_location("debian_copyright", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    assert module.main(str(folder), "/opt/embedexplorer/_internal/licences") == 0
    text = capsys.readouterr().out
    paragraphs = text.strip().split("\n\n")
    assert paragraphs[0].startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    files = [p for p in paragraphs if p.startswith("Files: ")]
    assert files[0].splitlines()[:3] == ["Files: *", "Copyright: EmbedExplorer developers", "License: MIT"]
    torch_paragraph = next(p for p in files if p.startswith("Files: opt/embedexplorer/_internal/torch/*"))
    assert f"torch {metadata.version('torch')}" in torch_paragraph
    # every paragraph has the three fields, and the stand-alone MIT text closes the file
    assert all({"Files", "Copyright", "License"} <= {line.split(":")[0] for line in p.splitlines()} for p in files)
    assert paragraphs[-1].startswith("License: MIT\n Permission is hereby granted")


def test_the_version_is_written_once_and_read_everywhere() -> None:
    import re
    import subprocess
    import sys

    from embedexplorer import __version__

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and not re.search(r'^version\s*=\s*"', pyproject, re.MULTILINE)
    assert metadata.version("embedexplorer") == __version__  # what the installer read from it
    shown = subprocess.run([sys.executable, "-m", "embedexplorer", "--version"], capture_output=True, text=True)
    assert shown.stdout.strip() == f"embedexplorer {__version__}"
    assert f"## {__version__} " in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    spec_common = _load(ROOT / "packaging" / "spec_common.py")
    assert spec_common.version() == __version__ == _writer()._project_version(ROOT)


def test_the_apps_own_licence_comes_first(tmp_path) -> None:
    from embedexplorer.core.sources.resolve import bundled_model_dir

    folder = _writer().write(tmp_path / "licences", [], [], [], root=ROOT, model_dir=bundled_model_dir())
    first = licences.components(folder)[0]
    assert (first.name, first.licence) == ("EmbedExplorer", "MIT")
    assert (folder / first.files[0]).read_text() == (ROOT / "LICENSE").read_text()
    assert "MIT License Copyright (c) 2026 The EmbedExplorer authors" in licences.about_html([first], folder)


def _load(path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module
