// The selected frame's timeline: one CPU lane per thread (spans nested by depth), then a
// separate GPU track labelled nominal — GPU durations as measured, placed at the frame's CPU
// anchor; the two clocks are never merged. Wheel zooms at the cursor, drag pans, double-click
// resets. Every span is drawn at its recorded start and duration.

import { clip, fitCanvas, fmtNs, nameColour, nsExact, palette } from "./api.js";

const GUTTER = 132; // lane labels
const RULER = 20;
const ROW = 17;
const LANE_GAP = 8;
export const GPU_LABEL = "GPU (nominal)";

export class Timeline {
  constructor(canvas, tooltip) {
    this.canvas = canvas;
    this.tooltip = tooltip;
    this.frame = null;
    this.view = { from: 0, to: 1 };
    this.layout = [];
    this.pan = null;
    canvas.addEventListener("wheel", (event) => this.wheel(event), { passive: false });
    canvas.addEventListener("pointerdown", (event) => this.pointerDown(event));
    canvas.addEventListener("pointermove", (event) => this.pointerMove(event));
    canvas.addEventListener("pointerup", () => (this.pan = null));
    canvas.addEventListener("pointerleave", () => (this.tooltip.hidden = true));
    canvas.addEventListener("dblclick", () => this.reset());
    new ResizeObserver(() => this.frame && this.draw()).observe(canvas);
  }

  /** Shows a frame from /api/frame; the view starts at the whole period (or work). */
  setFrame(frame) {
    this.frame = frame;
    const tracks = frame.lanes.map((lane) => ({
      label: lane.thread,
      spans: lane.spans.map((span) => ({ ...span, name: span.scope })),
      gpu: false,
    }));
    if (frame.gpu.spans.length > 0) {
      tracks.push({
        label: GPU_LABEL,
        spans: frame.gpu.spans.map((span) => ({ ...span, name: span.pass })),
        gpu: true,
      });
    }
    this.tracks = tracks;
    // A span on another thread may begin before the frame did (a negative offset): the view
    // starts early enough to show it rather than cut it.
    let start = 0;
    let end = Math.max(frame.period_ns ?? 0, frame.end_ns - frame.begin_ns, 1);
    for (const track of tracks) {
      for (const span of track.spans) {
        start = Math.min(start, span.start_ns);
        end = Math.max(end, span.start_ns + span.dur_ns);
      }
    }
    for (const mark of frame.marks) [start, end] = [Math.min(start, mark.at_ns), Math.max(end, mark.at_ns)];
    this.origin = start;
    this.extent = end;
    this.reset();
    const labels = tracks.map((track) => track.label);
    this.canvas.dataset.lanes = JSON.stringify(labels);
    this.canvas.dataset.row = String(frame.row);
    this.canvas.dataset.spans = String(tracks.reduce((sum, track) => sum + track.spans.length, 0));
    this.canvas.dataset.droppedSpans = String(frame.dropped_spans);
    this.canvas.setAttribute("aria-label", `timeline of frame ${frame.index}: ${labels.join(", ")}`);
  }

  reset() {
    this.view = { from: this.origin, to: this.extent };
    this.draw();
  }

  draw() {
    const frame = this.frame;
    let height = RULER;
    this.layout = this.tracks.map((track) => {
      const depth = track.spans.reduce((max, span) => Math.max(max, span.depth), 0);
      const lane = { track, top: height + LANE_GAP, rows: depth + 1 };
      height = lane.top + lane.rows * ROW;
      return lane;
    });
    height += LANE_GAP + 14; // room for the "next frame" label under the lanes
    const { context: g, width } = fitCanvas(this.canvas, Math.max(height, 70));
    const colours = palette();
    const x = (ns) => GUTTER + ((ns - this.view.from) / (this.view.to - this.view.from)) * (width - GUTTER);
    this.x = x;
    this.width = width;
    this.drawRuler(g, width, x, colours);
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    for (const lane of this.layout) {
      const { track, top, rows } = lane;
      g.fillStyle = colours.grid;
      g.fillRect(GUTTER, top - LANE_GAP / 2, width - GUTTER, 1);
      g.save();
      g.beginPath();
      g.rect(GUTTER, top, width - GUTTER, rows * ROW);
      g.clip();
      for (const span of track.spans) {
        const x0 = x(span.start_ns);
        const x1 = x(span.start_ns + span.dur_ns);
        if (x1 < GUTTER || x0 > width) continue;
        const spanTop = top + span.depth * ROW;
        const w = Math.max(1, x1 - x0);
        g.fillStyle = track.gpu ? nameColour(span.name, 55) : nameColour(span.name);
        g.fillRect(x0, spanTop, w, ROW - 1);
        if (w > 28) {
          const left = Math.max(x0, GUTTER) + 3;
          const room = Math.min(x1, width) - left - 3;
          if (room > 12) {
            g.fillStyle = "#111";
            g.fillText(clip(g, `${span.name} ${fmtNs(span.dur_ns)}`, room), left, spanTop + ROW / 2);
          }
        }
      }
      this.drawMarks(g, lane, x, colours);
      g.restore();
      g.fillStyle = track.gpu ? colours.gpu : colours.fg;
      g.font = track.gpu ? "italic 11px system-ui, sans-serif" : "11px system-ui, sans-serif";
      g.fillText(clip(g, track.label, GUTTER - 10), 6, top + ROW / 2);
      g.font = "11px system-ui, sans-serif";
    }
    if (this.tracks.length === 0) {
      g.fillStyle = colours.muted;
      g.fillText("no CPU spans recorded in this frame", GUTTER + 8, RULER + 24);
    }
    const marksOutside = frame.marks.filter((mark) => !mark.thread || !this.tracks.some((t) => t.label === mark.thread));
    for (const mark of marksOutside) this.tick(g, x(mark.at_ns), RULER - 6, height - RULER, colours.pinned);
    this.canvas.dataset.view = JSON.stringify([Math.round(this.view.from), Math.round(this.view.to)]);
    // Where things were drawn, for tests that point at a span: the gutter, each lane's top.
    this.canvas.dataset.layout = JSON.stringify({ gutter: GUTTER, row: ROW, tops: this.layout.map((lane) => lane.top) });
  }

  drawRuler(g, width, x, colours) {
    g.font = "10px system-ui, sans-serif";
    g.textBaseline = "alphabetic";
    const span = this.view.to - this.view.from;
    const step = niceStep(span / Math.max(1, (width - GUTTER) / 90));
    g.fillStyle = colours.muted;
    g.textAlign = "left";
    for (let ns = Math.ceil(this.view.from / step) * step; ns <= this.view.to; ns += step) {
      const px = x(ns);
      g.fillRect(px, RULER - 5, 1, 5);
      g.fillText(fmtNs(ns), px + 2, RULER - 7);
    }
    // The frame's own edges: where its work ended and where the next frame began.
    const frame = this.frame;
    if (this.origin < 0) this.edge(g, x(0), "frame begin", colours.muted);
    this.edge(g, x(frame.end_ns - frame.begin_ns), "end of work", colours.work);
    if (frame.period_ns !== null && frame.period_ns !== undefined) this.edge(g, x(frame.period_ns), "next frame", colours.budget, true);
    g.fillStyle = colours.bg;
    g.fillRect(0, 0, GUTTER, RULER);
    g.fillStyle = colours.muted;
    g.fillText("thread", 6, RULER - 7);
  }

  /** A full-height line at `px`, labelled at the top (or, `bottom`, at the bottom). */
  edge(g, px, label, colour, bottom = false) {
    g.fillStyle = colour;
    g.fillRect(px, 0, 1, this.canvas.clientHeight);
    const room = this.width - px > g.measureText(label).width + 6;
    g.textAlign = room ? "left" : "right";
    g.fillText(label, room ? px + 3 : px - 3, bottom ? this.canvas.clientHeight - 3 : 9);
    g.textAlign = "left";
  }

  drawMarks(g, lane, x, colours) {
    for (const mark of this.frame.marks) {
      if (mark.thread !== lane.track.label) continue;
      this.tick(g, x(mark.at_ns), lane.top, lane.rows * ROW, colours.pinned);
    }
  }

  tick(g, px, top, height, colour) {
    g.fillStyle = colour;
    g.fillRect(px, top, 1, height);
    g.beginPath();
    g.moveTo(px - 4, top);
    g.lineTo(px + 4, top);
    g.lineTo(px, top + 6);
    g.fill();
  }

  wheel(event) {
    if (!this.frame) return;
    event.preventDefault();
    const at = this.nsAt(event.offsetX);
    const factor = Math.exp(Math.sign(event.deltaY) * Math.min(Math.abs(event.deltaY), 200) * 0.002);
    const span = Math.min((this.extent - this.origin) * 4, Math.max(1000, (this.view.to - this.view.from) * factor));
    const share = (at - this.view.from) / (this.view.to - this.view.from);
    this.view = { from: at - share * span, to: at + (1 - share) * span };
    this.draw();
  }

  nsAt(px) {
    const share = (px - GUTTER) / Math.max(1, this.width - GUTTER);
    return this.view.from + Math.max(0, share) * (this.view.to - this.view.from);
  }

  pointerDown(event) {
    if (!this.frame) return;
    this.canvas.setPointerCapture(event.pointerId);
    this.pan = { x: event.offsetX, view: { ...this.view } };
  }

  pointerMove(event) {
    if (!this.frame) return;
    if (this.pan) {
      const perPx = (this.pan.view.to - this.pan.view.from) / Math.max(1, this.width - GUTTER);
      const shift = (this.pan.x - event.offsetX) * perPx;
      this.view = { from: this.pan.view.from + shift, to: this.pan.view.to + shift };
      this.draw();
      return;
    }
    this.hover(event);
  }

  /** The span under the pointer, named with its site and its duration as recorded. */
  hover(event) {
    const hit = this.spanAt(event.offsetX, event.offsetY);
    const mark = hit ? null : this.markAt(event.offsetX);
    if (!hit && !mark) {
      this.tooltip.hidden = true;
      return;
    }
    if (hit) {
      const { span, track } = hit;
      this.tooltip.textContent = [
        `${span.name}${track.gpu ? "  (GPU pass, nominal placement)" : ""}`,
        span.site ? `at ${span.site}` : track.gpu ? null : "site unknown",
        `duration ${fmtNs(span.dur_ns)} (${nsExact(span.dur_ns)})`,
        `start +${fmtNs(span.start_ns)} · depth ${span.depth} · ${track.label}`,
      ]
        .filter(Boolean)
        .join("\n");
    } else {
      this.tooltip.textContent = `mark ${mark.name} at +${fmtNs(mark.at_ns)}${mark.thread ? ` on ${mark.thread}` : ""}${mark.note ? `\n${mark.note}` : ""}`;
    }
    this.tooltip.hidden = false;
    const box = this.canvas.getBoundingClientRect();
    this.tooltip.style.left = `${Math.min(box.left + event.offsetX + 14, window.innerWidth - 320) + window.scrollX}px`;
    this.tooltip.style.top = `${box.top + event.offsetY + 16 + window.scrollY}px`;
  }

  spanAt(px, py) {
    for (const lane of this.layout) {
      if (py < lane.top || py >= lane.top + lane.rows * ROW) continue;
      const depth = Math.floor((py - lane.top) / ROW);
      const ns = this.nsAt(px);
      const slack = (this.view.to - this.view.from) / Math.max(1, this.width - GUTTER); // one pixel
      for (const span of lane.track.spans) {
        if (span.depth === depth && ns >= span.start_ns - slack && ns <= span.start_ns + span.dur_ns + slack) {
          return { span, track: lane.track };
        }
      }
    }
    return null;
  }

  markAt(px) {
    return this.frame.marks.find((mark) => Math.abs(this.x(mark.at_ns) - px) <= 3) ?? null;
  }
}

function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  for (const multiple of [1, 2, 5, 10]) if (power * multiple >= raw) return power * multiple;
  return power * 10;
}
