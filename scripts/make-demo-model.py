#!/usr/bin/python3
"""Writes a small made-up model for the model view: 4 layers of 4 heads (d_model = 32, d_k = 8) on a
12-token sentence, one session file per layer (layer-00.json … layer-03.json), as
`attnviz import CHECKPOINT --layer all -o DIR` would write a real model's. Each head is built to
attend in a known way, so that the grid shows what sorting by a summary number finds:

  self      to the token itself          W_Q = W_K = a·I on the position dimensions
  previous  to the token before it       W_Q rotates each position pair back by one step
  next      to the token after it        ... forward by one step
  first     to the first token ([CLS])   W_Q reads the constant dimension, W_K the [CLS] flag
  word      to the same word             W_Q = W_K = c·I on the word dimensions
  broad     everywhere, nearly evenly    small random weights

X (12 × 32) is the same for every layer: 8 position dimensions (cos and sin of i·2πm/12 for
m = 1, 2, 3, 5: their dot products peak at the same position and are small one step away), a
[CLS] flag, a constant 1, 8 dimensions of a unit vector per distinct word, and 14 of noise.
W_V and W_O are random. Usage: make-demo-model.py OUTDIR (assets/examples/model in the repository).
"""
import json
import math
import os
import random
import sys

TOKENS = ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "because", "the", "cat", "was", "tired"]
N, D_MODEL, HEADS, D_K = len(TOKENS), 32, 4, 8
FREQS = [1, 2, 3, 5]
POS, CLS, ONE, WORD, NOISE = 0, 8, 9, 10, 18  # where each part of X starts

LAYERS = [
    [("broad", 1.2), ("self", 2.0), ("previous", 2.0), ("word", 4.0)],
    [("first", 13.0), ("next", 2.0), ("broad", 1.0), ("self", 1.4)],
    [("word", 3.0), ("first", 8.0), ("previous", 1.5), ("broad", 1.5)],
    [("broad", 0.8), ("next", 1.6), ("first", 16.0), ("word", 5.0)],
]

rng = random.Random(20261201)


def zeros(rows, cols):
    return [[0.0] * cols for _ in range(rows)]


def rounded(m):
    return [[round(v, 3) for v in row] for row in m]


def make_x():
    words = {w: None for w in TOKENS}
    for w in words:
        v = [rng.gauss(0, 1) for _ in range(8)]
        norm = math.sqrt(sum(x * x for x in v))
        words[w] = [x / norm for x in v]
    x = zeros(N, D_MODEL)
    for i, w in enumerate(TOKENS):
        for k, m in enumerate(FREQS):
            x[i][POS + 2 * k] = math.cos(2 * math.pi * m * i / N)
            x[i][POS + 2 * k + 1] = math.sin(2 * math.pi * m * i / N)
        x[i][CLS] = 1.0 if i == 0 else 0.0
        x[i][ONE] = 1.0
        x[i][WORD:WORD + 8] = words[w]
        for d in range(NOISE, D_MODEL):
            x[i][d] = rng.uniform(-0.3, 0.3)
    return x


def glorot(rows, cols, scale=1.0):
    limit = scale * math.sqrt(6.0 / (rows + cols))
    return [[rng.uniform(-limit, limit) for _ in range(cols)] for _ in range(rows)]


def rotation_head(a, step):
    """W_Q turns each position pair by `step` positions (x·W), W_K keeps it: Q_i·K_j peaks at j = i + step."""
    wq, wk = zeros(D_MODEL, D_K), zeros(D_MODEL, D_K)
    for k, m in enumerate(FREQS):
        t = 2 * math.pi * m * step / N
        c, s = math.cos(t), math.sin(t)
        r = POS + 2 * k
        # [cos θi, sin θi]·[[c, s], [-s, c]] = [cos θ(i+step), sin θ(i+step)]
        wq[r][2 * k], wq[r][2 * k + 1] = a * c, a * s
        wq[r + 1][2 * k], wq[r + 1][2 * k + 1] = -a * s, a * c
        wk[r][2 * k] = wk[r + 1][2 * k + 1] = a
    return wq, wk


def head(kind, strength):
    if kind == "self":
        return rotation_head(strength, 0)
    if kind == "previous":
        return rotation_head(strength, -1)
    if kind == "next":
        return rotation_head(strength, 1)
    wq, wk = zeros(D_MODEL, D_K), zeros(D_MODEL, D_K)
    if kind == "first":
        wq[ONE][0] = wk[CLS][0] = math.sqrt(strength)  # score(i, 0) = strength / √d_k
    elif kind == "word":
        for d in range(8):
            wq[WORD + d][d] = wk[WORD + d][d] = strength
    else:  # broad
        wq, wk = glorot(D_MODEL, D_K, strength), glorot(D_MODEL, D_K, strength)
    return wq, wk


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x = make_x()
    for layer, kinds in enumerate(LAYERS):
        heads = []
        for kind, strength in kinds:
            wq, wk = head(kind, strength)
            heads.append({"W_Q": rounded(wq), "W_K": rounded(wk), "W_V": rounded(glorot(D_MODEL, D_K))})
        session = {
            "format": "attnviz-session", "version": 1,
            "config": {"n": N, "d_model": D_MODEL, "heads": HEADS, "d_k": D_K, "d_v": D_K,
                       "output_projection": True, "mask": "none", "scale": "sqrt_dk"},
            "tokens": TOKENS, "X": rounded(x), "heads": heads, "W_O": rounded(glorot(D_MODEL, D_MODEL)),
        }
        path = os.path.join(out, "layer-%02d.json" % layer)
        with open(path, "w") as f:
            json.dump(session, f, separators=(",", ":"))
            f.write("\n")
        print("wrote", path, "heads:", ", ".join(k for k, _ in kinds))


if __name__ == "__main__":
    main()
