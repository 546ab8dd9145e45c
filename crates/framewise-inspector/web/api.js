// The server's API (docs/INSPECTOR.md) and the small helpers every view shares: formatting
// that never invents precision, and DOM building that never parses capture text as HTML.

import { decodeStrip } from "./stripdata.js";

/** The per-run token from the page's own address, or null when the address has none. */
export function token() {
  return new URLSearchParams(location.search).get("token");
}

/** An API answer that was not 200: `status` and the server's one-line `error`. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** GET /api/<path> with the token (query parameter and header); resolves to the JSON. */
export async function get(path, params = {}) {
  const query = new URLSearchParams({ ...params, token: token() ?? "" });
  const response = await fetch(`/api/${path}?${query}`, {
    headers: { "X-Framewise-Token": token() ?? "" },
  });
  let body = null;
  try {
    body = await response.json();
  } catch {
    // A non-JSON answer: reported below by its status.
  }
  if (!response.ok) {
    throw new ApiError(response.status, body?.error ?? `${response.status} ${response.statusText}`);
  }
  return body;
}

/** GET /api/strip with the token; resolves to the decoded strip (stripdata.js). */
export async function getStrip() {
  return decodeStrip(await getBytes("strip"));
}

/**
 * GET /api/<path> with the token, for a binary answer (/api/window); resolves to its bytes
 * (an ArrayBuffer). An error is JSON, as for `get`. `priority` is the fetch's priority hint.
 */
export async function getBytes(path, params = {}, { priority = "auto" } = {}) {
  const query = new URLSearchParams({ ...params, token: token() ?? "" });
  const response = await fetch(`/api/${path}?${query}`, {
    headers: { "X-Framewise-Token": token() ?? "" },
    priority,
  });
  if (!response.ok) {
    let body = null;
    try {
      body = await response.json();
    } catch {
      // A non-JSON answer: reported by its status.
    }
    throw new ApiError(response.status, body?.error ?? `${response.status} ${response.statusText}`);
  }
  return response.arrayBuffer();
}

export const DASH = "—";

/** Milliseconds as the analysis reports them, with precision that shrinks with the value. */
export function fmtMs(ms) {
  if (ms === null || ms === undefined) return DASH;
  const abs = Math.abs(ms);
  if (abs >= 100) return `${ms.toFixed(1)} ms`;
  if (abs >= 1) return `${ms.toFixed(2)} ms`;
  if (abs >= 0.01 || abs === 0) return `${ms.toFixed(3)} ms`;
  return `${(ms * 1000).toFixed(2)} µs`;
}

/** Integer nanoseconds in the unit that reads best (ns, µs or ms); the exact value is `nsExact`. */
export function fmtNs(ns) {
  if (ns === null || ns === undefined) return DASH;
  const abs = Math.abs(ns);
  if (abs >= 1e6) return fmtMs(ns / 1e6);
  if (abs >= 1e3) return `${(ns / 1e3).toFixed(abs >= 1e5 ? 0 : abs >= 1e4 ? 1 : 2)} µs`;
  return `${ns} ns`;
}

/** The exact recorded value: "1 234 567 ns". */
export function nsExact(ns) {
  if (ns === null || ns === undefined) return DASH;
  return `${fmtCount(ns)} ns`;
}

/**
 * The formats fmtCount uses, made once: `toLocaleString` with options builds a new formatter
 * on every call, which a table or a flame graph of a few hundred rows pays tens of ms for.
 */
const COUNT_FORMATS = [0, 3].map((digits) => new Intl.NumberFormat("en-US", { maximumFractionDigits: digits }));

/** A count or other plain number, grouped; fractions keep up to three decimals. */
export function fmtCount(value) {
  if (value === null || value === undefined) return DASH;
  return COUNT_FORMATS[Number.isInteger(value) ? 0 : 1].format(value).replace(/,/g, "\u2009");
}

/** A count and its noun, singular for exactly one: `plural(1, "frame", "frames")` → "1 frame". */
export function plural(count, one, many) {
  return `${fmtCount(count)} ${count === 1 ? one : many}`;
}

/** A fraction as a percentage: 0.051 → "5.1%". */
export function fmtPct(fraction) {
  if (fraction === null || fraction === undefined) return DASH;
  return `${(fraction * 100).toFixed(1)}%`;
}

/**
 * Builds an element: `h("td", {class: "num", title: "…", onclick: f}, "text", child)`.
 * Strings become text nodes (capture names are never parsed as HTML); null children are
 * skipped; `dataset` takes an object.
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "dataset") Object.assign(element.dataset, value);
    else if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Replaces an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

/** A table: `columns` are header labels (a leading "#" right-aligns nothing special). */
export function table(columns, rows, attrs = {}, { numericFrom = null, numeric: numericColumns = [] } = {}) {
  // Numbers are right-aligned, and so are the headers above them.
  const numeric = (i) => (numericFrom !== null && i >= numericFrom) || numericColumns.includes(i);
  return h(
    "table",
    attrs,
    h("thead", {}, h("tr", {}, columns.map((label, i) => h("th", { class: numeric(i) ? "num" : null }, label)))),
    h("tbody", {}, rows),
  );
}

/** A table cell for a value that may be null: "—", with the null reason as its title. */
export function cell(text, { reason = null, num = true, id = null } = {}) {
  const empty = text === DASH;
  return h(
    "td",
    { class: [num ? "num" : "", empty ? "null" : ""].join(" ").trim() || null, title: empty ? reason : null, id },
    text,
  );
}

/** Each canvas' CSS width, as its last layout gave it (kept by `widths`). */
const canvasWidths = new WeakMap();
/**
 * Keeps `canvasWidths`: made before any view's own observer, so that a view redrawn for a
 * resize reads its new width. Reading `clientWidth` instead lays the page out then and there
 * whenever anything on it changed since the last layout (in a selection: after the strip and
 * the timeline were redrawn); `fitCanvas` held the page's thread 7-27 ms a selection so.
 */
const widths = new ResizeObserver((entries) => {
  for (const entry of entries) canvasWidths.set(entry.target, entry.contentRect.width);
});

/**
 * The canvas' CSS width: as last laid out, else read (it is watched from then on). A width of
 * 0 (the canvas was hidden) is read again: a view shown and drawn at once is not laid out yet.
 */
function cssWidth(canvas) {
  const known = canvasWidths.get(canvas);
  if (known) return known;
  const width = canvas.clientWidth;
  if (known === undefined) widths.observe(canvas);
  canvasWidths.set(canvas, width);
  return width;
}

/**
 * A canvas sized to its CSS box at the device's pixel ratio; returns the 2D context scaled
 * to CSS pixels and the CSS size, so drawing code never thinks about HiDPI.
 */
export function fitCanvas(canvas, cssHeight) {
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(1, Math.floor(cssWidth(canvas)));
  // Set only when it changes: a style written can make the next read of a box lay the page
  // out again.
  if (cssHeight !== undefined && canvas.style.height !== `${cssHeight}px`) canvas.style.height = `${cssHeight}px`;
  const height = Math.max(1, Math.floor(cssHeight ?? canvas.clientHeight));
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
  }
  const context = canvas.getContext("2d");
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.clearRect(0, 0, width, height);
  return { context, width, height };
}

/**
 * Resolves once what was drawn before the call is on screen: in the first task after the
 * next rendering update (requestAnimationFrame runs before that update's style, layout and
 * paint; a task posted from it runs after them). A hidden page has no rendering updates: it
 * resolves at once there.
 */
export function afterNextPaint() {
  if (document.visibilityState === "hidden") return Promise.resolve();
  return new Promise((resolve) =>
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(null);
    }),
  );
}

let colours = null;

/**
 * The colours the canvases share, read once from the stylesheet's custom properties (the
 * page has one theme): reading a computed style recalculates the page's styles then and there
 * whenever anything changed since, and every canvas redraw asked for them.
 */
export function palette() {
  colours ??= readPalette();
  return colours;
}

function readPalette() {
  const style = getComputedStyle(document.documentElement);
  const read = (name) => style.getPropertyValue(name).trim();
  return {
    fg: read("--fg"),
    muted: read("--muted"),
    grid: read("--grid"),
    bg: read("--panel"),
    period: read("--period"),
    work: read("--work"),
    gpu: read("--gpu"),
    hitch: read("--hitch"),
    hitchWork: read("--hitch-work"),
    paused: read("--paused"),
    dropped: read("--dropped"),
    budget: read("--budget"),
    select: read("--select"),
    range: read("--range"),
    pinned: read("--pinned"),
    better: read("--better"),
    worse: read("--worse"),
  };
}

/** A stable colour per name (scopes, passes), so a scope keeps its colour across frames. */
export function nameColour(name, lightness = 62) {
  let hash = 2166136261;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 16777619);
  const hue = (hash >>> 0) % 360;
  return `hsl(${hue} 55% ${lightness}%)`;
}

/** `text`, cut with "…" to fit `room` CSS pixels in the canvas context `g` ("" when nothing fits). */
export function clip(g, text, room) {
  if (g.measureText(text).width <= room) return text;
  // The longest prefix that fits with its "…", by bisection: a few measurements rather than
  // one per character dropped (a timeline of a thousand labelled spans measured thousands).
  const fits = (end) => g.measureText(`${text.slice(0, end)}…`).width <= room;
  let lo = 1; // the longest prefix known to fit, or 1 when none is known to
  let hi = text.length - 1; // the longest prefix that may fit
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo > 1 && fits(lo) ? `${text.slice(0, lo)}…` : "";
}

/** Shows `tooltip` (the page's tooltip box) with `text`, beside the pointer over `canvas`. */
export function showTooltip(tooltip, canvas, event, text) {
  tooltip.textContent = text;
  tooltip.hidden = false;
  const box = canvas.getBoundingClientRect();
  tooltip.style.left = `${Math.min(box.left + event.offsetX + 14, window.innerWidth - 320) + window.scrollX}px`;
  tooltip.style.top = `${box.top + event.offsetY + 16 + window.scrollY}px`;
}
