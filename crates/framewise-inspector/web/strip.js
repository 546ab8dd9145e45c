// The frame strip: one bar per frame (its period; its work drawn inside), hitches marked,
// paused frames greyed, a frame with no period a gap. Past a few thousand frames the strip
// folds frames into pixel columns (the column's maximum), keeping any hitch it holds marked.

import { fitCanvas, fmtNs, palette } from "./api.js";

const HEIGHT = 132;
const TOP = 16; // room for carets and their labels above the ceiling
const MARK = 7; // the hitch-marker band under the bars
const BOTTOM = 14; // the axis labels

export class Strip {
  /** `strip` is /api/strip, decoded (stripdata.js); `onSelect(row)` for a click, `onRange(from, to)` for a drag. */
  constructor(canvas, tooltip, strip, { onSelect, onRange }) {
    this.canvas = canvas;
    this.tooltip = tooltip;
    this.data = strip;
    this.count = strip.period_ns.length;
    this.selected = null;
    this.range = null;
    this.pinned = null;
    this.ceiling = ceilingNs(strip);
    this.onSelect = onSelect;
    this.onRange = onRange;
    this.drag = null;
    canvas.addEventListener("pointerdown", (event) => this.pointerDown(event));
    canvas.addEventListener("pointermove", (event) => this.pointerMove(event));
    canvas.addEventListener("pointerup", (event) => this.pointerUp(event));
    canvas.addEventListener("pointerleave", () => (this.tooltip.hidden = true));
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  /** Pixel columns, each a run of rows [first, last]: one row per column when they fit. */
  columns(width) {
    const columns = Math.max(1, Math.min(this.count, Math.floor(width)));
    this.perColumn = this.count / columns;
    this.barWidth = width / columns;
    return columns;
  }

  /** The frame a click at `x` means: the column's tallest (the bar drawn), else its first. */
  peakAt(x) {
    const column = Math.max(0, Math.min((this.peaks?.length ?? 1) - 1, Math.floor(x / this.barWidth)));
    return this.peaks ? this.peaks[column] : this.rowAt(x);
  }

  rowAt(x) {
    const column = Math.floor(x / this.barWidth);
    return Math.max(0, Math.min(this.count - 1, Math.floor(column * this.perColumn)));
  }

  xOf(row) {
    return Math.floor(row / this.perColumn) * this.barWidth;
  }

  /**
   * Each pixel column's bar: its rows' largest period (NaN: none known) and the row holding it,
   * their largest work, whether any is a hitch or dropped spans and whether all are paused.
   * Kept until the data or the number of columns changes: a redraw for a new selection or
   * view reads every frame of a long capture otherwise (216,000 for an hour).
   */
  bars(columns) {
    if (this.barsOf?.data === this.data && this.barsOf.columns === columns) return this.barsOf;
    const { period_ns: period, work_ns: work, paused, hitch } = this.data;
    const dropped = this.data.dropped_spans ?? [];
    const bars = {
      data: this.data,
      columns,
      period: new Float64Array(columns),
      work: new Float64Array(columns),
      peak: new Int32Array(columns),
      hitch: new Uint8Array(columns),
      dropped: new Uint8Array(columns),
      paused: new Uint8Array(columns),
      rows: 0,
    };
    for (let column = 0; column < columns; column++) {
      const first = Math.floor(column * this.perColumn);
      const last = Math.max(first, Math.floor((column + 1) * this.perColumn) - 1);
      let maxPeriod = null;
      let maxWork = 0;
      let anyHitch = false;
      let anyDropped = false;
      let allPaused = true;
      let maxRow = first;
      for (let row = first; row <= last; row++) {
        bars.rows++;
        if (period[row] !== null && (maxPeriod === null || period[row] > maxPeriod)) {
          maxPeriod = period[row];
          maxRow = row;
        }
        maxWork = Math.max(maxWork, work[row]);
        anyHitch ||= hitch[row];
        anyDropped ||= (dropped[row] ?? 0) > 0;
        allPaused &&= paused[row];
      }
      bars.period[column] = maxPeriod ?? NaN;
      bars.work[column] = maxWork;
      bars.peak[column] = maxRow;
      bars.hitch[column] = anyHitch ? 1 : 0;
      bars.dropped[column] = anyDropped ? 1 : 0;
      bars.paused[column] = allPaused ? 1 : 0;
    }
    this.barsOf = bars;
    return bars;
  }

  draw() {
    const { context: g, width } = fitCanvas(this.canvas, HEIGHT);
    const colours = palette();
    const columns = this.columns(width);
    const bars = this.bars(columns);
    const plotHeight = HEIGHT - TOP - MARK - BOTTOM;
    const base = TOP + plotHeight;
    const y = (ns) => base - (Math.min(ns, this.ceiling) / this.ceiling) * plotHeight;
    const gap = this.barWidth >= 3 ? 1 : 0;
    let hitchesMarked = 0;
    let droppedMarked = 0;
    let lastLabelX = -Infinity;
    const over = [];
    this.peaks = bars.peak;
    for (let column = 0; column < columns; column++) {
      const maxPeriod = bars.period[column];
      const maxWork = bars.work[column];
      const anyHitch = bars.hitch[column] === 1;
      const allPaused = bars.paused[column] === 1;
      const x = column * this.barWidth;
      const w = Math.max(1, this.barWidth - gap);
      if (anyHitch) {
        hitchesMarked++;
        g.fillStyle = colours.hitch;
        g.fillRect(x, base + 2, Math.max(w, 2), MARK - 3);
      }
      if (bars.dropped[column] === 1) {
        // The recorder dropped spans in this frame: its scope totals are low. A tick at the top.
        droppedMarked++;
        g.fillStyle = colours.dropped;
        g.fillRect(x, 0, Math.max(w, 2), 3);
      }
      // A frame with no period is a gap: nothing is drawn for it, not a zero-height bar.
      if (Number.isNaN(maxPeriod)) continue;
      g.fillStyle = allPaused ? colours.paused : anyHitch ? colours.hitch : colours.period;
      g.fillRect(x, y(maxPeriod), w, base - y(maxPeriod));
      if (!allPaused) {
        g.fillStyle = anyHitch ? colours.hitchWork : colours.work;
        g.fillRect(x, y(Math.min(maxWork, maxPeriod)), w, base - y(Math.min(maxWork, maxPeriod)));
      }
      if (maxPeriod > this.ceiling) over.push({ x: x + w / 2, ns: maxPeriod, row: bars.peak[column] });
    }
    // Bars past the ceiling: drawn at it, with a caret and their real value.
    g.font = "10px system-ui, sans-serif";
    g.textAlign = "center";
    for (const { x, ns } of over) {
      g.fillStyle = colours.hitch;
      g.beginPath();
      g.moveTo(x - 4, TOP - 1);
      g.lineTo(x + 4, TOP - 1);
      g.lineTo(x, TOP - 6);
      g.fill();
      if (x - lastLabelX > 46) {
        g.fillStyle = colours.fg;
        g.fillText(fmtNs(ns), Math.min(Math.max(x, 22), width - 22), TOP - 7);
        lastLabelX = x;
      }
    }
    this.drawGuides(g, width, y, base, colours);
    this.canvas.dataset.frames = String(bars.rows);
    this.canvas.dataset.columns = String(columns);
    this.canvas.dataset.hitchMarks = String(hitchesMarked);
    this.canvas.dataset.droppedMarks = String(droppedMarked);
    this.canvas.dataset.overCeiling = String(over.length);
    this.canvas.dataset.ceilingNs = String(this.ceiling);
  }

  drawGuides(g, width, y, base, colours) {
    const budget = this.data.budget_ns;
    g.textAlign = "left";
    if (budget && budget < this.ceiling) {
      g.strokeStyle = colours.budget;
      g.setLineDash([4, 3]);
      g.beginPath();
      g.moveTo(0, Math.round(y(budget)) + 0.5);
      g.lineTo(width, Math.round(y(budget)) + 0.5);
      g.stroke();
      g.setLineDash([]);
      backedText(g, `budget ${fmtNs(budget)}`, 4, y(budget) - 3, colours.budget, colours.bg);
    }
    g.textAlign = "right";
    backedText(g, `ceiling ${fmtNs(this.ceiling)}`, width - 4, TOP + 9, colours.muted, colours.bg);
    g.textAlign = "left";
    g.fillText(`row 0`, 2, base + MARK + 10);
    g.textAlign = "right";
    g.fillText(`row ${this.count - 1}`, width - 2, base + MARK + 10);
    if (this.range) {
      const x0 = this.xOf(this.range.from);
      const x1 = this.xOf(this.range.to - 1) + this.barWidth;
      g.fillStyle = colours.range;
      g.globalAlpha = 0.22;
      g.fillRect(x0, TOP, x1 - x0, base - TOP);
      g.globalAlpha = 1;
    }
    if (this.view) {
      const x0 = this.xOf(this.view.from);
      const x1 = this.xOf(Math.max(this.view.from, this.view.to - 1)) + this.barWidth;
      g.fillStyle = colours.work;
      g.fillRect(x0, 2, Math.max(2, x1 - x0), 3);
      this.canvas.dataset.view = `${this.view.from}-${this.view.to}`;
    }
    this.marker(g, this.pinned, colours.pinned, "A", base);
    this.marker(g, this.selected, colours.select, this.pinned === null ? null : "B", base);
  }

  marker(g, row, colour, label, base) {
    if (row === null) return;
    const x = this.xOf(row);
    const w = Math.max(2, this.barWidth);
    g.strokeStyle = colour;
    g.lineWidth = 2;
    g.strokeRect(x - 1, TOP - 1, w + 1, base - TOP + 2);
    g.lineWidth = 1;
    if (label) {
      g.fillStyle = colour;
      g.textAlign = "center";
      g.fillText(label, x + w / 2, HEIGHT - 2);
    }
  }

  /** The strip of a followed capture that grew: redraws, keeping selection and range. */
  setData(strip) {
    this.data = strip;
    this.count = strip.period_ns.length;
    this.ceiling = ceilingNs(strip);
    this.draw();
  }

  /**
   * Draws once the current task's script is done (a microtask): a selection changes the
   * selected row and then the timeline's view, and the strip is drawn once for both, after
   * the timeline has asked for its frames.
   */
  redraw() {
    if (this.redrawQueued) return;
    this.redrawQueued = true;
    queueMicrotask(() => {
      this.redrawQueued = false;
      this.draw();
    });
  }

  setSelected(row) {
    this.selected = row;
    this.canvas.dataset.selected = row === null ? "" : String(row);
    this.redraw();
  }

  setRange(range) {
    this.range = range;
    this.redraw();
  }

  /** The rows the timeline shows: a bar over them, above the strip. */
  setView(rows) {
    this.view = rows;
    this.redraw();
  }

  setPinned(row) {
    this.pinned = row;
    this.redraw();
  }

  pointerDown(event) {
    this.canvas.setPointerCapture(event.pointerId);
    this.drag = { startX: event.offsetX, startRow: this.rowAt(event.offsetX), moved: false };
  }

  pointerMove(event) {
    this.hover(event);
    if (!this.drag) return;
    if (Math.abs(event.offsetX - this.drag.startX) > 3) this.drag.moved = true;
    if (this.drag.moved) this.setRange(this.span(event.offsetX));
  }

  pointerUp(event) {
    if (!this.drag) return;
    const { moved, startX } = this.drag;
    const range = moved ? this.span(event.offsetX) : null;
    this.drag = null;
    if (range) this.onRange(range);
    else this.onSelect(this.peakAt(startX));
  }

  /** The rows a drag from its start to `x` covers, as a half-open range. */
  span(x) {
    const a = this.drag ? this.drag.startRow : this.rowAt(x);
    const b = this.rowAt(Math.max(0, Math.min(x, this.canvas.clientWidth - 1)));
    const lastOfB = Math.min(this.count - 1, b + Math.ceil(this.perColumn) - 1);
    return a <= b ? { from: a, to: lastOfB + 1 } : { from: b, to: Math.min(this.count, a + Math.ceil(this.perColumn)) };
  }

  hover(event) {
    const row = this.peakAt(event.offsetX);
    const d = this.data;
    const lines = [
      `row ${row} · frame ${d.index[row]}${d.phase?.[row] ? ` · ${d.phase[row]}` : ""}`,
      `period ${d.period_ns[row] === null ? "— (unknown)" : fmtNs(d.period_ns[row])} · work ${fmtNs(d.work_ns[row])}`,
      `gpu ${fmtNs(d.gpu_ns[row])}${d.paused[row] ? " · paused" : ""}${d.hitch[row] ? " · HITCH" : ""}`,
    ];
    if (!d.complete) lines.push("(the capture is loading: phase and dropped spans not known yet)");
    if (this.perColumn > 1) lines.push(`(one column = ${this.perColumn.toFixed(1)} frames; the bar and a click are their tallest)`);
    this.tooltip.textContent = lines.join("\n");
    this.tooltip.hidden = false;
    const box = this.canvas.getBoundingClientRect();
    this.tooltip.style.left = `${Math.min(box.left + event.offsetX + 12, window.innerWidth - 300) + window.scrollX}px`;
    this.tooltip.style.top = `${box.top + event.offsetY + 14 + window.scrollY}px`;
  }
}

/**
 * The strip's ceiling: the tallest bar when nothing is extreme, else a few budgets or a
 * little above the 99th-percentile period, so one 2-second stall does not flatten the rest.
 */
export function ceilingNs(strip) {
  const periods = strip.period_ns.filter((ns) => ns !== null).sort((a, b) => a - b);
  const budget = strip.budget_ns || 16_666_667;
  if (periods.length === 0) return budget * 2;
  const max = periods[periods.length - 1];
  const p99 = periods[Math.floor((periods.length - 1) * 0.99)];
  const ceiling = Math.max(budget * 3, p99 * 1.25);
  return max <= ceiling ? Math.max(max, budget * 1.25) : ceiling;
}

/** Text on a backing box of the panel's colour, so it stays readable over bars. */
function backedText(g, text, x, y, colour, background) {
  const width = g.measureText(text).width;
  const left = g.textAlign === "right" ? x - width : x;
  g.globalAlpha = 0.8;
  g.fillStyle = background;
  g.fillRect(left - 2, y - 9, width + 4, 12);
  g.globalAlpha = 1;
  g.fillStyle = colour;
  g.fillText(text, x, y);
}
