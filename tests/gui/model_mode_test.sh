#!/usr/bin/env bash
# model_mode_test.sh ATTNVIZ PNG_CHECK UI_CHECK OUTDIR
# The model mode in the real window under Xvfb, on the tiny test models of tests/reference/models:
#  - GPT-2, BERT, Gemma 2 (windows, soft-caps) and Pythia (partial rotary, the parallel residual) on
#    "Hello world" at 1024×640 and 1920×1080: screenshots (not blank, the layout
#    fills the window, the panels' labels readable) and the draw report's numbers against the
#    reference forward pass (model_report_check.py reference);
#  - GPT-2 with a cell of block 0, then of block 1, edited (--set on the block being edited):
#    against the run without the edit, the blocks before are unchanged, the edited one, the later
#    ones and the prediction changed (model_report_check.py edit); the same for the edits of
#    --bench-edits, whose report says the model's reruns were shown (model_report_check.py bench);
#  - the attention lab's ablation of a head through the model against `attnviz analyze`, and its
#    token circuits (Circuits, in token space) and layer 0's position split (RoPE) at 1024×640 and
#    1920×1080 against the same (model_report_check.py tokens, split);
#  - a folder without config.json, an empty sentence and a 2000-token text: the app runs and says why.
# Exits 77 (ctest: skipped) only when no X server can be started.
set -euo pipefail
attnviz=$1 png_check=$2 ui_check=$3 out=$4
here="$(cd "$(dirname "$0")" && pwd)"
models="$(cd "$here/../reference/models" && pwd)"
check="$here/model_report_check.py"
mkdir -p "$out"

if ! command -v Xvfb >/dev/null; then
    echo "SKIP: Xvfb is not installed (./scripts/test installs it)"; exit 77
fi
exec 3< <(Xvfb -displayfd 1 -screen 0 1920x1080x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
display=""
read -r -t 20 display <&3 || true
if [ -z "$display" ]; then
    echo "SKIP: Xvfb could not start an X server"; exit 77
fi
export DISPLAY=":$display" LIBGL_ALWAYS_SOFTWARE=1 XDG_STATE_HOME="$out/state" XDG_CONFIG_HOME="$out/config"

run() {  # run NAME ARGS...: a screenshot and its report
    local name=$1; shift
    "$attnviz" "$@" --screenshot "$out/$name.png" --frames 4 --report "$out/$name.json"
}

for model in gpt2 bert gemma2 pythia olmo2; do
    for size in 1024x640 1920x1080; do
        name="$model-$size"
        run "$name" --model "$models/$model" --text "Hello world" --size "$size"
        "$png_check" "$out/$name.png" "${size%x*}" "${size#*x}"
        "$ui_check" "$out/$name.json" "$out/$name.png" layout "window=Model view" "window=Next token" \
            "window=Model analysis" "item=model: sentence" "item=model token 1"
        python3 "$check" reference "$out/$name.json" "$models/$model/expected.json"
    done
done

# An edit of a weight of block 0, then of block 1 (the block edited at start, --model-layer).
for layer in 0 1; do
    base=(--model "$models/gpt2" --text "Hello world" --model-layer "$layer" --size 1280x800)
    run "edit-$layer-before" "${base[@]}"
    run "edit-$layer-after" "${base[@]}" --set "W_Q:1:0:0=3"
    python3 "$check" edit "$out/edit-$layer-before.json" "$out/edit-$layer-after.json" "$layer"
done

# The edit benchmark on a model's block (--bench-edits): each edit of block 0's X[0][0] runs
# through the model, and the last one's model view and prediction are shown (the blocks from 0 on
# and the prediction differ from the run without edits). Not timed here: the figures are its own.
"$attnviz" --model "$models/gpt2" --text "Hello world" --model-layer 0 --size 1280x800 --bench-edits 3 \
    --report "$out/bench-edits.json" > "$out/bench-edits.out"
python3 "$check" edit "$out/edit-0-before.json" "$out/bench-edits.json" 0
python3 "$check" bench "$out/bench-edits.out"

# The attention lab's Ablation view through the model: head 1 of block 0 zero-ablated, its KL and
# top five against `attnviz analyze` of the same text (in double), each later block's change drawn.
run lab-ablation --model "$models/gpt2" --text "Hello world" --panel "Attention lab" --lab-view ablation \
    --size 1280x800
"$png_check" "$out/lab-ablation.png" 1280 800
"$ui_check" "$out/lab-ablation.json" "$out/lab-ablation.png" layout "window=Attention lab" \
    "item=lab: through the model" "item=lab: model every head"
"$attnviz" analyze "$models/gpt2" --text "Hello world" -o "$out/lab-analysis.json"
python3 "$check" lab "$out/lab-ablation.json" "$out/lab-analysis.json" 0 1

# The attention lab's token circuits and layer 0's position split of the tiny GPT-2 (block 0 edited,
# head 1, nothing edited): the numbers against `attnviz analyze` of the same text, the views drawn
# inside the lab with no label cut.
text="The cat sat on the mat"
"$attnviz" analyze "$models/gpt2" --text "$text" -o "$out/lab-tokens-analysis.json"
for size in 1024x640 1920x1080; do
    run "lab-tokens-$size" --model "$models/gpt2" --text "$text" --panel "Attention lab" --lab-view circuits \
        --size "$size"
    "$png_check" "$out/lab-tokens-$size.png" "${size%x*}" "${size#*x}"
    "$ui_check" "$out/lab-tokens-$size.json" "$out/lab-tokens-$size.png" layout "window=Attention lab" \
        "item=lab: in token space" "item=lab: token" "within=Attention lab" uncut
    python3 "$check" tokens "$out/lab-tokens-$size.json" "$out/lab-tokens-analysis.json" 0 1
    run "lab-split-$size" --model "$models/gpt2" --text "$text" --panel "Attention lab" --lab-view rope --size "$size"
    "$png_check" "$out/lab-split-$size.png" "${size%x*}" "${size#*x}"
    "$ui_check" "$out/lab-split-$size.json" "$out/lab-split-$size.png" layout "window=Attention lab" \
        "within=Attention lab" uncut
    python3 "$check" split "$out/lab-split-$size.json" "$out/lab-tokens-analysis.json" 1
done

# What a new user may try: a folder that is no model, an empty sentence, a very long text.
mkdir -p "$out/not-a-model"
run not-a-model --model "$out/not-a-model" --size 1024x640 2> "$out/not-a-model.err" || true
grep -q "no session files" "$out/not-a-model.err" || { echo "no warning for a folder without config.json"; exit 1; }
[ -s "$out/not-a-model.png" ] || { echo "no screenshot of a folder without config.json"; exit 1; }
run empty --model "$models/gpt2" --text "" --size 1024x640 2> "$out/empty.err"
grep -q "No tokens" "$out/empty.err" || { echo "an empty sentence is not refused with a message"; exit 1; }
long="$(printf 'word %.0s' $(seq 1 2000))"
run long --model "$models/gpt2" --text "$long" --size 1024x640 2> "$out/long.err"
grep -q "tokens" "$out/long.err" || { echo "a 2000-token text is not refused with a message"; exit 1; }
# File > Open model… opens its folder chooser.
ATTNVIZ_NATIVE_DIALOGS=0 run dialog --dialog model --size 1024x640
"$ui_check" "$out/dialog.json" "$out/dialog.png" "item=files: Open folder"
echo "model mode: ok"
