#!/usr/bin/env bash
# presentation_test.sh ATTNVIZ UI_CHECK OUTDIR
# The real window under Xvfb, driven by xdotool, for what only a real window does:
#  1. F11: the window fills the monitor (1280×800 here), F11 again: back to its size and place;
#  2. Ctrl+= while frames are drawn: the fonts are rasterised anew and the GL font texture made
#     again mid-run (the last frame's text is 20 px, scale 1.25, drawn with the new glyphs: the
#     screenshot shows it in the theme's white), and the window goes on;
#  3. the text size chosen is kept in the layout file and used at the next start; --ui-scale wins
#     over it;
#  4. a HiDPI screen (Xft.dpi 192, a content scale of 2) doubles the text at start.
# Exits 77 (ctest: skipped) only when no X server can be started or xdotool or xprop is missing.
set -euo pipefail
attnviz=$1 ui_check=$2 out=$3
rm -rf "$out"
mkdir -p "$out"

command -v Xvfb >/dev/null || { echo "SKIP: Xvfb is not installed (./scripts/test installs it)"; exit 77; }
command -v xdotool >/dev/null || { echo "SKIP: xdotool is not installed (./scripts/test installs it)"; exit 77; }
command -v xprop >/dev/null || { echo "SKIP: xprop (x11-utils) is not installed (./scripts/test installs it)"; exit 77; }
# -noreset: the root window keeps its properties (the HiDPI setting below) between clients.
exec 3< <(Xvfb -displayfd 1 -noreset -screen 0 1280x800x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
app_pid=""
trap 'kill $xvfb_pid 2>/dev/null || true; [ -n "$app_pid" ] && kill -9 $app_pid 2>/dev/null || true' EXIT
display=""
read -r -t 20 display <&3 || true
[ -n "$display" ] || { echo "SKIP: Xvfb could not start an X server"; exit 77; }
export DISPLAY=":$display" LIBGL_ALWAYS_SOFTWARE=1
export XDG_STATE_HOME="$out/state" XDG_CONFIG_HOME="$out/config" XDG_DATA_HOME="$out/data"
fail() { echo "FAIL: $*"; exit 1; }
geometry() { xdotool getwindowgeometry "$1" | awk '/Position/ {p=$2} /Geometry/ {g=$2} END {print p, g}'; }
font_px() { python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["values"]["view: font px"]))' "$1"; }
window_of() {
    local w
    w=$(xdotool search --sync --onlyvisible --name 'attnviz' | head -n 1)
    [ -n "$w" ] || fail "no window"
    xdotool windowfocus --sync "$w" 2>/dev/null || true
    echo "$w"
}

# 1. Full screen and back to the size and place the window had.
"$attnviz" --size 800x500 --autosave-seconds 0 &
app_pid=$!
window=$(window_of)
xdotool windowmove --sync "$window" 100 60 2>/dev/null || xdotool windowmove "$window" 100 60
sleep 0.5
before=$(geometry "$window")
[ "$before" = "100,60 800x500" ] || fail "the window is at $before, not 100,60 800x500"
xdotool key F11
for _ in $(seq 1 30); do [ "$(geometry "$window")" = "0,0 1280x800" ] && break; sleep 0.1; done
[ "$(geometry "$window")" = "0,0 1280x800" ] || fail "F11: the window is $(geometry "$window"), not the monitor's 1280x800"
echo "F11: full screen, $(geometry "$window")"
xdotool key F11
for _ in $(seq 1 30); do [ "$(geometry "$window")" = "$before" ] && break; sleep 0.1; done
[ "$(geometry "$window")" = "$before" ] || fail "F11 again: the window is $(geometry "$window"), not back at $before"
echo "F11 again: back at $before"

# 3 (first half). Ctrl+= twice: 150 %, written to the layout file after ImGui's five seconds of
# frames (the pointer moving keeps them coming; an idle window draws none).
xdotool key ctrl+equal
sleep 0.3
xdotool key ctrl+equal
layout="$XDG_CONFIG_HOME/attnviz/layout.ini"
for k in $(seq 1 150); do
    grep -q '^scale=1.5$' "$layout" 2>/dev/null && break
    xdotool mousemove --window "$window" $((200 + k % 2 * 40)) 200
    sleep 0.1
done
grep -q '^scale=1.5$' "$layout" || fail "the text size was not kept in $layout"
grep -q '^theme=dark$' "$layout" || fail "no theme in $layout"
kill -0 "$app_pid" || fail "the window ended after the text size changed"
kill "$app_pid"
wait "$app_pid" 2>/dev/null || true
app_pid=""
echo "Ctrl+= twice: scale=1.5 kept in the layout file"

# 2. Ctrl+= while frames are being drawn: the text of the last frame is 20 px (from 16).
rm -rf "$XDG_CONFIG_HOME"
"$attnviz" --size 1024x640 --frames 3000 --report "$out/runtime.json" --screenshot "$out/runtime.png" &
app_pid=$!
window=$(window_of)
xdotool key ctrl+equal
wait "$app_pid" || fail "the run with a change of text size failed"
app_pid=""
[ "$(font_px "$out/runtime.json")" = 20 ] || fail "after Ctrl+= mid-run the text is $(font_px "$out/runtime.json") px, not 20"
"$ui_check" "$out/runtime.json" "$out/runtime.png" "ink=Dimensions=#ffffff" ||
    fail "after Ctrl+= mid-run the text is not drawn with the new fonts ($out/runtime.png)"
echo "Ctrl+= mid-run: fonts made anew at 20 px, the text drawn with them"

# 3 (second half). The kept size at the next start (24 px), the command line's over it (16 px).
mkdir -p "$XDG_CONFIG_HOME/attnviz"
printf '[attnviz][Layout]\ntheme=light\nscale=1.5\ncolormap=cividis\n' >"$XDG_CONFIG_HOME/attnviz/layout.ini"
"$attnviz" --frames 3 --report "$out/kept.json"
[ "$(font_px "$out/kept.json")" = 24 ] || fail "the kept scale 1.5 gave $(font_px "$out/kept.json") px, not 24"
"$attnviz" --frames 3 --report "$out/given.json" --ui-scale 1
[ "$(font_px "$out/given.json")" = 16 ] || fail "--ui-scale 1 gave $(font_px "$out/given.json") px, not 16"
echo "kept: 24 px at the next start; --ui-scale 1: 16 px"

# 4. A HiDPI screen: Xft.dpi 192 is a content scale of 2, read at start.
rm -rf "$XDG_CONFIG_HOME"
xprop -root -format RESOURCE_MANAGER 8s -set RESOURCE_MANAGER "Xft.dpi:	192"
"$attnviz" --frames 3 --report "$out/hidpi.json"
[ "$(font_px "$out/hidpi.json")" = 32 ] || fail "at 192 dpi the text is $(font_px "$out/hidpi.json") px, not 32"
echo "Xft.dpi 192: 32 px text"
