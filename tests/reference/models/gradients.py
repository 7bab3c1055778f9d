#!/usr/bin/python3
"""Writes tests/reference/gradients/NAME.safetensors: the gradients of objectives of each causal tiny
model of tests/reference/models (made by generate.py), by PyTorch's autograd in float64 through the
same forward generate.py writes from the architecture's definition, on the folder's stored weights.

Run with Debian's python3 and python3-torch:  /usr/bin/python3 tests/reference/models/gradients.py

The objectives (core/model/backward.hpp), on the text of expected.json:
  difference  logit[target] − logit[versus] at the last position (target, versus: the two most
              likely next tokens), with every weight's gradient
  logit       logit[target] at the last position
  loss        the mean next-token loss over positions 0 … n − 2, with every weight's gradient for
              gpt2 (a tied LM head), llama (untied) and gemma2 (soft-capped logits)
Each file holds, in F64, per objective O:
  O.value                 [1]
  O.d_embeddings          n × d_model: the residual stream entering block 0
  O.d_weights.L           heads × n × n: block L's attention weights
  O.d_output.L            n × d_model: the residual stream after block L
  O.weight.NAME           a tensor's gradient, shaped as stored; for a table whose rows are mostly
  O.rows.NAME             zero, only its rows O.rows.NAME (their indices, as F64) are stored
and the metadata "objectives": a JSON list of {"name", "kind", "target", "versus", "weights"}.
"""
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "gradients")
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64}
ENCODERS = {"bert", "roberta"}
# The loss's weight gradients (the whole LM head's) for a tied head, an untied one and a soft-capped one.
LOSS_WEIGHTS = {"gpt2", "llama", "gemma2"}


def read_tensors(folder):
    """Every tensor of a folder's model.safetensors or shards, as stored."""
    out = {}
    for file in sorted(f for f in os.listdir(folder) if f.endswith(".safetensors")):
        with open(os.path.join(folder, file), "rb") as f:
            data = f.read()
        size = struct.unpack("<Q", data[:8])[0]
        header = json.loads(data[8:8 + size])
        for name, info in header.items():
            if name == "__metadata__":
                continue
            a, b = info["data_offsets"]
            blob = bytearray(data[8 + size + a:8 + size + b])
            raw = torch.frombuffer(blob, dtype=torch.int16 if info["dtype"] == "BF16" else DTYPES[info["dtype"]])
            t = raw.view(torch.bfloat16) if info["dtype"] == "BF16" else raw
            out[name] = t.reshape(info["shape"])
    return out


class Loaded(generate.Weights):
    """The folder's stored weights in place of random ones, each a float64 leaf of autograd."""

    def __init__(self, tensors):
        super().__init__(torch.float64)
        self.tensors, self.leaves = tensors, {}

    def add(self, name, t):
        leaf = self.tensors[name].to(torch.float64).clone().requires_grad_(True)
        self.leaves[name] = leaf
        return leaf

    def get(self, name):
        return self.leaves[name]


def store_weight_gradient(out, key, name, g):
    nonzero = [i for i in range(g.shape[0]) if g.dim() == 2 and bool(g[i].abs().sum() > 0)]
    if g.dim() == 2 and len(nonzero) * 2 < g.shape[0]:
        out[key + ".rows." + name] = torch.tensor(nonzero, dtype=torch.float64)
        out[key + ".weight." + name] = g[nonzero].contiguous()
    else:
        out[key + ".weight." + name] = g.contiguous()


def gradients(name):
    tensors = read_tensors(os.path.join(HERE, name))
    generate.make_weights = lambda dtype: Loaded(tensors)
    _, w, layers, _, logits = generate.make(name)
    order = torch.argsort(logits, descending=True)
    target, versus = int(order[0]), int(order[1])
    ids = torch.tensor(generate.fixture_ids(generate.MODELS[name][0], generate.TEXT))
    every_logit = w.lens(layers[-1]["output"])  # n × vocab
    loss = torch.nn.functional.cross_entropy(every_logit[:-1], ids[1:])
    objectives = [("difference", logits[target] - logits[versus], True), ("logit", logits[target], False),
                  ("loss", loss, name in LOSS_WEIGHTS)]
    out, listed = {}, []
    names = sorted(w.leaves)
    for key, value, with_weights in objectives:
        inputs = [w.embeddings] + [layer["weights"] for layer in layers] + [layer["output"] for layer in layers]
        if with_weights:
            inputs += [w.leaves[n] for n in names]
        grads = torch.autograd.grad(value, inputs, retain_graph=True, allow_unused=True)
        out[key + ".value"] = value.detach().reshape(1)
        out[key + ".d_embeddings"] = grads[0]
        L = len(layers)
        for i in range(L):
            out[key + ".d_weights.%d" % i] = grads[1 + i]
            out[key + ".d_output.%d" % i] = grads[1 + L + i]
        if with_weights:
            for n, g in zip(names, grads[1 + 2 * L:]):
                store_weight_gradient(out, key, n, torch.zeros_like(w.leaves[n]) if g is None else g)
        listed.append({"name": key, "kind": "mean_loss" if key == "loss" else key, "target": target,
                       "versus": versus, "weights": with_weights})
    return out, listed


def write(name, tensors, listed):
    header, blobs, offset = {"__metadata__": {"objectives": json.dumps(listed),
                                              "generator": "tests/reference/models/gradients.py",
                                              "torch": torch.__version__}}, [], 0
    for key, t in tensors.items():
        blob = t.detach().to(torch.float64).contiguous().numpy().tobytes()
        header[key] = {"dtype": "F64", "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name + ".safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    print("wrote", os.path.join(OUT, name + ".safetensors"))


def main(only):
    for name in generate.MODELS:
        if name in ENCODERS or (only and name not in only):
            continue
        write(name, *gradients(name))


if __name__ == "__main__":
    main(sys.argv[1:])
