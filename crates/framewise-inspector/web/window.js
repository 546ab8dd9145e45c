// The continuous timeline's data: /api/window's binary answer decoded in place (the CPU
// spans are typed arrays over the answer's bytes: nothing to parse, no object per span),
// fetched in aligned chunks of CHUNK_ROWS frames and kept in a small cache, so that panning
// and zooming ask only for frames not seen yet and the view's neighbours are fetched before
// they are needed.

import { getBytes } from "./api.js";

/** Rows per chunk: the unit fetched, cached and dropped. */
export const CHUNK_ROWS = 32;
/** Chunks kept; past this, the least recently used are dropped (a view holds at most 14). */
const KEEP_CHUNKS = 64;
const MAGIC = "FWWINDOW";
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const align8 = (at) => Math.ceil(at / 8) * 8;

/**
 * /api/window's bytes (docs/INSPECTOR.md): the header's fields, and `lanes` each with its
 * columns `start`, `dur`, `self` (Float64Array, ns), `row`, `scope`, `depth` (Uint32Array),
 * `n` spans and `maxDepth`; `names` are the scopes (`{name, site}`) the `scope` column indexes.
 */
export function decodeWindow(buffer) {
  const bytes = new Uint8Array(buffer);
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (magic !== MAGIC) throw new Error(`/api/window did not answer a window (it begins ${JSON.stringify(magic)})`);
  if (!LITTLE_ENDIAN) throw new Error("this browser's typed arrays are big-endian; /api/window's columns are little-endian");
  const length = new DataView(buffer).getUint32(8, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + length)));
  let at = align8(16 + length);
  const lanes = header.lanes.map((lane) => {
    const n = lane.spans;
    const column = (Kind) => {
      const values = new Kind(buffer, at, n);
      at += Kind.BYTES_PER_ELEMENT * n;
      return values;
    };
    const [start, dur, self] = [column(Float64Array), column(Float64Array), column(Float64Array)];
    const [row, scope, depth] = [column(Uint32Array), column(Uint32Array), column(Uint32Array)];
    at = align8(at);
    let maxDepth = 0;
    for (const d of depth) maxDepth = Math.max(maxDepth, d);
    return { thread: lane.thread, threadId: lane.thread_id, n, start, dur, self, row, scope, depth, maxDepth, names: header.scopes };
  });
  if (at !== buffer.byteLength) throw new Error(`/api/window's answer is ${buffer.byteLength} bytes, its header describes ${at}`);
  return { ...header, lanes };
}

/** The GPU spans of a decoded window as one lane of columns (passes named by `names`). */
export function gpuLane(data, label) {
  const names = [];
  const ids = new Map();
  const scope = data.gpu.map((s) => {
    if (!ids.has(s.pass)) {
      ids.set(s.pass, names.length);
      names.push({ name: s.pass, site: null });
    }
    return ids.get(s.pass);
  });
  const depth = data.gpu.map((s) => s.depth);
  return {
    thread: label,
    n: data.gpu.length,
    start: data.gpu.map((s) => s.start_ns),
    dur: data.gpu.map((s) => s.dur_ns),
    self: null,
    row: data.gpu.map((s) => s.row),
    scope,
    depth,
    maxDepth: depth.reduce((max, d) => Math.max(max, d), 0),
    names,
  };
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

/** Decoded chunks of /api/window by chunk number, fetched once, least recently used dropped. */
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

  /** Fetches what is missing over [from, to); resolves once every chunk there is decoded. */
  load(from, to) {
    const promises = this.numbers(from, to).map((i) => this.chunk(i));
    this.evict();
    return Promise.all(promises);
  }

  chunk(i) {
    let entry = this.chunks.get(i);
    if (!entry) {
      const from = i * CHUNK_ROWS;
      const to = Math.min(this.count, from + CHUNK_ROWS);
      entry = { data: null, used: 0 };
      entry.promise = getBytes("window", { from, to }).then(
        (buffer) => (entry.data = decodeWindow(buffer)),
        (error) => {
          if (this.chunks.get(i) === entry) this.chunks.delete(i);
          throw error;
        },
      );
      this.chunks.set(i, entry);
    }
    entry.used = ++this.clock;
    return entry.promise;
  }

  evict() {
    if (this.chunks.size <= KEEP_CHUNKS) return;
    const done = [...this.chunks].filter(([, entry]) => entry.data).sort((a, b) => a[1].used - b[1].used);
    for (const [i] of done.slice(0, this.chunks.size - KEEP_CHUNKS)) this.chunks.delete(i);
  }
}
