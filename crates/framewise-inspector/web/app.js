// The inspector's page: loads the capture's views from the server (every number comes from
// the API), wires the selection (a frame, a range, a pinned frame) between them, and marks
// the body for tests: data-ready after the first full render, data-selected-row after each
// frame's views are drawn, data-error when the page cannot show the capture ("api", "token",
// "empty") or could not do what was asked of it once shown ("frame": a selection whose frame
// could not be read, "stats", "series", "span"; cleared once that works again), data-strip-painted
// once the strip is on screen, data-loading while the server still loads the capture (the
// strip is then drawn from the file's directory, and the rest waits for the load). A
// followed capture (`framewise view --follow`) is redrawn on each reload the server reports.

import { ApiError, DASH, afterNextPaint, fill, fmtCount, fmtMs, fmtNs, get, getStrip, h, plural, table, token } from "./api.js";
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
  // The row of each hitch of state.hitches, by position (see hitchRows).
  hitchRows: [],
  selected: null,
  range: null,
  pinned: null,
  /** The row whose panels (caption, structure, comparison, flame graph) are shown. */
  shown: null,
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

/** Hides the error shown, when it is of `kind` (what failed works again). */
function clearError(kind) {
  if (document.body.dataset.error !== kind) return;
  $("error").hidden = true;
  delete document.body.dataset.error;
}

/** Whether `error` (or what it wraps) is the server refusing the token: said as such. */
function refusedToken(error) {
  const cause = error?.cause ?? error;
  if (!(cause instanceof ApiError && cause.status === 403)) return false;
  showError(
    "token",
    "The server refused this page's token (403). Each `framewise view` run has its own token: " +
      "open the exact address it printed (…/?token=…).",
  );
  return true;
}

/** The capture itself could not be loaded (or reloaded, when followed). */
function failed(error) {
  if (!refusedToken(error)) showError("api", `Could not load the capture: ${error.message}`);
}

/**
 * A handler for something asked of the page once it shows the capture: says what could not
 * be done and the server's reason (`kind` is data-error, cleared once it works again).
 */
function failedTo(kind, what) {
  return (error) => {
    if (!refusedToken(error)) showError(kind, `Could not ${what}: ${error.message}`);
  };
}

/** A selection whose frame could not be shown (`select` rolled it back and says why). */
function selectFailed(error) {
  if (refusedToken(error)) return;
  if (error instanceof SelectError) showError("frame", error.message);
  else showError("frame", `Could not select the frame: ${error.message}`);
}

/** A selection that could not be shown: the row asked for, what failed, what stays shown. */
class SelectError extends Error {
  constructor(row, index, kept, cause) {
    const still = kept === null ? "" : ` The page still shows frame ${state.strip.index[kept]} (row ${kept}).`;
    super(`Could not show frame ${index} (row ${row}): ${String(cause.message).replace(/\.$/, "")}.${still}`, { cause });
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
  const rows = hitches.hitches.map((hitch, at) => {
    const row = state.hitchRows[at];
    const [top, ...rest] = hitch.classification;
    return h(
      "tr",
      { class: "pick", id: row === undefined ? undefined : `hitch-row-${row}`, dataset: { row: String(row), frame: String(hitch.frame) }, onclick: () => row !== undefined && select(row).catch(selectFailed) },
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
    h("h2", {}, `Hitches `, h("span", { class: "muted" }, `${rows.length} in ${plural(hitches.frames_judged, "frame", "frames")} judged`)),
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
  renderStats($("stats"), stats, showSeries);
  document.body.dataset.range = `${stats.range.from}-${stats.range.to}`;
  clearError("stats");
}

/** Opens a scope's, pass's or counter's value per frame (the pass detail). */
function showSeries(kind, name) {
  detail
    .show(kind, name)
    .then(() => clearError("series"))
    .catch(failedTo("series", `load the value per frame of ${kind} ${name}`));
}

function setRange(range) {
  state.range = range && range.to - range.from > 0 ? range : null;
  strip.setRange(state.range);
  if (timeline) timeline.range = state.range;
  loadStats().catch(failedTo("stats", "compute the statistics of the range"));
  flame?.changed("range");
}

/**
 * Selects a row: every view follows. The timeline fits the frame, unless the selection came
 * from a click in the timeline itself (`fit: false`: the view the user chose stays). When the
 * frame cannot be read (the file changed after it was loaded: a 500), the selection is rolled
 * back to the row whose panels are shown, and it rejects with a `SelectError` saying why.
 */
async function select(row, { fit = true } = {}) {
  row = Math.max(0, Math.min(state.capture.frame_count - 1, row));
  const seq = ++state.selectSeq;
  const before = { row: state.selected, view: timeline.view };
  state.selected = row;
  strip.setSelected(row);
  timeline.select(row, state.range, { fit });
  detail.setSelected(row);
  // The timeline's spans first (a frame's spans is what a selection is for): the panels'
  // documents are asked for once they are drawn (asked for beside them, the server decoded
  // the frame for them while the page waited for its spans), and rendered once they are on
  // screen (rendered in the same task as the draw, their DOM was laid out and painted before
  // the spans' pixels). A selection overtaken meanwhile asks for nothing.
  let frame, structure, compare;
  try {
    await timeline.drawn();
    if (seq !== state.selectSeq) return;
    const comparing = state.pinned !== null && state.pinned !== row;
    [frame, structure, compare] = await Promise.all([
      get("frame", { row }),
      get("structure", { row }),
      comparing ? get("compare", { a: state.pinned, b: row }) : null,
      afterNextPaint(),
    ]);
  } catch (error) {
    // Overtaken meanwhile: the later selection owns the views, and says its own failures.
    if (seq !== state.selectSeq) return;
    rollBack(before);
    throw new SelectError(row, state.strip.index[row], state.shown, error);
  }
  if (seq !== state.selectSeq) return;
  state.shown = row;
  clearError("frame");
  flame.changed("frame");
  renderCaption(frame);
  renderStructure($("structure"), structure);
  renderComparePanel(compare);
  for (const tr of document.querySelectorAll("#hitches tr.selected")) tr.classList.remove("selected");
  const hitchRow = $(`hitch-row-${row}`);
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

/**
 * A selection failed: the strip, the timeline and the pass detail go back to the row whose
 * panels are shown (the view as it was, when that row was the one selected before), so that
 * every view shows the same frame. With none shown yet, the row asked for stays selected.
 */
function rollBack(before) {
  const row = state.shown;
  if (row === null || row >= state.capture.frame_count) return;
  state.selected = row;
  strip.setSelected(row);
  timeline.select(row, state.range, { fit: false });
  if (before.row === row) timeline.setView(before.view.from, before.view.to);
  else timeline.fit();
  detail.setSelected(row);
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
    select(Number.isFinite(target) ? target : target < 0 ? 0 : state.capture.frame_count - 1).catch(selectFailed);
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
  state.hitchRows = hitchRows(stripData, hitches);
}

/**
 * The row of each hitch of /api/hitches, by position. A hitch names its frame by index, and
 * a damaged capture (two recordings in one file) may hold an index on more than one row:
 * the loaded strip flags exactly the rows /api/hitches lists, in row order, so the k-th
 * flagged row is the k-th hitch's. By index only when the two disagree (the strip of the
 * directory, or a strip and hitches of two reloads).
 */
function hitchRows(stripData, hitches) {
  const flagged = [];
  if (stripData.complete) stripData.hitch.forEach((isHitch, row) => isHitch && flagged.push(row));
  if (flagged.length === hitches.hitches.length) return flagged;
  return hitches.hitches.map((hitch) => state.rowOfIndex.get(hitch.frame));
}

/**
 * The row the page opens on: the first hitch (by row), else the worst frame (the longest
 * period; with no period known, the longest work), else row 0.
 */
function openingRow(stripData, hitches) {
  let first = null;
  for (const row of state.hitchRows) {
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
  const onStrip = { onSelect: (row) => select(row).catch(selectFailed), onRange: setRange };
  if (strip) {
    // Drawn from the directory while the capture loaded: now the loaded capture's strip.
    Object.assign(strip, onStrip);
    strip.setData(stripData);
  } else {
    strip = new Strip($("strip"), $("tooltip"), stripData, onStrip);
  }
  timeline = new Timeline($("timeline"), $("tooltip"), stripData, {
    onSelect: (row) => select(row, { fit: false }).catch(selectFailed),
    onSpan: (hit) =>
      spanDetail
        .show(hit, { index: state.strip.index[hit.span.row], begin_ns: state.strip.begin_ns[hit.span.row] })
        .then(() => clearError("span"))
        .catch(failedTo("span", `open the detail of ${hit.span.name}`)),
    onView: (rows) => strip.setView(rows),
    counters: capture.counters,
  });
  spanDetail = new SpanDetail($("span-detail"), {
    onJump: (row) => select(row).catch(selectFailed),
    onSeries: showSeries,
  });
  detail = new Detail($("detail"), $("tooltip"), (row) => select(row).catch(selectFailed));
  search = new Search($("search"), $("search-results"), (row, run) => {
    select(row).catch(selectFailed);
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
  // A frame that cannot be read is said (and the rest shown); so is an unreadable incident log,
  // in the Issues panel.
  await Promise.all([loadStats(), select(wanted ?? openingRow(stripData, hitches)).catch(selectFailed), diff, loadIssues()]);
  document.body.dataset.ready = "1";
}

/**
 * The Issues panel, when the capture belongs to a game with a `.framewise/` incident log
 * (`/api/capture` then names it under `issues`); else the panel stays hidden. When the log
 * cannot be read (`/api/issues` answers 500: a file of the directory is unreadable), the panel
 * says so, with the server's reason, and the rest of the page is unaffected: never rejects
 * (but for a refused token).
 */
async function loadIssues() {
  const panel = $("issues");
  if (!state.capture.issues) {
    panel.hidden = true;
    return;
  }
  try {
    const doc = await get("issues");
    renderIssues(panel, doc, state.rowOfIndex, (row) => select(row).catch(selectFailed));
    delete panel.dataset.error;
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) throw error;
    fill(
      panel,
      h("h2", {}, "Issues ", h("span", { class: "muted" }, state.capture.issues.dir)),
      h("p", { class: "panel-error", id: "issues-error" }, `Could not read the game's incident log: ${error.message}`),
    );
    panel.dataset.error = error.message;
    delete panel.dataset.count;
  }
  panel.hidden = false;
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
  timeline.setStrip(stripData, capture.counters);
  spanDetail.refresh();
  renderHitches(hitches);
  const row = onNewest ? count - 1 : Math.min(state.selected ?? 0, count - 1);
  if (state.shown !== null && state.shown >= count) state.shown = null;
  await Promise.all([loadStats(), select(row).catch(selectFailed), detail.refresh(), loadIssues()]);
}

main().catch(failed);
