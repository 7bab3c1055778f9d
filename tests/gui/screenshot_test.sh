#!/usr/bin/env bash
# screenshot_test.sh ATTNVIZ PNG_CHECK UI_CHECK CASE OUTDIR
# Runs the real window under Xvfb (Mesa's llvmpipe), writes a screenshot with --screenshot and its
# draw report with --report, and checks both: not blank (png_check), the windows fill the window and
# known cells of the worked example show their numbers (ui_check). Exits 77 (ctest: skipped) only
# when no X server can be started.
set -euo pipefail
attnviz=$1 png_check=$2 ui_check=$3 case=$4 out=$5
mkdir -p "$out"

if ! command -v Xvfb >/dev/null; then
    echo "SKIP: Xvfb is not installed (./scripts/test installs it)"; exit 77
fi
# Let Xvfb pick a free display and tell us its number.
exec 3< <(Xvfb -displayfd 1 -screen 0 1920x1080x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
display=""
read -r -t 20 display <&3 || true
if [ -z "$display" ]; then
    echo "SKIP: Xvfb could not start an X server"; exit 77
fi
export DISPLAY=":$display" LIBGL_ALWAYS_SOFTWARE=1
# Autosaves and recovery offers of this test only, never the user's.
export XDG_STATE_HOME="$out/state-$case"
# Lessons of this test only (a teacher's own lessons live in $XDG_DATA_HOME/attnviz/lessons).
export XDG_DATA_HOME="$out/data-$case"

sizes="1024x640 1280x800 1920x1080"
extra=()
# Cells of seed 001's worked example, computed by hand in the seed: weights⁽¹⁾ = [[0.944, 0.0558], …],
# Q⁽¹⁾ = [[2, 0], [0, 4]].
worked_numbers=("weights(1):0:0=0.944" "weights(1):0:1=0.0558" "Q(1):1:1=4")
checks=(layout)
large_checks=()  # checks of the sizes above 1024x640 only (what a small panel scrolls out of view)
case "$case" in
    layout-persists)
        # A normal run (no --screenshot) keeps its window layout in the user's config directory.
        config="$out/layout-config"
        rm -rf "$config"
        XDG_CONFIG_HOME="$config" "$attnviz" --frames 3
        grep -q '^\[Window\]\[Dimensions\]' "$config/attnviz/layout.ini" || {
            echo "no layout in $config/attnviz/layout.ini"; exit 1; }
        [ ! -e layout.ini ] && [ ! -e imgui.ini ] || { echo "a layout file was written to the working directory"; exit 1; }
        echo "layout kept in $config/attnviz/layout.ini"
        exit 0 ;;
    dialogs)
        # Every menu item's dialog (--dialog opens it as its menu item does), in the default layout
        # and in teach mode: the dialog is drawn, and the app neither aborts nor writes anything.
        session="$out/worked-example.json"
        "$attnviz" example worked-example -o "$session"
        export ATTNVIZ_NATIVE_DIALOGS=0
        for dialog in open:"files: Open" save:"files: Save" import:"import: import" beside:"files: Open" \
            import-all:"import: import" export:"export: save as" sentence:"sentence: create" \
            palette:"palette: Workspace: Lab"; do
            for mode in default teach; do
                png="$out/$case-${dialog%%:*}-$mode.png"
                teach=()
                [ "$mode" = teach ] && teach=(--teach 1)
                XDG_CONFIG_HOME="$out/config" "$attnviz" "$session" "${teach[@]}" --dialog "${dialog%%:*}" \
                    --screenshot "$png" --frames 4 --size 1024x640 --report "$png.json"
                "$ui_check" "$png.json" "$png" "item=${dialog#*:}"
            done
        done
        exit 0 ;;
    layout-corrupt)
        # A corrupt layout file: each start opens at once with the default layout and one message.
        config="$out/corrupt-config"
        for layout in '[Table][0x00000001,2147483647]' '[Table][0x1,100000000]' many-tables; do
            rm -rf "$config"
            mkdir -p "$config/attnviz"
            if [ "$layout" = many-tables ]; then
                for k in $(seq 1 10000); do printf '[Table][0x%08X,3]\nColumn 0 Weight=1.0\n' "$k"; done
            else
                printf '%s\n' "$layout"
            fi > "$config/attnviz/layout.ini"
            start=$(date +%s%N)
            XDG_CONFIG_HOME="$config" timeout 60 "$attnviz" --frames 3 2>"$out/corrupt.err" ||
                { cat "$out/corrupt.err"; echo "attnviz did not start with the layout $layout"; exit 1; }
            ms=$(( ($(date +%s%N) - start) / 1000000 ))
            grep -q "were left out" "$out/corrupt.err" || { cat "$out/corrupt.err"; echo "no message for $layout"; exit 1; }
            [ "$(grep -c . "$out/corrupt.err")" -eq 1 ] || { cat "$out/corrupt.err"; echo "more than one message"; exit 1; }
            [ "$ms" -lt 5000 ] || { echo "the start with $layout took $ms ms"; exit 1; }
            grep -q '^\[Window\]\[Dimensions\]' "$config/attnviz/layout.ini" || { echo "the layout was not written anew"; exit 1; }
            echo "$layout: started in $ms ms"
        done
        exit 0 ;;
    selected-cell)
        session="$out/worked-example.json"
        "$attnviz" example worked-example -o "$session"
        extra=(--select weights:1:0:1)
        checks+=("${worked_numbers[@]}")
        sizes="1280x800" ;;
    select-large)
        # A session large enough to be computed on the worker: --select must find its cells, not
        # the worked example's the window starts with.
        session="$out/random-128.json"
        "$attnviz" example random --seed 3 -n 128 --d-model 256 --heads 4 -o "$session"
        XDG_CONFIG_HOME="$out/select-config" "$attnviz" "$session" --select weights:2:100:120 --frames 2 \
            --size 1280x800 2>"$out/select-large.err"
        if [ -s "$out/select-large.err" ]; then
            cat "$out/select-large.err"; echo "--select on a large session was refused"; exit 1
        fi
        extra=(--select weights:2:100:120)
        sizes="1280x800" ;;
    teach-1|teach-5|teach-9)
        session="$out/worked-example.json"
        "$attnviz" example worked-example -o "$session"
        extra=(--teach "${case#teach-}")
        [ "$case" = teach-5 ] && checks+=("weights(1):0:0=0.944" "weights(1):1:1=1")
        sizes="1280x800" ;;
    odd-labels)
        # A lesson with empty step titles and ID markers, tokens "" and "##": drawn, never an abort.
        assets="$out/odd-assets"
        mkdir -p "$assets/lessons"
        cat > "$assets/lessons/worked-example.json" <<'JSON'
{"format": "attnviz-lesson", "version": 1, "title": "",
 "steps": [{"title": "", "text": "x"}, {"title": "##", "text": "##"},
           {"title": "###a", "text": "", "show": [{"matrix": "X"}], "result": {"matrix": "Q", "head": 1}}]}
JSON
        session="$out/odd-labels.json"
        "$attnviz" example worked-example -o "$session"
        sed -i 's/"tokens": \["x1","x2"\]/"tokens": ["","##"]/' "$session"
        grep -q '"tokens": \["","##"\]' "$session" || { echo "could not set the odd tokens"; exit 1; }
        export ATTNVIZ_ASSETS="$assets"
        for step in 1 2 3; do
            png="$out/$case-teach-$step.png"
            XDG_CONFIG_HOME="$out/config" "$attnviz" "$session" --teach "$step" --screenshot "$png" --frames 3 \
                --size 1280x800 --report "$png.json"
            "$ui_check" "$png.json" "$png" layout  # (a step of one word is nearly blank: no png_check)
        done
        checks+=("${worked_numbers[@]}")
        sizes="1280x800" ;;
    worked-example)
        session="$out/worked-example.json"
        "$attnviz" example worked-example -o "$session"
        checks+=("${worked_numbers[@]}") ;;
    bert-base)
        # BERT-base's shape under the causal mask: every heatmap in view shows its values in colour
        # (none a flat square), the twelve heads fit their panel.
        session="$out/bert-base.json"
        "$attnviz" example random --seed 5 -n 512 --d-model 768 --heads 12 --mask causal -o "$session"
        checks+=(varied)
        sizes="1280x800 1600x900" ;;
    head-view)
        # The head view of a random causal session (8 tokens, 4 heads) with two queries selected:
        # it takes the place of "Attention per head", its legend and token labels show.
        session="$out/head-view.json"
        "$attnviz" example random --seed 7 -n 8 --heads 4 --d-model 16 -o "$session"
        sed -i 's/"mask": *"none"/"mask": "causal"/' "$session"
        grep -q '"mask": "causal"' "$session" || { echo "could not set the causal mask"; exit 1; }
        extra=(--panel "Head view" --head-select 2,5)
        checks+=("window=Head view" "!window=Attention per head" "item=head view: head 1"
                 "item=head view: query x3" "item=head view: query x8" "item=head view: key x1") ;;
    head-view-norm)
        # The head view of the same session norm-weighted (--norm-weighted): each line ‖α_ij·f_h(x_j)‖,
        # each query row divided by its sum, and the note saying so over the view.
        session="$out/head-view-norm.json"
        "$attnviz" example random --seed 7 -n 8 --heads 4 --d-model 16 -o "$session"
        extra=(--panel "Head view" --norm-weighted --head-select 2,5)
        checks+=("window=Head view" "item=head view: norm-weighted note" "value=head view norm-weighted=1"
                 "item=head view: query x3" "item=head view: key x1") ;;
    head-view-512)
        # At n = 512 the lines are painted into one picture and the labels thinned; the first
        # token's label stays readable.
        session="$out/head-view-512.json"
        "$attnviz" example random --seed 5 -n 512 --d-model 64 --heads 4 -o "$session"
        extra=(--panel "Head view" --head-select 40,k7)
        checks+=("window=Head view" "item=head view: head 4" "item=head view: query x41")
        sizes="1280x800 1920x1080" ;;
    mask-editor)
        # Cross-attention (6 queries, 8 keys from Y with labels of their own) under a custom mask of
        # padding: the Mask panel in its tab shows the grid with the tokens on both axes and its
        # numbers; the last two keys are masked.
        session="$out/mask-editor.json"
        "$attnviz" example random --seed 3 -n 6 --n-kv 8 --mask custom --heads 2 --d-model 8 -o "$session"
        python3 - "$session" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["mask"] = [[1] * 6 + [0, 0] for _ in range(6)]
doc["kv_tokens"] = ["the", "cat", "sat", "on", "the", "mat", "<pad>", "<pad>"]
json.dump(doc, open(sys.argv[1], "w"))
PY
        extra=(--panel Mask)
        checks+=("window=Mask" "!window=Inputs: X and weights" "mask:0:0=1" "mask:5:7=0") ;;
    gradients)
        # The gradients view in its tab beside the matrix viewer, on the worked example with
        # output[1][2] selected. W_O is the identity, so output[1][2] = Z⁽²⁾[1][0] =
        # Σ_j weights⁽²⁾[1][j]·(X[j][1] + X[j][3]) (head 2's W_V picks columns 1 and 3), and weights⁽²⁾[1][1]
        # ≈ 1 − 1.2e-5: ∂/∂X[1][1] and ∂/∂X[1][3] print 1.
        session="$out/worked-example.json"
        "$attnviz" example worked-example -o "$session"
        extra=(--panel Gradients --select output:1:2)
        checks+=("window=Gradients" "!window=Matrix viewer" "item=gradients: row" "item=gradients: show")
        large_checks+=("d/dX:1:1=1" "d/dX:1:3=1" "item=gradients: d/dX") ;;
    saturation)
        # The saturation lab in its tab beside the matrix viewer, on the worked example at √d_k.
        session="$out/worked-example.json"
        "$attnviz" example worked-example -o "$session"
        extra=(--panel "Saturation lab") ;;
    compare)
        # The Compare panel on seed 001's worked example pinned as A, then W_O[0][0] = 2 in B: output's
        # first column doubles, so B − A of output is concat's first column, Z⁽¹⁾[0][0] = 2·0.944 = 1.89
        # at [0][0] (the seed's weights⁽¹⁾[0][0]), about 2.4e-5 at [1][0] and 0 elsewhere.
        session="$out/compare.json"
        "$attnviz" example worked-example -o "$out/compare-a.json"
        python3 - "$out/compare-a.json" "$session" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.loads(json.dumps(a))
b["W_O"][0][0] = 2
b["pin"] = a
json.dump(b, open(sys.argv[2], "w"))
PY
        extra=(--panel Compare)
        checks+=("window=Compare" "!window=Every intermediate" "item=compare: unpin" "B-A output:0:0=1.89") ;;
    model-view)
        # The model view on the example model (assets/examples/model: four layers of four heads made
        # by scripts/make-demo-model.py, its first layer the session edited) and a random session
        # beside it, sorted by diagonal share. Rows: 1–4 the layers, 5 the random one; row 0, this
        # session, is left out while it is layer 0 unchanged (the same heads twice).
        # Head 2 of layer 0 attends to each token itself, head 2 of layer 1 to the next: never flat.
        "$attnviz" example random --seed 11 -n 12 --heads 4 --d-model 32 -o "$out/random-beside.json"
        model="$(cd "$(dirname "$0")/../.." && pwd)/assets/examples/model"
        session=""  # no session: the model's first layer is the one edited
        extra=(--model "$model" --beside "$out/random-beside.json" --sort-heads diagonal)
        checks+=("!item=model 0:2" "item=model 1:2" "item=model 2:2") ;;
    attribution)
        # The Attribution workspace on the tiny reference GPT-2: the token strips of both methods and
        # the heads' and MLPs' direct logit attribution drawn, in the panel's window.
        model="$(cd "$(dirname "$0")/../.." && pwd)/tests/reference/models/gpt2"
        session=""
        extra=(--model "$model" --text "Hello world" --workspace attribution)
        checks+=("item=tokens: grad x input" "item=tokens: integrated gradients" "item=dla bars") ;;
    random-8x3)
        session="$out/random-8x3.json"
        "$attnviz" example random --seed 7 -n 8 --heads 3 --d-model 12 -o "$session" ;;
    # --- Layout and reduced heatmaps (cells that use their room, nothing cut at 1024×640, thumbnails) ---
    bert-even|bert-even-model)
        # BERT-base's shape without a mask: random weights give nearly uniform heads (entropy about 6
        # of ln 512 = 6.24). Drawn smaller than 512×512, each pixel is the mean weight of its block,
        # so they look even and unsaturated: in the heads panel and as the model view's thumbnails.
        session="$out/bert-even.json"
        "$attnviz" example random --seed 5 -n 512 --d-model 768 --heads 12 -o "$session"
        if [ "$case" = bert-even-model ]; then
            extra=(--panel "Model view")
            checks+=("calm=model")
        else
            checks+=("calm=weights@Attention per head")
        fi
        sizes="1280x800 1920x1080" ;;
    small-random)
        # A random session of 5 tokens (d_model 8, two heads): its small matrices take readable cells,
        # every one numbered, in Every intermediate (wrapping to the panel's width, never cut at its
        # right edge, filling it) and in the heads panel, at every size.
        session="$out/small-random.json"
        "$attnviz" example random --seed 3 -n 5 --d-model 8 --heads 2 -o "$session"
        checks+=("readable=Every intermediate" "within=Every intermediate" "fills=Every intermediate:80"
                 "readable=Attention per head" "within=Attention per head")
        sizes="1024x640 1280x800 1920x1080" ;;
    small-heads)
        # Four heads of four tokens: the arrangement whose cells come out largest, labels counted,
        # cells numbered and the panel filled one way or the other.
        session="$out/small-heads.json"
        "$attnviz" example random --seed 4 -n 4 --d-model 16 --heads 4 -o "$session"
        checks+=("readable=Attention per head" "fills=Attention per head:80" "within=Attention per head")
        sizes="1024x640 1280x800 1920x1080" ;;
    teach-random)
        # Teach mode on a session other than the worked example, at the step of five matrices (X,
        # W_Q, K, V and the result Q): one readable cell size for all, filling the room above the text.
        session="$out/teach-random.json"
        "$attnviz" example random --seed 3 -n 5 --d-model 8 --heads 2 -o "$session"
        extra=(--teach 2)
        checks+=("readable=Teach: attention step by step" "fills=Teach: attention step by step:75"
                 "within=Teach: attention step by step")
        sizes="1024x640 1280x800 1920x1080" ;;
    small-worked)
        # The worked example with the gradients of output[1][2] shown: at 1024×640 X's four columns
        # fit their panel, the heads' summaries are whole (a cut one is reported as "... (cut)"),
        # ∂/∂X is in view (not a sliver under the list of the largest), as at the larger sizes.
        session="$out/worked-example.json"
        "$attnviz" example worked-example -o "$session"
        # The gradients are in the Lab workspace, the rest in Layer.
        for size in 1024x640 1280x800 1920x1080; do
            png="$out/$case-gradients-$size.png"
            XDG_CONFIG_HOME="$out/config" "$attnviz" "$session" --panel Gradients --select output:1:2 \
                --screenshot "$png" --frames 3 --size "$size" --report "$png.json"
            "$png_check" "$png" "${size%x*}" "${size#*x}"
            "$ui_check" "$png.json" "$png" layout workspace=Lab "inside=d/dX@Gradients"
        done
        extra=(--select output:1:2)
        checks+=("inside=X[1][3]@Inputs: X and weights" "inside=heads: summary 2@Attention per head" "item=heads: summary 2"
                 "readable=Attention per head" "readable=Every intermediate")
        sizes="1024x640 1280x800 1920x1080" ;;
    lessons)
        # The lesson library: each lesson opens with its own session (--lesson NAME) at 1024×640, named
        # in the picker, its step's text drawn, and no warning (its session has what it is about).
        while read -r name title; do
            png="$out/lesson-$name.png"
            XDG_CONFIG_HOME="$out/config" "$attnviz" --lesson "$name" --teach 3 --screenshot "$png" --frames 3 \
                --size 1024x640 --report "$png.json"
            "$png_check" "$png" 1024 640
            "$ui_check" "$png.json" "$png" layout "item=teach: lesson $title" "item=teach: text" "!item=teach: warning"
        done <<'LESSONS'
worked-example Multi-head attention, step by step
causal-mask Causal masking: no looking ahead
multi-head Why several heads
scaling The scale √d_k
rope Rotary position embeddings (RoPE)
kv-cache Grouped-query attention and the KV cache
flash-attention FlashAttention: the online softmax
cross-attention Cross-attention
LESSONS
        # Causal masking at its softmax step: row 0 has one key left (weight 1), the rest exactly 0.
        extra=(--lesson causal-mask --teach 4)
        checks+=("weights(1):0:0=1" "weights(1):0:1=0" "weights(1):2:3=0" "item=teach: text")
        # A lesson on a session given on the command line runs on that session, and says what it lacks.
        png="$out/lesson-on-a-file.png"
        session="$out/worked-example.json"
        "$attnviz" example worked-example -o "$session"
        XDG_CONFIG_HOME="$out/config" "$attnviz" "$session" --lesson cross-attention --teach 4 --screenshot "$png" --frames 3 \
            --size 1280x800 --report "$png.json"
        "$ui_check" "$png.json" "$png" layout "item=teach: warning" "weights(1):0:0=0.944"
        session=""
        # A teacher's lesson dropped into $XDG_DATA_HOME/attnviz/lessons opens by its name, with the
        # session beside it (causal, so without it the lesson would warn and row 0 would not be [1, 0, 0]).
        own="$XDG_DATA_HOME/attnviz/lessons"
        mkdir -p "$own"
        "$attnviz" example random --seed 5 -n 3 --d-model 4 --heads 1 --mask causal -o "$own/my-session.json"
        cat > "$own/my-lesson.json" <<'JSON'
{"format": "attnviz-lesson", "version": 1, "title": "My own lesson", "session": "my-session.json",
 "requires": ["causal"], "steps": [{"title": "1. Scores", "text": "n = {n}", "show": [{"matrix": "Q", "head": 1}],
                                    "result": {"matrix": "weights", "head": 1}}]}
JSON
        png="$out/lesson-own.png"
        XDG_CONFIG_HOME="$out/config" "$attnviz" --lesson my-lesson --screenshot "$png" --frames 3 --size 1024x640 \
            --report "$png.json"
        "$ui_check" "$png.json" "$png" layout "item=teach: lesson My own lesson" "!item=teach: warning" \
            "weights(1):0:0=1" "weights(1):0:1=0"
        # An unknown lesson is refused before any window opens, naming the lessons there are.
        if "$attnviz" --lesson no-such-lesson --frames 1 2>"$out/lesson-unknown.err"; then
            echo "--lesson no-such-lesson was accepted"; exit 1
        fi
        grep -q 'no lesson "no-such-lesson".*causal-mask' "$out/lesson-unknown.err" || {
            cat "$out/lesson-unknown.err"; echo "the refusal does not name the lessons"; exit 1; }
        sizes="1024x640 1920x1080" ;;
    steppers)
        # The KV-cache and FlashAttention steppers on a causal session with K/V groups: their
        # matrices readable, nothing outside its window, each step's difference from the whole
        # layer at rounding level (the report's values).
        session="$out/steppers.json"
        "$attnviz" example random --seed 7 -n 6 --d-model 8 --heads 4 --d-k 2 --d-v 2 --kv-heads 2 --mask causal \
            -o "$session"
        for size in 1024x640 1920x1080; do
            png="$out/steppers-flash-$size.png"
            XDG_CONFIG_HOME="$out/config" "$attnviz" "$session" --panel "FlashAttention stepper" --screenshot "$png" \
                --frames 3 --size "$size" --report "$png.json"
            "$png_check" "$png" "${size%x*}" "${size#*x}"
            "$ui_check" "$png.json" "$png" layout "readable=FlashAttention stepper" "item=flash: step" "item=flash: tile"
            python3 - "$png.json" <<'PY'
import json, sys
values = json.load(open(sys.argv[1]))["values"]
assert values["flash: max difference"] <= 1e-12, values
assert values["flash: standard n x n accesses"] == 4 * 6 * 6, values
PY
        done
        extra=(--panel "KV cache stepper")
        checks+=("readable=KV cache stepper" "item=kv cache: step" "item=kv cache: prefill")
        sizes="1024x640 1920x1080" ;;
    lab)
        # The attention lab on a session with RoPE and biases: the weights beside the norm-weighted
        # attention, readable; and on n = 512, h = 12 (its numbers come from the worker) it draws.
        session="$out/lab.json"
        "$attnviz" example random --seed 4 -n 6 --d-model 8 --heads 2 --biases --rope half -o "$session"
        large="$out/lab-large.json"
        "$attnviz" example random --seed 4 -n 512 --d-model 768 --heads 12 -o "$large"
        png="$out/lab-large.png"
        XDG_CONFIG_HOME="$out/config" "$attnviz" "$large" --panel "Attention lab" --screenshot "$png" --frames 3 \
            --size 1280x800 --report "$png.json"
        "$png_check" "$png" 1280 800
        "$ui_check" "$png.json" "$png" layout "item=lab: head"
        extra=(--panel "Attention lab")
        checks+=("readable=Attention lab" "item=lab: view Norm-weighted")
        sizes="1024x640 1920x1080" ;;
    presentation-lessons)
        # For a room: each lesson's first and last step at 1280×800 with --ui-scale 1.5 --theme light.
        # Text at 24 px on the light window, every window in place, every matrix's cells numbered,
        # at least 20 px and inside the lesson's window, the step's text drawn.
        teach="Teach: attention step by step"
        for name in worked-example causal-mask multi-head scaling rope sliding-window kv-cache flash-attention \
            cross-attention; do
            last=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["steps"]))' \
                "$(dirname "$0")/../../assets/lessons/$name.json")
            for step in 1 "$last"; do
                png="$out/$case-$name-$step.png"
                XDG_CONFIG_HOME="$out/config" "$attnviz" --lesson "$name" --teach "$step" --ui-scale 1.5 --theme light \
                    --screenshot "$png" --frames 3 --size 1280x800 --report "$png.json"
                "$png_check" "$png" 1280 800
                "$ui_check" "$png.json" "$png" layout "readable=$teach" "within=$teach" "item=teach: text" \
                    "ground=$teach=#f0f0f0" "value=view: font px=24"
            done
        done
        sizes="" ;;
    presentation-projector)
        # The teacher's projector: attnviz --lesson kv-cache --ui-scale 2 --theme light at 1920×1080
        # (32 px text), at its first step and in focus at the bytes per token, and high contrast.
        teach="Teach: attention step by step"
        for run in "first:--teach 1 --theme light" "focus:--teach 5 --focus --theme light" \
            "contrast:--teach 3 --theme high-contrast"; do
            png="$out/$case-${run%%:*}.png"
            # shellcheck disable=SC2086 # the options are words
            XDG_CONFIG_HOME="$out/config" "$attnviz" --lesson kv-cache --ui-scale 2 ${run#*:} \
                --screenshot "$png" --frames 3 --size 1920x1080 --report "$png.json"
            "$png_check" "$png" 1920 1080
            checks=(layout "readable=$teach:40" "within=$teach" "item=teach: text" "value=view: font px=32" uncut)
            case "${run%%:*}" in
                first) checks+=("ground=$teach=#f0f0f0" "item=teach: progress") ;;
                focus) checks+=("item=teach: leave focus" "!item=teach: progress" "K(1):0:0=-0.684") ;;
                contrast) checks+=("ground=$teach=#000000") ;;
            esac
            "$ui_check" "$png.json" "$png" "${checks[@]}"
        done
        sizes="" ;;
    projector-labels)
        # The steps whose token labels and status bar were cut at the projector's size (kv-cache step
        # 4: "gre…" over weights⁽²⁾; flash-attention step 7: "th…"; the status line and the lesson's
        # message at every step): --ui-scale 2 --theme light at 1920×1080, every label drawn whole
        # (column labels too wide for their columns turned, the message on a line of its own).
        teach="Teach: attention step by step"
        for run in kv-cache:4 flash-attention:7 kv-cache:1; do
            png="$out/$case-${run%%:*}-${run#*:}.png"
            XDG_CONFIG_HOME="$out/config" "$attnviz" --lesson "${run%%:*}" --teach "${run#*:}" --ui-scale 2 --theme light \
                --screenshot "$png" --frames 3 --size 1920x1080 --report "$png.json"
            "$png_check" "$png" 1920 1080
            "$ui_check" "$png.json" "$png" uncut layout "readable=$teach:40" "within=$teach" "item=teach: text" \
                "item=status: line" "item=status: message"
        done
        sizes="" ;;
    workspaces)
        # Every workspace at 1024×640, 1280×800 and 1920×1080 (--workspace): its windows tile the
        # window, every tab inside its window (no tab strip overflowing), the bar names it, and a
        # panel of it is readable; at n = 512 in Layer too (the large session's heatmaps).
        session="$out/random-512.json"
        "$attnviz" example random --seed 3 -n 512 --d-model 64 --heads 4 -o "$session"
        for workspace in "layer:Layer:readable=Attention per head" "model:Model:window=Model view" \
            "lab:Lab:readable=Attention lab" "teach:Teach:window=Lesson" "attribution:Attribution:window=Attribution"; do
            name=${workspace%%:*} rest=${workspace#*:}
            model=()  # Attribution on the tiny reference GPT-2 (without a model it is one line of text)
            [ "$name" = attribution ] && model=(--model "$(cd "$(dirname "$0")/../.." && pwd)/tests/reference/models/gpt2" \
                --text "Hello world")
            for size in 1024x640 1280x800 1920x1080; do
                png="$out/$case-$name-$size.png"
                XDG_CONFIG_HOME="$out/config" "$attnviz" "${model[@]}" --workspace "$name" --screenshot "$png" \
                    --frames 3 --size "$size" --report "$png.json"
                "$png_check" "$png" "${size%x*}" "${size#*x}"
                "$ui_check" "$png.json" "$png" layout tabs "workspace=${rest%%:*}" "${rest#*:}" \
                    "item=workspace: ${rest%%:*} (current)"
            done
        done
        png="$out/$case-layer-512.png"
        XDG_CONFIG_HOME="$out/config" "$attnviz" "$session" --workspace layer --screenshot "$png" --frames 3 \
            --size 1280x800 --report "$png.json"
        "$png_check" "$png" 1280 800
        "$ui_check" "$png.json" "$png" layout tabs workspace=Layer "within=Attention per head"
        sizes="" ;;
    themes)
        # The explorer in each theme (and cividis) at 1024×640: the layout, the worked example's
        # numbers visible, the heads readable, each window on the theme's own background.
        session="$out/worked-example.json"
        "$attnviz" example worked-example -o "$session"
        for theme in dark:#0f1010 light:#f0f0f0 high-contrast:#000000; do
            png="$out/$case-${theme%%:*}.png"
            XDG_CONFIG_HOME="$out/config" "$attnviz" "$session" --theme "${theme%%:*}" --colormap cividis \
                --select weights:1:0:1 --screenshot "$png" --frames 3 --size 1024x640 --report "$png.json"
            "$png_check" "$png" 1024 640
            "$ui_check" "$png.json" "$png" layout "${worked_numbers[@]}" "readable=Attention per head" \
                "within=Attention per head" "ground=Dimensions=${theme#*:}" "ground=Pipeline=${theme#*:}"
        done
        sizes="" ;;
    *) echo "unknown case $case"; exit 2 ;;
esac

for size in $sizes; do
    png="$out/$case-$size.png"
    rm -f "$png"
    XDG_CONFIG_HOME="$out/config" "$attnviz" ${session:+"$session"} "${extra[@]}" --screenshot "$png" --frames 3 --size "$size" \
        --report "$png.json"
    "$png_check" "$png" "${size%x*}" "${size#*x}"
    size_checks=("${checks[@]}")
    [ "$size" = 1024x640 ] || size_checks+=("${large_checks[@]}")
    "$ui_check" "$png.json" "$png" "${size_checks[@]}"
done
# A screenshot run must not write the user's layout file.
if [ -e "$out/config/attnviz/layout.ini" ]; then
    echo "a screenshot run wrote the layout file"; exit 1
fi
