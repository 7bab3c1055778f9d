// The interactive page's style and script (attention_page.hpp), hand-written and small: no
// framework, no request. The script reads the JSON in #attention-data, builds the controls and
// draws the views on canvases; the state lives in the address (#view=…&layer=…&select=…&heads=…).
#include "core/render/attention_page.hpp"

namespace attnviz::core {

const char* const attention_page_style = R"CSS(
:root { color-scheme: dark; }
body { margin: 0; background: #171a1f; color: #e6e6e6; font: 14px system-ui, sans-serif; }
header { padding: 10px 16px 6px; border-bottom: 1px solid #30363f; }
h1 { font-size: 17px; margin: 0 0 4px; }
.note { color: #9aa3b2; font-size: 12px; margin: 2px 0; }
.bar { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: center; padding: 8px 16px; }
button, select { font: inherit; color: inherit; background: #2a303c; border: 1px solid #46505f;
  border-radius: 4px; padding: 3px 9px; cursor: pointer; }
button.on { background: #426eaa; border-color: #6d95cc; }
.chip { border-width: 2px; }
.chip.off { opacity: 0.35; }
main { display: flex; flex-wrap: wrap; gap: 16px; padding: 8px 16px 16px; align-items: flex-start; }
#head-canvas, #detail-canvas { max-width: 100%; }
#top { min-width: 220px; max-width: 360px; font-size: 13px; }
#top h2, #detail h2 { font-size: 14px; margin: 0 0 6px; }
#top .head { margin: 6px 0 2px; font-weight: 600; }
#grid { display: grid; gap: 4px; align-items: center; }
#grid canvas { cursor: pointer; border: 2px solid transparent; image-rendering: pixelated; }
#grid canvas.picked { border-color: #ffffff; }
#grid .label { color: #9aa3b2; font-size: 11px; text-align: right; padding-right: 4px; }
#legend { padding: 0 16px 16px; color: #9aa3b2; font-size: 12px; }
#hover { min-height: 1.3em; font-size: 13px; color: #cfd6e2; }
)CSS";

const char* const attention_page_script = R"JS(
(() => {
"use strict";
const data = JSON.parse(document.getElementById("attention-data").textContent);
const L = data.layers, H = data.heads, Q = data.queries.length, K = data.keys.length;
const weights = (() => {  // Float32Array, layer × head × query × key
  const bin = atob(data.weights), out = new Float32Array(bin.length / 2);
  for (let i = 0; i < out.length; ++i)
    out[i] = (bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8)) / 65535;
  return out;
})();
// The special tokens' indices, as attnviz lists them (core::is_special_token).
const SPECIAL = { queries: new Set(data.special.queries), keys: new Set(data.special.keys) };
const state = { view: data.view, layer: 0, select: [], heads: new Set([...Array(H).keys()]), mean: false,
  hideSpecial: false, hover: -1, picked: null };
const el = (tag, props, parent) => {
  const e = Object.assign(document.createElement(tag), props || {});
  if (parent) parent.appendChild(e);
  return e;
};

// The rows (side "queries") or columns ("keys") shown: special tokens leave when hidden.
function shown(side) {
  const idx = [];
  data[side].forEach((t, i) => { if (!(state.hideSpecial && SPECIAL[side].has(i))) idx.push(i); });
  return idx;
}
// Head h's weights of layer l over the shown rows and columns, each row renormalised over the keys
// left when special tokens are hidden: an array of rows.
function matrix(l, h, rows, cols) {
  const base = (l * H + h) * Q * K;
  return rows.map(i => {
    const row = cols.map(j => weights[base + i * K + j]);
    if (state.hideSpecial) {
      const sum = row.reduce((a, b) => a + b, 0);
      if (sum > 0) for (let j = 0; j < row.length; ++j) row[j] /= sum;
    }
    return row;
  });
}
function meanMatrix(l, heads, rows, cols) {
  const out = rows.map(() => cols.map(() => 0));
  for (const h of heads) matrix(l, h, rows, cols).forEach((r, i) => r.forEach((v, j) => { out[i][j] += v / heads.length; }));
  return out;
}

// -- the address
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  if (p.get("view") === "head" || p.get("view") === "model") state.view = p.get("view");
  const layer = parseInt(p.get("layer"), 10);
  if (layer >= 0 && layer < L) state.layer = layer;
  if (p.has("select"))
    state.select = p.get("select").split(",").map(s => parseInt(s, 10)).filter(i => i >= 0 && i < Q);
  if (p.has("heads")) {
    const heads = p.get("heads").split(",").map(s => parseInt(s, 10) - 1).filter(h => h >= 0 && h < H);
    state.heads = new Set(heads);
  }
  const pick = (p.get("pick") || "").split(",").map(s => parseInt(s, 10));
  state.picked = pick.length === 2 && pick[0] >= 0 && pick[0] < L && pick[1] >= 1 && pick[1] <= H ? [pick[0], pick[1] - 1] : null;
  state.mean = p.get("mean") === "1";
  state.hideSpecial = p.get("special") === "hide";
}
function writeHash() {
  const p = new URLSearchParams();
  p.set("view", state.view);
  p.set("layer", state.layer);
  if (state.select.length) p.set("select", state.select.join(","));
  if (state.heads.size !== H) p.set("heads", [...state.heads].sort((a, b) => a - b).map(h => h + 1).join(","));
  if (state.picked) p.set("pick", state.picked[0] + "," + (state.picked[1] + 1));
  if (state.mean) p.set("mean", "1");
  if (state.hideSpecial) p.set("special", "hide");
  history.replaceState(null, "", "#" + p.toString().replace(/%2C/g, ","));
}

// -- the controls
const header = el("header", {}, document.body);
el("h1", { textContent: data.title }, header);
for (const n of data.notes) el("p", { className: "note", textContent: n }, header);
el("p", { className: "note", textContent: "Weights only: each line or cell is how much a query attends to a key." }, header);
const bar = el("div", { className: "bar" }, document.body);
const headTab = el("button", { textContent: "Head view" }, bar);
const modelTab = el("button", { textContent: "Model view" }, bar);
const layerSelect = el("select", { title: "Layer" }, bar);
for (let l = 0; l < L; ++l) el("option", { value: l, textContent: "layer " + l }, layerSelect);
const special = el("button", { textContent: "hide special tokens" }, bar);
const chips = el("div", { className: "bar" }, document.body);
const chipButtons = data.head_colors.map((c, h) => {
  const b = el("button", { className: "chip", textContent: "head " + (h + 1) }, chips);
  b.style.borderColor = c;
  b.onclick = () => { state.heads.has(h) ? state.heads.delete(h) : state.heads.add(h); update(); };
  return b;
});
const meanChip = el("button", { className: "chip", textContent: "mean" }, chips);
meanChip.onclick = () => { state.mean = !state.mean; update(); };
const main = el("main", {}, document.body);
const headView = el("section", { id: "head-view" }, main);
const headCanvas = el("canvas", { id: "head-canvas" }, headView);
const topList = el("aside", { id: "top" }, main);
const modelView = el("section", { id: "model-view" }, main);
const grid = el("div", { id: "grid" }, modelView);
const detail = el("section", { id: "detail" }, main);
const legend = el("div", { id: "legend" }, document.body);
headTab.onclick = () => { state.view = "head"; update(); };
modelTab.onclick = () => { state.view = "model"; update(); };
layerSelect.onchange = () => { state.layer = +layerSelect.value; update(); };
special.onclick = () => { state.hideSpecial = !state.hideSpecial; state.select = []; update(); };

// -- the head view
const ROW = 22, PAD = 10, LABEL_MAX = 220, DETAIL_LABEL_MAX = 140;
function fitCanvas(canvas, w, h) {
  const r = window.devicePixelRatio || 1;
  canvas.width = Math.round(w * r); canvas.height = Math.round(h * r);
  canvas.style.width = w + "px"; canvas.style.height = h + "px";
  const g = canvas.getContext("2d");
  g.setTransform(r, 0, 0, r, 0, 0);
  return g;
}
function headLayout(rows, cols) {
  const g = headCanvas.getContext("2d");
  g.font = "14px system-ui, sans-serif";
  const widest = (list, tokens) => Math.max(40, ...list.map(i => g.measureText(tokens[i]).width));
  const queryRoom = Math.min(LABEL_MAX, widest(rows, data.queries)), keyRoom = Math.min(LABEL_MAX, widest(cols, data.keys));
  const left = queryRoom + PAD, gap = Math.max(160, Math.min(420, window.innerWidth * 0.3));
  return { left, right: left + gap, width: left + gap + keyRoom + 2 * PAD, queryRoom, keyRoom,
    height: (Math.max(rows.length, cols.length) + 1) * ROW };
}
// `text` as drawn in `room` px with g's font: whole, or cut after whole characters with "…".
function fitLabel(g, text, room) {
  if (g.measureText(text).width <= room) return text;
  const chars = Array.from(text);
  let lo = 0, hi = chars.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (g.measureText(chars.slice(0, mid).join("") + "…").width <= room) lo = mid; else hi = mid - 1;
  }
  return chars.slice(0, lo).join("") + "…";
}
function drawHeadView() {
  const rows = shown("queries"), cols = shown("keys"), lay = headLayout(rows, cols);
  const g = fitCanvas(headCanvas, lay.width, lay.height);
  g.font = "14px system-ui, sans-serif"; g.textBaseline = "middle";
  const heads = [...state.heads].sort((a, b) => a - b);
  const focus = state.select.length ? state.select : state.hover >= 0 ? [state.hover] : null;
  const y = k => (k + 1) * ROW;
  const drawLines = (m, color, scale) => {
    g.strokeStyle = color;
    rows.forEach((qi, r) => {
      if (focus && !focus.includes(qi)) return;
      m[r].forEach((w, c) => {
        if (w < 0.01) return;
        g.globalAlpha = Math.min(1, w * scale); g.lineWidth = focus ? 3 : 1.5;
        g.beginPath(); g.moveTo(lay.left, y(r)); g.lineTo(lay.right, y(c)); g.stroke();
      });
    });
  };
  if (state.mean) drawLines(meanMatrix(state.layer, heads, rows, cols), "#f5f5f5", 1);
  else for (const h of heads) drawLines(matrix(state.layer, h, rows, cols), data.head_colors[h], focus ? 1 : 0.6);
  g.globalAlpha = 1;
  // Long labels are cut with "…" to their room; the whole label is the canvas's tooltip (headLabelAt).
  const drawn = { queries: rows.map(qi => fitLabel(g, data.queries[qi], lay.queryRoom)),
    keys: cols.map(ki => fitLabel(g, data.keys[ki], lay.keyRoom)) };
  rows.forEach((qi, r) => {
    const on = state.select.includes(qi), hov = qi === state.hover;
    if (on || hov) { g.fillStyle = on ? "#426eaa" : "#464e5f"; g.fillRect(0, y(r) - ROW / 2 + 1, lay.left - 4, ROW - 2); }
    g.fillStyle = "#e6e6e6"; g.textAlign = "right"; g.fillText(drawn.queries[r], lay.left - PAD, y(r));
  });
  g.textAlign = "left";
  cols.forEach((ki, c) => { g.fillStyle = "#e6e6e6"; g.fillText(drawn.keys[c], lay.right + PAD, y(c)); });
  headCanvas.dataset.labels = JSON.stringify(drawn);
  headCanvas.dataset.cols = cols.join(",");
  headCanvas.dataset.rows = rows.join(",");
  headCanvas.dataset.lay = JSON.stringify(lay);
  drawTop(rows, cols, heads, focus);
}
function drawTop(rows, cols, heads, focus) {
  topList.textContent = "";
  if (!focus) { el("p", { className: "note", textContent: "Hover a token on the left for its top keys; click to keep it, Ctrl+click for several." }, topList); return; }
  el("h2", { textContent: "Top keys of " + focus.map(i => "“" + data.queries[i] + "”").join(", ") }, topList);
  const lists = state.mean ? [["mean of the heads shown", meanMatrix(state.layer, heads, rows, cols), "#f5f5f5"]]
    : heads.map(h => ["head " + (h + 1), matrix(state.layer, h, rows, cols), data.head_colors[h]]);
  for (const [name, m, color] of lists) {
    const d = el("div", { className: "head", textContent: name }, topList);
    d.style.color = color;
    for (const qi of focus) {
      const r = rows.indexOf(qi);
      if (r < 0) continue;
      const best = m[r].map((w, c) => [w, c]).sort((a, b) => b[0] - a[0]).slice(0, 5);
      el("div", { textContent: data.queries[qi] + " → " + best.map(([w, c]) => data.keys[cols[c]] + " " + w.toFixed(3)).join(", ") }, topList);
    }
  }
}
function headRowAt(ev) {
  const lay = JSON.parse(headCanvas.dataset.lay || "{}"), rows = (headCanvas.dataset.rows || "").split(",").map(Number);
  const rect = headCanvas.getBoundingClientRect(), x = ev.clientX - rect.left, r = Math.round((ev.clientY - rect.top) / ROW) - 1;
  return x < lay.left && r >= 0 && r < rows.length ? rows[r] : -1;
}
// The whole label under the pointer (a query on the left, a key on the right), or "".
function headLabelAt(ev) {
  const lay = JSON.parse(headCanvas.dataset.lay || "{}"), rect = headCanvas.getBoundingClientRect();
  const x = ev.clientX - rect.left, r = Math.round((ev.clientY - rect.top) / ROW) - 1;
  const rows = (headCanvas.dataset.rows || "").split(",").map(Number), cols = (headCanvas.dataset.cols || "").split(",").map(Number);
  if (x < lay.left && r >= 0 && r < rows.length) return data.queries[rows[r]];
  if (x > lay.right && r >= 0 && r < cols.length) return data.keys[cols[r]];
  return "";
}
headCanvas.onmousemove = ev => {
  headCanvas.title = headLabelAt(ev);
  const i = headRowAt(ev);
  if (i !== state.hover) { state.hover = i; drawHeadView(); }
};
headCanvas.onmouseleave = () => { state.hover = -1; drawHeadView(); };
headCanvas.onclick = ev => {
  const i = headRowAt(ev);
  if (i < 0) { state.select = []; update(); return; }
  const has = state.select.includes(i);
  if (ev.ctrlKey || ev.metaKey) state.select = has ? state.select.filter(s => s !== i) : [...state.select, i];
  else state.select = has && state.select.length === 1 ? [] : [i];
  update();
};

// -- the model view
// The heatmap of m, its cells `cell` px a side, below and right of a margin (the labels' room).
function paint(canvas, m, cell, margin) {
  margin = margin || { left: 0, top: 0 };
  const g = fitCanvas(canvas, margin.left + m[0].length * cell, margin.top + m.length * cell);
  m.forEach((row, i) => row.forEach((w, j) => {
    g.fillStyle = data.colormap[Math.max(0, Math.min(255, Math.round(w * 255)))];
    g.fillRect(margin.left + j * cell, margin.top + i * cell, cell, cell);
  }));
  return g;
}
function drawModelView() {
  const rows = shown("queries"), cols = shown("keys");
  grid.textContent = "";
  grid.style.gridTemplateColumns = "auto repeat(" + H + ", auto)";
  const side = Math.max(24, Math.min(96, Math.floor((window.innerWidth - 140) / H) - 8));
  const cell = Math.max(0.25, side / Math.max(rows.length, cols.length));
  el("div", {}, grid);
  for (let h = 0; h < H; ++h) el("div", { className: "label", textContent: "head " + (h + 1) }, grid).style.textAlign = "center";
  for (let l = 0; l < L; ++l) {
    el("div", { className: "label", textContent: "layer " + l }, grid);
    for (let h = 0; h < H; ++h) {
      const c = el("canvas", { title: "layer " + l + ", head " + (h + 1) }, grid);
      paint(c, matrix(l, h, rows, cols), cell);
      if (state.picked && state.picked[0] === l && state.picked[1] === h) c.className = "picked";
      c.onclick = () => { state.picked = [l, h]; state.layer = l; update(); };
    }
  }
  drawDetail(rows, cols);
}
function drawDetail(rows, cols) {
  detail.textContent = "";
  if (!state.picked) { el("p", { className: "note", textContent: "Click a thumbnail for its full heatmap." }, detail); return; }
  const [l, h] = state.picked, m = matrix(l, h, rows, cols);
  el("h2", { textContent: "layer " + l + ", head " + (h + 1) + " (" + rows.length + "×" + cols.length + ")" }, detail);
  const hover = el("div", { id: "hover" }, detail);
  const cell = Math.max(2, Math.min(28, Math.floor(Math.min(window.innerWidth * 0.6, 900) / Math.max(rows.length, cols.length))));
  const canvas = el("canvas", { id: "detail-canvas" }, detail);
  const labels = cell >= 10, g0 = canvas.getContext("2d");
  g0.font = "12px system-ui, sans-serif";
  const width = list => Math.min(DETAIL_LABEL_MAX, Math.max(0, ...list.map(t => g0.measureText(t).width)));
  const margin = labels ? { left: width(rows.map(i => data.queries[i])) + 8, top: width(cols.map(j => data.keys[j])) + 8 }
    : { left: 0, top: 0 };
  const g = paint(canvas, m, cell, margin);
  if (labels) {  // queries on the left, keys above (turned), long ones cut with "…"
    g.font = "12px system-ui, sans-serif"; g.fillStyle = "#e6e6e6"; g.textBaseline = "middle"; g.textAlign = "right";
    rows.forEach((qi, i) => g.fillText(fitLabel(g, data.queries[qi], margin.left - 8), margin.left - 4, margin.top + (i + 0.5) * cell));
    cols.forEach((ki, j) => {
      g.save(); g.translate(margin.left + (j + 0.5) * cell, margin.top - 4); g.rotate(-Math.PI / 2);
      g.textAlign = "left"; g.fillText(fitLabel(g, data.keys[ki], margin.top - 8), 0, 0); g.restore();
    });
  }
  canvas.onmousemove = ev => {
    const rect = canvas.getBoundingClientRect();
    const i = Math.floor((ev.clientY - rect.top - margin.top) / cell), j = Math.floor((ev.clientX - rect.left - margin.left) / cell);
    const inRows = i >= 0 && i < rows.length, inCols = j >= 0 && j < cols.length;
    // Over a label: its whole text as the tooltip.
    canvas.title = labels && inRows && j < 0 ? data.queries[rows[i]] : labels && inCols && i < 0 ? data.keys[cols[j]] : "";
    if (inRows && inCols) hover.textContent = data.queries[rows[i]] + " → " + data.keys[cols[j]] + ": " + m[i][j].toFixed(4);
  };
}

function update() {
  writeHash();
  headTab.classList.toggle("on", state.view === "head");
  modelTab.classList.toggle("on", state.view === "model");
  layerSelect.value = state.layer;
  special.classList.toggle("on", state.hideSpecial);
  chipButtons.forEach((b, h) => b.classList.toggle("off", !state.heads.has(h)));
  meanChip.classList.toggle("on", state.mean);
  const head = state.view === "head";
  layerSelect.style.display = head && L > 1 ? "" : "none";
  headView.style.display = topList.style.display = chips.style.display = head ? "" : "none";
  modelView.style.display = detail.style.display = head ? "none" : "";
  if (head) drawHeadView(); else drawModelView();
  legend.textContent = (head ? "Lines: each head's weight from a query (left) to a key (right), as opaque as the weight."
    : "Colours: viridis from 0 (dark) to 1 (yellow).") +
    (state.hideSpecial ? " Special tokens hidden: each row is renormalised over the keys left." : "");
  document.body.dataset.state = location.hash;
}
readHash();
window.addEventListener("hashchange", () => { readHash(); update(); });
window.addEventListener("resize", update);
update();
document.body.dataset.ready = "1";
})();
)JS";

}  // namespace attnviz::core
