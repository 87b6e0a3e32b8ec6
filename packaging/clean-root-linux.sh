#!/usr/bin/env bash
# Test the Linux packages as a new user meets them: on a minimal Debian 12 with no fonts.
#   1. a Debian 12 root made by debootstrap --variant=minbase (cached as a tarball after the first run)
#   2. apt installs dist/embedexplorer_<version>_amd64.deb inside it (without Recommends: so no system
#      font comes in, and only the bundled one can draw the text)
#   3. --self-test offscreen, and on an X server of the host (Xvfb, its socket bound into the root);
#      each must print "ok": true and "text": "renders", and write a PNG
#   4. a screenshot of the window on that X server, with a text some of whose characters no font here has
#   5. as a non-root user: unpack the .tar.gz, install.sh, run the installed app's --self-test,
#      uninstall.sh, and check that nothing is left in the home folder
# Pictures and logs go to dist/clean-root/. Needs root (chroot, mount), debootstrap, Xvfb, xdotool,
# and ImageMagick's import (all in .ci/setup). The Debian mirror is the one apt uses here.
# Usage: bash packaging/clean-root-linux.sh [--drop-font]
#   --drop-font  delete the bundled font after installing; every check that draws text must then fail
set -uo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
DROP_FONT=0
for arg in "$@"; do
  case "$arg" in
    --drop-font) DROP_FONT=1 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "clean-root-linux.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

VERSION="$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' embedexplorer/__init__.py | head -1)"
DEB="dist/embedexplorer_${VERSION}_amd64.deb"
ARCHIVE="dist/EmbedExplorer-$VERSION-linux-$(uname -m).tar.gz"
SUITE=bookworm
CACHE="${EMBEDEXPLORER_CI_CACHE:-/var/cache/embedexplorer-ci}"
TARBALL="$CACHE/debian12-minbase.tar"
OUT="dist/clean-root"
TIMEOUT_S="${SMOKE_TIMEOUT_S:-180}"
step() { printf '\n== %s (%ds)\n' "$*" "$((SECONDS - START))"; }
die() { echo "clean-root: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (chroot and mount)"
for tool in debootstrap Xvfb xdotool import; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is missing: run bash .ci/setup"
done
[ -f "$DEB" ] || die "$DEB not found: build it with bash packaging/build-linux.sh"
[ -f "$ARCHIVE" ] || die "$ARCHIVE not found: build it with bash packaging/build-linux.sh"

# The mirror apt uses on this machine (deb822 sources first, then the one-line format).
MIRROR="$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1)"
[ -n "$MIRROR" ] || MIRROR="$(awk '$1 == "deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)"
[ -n "$MIRROR" ] || die "no Debian mirror found in apt's sources"

WORK="$(mktemp -d /tmp/embedexplorer-clean-root.XXXXXX)"
ROOT="$WORK/root"
XVFB_PID=""
MOUNTS=()
cleanup() {
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount -l "${MOUNTS[$i]}" 2>/dev/null; done
  # rm -rf through a mount still in place would delete the host's own /dev or X sockets: keep the
  # folder instead, and say so.
  if awk -v work="$WORK" 'index($2, work) == 1 {found = 1} END {exit !found}' /proc/mounts; then
    echo "clean-root: something is still mounted under $WORK; left in place" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
bind() {  # bind SOURCE TARGET-INSIDE-ROOT [ro]: a folder, or a file (made empty first to mount on)
  if [ -d "$1" ]; then mkdir -p "$ROOT$2"; else mkdir -p "$(dirname "$ROOT$2")" && : >"$ROOT$2"; fi
  mount --bind "$1" "$ROOT$2" && MOUNTS+=("$ROOT$2")
  [ "${3:-}" = ro ] && mount -o remount,bind,ro "$ROOT$2"
  return 0
}
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

mkdir -p "$CACHE/apt-archives" "$OUT"
rm -f "$OUT"/*.png "$OUT"/*.log
if [ ! -f "$TARBALL" ]; then
  step "debootstrap --variant=minbase $SUITE (first run; cached as $TARBALL)"
  debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
  in_root apt-get clean
  tar -C "$ROOT" -cf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
else
  step "unpacking the cached Debian 12 root ($TARBALL)"
  mkdir -p "$ROOT"
  tar -C "$ROOT" -xf "$TARBALL" || die "cannot unpack $TARBALL (delete it to make a new one)"
fi

mount -t proc proc "$ROOT/proc" && MOUNTS+=("$ROOT/proc")
bind /dev /dev
bind /dev/pts /dev/pts
bind "$CACHE/apt-archives" /var/cache/apt/archives  # downloaded packages survive between runs
bind "$(pwd)/dist" /mnt/dist ro
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
fonts_before="$(find "$ROOT/usr/share/fonts" -type f 2>/dev/null | wc -l)"

step "apt-get install ./$(basename "$DEB") in the root (its Depends only)"
# The archives folder is shared by every run on this machine, and apt locks it: two runs at once
# (two CI checkouts) take turns here instead of one failing on the other's lock.
exec 9>"$CACHE/apt-archives.lock"
flock -w 1800 9 || die "another clean-root run held the shared apt archives for 30 minutes"
in_root apt-get update -qq >"$OUT/apt.log" 2>&1 || { tail -20 "$OUT/apt.log" >&2; die "apt-get update failed in the root"; }
in_root DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "/mnt/dist/$(basename "$DEB")" \
  >>"$OUT/apt.log" 2>&1 || { tail -30 "$OUT/apt.log" >&2; die "apt could not install the .deb"; }
flock -u 9
grep -E '^(Setting up|The following NEW)' "$OUT/apt.log" | sed 's/^/  /' | awk 'NR <= 40'
fonts_after="$(find "$ROOT/usr/share/fonts" -type f 2>/dev/null | wc -l)"
echo "fonts under /usr/share/fonts: $fonts_before before, $fonts_after after"
[ -f "$ROOT/usr/share/doc/embedexplorer/copyright" ] || die "the .deb installed no /usr/share/doc/embedexplorer/copyright"
if [ "$DROP_FONT" = 1 ]; then
  echo "--drop-font: deleting the bundled font from /opt/embedexplorer"
  rm -rf "$ROOT/opt/embedexplorer/_internal/resources/fonts"
fi

failures=0
# The user's world: a home of their own, no network models, an empty Hugging Face cache.
in_root useradd --create-home --shell /bin/bash learner || die "useradd failed"
LEARNER="$(awk -F: '$1 == "learner" {print $3 ":" $4}' "$ROOT/etc/passwd")"  # numbers: the host has no learner
as_learner() {
  chroot --userspec="$LEARNER" "$ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin \
    HOME=/home/learner LANG=C.UTF-8 HF_HUB_OFFLINE=1 XDG_RUNTIME_DIR=/tmp/learner-runtime "$@"
}
in_root install -d -m 700 -o learner -g learner /tmp/learner-runtime

self_test() {  # self_test NAME ENV... : run --self-test as the learner, keep its PNG
  local name="$1"; shift
  local started=$SECONDS out
  # --self-test removes its own files; --self-test-png keeps the map where we can look at it.
  out="$(as_learner "$@" timeout "$TIMEOUT_S" embedexplorer --self-test \
    --self-test-png "/home/learner/map-$name.png" 2>"$OUT/$name.log")"
  local rc=$?
  local json png
  json="$(printf '%s\n' "$out" | grep '^{' | tail -1)"
  png="$(printf '%s' "$json" | sed -n 's/.*"png": *"\([^"]*\)".*/\1/p')"
  [ -n "$png" ] && [ -f "$ROOT$png" ] && cp "$ROOT$png" "$OUT/map-$name.png"
  if [ "$rc" -eq 0 ] && printf '%s' "$json" | grep -q '"text": "renders"' && [ -s "$OUT/map-$name.png" ] \
     && [ "$(head -c 4 "$OUT/map-$name.png" | od -An -tx1 | tr -d ' \n')" = 89504e47 ]; then
    echo "PASS $name ($((SECONDS - started)) s): $json"
  else
    echo "FAIL $name: exit $rc: ${json:-no report}" >&2
    tail -c 1500 "$OUT/$name.log" >&2
    failures=$((failures + 1))
  fi
}

step "--self-test offscreen, inside the root"
self_test deb-offscreen QT_QPA_PLATFORM=offscreen

step "--self-test on the host's X server (Xvfb), inside the root"
# Xvfb picks a free display itself and names it once it listens (-displayfd): CI runs this beside
# the tests, whose own X servers come and go. A busy machine may be slow to start it: 2 minutes.
Xvfb -displayfd 9 -screen 0 1280x900x24 -nolisten tcp -ac 9>"$WORK/display" >"$WORK/xvfb.log" 2>&1 &
XVFB_PID=$!
for _ in $(seq 1200); do [ -s "$WORK/display" ] || ! kill -0 "$XVFB_PID" 2>/dev/null && break; sleep 0.1; done
DISPLAY_NUM="$(head -1 "$WORK/display" 2>/dev/null)"
[ -n "$DISPLAY_NUM" ] && [ -S "/tmp/.X11-unix/X$DISPLAY_NUM" ] || die "Xvfb did not start: $(cat "$WORK/xvfb.log")"
# Its own socket only: the tests' X servers beside it keep theirs out of the root's reach.
bind "/tmp/.X11-unix/X$DISPLAY_NUM" "/tmp/.X11-unix/X$DISPLAY_NUM"
self_test deb-xcb DISPLAY=":$DISPLAY_NUM" QT_QPA_PLATFORM=xcb

step "a screenshot of the window inside the root, on the X server"
# A text with characters no font here has (CJK) beside ones the bundled font has: chips show U+ escapes.
# (Set through a settings file: Xvfb's keyboard map has no keys for them.)
printf '[General]\nversion=1\ntext=Paris \346\227\245\346\234\254 caf\303\251\n' >"$ROOT/tmp/screenshot.ini"
chown "$LEARNER" "$ROOT/tmp/screenshot.ini"
as_learner DISPLAY=":$DISPLAY_NUM" QT_QPA_PLATFORM=xcb timeout 300 embedexplorer --settings /tmp/screenshot.ini \
  >"$OUT/window.log" 2>&1 &
app_pid=$!
window_id=""
for _ in $(seq 360); do  # up to 3 minutes: the machine may be busy
  window_id="$(DISPLAY=":$DISPLAY_NUM" xdotool search --name '^EmbedExplorer' 2>/dev/null | head -1)"
  [ -n "$window_id" ] && break
  sleep 0.5
done
if [ -n "$window_id" ]; then
  DISPLAY=":$DISPLAY_NUM" xdotool windowmove "$window_id" 0 0 windowsize "$window_id" 1280 900 2>/dev/null
  sleep 30  # the bundled model loads and the map draws (a picture for people, not a check)
  DISPLAY=":$DISPLAY_NUM" import -window root "$OUT/window.png" && echo "window: $OUT/window.png"
else
  echo "FAIL window: no EmbedExplorer window appeared: $(tail -c 800 "$OUT/window.log")" >&2
  failures=$((failures + 1))
fi
kill "$app_pid" 2>/dev/null
wait "$app_pid" 2>/dev/null

step "the .tar.gz: install.sh as a non-root user, run, uninstall"
as_learner tar -xzf "/mnt/dist/$(basename "$ARCHIVE")" -C /home/learner || die "cannot unpack $ARCHIVE in the root"
unpacked="/home/learner/$(basename "$ARCHIVE" .tar.gz)"
[ "$DROP_FONT" = 1 ] && rm -rf "$ROOT$unpacked/EmbedExplorer/_internal/resources/fonts"
if as_learner bash "$unpacked/install.sh" >"$OUT/install.log" 2>&1; then
  echo "PASS install.sh: $(tail -3 "$OUT/install.log" | head -1)"
  started=$SECONDS
  out="$(as_learner QT_QPA_PLATFORM=offscreen timeout "$TIMEOUT_S" /home/learner/.local/bin/embedexplorer --self-test \
    2>"$OUT/archive-offscreen.log" | grep '^{' | tail -1)"
  if printf '%s' "$out" | grep -q '"ok": true' && printf '%s' "$out" | grep -q '"text": "renders"'; then
    echo "PASS archive-offscreen ($((SECONDS - started)) s): $out"
  else
    echo "FAIL archive-offscreen: ${out:-no report}" >&2
    tail -c 1500 "$OUT/archive-offscreen.log" >&2
    failures=$((failures + 1))
  fi
  as_learner bash /home/learner/.local/share/embedexplorer/uninstall.sh >"$OUT/uninstall.log" 2>&1
  # The error log (~/.local/share/EmbedExplorer/logs) is the user's, like the settings: it stays.
  left="$(find "$ROOT/home/learner/.local" -type f ! -name mimeinfo.cache ! -name icon-theme.cache \
    ! -path '*/EmbedExplorer/logs/*' 2>/dev/null | awk 'NR <= 5')"
  if [ -z "$left" ]; then
    echo "PASS uninstall.sh (nothing left in ~/.local)"
  else
    echo "FAIL uninstall.sh left: $left" >&2
    failures=$((failures + 1))
  fi
else
  echo "FAIL install.sh: $(tail -c 1500 "$OUT/install.log")" >&2
  failures=$((failures + 1))
fi

step "done"
ls -1 "$OUT"/*.png 2>/dev/null | sed 's/^/  /'
if [ "$failures" -ne 0 ]; then
  echo "CLEAN ROOT FAILED: $failures check(s) failed" >&2
  exit 1
fi
echo "clean root passed"
