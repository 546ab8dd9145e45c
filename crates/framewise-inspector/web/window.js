// The continuous timeline's data: /api/window's binary answer decoded in place (the CPU
// spans are typed arrays over the answer's bytes: nothing to parse, no object per span),
// fetched in aligned chunks of CHUNK_ROWS frames (the missing ones next to each other in one
// request) and kept in a small cache, so that panning and zooming ask only for frames not
// seen yet and the view's neighbours are fetched before they are needed.

import { getBytes } from "./api.js";

/** Rows per chunk: the unit fetched, cached and dropped. */
export const CHUNK_ROWS = 32;
/** Chunks kept; past this, the least recently used are dropped (a view holds at most 14). */
const KEEP_CHUNKS = 64;
const MAGIC = "FWWINDOW";
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const align8 = (at) => Math.ceil(at / 8) * 8;

/**
 * /api/window's bytes (docs/INSPECTOR.md): the header's fields, with `lanes` each its columns
 * `start`, `dur`, `self` (Float64Array, ns), `row`, `scope`, `depth` (Uint32Array), `n` spans
 * and `maxDepth` (`names` are the scopes, `{name, site}`, the `scope` column indexes); `gpu`
 * the GPU spans as one such lane (no `self`; `scope` indexes the passes as `names`); and
 * `counters` each with its `values` as `{row, value}`.
 */
export function decodeWindow(buffer) {
  const bytes = new Uint8Array(buffer);
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (magic !== MAGIC) throw new Error(`/api/window did not answer a window (it begins ${JSON.stringify(magic)})`);
  if (!LITTLE_ENDIAN) throw new Error("this browser's typed arrays are big-endian; /api/window's columns are little-endian");
  const length = new DataView(buffer).getUint32(8, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + length)));
  let at = align8(16 + length);
  const column = (Kind, n) => {
    const values = new Kind(buffer, at, n);
    at += Kind.BYTES_PER_ELEMENT * n;
    return values;
  };
  const lanes = header.lanes.map((lane) => {
    const n = lane.spans;
    const [start, dur, self] = [column(Float64Array, n), column(Float64Array, n), column(Float64Array, n)];
    const [row, scope, depth] = [column(Uint32Array, n), column(Uint32Array, n), column(Uint32Array, n)];
    at = align8(at);
    return { thread: lane.thread, threadId: lane.thread_id, n, start, dur, self, row, scope, depth, maxDepth: maxOf(depth), names: header.scopes };
  });
  const n = header.gpu_spans;
  const [start, dur] = [column(Float64Array, n), column(Float64Array, n)];
  const [row, pass, depth] = [column(Uint32Array, n), column(Uint32Array, n), column(Uint32Array, n)];
  at = align8(at);
  const names = header.passes.map((name) => ({ name, site: null }));
  const gpu = { thread: null, threadId: null, n, start, dur, self: null, row, scope: pass, depth, maxDepth: maxOf(depth), names };
  const counters = header.counters.map((counter) => {
    const value = column(Float64Array, counter.samples);
    const rows = column(Uint32Array, counter.samples);
    at = align8(at);
    return { id: counter.id, name: counter.name, kind: counter.kind, values: Array.from(rows, (r, i) => ({ row: r, value: value[i] })) };
  });
  if (at !== buffer.byteLength) throw new Error(`/api/window's answer is ${buffer.byteLength} bytes, its header describes ${at}`);
  return { ...header, lanes, gpu, counters };
}

/** The deepest of a `depth` column (0 when empty). */
function maxOf(depth) {
  let max = 0;
  for (const d of depth) max = Math.max(max, d);
  return max;
}

/** Span `i` of a lane as an object (what a hover or a click reports). */
export function spanOf(lane, i) {
  const name = lane.names[lane.scope[i]];
  return {
    row: lane.row[i],
    scope: lane.scope[i],
    depth: lane.depth[i],
    start_ns: lane.start[i],
    dur_ns: lane.dur[i],
    self_ns: lane.self ? lane.self[i] : null,
    name: name?.name ?? "?",
    site: name?.site ?? null,
  };
}

/** The first position in the sorted `rows` (a Uint32Array) holding `row` or more. */
function firstAtOrAfter(rows, row) {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Rows [from, to) of a decoded window, as if /api/window had been asked for them alone (the
 * columns are views into the same bytes; lanes and counters without a row there are left out).
 */
export function sliceWindow(data, from, to) {
  const inRows = (item) => item.row >= from && item.row < to;
  const cutLane = (lane) => {
    const a = firstAtOrAfter(lane.row, from);
    const b = firstAtOrAfter(lane.row, to);
    const cut = (column) => column && column.subarray(a, b);
    const depth = cut(lane.depth);
    return { ...lane, n: b - a, start: cut(lane.start), dur: cut(lane.dur), self: cut(lane.self), row: cut(lane.row), scope: cut(lane.scope), depth, maxDepth: maxOf(depth) };
  };
  const lanes = data.lanes.map(cutLane).filter((lane) => lane.n > 0);
  const counters = data.counters.map((c) => ({ ...c, values: c.values.filter(inRows) })).filter((c) => c.values.length > 0);
  return { ...data, from, to, frames: data.frames.filter(inRows), lanes, gpu: cutLane(data.gpu), marks: data.marks.filter(inRows), counters };
}

/** Chunks fetched by one request at most (rows: a 400-frame view and its neighbours fit twice). */
const CHUNKS_PER_REQUEST = 16;

/**
 * Decoded chunks of /api/window by chunk number, fetched once (the missing chunks next to each
 * other in one request), least recently used dropped.
 */
export class WindowCache {
  constructor(count) {
    this.chunks = new Map();
    this.clock = 0;
    this.count = count;
  }

  /**
   * The capture now has `count` frames (a followed capture grew): the chunk that held the
   * old last frame, and any after it, are fetched again.
   */
  setCount(count) {
    if (count === this.count) return;
    const stale = count < this.count ? 0 : Math.floor(Math.max(0, this.count - 1) / CHUNK_ROWS);
    for (const i of [...this.chunks.keys()]) if (i >= stale) this.chunks.delete(i);
    this.count = count;
  }

  /** Chunk numbers covering rows [from, to). */
  numbers(from, to) {
    const out = [];
    for (let i = Math.floor(from / CHUNK_ROWS); i * CHUNK_ROWS < Math.min(to, this.count); i++) out.push(i);
    return out;
  }

  /** The chunks over [from, to) already decoded, in row order, and whether none is missing. */
  loaded(from, to) {
    const chunks = [];
    let complete = true;
    for (const i of this.numbers(from, to)) {
      const data = this.chunks.get(i)?.data;
      if (data) chunks.push(data);
      else complete = false;
    }
    return { chunks, complete };
  }

  /** Rows over [from, to) in chunks neither decoded nor being fetched. */
  missingRows(from, to) {
    return this.numbers(from, to)
      .filter((i) => !this.chunks.has(i))
      .reduce((sum, i) => sum + Math.min(CHUNK_ROWS, this.count - i * CHUNK_ROWS), 0);
  }

  /** Whether every chunk over [from, to) is decoded. */
  has(from, to) {
    return this.numbers(from, to).every((i) => this.chunks.get(i)?.data);
  }

  /**
   * Fetches what is missing over [from, to), each run of missing chunks next to each other as
   * one request (`priority`: the fetch's priority hint, "low" for what is fetched ahead);
   * resolves once every chunk there is decoded.
   */
  load(from, to, priority = "high") {
    const numbers = this.numbers(from, to);
    let run = [];
    const flush = () => {
      if (run.length > 0) this.fetchRun(run, priority);
      run = [];
    };
    for (const i of numbers) {
      if (this.chunks.has(i)) flush();
      else {
        run.push(i);
        if (run.length === CHUNKS_PER_REQUEST) flush();
      }
    }
    flush();
    const promises = numbers.map((i) => {
      const entry = this.chunks.get(i);
      entry.used = ++this.clock;
      return entry.promise;
    });
    this.evict();
    return Promise.all(promises);
  }

  /** One request for the chunks `run` (consecutive numbers), each an entry of the cache. */
  fetchRun(run, priority) {
    const from = run[0] * CHUNK_ROWS;
    const to = Math.min(this.count, (run[run.length - 1] + 1) * CHUNK_ROWS);
    const whole = getBytes("window", { from, to }, { priority }).then(decodeWindow);
    for (const i of run) {
      const entry = { data: null, used: 0 };
      entry.promise = whole.then(
        (data) => (entry.data = sliceWindow(data, i * CHUNK_ROWS, Math.min(this.count, (i + 1) * CHUNK_ROWS))),
        (error) => {
          if (this.chunks.get(i) === entry) this.chunks.delete(i);
          throw error;
        },
      );
      this.chunks.set(i, entry);
    }
  }

  evict() {
    if (this.chunks.size <= KEEP_CHUNKS) return;
    const done = [...this.chunks].filter(([, entry]) => entry.data).sort((a, b) => a[1].used - b[1].used);
    for (const [i] of done.slice(0, this.chunks.size - KEEP_CHUNKS)) this.chunks.delete(i);
  }
}
