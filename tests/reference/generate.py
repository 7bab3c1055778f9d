#!/usr/bin/python3
"""Writes tests/reference/torch-layers.json: tiny attention layers in the conventions of real models,
each run by PyTorch's own code in float64, for the C++ tests to compare attnviz's forward pass with
(without needing PyTorch themselves).

Run with Debian's python3 and python3-torch:  /usr/bin/python3 tests/reference/generate.py

Each case holds an attnviz session (format version 2: biases, kv_heads, rope as the layer has them)
built from the layer's PyTorch weights, and PyTorch's attention weights per head and its output:
  torch    nn.MultiheadAttention (in_proj_weight/in_proj_bias, out_proj), through
           F.multi_head_attention_forward with need_weights=True, average_attn_weights=False
  bert     separate query/key/value nn.Linear with biases, then the output dense layer
  gpt2     Conv1D (y = x·W + b, W is d_model × 3·d_model), causal
  llama    q/k/v/o_proj without biases, grouped-query attention (repeat_kv), RoPE with
           rotate_half, causal
  gptj     RoPE on interleaved pairs (rotate_every_two) on part of each head, causal
  plus_one softmax₁, e^s / (1 + Σ e^s), from its definition (version 4: config.softmax), causal

It also writes tests/reference/checkpoints/: one layer in each convention's tensor names (torch,
bert, gpt2, llama with its config.json), stored as F32, F16 or BF16, the X each was run on as .npy,
and expected.json with PyTorch's weights and outputs from the stored values, for `attnviz import`.
"""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

torch.manual_seed(20261122)
DT = torch.float64


def rows(t):
    """A 2-D tensor as a list of rows of Python floats (repr is the shortest exact form)."""
    return [[float(v) for v in r] for r in t.tolist()]


def session(config, x, heads, w_o, b_o=None):
    s = {"format": "attnviz-session", "version": 2, "config": config,
         "tokens": ["t%d" % i for i in range(x.shape[0])], "X": rows(x), "heads": heads, "W_O": rows(w_o)}
    if b_o is not None:
        s["b_O"] = [[float(v) for v in b_o.tolist()]]
    return s


def config(n, d_model, h, d_k, d_v, mask, biases=False, kv_heads=None, rope=None, softmax=None):
    c = {"n": n, "d_model": d_model, "heads": h, "d_k": d_k, "d_v": d_v, "output_projection": True,
         "mask": mask, "scale": "sqrt_dk"}
    if softmax is not None:
        c["softmax"] = softmax
    if biases:
        c["biases"] = True
    if kv_heads is not None and kv_heads != h:
        c["kv_heads"] = kv_heads
    if rope is not None:
        c["rope"] = rope
    return c


def split_heads(w, b, h, d):
    """A Linear's weight (h·d × d_model, y = x·Wᵀ + b) as h blocks of d_model × d (and 1 × d biases)."""
    out = []
    for i in range(h):
        block = {"W": rows(w[i * d:(i + 1) * d, :].T)}
        if b is not None:
            block["b"] = [[float(v) for v in b[i * d:(i + 1) * d].tolist()]]
        out.append(block)
    return out


def heads_json(q, k, v, group=1):
    """Per-head objects; K/V only in the first head of each group."""
    heads = []
    for i in range(len(q)):
        head = {"W_Q": q[i]["W"]}
        if "b" in q[i]:
            head["b_Q"] = q[i]["b"]
        if i % group == 0:
            g = i // group
            head["W_K"] = k[g]["W"]
            head["W_V"] = v[g]["W"]
            if "b" in k[g]:
                head["b_K"] = k[g]["b"]
                head["b_V"] = v[g]["b"]
        heads.append(head)
    return heads


def case(name, source, sess, weights, output):
    return {"name": name, "source": source, "session": sess,
            "weights": [rows(w) for w in weights], "output": rows(output)}


def attention(q, k, v, causal):
    """q, k: h × n × d_k; v: h × n × d_v. The weights and Z per head, PyTorch's softmax."""
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w, w @ v


def torch_mha(n=4, d_model=8, h=2):
    mha = torch.nn.MultiheadAttention(d_model, h, bias=True, dtype=DT)
    with torch.no_grad():
        mha.in_proj_bias.uniform_(-0.5, 0.5)
        mha.out_proj.bias.uniform_(-0.5, 0.5)
    x = torch.randn(n, d_model, dtype=DT)
    out, w = F.multi_head_attention_forward(
        x[:, None, :], x[:, None, :], x[:, None, :], d_model, h, mha.in_proj_weight, mha.in_proj_bias, None, None,
        False, 0.0, mha.out_proj.weight, mha.out_proj.bias, training=False, need_weights=True,
        average_attn_weights=False)
    d = d_model // h
    wq, wk, wv = mha.in_proj_weight.detach().split(d_model)
    bq, bk, bv = mha.in_proj_bias.detach().split(d_model)
    heads = heads_json(split_heads(wq, bq, h, d), split_heads(wk, bk, h, d), split_heads(wv, bv, h, d))
    sess = session(config(n, d_model, h, d, d, "none", biases=True), x, heads, mha.out_proj.weight.detach().T,
                   mha.out_proj.bias.detach())
    return case("torch", "nn.MultiheadAttention via F.multi_head_attention_forward", sess, w[0], out[:, 0, :])


def bert(n=5, d_model=12, h=3):
    d = d_model // h
    lin = [torch.nn.Linear(d_model, d_model, dtype=DT) for _ in range(4)]  # query, key, value, output dense
    x = torch.randn(n, d_model, dtype=DT)
    with torch.no_grad():
        q, k, v = (l(x).view(n, h, d).transpose(0, 1) for l in lin[:3])
        w, z = attention(q, k, v, causal=False)
        out = lin[3](z.transpose(0, 1).reshape(n, d_model))
    parts = [split_heads(l.weight.detach(), l.bias.detach(), h, d) for l in lin[:3]]
    sess = session(config(n, d_model, h, d, d, "none", biases=True), x, heads_json(*parts),
                   lin[3].weight.detach().T, lin[3].bias.detach())
    return case("bert", "BERT self-attention formulas (nn.Linear with biases)", sess, w, out)


def gpt2(n=5, d_model=8, h=2):
    d = d_model // h
    c_attn_w = torch.randn(d_model, 3 * d_model, dtype=DT) * 0.3  # Conv1D: y = x·W + b
    c_attn_b = torch.randn(3 * d_model, dtype=DT) * 0.1
    c_proj_w = torch.randn(d_model, d_model, dtype=DT) * 0.3
    c_proj_b = torch.randn(d_model, dtype=DT) * 0.1
    x = torch.randn(n, d_model, dtype=DT)
    qkv = x @ c_attn_w + c_attn_b
    q, k, v = (t.view(n, h, d).transpose(0, 1) for t in qkv.split(d_model, dim=1))
    w, z = attention(q, k, v, causal=True)
    out = z.transpose(0, 1).reshape(n, d_model) @ c_proj_w + c_proj_b
    # Conv1D's W is already x·W: its columns h·d … are head h's (the transpose of a Linear's rows).
    parts = [split_heads(c_attn_w[:, j * d_model:(j + 1) * d_model].T, c_attn_b[j * d_model:(j + 1) * d_model], h, d)
             for j in range(3)]
    sess = session(config(n, d_model, h, d, d, "causal", biases=True), x, heads_json(*parts), c_proj_w, c_proj_b)
    return case("gpt2", "GPT-2 attention formulas (Conv1D, causal)", sess, w, out)


def plus_one(n=6, d_model=8, h=2):
    """softmax₁ from its definition, weights = e^s / (1 + Σ_k e^s) (Miller 2023; PyTorch has no such
    softmax), on BERT's layer with a causal mask and X large enough for scores on both sides of 0."""
    d = d_model // h
    lin = [torch.nn.Linear(d_model, d_model, dtype=DT) for _ in range(4)]  # query, key, value, output dense
    x = torch.randn(n, d_model, dtype=DT) * 2
    with torch.no_grad():
        q, k, v = (l(x).view(n, h, d).transpose(0, 1) for l in lin[:3])
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)
        scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
        e = torch.exp(scores)  # e^−∞ = 0
        w = e / (1 + e.sum(dim=-1, keepdim=True))
        z = w @ v
        out = lin[3](z.transpose(0, 1).reshape(n, d_model))
    parts = [split_heads(l.weight.detach(), l.bias.detach(), h, d) for l in lin[:3]]
    sess = session(config(n, d_model, h, d, d, "causal", biases=True, softmax="plus_one"), x, heads_json(*parts),
                   lin[3].weight.detach().T, lin[3].bias.detach())
    sess["version"] = 4  # the softmax needs version 4
    return case("plus_one", "softmax plus one from its definition (BERT's layer, causal)", sess, w, out)


def rope_half(t, base):
    """Hugging Face Llama: cos/sin of cat(freqs, freqs), t·cos + rotate_half(t)·sin."""
    n, dim = t.shape[-2], t.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=DT) / dim))
    freqs = torch.outer(torch.arange(n, dtype=DT), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    x1, x2 = t[..., :dim // 2], t[..., dim // 2:]
    return t * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


def rope_interleaved(t, base, rotary_dim):
    """GPT-J: rotate_every_two on the first rotary_dim columns, the rest passed through."""
    n = t.shape[-2]
    rot, rest = t[..., :rotary_dim], t[..., rotary_dim:]
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=DT) / rotary_dim))
    freqs = torch.outer(torch.arange(n, dtype=DT), inv_freq)
    sin = freqs.sin().repeat_interleave(2, dim=-1)
    cos = freqs.cos().repeat_interleave(2, dim=-1)
    x1, x2 = rot[..., ::2], rot[..., 1::2]
    rotated = torch.stack((-x2, x1), dim=-1).flatten(-2)
    return torch.cat((rot * cos + rotated * sin, rest), dim=-1)


def llama(n=6, d_model=16, h=4, kv_heads=2, base=10000.0):
    d = d_model // h
    q_proj = torch.randn(h * d, d_model, dtype=DT) * 0.3  # y = x·Wᵀ, no biases
    k_proj = torch.randn(kv_heads * d, d_model, dtype=DT) * 0.3
    v_proj = torch.randn(kv_heads * d, d_model, dtype=DT) * 0.3
    o_proj = torch.randn(d_model, h * d, dtype=DT) * 0.3
    x = torch.randn(n, d_model, dtype=DT)
    q = (x @ q_proj.T).view(n, h, d).transpose(0, 1)
    k = (x @ k_proj.T).view(n, kv_heads, d).transpose(0, 1)
    v = (x @ v_proj.T).view(n, kv_heads, d).transpose(0, 1)
    q, k = rope_half(q, base), rope_half(k, base)
    k = k.repeat_interleave(h // kv_heads, dim=0)  # repeat_kv
    v = v.repeat_interleave(h // kv_heads, dim=0)
    w, z = attention(q, k, v, causal=True)
    out = z.transpose(0, 1).reshape(n, h * d) @ o_proj.T
    heads = heads_json(split_heads(q_proj, None, h, d), split_heads(k_proj, None, kv_heads, d),
                       split_heads(v_proj, None, kv_heads, d), group=h // kv_heads)
    sess = session(config(n, d_model, h, d, d, "causal", kv_heads=kv_heads, rope={"base": base, "style": "half"}), x,
                   heads, o_proj.T)
    return case("llama", "Llama attention formulas (rotate_half RoPE, repeat_kv GQA, causal)", sess, w, out)


def gptj(n=5, d_model=12, h=2, rotary_dim=4, base=10000.0):
    d = d_model // h
    lin = [torch.randn(d_model, d_model, dtype=DT) * 0.3 for _ in range(4)]  # q, k, v, out: y = x·Wᵀ
    x = torch.randn(n, d_model, dtype=DT)
    q, k, v = ((x @ w.T).view(n, h, d).transpose(0, 1) for w in lin[:3])
    q, k = rope_interleaved(q, base, rotary_dim), rope_interleaved(k, base, rotary_dim)
    w, z = attention(q, k, v, causal=True)
    out = z.transpose(0, 1).reshape(n, d_model) @ lin[3].T
    heads = heads_json(*(split_heads(wt, None, h, d) for wt in lin[:3]))
    rope = {"base": base, "style": "interleaved", "dims": rotary_dim}
    sess = session(config(n, d_model, h, d, d, "causal", rope=rope), x, heads, lin[3].T)
    return case("gptj", "GPT-J attention formulas (interleaved RoPE on 4 of 6 columns, causal)", sess, w, out)


# ---------------------------------------------------------------------------------------------
# Checkpoints for `attnviz import`: each convention's tensor names, stored as F32, F16 or BF16, and
# PyTorch's result computed from the stored values (so the comparison is exact in float64).

ST_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64"}


def write_safetensors(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        t = t.contiguous()
        blob = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": ST_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def stored(t, dtype):
    """The tensor as the file stores it, and those values in float64 for PyTorch's computation."""
    s = t.to(dtype)
    return s, s.to(DT)


def checkpoints(root):
    os.makedirs(root, exist_ok=True)
    expected = {}

    def expect(name, w, out, x):
        np.save(os.path.join(root, name + "-x.npy"), x.numpy())
        expected[name] = {"weights": [rows(h) for h in w], "output": rows(out)}

    # torch: an nn.TransformerEncoder's layer 1 (F32).
    n, d, h = 4, 8, 2
    x = torch.randn(n, d, dtype=DT)
    in_w, in_w64 = stored(torch.randn(3 * d, d) * 0.3, torch.float32)
    in_b, in_b64 = stored(torch.randn(3 * d) * 0.1, torch.float32)
    out_w, out_w64 = stored(torch.randn(d, d) * 0.3, torch.float32)
    out_b, out_b64 = stored(torch.randn(d) * 0.1, torch.float32)
    out, w = F.multi_head_attention_forward(x[:, None, :], x[:, None, :], x[:, None, :], d, h, in_w64, in_b64, None,
                                            None, False, 0.0, out_w64, out_b64, training=False, need_weights=True,
                                            average_attn_weights=False)
    p = "layers.1.self_attn."
    write_safetensors(os.path.join(root, "torch.safetensors"),
                      {p + "in_proj_weight": in_w, p + "in_proj_bias": in_b, p + "out_proj.weight": out_w,
                       p + "out_proj.bias": out_b, "layers.0.linear1.weight": torch.zeros(2, 2)})
    expect("torch", w[0], out[:, 0, :], x)

    # bert: prefixed names, F16, with a word-embedding table for --token-ids.
    n, d, h = 5, 12, 3
    dh = d // h
    ws = [stored(torch.randn(d, d) * 0.3, torch.float16) for _ in range(4)]
    bs = [stored(torch.randn(d) * 0.1, torch.float16) for _ in range(4)]
    table, table64 = stored(torch.randn(30, d), torch.float16)
    ids = [3, 17, 0, 29, 8]
    x = table64[ids]
    q, k, v = ((x @ ws[j][1].T + bs[j][1]).view(n, h, dh).transpose(0, 1) for j in range(3))
    w, z = attention(q, k, v, causal=False)
    out = z.transpose(0, 1).reshape(n, d) @ ws[3][1].T + bs[3][1]
    p = "bert.encoder.layer.0.attention."
    tensors = {"bert.embeddings.word_embeddings.weight": table}
    for j, part in enumerate(["self.query", "self.key", "self.value", "output.dense"]):
        tensors[p + part + ".weight"] = ws[j][0]
        tensors[p + part + ".bias"] = bs[j][0]
    write_safetensors(os.path.join(root, "bert.safetensors"), tensors)
    expect("bert", w, out, x)

    # gpt2: Conv1D weights (x·W), causal, F32.
    n, d, h = 5, 8, 2
    dh = d // h
    ca_w, ca_w64 = stored(torch.randn(d, 3 * d) * 0.3, torch.float32)
    ca_b, ca_b64 = stored(torch.randn(3 * d) * 0.1, torch.float32)
    cp_w, cp_w64 = stored(torch.randn(d, d) * 0.3, torch.float32)
    cp_b, cp_b64 = stored(torch.randn(d) * 0.1, torch.float32)
    x = torch.randn(n, d, dtype=DT)
    q, k, v = (t.view(n, h, dh).transpose(0, 1) for t in (x @ ca_w64 + ca_b64).split(d, dim=1))
    w, z = attention(q, k, v, causal=True)
    out = z.transpose(0, 1).reshape(n, d) @ cp_w64 + cp_b64
    write_safetensors(os.path.join(root, "gpt2.safetensors"),
                      {"h.0.attn.c_attn.weight": ca_w, "h.0.attn.c_attn.bias": ca_b, "h.0.attn.c_proj.weight": cp_w,
                       "h.0.attn.c_proj.bias": cp_b}, {"format": "pt"})
    expect("gpt2", w, out, x)

    # llama: BF16, grouped-query (4 heads, 2 groups), RoPE, head counts in config.json beside it.
    n, d, h, kv, base = 6, 16, 4, 2, 500000.0
    dh = d // h
    q_w, q64 = stored(torch.randn(h * dh, d) * 0.3, torch.bfloat16)
    k_w, k64 = stored(torch.randn(kv * dh, d) * 0.3, torch.bfloat16)
    v_w, v64 = stored(torch.randn(kv * dh, d) * 0.3, torch.bfloat16)
    o_w, o64 = stored(torch.randn(d, h * dh) * 0.3, torch.bfloat16)
    x = torch.randn(n, d, dtype=DT)
    q = rope_half((x @ q64.T).view(n, h, dh).transpose(0, 1), base)
    k = rope_half((x @ k64.T).view(n, kv, dh).transpose(0, 1), base).repeat_interleave(h // kv, dim=0)
    v = (x @ v64.T).view(n, kv, dh).transpose(0, 1).repeat_interleave(h // kv, dim=0)
    w, z = attention(q, k, v, causal=True)
    out = z.transpose(0, 1).reshape(n, d) @ o64.T
    os.makedirs(os.path.join(root, "llama"), exist_ok=True)
    p = "model.layers.0.self_attn."
    write_safetensors(os.path.join(root, "llama", "model.safetensors"),
                      {p + "q_proj.weight": q_w, p + "k_proj.weight": k_w, p + "v_proj.weight": v_w,
                       p + "o_proj.weight": o_w})
    with open(os.path.join(root, "llama", "config.json"), "w") as f:
        json.dump({"num_attention_heads": h, "num_key_value_heads": kv, "rope_theta": base}, f)
    expect("llama", w, out, x)

    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


def main():
    checkpoints(os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkpoints"))
    cases = [torch_mha(), bert(), gpt2(), llama(), gptj(), plus_one()]
    doc = {"generator": "tests/reference/generate.py", "torch": torch.__version__, "dtype": "float64",
           "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch-layers.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote", path, "with", len(cases), "cases")


if __name__ == "__main__":
    main()
