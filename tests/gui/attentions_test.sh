#!/usr/bin/env bash
# attentions_test.sh ATTNVIZ PNG_CHECK UI_CHECK OUTDIR
# The attentions mode (attnviz --attentions FILE) in the real window under Xvfb, on the made-up files
# of attentions_check.py:
#  - 3 layers × 4 heads over 7 tokens with [CLS] and [SEP] (safetensors, one tensor per layer, the
#    tokens in its metadata) at 1024×640 and 1920×1080: screenshots (not blank, the head view and the
#    model view fill the window, labels drawn) and the draw report against the file's numbers;
#  - the same with --layer 2 --hide-special --mean-heads --head-select 1: the mean of the heads of the
#    rows renormalised over the keys left, as computed from the file;
#  - a rectangular cross-attention (.npz, 3 queries × 5 keys, tokens from a file) with hidden special
#    tokens and a key selected; 128 tokens at both sizes;
#  - a file with a row summing to 1.5: the window opens on the session, the message names the row;
#  - File > Export from the real window (xdotool clicks Save as… and the file chooser's Save): the
#    head view's SVG as the view shows it.
# Exits 77 (ctest: skipped) only when no X server can be started.
set -euo pipefail
attnviz=$1 png_check=$2 ui_check=$3 out=$4
here="$(cd "$(dirname "$0")" && pwd)"
check="$here/attentions_check.py"
rm -rf "$out"
mkdir -p "$out"

if ! command -v Xvfb >/dev/null; then
    echo "SKIP: Xvfb is not installed (./scripts/test installs it)"; exit 77
fi
exec 3< <(Xvfb -displayfd 1 -screen 0 1920x1080x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
app_pid=""
trap 'kill $xvfb_pid 2>/dev/null || true; [ -n "$app_pid" ] && kill -9 $app_pid 2>/dev/null || true' EXIT
display=""
read -r -t 20 display <&3 || true
if [ -z "$display" ]; then
    echo "SKIP: Xvfb could not start an X server"; exit 77
fi
export DISPLAY=":$display" LIBGL_ALWAYS_SOFTWARE=1 XDG_STATE_HOME="$out/state" XDG_CONFIG_HOME="$out/config"
export ATTNVIZ_NATIVE_DIALOGS=0
fail() { echo "FAIL: $*"; exit 1; }

python3 "$check" make "$out"
run() {  # run NAME ARGS...: a screenshot and its report
    local name=$1; shift
    "$attnviz" "$@" --screenshot "$out/$name.png" --frames 4 --report "$out/$name.json"
}
views=(layout "window=Head view" "window=Model view" "!window=Inputs: X and weights" "!window=Dimensions")

for size in 1024x640 1920x1080; do
    name="multi-$size"
    run "$name" --attentions "$out/multi.safetensors" --size "$size"
    "$png_check" "$out/$name.png" "${size%x*}" "${size#*x}"
    "$ui_check" "$out/$name.json" "$out/$name.png" "${views[@]}" "item=head view: layer" "item=head view: query [CLS]" \
        "item=head view: key [SEP]" "item=head view: mean of heads" "item=head view: hide special tokens" \
        "item=model 2:4" "inside=head view: weights only@Head view"
    python3 "$check" open "$out/$name.json"

    name="big-$size"
    run "$name" --attentions "$out/big.npy" --tokens-file "$out/big.json" --size "$size" --head-select 5
    "$png_check" "$out/$name.png" "${size%x*}" "${size#*x}"
    "$ui_check" "$out/$name.json" "$out/$name.png" "${views[@]}" "item=head view: query [CLS]" "item=head view: query w5"
done

run options --attentions "$out/multi.safetensors" --size 1280x800 --layer 2 --hide-special --mean-heads --head-select 1
"$ui_check" "$out/options.json" "$out/options.png" "${views[@]}" "item=head view: query cat" "item=head view: options"
python3 "$check" options "$out/options.json"

run cross --attentions "$out/cross.npz" --tokens-file "$out/cross.json" --size 1024x640 --hide-special --head-select k2
"$ui_check" "$out/cross.json" "$out/cross.png" "${views[@]}" "item=head view: key sat" "item=head view: query chat"
python3 "$check" cross "$out/cross.json"

# A row that is no distribution: the window opens on the session, the message names the row.
run bad --attentions "$out/bad.npy" --size 1024x640 2> "$out/bad.err" || fail "attnviz exited $? on a refused file"
grep -q "layer 1, head 2, row 3: the weights sum to 1.5" "$out/bad.err" || { cat "$out/bad.err"; fail "no message naming the bad row"; }
"$ui_check" "$out/bad.json" "$out/bad.png" layout "window=Inputs: X and weights" "item=status: message" \
    "!item=head view: weights only"
# Options that do not fit together are refused before any window opens.
if "$attnviz" --tokens-file "$out/cross.json" --frames 1 2> "$out/usage.err"; then fail "--tokens-file alone was taken"; fi
grep -q -- "--tokens-file applies to --attentions" "$out/usage.err" || fail "no message for --tokens-file alone"

# File > Export from the real window: where "Save as..." and the file chooser's "Save" are drawn
# (the draw reports of an export dialog and of a save dialog at this size), then the clicks.
"$attnviz" --attentions "$out/multi.safetensors" --dialog export --size 1280x800 --frames 4 --report "$out/export.json"
"$attnviz" --dialog save --size 1280x800 --frames 4 --report "$out/save.json"
at() {  # at REPORT ITEM: the middle of the item
    python3 - "$1" "$2" <<'PY'
import json, sys
item = next(i for i in json.load(open(sys.argv[1]))["items"] if i["name"] == sys.argv[2])
print(int((item["min"][0] + item["max"][0]) / 2), int((item["min"][1] + item["max"][1]) / 2))
PY
}
read -r save_as_x save_as_y < <(at "$out/export.json" "export: save as")
read -r save_x save_y < <(at "$out/save.json" "files: Save")
if command -v xdotool >/dev/null; then
    mkdir -p "$out/export"
    (cd "$out/export" && exec "$attnviz" --attentions "$out/multi.safetensors" --layer 2 --hide-special \
        --dialog export --size 1280x800 --autosave-seconds 0) &
    app_pid=$!
    window=$(xdotool search --sync --onlyvisible --name 'attnviz' | head -n 1)
    [ -n "$window" ] || fail "no window"
    sleep 1.5
    xdotool mousemove --window "$window" "$save_as_x" "$save_as_y"
    sleep 0.3
    xdotool click 1
    sleep 1
    xdotool mousemove --window "$window" "$save_x" "$save_y"
    sleep 0.3
    xdotool click 1
    svg="$out/export/head-view.svg"
    for _ in $(seq 1 50); do [ -s "$svg" ] && break; sleep 0.1; done
    [ -s "$svg" ] || fail "File > Export wrote no head-view.svg"
    grep -q "Head view, layer 2" "$svg" || fail "the exported head view is not of layer 2"
    grep -q "Special tokens hidden" "$svg" || fail "the exported head view does not hide the special tokens"
    if grep -q "\[CLS\]" "$svg"; then fail "the exported head view shows [CLS]"; fi
    kill "$app_pid"
    wait "$app_pid" 2>/dev/null || true
    app_pid=""
    echo "File > Export: $svg"
else
    echo "xdotool is not installed: File > Export from the window not clicked (./scripts/test installs it)"
fi
echo "attentions mode: ok"
