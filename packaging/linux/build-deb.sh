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

INSTALLED_KB="$(du -sk --apparent-size "$ROOT_DIR" | cut -f1)"
cat > "$ROOT_DIR/DEBIAN/control" <<EOF
Package: embedexplorer
Version: $VERSION
Section: science
Priority: optional
Architecture: amd64
Installed-Size: $INSTALLED_KB
Depends: libc6, libfontconfig1, libfreetype6, libdbus-1-3, libegl1, libgl1, libxkbcommon0, libxkbcommon-x11-0, libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1, libxcb-image0, libxcb-randr0, libxcb-render-util0, libxcb-shape0, libxcb-xinerama0, libxcb-xkb1
Maintainer: EmbedExplorer developers <embedexplorer@localhost>
Description: look inside a language model's token embedding table
 Type a word and see its tokens and ids, the row of numbers behind each token,
 its nearest neighbours by cosine, and a map of words from eight families.
 The all-MiniLM-L6-v2 embedding table is included, so it works offline.
EOF
# Menus refresh themselves through dpkg triggers on /usr/share/applications and the icon theme.
find "$ROOT_DIR" -type d -exec chmod 755 {} +
dpkg-deb --root-owner-group -Zgzip -z6 --build "$ROOT_DIR" "dist/embedexplorer_${VERSION}_amd64.deb" >/dev/null
rm -rf build/deb
echo "dist/embedexplorer_${VERSION}_amd64.deb"
