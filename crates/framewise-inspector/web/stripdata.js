// /api/strip's binary columns (docs/INSPECTOR.md, "The strip's binary columns"), decoded
// into the shape every view reads: one array per column, `null` where a value is not known
// (a period not measured, a frame without GPU timing, no phase). No DOM and no import here:
// the browser tests' script (node) decodes the strip with this same module.

const MAGIC = "FWSTRIP2";
const HEADER_BYTES = 48;
const COLUMNS = ["index", "begin_ns", "period_ns", "work_ns", "gpu_ns", "flags", "phase", "dropped_spans"];
const NULLABLE = new Set(["period_ns", "gpu_ns", "phase"]);

/**
 * The strip in `buffer`: `{complete, budget_ns, index, begin_ns, period_ns, work_ns, gpu_ns,
 * hitch, paused, phase, dropped_spans}`. Columns are plain arrays of numbers (booleans for
 * `hitch` and `paused`, names or null for `phase`). When `complete` is false (the strip the
 * file's directory gave while the capture loads), `phase` and `dropped_spans` are null: not
 * known yet, never zero.
 */
export function decodeStrip(buffer) {
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (bytes.length < HEADER_BYTES || magic !== MAGIC) throw new Error(`/api/strip: not a ${MAGIC} strip`);
  const rows = view.getUint32(8, true);
  const flags = view.getUint32(12, true);
  const budget = Number(view.getBigUint64(16, true));
  const widths = [...bytes.subarray(32, 40)];
  const phaseCount = view.getUint32(40, true);
  let at = HEADER_BYTES;
  const columns = {};
  COLUMNS.forEach((name, i) => {
    const width = widths[i];
    if (width === 0) {
      columns[name] = null;
      return;
    }
    columns[name] = readColumn(buffer, at, rows, width, NULLABLE.has(name));
    at += Math.ceil((rows * width) / 8) * 8;
  });
  const names = [];
  const text = new TextDecoder();
  for (let i = 0; i < phaseCount; i++) {
    const length = view.getUint32(at, true);
    names.push(text.decode(bytes.subarray(at + 4, at + 4 + length)));
    at += 4 + length;
  }
  const hitch = new Array(rows);
  const paused = new Array(rows);
  for (let row = 0; row < rows; row++) {
    hitch[row] = (columns.flags[row] & 1) !== 0;
    paused[row] = (columns.flags[row] & 2) !== 0;
  }
  return {
    complete: (flags & 1) !== 0,
    budget_ns: budget,
    index: columns.index,
    begin_ns: columns.begin_ns,
    period_ns: columns.period_ns,
    work_ns: columns.work_ns,
    gpu_ns: columns.gpu_ns,
    hitch,
    paused,
    phase: columns.phase && columns.phase.map((p) => (p === null ? null : (names[p] ?? null))),
    dropped_spans: columns.dropped_spans,
  };
}

/** One column of `rows` little-endian values `width` bytes wide; all-ones is null when `nullable`. */
function readColumn(buffer, at, rows, width, nullable) {
  const out = new Array(rows);
  if (width === 1) {
    const values = new Uint8Array(buffer, at, rows);
    for (let row = 0; row < rows; row++) out[row] = values[row];
  } else if (width === 4) {
    const values = new Uint32Array(buffer, at, rows);
    for (let row = 0; row < rows; row++) out[row] = nullable && values[row] === 0xffffffff ? null : values[row];
  } else if (width === 8) {
    const values = new BigUint64Array(buffer, at, rows);
    for (let row = 0; row < rows; row++) out[row] = nullable && values[row] === 0xffffffffffffffffn ? null : Number(values[row]);
  } else {
    throw new Error(`/api/strip: a column ${width} bytes wide`);
  }
  return out;
}
