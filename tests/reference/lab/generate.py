#!/usr/bin/python3
"""Writes tests/reference/lab/: random sessions (case-*.json) and expected.json, the attention lab's
analyses of every head computed here with NumPy from the definitions, independently of attnviz, for
the `attnviz analyze` test to compare with.

Run with Debian's python3 and python3-numpy:  /usr/bin/python3 tests/reference/lab/generate.py

Per head h (W_O⁽ʰ⁾ = rows h·d_v … (h+1)·d_v − 1 of W_O; a K/V group's heads use its first head's
W_K, W_V, b_K, b_V):
  norm_weighted   α_ij · ‖V_j · W_O⁽ʰ⁾‖ (‖V_j‖ without W_O)
  qk_singular     the first d_k singular values of W_Q · W_Kᵀ
  ov_singular     the first d_v singular values of W_V · W_O⁽ʰ⁾; ov_eigenvalues, its eigenvalues;
                  copying = trace / Σ|λ|
  ablation_zero   ‖output(Z⁽ʰ⁾ = 0) − output‖_F; ablation_mean the same with Z⁽ʰ⁾'s mean row
  sink_key        argmax_j of the mean weight over queries; sink_share: queries with weight ≥ 0.3 on it
  rope_pairs      Q_rot[:, pair] · K_rot[:, pair]ᵀ per rotated pair; rope_rest, the other columns'
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261125)

CASES = [
    {"n": 5, "d_model": 6, "heads": 2, "d_k": 3, "d_v": 3, "mask": "causal"},
    {"n": 6, "d_model": 8, "heads": 4, "d_k": 4, "d_v": 2, "mask": "causal", "biases": True, "kv_heads": 2,
     "rope": {"base": 10000, "style": "half"}},
    {"n": 4, "d_model": 6, "heads": 2, "d_k": 4, "d_v": 3, "mask": "custom", "biases": True,
     "rope": {"base": 500, "style": "interleaved", "dims": 2}},
    {"n": 5, "d_model": 4, "heads": 2, "d_k": 2, "d_v": 2, "mask": "none", "output_projection": False,
     "rope": {"base": 10000, "style": "half"}},
    {"n": 7, "d_model": 5, "heads": 1, "d_k": 5, "d_v": 5, "mask": "none", "biases": True, "scale": 2.5},
]


def make_session(spec):
    c = {"n": spec["n"], "d_model": spec["d_model"], "heads": spec["heads"], "d_k": spec["d_k"], "d_v": spec["d_v"],
         "output_projection": spec.get("output_projection", True), "mask": spec["mask"],
         "scale": spec.get("scale", "sqrt_dk")}
    for key in ("biases", "kv_heads", "rope"):
        if key in spec:
            c[key] = spec[key]
    n, d, h, dk, dv = c["n"], c["d_model"], c["heads"], c["d_k"], c["d_v"]
    group = h // c.get("kv_heads", h)
    u = lambda *shape: rng.uniform(-1, 1, shape)
    s = {"format": "attnviz-session", "version": 3 if c["mask"] == "custom" else (2 if len(c) > 8 else 1),
         "config": c, "X": u(n, d).tolist()}
    if c["mask"] == "custom":
        mask = (rng.uniform(size=(n, n)) < 0.6).astype(int)
        np.fill_diagonal(mask, 1)  # every query keeps a key
        s["mask"] = mask.tolist()
    heads = []
    for i in range(h):
        head = {"W_Q": u(d, dk).tolist()}
        if i % group == 0:
            head.update({"W_K": u(d, dk).tolist(), "W_V": u(d, dv).tolist()})
        if c.get("biases"):
            head["b_Q"] = (0.2 * u(1, dk)).tolist()
            if i % group == 0:
                head.update({"b_K": (0.2 * u(1, dk)).tolist(), "b_V": (0.2 * u(1, dv)).tolist()})
        heads.append(head)
    s["heads"] = heads
    if c["output_projection"]:
        s["W_O"] = u(h * dv, d).tolist()
        if c.get("biases"):
            s["b_O"] = (0.2 * u(1, d)).tolist()
    return s


def rope_pairs(rope, dk):
    dims = rope.get("dims", dk)
    if rope.get("style", "half") == "half":
        return [(j, j + dims // 2) for j in range(dims // 2)], dims
    return [(2 * j, 2 * j + 1) for j in range(dims // 2)], dims


def rotate(x, rope):
    base = rope.get("base", 10000)
    pairs, dims = rope_pairs(rope, x.shape[1])
    out = x.copy()
    for j, (a, b) in enumerate(pairs):
        angle = np.arange(x.shape[0]) * base ** (-2.0 * j / dims)
        out[:, a] = x[:, a] * np.cos(angle) - x[:, b] * np.sin(angle)
        out[:, b] = x[:, b] * np.cos(angle) + x[:, a] * np.sin(angle)
    return out


def analyse(s):
    c = s["config"]
    n, d, h, dk, dv = c["n"], c["d_model"], c["heads"], c["d_k"], c["d_v"]
    group = h // c.get("kv_heads", h)
    X = np.array(s["X"])
    W_O = np.array(s["W_O"]) if c["output_projection"] else None
    scale = np.sqrt(dk) if c["scale"] == "sqrt_dk" else (1.0 if c["scale"] == "none" else c["scale"])
    bias = lambda head, name, width: np.array(head[name]) if c.get("biases") else np.zeros((1, width))
    per_head = []
    for i in range(h):
        own, owner = s["heads"][i], s["heads"][i - i % group]
        Q = X @ np.array(own["W_Q"]) + bias(own, "b_Q", dk)
        K = X @ np.array(owner["W_K"]) + bias(owner, "b_K", dk)
        V = X @ np.array(owner["W_V"]) + bias(owner, "b_V", dv)
        if "rope" in c:
            Q, K = rotate(Q, c["rope"]), rotate(K, c["rope"])
        scores = Q @ K.T / scale
        if c["mask"] == "causal":
            scores[np.triu(np.ones((n, n), dtype=bool), 1)] = -np.inf
        elif c["mask"] == "custom":
            scores[np.array(s["mask"]) == 0] = -np.inf
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        Z = w @ V
        per_head.append({"Q": Q, "K": K, "V": V, "w": w, "Z": Z, "W_Q": np.array(own["W_Q"]),
                         "W_K": np.array(owner["W_K"]), "W_V": np.array(owner["W_V"])})
    concat = np.hstack([p["Z"] for p in per_head])

    def output(concat):
        if W_O is None:
            return concat
        out = concat @ W_O
        return out + np.array(s["b_O"]) if c.get("biases") else out

    base_out = output(concat)
    result = []
    for i, p in enumerate(per_head):
        W_Oh = W_O[i * dv:(i + 1) * dv] if W_O is not None else None
        f = p["V"] @ W_Oh if W_Oh is not None else p["V"]
        r = {"norm_weighted": (p["w"] * np.linalg.norm(f, axis=1)[None, :]).tolist(),
             "qk_singular": np.linalg.svd(p["W_Q"] @ p["W_K"].T, compute_uv=False)[:dk].tolist()}
        if W_Oh is not None:
            W_OV = p["W_V"] @ W_Oh
            r["ov_singular"] = np.linalg.svd(W_OV, compute_uv=False)[:dv].tolist()
            lam = np.linalg.eigvals(W_OV)
            lam = lam[np.argsort(-np.abs(lam), kind="stable")][:dv]
            r["ov_eigenvalues"] = [[float(l.real), float(l.imag)] for l in lam]
            r["copying"] = float(np.trace(W_OV) / np.abs(np.linalg.eigvals(W_OV)).sum())
        for kind, replacement in (("zero", np.zeros_like(p["Z"])), ("mean", np.tile(p["Z"].mean(axis=0), (n, 1)))):
            changed = concat.copy()
            changed[:, i * dv:(i + 1) * dv] = replacement
            r["ablation_" + kind] = float(np.linalg.norm(output(changed) - base_out))
        mean = p["w"].mean(axis=0)
        key = int(np.argmax(mean))
        r["sink_key"] = key
        r["sink_share"] = float((p["w"][:, key] >= 0.3).mean())
        if "rope" in c:
            pairs, dims = rope_pairs(c["rope"], dk)
            rotated = {col for pair in pairs for col in pair}
            part = lambda cols: sum(np.outer(p["Q"][:, a], p["K"][:, a]) for a in cols) if cols else np.zeros((n, n))
            r["rope_pairs"] = [part(pair).tolist() for pair in pairs]
            r["rope_rest"] = part([a for a in range(dk) if a not in rotated]).tolist()
        result.append(r)
    return {"format": "attnviz-analysis", "heads": result}


def main():
    expected = {"generator": "tests/reference/lab/generate.py", "numpy": np.__version__, "cases": {}}
    for k, spec in enumerate(CASES):
        s = make_session(spec)
        name = "case-%d.json" % k
        with open(os.path.join(HERE, name), "w") as f:
            json.dump(s, f)
            f.write("\n")
        expected["cases"][name] = analyse(s)
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f)
        f.write("\n")
    print("wrote", len(CASES), "cases to", HERE)


if __name__ == "__main__":
    main()
