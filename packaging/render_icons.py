"""Render resources/icons/embedexplorer.svg into the PNG, .ico and .icns files the platforms need.

Uses only PySide6 (QtSvg is in PySide6-Essentials), so it runs wherever the app runs:
``QT_QPA_PLATFORM=offscreen python packaging/render_icons.py``.  The outputs are committed;
run this again only after editing the SVG.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "icons" / "embedexplorer.svg"
OUT = ROOT / "resources" / "icons"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# icns element types holding PNG data, by pixel size (macOS 10.7+ reads all of them).
ICNS_TYPES = ((b"icp4", 16), (b"icp5", 32), (b"icp6", 64), (b"ic07", 128), (b"ic08", 256),
              (b"ic09", 512), (b"ic10", 1024), (b"ic11", 32), (b"ic12", 64), (b"ic13", 256),
              (b"ic14", 512))


def render(renderer: QSvgRenderer, size: int) -> bytes:
    """The icon as PNG bytes, size x size pixels, transparent outside the rounded square."""
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """A Windows .ico with PNG-compressed entries (read by Windows Vista and later)."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = 6 + 16 * len(pngs)
    entries, blobs = b"", b""
    for size, png in sorted(pngs.items()):
        side = 0 if size >= 256 else size  # 0 means 256 in the ICO directory
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        blobs += png
        offset += len(png)
    return header + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    """A macOS .icns holding PNG elements."""
    body = b"".join(kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        print(f"cannot read {SVG}", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    sizes = sorted({*PNG_SIZES, *ICO_SIZES, *(s for _, s in ICNS_TYPES)})
    pngs = {size: render(renderer, size) for size in sizes}
    for size in PNG_SIZES:
        (OUT / f"embedexplorer-{size}.png").write_bytes(pngs[size])
    (OUT / "embedexplorer.ico").write_bytes(ico({s: pngs[s] for s in ICO_SIZES}))
    (OUT / "embedexplorer.icns").write_bytes(icns(pngs))
    del app
    print(f"wrote {len(PNG_SIZES)} PNGs, embedexplorer.ico and embedexplorer.icns into {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
