#!/usr/bin/env python3
"""Checks the model mode's draw report (attnviz --model DIR --text TEXT --report R.json).

  model_report_check.py reference R.json EXPECTED.json
      The numbers the model panels showed against the reference forward pass of
      tests/reference/models/generate.py (computed in double; the app runs in float): the token ids
      (exact), the next tokens' ids (exact) and p (1e-5), the logit lens's top ids (exact) and p
      (1e-4), every rollout value (1e-5) and the residual norms (1e-5 relative). A model without an
      LM head must show no next token and no lens.
  model_report_check.py edit BEFORE.json AFTER.json LAYER
      AFTER is the same run with a cell of block LAYER edited: every block before LAYER shows the
      same numbers (its heads' entropies, the stream entering it), LAYER and every later block and
      the prediction changed.
  model_report_check.py bench BENCH.out
      BENCH.out is what `--bench-edits N` printed for a model's block: the model's reruns were shown
      (model_runs_shown at least 1) and the last edit's on screen (last_edit_to_trace_ms set).
  model_report_check.py lab R.json ANALYSIS.json LAYER HEAD
      R is the attention lab's Ablation view through the model (--lab-view ablation, block LAYER
      edited, head HEAD from 1 chosen, Z by zeros); ANALYSIS is `attnviz analyze` of the same model
      and text (in double; the app runs in float): the KL shown agrees (1e-3 relative, and it is not
      0), the five tokens after are its `ablation_next_token` top (ids exact, p 1e-5), the five before
      its `top`, and each block from LAYER on has a ‖Δ residual‖ bar.
  model_report_check.py tokens R.json ANALYSIS.json LAYER HEAD
      R is the attention lab's Circuits tab in token space (--lab-view circuits, block LAYER edited,
      head HEAD from 1 chosen, nothing edited); ANALYSIS is `attnviz analyze` of the same model and
      text: the candidate tokens (ids exact), every x_a·W_QK·x_bᵀ (1e-9 relative to the largest),
      the top pairs (ids exact, values 1e-9), and for the token chosen (the sentence's last) its top
      keys and output tokens (ids exact, values 1e-9) are analyze's token_circuits; stored weights.
  model_report_check.py split R.json ANALYSIS.json HEAD
      R is the RoPE tab of block 0 of a model with learned positions (--lab-view rope, head HEAD
      from 1 chosen); ANALYSIS as above: each of the five parts in every cell is analyze's
      position_split (1e-9 relative to the largest), each part's share is its mean |part| over the
      entries the mask allows (j ≤ i for a causal LM, which has a next-token top) over their sum
      (1e-9), and the sum's max |difference| from the run's scores_raw is float rounding (at most
      1e-5 of max |scores_raw|); stored weights.
Exit 0 when every check holds, 1 with each failure listed otherwise.
"""
import json
import sys

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def values(path):
    with open(path) as f:
        return json.load(f).get("values", {})


def close(a, b, tol, relative=False):
    scale = max(abs(b), 1.0) if relative else 1.0
    return abs(a - b) <= tol * scale


def reference(report_path, expected_path):
    v = values(report_path)
    with open(expected_path) as f:
        e = json.load(f)
    ids = e["token_ids"]
    shown = [v.get("model token_id %d" % i) for i in range(len(ids))]
    check(shown == ids, "token ids: shown %s, expected %s" % (shown, ids))
    check("model token_id %d" % len(ids) not in v, "more tokens shown than %d" % len(ids))
    if "top" in e:
        for k, t in enumerate(e["top"]):
            check(v.get("next id %d" % k) == t["id"], "next token %d: id %s, expected %d" % (k, v.get("next id %d" % k), t["id"]))
            p = v.get("next p %d" % k)
            check(p is not None and close(p, t["p"], 1e-5), "next token %d: p %s, expected %.9g" % (k, p, t["p"]))
        for l, row in enumerate(e["lens_ids"]):
            for i, token in enumerate(row):
                got = v.get("lens id %d %d" % (l, i))
                check(got == token, "lens %d %d: id %s, expected %d" % (l, i, got, token))
                p = v.get("lens p %d %d" % (l, i))
                want = e["lens_p"][l][i]
                check(p is not None and close(p, want, 1e-4), "lens %d %d: p %s, expected %.9g" % (l, i, p, want))
    else:
        check(not any(k.startswith("next ") or k.startswith("lens ") for k in v),
              "an encoder shows next tokens or a logit lens")
    for l, m in enumerate(e["rollout"]):
        for i, row in enumerate(m):
            for j, want in enumerate(row):
                got = v.get("rollout %d %d %d" % (l, i, j))
                check(got is not None and close(got, want, 1e-5), "rollout %d %d %d: %s, expected %.9g" % (l, i, j, got, want))
    for l, row in enumerate(e["residual_norms"]):
        for i, want in enumerate(row):
            got = v.get("norm %d %d" % (l, i))
            check(got is not None and close(got, want, 1e-5, True), "norm %d %d: %s, expected %.9g" % (l, i, got, want))


def edit(before_path, after_path, layer):
    b, a = values(before_path), values(after_path)
    rows = sorted({int(k.split()[2]) for k in b if k.startswith("model row ")})
    check(len(rows) > layer, "the report has %d model rows, fewer than layer %d needs" % (len(rows), layer))
    for r in rows:
        keys = [k for k in b if k.startswith("model row %d " % r)]
        same = all(k in a and a[k] == b[k] for k in keys)
        block = r - 1  # row 0 is this session, not shown in model mode
        if block < layer:
            check(same, "block %d (before the edited one) changed" % block)
        else:
            check(not same, "block %d (the edited one or after) did not change" % block)
    n = len([k for k in b if k.startswith("norm 0 ")])
    check(n > 0, "no residual norms in the report")
    for l in range(layer + 1):  # the streams entering the blocks up to the edited one
        check(all(a.get("norm %d %d" % (l, i)) == b.get("norm %d %d" % (l, i)) for i in range(n)),
              "the stream entering block %d changed" % l)
    check(any(a.get("norm %d %d" % (layer + 1, i)) != b.get("norm %d %d" % (layer + 1, i)) for i in range(n)),
          "the stream after the edited block did not change")
    p_before = [b.get("next p %d" % k) for k in range(5)]
    p_after = [a.get("next p %d" % k) for k in range(5)]
    check(None not in p_before and p_before != p_after, "the prediction did not change: %s" % p_after)
    check("next dp 0" in a and "next dp 0" not in b, "the edited run does not show the change of p")


def bench(out_path):
    with open(out_path) as f:
        b = json.loads(f.read().strip().splitlines()[-1])
    check(b.get("model_runs_shown", 0) >= 1, "no rerun of the model was shown: %s" % b)
    check(b.get("last_edit_to_trace_ms", -1) >= 0, "the last edit was not shown: %s" % b)
    check(b.get("model_run_median_ms", 0) > 0, "no time for the model's reruns: %s" % b)


def lab(report_path, analysis_path, layer, head):
    v = values(report_path)
    with open(analysis_path) as f:
        a = json.load(f)
    effect = a["layers"][layer]["heads"][head - 1]["ablation_next_token"]
    check("lab: model kl" in v, "no KL shown")
    if "lab: model kl" in v:
        check(v["lab: model kl"] > 0, "KL shown is 0")
        check(close(v["lab: model kl"], effect["kl"], 1e-3, True),
              "KL shown %g, analyze %g" % (v["lab: model kl"], effect["kl"]))
    for when, top in (("after", effect["top"]), ("before", a["top"])):
        for k, t in enumerate(top, 1):
            name = "lab: model top %s %d" % (when, k)
            check(v.get(name) == t["id"], "%s: %s, analyze %s" % (name, v.get(name), t["id"]))
            check(close(v.get(name + " p", -1), t["p"], 1e-5), "%s p: %s, analyze %s" % (name, v.get(name + " p"), t["p"]))
    for l in range(layer, len(a["layers"])):
        check(v.get("lab: model residual delta %d" % l, 0) > 0, "no change shown after block %d" % l)


def tokens(report_path, analysis_path, layer, head):
    v = values(report_path)
    with open(analysis_path) as f:
        a = json.load(f)
    c = a["layers"][layer]["heads"][head - 1]["token_circuits"]
    ids = [t["id"] for t in c["tokens"]]
    shown = [v.get("lab: tokens id %d" % i) for i in range(len(ids))]
    check(shown == ids, "candidate tokens: shown %s, analyze %s" % (shown, ids))
    check("lab: tokens id %d" % len(ids) not in v, "more candidates shown than %d" % len(ids))
    scale = max(abs(x) for row in c["qk"] for x in row)
    for i, row in enumerate(c["qk"]):
        for j, want in enumerate(row):
            got = v.get("lab: tokens qk %d %d" % (i, j))
            check(got is not None and abs(got - want) <= 1e-9 * scale, "qk %d %d: %s, analyze %.12g" % (i, j, got, want))
    for k, p in enumerate(c["top_pairs"], 1):
        name = "lab: tokens pair %d" % k
        check(v.get(name + " query") == p["query"] and v.get(name + " key") == p["key"],
              "%s: %s → %s, analyze %s → %s" % (name, v.get(name + " query"), v.get(name + " key"), p["query"], p["key"]))
        check(close(v.get(name, float("nan")), p["value"], 1e-9, True), "%s: %s, analyze %s" % (name, v.get(name), p["value"]))
    by_text = {t["token"]: t["id"] for t in c["tokens"]}
    last = by_text.get(a["tokens"][-1])
    check(v.get("lab: tokens chosen") == last, "token chosen %s, the sentence's last %s" % (v.get("lab: tokens chosen"), last))
    if last in ids:
        t = ids.index(last)
        for what, ranking in (("key", c["top_keys"][t]), ("output", c["top_outputs"][t])):
            for k, s in enumerate(ranking, 1):
                name = "lab: tokens %s %d" % (what, k)
                check(v.get(name) == s["id"], "%s: %s, analyze %s" % (name, v.get(name), s["id"]))
                check(close(v.get(name + " value", float("nan")), s["value"], 1e-9, True),
                      "%s value: %s, analyze %s" % (name, v.get(name + " value"), s["value"]))
    check(v.get("lab: tokens edited") == 0, "the token circuits shown are not of the stored weights")


def split(report_path, analysis_path, head):
    v = values(report_path)
    with open(analysis_path) as f:
        a = json.load(f)
    s = a["layers"][0]["heads"][head - 1]["position_split"]
    parts = {"cc": "content_content", "cp": "content_position", "pc": "position_content",
             "pp": "position_position", "bias": "bias"}
    n = len(s["bias"])
    causal = "top" in a
    allowed = [(i, j) for i in range(n) for j in range(n) if j <= i or not causal]
    scale = max(abs(x) for key in parts.values() for row in s[key] for x in row)
    means = {}
    for short, key in parts.items():
        for i, row in enumerate(s[key]):
            for j, want in enumerate(row):
                got = v.get("lab: split %s %d %d" % (short, i, j))
                check(got is not None and abs(got - want) <= 1e-9 * scale,
                      "%s %d %d: %s, analyze %.12g" % (short, i, j, got, want))
        check("lab: split %s %d 0" % (short, n) not in v, "%s: more than %d rows shown" % (short, n))
        means[short] = sum(abs(s[key][i][j]) for i, j in allowed) / len(allowed)
    total = sum(means.values())
    for short, mean in means.items():
        got = v.get("lab: split %s share" % short)
        check(got is not None and abs(got - mean / total) <= 1e-9, "%s share: %s, analyze's parts give %.12g" % (short, got, mean / total))
    diff, top = v.get("lab: split difference"), v.get("lab: split scores max")
    check(diff is not None and top is not None and top > 0 and diff <= 1e-5 * top,
          "Σ parts − scores_raw: max |difference| %s of max |scores_raw| %s" % (diff, top))
    check(v.get("lab: split edited") == 0, "the split shown is not of the stored weights")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "reference":
        reference(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "edit":
        edit(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) == 6 and sys.argv[1] == "lab":
        lab(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif len(sys.argv) == 6 and sys.argv[1] == "tokens":
        tokens(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif len(sys.argv) == 5 and sys.argv[1] == "split":
        split(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) == 3 and sys.argv[1] == "bench":
        bench(sys.argv[2])
    else:
        print(__doc__)
        sys.exit(2)
    for f in failures[:40]:
        print("FAIL:", f)
    if len(failures) > 40:
        print("... and %d more" % (len(failures) - 40))
    print("ok" if not failures else "%d failures" % len(failures))
    sys.exit(1 if failures else 0)
