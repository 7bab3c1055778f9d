#!/usr/bin/env bash
# input_test.sh ATTNVIZ OUTDIR
# The real window under Xvfb, driven by xdotool as a user's keyboard and mouse would be:
#  1. keys faster than frames: Ctrl+click on X[0][1], `xdotool type 5`, `xdotool key Return` (each
#     press and its release arrive between two frames), then Ctrl+S: the saved file has X[0][1] = 5;
#  2. an idle window draws no frames: over three seconds without input it uses (almost) no CPU.
# Exits 77 (ctest: skipped) only when no X server can be started or xdotool is missing.
set -euo pipefail
attnviz=$1 out=$2
rm -rf "$out"
mkdir -p "$out"

command -v Xvfb >/dev/null || { echo "SKIP: Xvfb is not installed (./scripts/test installs it)"; exit 77; }
command -v xdotool >/dev/null || { echo "SKIP: xdotool is not installed (./scripts/test installs it)"; exit 77; }
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
app_pid=""
trap 'kill $xvfb_pid 2>/dev/null || true; [ -n "$app_pid" ] && kill -9 $app_pid 2>/dev/null || true' EXIT
display=""
read -r -t 20 display <&3 || true
[ -n "$display" ] || { echo "SKIP: Xvfb could not start an X server"; exit 77; }
export DISPLAY=":$display" LIBGL_ALWAYS_SOFTWARE=1 ATTNVIZ_NATIVE_DIALOGS=0
export XDG_STATE_HOME="$out/state" XDG_CONFIG_HOME="$out/config"
fail() { echo "FAIL: $*"; exit 1; }

session="$out/example.json"
"$attnviz" example worked-example -o "$session"
# Where the field of X[0][1] is drawn at this size (the draw report of a run of three frames).
"$attnviz" "$session" --size 1280x800 --frames 3 --report "$out/report.json"
read -r cx cy < <(python3 - "$out/report.json" <<'PY'
import json, sys
item = next(i for i in json.load(open(sys.argv[1]))["items"] if i["name"] == "X[0][1]")
print(int((item["min"][0] + item["max"][0]) / 2), int((item["min"][1] + item["max"][1]) / 2))
PY
)
x01() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["X"][0][1])' "$1"; }
[ "$(x01 "$session")" = "0" ] || fail "the worked example's X[0][1] should be 0"

"$attnviz" "$session" --size 1280x800 --autosave-seconds 0 &
app_pid=$!
window=$(xdotool search --sync --onlyvisible --name 'attnviz' | head -n 1)
[ -n "$window" ] || fail "no window"
xdotool windowfocus --sync "$window" 2>/dev/null || true
sleep 1
before=$(stat -c %Y.%N "$session" 2>/dev/null || echo none)

# 1. Ctrl+click, a digit and Return, each key's press and release in one batch; then Ctrl+S.
xdotool mousemove --window "$window" "$cx" "$cy"
sleep 0.3
xdotool keydown ctrl click 1 keyup ctrl
sleep 0.3
xdotool type 5
xdotool key Return
sleep 0.5
xdotool key ctrl+s
saved=""
for _ in $(seq 1 50); do
    [ "$(stat -c %Y.%N "$session")" != "$before" ] && [ "$(x01 "$session")" = "5" ] && { saved=1; break; }
    sleep 0.1
done
[ -n "$saved" ] || fail "X[0][1] = 5 was not saved (Return or Ctrl+S lost): X[0][1] is $(x01 "$session")"
echo "typed 5, Return, Ctrl+S: saved with X[0][1] = 5"

# 2. Idle: no frames, so (almost) no CPU over three seconds. The pointer leaves the window first.
xdotool mousemove 1279 799
sleep 1.5
ticks() { awk '{print $14 + $15}' "/proc/$app_pid/stat"; }
t0=$(ticks)
sleep 3
used=$(( $(ticks) - t0 ))
hz=$(getconf CLK_TCK)
echo "idle for 3 s: $used ticks of CPU (1/$hz s each)"
[ "$used" -le $(( hz / 10 )) ] || fail "the idle window used $used ticks of CPU in 3 s: it draws frames"
kill "$app_pid"
wait "$app_pid" 2>/dev/null || true
app_pid=""
