#!/usr/bin/env python3
"""Made-up attentions for the attentions mode's window test, and checks of the app's draw report
(attnviz --attentions FILE --report R.json) against weights computed here from the same numbers.

  attentions_check.py make DIR
      writes DIR/multi.safetensors (3 layers × 4 heads × 7 × 7, one tensor per layer, 1 × heads × q
      × k as F32, tokens [CLS] … [SEP] in its metadata; heads 1 and 3 put much of every row on
      [CLS]), DIR/cross.npz (a stacked 2 × 2 × 3 × 5 cross-attention, float64), DIR/cross.json
      (its query and key tokens, <s> and </s> among them), DIR/big.npy (2 × 4 × 128 × 128, tokens
      in DIR/big.json) and DIR/bad.npy (as multi's numbers, layer 1, head 2, row 3 summing to 1.5)
  attentions_check.py open R.json
      multi.safetensors as it opens: 3 layers, 4 heads, 7 tokens (each one drawn), every line drawn
      with the file's weight, every head's mean entropy in the model view as computed here
  attentions_check.py options R.json
      multi with --layer 2 --hide-special --mean-heads --head-select 1: [CLS] and [SEP] gone, the
      lines and the selection's attention the mean over the heads of "cat"'s row renormalised over
      the five keys left
  attentions_check.py cross R.json
      cross.npz with --head-select k2 --hide-special: each query's share on "sat", the heads averaged,
      of its row renormalised over The, cat, sat
Exit 0 when every check holds, 1 with each failure listed otherwise.
"""
import json
import math
import os
import struct
import sys
import zipfile

failures = []
TOKENS = ["[CLS]", "the", "cat", "sat", "on", "mat", "[SEP]"]
CROSS = {"queries": ["Le", "chat", "</s>"], "keys": ["<s>", "The", "cat", "sat", "</s>"]}


def check(ok, what):
    if not ok:
        failures.append(what)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def row(l, h, i, k, sink):
    """Row i of head h of layer l over k keys; with `sink`, key 0 takes four times its share."""
    v = [1.0 + ((l * 7 + h * 5 + i * 3 + j * j) % 11) for j in range(k)]
    if sink:
        v[0] *= 4
    total = sum(v)
    return [x / total for x in v]


def multi(l, h, i):
    """A row of multi.safetensors as the app reads it (F32, exactly)."""
    return [f32(x) for x in row(l, h, i, 7, h % 2 == 1)]


def cross(l, h, i):
    return row(l, h, i, 5, False)


def npy(shape, values):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % ", ".join(map(str, shape))
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + \
        struct.pack("<%dd" % len(values), *values)


def make(out):
    os.makedirs(out, exist_ok=True)
    header, data = {"__metadata__": {"tokens": json.dumps(TOKENS)}}, b""
    for l in range(3):
        values = [x for h in range(4) for i in range(7) for x in multi(l, h, i)]
        chunk = struct.pack("<%df" % len(values), *values)
        header["layer_%d" % l] = {"dtype": "F32", "shape": [1, 4, 7, 7],
                                  "data_offsets": [len(data), len(data) + len(chunk)]}
        data += chunk
    text = json.dumps(header).encode()
    with open(os.path.join(out, "multi.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)
    values = [x for l in range(2) for h in range(2) for i in range(3) for x in cross(l, h, i)]
    with zipfile.ZipFile(os.path.join(out, "cross.npz"), "w") as z:
        z.writestr("attentions.npy", npy((2, 2, 3, 5), values))
    json.dump(CROSS, open(os.path.join(out, "cross.json"), "w"))
    values = [x for l in range(2) for h in range(4) for i in range(128) for x in row(l, h, i, 128, h == 0)]
    open(os.path.join(out, "big.npy"), "wb").write(npy((2, 4, 128, 128), values))
    json.dump(["[CLS]"] + ["w%d" % t for t in range(1, 127)] + ["[SEP]"], open(os.path.join(out, "big.json"), "w"))
    values = []
    for l in range(3):
        for h in range(4):
            for i in range(7):
                r = row(l, h, i, 7, False)
                values += [x * 1.5 for x in r] if (l, h, i) == (1, 1, 3) else r
    open(os.path.join(out, "bad.npy"), "wb").write(npy((3, 4, 7, 7), values))


def report(path):
    with open(path) as f:
        r = json.load(f)
    return r, r.get("values", {}), {i["name"] for i in r.get("items", [])}, {w["title"] for w in r.get("windows", [])}


def shape(v, layers, layer, heads, queries, keys, hidden, mean):
    for name, want in (("layers", layers), ("layer", layer), ("heads", heads), ("queries", queries), ("keys", keys),
                       ("special hidden", hidden), ("mean", mean)):
        got = v.get("head view " + name)
        check(got == want, "head view %s: %s, expected %s" % (name, got, want))


def renormalised_mean(rows, keys):
    """The mean over heads of each head's row renormalised over the kept keys."""
    out = [0.0] * len(keys)
    for r in rows:
        total = sum(r[j] for j in keys)
        for c, j in enumerate(keys):
            out[c] += r[j] / total / len(rows)
    return out


def check_open(path):
    _, v, items, windows = report(path)
    check({"Head view", "Model view"} <= windows, "windows drawn: %s" % sorted(windows))
    check("Inputs: X and weights" not in windows, "the session's inputs are drawn beside weights only")
    check("head view: weights only" in items and "model: weights only" in items, "no 'weights only' note")
    shape(v, 3, 0, 4, 7, 7, 0, 0)
    for t in TOKENS:
        check("head view: query " + t in items and "head view: key " + t in items, "token %s not drawn" % t)
    lines = [k for k in v if k.startswith("head view line ")]
    check(len(lines) > 100, "only %d lines reported" % len(lines))
    for k in lines:
        h, q, key = (int(x) for x in k.split()[3:6])
        want = multi(0, h - 1, q)[key]
        check(abs(v[k] - want) < 1e-12, "%s: %.12g, the file has %.12g" % (k, v[k], want))
    for l in range(3):
        for h in range(4):
            want = -sum(w * math.log(w) for i in range(7) for w in multi(l, h, i)) / 7
            got = v.get("model row %d head %d entropy" % (l, h))
            check(got is not None and abs(got - want) < 1e-9,
                  "layer %d head %d: entropy %s, expected %.12g" % (l, h, got, want))


def check_options(path):
    _, v, items, _ = report(path)
    shape(v, 3, 2, 4, 5, 5, 1, 1)
    check("head view: query [CLS]" not in items and "head view: key [SEP]" not in items, "special tokens drawn")
    check("head view: options" in items, "the options' note is not drawn")
    keys = [1, 2, 3, 4, 5]
    want = renormalised_mean([multi(2, h, 2) for h in range(4)], keys)
    check(abs(sum(want) - 1) < 1e-12, "the expected row does not sum to 1")
    for c, w in enumerate(want):
        got = v.get("head view of queries %d" % c)
        check(got is not None and abs(got - w) < 1e-12, "cat's attention on key %d: %s, expected %.12g" % (c, got, w))
        line = v.get("head view line mean 1 %d" % c)
        if w >= 0.02:
            check(line is not None and abs(line - w) < 1e-12, "the mean's line cat → %d: %s, expected %.12g" % (c, line, w))
    check(not any(k.startswith("head view line ") and not k.startswith("head view line mean 1 ") for k in v),
          "lines other than the mean's from cat: %s" % [k for k in v if k.startswith("head view line ")][:5])


def check_cross(path):
    _, v, items, _ = report(path)
    shape(v, 2, 0, 2, 2, 3, 1, 0)
    check("head view: key </s>" not in items and "head view: key sat" in items, "the key tokens shown are wrong")
    for q in range(2):
        want = renormalised_mean([cross(0, h, q) for h in range(2)], [1, 2, 3])[2]
        got = v.get("head view to keys %d" % q)
        check(got is not None and abs(got - want) < 1e-12, "query %d's share on sat: %s, expected %.12g" % (q, got, want))


if __name__ == "__main__":
    commands = {"open": check_open, "options": check_options, "cross": check_cross}
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) != 3 or sys.argv[1] not in commands:
        print(__doc__)
        sys.exit(2)
    commands[sys.argv[1]](sys.argv[2])
    for f in failures[:40]:
        print("FAIL:", f)
    print("ok" if not failures else "%d failures" % len(failures))
    sys.exit(1 if failures else 0)
