#!/usr/bin/env python3
"""The interactive page (attnviz export --format html) opened in headless Chromium: it loads with
no console message, draws (a screenshot that is not blank), reads its state from the address
(#select= changes what is drawn; #view=model&pick= opens a heatmap), and the head view of a
session and the model view of a tensor file both work.

    check_page.py ATTNVIZ WORKDIR

Exits 77 (skipped) with a message when no Chromium is installed.
"""
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_browser(browser, workdir, url, mode, out=None):
    """The page's DOM after load (mode "dom") or a screenshot at `out` (mode "shot"), and what the
    browser logged from the page's console."""
    profile = os.path.join(workdir, "profile")
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + profile,
            "--enable-logging=stderr", "--v=0", "--window-size=1280,900", "--virtual-time-budget=3000"]
    args += ["--dump-dom"] if mode == "dom" else ["--screenshot=" + out]
    p = subprocess.run(args + [url], capture_output=True, text=True, timeout=120)
    console = [line for line in p.stderr.splitlines() if "CONSOLE" in line]
    if p.returncode != 0:
        sys.exit("FAIL: chromium exited %d on %s:\n%s" % (p.returncode, url, p.stderr[-2000:]))
    return p.stdout, console


def pixels(path):
    """The RGB(A) rows of an 8-bit PNG (colour types 2 and 6), with its width and channels."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), "PNG of depth %d, colour type %d" % (depth, color)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return rows, width, channels


def drawn(path):
    """How many colours the screenshot has, and the share of its pixels that are not the background."""
    rows, width, ch = pixels(path)
    background = rows[-1][:3]
    colours, other = set(), 0
    for row in rows:
        for x in range(0, width * ch, ch):
            px = row[x:x + 3]
            colours.add(px)
            other += px != background
    return len(colours), other / (len(rows) * width)


def body_attribute(dom, name):
    m = re.search(r'<body[^>]*\s%s="([^"]*)"' % name, dom)
    return m.group(1) if m else None


def write_npy(path, layers, heads, n):
    """A stacked attentions array (layers × heads × n × n, float64, rows summing to 1) as .npy."""
    values = []
    for l in range(layers):
        for h in range(heads):
            for i in range(n):
                row = [1.0 + ((l * 7 + h * 5 + i * 3 + j * j) % 11) for j in range(n)]
                total = sum(row)
                values += [v / total for v in row]
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d, %d, %d), }" % (layers, heads, n, n)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%dd" % len(values), *values))


def check(ok, message):
    if not ok:
        sys.exit("FAIL: " + message)


def check_long_labels(attnviz, browser, workdir):
    """A token label far wider than the head view's label room is drawn cut with "…" (whole
    characters, the start kept), never past the canvas's edge; short labels are drawn whole."""
    npy, tokens, page = (os.path.join(workdir, f) for f in ("long.npy", "long.json", "long.html"))
    write_npy(npy, 1, 2, 4)
    long_label = "Ünïcode" + "x" * 300 + "end"
    json.dump(["a", long_label, "c", "d"], open(tokens, "w"))
    subprocess.run([attnviz, "export", "--attentions", npy, "--tokens-file", tokens, "--view", "head", "--format",
                    "html", "-o", page], check=True)
    dom, console = run_browser(browser, workdir, "file://" + os.path.abspath(page), "dom")
    check(not console, "console: " + "\n".join(console))
    match = re.search(r'data-labels="([^"]*)"', dom)
    check(match is not None, "the head view's canvas does not list its drawn labels")
    drawn = json.loads(html.unescape(match.group(1)))
    for side in ("queries", "keys"):
        labels = drawn[side]
        check(labels[0] == "a" and labels[2] == "c" and labels[3] == "d", "short %s labels changed: %r" % (side, labels))
        cut = labels[1]
        check(cut.endswith("…") and cut.startswith("Ünïcode") and len(cut) < 60,
              "the long %s label is not cut with an ellipsis: %r" % (side, cut[:80]))
        check(long_label.startswith(cut[:-1]), "the cut %s label is not the label's start: %r" % (side, cut))


def main():
    attnviz, workdir = sys.argv[1], sys.argv[2]
    browser = chromium()
    if not browser:
        print("SKIP: no Chromium installed (Debian's package chromium); the page is not opened in a browser")
        return 77
    os.makedirs(workdir, exist_ok=True)
    session, head_page = os.path.join(workdir, "s.json"), os.path.join(workdir, "head.html")
    subprocess.run([attnviz, "example", "sentence", "--text", "the cat sat on the mat", "-o", session], check=True)
    subprocess.run([attnviz, "export", session, "--view", "head", "--format", "html", "-o", head_page], check=True)
    npy, tokens, model_page = (os.path.join(workdir, f) for f in ("att.npy", "tokens.json", "model.html"))
    write_npy(npy, 3, 4, 6)
    json.dump(["[CLS]", "a", "b", "c", "d", "[SEP]"], open(tokens, "w"))
    subprocess.run([attnviz, "export", "--attentions", npy, "--tokens-file", tokens, "--view", "model", "--format",
                    "html", "-o", model_page], check=True)

    page_html = open(head_page, encoding="utf-8").read()
    check(not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", page_html, re.I), "the page links another file")

    url = "file://" + os.path.abspath(head_page)
    dom, console = run_browser(browser, workdir, url + "#select=2", "dom")
    check(not console, "the page wrote to the console:\n" + "\n".join(console))
    check(body_attribute(dom, "data-ready") == "1", "the script did not finish")
    check("select=2" in (body_attribute(dom, "data-state") or ""), "#select=2 was not read: %r" % body_attribute(dom, "data-state"))
    check("Top keys of" in dom, "no top list for the selected token")
    shots = []
    for select in ("0", "3"):
        shot = os.path.join(workdir, "head-%s.png" % select)
        _, console = run_browser(browser, workdir, url + "#select=" + select, "shot", shot)
        check(not console, "console: " + "\n".join(console))
        colours, share = drawn(shot)
        check(colours > 50 and share > 0.02, "%s looks blank: %d colours, %.3f drawn" % (shot, colours, share))
        shots.append(open(shot, "rb").read())
    check(shots[0] != shots[1], "#select=0 and #select=3 draw the same")

    url = "file://" + os.path.abspath(model_page)
    dom, console = run_browser(browser, workdir, url + "#view=model&pick=2,3&special=hide", "dom")
    check(not console, "console: " + "\n".join(console))
    check("layer 2, head 3 (4×4)" in dom, "#pick=2,3 with special tokens hidden did not open a 4×4 heatmap")
    check(dom.count("<canvas") == 3 * 4 + 2, "expected 12 thumbnails, the heatmap and the head view's canvas")
    shot = os.path.join(workdir, "model.png")
    run_browser(browser, workdir, url + "#view=model&pick=0,1", "shot", shot)
    colours, share = drawn(shot)
    check(colours > 50 and share > 0.05, "the model view looks blank: %d colours, %.3f drawn" % (colours, share))
    check_long_labels(attnviz, browser, workdir)
    print("ok: head view and model view drawn in %s, long labels cut with an ellipsis" % browser)
    return 0


if __name__ == "__main__":
    sys.exit(main())
