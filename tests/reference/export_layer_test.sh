#!/bin/bash
# scripts/export-layer.py on a plain nn.TransformerEncoder, then `attnviz import` and `compute`:
# the output matches the module's own (float32) to 1e-5, for one layer and for every layer of the
# model at once (--layer all, each with the hidden states entering it). Skipped (77) without
# python3-torch.
set -euo pipefail
attnviz=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null || { echo "SKIP: needs python3-torch"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$root/scripts/export-layer.py" --torch-demo --layer 1 --text "the cat sat on the mat" --check \
    -o "$work/demo.safetensors"
"$attnviz" import "$work/demo.safetensors" -o "$work/demo.json"  # no further options
"$attnviz" compute "$work/demo.json" -o "$work/trace.json"
/usr/bin/python3 - "$work" <<'PY'
import json, struct, sys
import numpy as np
work = sys.argv[1]
raw = open(work + "/demo.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
r = header["reference.output"]
ref = np.frombuffer(raw[8 + n + r["data_offsets"][0]:8 + n + r["data_offsets"][1]], dtype="<f8").reshape(r["shape"])
trace = json.load(open(work + "/trace.json"))
session = json.load(open(work + "/demo.json"))
assert session["tokens"] == ["the", "cat", "sat", "on", "the", "mat"], session["tokens"]
assert trace["config"]["heads"] == 4 and trace["config"].get("biases") is True, trace["config"]
err = np.abs(np.array(trace["output"]) - ref).max()
print("largest difference from PyTorch's module:", err)
sys.exit(0 if err < 1e-5 else 1)
PY

# Every layer: one file with X.0, X.1 and reference.output.0, .1; one session per layer.
/usr/bin/python3 "$root/scripts/export-layer.py" --torch-demo --layer all --text "the cat sat on the mat" --check \
    -o "$work/all.safetensors"
"$attnviz" import "$work/all.safetensors" --layer all -o "$work/layers"
for layer in 0 1; do
    "$attnviz" compute "$work/layers/layer-0$layer.json" -o "$work/trace-$layer.json"
done
/usr/bin/python3 - "$work" <<'PY'
import json, struct, sys
import numpy as np
work = sys.argv[1]
raw = open(work + "/all.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
worst = 0
for layer in (0, 1):
    r = header["reference.output.%d" % layer]
    ref = np.frombuffer(raw[8 + n + r["data_offsets"][0]:8 + n + r["data_offsets"][1]], dtype="<f8").reshape(r["shape"])
    trace = json.load(open(work + "/trace-%d.json" % layer))
    worst = max(worst, np.abs(np.array(trace["output"]) - ref).max())
print("largest difference from PyTorch's module over both layers:", worst)
sys.exit(0 if worst < 1e-5 else 1)
PY
