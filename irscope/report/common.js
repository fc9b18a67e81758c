"use strict";
// Shared by the trajectory page and the comparison page: escaping, inflating embedded texts, light syntax
// highlighting, and the side-by-side IR view (a diff, or texts aligned by kernel source line).
const errors = [];
window.addEventListener("error", e => { errors.push(String(e.message)); const el = document.getElementById("errors"); el.style.display = "block"; el.textContent = errors.join("\n"); });
const $ = id => document.getElementById(id);
// Every string from a trajectory (kernel name, source, IR, pass names, paths) goes through esc before innerHTML.
const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
const esc = s => String(s).replace(/[&<>"']/g, c => ESC[c]);

async function inflate(b64) {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

function unrle(rle) {  // [value, count, …] → one value per line
  const out = [];
  for (let i = 0; i < rle.length; i += 2) for (let k = 0; k < rle[i + 1]; k++) out.push(rle[i]);
  return out;
}

// A text as the views use it: lines, each line's kernel source line (-1: debug information only, 0: none), kind.
async function irText(b64, rle, kind) {
  const lines = (await inflate(b64)).split("\n");
  const map = unrle(rle);
  while (map.length < lines.length) map.push(0);
  return {lines, map, kind};
}

function stripLoc(s) {  // every ` loc(…)` (balanced parentheses, strings skipped)
  let i = s.indexOf(" loc("), out = "", from = 0;
  while (i >= 0) {
    out += s.slice(from, i);
    let j = i + 5, depth = 1;
    while (j < s.length && depth) {
      const c = s[j];
      if (c === '"') { j++; while (j < s.length && s[j] !== '"') j += s[j] === "\\" ? 2 : 1; }
      else if (c === "(") depth++;
      else if (c === ")") depth--;
      j++;
    }
    from = j; i = s.indexOf(" loc(", from);
  }
  return out + s.slice(from);
}
const clean = (kind, s) => kind === "mlir" ? stripLoc(s) : kind === "llvm-ir" ? s.replace(/, !dbg !\d+/g, "") : s;
// As irscope/report/irlines.py: SSA and #loc renumbering blanked, so an inserted op does not mark every later line.
const normalize = s => s.replace(/(%[A-Za-z_][\w$.-]*?)_\d+\b|%\d+\b|(#loc)\d+\b/g, (m, a, b) => a || b || "%N");

// Light highlighting: the op (or opcode) where a statement names it, then comments, strings, values, types,
// attributes and numbers. No lookbehind and a length cap: LLVM-dialect lines run to thousands of characters.
const CLS = [null, "cm", "st", "v", "ty", "at", "nu"];
const STR = String.raw`("(?:[^"\\]|\\.)*")`, NUM = String.raw`(\b0x[0-9a-fA-F]+\b|-?\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b)`;
const HL = {
  "mlir": {op: /^(\s*(?:[%\w$.#:,\s-]*=\s*)?"?)([a-z_]\w*\.[a-z_][\w.$]*)/,
    tok: new RegExp(String.raw`(\/\/.*$)|${STR}|(%[\w$.#-]+|@[\w$.-]+|\^[\w.]+)|(\b(?:[iuf]\d+|bf16|f8E\w+|index|tensor|memref|vector|none)\b|![\w.]+)|(#[\w$.-]+)|${NUM}`, "g")},
  "llvm-ir": {op: /^(\s*(?:%[\w$.-]+\s*=\s*)?(?:tail\s+)?)([a-z][\w.]*)/,
    tok: new RegExp(String.raw`(;.*$)|${STR}|(%[\w$.-]+|@[\w$.-]+)|(\b(?:i\d+|half|bfloat|float|double|ptr|void|label)\b)|(![\w.]+|#\d+)|${NUM}`, "g")},
  "ptx": {op: /^(\s*(?:@!?%\w+\s+)?)([a-z][\w.:]*)/,
    tok: new RegExp(String.raw`(\/\/.*$)|${STR}|(%[\w$]+|\$[\w$]+)|(\.(?:[usbf]\d+|pred|v[248])\b)|(\.[a-z_]\w*)|${NUM}`, "g")},
  "sass": {op: /^(\s*(?:\/\*[0-9a-f]+\*\/\s*)?(?:@!?U?P\w+\s+)?)([A-Z][A-Z0-9_.]*)/,
    tok: new RegExp(String.raw`(\/\*[0-9a-f]+\*\/|\/\/.*$)|${STR}|(\b(?:U?R\d+|U?RZ|U?P\d+|U?PT|SR_\w+|B\d+)\b)|(\bc\[0x[0-9a-f]+\])|(\.[\w.]+)|${NUM}`, "g")},
  "amdgcn": {op: /^(\s*)([sv]_\w+|global_\w+|buffer_\w+|ds_\w+|flat_\w+|scratch_\w+)/,
    tok: new RegExp(String.raw`(;.*$|\/\/.*$)|${STR}|(\b[vsa]\[\d+:\d+\]|\b[vsa]\d+\b|\bvcc\w*|\bexec\w*)|(\b(?:off|offset:\S+)\b)|(\.[\w.]+)|${NUM}`, "g")},
};
const HL_CAP = 240;  // characters highlighted per line: LLVM struct types would make a span of every `f32,`

function tokens(re, s) {
  re.lastIndex = 0;
  let out = "", last = 0, m;
  while ((m = re.exec(s)) !== null) {
    if (m[0] === "") { re.lastIndex++; continue; }
    let g = 1; while (m[g] === undefined) g++;
    out += esc(s.slice(last, m.index)) + `<span class="${CLS[g]}">${esc(m[0])}</span>`;
    last = re.lastIndex;
  }
  return out + esc(s.slice(last));
}

function hl(kind, line) {
  const s = line.slice(0, HL_CAP), rest = esc(line.slice(HL_CAP));
  const h = HL[kind] || HL.mlir, m = h.op.exec(s);
  if (!m) return tokens(h.tok, s) + rest;
  return tokens(h.tok, m[1]) + `<span class="op">${esc(m[2])}</span>` + tokens(h.tok, s.slice(m[0].length)) + rest;
}

// difflib-style opcodes [tag, i1, i2, j1, j2] for two short blocks (LCS); null when too large for the browser.
function lcsOps(a, b) {
  const n = a.length, m = b.length;
  if (n * m > 4e6) return null;
  const T = new Uint32Array((n + 1) * (m + 1)), W = m + 1;
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    T[i * W + j] = a[i] === b[j] ? T[(i + 1) * W + j + 1] + 1 : Math.max(T[(i + 1) * W + j], T[i * W + j + 1]);
  const ops = []; let i = 0, j = 0, si = 0, sj = 0;
  const flush = () => { if (i > si || j > sj) ops.push(["replace", si, i, sj, j]); };
  while (i < n && j < m) {
    if (a[i] === b[j]) { flush(); ops.push(["equal", i, i + 1, j, j + 1]); i++; j++; si = i; sj = j; }
    else if (T[(i + 1) * W + j] >= T[i * W + j + 1]) i++; else j++;
  }
  i = n; j = m; flush();
  return ops;
}

// Rows of the side-by-side view: {a, b: line index or null, t: eq | chg | dbg | pair | hdr, h: header html}.
function visible(X) { const v = []; X.map.forEach((s, i) => { if (s >= 0) v.push(i); }); return v; }

function diffRows(A, B, ops, showDebug) {
  const va = visible(A), vb = visible(B), rows = [];
  let pa = 0, pb = 0;  // the next line of each side not yet placed
  const upA = to => { for (; pa < to; pa++) if (showDebug) rows.push({a: pa, b: null, t: "dbg"}); };
  const upB = to => { for (; pb < to; pb++) if (showDebug) rows.push({a: null, b: pb, t: "dbg"}); };
  for (const [tag, i1, i2, j1, j2] of ops) {
    for (let k = 0; k < Math.max(i2 - i1, j2 - j1); k++) {
      const x = i1 + k < i2 ? va[i1 + k] : null, y = j1 + k < j2 ? vb[j1 + k] : null;
      if (x !== null) upA(x);
      if (y !== null) upB(y);
      rows.push({a: x, b: y, t: tag === "equal" ? "eq" : "chg"});
      if (x !== null) pa = x + 1;
      if (y !== null) pb = y + 1;
    }
  }
  upA(A.lines.length); upB(B.lines.length);
  return rows;
}

// Texts in different languages (or too long to diff) aligned by kernel source line: one block per pair
// [line in A, line in B] of `pairs`, then lines neither names, then the lines that map to no source line.
function lineRows(A, B, pairs, srcA, srcB) {
  const group = X => { const g = new Map(); X.map.forEach((s, i) => { if (s >= 0) { if (!g.has(s)) g.set(s, []); g.get(s).push(i); } }); return g; };
  const ga = group(A), gb = group(B), rows = [], seenA = new Set(), seenB = new Set();
  const all = pairs.slice();
  for (const k of [...ga.keys()].sort((x, y) => x - y)) if (k > 0 && !pairs.some(p => p[0] === k)) all.push([k, null]);
  for (const k of [...gb.keys()].sort((x, y) => x - y)) if (k > 0 && !pairs.some(p => p[1] === k)) all.push([null, k]);
  all.push([0, 0]);
  const same = A.kind === B.kind;
  for (const [la, lb] of all) {
    const xs = la !== null && !seenA.has(la) ? ga.get(la) || [] : [], ys = lb !== null && !seenB.has(lb) ? gb.get(lb) || [] : [];
    seenA.add(la); seenB.add(lb);
    if (!xs.length && !ys.length) continue;
    const code = la ? srcA[la - 1] : lb ? srcB[lb - 1] : null;
    const where = la === lb ? `line ${la}` : `line ${la ?? "–"} → ${lb ?? "–"}`;
    rows.push({t: "hdr", h: code === null ? "no kernel source line" : `${where}: <b>${esc((code || "").trim())}</b> (${xs.length} → ${ys.length} lines)`});
    const ops = same ? lcsOps(xs.map(i => normalize(clean(A.kind, A.lines[i]))), ys.map(i => normalize(clean(B.kind, B.lines[i])))) : null;
    if (ops) {
      for (const [tag, i1, i2, j1, j2] of ops) for (let k = 0; k < Math.max(i2 - i1, j2 - j1); k++)
        rows.push({a: i1 + k < i2 ? xs[i1 + k] : null, b: j1 + k < j2 ? ys[j1 + k] : null, t: tag === "equal" ? "eq" : "chg"});
    } else {
      for (let k = 0; k < Math.max(xs.length, ys.length); k++) rows.push({a: xs[k] ?? null, b: ys[k] ?? null, t: "pair"});
    }
  }
  return rows;
}

// A 20,000-line text drawn whole is 40 MB of HTML that takes minutes to lay out: rows are drawn ROW_CAP at a
// time, lines cut at LINE_CAP characters.
const ROW_CAP = 1000, LINE_CAP = 800;
const COLS = `<colgroup><col class="ln"><col class="sl"><col><col class="ln"><col class="sl"><col></colgroup>`;

// The side-by-side view of two texts in a container, with its state: debug filter, folding, search, source line.
class SideBySide {
  constructor(el, opts) { this.el = el; this.opts = opts; this.rows = []; this.open = new Set(); this.hits = []; this.cur = -1; }
  set(A, B, rows) { this.A = A; this.B = B; this.rows = rows; this.open = new Set(); this.limit = ROW_CAP; this.draw(); }
  text(X, i) { const s = X.lines[i]; return X.map[i] < 0 ? s : clean(X.kind, s); }
  matches(r, term) {
    return (r.a !== null && r.a !== undefined && this.text(this.A, r.a).toLowerCase().includes(term)) ||
           (r.b !== null && r.b !== undefined && this.text(this.B, r.b).toLowerCase().includes(term));
  }
  draw() {
    const o = this.opts(), term = o.term.toLowerCase(), CTX = 3, rows = this.rows, n = rows.length;
    const keep = new Uint8Array(n);  // rows shown when folding: changes and search hits, with context
    let hits = 0;
    for (let i = 0; i < n; i++) {
      const hit = term && rows[i].t !== "hdr" && this.matches(rows[i], term);
      if (hit) hits++;
      if (rows[i].t !== "eq" || hit) for (let k = Math.max(0, i - CTX); k <= Math.min(n - 1, i + CTX); k++) keep[k] = 1;
    }
    const out = [];
    let shown = 0, i = 0;
    for (; i < n && shown < this.limit; i++, shown++) {
      const r = rows[i];
      if (o.fold && !keep[i] && !this.open.has(i)) {
        let j = i; while (j < n && !keep[j] && !this.open.has(j)) j++;
        if (j - i > 1) { out.push(`<tr class="fold" data-from="${i}" data-to="${j}"><td colspan="6">⋯ ${j - i} unchanged lines (click to show)</td></tr>`); i = j - 1; continue; }
      }
      if (r.t === "hdr") { out.push(`<tr class="hdr"><td colspan="6">${r.h}</td></tr>`); continue; }
      const hit = term && this.matches(r, term);
      const cls = (i, side) => i === null || i === undefined ? "gap" : r.t === "chg" ? side : r.t === "dbg" ? "dbg" : "";
      out.push(`<tr>${this.cell(this.A, r.a, cls(r.a, "del"), hit, o.line)}${this.cell(this.B, r.b, cls(r.b, "add"), hit, o.line)}</tr>`);
    }
    if (i < n) out.push(`<tr class="fold more"><td colspan="6">⋯ ${n - i} more rows not drawn yet (click to draw ${ROW_CAP} more)</td></tr>`);
    this.el.innerHTML = `<table class="diff">${COLS}${out.join("")}</table>`;
    this.hitCount = hits;
    this.cur = -1;
    for (const tr of this.el.querySelectorAll("tr.fold")) tr.addEventListener("click", () => {
      if (tr.classList.contains("more")) this.limit += ROW_CAP;
      else for (let k = +tr.dataset.from; k < +tr.dataset.to; k++) this.open.add(k);
      this.draw();
    });
  }
  cell(X, i, cls, hit, line) {
    if (i === null || i === undefined) return `<td class="ln"></td><td class="sl"></td><td class="c gap"></td>`;
    const s = X.map[i] > 0 ? X.map[i] : "", want = line;
    const txt = this.text(X, i), term = this.opts().term.toLowerCase();
    const c = [cls, hit && term && txt.toLowerCase().includes(term) ? "hit" : "", want && s === want ? "src" : ""].filter(x => x).join(" ");
    const cut = txt.length > LINE_CAP ? `<span class="cm"> … ${txt.length - LINE_CAP} more characters</span>` : "";
    const shown = cut ? txt.slice(0, LINE_CAP) : txt;
    return `<td class="ln">${i + 1}</td><td class="sl" data-sl="${s}">${s}</td><td class="c ${c}" data-sl="${s}">${X.map[i] < 0 ? esc(shown) : hl(X.kind, shown)}${cut}</td>`;
  }
  next() {  // scroll to the next search hit
    const hits = this.el.querySelectorAll("td.hit");
    if (!hits.length) return;
    hits.forEach(h => h.classList.remove("cur"));
    this.cur = (this.cur + 1) % hits.length;
    hits[this.cur].classList.add("cur");
    hits[this.cur].scrollIntoView({block: "center"});
  }
}

function fmtDelta(obj, sign) {
  return Object.entries(obj || {}).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1])).slice(0, 5)
    .map(([k, v]) => `<span class="${(sign || Math.sign(v)) > 0 ? "pos" : "neg"}">${esc(k)} ${sign < 0 ? "−" + v : (v > 0 ? "+" + v : v)}</span>`).join(" ");
}
