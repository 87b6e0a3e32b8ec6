"""Strip debug symbols from the shared libraries of a PyInstaller folder, keeping only what still loads.

PyInstaller's own ``strip=True`` strips everything, and some wheels' libraries (numpy's
OpenBLAS, rewritten by auditwheel/patchelf) no longer load afterwards ("ELF load command
address/offset not page-aligned").  So: for each library, try loading it, strip it, try again,
and put the original back if it loaded before and does not now.  Libraries that did not load
before stripping (plugins for a missing system library) are left alone.  The launcher itself
is never touched: its archive is appended after the ELF data.

Then one copy of each library that two wheels vendor byte for byte under the same name
(numpy's and scipy's libgfortran and libquadmath, scikit-learn's and openTSNE's libgomp:
3.2 MiB): the later copy becomes a relative symlink to the first.  The dynamic loader finds it
by the same name either way, and whichever wheel loads first, the other reuses the loaded
library (same soname).

Usage: python packaging/strip_bundle.py dist/EmbedExplorer
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

_LOAD = "import ctypes, sys\nctypes.CDLL(sys.argv[1])\n"


def is_elf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == b"\x7fELF"


def loads(path: Path, env: dict[str, str]) -> bool:
    result = subprocess.run([sys.executable, "-c", _LOAD, str(path)], env=env, capture_output=True, timeout=60)
    return result.returncode == 0


def link_duplicates(internal: Path) -> int:
    """Replace byte-identical same-named libraries in different ``*.libs`` folders by symlinks."""
    first: dict[tuple[str, int], Path] = {}
    saved = 0
    for path in sorted(internal.glob("*.libs/*")):
        if path.is_symlink() or not path.is_file():
            continue
        key = (path.name, path.stat().st_size)
        original = first.setdefault(key, path)
        if original is path or not filecmp.cmp(original, path, shallow=False):
            continue
        saved += path.stat().st_size
        path.unlink()
        path.symlink_to(os.path.relpath(original, path.parent))
        print(f"  {path.relative_to(internal)} -> {original.relative_to(internal)} (the same library)")
    return saved


def main(folder: str) -> int:
    root = Path(folder).resolve()
    internal = root / "_internal"
    if not internal.is_dir():
        print(f"{root} is not a PyInstaller onedir folder", file=sys.stderr)
        return 1
    strip = shutil.which("strip")
    if strip is None:
        print("strip not found (install binutils); leaving binaries as they are", file=sys.stderr)
        return 0
    env = dict(os.environ)
    lib_dirs = [internal, internal / "PySide6" / "Qt" / "lib", *internal.glob("*.libs")]
    env["LD_LIBRARY_PATH"] = os.pathsep.join(str(d) for d in lib_dirs if d.is_dir())
    env["QT_QPA_PLATFORM"] = "offscreen"

    before = after = 0
    stripped, restored, unloadable = 0, [], []
    for path in sorted(internal.rglob("*")):
        if path.is_symlink() or not path.is_file() or not is_elf(path):
            continue
        size = path.stat().st_size
        before += size
        if not loads(path, env):
            unloadable.append(str(path.relative_to(root)))
            after += size
            continue
        backup = path.with_name(path.name + ".unstripped")
        shutil.copy2(path, backup)
        subprocess.run([strip, "--strip-unneeded", str(path)], check=False, capture_output=True)
        if loads(path, env):
            backup.unlink()
            stripped += 1
        else:
            os.replace(backup, path)
            restored.append(str(path.relative_to(root)))
        after += path.stat().st_size
    print(
        f"strip: {stripped} libraries stripped, {len(restored)} kept as they were because stripping "
        f"broke them, {len(unloadable)} not loadable here and left alone; "
        f"{before / 2**20:.1f} MiB -> {after / 2**20:.1f} MiB"
    )
    for name in restored:
        print(f"  not stripped: {name}")
    if unloadable:
        print("  not loadable on this machine (a system library is missing, e.g. Wayland's), left alone: "
              + ", ".join(Path(name).name for name in unloadable))
    saved = link_duplicates(internal)
    print(f"duplicates: {saved / 2**20:.1f} MiB replaced by symlinks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "dist/EmbedExplorer"))
