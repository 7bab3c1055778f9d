#!/usr/bin/python3
"""Writes circuits.json beside the tiny models of tests/reference/models (made by generate.py): the
token-space circuits and layer 0's position split (core/model/circuits.hpp), computed here with
numpy in float64 from the stored weights and the definitions, for model_tests to compare with.

Run with Debian's python3 and python3-numpy:  /usr/bin/python3 tests/reference/models/circuits.py

  token rows     x_t = N(E_t): the embedding row alone through the norm in front of the layer's
                 attention (GPT-2's ln_1, Llama's input_layernorm; BERT's embeddings LayerNorm)
  qk             x_a·W_Q·W_Kᵀ·x_bᵀ for the text's distinct tokens a (query), b (key); top_keys: the
                 five largest of x_a·W_Q·W_Kᵀ·N(E)ᵀ over the vocabulary (equal values: smaller id first)
  top_outputs    the five largest of x_t·W_V·W_O⁽ʰ⁾·W_Uᵀ (W_U: the LM head, else the embeddings)
  position_split layer 0 of GPT-2 and BERT: LN(e + p) = C + P + β with C, P each part centred,
                 divided by the sum's σ and times γ; scores_raw's content·content, content·position,
                 position·content, position·position and bias parts (unscaled, before the mask)
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = 5


def read_safetensors(folder):
    """Every tensor of a folder's model.safetensors or shards, as float64 arrays."""
    files = [f for f in sorted(os.listdir(folder)) if f.endswith(".safetensors")]
    out = {}
    for name in files:
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        size = struct.unpack("<Q", data[:8])[0]
        header = json.loads(data[8:8 + size])
        body = data[8 + size:]
        for key, info in header.items():
            if key == "__metadata__":
                continue
            a, b = info["data_offsets"]
            raw = body[a:b]
            if info["dtype"] == "F32":
                v = np.frombuffer(raw, dtype="<f4")
            elif info["dtype"] == "F16":
                v = np.frombuffer(raw, dtype="<f2")
            elif info["dtype"] == "BF16":
                v = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
            else:
                raise ValueError(info["dtype"])
            out[key] = v.astype(np.float64).reshape(info["shape"])
    return out


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    return w * (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps))


def top(values):
    order = sorted(range(len(values)), key=lambda i: (-values[i], i))[:TOP]
    return [[i, float(values[i])] for i in order]


def model_of(name, w, c):
    """Per layer: the norm in front of its attention (a function of rows), and per head W_Q, W_K, W_V,
    W_O⁽ʰ⁾ as x·W; the token embeddings and W_U."""
    layers = []
    if name == "gpt2":
        d, h, L, p = c["n_embd"], c["n_head"], c["n_layer"], "transformer."
        for l in range(L):
            b = p + "h.%d." % l
            qkv, o = w[b + "attn.c_attn.weight"], w[b + "attn.c_proj.weight"]
            dk = d // h
            norm = (lambda x, b=b: layer_norm(x, w[b + "ln_1.weight"], w[b + "ln_1.bias"], c["layer_norm_epsilon"]))
            heads = [(qkv[:, i * dk:(i + 1) * dk], qkv[:, d + i * dk:d + (i + 1) * dk],
                      qkv[:, 2 * d + i * dk:2 * d + (i + 1) * dk], o[i * dk:(i + 1) * dk]) for i in range(h)]
            layers.append((norm, heads))
        return layers, w[p + "wte.weight"], w[p + "wte.weight"]
    if name == "bert":
        d, h, L, p = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"], "bert."
        e = p + "embeddings."
        for l in range(L):
            b = p + "encoder.layer.%d.attention." % l
            q, k, v = (w[b + "self." + s + ".weight"].T for s in ("query", "key", "value"))
            o = w[b + "output.dense.weight"].T
            dk = d // h
            norm = (lambda x: layer_norm(x, w[e + "LayerNorm.gamma"], w[e + "LayerNorm.beta"], c["layer_norm_eps"]))
            heads = [(q[:, i * dk:(i + 1) * dk], k[:, i * dk:(i + 1) * dk], v[:, i * dk:(i + 1) * dk],
                      o[i * dk:(i + 1) * dk]) for i in range(h)]
            layers.append((norm, heads))
        return layers, w[e + "word_embeddings.weight"], w[e + "word_embeddings.weight"]
    # llama: K/V groups, RMSNorm, an untied lm_head
    d, h, kv, L, p = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["num_hidden_layers"],
                      "model.")
    dk = d // h
    for l in range(L):
        b = p + "layers.%d." % l
        q, k, v, o = (w[b + "self_attn." + s + "_proj.weight"].T for s in "qkvo")
        norm = (lambda x, b=b: rms_norm(x, w[b + "input_layernorm.weight"], c["rms_norm_eps"]))
        g = h // kv
        heads = [(q[:, i * dk:(i + 1) * dk], k[:, (i // g) * dk:(i // g + 1) * dk], v[:, (i // g) * dk:(i // g + 1) * dk],
                  o[i * dk:(i + 1) * dk]) for i in range(h)]
        layers.append((norm, heads))
    return layers, w[p + "embed_tokens.weight"], w["lm_head.weight"]


def token_circuits(layers, E, W_U, ids):
    tokens = list(dict.fromkeys(ids))
    out = []
    for norm, heads in layers:
        X, NE = norm(E[tokens]), norm(E)  # the candidates' rows and every token's
        layer = {"tokens": tokens, "heads": []}
        for W_Q, W_K, W_V, W_Oh in heads:
            qk = np.zeros((len(tokens), len(tokens)))
            for a in range(len(tokens)):  # a direct loop over the pairs
                for b in range(len(tokens)):
                    qk[a, b] = X[a] @ W_Q @ W_K.T @ X[b]
            keys = (X @ W_Q) @ (NE @ W_K).T  # k × vocab, a row of W_E·W_QK·W_Eᵀ per candidate
            logits = X @ (W_V @ W_Oh) @ W_U.T  # k × vocab
            layer["heads"].append({"qk": qk.tolist(), "top_keys": [top(r) for r in keys],
                                   "top_outputs": [top(r) for r in logits]})
        out.append(layer)
    return out


def position_split(name, w, c, ids, heads):
    if name == "gpt2":
        p = "transformer."
        e, pos = w[p + "wte.weight"][ids], w[p + "wpe.weight"][:len(ids)]
        g, beta, eps = w[p + "h.0.ln_1.weight"], w[p + "h.0.ln_1.bias"], c["layer_norm_epsilon"]
        b_q = w[p + "h.0.attn.c_attn.bias"]
    else:
        p = "bert.embeddings."
        e = w[p + "word_embeddings.weight"][ids] + w[p + "token_type_embeddings.weight"][0]
        pos = w[p + "position_embeddings.weight"][:len(ids)]
        g, beta, eps = w[p + "LayerNorm.gamma"], w[p + "LayerNorm.beta"], c["layer_norm_eps"]
        b = "bert.encoder.layer.0.attention.self."
        b_q = np.concatenate([w[b + "query.bias"], w[b + "key.bias"], w[b + "value.bias"]])
    x = e + pos
    sigma = np.sqrt(x.var(-1, keepdims=True) + eps)
    C = g * (e - e.mean(-1, keepdims=True)) / sigma
    P = g * (pos - pos.mean(-1, keepdims=True)) / sigma
    assert np.allclose(C + P + beta, layer_norm(x, g, beta, eps), atol=1e-12)
    d, out = x.shape[1], []
    dk = d // len(heads)
    for i, (W_Q, W_K, _, _) in enumerate(heads):
        bq, bk = b_q[i * dk:(i + 1) * dk], b_q[d + i * dk:d + (i + 1) * dk]
        B_Q, B_K = beta @ W_Q + bq, beta @ W_K + bk
        part = {"content_content": (C @ W_Q) @ (C @ W_K).T, "content_position": (C @ W_Q) @ (P @ W_K).T,
                "position_content": (P @ W_Q) @ (C @ W_K).T, "position_position": (P @ W_Q) @ (P @ W_K).T}
        part["bias"] = ((C + P) @ W_Q @ B_K)[:, None] + (B_Q @ ((C + P) @ W_K).T)[None, :] + B_Q @ B_K
        out.append({k: v.tolist() for k, v in part.items()})
    return out


def main():
    for name in ("gpt2", "bert", "llama"):
        folder = os.path.join(HERE, name)
        with open(os.path.join(folder, "config.json")) as f:
            c = json.load(f)
        with open(os.path.join(folder, "expected.json")) as f:
            ids = json.load(f)["token_ids"]
        w = read_safetensors(folder)
        layers, E, W_U = model_of(name, w, c)
        out = {"generator": "tests/reference/models/circuits.py", "numpy": np.__version__, "token_ids": ids,
               "top": TOP, "token_circuits": token_circuits(layers, E, W_U, ids)}
        if name != "llama":
            out["position_split"] = position_split(name, w, c, ids, layers[0][1])
        with open(os.path.join(folder, "circuits.json"), "w") as f:
            json.dump(out, f)
            f.write("\n")
        print("wrote", os.path.join(folder, "circuits.json"))


if __name__ == "__main__":
    main()
