#!/usr/bin/env bash
# Wrap dist/EmbedExplorer into dist/embedexplorer_<version>_amd64.deb (called by build-linux.sh).
# The app goes to /opt/embedexplorer, a link to /usr/bin/embedexplorer, the menu entry and icons
# to /usr/share. Install with: sudo apt install ./dist/embedexplorer_<version>_amd64.deb
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION="${1:?usage: build-deb.sh VERSION}"
ROOT_DIR="build/deb/embedexplorer"
rm -rf build/deb
mkdir -p "$ROOT_DIR/DEBIAN" "$ROOT_DIR/opt" "$ROOT_DIR/usr/bin" "$ROOT_DIR/usr/share/applications"
cp -al dist/EmbedExplorer "$ROOT_DIR/opt/embedexplorer"
ln -s /opt/embedexplorer/EmbedExplorer "$ROOT_DIR/usr/bin/embedexplorer"

RES=dist/EmbedExplorer/_internal/resources
sed -e "s|^Exec=.*|Exec=/opt/embedexplorer/EmbedExplorer|" -e "s|^Icon=.*|Icon=embedexplorer|" \
  "$RES/embedexplorer.desktop" > "$ROOT_DIR/usr/share/applications/embedexplorer.desktop"
for size in 16 24 32 48 64 128 256 512; do
  mkdir -p "$ROOT_DIR/usr/share/icons/hicolor/${size}x${size}/apps"
  cp "$RES/icons/embedexplorer-$size.png" "$ROOT_DIR/usr/share/icons/hicolor/${size}x${size}/apps/embedexplorer.png"
done
mkdir -p "$ROOT_DIR/usr/share/icons/hicolor/scalable/apps"
cp "$RES/icons/embedexplorer.svg" "$ROOT_DIR/usr/share/icons/hicolor/scalable/apps/embedexplorer.svg"

# Debian's machine-readable copyright file: one paragraph per part, pointing at its texts.
DOC="$ROOT_DIR/usr/share/doc/embedexplorer"
mkdir -p "$DOC"
python3 packaging/linux/debian_copyright.py dist/EmbedExplorer/_internal/licences /opt/embedexplorer/_internal/licences \
  > "$DOC/copyright"
ln -s /opt/embedexplorer/_internal/licences "$DOC/licences"

# PyInstaller bundles every library except glibc and the GL/X driver stack, so only those are
# needed from the system; glibc must be at least the newest symbol version the bundle uses.
GLIBC="$(find dist/EmbedExplorer -type f \( -name '*.so*' -o -name EmbedExplorer \) -exec objdump -T {} + 2>/dev/null \
  | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -Vu | tail -1)"
GLIBC="${GLIBC:-2.31}"
INSTALLED_KB="$(du -sk --apparent-size "$ROOT_DIR" | cut -f1)"
cat > "$ROOT_DIR/DEBIAN/control" <<EOF
Package: embedexplorer
Version: $VERSION
Section: science
Priority: optional
Architecture: amd64
Installed-Size: $INSTALLED_KB
Depends: libc6 (>= $GLIBC), libgl1, libegl1, libxcb1
Recommends: fontconfig, fonts-dejavu-core, fonts-noto-color-emoji
Maintainer: EmbedExplorer developers <embedexplorer@localhost>
Description: look inside a language model's token embedding table
 Type a word and see its tokens and ids, the row of numbers behind each token,
 its nearest neighbours by cosine, and a map of words from eight families.
 The all-MiniLM-L6-v2 embedding table is included, so it works offline.
 It carries its own font (DejaVu Sans) for the map and its pictures; the system's
 fonts (Recommends) serve the rest of the window where they exist.
EOF
# Menus refresh themselves through dpkg triggers on /usr/share/applications and the icon theme.
find "$ROOT_DIR" -type d -exec chmod 755 {} +
dpkg-deb --root-owner-group -Zgzip -z6 --build "$ROOT_DIR" "dist/embedexplorer_${VERSION}_amd64.deb" >/dev/null
rm -rf build/deb
echo "dist/embedexplorer_${VERSION}_amd64.deb"
