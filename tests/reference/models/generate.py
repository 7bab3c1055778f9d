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
  llama3   Llama with rope_scaling "llama3" (factor 8, L = 4, so every frequency band is hit); F32
  mistral  Llama's blocks with a sliding window of 4 keys, shorter than the sentence; F32
  pythia   gpt_neox: LayerNorms with biases, query_key_value fused per head, RoPE on half of each
           head (rotary_pct 0.5), the parallel residual, gelu, an untied embed_out; F16 in two shards
  neox-sequential  gpt_neox with use_parallel_residual false and rotary_pct 0.25; F32
  gemma    RMSNorm by (1 + w), embeddings × √d_model, GeGLU, head_dim 8 apart from d_model / h,
           one K/V group, tied; BF16
  gemma2   gemma's with post-attention, pre- and post-feed-forward norms, query_pre_attn_scalar 12,
           attention soft-capping at 0.5 and final soft-capping at 2 (both bite), a sliding window of
           4 on the even layers; F32
  phi3     fused qkv_proj and gate_up_proj, partial_rotary_factor 0.5, a sliding window of 6; F32
  olmo2    Llama's projections with RMSNorms of Q and K over all heads (q_norm, k_norm) before RoPE,
           no input norms, post_attention_layernorm and post_feedforward_layernorm on the sublayers'
           outputs before the residual sums (modeling_olmo2.py), 2 K/V groups; F32

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
    """Random weights made in the stored dtype; get() gives a tensor's stored values in float64. The
    models below make theirs with make_weights(dtype), this class unless a caller sets another
    (gradients.py: the stored weights read back, as leaves of autograd)."""

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

    def enter(self, x):
        """The residual stream entering block 0, kept as w.embeddings (gradients.py scales it)."""
        self.embeddings = x
        return x

    def block_input(self, layer, x):
        """The residual stream entering block `layer` (gradients.py patches it)."""
        return x

    def linear(self, x, name, d_in, d_out, std, bias_std=None):
        """x·Wᵀ (+ b) of the nn.Linear `name`: its weight drawn first, then its bias (when bias_std is given)."""
        y = x @ self.normal(name + ".weight", (d_out, d_in), std).T
        return y if bias_std is None else y + self.normal(name + ".bias", (d_out,), bias_std)

    def layer_norm(self, x, name, d, eps, scale="weight", shift="bias"):
        """The nn.LayerNorm `name` (its scale near 1, then its shift) applied to x."""
        return layer_norm(x, self.near_one(name + "." + scale, d), self.normal(name + "." + shift, (d,), 0.1), eps)


make_weights = Weights


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


def rope_partial(t, base, rotary, inv_freq=None):
    """RoPE on the first `rotary` columns of each head (rotate_half over them), the rest passed through;
    inv_freq, when given, replaces the plain frequencies."""
    n = t.shape[-2]
    if inv_freq is None:
        inv_freq = 1.0 / (base ** (torch.arange(0, rotary, 2, dtype=DT) / rotary))
    freqs = torch.outer(torch.arange(n, dtype=DT), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    r, rest = t[..., :rotary], t[..., rotary:]
    x1, x2 = r[..., :rotary // 2], r[..., rotary // 2:]
    return torch.cat((r * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin(), rest), dim=-1)


def llama3_inv_freq(base, dim, factor, low, high, old_len):
    """_compute_llama3_parameters of modeling_rope_utils.py, in float64."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=DT) / dim))
    low_wavelen, high_wavelen = old_len / low, old_len / high
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, scaled)


def attention_full(q, k, v, scale, window=0, softcap=0.0):
    """Causal attention with Gemma 2's order: scores·scaling, soft-cap tanh(s/c)·c, then the causal
    mask and the sliding window (key j hidden from query i when j ≤ i − window)."""
    scores = (q @ k.transpose(-1, -2)) * scale
    if softcap:
        scores = torch.tanh(scores / softcap) * softcap
    n = q.shape[-2]
    i = torch.arange(n).view(-1, 1)
    j = torch.arange(n).view(1, -1)
    hidden = j > i
    if window:
        hidden = hidden | (j <= i - window)
    scores = scores.masked_fill(hidden, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w, w @ v


def rms_norm_untied_head(w, p, x, vocab, d, eps):
    """The final RMSNorm (p + "norm.weight") and an untied lm_head: the hidden state and the last
    position's logits; w.lens set for the logit lens."""
    norm = w.near_one(p + "norm.weight", d)
    hidden = rms_norm(x, norm, eps)
    head = w.normal("lm_head.weight", (vocab, d), 0.3)
    w.lens = lambda stream: rms_norm(stream, norm, eps) @ head.T
    return hidden, hidden[-1] @ head.T


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
    w, p = make_weights(torch.float32), "transformer."
    n = len(ids)
    x = w.normal(p + "wte.weight", (vocab, d), 1.0)[ids] + w.normal(p + "wpe.weight", (positions, d), 0.5)[:n]
    x = w.enter(x)
    out = []
    for L in range(layers):
        x = w.block_input(L, x)
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
    w, p = make_weights(dtype), kind + "."
    scale, shift = ("gamma", "beta") if gamma_beta else ("weight", "bias")

    def ln(x, name):
        return w.layer_norm(x, name, d, eps, scale, shift)

    def linear(x, name, d_in, d_out, std):
        return w.linear(x, name, d_in, d_out, std, 0.1)

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
    x = w.enter(x)
    out = []
    for L in range(layers):
        x = w.block_input(L, x)
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
    w, p = make_weights(dtype), "model."

    def linear(x, name, d_in, d_out, std, bias=False):
        return w.linear(x, name, d_in, d_out, std, 0.2 if bias else None)

    x = w.normal(p + "embed_tokens.weight", (vocab, d), 1.0)[ids]
    x = w.enter(x)
    out = []
    for L in range(layers):
        x = w.block_input(L, x)
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


def llama_windowed(kind, ids, vocab, d=16, layers=2, h=4, kv=2, ff=32, theta=10000.0, eps=1e-5, window=0,
                   rope_scaling=None):
    """Llama's blocks with a sliding window on every layer (Mistral) or Llama 3's RoPE scaling."""
    dh = d // h
    c = {"model_type": kind, "architectures": ["LlamaForCausalLM" if kind == "llama" else "MistralForCausalLM"],
         "vocab_size": vocab, "hidden_size": d, "num_hidden_layers": layers, "num_attention_heads": h,
         "num_key_value_heads": kv, "intermediate_size": ff, "hidden_act": "silu", "max_position_embeddings": 128,
         "rms_norm_eps": eps, "rope_theta": theta, "rope_scaling": rope_scaling, "tie_word_embeddings": False}
    if kind == "mistral":
        c["sliding_window"] = window
    inv = None
    if rope_scaling:
        inv = llama3_inv_freq(theta, dh, rope_scaling["factor"], rope_scaling["low_freq_factor"],
                              rope_scaling["high_freq_factor"], rope_scaling["original_max_position_embeddings"])
    w, p = make_weights(torch.float32), "model."

    def linear(x, name, d_in, d_out, std):
        return w.linear(x, name, d_in, d_out, std)

    x = w.normal(p + "embed_tokens.weight", (vocab, d), 1.0)[ids]
    x = w.enter(x)
    out = []
    for L in range(layers):
        x = w.block_input(L, x)
        b = p + "layers.%d." % L
        a = rms_norm(x, w.near_one(b + "input_layernorm.weight", d), eps)
        s = b + "self_attn."
        q = rope_partial(heads(linear(a, s + "q_proj", d, h * dh, 0.25), h), theta, dh, inv)
        k = rope_partial(heads(linear(a, s + "k_proj", d, kv * dh, 0.25), kv), theta, dh, inv)
        v = heads(linear(a, s + "v_proj", d, kv * dh, 0.4), kv)
        weights, z = attention_full(q, k.repeat_interleave(h // kv, dim=0), v.repeat_interleave(h // kv, dim=0),
                                    1 / math.sqrt(dh), window)
        x = x + linear(merge(z), s + "o_proj", h * dh, d, 0.3)
        m = rms_norm(x, w.near_one(b + "post_attention_layernorm.weight", d), eps)
        g = silu(linear(m, b + "mlp.gate_proj", d, ff, 0.3)) * linear(m, b + "mlp.up_proj", d, ff, 0.3)
        x = x + linear(g, b + "mlp.down_proj", ff, d, 0.3)
        out.append({"attention_input": a, "weights": weights, "output": x})
    hidden, logits = rms_norm_untied_head(w, p, x, vocab, d, eps)
    return c, w, out, hidden, logits


def gpt_neox(ids, vocab, dtype, d=16, layers=2, h=4, ff=48, rotary_pct=0.5, parallel=True, eps=1e-5, base=10000.0):
    """GPT-NeoX (Pythia): query_key_value viewed as (n, h, 3·d_h), q, k, v side by side per head; RoPE
    on the first int(d_h·rotary_pct) columns; x + attn(ln₁x) + mlp(ln₂x), or the two in sequence."""
    dh = d // h
    rot = int(dh * rotary_pct)
    c = {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "vocab_size": vocab, "hidden_size": d,
         "num_hidden_layers": layers, "num_attention_heads": h, "intermediate_size": ff, "hidden_act": "gelu",
         "rotary_pct": rotary_pct, "rotary_emb_base": base, "max_position_embeddings": 64, "layer_norm_eps": eps,
         "use_parallel_residual": parallel, "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 0}
    w, p = make_weights(dtype), "gpt_neox."

    def linear(x, name, d_in, d_out, std):
        return w.linear(x, name, d_in, d_out, std, 0.1)

    def ln(x, name):
        return w.layer_norm(x, name, d, eps)

    x = w.normal(p + "embed_in.weight", (vocab, d), 1.0)[ids]
    x = w.enter(x)
    n = len(ids)
    out = []
    for L in range(layers):
        x = w.block_input(L, x)
        b = p + "layers.%d." % L
        a = ln(x, b + "input_layernorm")
        qkv = linear(a, b + "attention.query_key_value", d, 3 * d, 0.3).view(n, h, 3 * dh).transpose(0, 1)
        q, k, v = qkv[..., :dh], qkv[..., dh:2 * dh], qkv[..., 2 * dh:]
        q, k = rope_partial(q, base, rot), rope_partial(k, base, rot)
        weights, z = attention_full(q, k, v, 1 / math.sqrt(dh))
        attn = linear(merge(z), b + "attention.dense", d, d, 0.3)
        if parallel:
            m = ln(x, b + "post_attention_layernorm")
            f = linear(gelu(linear(m, b + "mlp.dense_h_to_4h", d, ff, 0.3)), b + "mlp.dense_4h_to_h", ff, d, 0.2)
            x = x + attn + f
        else:
            x = x + attn
            m = ln(x, b + "post_attention_layernorm")
            x = x + linear(gelu(linear(m, b + "mlp.dense_h_to_4h", d, ff, 0.3)), b + "mlp.dense_4h_to_h", ff, d, 0.2)
        out.append({"attention_input": a, "weights": weights, "output": x})
    final = w.near_one(p + "final_layer_norm.weight", d), w.normal(p + "final_layer_norm.bias", (d,), 0.1)
    hidden = layer_norm(x, *final, eps)
    head = w.normal("embed_out.weight", (vocab, d), 0.3)
    w.lens = lambda stream: layer_norm(stream, *final, eps) @ head.T
    return c, w, out, hidden, hidden[-1] @ head.T


def gemma_like(kind, ids, vocab, dtype, d=16, layers=2, h=4, kv=1, dh=8, ff=32, eps=1e-6, theta=10000.0,
               query_pre_attn_scalar=None, attn_cap=None, final_cap=None, window=None):
    """Gemma (kind "gemma") or Gemma 2 ("gemma2"): RMSNorm·(1 + w), embeddings × √d, GeGLU with
    gelu_pytorch_tanh, head_dim apart from d / h; Gemma 2's sandwich norms, scale, soft-caps, and the
    sliding window on even layers."""
    g2 = kind == "gemma2"
    c = {"model_type": kind, "architectures": ["GemmaForCausalLM" if not g2 else "Gemma2ForCausalLM"],
         "vocab_size": vocab, "hidden_size": d, "num_hidden_layers": layers, "num_attention_heads": h,
         "num_key_value_heads": kv, "head_dim": dh, "intermediate_size": ff, "hidden_act": "gelu",
         "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 128, "rms_norm_eps": eps,
         "rope_theta": theta, "attention_bias": False, "tie_word_embeddings": True, "bos_token_id": 1}
    if g2:
        c.update({"query_pre_attn_scalar": query_pre_attn_scalar, "attn_logit_softcapping": attn_cap,
                  "final_logit_softcapping": final_cap, "sliding_window": window})
    w, p = make_weights(dtype), "model."

    def norm(x, name):
        return rms_norm(x, 1 + w.normal(name, (d,), 0.2), eps)

    def linear(x, name, d_in, d_out, std):
        return w.linear(x, name, d_in, d_out, std)

    x = w.normal(p + "embed_tokens.weight", (vocab, d), 1.0)[ids] * math.sqrt(d)
    x = w.enter(x)
    scale = (query_pre_attn_scalar if g2 else dh) ** -0.5
    out = []
    for L in range(layers):
        x = w.block_input(L, x)
        b = p + "layers.%d." % L
        a = norm(x, b + "input_layernorm.weight")
        s = b + "self_attn."
        q = rope_half(heads(linear(a, s + "q_proj", d, h * dh, 0.3), h), theta)
        k = rope_half(heads(linear(a, s + "k_proj", d, kv * dh, 0.3), kv), theta)
        v = heads(linear(a, s + "v_proj", d, kv * dh, 0.4), kv)
        weights, z = attention_full(q, k.repeat_interleave(h // kv, dim=0), v.repeat_interleave(h // kv, dim=0),
                                    scale, window if g2 and L % 2 == 0 else 0, attn_cap if g2 else 0)
        attn = linear(merge(z), s + "o_proj", h * dh, d, 0.3)
        if g2:
            x = x + norm(attn, b + "post_attention_layernorm.weight")
            m = norm(x, b + "pre_feedforward_layernorm.weight")
        else:
            x = x + attn
            m = norm(x, b + "post_attention_layernorm.weight")
        f = gelu_new(linear(m, b + "mlp.gate_proj", d, ff, 0.3)) * linear(m, b + "mlp.up_proj", d, ff, 0.3)
        f = linear(f, b + "mlp.down_proj", ff, d, 0.3)
        x = x + (norm(f, b + "post_feedforward_layernorm.weight") if g2 else f)
        out.append({"attention_input": a, "weights": weights, "output": x})
    final = 1 + w.normal(p + "norm.weight", (d,), 0.2)
    hidden = rms_norm(x, final, eps)
    head = w.get(p + "embed_tokens.weight")
    cap = (lambda t: torch.tanh(t / final_cap) * final_cap) if g2 and final_cap else (lambda t: t)
    w.lens = lambda stream: cap(rms_norm(stream, final, eps) @ head.T)
    return c, w, out, hidden, cap(hidden[-1] @ head.T)


def phi3(ids, vocab, d=16, layers=2, h=4, kv=2, ff=32, eps=1e-5, theta=10000.0, partial=0.5, window=6):
    """Phi-3: qkv_proj rows [q; k; v], gate_up_proj rows [gate; up], RoPE on the first half of each head."""
    dh = d // h
    c = {"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "vocab_size": vocab, "hidden_size": d,
         "num_hidden_layers": layers, "num_attention_heads": h, "num_key_value_heads": kv, "intermediate_size": ff,
         "hidden_act": "silu", "max_position_embeddings": 128, "original_max_position_embeddings": 128,
         "rms_norm_eps": eps, "rope_theta": theta, "rope_scaling": None, "partial_rotary_factor": partial,
         "sliding_window": window, "tie_word_embeddings": False, "bos_token_id": 1}
    w, p = make_weights(torch.float32), "model."
    x = w.normal(p + "embed_tokens.weight", (vocab, d), 1.0)[ids]
    x = w.enter(x)
    out = []
    rot = int(dh * partial)
    for L in range(layers):
        x = w.block_input(L, x)
        b = p + "layers.%d." % L
        a = rms_norm(x, w.near_one(b + "input_layernorm.weight", d), eps)
        s = b + "self_attn."
        qkv = w.linear(a, s + "qkv_proj", d, (h + 2 * kv) * dh, 0.25)
        q, k, v = qkv[:, :h * dh], qkv[:, h * dh:(h + kv) * dh], qkv[:, (h + kv) * dh:]
        q, k, v = rope_partial(heads(q, h), theta, rot), rope_partial(heads(k, kv), theta, rot), heads(v, kv)
        weights, z = attention_full(q, k.repeat_interleave(h // kv, dim=0), v.repeat_interleave(h // kv, dim=0),
                                    1 / math.sqrt(dh), window)
        x = x + w.linear(merge(z), s + "o_proj", h * dh, d, 0.3)
        m = rms_norm(x, w.near_one(b + "post_attention_layernorm.weight", d), eps)
        gu = w.linear(m, b + "mlp.gate_up_proj", d, 2 * ff, 0.3)
        x = x + w.linear(silu(gu[:, :ff]) * gu[:, ff:], b + "mlp.down_proj", ff, d, 0.3)
        out.append({"attention_input": a, "weights": weights, "output": x})
    hidden, logits = rms_norm_untied_head(w, p, x, vocab, d, eps)
    return c, w, out, hidden, logits


def olmo2(ids, vocab, d=16, layers=2, h=4, kv=2, ff=32, eps=1e-6, theta=500000.0):
    """OLMo 2: q_norm(q_proj(x)) and k_norm(k_proj(x)) over every head's columns, then RoPE; the
    attention's and the MLP's outputs normed before their residual sums; no norm before them."""
    dh = d // h
    c = {"model_type": "olmo2", "architectures": ["Olmo2ForCausalLM"], "vocab_size": vocab, "hidden_size": d,
         "num_hidden_layers": layers, "num_attention_heads": h, "num_key_value_heads": kv, "intermediate_size": ff,
         "hidden_act": "silu", "max_position_embeddings": 128, "rms_norm_eps": eps, "rope_theta": theta,
         "rope_scaling": None, "attention_bias": False, "attention_dropout": 0.0, "tie_word_embeddings": False,
         "bos_token_id": 1}
    w, p = make_weights(torch.float32), "model."
    x = w.normal(p + "embed_tokens.weight", (vocab, d), 1.0)[ids]
    x = w.enter(x)
    out = []
    for L in range(layers):
        x = w.block_input(L, x)
        b = p + "layers.%d." % L
        s = b + "self_attn."
        a = x  # the attention's input: the stream itself
        # Q's rows far from RMS 1 (std 0.8), so that the norm changes them
        q = rms_norm(w.linear(a, s + "q_proj", d, h * dh, 0.8), w.near_one(s + "q_norm.weight", h * dh), eps)
        k = rms_norm(w.linear(a, s + "k_proj", d, kv * dh, 0.25), w.near_one(s + "k_norm.weight", kv * dh), eps)
        v = heads(w.linear(a, s + "v_proj", d, kv * dh, 0.4), kv)
        q, k = rope_half(heads(q, h), theta), rope_half(heads(k, kv), theta)
        weights, z = attention(q, k.repeat_interleave(h // kv, dim=0), v.repeat_interleave(h // kv, dim=0), True)
        attended = w.linear(merge(z), s + "o_proj", h * dh, d, 0.3)
        x = x + rms_norm(attended, w.near_one(b + "post_attention_layernorm.weight", d), eps)
        g = silu(w.linear(x, b + "mlp.gate_proj", d, ff, 0.3)) * w.linear(x, b + "mlp.up_proj", d, ff, 0.3)
        x = x + rms_norm(w.linear(g, b + "mlp.down_proj", ff, d, 0.3),
                         w.near_one(b + "post_feedforward_layernorm.weight", d), eps)
        out.append({"attention_input": a, "weights": weights, "output": x})
    hidden, logits = rms_norm_untied_head(w, p, x, vocab, d, eps)
    return c, w, out, hidden, logits


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


# The call that makes each folder: name → (tokenizer, make(ids, vocab), shards). The first five are
# made one after another from the seed set above; each later family from a seed of its own.
MODELS = {
    "gpt2": ("gpt2-tiny", lambda ids, v: gpt2(ids, v), None),
    "bert": ("bert-tiny", lambda ids, v: bert_like("bert", ids, v, torch.float32, gamma_beta=True), None),
    "roberta": ("roberta-tiny", lambda ids, v: bert_like("roberta", ids, v, torch.float16, h=4, types=1, pad=1,
                                                         eps=1e-5), None),
    # Shard 1: the embeddings, layer 0, layer 1's norm and q_proj; shard 2 the rest.
    "llama": ("llama2-tiny", lambda ids, v: llama_like("llama", ids, v, torch.bfloat16, layers=3), [12, None]),
    "qwen2": ("qwen2-tiny", lambda ids, v: llama_like("qwen2", ids, v, torch.float32, kv=1, theta=1e6, eps=1e-6,
                                                      qkv_bias=True, tied=True), None),
    "llama3": ("llama2-tiny", lambda ids, v: llama_windowed(
        "llama", ids, v, rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                       "high_freq_factor": 4.0, "original_max_position_embeddings": 4}), None),
    "mistral": ("llama2-tiny", lambda ids, v: llama_windowed("mistral", ids, v, window=4), None),
    "pythia": ("gpt2-tiny", lambda ids, v: gpt_neox(ids, v, torch.float16), [9, None]),
    "neox-sequential": ("gpt2-tiny", lambda ids, v: gpt_neox(ids, v, torch.float32, d=32, rotary_pct=0.25,
                                                             parallel=False), None),
    "gemma": ("llama2-tiny", lambda ids, v: gemma_like("gemma", ids, v, torch.bfloat16), None),
    "gemma2": ("llama2-tiny", lambda ids, v: gemma_like("gemma2", ids, v, torch.float32, layers=3,
                                                        query_pre_attn_scalar=12, attn_cap=0.5, final_cap=2.0,
                                                        window=4), None),
    "phi3": ("llama2-tiny", lambda ids, v: phi3(ids, v), None),
    "olmo2": ("llama2-tiny", lambda ids, v: olmo2(ids, v), None),
}
FIRST = ["gpt2", "bert", "roberta", "llama", "qwen2"]
TEXT = "Hello world"


def make(name):
    """The folder's model made: (config, weights, layers, hidden, logits)."""
    tokenizer, call, _ = MODELS[name]
    return call(fixture_ids(tokenizer, TEXT), vocab_size(tokenizer))


def main(only=None):
    if only:  # the families added later, each from a seed of its own (the folders above stay as they are)
        for seed, name in enumerate(n for n in MODELS if n not in FIRST):
            if name in only:
                torch.manual_seed(20261129 + seed)
                write(name, MODELS[name][0], TEXT, make(name), MODELS[name][2])
        return
    for name in FIRST:
        write(name, MODELS[name][0], TEXT, make(name), MODELS[name][2])


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
