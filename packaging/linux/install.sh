#!/usr/bin/env bash
# Install EmbedExplorer for the current user: no root, no network, nothing outside your home.
#
#   ./install.sh              copy the app to ~/.local/share/embedexplorer, add it to the desktop menu
#   ./install.sh --uninstall  remove everything install.sh added (so does ~/.local/share/embedexplorer/uninstall.sh)
#
# What it writes (XDG_DATA_HOME defaults to ~/.local/share):
#   $XDG_DATA_HOME/embedexplorer/                         the app folder (EmbedExplorer + _internal/)
#   $XDG_DATA_HOME/applications/embedexplorer.desktop     the menu entry (absolute Exec and Icon)
#   $XDG_DATA_HOME/icons/hicolor/*/apps/embedexplorer.*   the icon, for panels and docks
#   ~/.local/bin/embedexplorer                            a link, so "embedexplorer" works in a terminal
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
BIN_HOME="${EMBEDEXPLORER_BIN_DIR:-$HOME/.local/bin}"
APP_DIR="$DATA_HOME/embedexplorer"
DESKTOP_FILE="$DATA_HOME/applications/embedexplorer.desktop"
ICON_SIZES=(16 24 32 48 64 128 256 512)

say() { printf '%s\n' "$*"; }
refresh_menus() {
  # Desktops notice new entries by themselves; these only make it immediate where available.
  command -v update-desktop-database >/dev/null 2>&1 \
    && update-desktop-database -q "$DATA_HOME/applications" 2>/dev/null || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 \
    && gtk-update-icon-cache -q -t "$DATA_HOME/icons/hicolor" 2>/dev/null || true
}

uninstall() {
  rm -rf "$APP_DIR"
  rm -f "$DESKTOP_FILE"
  for size in "${ICON_SIZES[@]}"; do
    rm -f "$DATA_HOME/icons/hicolor/${size}x${size}/apps/embedexplorer.png"
  done
  rm -f "$DATA_HOME/icons/hicolor/scalable/apps/embedexplorer.svg"
  # Only remove the terminal link if it is ours.
  if [ -L "$BIN_HOME/embedexplorer" ] && [ "$(readlink "$BIN_HOME/embedexplorer")" = "$APP_DIR/EmbedExplorer" ]; then
    rm -f "$BIN_HOME/embedexplorer"
  fi
  refresh_menus
  say "EmbedExplorer removed. Your settings (~/.config/EmbedExplorer), its error log"
  say "(~/.local/share/EmbedExplorer/logs) and any downloaded models (~/.cache/huggingface) were"
  say "left in place; delete them by hand if you want them gone."
}

install() {
  local source="$HERE/EmbedExplorer"
  if [ ! -x "$source/EmbedExplorer" ]; then
    say "install.sh: $source/EmbedExplorer not found; run install.sh from the unpacked archive." >&2
    exit 1
  fi
  local resources="$source/_internal/resources"

  mkdir -p "$DATA_HOME" "$DATA_HOME/applications" "$BIN_HOME"
  # Copy next to the old install, then swap, so a failed copy never leaves a half app.
  rm -rf "$APP_DIR.new"
  cp -a "$source" "$APP_DIR.new"
  rm -rf "$APP_DIR"
  mv "$APP_DIR.new" "$APP_DIR"
  cp "$HERE/install.sh" "$APP_DIR/uninstall.sh"  # the same script; run it with --uninstall

  for size in "${ICON_SIZES[@]}"; do
    mkdir -p "$DATA_HOME/icons/hicolor/${size}x${size}/apps"
    cp "$resources/icons/embedexplorer-$size.png" "$DATA_HOME/icons/hicolor/${size}x${size}/apps/embedexplorer.png"
  done
  mkdir -p "$DATA_HOME/icons/hicolor/scalable/apps"
  cp "$resources/icons/embedexplorer.svg" "$DATA_HOME/icons/hicolor/scalable/apps/embedexplorer.svg"

  # The menu entry ships inside the app; point Exec and Icon at this install. Exec is quoted
  # in case the home folder has a space in it.
  local exec_path="$APP_DIR/EmbedExplorer"
  local quoted="$exec_path"
  case "$exec_path" in *[[:space:]]*) quoted="\"$exec_path\"" ;; esac
  sed -e "s|^Exec=.*|Exec=$quoted|" \
      -e "s|^Icon=.*|Icon=$APP_DIR/_internal/resources/icons/embedexplorer-256.png|" \
      "$resources/embedexplorer.desktop" > "$DESKTOP_FILE.tmp"
  mv "$DESKTOP_FILE.tmp" "$DESKTOP_FILE"
  chmod 644 "$DESKTOP_FILE"

  ln -sfn "$APP_DIR/EmbedExplorer" "$BIN_HOME/embedexplorer"

  if command -v desktop-file-validate >/dev/null 2>&1; then
    desktop-file-validate "$DESKTOP_FILE"
  fi
  refresh_menus
  say "EmbedExplorer installed in $APP_DIR"
  say "Start it from your desktop menu (Education > EmbedExplorer), or run: $exec_path"
  case ":$PATH:" in *":$BIN_HOME:"*) say "In a terminal, 'embedexplorer' works too." ;; esac
  say "To remove it: $APP_DIR/uninstall.sh"
}

# The copy kept in the app folder is called uninstall.sh and uninstalls by default.
default_action=install
[ "$(basename "$0")" = uninstall.sh ] && default_action=--uninstall
case "${1:-$default_action}" in
  --uninstall|uninstall) uninstall ;;
  --install|install) install ;;
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) say "install.sh: unknown option $1 (use --uninstall or --help)" >&2; exit 2 ;;
esac
