// The inspector's page: loads the capture's views from the server (every number comes from
// the API), wires the selection (a frame, a range, a pinned frame) between them, and marks
// the body for tests: data-ready after the first full render, data-selected-row after each
// frame's views are drawn, data-error when the page cannot show the capture, data-strip-painted
// once the strip is on screen, data-loading while the server still loads the capture (the
// strip is then drawn from the file's directory, and the rest waits for the load). A
// followed capture (`framewise view --follow`) is redrawn on each reload the server reports.

import { ApiError, DASH, afterNextPaint, fill, fmtCount, fmtMs, fmtNs, get, getStrip, h, table, token } from "./api.js";
import { Strip } from "./strip.js";
import { Timeline } from "./timeline.js";
import { renderStats } from "./stats.js";
import { Detail } from "./series.js";
import { renderStructure } from "./structure.js";
import { renderCompare, renderComparison } from "./compare.js";
import { follow } from "./follow.js";
import { Flame } from "./flame.js";
import { Search } from "./search.js";
import { SpanDetail } from "./spandetail.js";
import { renderIssues } from "./issues.js";

const $ = (id) => document.getElementById(id);

const state = {
  capture: null,
  strip: null,
  hitches: null,
  rowOfIndex: new Map(),
  selected: null,
  range: null,
  pinned: null,
  selectSeq: 0,
  statsSeq: 0,
};
let strip;
let timeline;
let detail;
let flame;
let search;
let spanDetail;

function showError(kind, message) {
  document.body.dataset.error = kind;
  fill($("error"), message);
  $("error").hidden = false;
}

function failed(error) {
  if (error instanceof ApiError && error.status === 403) {
    showError(
      "token",
      "The server refused this page's token (403). Each `framewise view` run has its own token: " +
        "open the exact address it printed (…/?token=…).",
    );
  } else {
    showError("api", `Could not load the capture: ${error.message}`);
  }
}

function renderHeader(capture) {
  const facts = [
    ["file", capture.file],
    ["source", capture.source_version === undefined ? capture.source : `${capture.source} v${capture.source_version}`],
    ["level", capture.level ?? DASH],
    ["build", capture.build ?? DASH],
    ["timing", capture.grade.timing, `timing regime; counters are ${capture.grade.counters}`],
    ["adapter", capture.adapter_name ? `${capture.adapter} (${capture.adapter_name})` : capture.adapter],
    ["frames", fmtCount(capture.frame_count)],
    ["budget", fmtNs(capture.frame_budget_ns)],
    ["GPU timed", capture.gpu_timed ? "yes" : "no"],
    ["dropped spans", fmtCount(capture.dropped_spans), "spans the recorder could not keep; counted, never hidden"],
  ];
  fill(
    $("capture-facts"),
    facts.map(([term, value, title]) =>
      h("div", { title, id: `fact-${term.replace(/ /g, "-")}`, class: term === "dropped spans" && capture.dropped_spans > 0 ? "warn" : null }, h("dt", {}, term), h("dd", {}, value)),
    ),
  );
  document.title = `${capture.file} — framewise inspector`;
  renderBanner(capture);
  $("capture-notes")?.remove();
  if (capture.notes.length > 0) {
    $("header").append(h("ul", { id: "capture-notes", class: "notes small" }, capture.notes.map((note) => h("li", {}, note))));
  }
}

/** How many places the banner lists where frames are missing before it summarizes the rest. */
const LOST_PLACES_SHOWN = 8;

/**
 * The frames a recovered capture lost, and where: every gap in the capture's own frame
 * indices (between two frames that survived), and, when the file ends inside a record or was
 * never closed, its end (what was written after the last surviving frame is unknown). The
 * count is data-lost on the element (tests).
 */
function lostFrames(capture, stripData) {
  const index = stripData?.index ?? [];
  const gaps = [];
  for (let row = 1; row < index.length; row++) {
    const missing = index[row] - index[row - 1] - 1;
    if (missing > 0) gaps.push({ after: index[row - 1], before: index[row], missing });
  }
  const lost = gaps.reduce((sum, gap) => sum + gap.missing, 0);
  const cutOff = capture.defects.some((d) => d.kind === "truncated-tail" || d.kind === "unclosed");
  const places = gaps.slice(0, LOST_PLACES_SHOWN).map((gap) => `${fmtCount(gap.missing)} between frames ${gap.after} and ${gap.before}`);
  if (gaps.length > LOST_PLACES_SHOWN) places.push(`and ${fmtCount(gaps.length - LOST_PLACES_SHOWN)} more places`);
  const last = index.length ? index[index.length - 1] : null;
  return h(
    "p",
    { id: "lost", dataset: { lost: String(lost) } },
    `${fmtCount(lost)} ${lost === 1 ? "frame" : "frames"} lost between surviving frames`,
    places.length ? ` (${places.join("; ")})` : null,
    ".",
    cutOff ? (last === null ? " The file ends before its first frame." : ` The file ends after frame ${last}: whatever was written after it is lost (how many frames is unknown).`) : null,
  );
}

/**
 * The defects banner. While a followed file is still being written, an unclosed file and a
 * record cut mid-write are expected: it says "live" rather than "recovered", and still lists
 * what the reader reported.
 */
function renderBanner(capture) {
  const banner = $("banner");
  const defects = () => h("ul", { id: "defects" }, capture.defects.map((defect) => h("li", {}, h("code", {}, defect.kind), " ", defect.message)));
  const live = capture.follow !== null && capture.follow !== undefined && !capture.follow.closed;
  if (live) {
    fill(
      banner,
      h("strong", {}, "Live — the file is still being written: "),
      "new frames appear as they are written.",
      capture.defects.length ? [" What the reader says of its unfinished end:", defects()] : null,
    );
  } else if (capture.recovered) {
    fill(
      banner,
      h("strong", {}, "This capture was recovered: "),
      "it was cut off or damaged, and what is shown is what survived.",
      lostFrames(capture, state.strip),
      defects(),
    );
  }
  banner.classList.toggle("live", live);
  banner.dataset.kind = live ? "live" : capture.recovered ? "recovered" : "";
  banner.hidden = !live && !capture.recovered;
}

function renderHitches(hitches) {
  const rows = hitches.hitches.map((hitch) => {
    const row = state.rowOfIndex.get(hitch.frame);
    const [top, ...rest] = hitch.classification;
    return h(
      "tr",
      { class: "pick", id: `hitch-${hitch.frame}`, dataset: { row: String(row), frame: String(hitch.frame) }, onclick: () => row !== undefined && select(row) },
      h("td", { class: "num" }, String(hitch.frame)),
      h("td", {}, hitch.phase ?? DASH),
      h("td", { class: "num" }, fmtMs(hitch.duration_ms)),
      h("td", { class: "num" }, `+${fmtMs(hitch.excess_ms)}`),
      h(
        "td",
        { class: "guess" },
        // One line each, clipped to the panel (the whole text is the title), so that the
        // list shows ten and more hitches at once.
        top
          ? [
              h("div", { class: "evidence", title: top.evidence }, h("b", {}, top.guess), ` (${top.confidence}) · ${top.evidence}`),
              rest.length
                ? h("div", { class: "evidence muted", title: rest.map((guess) => `${guess.guess} (${guess.confidence}): ${guess.evidence}`).join("\n") }, `also ${rest.map((guess) => `${guess.guess} (${guess.confidence})`).join(", ")}`)
                : null,
            ]
          : DASH,
      ),
    );
  });
  fill(
    $("hitches"),
    h("h2", {}, `Hitches `, h("span", { class: "muted" }, `${rows.length} in ${fmtCount(hitches.frames_judged)} frames judged`)),
    h("p", { class: "muted small" }, hitches.rule.rule),
    rows.length
      ? h("div", { class: "scroll" }, table(["frame", "phase", "period", "excess", "best guess · evidence"], rows, { id: "hitch-table", class: "data" }, { numeric: [0, 2, 3] }))
      : h("p", {}, "No frame broke the hitch rule."),
  );
  $("hitches").dataset.count = String(rows.length);
}

async function loadStats() {
  const seq = ++state.statsSeq;
  const params = state.range ? { from: state.range.from, to: state.range.to } : {};
  const stats = await get("stats", params);
  if (seq !== state.statsSeq) return;
  renderStats($("stats"), stats, (kind, name) => detail.show(kind, name).catch(failed));
  document.body.dataset.range = `${stats.range.from}-${stats.range.to}`;
}

function setRange(range) {
  state.range = range && range.to - range.from > 0 ? range : null;
  strip.setRange(state.range);
  if (timeline) timeline.range = state.range;
  loadStats().catch(failed);
  flame?.changed("range");
}

/**
 * Selects a row: every view follows. The timeline fits the frame, unless the selection came
 * from a click in the timeline itself (`fit: false`: the view the user chose stays).
 */
async function select(row, { fit = true } = {}) {
  row = Math.max(0, Math.min(state.capture.frame_count - 1, row));
  const seq = ++state.selectSeq;
  state.selected = row;
  strip.setSelected(row);
  timeline.select(row, state.range, { fit });
  detail.setSelected(row);
  // The timeline's spans first (a frame's spans is what a selection is for): the panels'
  // documents are asked for once they are drawn (asked for beside them, the server decoded
  // the frame for them while the page waited for its spans), and rendered once they are on
  // screen (rendered in the same task as the draw, their DOM was laid out and painted before
  // the spans' pixels). A selection overtaken meanwhile asks for nothing.
  await timeline.drawn();
  if (seq !== state.selectSeq) return;
  const comparing = state.pinned !== null && state.pinned !== row;
  const [frame, structure, compare] = await Promise.all([
    get("frame", { row }),
    get("structure", { row }),
    comparing ? get("compare", { a: state.pinned, b: row }) : null,
    afterNextPaint(),
  ]);
  if (seq !== state.selectSeq) return;
  flame.changed("frame");
  renderCaption(frame);
  renderStructure($("structure"), structure);
  renderComparePanel(compare);
  for (const tr of document.querySelectorAll("#hitches tr.selected")) tr.classList.remove("selected");
  const hitchRow = $(`hitch-${frame.index}`);
  if (hitchRow) {
    hitchRow.classList.add("selected");
    // The list follows the selection: scroll its own box (never the page) to the row.
    const list = hitchRow.closest(".scroll");
    if (list) {
      const top = hitchRow.offsetTop - list.querySelector("thead").offsetHeight;
      if (top < list.scrollTop || hitchRow.offsetTop + hitchRow.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = Math.max(0, top);
    }
  }
  // Whether the selected frame's spans were on screen before these panels were rendered
  // (tests: the panels wait for them).
  document.body.dataset.panelsAfterSpans = String(timeline.canvas.dataset.paintedRow === String(row));
  document.body.dataset.selectedRow = String(row);
}

function renderCaption(frame) {
  const dropped = frame.dropped_spans;
  fill(
    $("timeline-caption"),
    `frame ${frame.index} (row ${frame.row})${frame.phase ? ` · ${frame.phase}` : ""}${frame.paused ? " · paused" : ""}`,
    ` · work ${fmtNs(frame.work_ns)} · period ${frame.period_ns === null || frame.period_ns === undefined ? `${DASH} (unknown)` : fmtNs(frame.period_ns)}`,
    ` · GPU ${fmtNs(frame.gpu_ns ?? null)} · `,
    h("span", { id: "timeline-dropped", class: dropped > 0 ? "warn" : null }, `dropped spans: ${fmtCount(dropped)}`),
    frame.hitch ? h("span", { class: "hitch-tag" }, ` HITCH: ${frame.hitch.classification[0]?.guess ?? "unclassified"}`) : null,
  );
}

function renderComparePanel(compare) {
  renderCompare($("compare"), {
    pinned: state.pinned,
    selected: state.selected,
    compare,
    onPin: () => pin(state.selected),
    onUnpin: () => pin(null),
  });
}

function pin(row) {
  state.pinned = row;
  strip.setPinned(row);
  document.body.dataset.pinnedRow = row === null ? "" : String(row);
  renderComparePanel(null);
}

function onKey(event) {
  if (state.selected === null || event.target.closest?.("input, textarea, select")) return;
  if (event.key === "/") {
    event.preventDefault();
    search.focus();
    return;
  }
  if (!event.ctrlKey && !event.metaKey && !event.altKey && timeline.key(event.key)) {
    event.preventDefault();
    return;
  }
  const step = event.shiftKey ? 10 : 1;
  const moves = { ArrowLeft: -step, ArrowRight: step, Home: -Infinity, End: Infinity };
  if (event.key in moves) {
    event.preventDefault();
    const target = state.selected + moves[event.key];
    select(Number.isFinite(target) ? target : target < 0 ? 0 : state.capture.frame_count - 1).catch(failed);
  } else if (event.key === "p" || event.key === "P") {
    pin(state.selected);
  } else if (event.key === "Escape") {
    setRange(null);
  }
}

async function main() {
  if (!token()) {
    showError(
      "token",
      "This page needs the token from the address `framewise view` printed (http://127.0.0.1:PORT/?token=…). " +
        "Open that exact address; the token changes with every run.",
    );
    return;
  }
  const [first, loading] = await Promise.all([getStrip(), get("loading")]);
  if (loading.state !== "ready") await whileLoading(first, loading);
  const [capture, stripData, hitches] = await Promise.all([get("capture"), first.complete ? first : getStrip(), get("hitches")]);
  adopt(capture, stripData, hitches);
  renderHeader(capture);
  $("main").hidden = false;
  if (capture.follow) follow(capture, $("live"), (next) => refresh(next).catch(failed));
  if (capture.frame_count === 0) {
    const writing = capture.follow && !capture.follow.closed;
    showError("empty", writing ? "No frame has been written yet: frames appear as the game writes them." : "This capture has no frames: nothing to show.");
    return;
  }
  await showViews();
}

/** How often the page asks how far the load is, ms. */
const LOADING_POLL_MS = 150;

/** Marks the body once the strip's pixels are on screen (the frame after it was drawn). */
function markPainted() {
  if (document.body.dataset.stripPainted) return;
  requestAnimationFrame(() => (document.body.dataset.stripPainted = String(Math.round(performance.now()))));
}

/**
 * The server is still loading the capture: draws the strip it sent (from the file's directory:
 * no phase, no dropped spans yet), says how far the load is, and returns once it is done (throws
 * if it failed). A click on the strip meanwhile picks the frame the page opens on.
 */
async function whileLoading(stripData, loading) {
  document.body.dataset.loading = "1";
  $("main").hidden = false;
  strip = new Strip($("strip"), $("tooltip"), stripData, {
    onSelect: (row) => {
      state.wanted = stripData.index[row];
      strip.setSelected(row);
    },
    onRange: () => strip.setRange(null),
  });
  strip.draw();
  markPainted();
  for (;;) {
    renderLoading(loading);
    if (loading.state === "ready") break;
    if (loading.state === "failed") throw new Error(`loading it failed: ${loading.error}`);
    await new Promise((resolve) => setTimeout(resolve, LOADING_POLL_MS));
    loading = await get("loading");
  }
  $("loading").hidden = true;
  delete document.body.dataset.loading;
}

/** The load's progress under the strip. */
function renderLoading(loading) {
  const reading = loading.stage !== "analysing" && loading.total > 0;
  fill(
    $("loading"),
    h("strong", {}, "Loading the capture: "),
    reading
      ? `${loading.stage} ${fmtCount(loading.done)} of ${fmtCount(loading.total)} ${loading.unit ?? ""} `
      : loading.stage === "analysing"
        ? "every frame is read; finding hitches and computing statistics "
        : "starting ",
    h("progress", { max: String(Math.max(1, loading.total)), value: reading ? String(loading.done) : null }),
    h("span", { class: "muted" }, " · the strip is drawn from the file's directory; phases, dropped spans, the timeline, statistics and hitches appear once the capture is loaded"),
  );
  $("loading").hidden = false;
  $("loading").dataset.state = loading.state;
}

function adopt(capture, stripData, hitches) {
  state.capture = capture;
  state.strip = stripData;
  state.hitches = hitches;
  state.rowOfIndex = new Map();
  stripData.index.forEach((index, row) => state.rowOfIndex.set(index, row));
}

/**
 * The row the page opens on: the first hitch (by row), else the worst frame (the longest
 * period; with no period known, the longest work), else row 0.
 */
function openingRow(stripData, hitches) {
  let first = null;
  for (const hitch of hitches.hitches) {
    const row = state.rowOfIndex.get(hitch.frame);
    if (row !== undefined && (first === null || row < first)) first = row;
  }
  if (first !== null) return first;
  const worst = (values) => {
    let best = null;
    values.forEach((value, row) => {
      if (value !== null && value !== undefined && (best === null || value > values[best])) best = row;
    });
    return best;
  };
  return worst(stripData.period_ns) ?? worst(stripData.work_ns) ?? 0;
}

/** The views, drawn for the first time. */
async function showViews() {
  const { capture, strip: stripData, hitches } = state;
  const onStrip = { onSelect: (row) => select(row).catch(failed), onRange: setRange };
  if (strip) {
    // Drawn from the directory while the capture loaded: now the loaded capture's strip.
    Object.assign(strip, onStrip);
    strip.setData(stripData);
  } else {
    strip = new Strip($("strip"), $("tooltip"), stripData, onStrip);
  }
  timeline = new Timeline($("timeline"), $("tooltip"), stripData, {
    onSelect: (row) => select(row, { fit: false }).catch(failed),
    onSpan: (hit) => spanDetail.show(hit, { index: state.strip.index[hit.span.row], begin_ns: state.strip.begin_ns[hit.span.row] }).catch(failed),
    onView: (rows) => strip.setView(rows),
  });
  spanDetail = new SpanDetail($("span-detail"), {
    onJump: (row) => select(row).catch(failed),
    onSeries: (kind, name) => detail.show(kind, name).catch(failed),
  });
  detail = new Detail($("detail"), $("tooltip"), (row) => select(row).catch(failed));
  search = new Search($("search"), $("search-results"), (row, run) => {
    select(row).catch(failed);
    if (run) timeline.focus(run);
  });
  flame = new Flame($("flame-panel"), $("tooltip"), capture.threads, () => ({ row: state.selected, range: state.range, frames: state.capture.frame_count }));
  strip.draw();
  markPainted();
  renderHitches(hitches);
  document.addEventListener("keydown", onKey);
  const diff = capture.compare ? get("comparison").then((body) => {
    renderComparison($("diff"), body);
    $("diff").hidden = false;
  }) : null;
  const wanted = state.wanted === undefined ? undefined : state.rowOfIndex.get(state.wanted);
  await Promise.all([loadStats(), select(wanted ?? openingRow(stripData, hitches)), diff, loadIssues()]);
  document.body.dataset.ready = "1";
}

/**
 * The Issues panel, when the capture belongs to a game with a `.framewise/` incident log
 * (`/api/capture` then names it under `issues`); else the panel stays hidden.
 */
async function loadIssues() {
  if (!state.capture.issues) {
    $("issues").hidden = true;
    return;
  }
  const doc = await get("issues");
  renderIssues($("issues"), doc, state.rowOfIndex, (row) => select(row).catch(failed));
  $("issues").hidden = false;
}

/**
 * A followed capture was reloaded: refetch what covers the whole capture, keep the
 * selection, range and pinned frame (a selection on the last frame follows the newest), and
 * redraw. The selected frame is fetched again too: the last one gains its period when the
 * next frame arrives.
 */
async function refresh(capture) {
  const [stripData, hitches] = await Promise.all([getStrip(), get("hitches")]);
  const before = state.capture.frame_count;
  const onNewest = state.selected !== null && state.selected === before - 1;
  adopt(capture, stripData, hitches);
  renderHeader(capture);
  const count = capture.frame_count;
  if (!strip) {
    if (count === 0) return;
    $("error").hidden = true;
    delete document.body.dataset.error;
    await showViews();
    return;
  }
  if (count === 0) {
    showError("empty", "The file now holds no frames: showing nothing until it does.");
    return;
  }
  if (document.body.dataset.error === "empty") {
    $("error").hidden = true;
    delete document.body.dataset.error;
  }
  if (state.range && state.range.to > count) state.range = state.range.from < count ? { from: state.range.from, to: count } : null;
  if (state.pinned !== null && state.pinned >= count) pin(null);
  strip.setData(stripData);
  strip.setRange(state.range);
  timeline.setStrip(stripData);
  spanDetail.refresh();
  renderHitches(hitches);
  const row = onNewest ? count - 1 : Math.min(state.selected ?? 0, count - 1);
  await Promise.all([loadStats(), select(row), detail.refresh(), loadIssues()]);
}

main().catch(failed);
