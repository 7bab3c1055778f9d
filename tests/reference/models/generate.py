#!/usr/bin/python3
"""Writes tests/reference/models/: tiny random models in Hugging Face's folder layout, and the output
of each one's whole forward pass computed here in float64 from the architecture's definition, for
the C++ tests to compare attnviz's model runtime with (without needing PyTorch themselves).

Run with Debian's python3 and python3-torch:  /usr/bin/python3 tests/reference/models/generate.py

The transformers package is not used (Debian does not have it): each forward below is written from
the model's definition, with PyTorch's tensors in float64:
  gpt2     learned positions, pre-norm blocks (ln_1, ln_2), Conv1D weights (y = x·W + b), gelu_new,
           causal, final ln_f, the LM head tied to wte; stored F32 under "transformer."
  bert     word + position + token type 0 embeddings and their LayerNorm, post-norm blocks, nn.Linear
           weights (y = x·Wᵀ + b), gelu (erf); stored F32 under "bert.", LayerNorms as gamma/beta
           (the names of the original BERT checkpoints)
  roberta  BERT's blocks, positions from pad_token_id + 1; stored F16 under "roberta."
  llama    RMSNorm, rotate_half RoPE, grouped-query attention (4 heads, 2 K/V groups), SwiGLU MLP,
           untied lm_head; stored BF16 in two shards listed by model.safetensors.index.json (layer 1's
           attention split across them)
  qwen2    Llama's blocks with q/k/v biases, one K/V group, rope_theta 10⁶, tied embeddings; F32

Each folder holds config.json, the weights, tokenizer.json (a link to a tokenizer of
tests/model/data) and expected.json: the token ids (Hugging Face's ids for the text, from the
tokenizer fixtures of tests/model/fixtures), per layer the attention's input and weights and the
block's output, the hidden state, and for the causal LMs the last position's logits and the ten
most likely next tokens.
"""
import json
import math
import os
import struct

import torch

torch.manual_seed(20261125)
DT = torch.float64
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(os.path.dirname(HERE))
ST_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def nested(t):
    """A tensor as nested lists of Python floats (repr is the shortest exact form)."""
    if t.dim() == 1:
        return [float(v) for v in t.tolist()]
    return [nested(r) for r in t]


def safetensors_bytes(tensors):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        t = t.contiguous()
        blob = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": ST_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


class Weights:
    """Random weights made in the stored dtype; get() gives a tensor's stored values in float64."""

    def __init__(self, dtype):
        self.dtype, self.stored = dtype, {}

    def add(self, name, t):
        self.stored[name] = t.to(self.dtype)
        return self.get(name)

    def normal(self, name, shape, std):
        return self.add(name, torch.randn(*shape, dtype=DT) * std)

    def near_one(self, name, d):
        return self.add(name, 1 + 0.2 * torch.randn(d, dtype=DT))

    def get(self, name):
        return self.stored[name].to(DT)


# ---------------------------------------------------------------------------------------------
# The steps, from their definitions

def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)  # biased, as nn.LayerNorm
    return (x - mean) / torch.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    return w * (x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps))


def gelu(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def gelu_new(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x * torch.sigmoid(x)


def attention(q, k, v, causal):
    """q: h × n × d_k, k and v: h × n × d (K/V already repeated per head). Weights and Z per head."""
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w, w @ v


def heads(t, h):
    """n × h·d as h × n × d."""
    n = t.shape[0]
    return t.view(n, h, -1).transpose(0, 1)


def merge(z):
    """h × n × d as n × h·d."""
    return z.transpose(0, 1).reshape(z.shape[1], -1)


def rope_half(t, base):
    """Llama's rotary embedding: cos and sin of cat(freqs, freqs), t·cos + rotate_half(t)·sin."""
    n, dim = t.shape[-2], t.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=DT) / dim))
    freqs = torch.outer(torch.arange(n, dtype=DT), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    x1, x2 = t[..., :dim // 2], t[..., dim // 2:]
    return t * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


def top(logits, k=10):
    p = torch.softmax(logits, dim=-1)
    order = sorted(range(len(p)), key=lambda i: (-float(p[i]), i))[:k]
    return [{"id": i, "p": float(p[i])} for i in order]


# ---------------------------------------------------------------------------------------------
# The models

def gpt2(ids, vocab, d=16, layers=2, h=4, positions=32, eps=1e-5):
    c = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": vocab, "n_embd": d,
         "n_layer": layers, "n_head": h, "n_positions": positions, "n_ctx": positions, "n_inner": None,
         "activation_function": "gelu_new", "layer_norm_epsilon": eps, "bos_token_id": vocab - 1,
         "eos_token_id": vocab - 1}
    w, p = Weights(torch.float32), "transformer."
    n = len(ids)
    x = w.normal(p + "wte.weight", (vocab, d), 1.0)[ids] + w.normal(p + "wpe.weight", (positions, d), 0.5)[:n]
    w.embeddings = x
    out = []
    for L in range(layers):
        b = p + "h.%d." % L
        a = layer_norm(x, w.near_one(b + "ln_1.weight", d), w.normal(b + "ln_1.bias", (d,), 0.1), eps)
        qkv = a @ w.normal(b + "attn.c_attn.weight", (d, 3 * d), 0.25) + w.normal(b + "attn.c_attn.bias", (3 * d,), 0.1)
        q, k, v = (heads(t, h) for t in qkv.split(d, dim=1))
        weights, z = attention(q, k, v, causal=True)
        x = x + merge(z) @ w.normal(b + "attn.c_proj.weight", (d, d), 0.3) + w.normal(b + "attn.c_proj.bias", (d,), 0.1)
        m = layer_norm(x, w.near_one(b + "ln_2.weight", d), w.normal(b + "ln_2.bias", (d,), 0.1), eps)
        f = gelu_new(m @ w.normal(b + "mlp.c_fc.weight", (d, 4 * d), 0.3) + w.normal(b + "mlp.c_fc.bias", (4 * d,), 0.1))
        x = x + f @ w.normal(b + "mlp.c_proj.weight", (4 * d, d), 0.2) + w.normal(b + "mlp.c_proj.bias", (d,), 0.1)
        out.append({"attention_input": a, "weights": weights, "output": x})
    ln_f = w.near_one(p + "ln_f.weight", d), w.normal(p + "ln_f.bias", (d,), 0.1)
    hidden = layer_norm(x, *ln_f, eps)
    w.lens = lambda stream: layer_norm(stream, *ln_f, eps) @ w.get(p + "wte.weight").T
    logits = hidden[-1] @ w.get(p + "wte.weight").T  # tied: no lm_head.weight is stored
    return c, w, out, hidden, logits


def bert_like(kind, ids, vocab, dtype, d=16, layers=2, h=2, ff=32, positions=24, types=2, pad=0, eps=1e-12,
              gamma_beta=False):
    """BERT (kind "bert") or RoBERTa (kind "roberta"): the same blocks, RoBERTa's positions after pad_token_id."""
    c = {"model_type": kind, "architectures": ["BertModel" if kind == "bert" else "RobertaModel"],
         "vocab_size": vocab, "hidden_size": d, "num_hidden_layers": layers, "num_attention_heads": h,
         "intermediate_size": ff, "hidden_act": "gelu", "max_position_embeddings": positions,
         "type_vocab_size": types, "layer_norm_eps": eps, "pad_token_id": pad,
         "position_embedding_type": "absolute"}
    w, p = Weights(dtype), kind + "."
    scale, shift = ("gamma", "beta") if gamma_beta else ("weight", "bias")

    def ln(x, name):
        return layer_norm(x, w.near_one(name + "." + scale, d), w.normal(name + "." + shift, (d,), 0.1), eps)

    def linear(x, name, d_in, d_out, std):
        return x @ w.normal(name + ".weight", (d_out, d_in), std).T + w.normal(name + ".bias", (d_out,), 0.1)

    t = torch.tensor(ids)
    if kind == "roberta":
        keep = (t != pad).long()
        pos = torch.cumsum(keep, 0) * keep + pad
    else:
        pos = torch.arange(len(ids))
    e = p + "embeddings."
    x = (w.normal(e + "word_embeddings.weight", (vocab, d), 1.0)[t] +
         w.normal(e + "position_embeddings.weight", (positions, d), 0.5)[pos] +
         w.normal(e + "token_type_embeddings.weight", (types, d), 0.5)[0])
    x = ln(x, e + "LayerNorm")
    w.embeddings = x
    out = []
    for L in range(layers):
        b = p + "encoder.layer.%d." % L
        q, k, v = (heads(linear(x, b + "attention.self." + s, d, d, 0.3), h) for s in ("query", "key", "value"))
        weights, z = attention(q, k, v, causal=False)
        a = ln(linear(merge(z), b + "attention.output.dense", d, d, 0.3) + x, b + "attention.output.LayerNorm")
        f = gelu(linear(a, b + "intermediate.dense", d, ff, 0.3))
        out.append({"attention_input": x, "weights": weights})
        x = ln(linear(f, b + "output.dense", ff, d, 0.3) + a, b + "output.LayerNorm")
        out[-1]["output"] = x
    return c, w, out, x, None


def llama_like(kind, ids, vocab, dtype, d=16, layers=2, h=4, kv=2, ff=32, theta=10000.0, eps=1e-5, qkv_bias=False,
               tied=False):
    """Llama (kind "llama") or Qwen2 (kind "qwen2", q/k/v biases): RMSNorm, RoPE, K/V groups, SwiGLU."""
    dh = d // h
    c = {"model_type": kind, "architectures": ["LlamaForCausalLM" if kind == "llama" else "Qwen2ForCausalLM"],
         "vocab_size": vocab, "hidden_size": d, "num_hidden_layers": layers, "num_attention_heads": h,
         "num_key_value_heads": kv, "intermediate_size": ff, "hidden_act": "silu", "max_position_embeddings": 128,
         "rms_norm_eps": eps, "rope_theta": theta, "rope_scaling": None, "tie_word_embeddings": tied,
         "bos_token_id": 1}
    if kind == "llama":
        c.update({"attention_bias": False, "mlp_bias": False})
    else:
        c.update({"use_sliding_window": False, "sliding_window": 4096})
    w, p = Weights(dtype), "model."

    def linear(x, name, d_in, d_out, std, bias=False):
        y = x @ w.normal(name + ".weight", (d_out, d_in), std).T
        return y + w.normal(name + ".bias", (d_out,), 0.2) if bias else y

    x = w.normal(p + "embed_tokens.weight", (vocab, d), 1.0)[ids]
    w.embeddings = x
    out = []
    for L in range(layers):
        b = p + "layers.%d." % L
        a = rms_norm(x, w.near_one(b + "input_layernorm.weight", d), eps)
        s = b + "self_attn."
        q = rope_half(heads(linear(a, s + "q_proj", d, h * dh, 0.25, qkv_bias), h), theta)
        k = rope_half(heads(linear(a, s + "k_proj", d, kv * dh, 0.25, qkv_bias), kv), theta)
        v = heads(linear(a, s + "v_proj", d, kv * dh, 0.4, qkv_bias), kv)
        weights, z = attention(q, k.repeat_interleave(h // kv, dim=0), v.repeat_interleave(h // kv, dim=0), True)
        x = x + linear(merge(z), s + "o_proj", h * dh, d, 0.3)
        m = rms_norm(x, w.near_one(b + "post_attention_layernorm.weight", d), eps)
        g = silu(linear(m, b + "mlp.gate_proj", d, ff, 0.3)) * linear(m, b + "mlp.up_proj", d, ff, 0.3)
        x = x + linear(g, b + "mlp.down_proj", ff, d, 0.3)
        out.append({"attention_input": a, "weights": weights, "output": x})
    norm = w.near_one(p + "norm.weight", d)
    hidden = rms_norm(x, norm, eps)
    head = w.get(p + "embed_tokens.weight") if tied else w.normal("lm_head.weight", (vocab, d), 0.3)
    w.lens = lambda stream: rms_norm(stream, norm, eps) @ head.T
    return c, w, out, hidden, hidden[-1] @ head.T


# ---------------------------------------------------------------------------------------------
# What the model view shows beside the attention (core/model/analysis.hpp), from their definitions

def analysis(w, layers):
    """Residual norms and attention rollout of every model; the logit lens of those with an LM head."""
    streams = [w.embeddings] + [layer["output"] for layer in layers]  # entering each block, then the last output
    out = {"residual_norms": nested(torch.stack([s.norm(dim=-1) for s in streams]))}
    n = w.embeddings.shape[0]
    rollout, r = [], torch.eye(n, dtype=DT)
    for layer in layers:  # Abnar & Zuidema 2020: ½·mean_h A + ½·I, rows renormalised, multiplied up
        a = 0.5 * layer["weights"].mean(dim=0) + 0.5 * torch.eye(n, dtype=DT)
        r = (a / a.sum(dim=-1, keepdim=True)) @ r
        rollout.append(nested(r))
    out["rollout"] = rollout
    if hasattr(w, "lens"):  # nostalgebraist 2020: each stream through the final norm and the LM head
        p = [torch.softmax(w.lens(s), dim=-1) for s in streams]
        out["lens_ids"] = [[int(torch.argmax(row)) for row in q] for q in p]
        out["lens_p"] = [[float(row.max()) for row in q] for q in p]
    return out


# ---------------------------------------------------------------------------------------------
# Writing the folders

def fixture_ids(tokenizer, text):
    with open(os.path.join(TESTS, "model", "fixtures", tokenizer + ".json")) as f:
        for c in json.load(f)["cases"]:
            if c["text"] == text and c["add_special"]:
                return c["ids"]
    raise KeyError(text)


def vocab_size(tokenizer):
    with open(os.path.join(TESTS, "model", "data", tokenizer, "tokenizer.json")) as f:
        t = json.load(f)
    return 1 + max(list(t["model"]["vocab"].values()) + [a["id"] for a in t["added_tokens"]])


def write(name, tokenizer, text, made, shards=None):
    config, w, layers, hidden, logits = made
    folder = os.path.join(HERE, name)
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        os.remove(os.path.join(folder, old))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    if shards is None:
        with open(os.path.join(folder, "model.safetensors"), "wb") as f:
            f.write(safetensors_bytes(w.stored))
    else:  # shards: how many of the tensors (in the order they were made) each shard holds (None: the rest)
        names, index, at = list(w.stored), {}, 0
        for s, count in enumerate(shards):
            file = "model-%05d-of-%05d.safetensors" % (s + 1, len(shards))
            part = {n: w.stored[n] for n in (names[at:at + count] if count else names[at:])}
            at += count or 0
            with open(os.path.join(folder, file), "wb") as f:
                f.write(safetensors_bytes(part))
            index.update({n: file for n in part})
        total = sum(t.numel() * t.element_size() for t in w.stored.values())
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(index.items()))}, f, indent=2)
            f.write("\n")
    os.symlink(os.path.join("..", "..", "..", "model", "data", tokenizer, "tokenizer.json"),
               os.path.join(folder, "tokenizer.json"))
    expected = {"generator": "tests/reference/models/generate.py", "torch": torch.__version__, "dtype": "float64",
                "model_type": config["model_type"], "text": text, "token_ids": fixture_ids(tokenizer, text),
                "layers": [{k: nested(v) for k, v in layer.items()} for layer in layers], "hidden": nested(hidden)}
    if logits is not None:
        expected["logits_last"] = nested(logits)
        expected["top"] = top(logits)
    expected.update(analysis(w, layers))
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f)
        f.write("\n")
    print("wrote", folder)


def main():
    text = "Hello world"
    write("gpt2", "gpt2-tiny", text, gpt2(fixture_ids("gpt2-tiny", text), vocab_size("gpt2-tiny")))
    write("bert", "bert-tiny", text,
          bert_like("bert", fixture_ids("bert-tiny", text), vocab_size("bert-tiny"), torch.float32, gamma_beta=True))
    write("roberta", "roberta-tiny", text,
          bert_like("roberta", fixture_ids("roberta-tiny", text), vocab_size("roberta-tiny"), torch.float16, h=4,
                    types=1, pad=1, eps=1e-5))
    # Shard 1: the embeddings, layer 0, layer 1's norm and q_proj; shard 2 the rest.
    write("llama", "llama2-tiny", text,
          llama_like("llama", fixture_ids("llama2-tiny", text), vocab_size("llama2-tiny"), torch.bfloat16,
                     layers=3), [12, None])
    write("qwen2", "qwen2-tiny", text,
          llama_like("qwen2", fixture_ids("qwen2-tiny", text), vocab_size("qwen2-tiny"), torch.float32, kv=1,
                     theta=1e6, eps=1e-6, qkv_bias=True, tied=True))


if __name__ == "__main__":
    main()
