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
For gpt2 and llama, activation patching (patching()): patching.clean_diff, .corrupt_diff [1],
patching.heads and .attention [layers × heads], patching.residual [layers × n], and the metadata
"patching": {"clean_ids", "corrupt_ids", "target", "versus"}; the head detectors' scores
heads.previous_token, .induction, .duplicate_token, .sink, .diagonal, .copying [layers × heads] on
the probe of seed 1, and the metadata "heads": {"seed", "probe"}.
For gpt2 (LayerNorm) and llama (RMSNorm), the attribution of the difference (attribution()):
  attribution.grad_x_input, .integrated_gradients   [n] (IG_STEPS points)
  attribution.dla_heads [layers × heads], .dla_mlps [layers], .dla_embeddings [1], .dla_bias [1],
  attribution.objective [1]
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
    """The folder's stored weights in place of random ones, each a float64 leaf of autograd; the
    residual stream entering block 0 times `scale` (integrated gradients' path)."""

    def __init__(self, tensors, scale=1.0):
        super().__init__(torch.float64)
        self.tensors, self.leaves, self.scale = tensors, {}, scale

    def enter(self, x):
        self.unscaled = x
        self.embeddings = x * self.scale
        return self.embeddings

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
    (_, w, layers, _, logits), _ = run(name, tensors)
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
    patched = detected = None
    if name in ATTRIBUTION:
        out.update(attribution(name, tensors, target, versus))
        values, patched = patching(name, tensors)
        out.update(values)
        values, detected = detectors(name, tensors)
        out.update(values)
    return out, listed, patched, detected


# Attribution (core/model/attribution.hpp) of the logit difference, for a model of each final norm:
# the names of W_O (and b_O) per layer, the final norm's weight (and bias), the LM head, and eps.
ATTRIBUTION = {
    "gpt2": {"W_O": "transformer.h.%d.attn.c_proj.weight", "b_O": "transformer.h.%d.attn.c_proj.bias",
             "conv1d": True, "norm_w": "transformer.ln_f.weight", "norm_b": "transformer.ln_f.bias",
             "head": "transformer.wte.weight", "eps": 1e-5},
    "llama": {"W_O": "model.layers.%d.self_attn.o_proj.weight", "b_O": None, "conv1d": False,
              "norm_w": "model.norm.weight", "norm_b": None, "head": "lm_head.weight", "eps": 1e-5},
}
IG_STEPS = 16


def run(name, tensors, scale=1.0, ids=None, patch=None):
    """The model on the stored weights (on `ids`, else the text's) with the stream entering block 0
    scaled; every head's weights and Z and every block's input stream kept. `patch`, when given,
    is (kind, layer, index, clean) with clean another run's record: kind "z" puts its head `index`'s
    Z in block `layer`, "weights" its attention weights (Z = A_clean·V), "stream" its stream
    entering the block at position `index`."""
    record = {"weights": [], "z": [], "stream": []}
    plain = generate.attention

    def attention(q, k, v, causal):
        w, z = plain(q, k, v, causal)
        layer = len(record["z"])
        if patch and patch[1] == layer and patch[0] == "z":
            z = z.clone()
            z[patch[2]] = patch[3]["z"][layer][patch[2]]
        if patch and patch[1] == layer and patch[0] == "weights":
            w = w.clone()
            w[patch[2]] = patch[3]["weights"][layer][patch[2]]
            z = w @ v
        record["weights"].append(w)
        record["z"].append(z)
        return w, z

    class Patched(Loaded):
        def block_input(self, layer, x):
            if patch and patch[0] == "stream" and patch[1] == layer:
                x = x.clone()
                x[patch[2]] = patch[3]["stream"][layer][patch[2]]
            record["stream"].append(x)
            return x

    generate.make_weights = lambda dtype: Patched(tensors, scale)
    generate.attention = attention
    try:
        if ids is None:
            made = generate.make(name)
        else:
            tokenizer, call, _ = generate.MODELS[name]
            made = call(ids, generate.vocab_size(tokenizer))
    finally:
        generate.attention = plain
    return made, record


def attribution(name, tensors, target, versus):
    """grad × input, integrated gradients (zero baseline, IG_STEPS right-Riemann points) and the
    direct logit attribution of logit[target] − logit[versus] at the last position, from the
    definitions: each head's write z_h·W_O,h, each MLP's the rest of its block's change to the
    stream, all through the final norm with its scale (σ or RMS) from the whole last row, frozen."""
    out = {}
    total = None
    for k in range(1, IG_STEPS + 1):
        (_, w, _, _, logits), _ = run(name, tensors, k / IG_STEPS)
        g = torch.autograd.grad(logits[target] - logits[versus], [w.embeddings])[0]
        total = g if total is None else total + g
    x0 = w.unscaled.detach()
    out["attribution.grad_x_input"] = (x0 * g).sum(-1)
    out["attribution.integrated_gradients"] = (x0 * total / IG_STEPS).sum(-1)
    a = ATTRIBUTION[name]
    (config, w, layers, _, logits), record = run(name, tensors)
    zs = record["z"]
    with torch.no_grad():
        u = w.get(a["head"])[target] - w.get(a["head"])[versus]
        x_final = layers[-1]["output"][-1]
        if a["norm_b"]:  # LayerNorm: centred, divided by σ, times γ
            sigma = torch.sqrt(((x_final - x_final.mean()) ** 2).mean() + a["eps"])
            part = lambda v: ((v - v.mean()) / sigma * w.get(a["norm_w"])) @ u  # noqa: E731
            bias = w.get(a["norm_b"]) @ u
        else:  # RMSNorm: divided by the RMS, times γ
            rms = torch.sqrt((x_final ** 2).mean() + a["eps"])
            part = lambda v: (v / rms * w.get(a["norm_w"])) @ u  # noqa: E731
            bias = torch.zeros((), dtype=torch.float64)
        heads, mlps, embeddings = [], [], w.embeddings[-1].detach().clone()
        stream = w.embeddings[-1]
        for L, layer in enumerate(layers):
            W_O = w.get(a["W_O"] % L)
            W_O = W_O if a["conv1d"] else W_O.T  # h·d_v × d_model
            z = zs[L][:, -1, :]  # heads × d_v at the last position
            dv = z.shape[1]
            writes = [z[h] @ W_O[h * dv:(h + 1) * dv] for h in range(z.shape[0])]
            attended = sum(writes)
            if a["b_O"]:
                attended = attended + w.get(a["b_O"] % L)
                embeddings += w.get(a["b_O"] % L)
            heads.append([float(part(v)) for v in writes])
            mlps.append(float(part(layer["output"][-1] - stream - attended)))
            stream = layer["output"][-1]
        out["attribution.dla_heads"] = torch.tensor(heads, dtype=torch.float64)
        out["attribution.dla_mlps"] = torch.tensor(mlps, dtype=torch.float64)
        out["attribution.dla_embeddings"] = part(embeddings).reshape(1)
        out["attribution.dla_bias"] = bias.reshape(1)
        out["attribution.objective"] = (logits[target] - logits[versus]).detach().reshape(1)
    return out


def patching(name, tensors):
    """Activation patching (core/model/patching.hpp) of the text against it with its second token
    changed, for logit[target] − logit[versus]: target the clean run's most likely next token,
    versus the corrupted run's (or the clean run's second)."""
    clean_ids = generate.fixture_ids(generate.MODELS[name][0], generate.TEXT)
    corrupt_ids = list(clean_ids)
    corrupt_ids[1] = (corrupt_ids[1] + 1) % generate.vocab_size(generate.MODELS[name][0])
    (_, _, layers, _, clean_logits), clean = run(name, tensors, ids=clean_ids)
    (_, _, _, _, corrupt_logits), _ = run(name, tensors, ids=corrupt_ids)
    target = int(torch.argmax(clean_logits))
    versus = int(torch.argmax(corrupt_logits))
    if versus == target:
        versus = int(torch.argsort(clean_logits, descending=True)[1])

    def diff(logits):
        return float(logits[target] - logits[versus])

    clean_diff, corrupt_diff = diff(clean_logits), diff(corrupt_logits)

    def patched(kind, layer, index):
        (_, _, _, _, logits), _ = run(name, tensors, ids=corrupt_ids, patch=(kind, layer, index, clean))
        return (diff(logits) - corrupt_diff) / (clean_diff - corrupt_diff)

    L, h, n = len(layers), clean["z"][0].shape[0], len(clean_ids)
    out = {"patching.clean_diff": torch.tensor([clean_diff], dtype=torch.float64),
           "patching.corrupt_diff": torch.tensor([corrupt_diff], dtype=torch.float64)}
    for key, kind, count in (("heads", "z", h), ("attention", "weights", h), ("residual", "stream", n)):
        out["patching." + key] = torch.tensor([[patched(kind, layer, i) for i in range(count)] for layer in range(L)],
                                              dtype=torch.float64)
    return out, {"clean_ids": clean_ids, "corrupt_ids": corrupt_ids, "target": target, "versus": versus}


def probe(vocab, seed, half):
    """core/model/head_detectors.hpp's probe: `half` ids by splitmix64 from the seed, then again."""
    mask, ids = (1 << 64) - 1, []
    for k in range(half):
        z = (seed + k * 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        ids.append(z % vocab)
    return ids + ids


# Where each model keeps a head's W_V and W_O, its attention's norm and its LM head (detectors()).
DETECTORS = {
    "gpt2": {"half": 16, "eps": 1e-5, "norm": "transformer.h.%d.ln_1", "head": "transformer.wte.weight",
             "embed": "transformer.wte.weight"},
    "llama": {"half": 50, "eps": 1e-5, "norm": "model.layers.%d.input_layernorm", "head": "lm_head.weight",
              "embed": "model.embed_tokens.weight"},
}


def detectors(name, tensors, seed=1):
    """The head detectors' scores from the definitions on the probe (core/model/head_detectors.hpp)."""
    a = DETECTORS[name]
    vocab = generate.vocab_size(generate.MODELS[name][0])
    ids = probe(vocab, seed, a["half"])
    (config, w, layers, _, _), record = run(name, tensors, ids=ids)
    n, half = len(ids), a["half"]
    first = {}
    for i, t in enumerate(ids):
        first.setdefault(t, i)
    keys = ("previous_token", "induction", "duplicate_token", "sink", "diagonal", "copying")
    scores = {k: [] for k in keys}
    with torch.no_grad():
        E = w.get(a["embed"])
        for L, A in enumerate(record["weights"]):
            rows = {k: [] for k in keys}
            if name == "gpt2":
                X = generate.layer_norm(E, w.get(a["norm"] % L + ".weight"), w.get(a["norm"] % L + ".bias"), a["eps"])
            else:
                X = generate.rms_norm(E, w.get(a["norm"] % L + ".weight"), a["eps"])
            G = w.get(a["head"]).T @ X  # W_Uᵀ·X, d_model × d_model
            for h in range(A.shape[0]):
                P = A[h]
                rows["previous_token"].append(float(sum(P[i, i - 1] for i in range(1, n)) / (n - 1)))
                rows["induction"].append(float(sum(P[i, first[ids[i]] + 1] for i in range(half, n)) / (n - half)))
                dup = [float(sum(P[i, j] for j in range(i) if ids[j] == ids[i])) for i in range(n)
                       if ids[i] in ids[:i]]
                rows["duplicate_token"].append(sum(dup) / len(dup))
                rows["sink"].append(float(P[:, 0].mean()))
                rows["diagonal"].append(float(torch.diagonal(P).mean()))
                if name == "gpt2":
                    d = E.shape[1]
                    dh = d // A.shape[0]
                    W_V = w.get("transformer.h.%d.attn.c_attn.weight" % L)[:, 2 * d + h * dh:2 * d + (h + 1) * dh]
                    W_O = w.get("transformer.h.%d.attn.c_proj.weight" % L)[h * dh:(h + 1) * dh]
                else:
                    v = w.get("model.layers.%d.self_attn.v_proj.weight" % L)
                    o = w.get("model.layers.%d.self_attn.o_proj.weight" % L)
                    dh = o.shape[1] // A.shape[0]
                    g = h // (A.shape[0] // (v.shape[0] // dh))
                    W_V, W_O = v[g * dh:(g + 1) * dh].T, o[:, h * dh:(h + 1) * dh].T
                lam = torch.linalg.eigvals(W_O @ G @ W_V)
                rows["copying"].append(float(lam.real.sum() / lam.abs().sum()))
            for k in keys:
                scores[k].append(rows[k])
    out = {"heads." + k: torch.tensor(v, dtype=torch.float64) for k, v in scores.items()}
    return out, {"seed": seed, "probe": ids}


def write(name, tensors, listed, patched=None, detected=None):
    meta = {"objectives": json.dumps(listed), "generator": "tests/reference/models/gradients.py",
            "torch": torch.__version__}
    if patched:
        meta["patching"] = json.dumps(patched)
    if detected:
        meta["heads"] = json.dumps(detected)
    header, blobs, offset = {"__metadata__": meta}, [], 0
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
