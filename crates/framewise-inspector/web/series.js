// Pass detail: a scope's, pass's or counter's value in every frame (/api/series) as a
// sparkline with its axis (the largest value at the top, 0 at the bottom, the first and last
// row under it), gaps where it did not run (never drawn as 0), a dot per value when there are
// few, the selected frame marked. Hover reads a column's value; a click selects its frame.
// With more rows than pixels a column shows its largest value, and a click selects that row.

import { DASH, fill, fitCanvas, fmtCount, fmtMs, get, h, palette, plural, showTooltip } from "./api.js";

const LEFT = 64; // the axis labels
const BOTTOM = 14;
const HEIGHT = 84;

export class Detail {
  /** `onJump(row)` selects a frame; `tooltip` is the page's tooltip box. */
  constructor(root, tooltip, onJump) {
    this.root = root;
    this.tooltip = tooltip;
    this.onJump = onJump;
    this.series = null;
    this.selected = null;
  }

  async show(kind, name) {
    const series = await get("series", { kind, name });
    this.series = series;
    const ran = series.values.filter((value) => value !== null);
    const [min, max] = ran.reduce(([lo, hi], value) => [Math.min(lo, value), Math.max(hi, value)], [Infinity, -Infinity]);
    this.fmt = series.unit === "ns" ? (v) => fmtMs(v / 1e6) : fmtCount;
    this.canvas = h("canvas", { id: "sparkline", tabindex: "0", "aria-label": `${kind} ${name} per frame`, dataset: { kind, name, points: String(ran.length) } });
    this.canvas.addEventListener("pointermove", (event) => this.hover(event));
    this.canvas.addEventListener("pointerleave", () => (this.tooltip.hidden = true));
    this.canvas.addEventListener("click", (event) => {
      const column = this.columnAt(event.offsetX);
      if (column && column.row !== null) this.onJump(column.row);
    });
    fill(
      this.root,
      h("h3", {}, `${kind} `, h("b", {}, name), " per frame"),
      h(
        "p",
        { class: "muted small" },
        `ran in ${fmtCount(ran.length)} of ${plural(series.values.length, "row", "rows")} · ` +
          `min ${ran.length ? this.fmt(min) : DASH} · max ${ran.length ? this.fmt(max) : DASH} · ` +
          "gaps are rows where it did not run (never drawn as 0) · hover reads a frame, a click selects it",
      ),
      this.canvas,
    );
    this.draw();
    this.root.scrollIntoView({ block: "nearest" });
  }

  setSelected(row) {
    this.selected = row;
    if (this.series) this.draw();
  }

  /** Fetches the series shown again (a followed capture grew); nothing when none is. */
  async refresh() {
    if (this.series) await this.show(this.series.kind, this.series.name);
  }

  /** The column under `x`: its first row, the row of its largest value (null: none ran). */
  columnAt(x) {
    if (!this.bins || x < LEFT) return null;
    const i = Math.floor((x - LEFT) / this.binWidth);
    return this.bins[Math.max(0, Math.min(this.bins.length - 1, i))];
  }

  draw() {
    const { context: g, width, height } = fitCanvas(this.canvas, HEIGHT);
    const colours = palette();
    const values = this.series.values;
    let max = 0;
    for (const value of values) if (value !== null && value > max) max = value;
    const plot = Math.max(1, width - LEFT - 4);
    const columns = Math.max(1, Math.min(values.length, Math.floor(plot)));
    const per = values.length / columns;
    this.binWidth = plot / columns;
    const bottom = height - BOTTOM;
    const y = (value) => bottom - 1 - (max > 0 ? (value / max) * (bottom - 8) : 0);
    // The axis: the largest value, 0, the first and last rows.
    g.font = "10px system-ui, sans-serif";
    g.fillStyle = colours.muted;
    g.textAlign = "right";
    g.textBaseline = "middle";
    g.fillText(max > 0 ? this.fmt(max) : "0", LEFT - 6, y(max));
    g.fillText("0", LEFT - 6, bottom - 1);
    g.fillStyle = colours.grid;
    g.fillRect(LEFT, y(max), plot, 1);
    g.fillRect(LEFT, bottom - 1, plot, 1);
    g.fillStyle = colours.muted;
    g.textBaseline = "alphabetic";
    g.textAlign = "left";
    g.fillText("row 0", LEFT, height - 2);
    g.textAlign = "right";
    g.fillText(`row ${values.length - 1}`, LEFT + plot, height - 2);
    g.textAlign = "left";
    this.bins = [];
    const dots = values.filter((v) => v !== null).length <= columns / 3;
    g.strokeStyle = colours.work;
    g.fillStyle = colours.work;
    g.lineWidth = 1.25;
    g.beginPath();
    let pen = false;
    for (let column = 0; column < columns; column++) {
      let best = null;
      const first = Math.floor(column * per);
      for (let row = first; row < Math.max(Math.floor((column + 1) * per), first + 1); row++) {
        if (values[row] !== null && (best === null || values[row] > values[best])) best = row;
      }
      this.bins.push({ first, row: best, value: best === null ? null : values[best] });
      const px = LEFT + (column + 0.5) * this.binWidth;
      if (best === null) {
        pen = false; // a gap: the line lifts, it does not drop to zero
        continue;
      }
      if (pen) g.lineTo(px, y(values[best]));
      else g.moveTo(px, y(values[best]));
      if (dots) g.fillRect(px - 2, y(values[best]) - 2, 4, 4);
      else if (!pen) g.fillRect(px - 1.5, y(values[best]) - 1.5, 3, 3);
      pen = true;
    }
    g.stroke();
    if (this.selected !== null) {
      g.fillStyle = colours.select;
      g.fillRect(LEFT + Math.floor(this.selected / per) * this.binWidth, 0, 1.5, bottom);
    }
    this.canvas.dataset.plot = JSON.stringify({ left: LEFT, width: plot, columns });
  }

  hover(event) {
    const column = this.columnAt(event.offsetX);
    if (!column) {
      this.tooltip.hidden = true;
      return;
    }
    showTooltip(
      this.tooltip,
      this.canvas,
      event,
      column.row === null
        ? `rows from ${column.first}: did not run`
        : `row ${column.row}: ${this.fmt(column.value)}${this.binWidth < 1 || this.series.values.length > this.bins.length ? " (the largest in this column)" : ""}\nclick selects this frame`,
    );
  }
}
