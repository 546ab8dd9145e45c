// The continuous timeline: frames end to end on one time axis (ns from the capture's first
// frame's begin), as /api/window lays them out (fetched in chunks of frames, cached, the
// view's neighbours fetched ahead: window.js). One CPU lane per thread (spans nested by
// depth), a separate GPU track labelled nominal (GPU durations as measured, placed at each
// frame's CPU anchor: the two clocks are never merged), instant marks, frame boundaries with
// their indices, hitch shading, and counters as step tracks under the lanes (a gap where a
// frame did not record one). From one frame to the whole capture: wheel or W/S zoom, drag or
// A/D pan, F (or a double-click) fits the selection. Past MAX_SPAN_FRAMES frames in view the
// spans are not drawn, and the counters come from /api/series (every counter's value per row,
// fetched once: the server keeps them in memory) rather than the window's chunks, each pixel
// column showing the largest value of the frames in it. Ticks gain decimals as the view
// narrows. Hover names a span or reads a counter; a click on a span opens its detail and
// selects its frame; a click between spans selects the frame under the pointer.

import { afterNextPaint, clip, fitCanvas, fmtCount, fmtNs, get, nameColour, nsExact, palette, showTooltip } from "./api.js";
import { tickLabel, tickStep } from "./ticks.js";
import { WindowCache, spanOf } from "./window.js";

const GUTTER = 132; // lane labels
const RULER = 18;
const FRAMES = 15; // the row of frame indices under the ruler
const ROW = 17;
const LANE_GAP = 8;
const COUNTER = 26;
/** The line that says why no span is drawn (too many frames in view, loading, an error). */
const NOTE = 16;
/** Past this many frames in view, spans are not drawn (frames, hitches and counters are). */
export const MAX_SPAN_FRAMES = 400;
export const GPU_LABEL = "GPU (nominal)";

export class Timeline {
  /**
   * `strip` is /api/strip (where every frame lies); `onSelect(row)` when a click in the
   * timeline selects a frame, `onSpan(hit)` when it opens a span, `onView(rows)` when the
   * rows in view change (the strip shows them). `counters` are /api/capture's (`{name, kind}`,
   * by id): the tracks drawn from their series when the view holds too many frames for spans.
   */
  constructor(canvas, tooltip, strip, { onSelect, onSpan, onView, counters = [] }) {
    this.canvas = canvas;
    this.tooltip = tooltip;
    this.onSelect = onSelect;
    this.onSpan = onSpan;
    this.onView = onView;
    this.counterList = counters;
    this.series = null;
    this.hoverAt = null;
    this.cache = null;
    this.loadError = null;
    this.selected = null;
    this.range = null;
    this.view = { from: 0, to: 1 };
    this.layout = [];
    this.pointer = null;
    this.seq = 0;
    this.setStrip(strip);
    canvas.addEventListener("wheel", (event) => this.wheel(event), { passive: false });
    canvas.addEventListener("pointerdown", (event) => this.pointerDown(event));
    canvas.addEventListener("pointermove", (event) => this.pointerMove(event));
    canvas.addEventListener("pointerup", (event) => this.pointerUp(event));
    canvas.addEventListener("pointercancel", () => (this.pan = null));
    canvas.addEventListener("pointerleave", () => {
      this.tooltip.hidden = true;
      this.pointer = null; // W/S zoom at the centre again
      this.hoverAt = null;
    });
    canvas.addEventListener("dblclick", () => this.fit());
    // Redrawn when its width changes; its height is the draw's own doing (the lanes'), and
    // redrawing for it drew every such selection twice.
    new ResizeObserver(([entry]) => {
      if (this.width && Math.max(1, Math.floor(entry.contentRect.width)) !== this.width) this.draw();
    }).observe(canvas);
  }

  /** The strip (and, when given, /api/capture's counters) of a capture that grew (followed). */
  setStrip(strip, counters = null) {
    if (counters && JSON.stringify(counters) !== JSON.stringify(this.counterList)) {
      this.counterList = counters;
      this.series = null; // fetched again, for every counter, when next needed
    }
    this.strip = strip;
    this.count = strip.begin_ns.length;
    if (this.cache) this.cache.setCount(this.count);
    else this.cache = new WindowCache(this.count);
  }

  /** Where row `r` begins and its period (or, unknown, its work) ends, ns from the origin. */
  frameSpan(r) {
    const begin = this.strip.begin_ns[r];
    return [begin, begin + (this.strip.period_ns[r] ?? this.strip.work_ns[r] ?? 0)];
  }

  /** The last row beginning at or before `ns` (0 before the first). */
  rowAt(ns) {
    const begins = this.strip.begin_ns;
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (begins[mid] <= ns) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The selection (a row, and the strip's range) changed outside: the view fits it. */
  select(row, range, { fit = true } = {}) {
    if (this.focused && this.focused.row !== row) this.focused = null;
    this.selected = row;
    this.range = range;
    this.canvas.dataset.row = String(row);
    if (fit) this.fit();
    else this.draw();
  }

  /**
   * One run, found by search (`{row, thread, depth, start_ns, dur_ns}`, its start from its
   * frame's begin, `thread` null for a GPU pass): outlined once its frame's spans are drawn,
   * and its detail opened then.
   */
  focus(run) {
    this.focused = { ...run, label: run.thread ?? GPU_LABEL, at: this.strip.begin_ns[run.row] + run.start_ns, opened: false };
    this.canvas.dataset.focus = "";
    this.draw();
  }

  /** Outlines the run search asked for, when its spans are drawn (see `focus`). */
  drawFocus(g, colours) {
    const f = this.focused;
    if (!f) return;
    const lane = this.layout.find((l) => l.track.label === f.label);
    if (!lane) return;
    for (const segment of lane.track.segments) {
      if (segment.n === 0 || segment.row[0] > f.row || segment.row[segment.n - 1] < f.row) continue;
      for (let i = 0; i < segment.n; i++) {
        if (segment.row[i] !== f.row || segment.depth[i] !== f.depth || segment.start[i] !== f.at || segment.dur[i] !== f.dur_ns) continue;
        const x0 = this.x(f.at);
        const x1 = this.x(f.at + f.dur_ns);
        const y = lane.top + f.depth * ROW;
        g.strokeStyle = colours.select;
        g.lineWidth = 2;
        g.strokeRect(Math.max(GUTTER, x0) - 1, y - 1, Math.max(2, Math.min(this.width, x1) - Math.max(GUTTER, x0) + 2), ROW + 1);
        g.lineWidth = 1;
        this.canvas.dataset.focus = JSON.stringify({ row: f.row, thread: f.label, depth: f.depth, start_ns: f.at, dur_ns: f.dur_ns });
        if (!f.opened) {
          f.opened = true;
          this.onSpan?.({ span: spanOf(segment, i), track: lane.track });
        }
        return;
      }
    }
  }

  /** F: the view fits the selected frame (a little either side), or the strip's range. */
  fit() {
    if (this.selected === null) return;
    let [from, to] = this.frameSpan(this.selected);
    if (this.range && this.range.from <= this.selected && this.selected < this.range.to) {
      from = this.frameSpan(this.range.from)[0];
      to = this.frameSpan(this.range.to - 1)[1];
    }
    const pad = Math.max(1000, (to - from) * 0.03);
    this.setView(from - pad, to + pad);
  }

  setView(from, to) {
    const first = this.count ? this.strip.begin_ns[0] : 0;
    const last = this.count ? this.frameSpan(this.count - 1)[1] : 1;
    const span = Math.min(Math.max(to - from, 200), Math.max((last - first) * 1.2, 1000));
    // The view stays over the capture (a margin of 5% either side): it never drifts off
    // into empty time; wider than the capture, it is centred on it.
    const margin = span * 0.05;
    const wanted = (from + to) / 2;
    const centre =
      span >= last - first + 2 * margin ? (first + last) / 2 : Math.min(Math.max(wanted, first - margin + span / 2), last + margin - span / 2);
    this.view = { from: centre - span / 2, to: centre + span / 2 };
    // The frames the view lacks are asked for first, then the view is drawn with what it has.
    this.ensuring = this.ensure();
    this.draw();
  }

  /**
   * Resolves once the view's spans are drawn (or could not be loaded): the page renders the
   * panels that follow a selection after this, so that they never hold the main thread while
   * the timeline's frames arrive.
   */
  drawn() {
    return this.ensuring ?? Promise.resolve();
  }

  /** Rows whose frames touch the view: [first, last + 1). */
  rowsInView() {
    return { from: this.rowAt(this.view.from), to: Math.min(this.count, this.rowAt(this.view.to) + 1) };
  }

  /**
   * Fetches the chunks of frames the view needs and has not got (drawing them once they
   * arrive), then the view's neighbours in the background, so that a pan or a zoom out
   * finds them there.
   */
  async ensure() {
    const rows = this.rowsInView();
    this.onView?.(rows);
    if (this.count === 0) return;
    if (rows.to - rows.from > MAX_SPAN_FRAMES) {
      // No spans at this zoom: the counters' series instead (drawn once they are in).
      const loading = this.loadSeries();
      if (loading) {
        await loading;
        this.draw();
      }
      return;
    }
    if (this.cache.has(rows.from, rows.to)) this.loadError = null;
    else {
      const seq = ++this.seq;
      const started = performance.now();
      const cold = this.cache.missingRows(rows.from, rows.to);
      if (cold > 0) this.canvas.dataset.loadAt = started.toFixed(1);
      try {
        await this.cache.load(rows.from, rows.to);
        this.loadError = null;
      } catch (error) {
        this.loadError = error.message;
        this.draw();
        return;
      }
      if (seq !== this.seq) return; // a later view is being loaded, and draws itself
      this.draw();
      if (cold > 0) {
        // From asking for the frames not yet fetched to their pixels (for the figures in
        // docs/performance/inspector.md): fetch, decode, draw.
        this.canvas.dataset.loadMs = (performance.now() - started).toFixed(1);
        this.canvas.dataset.loadRows = String(cold);
      }
    }
    this.prefetch(rows);
  }

  /**
   * The neighbours of the rows in view, as far again either side, fetched at low priority
   * once the view is on screen (their answer, decoded sooner, held the page's thread before
   * the view's pixels); not if another view was asked for meanwhile.
   */
  async prefetch(rows) {
    const seq = this.seq;
    await afterNextPaint();
    if (seq !== this.seq) return;
    const pad = Math.max(8, rows.to - rows.from);
    this.cache.load(Math.max(0, rows.from - pad), Math.min(this.count, rows.to + pad), "low").catch(() => {});
  }

  /**
   * Every counter's value per row, `/api/series` (the per-frame values the server keeps in
   * memory: no frame is read), for the views that hold too many frames for /api/window: asked
   * for the first time such a view is drawn, and again once a followed capture grew (or after
   * a failure). Returns the promise of their arrival, or null when they are in already.
   */
  loadSeries() {
    const known = this.series;
    if (known && known.count === this.count && (known.pending || known.failed.size === 0)) return known.pending;
    // A followed capture grew: the values known are drawn until the new ones are in (the rows
    // they lack are "not fetched yet").
    const series = { count: this.count, values: new Map(known?.values ?? []), failed: new Map(), pending: null };
    this.series = series;
    series.pending = Promise.all(
      this.counterList.map((counter, id) =>
        get("series", { kind: "counter", name: counter.name }).then(
          (doc) => series.values.set(id, doc.values),
          (error) => series.failed.set(id, error.message),
        ),
      ),
    ).then(() => {
      series.pending = null;
    });
    return series.pending;
  }

  /**
   * The counter tracks of a view with too many frames for spans: every counter of the capture,
   * in its order, with its series (`values`, one per row; null where the frame did not record
   * it) once fetched, or why not (`failed`), or none yet (`loading`).
   */
  seriesCounters() {
    const series = this.series;
    return this.counterList.map((counter, id) => ({
      id,
      name: counter.name,
      kind: counter.kind,
      series: true,
      values: series?.values.get(id) ?? null,
      failed: series?.failed.get(id) ?? null,
      loading: !series || series.pending !== null,
    }));
  }

  /**
   * The tracks of the chunks drawn (one per thread, in the capture's thread order, then the
   * GPU track), their marks and counters (in the capture's counter order); kept while the
   * same chunks are drawn.
   */
  joined(chunks) {
    const same = this.joinedChunks?.length === chunks.length && this.joinedChunks.every((c, i) => c === chunks[i]);
    if (same) return this.joinedValue;
    const tracks = new Map();
    const counters = new Map();
    const gpu = { label: GPU_LABEL, gpu: true, segments: [], rows: 1 };
    for (const chunk of chunks) {
      for (const lane of chunk.lanes) {
        let track = tracks.get(lane.threadId);
        if (!track) tracks.set(lane.threadId, (track = { label: lane.thread, gpu: false, segments: [], rows: 1, id: lane.threadId }));
        track.segments.push(lane);
        track.rows = Math.max(track.rows, lane.maxDepth + 1);
      }
      if (chunk.gpu.n > 0) {
        gpu.segments.push(chunk.gpu);
        gpu.rows = Math.max(gpu.rows, chunk.gpu.maxDepth + 1);
      }
      for (const counter of chunk.counters) {
        const joined = counters.get(counter.id);
        if (joined) joined.values.push(...counter.values);
        else counters.set(counter.id, { ...counter, values: [...counter.values] });
      }
    }
    const ordered = [...tracks.values()].sort((a, b) => a.id - b.id);
    if (gpu.segments.length > 0) ordered.push(gpu);
    this.joinedChunks = chunks;
    this.joinedValue = {
      tracks: ordered,
      marks: chunks.flatMap((c) => c.marks),
      counters: [...counters.values()].sort((a, b) => a.id - b.id),
    };
    return this.joinedValue;
  }

  x(ns) {
    return GUTTER + ((ns - this.view.from) / (this.view.to - this.view.from)) * (this.width - GUTTER);
  }

  nsAt(px) {
    return this.view.from + ((px - GUTTER) / Math.max(1, this.width - GUTTER)) * (this.view.to - this.view.from);
  }

  draw() {
    const started = performance.now();
    const colours = palette();
    const rows = this.rowsInView();
    const zoomedOut = rows.to - rows.from > MAX_SPAN_FRAMES;
    const { chunks, complete } = this.cache.loaded(rows.from, rows.to);
    const { tracks: loaded, marks, counters: windowCounters } = this.joined(chunks);
    // Zoomed out, the chunks fetched cover a part of the view at most: the counters come from
    // their series, over every frame in view.
    const counters = zoomedOut ? this.seriesCounters() : windowCounters;
    const spansShown = !zoomedOut && chunks.length > 0;
    const tracks = spansShown ? loaded : [];
    let height = RULER + FRAMES;
    this.layout = tracks.map((track) => {
      const lane = { track, top: height + LANE_GAP };
      height = lane.top + track.rows * ROW;
      return lane;
    });
    // Without spans, a line says why, above the counters (never over them).
    const counterTop = height + LANE_GAP + (spansShown ? 0 : NOTE);
    height = Math.max(counterTop + counters.length * COUNTER + 4, RULER + FRAMES + 60);
    // While the view's spans load, the canvas keeps the height it had: shrinking it to the
    // empty lanes and growing it back when they arrive moved everything under it twice a
    // selection (the page laid out and repainted below the timeline each time).
    const loading = !complete && this.loadError === null && rows.to - rows.from <= MAX_SPAN_FRAMES;
    if (loading && this.shownHeight) height = Math.max(height, this.shownHeight);
    this.shownHeight = height;
    const { context: g, width } = fitCanvas(this.canvas, height);
    this.width = width;
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    this.drawFrames(g, rows, colours, height);
    let drawn = 0;
    const drawnRows = new Set();
    for (const { track, top } of this.layout) {
      g.save();
      g.beginPath();
      g.rect(GUTTER, top, width - GUTTER, track.rows * ROW);
      g.clip();
      // Per depth, the pixel column drawn last: a span narrower than a pixel that falls in
      // it is already shown there (zoomed out, most spans are).
      const covered = [];
      for (const lane of track.segments) {
        const { start, dur, depth, row, scope, names } = lane;
        for (let i = 0; i < lane.n; i++) {
          const x0 = this.x(start[i]);
          const x1 = this.x(start[i] + dur[i]);
          if (x1 < GUTTER || x0 > width) continue;
          drawn++;
          drawnRows.add(row[i]);
          const w = Math.max(1, x1 - x0);
          const d = depth[i];
          if (x1 - x0 < 1 && Math.floor(x0) === covered[d]) continue;
          covered[d] = Math.floor(x0 + w - 1);
          const name = names[scope[i]]?.name ?? "?";
          const y = top + d * ROW;
          g.fillStyle = this.colour(name, track.gpu);
          g.fillRect(x0, y, w, ROW - 1);
          if (w > 28) {
            const left = Math.max(x0, GUTTER) + 3;
            const room = Math.min(x1, width) - left - 3;
            if (room > 12) {
              g.fillStyle = "#111";
              g.fillText(clip(g, `${name} ${fmtNs(dur[i])}`, room), left, y + ROW / 2);
            }
          }
        }
      }
      this.drawMarks(g, marks, track, tracks[0], top, track.rows * ROW, colours);
      g.restore();
      g.fillStyle = colours.grid;
      g.fillRect(GUTTER, top - LANE_GAP / 2, width - GUTTER, 1);
      g.fillStyle = track.gpu ? colours.gpu : colours.fg;
      g.font = track.gpu ? "italic 11px system-ui, sans-serif" : "11px system-ui, sans-serif";
      g.fillText(clip(g, track.label, GUTTER - 10), 6, top + ROW / 2);
      g.font = "11px system-ui, sans-serif";
    }
    if (!spansShown) {
      g.fillStyle = colours.muted;
      const why = this.loadError !== null ? `could not load the spans: ${this.loadError}` : rows.to - rows.from <= MAX_SPAN_FRAMES ? "loading spans…" : `${fmtCount(rows.to - rows.from)} frames in view: zoom in (W) to ${MAX_SPAN_FRAMES} or fewer to see their spans`;
      g.fillText(why, GUTTER + 8, RULER + FRAMES + LANE_GAP / 2 + NOTE / 2);
    }
    if (zoomedOut) this.drawSeriesCounters(g, counters, counterTop, colours, rows);
    else this.drawCounters(g, counters, counterTop, colours);
    this.drawFocus(g, colours);
    const c = this.canvas.dataset;
    // Where the counter tracks come from: the window's chunks, or (zoomed out) the counters'
    // series, "loading", "ready" or "failed" (tests).
    c.counterSource = zoomedOut ? "series" : "window";
    c.seriesState = !zoomedOut ? "" : counters.some((t) => t.failed) ? "failed" : counters.some((t) => t.loading) ? "loading" : "ready";
    if (zoomedOut) c.seriesCounters = JSON.stringify(counters.map((counter) => counter.name));
    if (complete && chunks.length > 0) {
      // The rows whose spans are drawn, and what they hold (tests compare it with /api/window).
      c.rows = JSON.stringify([chunks[0].from, chunks[chunks.length - 1].to]);
      c.origin = String(chunks[0].origin_ns);
      c.lanes = JSON.stringify(loaded.map((t) => t.label));
      c.counters = JSON.stringify(counters.map((counter) => counter.name));
    }
    c.view = JSON.stringify([Math.round(this.view.from), Math.round(this.view.to)]);
    c.framesInView = String(rows.to - rows.from);
    c.drawnSpans = String(drawn);
    c.drawnRows = JSON.stringify([...drawnRows].sort((a, b) => a - b));
    c.layout = JSON.stringify({ gutter: GUTTER, row: ROW, tops: this.layout.map((lane) => lane.top), counterTop, counter: COUNTER });
    c.drawMs = (performance.now() - started).toFixed(2);
    if (this.selected !== null && complete && chunks.length > 0 && rows.from <= this.selected && this.selected < rows.to) this.markPainted(this.selected);
    // What is under a still pointer changed (a zoom, a pan by key, data arrived): its tooltip
    // says what is there now.
    if (this.hoverAt && !this.pan) this.hover(this.hoverAt);
  }

  /**
   * Marks the moment the selected frame's spans are on screen (`afterNextPaint`):
   * `data-painted-row` and `data-painted-at` (performance.now(), ms) are the figures
   * docs/performance/inspector.md measures, and a user-timing mark the same moment in a trace.
   */
  markPainted(row) {
    // A redraw of the same row before that paint (a resize observed in the same rendering
    // update) is on screen at the same moment: the mark already pending stands for it.
    if (this.pendingPaint === row) return;
    this.pendingPaint = row;
    afterNextPaint().then(() => {
      if (this.pendingPaint !== row) return; // another row drawn since: its own mark follows
      this.pendingPaint = null;
      this.canvas.dataset.paintedAt = performance.now().toFixed(1);
      this.canvas.dataset.paintedRow = String(row);
      performance.clearMarks("framewise:spans-painted"); // one mark kept, not one per draw
      performance.mark("framewise:spans-painted");
    });
  }

  /** A span's colour by name (a pass a little darker), computed once per name. */
  colour(name, gpu) {
    this.colours ??= new Map();
    const key = gpu ? `gpu:${name}` : name;
    let colour = this.colours.get(key);
    if (colour === undefined) {
      colour = gpu ? nameColour(name, 55) : nameColour(name);
      this.colours.set(key, colour);
    }
    return colour;
  }

  /** The ruler (ticks that gain decimals with zoom), frame boundaries and indices, hitch shading, the selection. */
  drawFrames(g, rows, colours, height) {
    const width = this.width;
    const { hitch, index, paused } = this.strip;
    for (let r = rows.from; r < rows.to; r++) {
      const [b, e] = this.frameSpan(r);
      const x0 = Math.max(GUTTER, this.x(b));
      const x1 = Math.min(width, this.x(e));
      if (hitch[r] || paused[r]) {
        g.fillStyle = hitch[r] ? colours.hitch : colours.paused;
        g.globalAlpha = hitch[r] ? 0.14 : 0.25;
        g.fillRect(x0, RULER, x1 - x0, height - RULER);
        g.globalAlpha = 1;
      }
      if (r === this.selected) {
        g.strokeStyle = colours.select;
        g.strokeRect(x0 + 0.5, RULER + 0.5, Math.max(1, x1 - x0 - 1), FRAMES - 1);
      }
    }
    const every = Math.max(1, Math.ceil((rows.to - rows.from) / Math.max(1, (width - GUTTER) / 44)));
    g.font = "10px system-ui, sans-serif";
    for (let r = rows.from; r < rows.to; r++) {
      const px = this.x(this.strip.begin_ns[r]);
      if (px < GUTTER) continue;
      g.fillStyle = colours.grid;
      g.fillRect(px, RULER, 1, height - RULER);
      if ((r - rows.from) % every === 0) {
        g.fillStyle = hitch[r] ? colours.hitch : colours.muted;
        g.fillText(clip(g, `#${index[r]}`, Math.max(0, this.x(this.frameSpan(r)[1]) - px - 4)), px + 3, RULER + FRAMES / 2);
      }
    }
    const step = tickStep(this.view.to - this.view.from, (width - GUTTER) / 90);
    const labels = [];
    g.textBaseline = "alphabetic";
    for (let ns = Math.ceil(this.view.from / step) * step; ns <= this.view.to; ns += step) {
      const px = this.x(ns);
      const label = tickLabel(ns, step);
      labels.push(label);
      g.fillStyle = colours.muted;
      g.fillRect(px, RULER - 5, 1, 5);
      g.fillText(label, px + 2, RULER - 6);
    }
    g.fillStyle = colours.bg;
    g.fillRect(0, 0, GUTTER, RULER + FRAMES);
    g.fillStyle = colours.muted;
    g.fillText("time from frame 0", 6, RULER - 6);
    g.textBaseline = "middle";
    g.fillText("frame", 6, RULER + FRAMES / 2);
    g.font = "11px system-ui, sans-serif";
    this.canvas.dataset.ticks = JSON.stringify(labels);
  }

  /** Marks on their thread's lane (a mark of no known thread on the first lane). */
  drawMarks(g, marks, track, first, top, height, colours) {
    for (const mark of marks) {
      if (mark.thread ? mark.thread !== track.label : track !== first) continue;
      const px = this.x(mark.at_ns);
      g.fillStyle = colours.pinned;
      g.fillRect(px, top, 1, height);
      g.beginPath();
      g.moveTo(px - 4, top);
      g.lineTo(px + 4, top);
      g.lineTo(px, top + 6);
      g.fill();
    }
  }

  /** Each counter a step track: its value held from its frame's begin to the next frame's. */
  drawCounters(g, counters, top, colours) {
    this.counterLayout = [];
    const labels = [];
    counters.forEach((counter, i) => {
      const y0 = top + i * COUNTER;
      const inner = COUNTER - 6;
      let max = 0;
      for (const v of counter.values) max = Math.max(max, Math.abs(v.value));
      g.fillStyle = colours.grid;
      g.fillRect(GUTTER, y0 + COUNTER - 2, this.width - GUTTER, 1);
      g.fillStyle = colours.muted;
      g.fillText(clip(g, counter.name, GUTTER - 10), 6, y0 + COUNTER / 2);
      g.fillStyle = counter.kind === "gauge" ? colours.gpu : colours.work;
      g.globalAlpha = 0.75;
      for (const v of counter.values) {
        const [b, e] = this.frameSpan(v.row);
        const x0 = Math.max(GUTTER, this.x(b));
        const x1 = Math.min(this.width, this.x(e));
        if (x1 < GUTTER || x0 > this.width) continue;
        const h = max > 0 ? (Math.abs(v.value) / max) * inner : 0;
        g.fillRect(x0, y0 + 2 + inner - h, Math.max(1, x1 - x0 - 0.5), Math.max(1, h));
        if (x1 - x0 > 40) labels.push([x0, x1, v.value]);
      }
      g.globalAlpha = 1;
      // The exact value on each step wide enough to hold it.
      g.fillStyle = colours.fg;
      for (const [x0, x1, value] of labels) g.fillText(clip(g, fmtCount(value), x1 - x0 - 6), x0 + 3, y0 + COUNTER / 2);
      labels.length = 0;
      this.counterLayout.push({ counter, top: y0 });
    });
  }

  /**
   * Zoomed out, each counter a track over every frame in view from its series: each pixel
   * column the largest |value| of the frames in it (the row holding it kept for the hover), a
   * gap where none of them recorded the counter; "loading" until the series is in.
   */
  drawSeriesCounters(g, counters, top, colours, rows) {
    this.counterLayout = [];
    const columns = Math.max(1, Math.ceil(this.width - GUTTER));
    counters.forEach((counter, i) => {
      const y0 = top + i * COUNTER;
      const inner = COUNTER - 6;
      g.fillStyle = colours.grid;
      g.fillRect(GUTTER, y0 + COUNTER - 2, this.width - GUTTER, 1);
      g.fillStyle = colours.muted;
      g.fillText(clip(g, counter.name, GUTTER - 10), 6, y0 + COUNTER / 2);
      const entry = { counter, top: y0, peakRow: null };
      this.counterLayout.push(entry);
      const values = counter.values;
      if (!values) {
        const why = counter.failed ? `could not load its values: ${counter.failed}` : "loading its values…";
        g.fillText(clip(g, why, this.width - GUTTER - 12), GUTTER + 6, y0 + COUNTER / 2);
        return;
      }
      const peak = new Float64Array(columns);
      const peakRow = new Int32Array(columns).fill(-1);
      let max = 0;
      for (let r = rows.from; r < Math.min(rows.to, values.length); r++) {
        const v = values[r];
        if (v === null || v === undefined) continue;
        const [b, e] = this.frameSpan(r);
        const x0 = this.x(b) - GUTTER;
        const x1 = this.x(e) - GUTTER;
        if (x1 < 0 || x0 >= columns) continue;
        const a = Math.abs(v);
        max = Math.max(max, a);
        const c0 = Math.max(0, Math.floor(x0));
        const c1 = Math.min(columns - 1, Math.max(c0, Math.ceil(x1) - 1));
        for (let c = c0; c <= c1; c++) {
          if (peakRow[c] < 0 || a > peak[c]) {
            peak[c] = a;
            peakRow[c] = r;
          }
        }
      }
      entry.peakRow = peakRow;
      g.fillStyle = counter.kind === "gauge" ? colours.gpu : colours.work;
      g.globalAlpha = 0.75;
      for (let c = 0; c < columns; ) {
        const row = peakRow[c];
        let end = c + 1;
        while (end < columns && peakRow[end] === row) end++;
        if (row >= 0) {
          const h = max > 0 ? (peak[c] / max) * inner : 0;
          g.fillRect(GUTTER + c, y0 + 2 + inner - h, end - c, Math.max(1, h));
        }
        c = end;
      }
      g.globalAlpha = 1;
    });
  }

  /** Keyboard (Perfetto's): W/S zoom in/out at the pointer (else the centre), A/D pan, F fits. */
  key(key) {
    const span = this.view.to - this.view.from;
    const at = this.pointer !== null && this.pointer >= GUTTER ? this.nsAt(this.pointer) : (this.view.from + this.view.to) / 2;
    const zoom = (factor) => {
      const share = (at - this.view.from) / span;
      const next = span * factor;
      this.setView(at - share * next, at + (1 - share) * next);
    };
    switch (key.toLowerCase()) {
      case "w": zoom(0.8); return true;
      case "s": zoom(1.25); return true;
      case "a": this.setView(this.view.from - span * 0.2, this.view.to - span * 0.2); return true;
      case "d": this.setView(this.view.from + span * 0.2, this.view.to + span * 0.2); return true;
      case "f": this.fit(); return true;
      default: return false;
    }
  }

  wheel(event) {
    event.preventDefault();
    this.hoverAt = { offsetX: event.offsetX, offsetY: event.offsetY };
    const at = this.nsAt(event.offsetX);
    const factor = Math.exp(Math.sign(event.deltaY) * Math.min(Math.abs(event.deltaY), 200) * 0.002);
    const span = (this.view.to - this.view.from) * factor;
    const share = (at - this.view.from) / (this.view.to - this.view.from);
    this.setView(at - share * span, at + (1 - share) * span);
  }

  pointerDown(event) {
    this.canvas.setPointerCapture(event.pointerId);
    this.pan = { x: event.offsetX, view: { ...this.view }, moved: false };
  }

  pointerMove(event) {
    this.pointer = event.offsetX;
    this.hoverAt = { offsetX: event.offsetX, offsetY: event.offsetY };
    // A pan lasts while the button is held: a move without it (a release the page never
    // saw, or a move the browser made up after a scroll) ends it, never moves the view.
    if (this.pan && (event.buttons & 1) === 0) this.pan = null;
    if (this.pan) {
      if (Math.abs(event.offsetX - this.pan.x) > 3) this.pan.moved = true;
      if (this.pan.moved) {
        const perPx = (this.pan.view.to - this.pan.view.from) / Math.max(1, this.width - GUTTER);
        const shift = (this.pan.x - event.offsetX) * perPx;
        this.view = { from: this.pan.view.from + shift, to: this.pan.view.to + shift };
        this.draw();
        return;
      }
    }
    this.hover(event);
  }

  pointerUp(event) {
    const pan = this.pan;
    this.pan = null;
    if (!pan) return;
    if (pan.moved) {
      this.ensure();
      return;
    }
    if (event.offsetX < GUTTER) return;
    const hit = this.spanAt(event.offsetX, event.offsetY);
    if (hit) {
      this.onSpan?.(hit);
      if (hit.span.row !== this.selected) this.onSelect?.(hit.span.row);
      return;
    }
    const row = this.rowAt(this.nsAt(event.offsetX));
    if (row !== this.selected) this.onSelect?.(row);
  }

  hover(event) {
    const hit = this.spanAt(event.offsetX, event.offsetY);
    const counter = hit ? null : this.counterAt(event.offsetX, event.offsetY);
    if (!hit && !counter) {
      this.tooltip.hidden = true;
      return;
    }
    if (hit) {
      const { span, track } = hit;
      this.tooltip.textContent = [
        `${span.name}${track.gpu ? "  (GPU pass, nominal placement)" : ""}`,
        span.site ? `at ${span.site}` : track.gpu ? null : "site unknown",
        `duration ${fmtNs(span.dur_ns)} (${nsExact(span.dur_ns)})`,
        track.gpu ? null : `self ${fmtNs(span.self_ns)}`,
        `frame ${this.strip.index[span.row]} (row ${span.row}) · +${fmtNs(span.start_ns - this.strip.begin_ns[span.row])} · depth ${span.depth} · ${track.label}`,
        track.gpu ? null : "click for its detail",
      ]
        .filter(Boolean)
        .join("\n");
    } else {
      this.tooltip.textContent = counter.text;
    }
    showTooltip(this.tooltip, this.canvas, event, this.tooltip.textContent);
  }

  spanAt(px, py) {
    if (px < GUTTER) return null;
    const ns = this.nsAt(px);
    const slack = (this.view.to - this.view.from) / Math.max(1, this.width - GUTTER);
    for (const lane of this.layout) {
      if (py < lane.top || py >= lane.top + lane.track.rows * ROW) continue;
      const depth = Math.floor((py - lane.top) / ROW);
      for (const segment of lane.track.segments) {
        const { start, dur } = segment;
        for (let i = 0; i < segment.n; i++) {
          if (segment.depth[i] === depth && ns >= start[i] - slack && ns <= start[i] + dur[i] + slack) return { span: spanOf(segment, i), track: lane.track };
        }
      }
    }
    return null;
  }

  /**
   * The counter track under the pointer and what it reads there (`text`): the frame's value;
   * "not recorded" only for a frame whose values are in and lack it (else that they are not
   * in yet, or why not). Zoomed out, a pixel column's frame is the one whose value it shows
   * (its largest).
   */
  counterAt(px, py) {
    if (px < GUTTER) return null;
    const entry = (this.counterLayout ?? []).find((c) => py >= c.top && py < c.top + COUNTER);
    if (!entry) return null;
    const { counter } = entry;
    const head = `${counter.name} (${counter.kind})`;
    const frame = (r) => this.strip.index[r];
    // Before the first frame or after the last: no frame, nothing to read.
    const ns = this.nsAt(px);
    if (this.count === 0 || ns < this.strip.begin_ns[0] || ns > this.frameSpan(this.count - 1)[1]) return null;
    const under = this.rowAt(ns);
    if (counter.series) {
      // Zoomed out: the counter's series.
      if (!counter.values) return { counter, row: under, text: `${head} in frame ${frame(under)}: ${counter.failed ? `could not load its values: ${counter.failed}` : "its values are loading…"}` };
      const column = Math.floor(px - GUTTER);
      const first = this.rowAt(this.nsAt(GUTTER + column));
      const last = Math.max(first, this.rowAt(this.nsAt(GUTTER + column + 1) - 1e-6));
      const span = last > first ? `\n(the largest of frames ${frame(first)}–${frame(last)}, in this pixel column)` : "";
      const row = entry.peakRow?.[column] ?? -1;
      if (row >= 0) return { counter, row, value: counter.values[row], text: `${head} in frame ${frame(row)}: ${fmtCount(counter.values[row])}${span}` };
      const unknown = counter.values[under] === undefined; // a followed capture grew since they were fetched
      const where = last > first ? `frames ${frame(first)}–${frame(last)}` : `frame ${frame(under)}`;
      return { counter, row: under, value: null, text: `${head} in ${where}: ${unknown ? "not fetched yet" : "not recorded"}` };
    }
    const sample = counter.values.find((v) => v.row === under);
    if (sample) return { counter, row: under, value: sample.value, text: `${head} in frame ${frame(under)}: ${fmtCount(sample.value)}` };
    // A frame whose chunk is not in yet has no values to say anything of.
    const fetched = this.cache.has(under, under + 1);
    return { counter, row: under, value: null, text: `${head} in frame ${frame(under)}: ${fetched ? "not recorded" : "not fetched yet (loading)"}` };
  }
}
