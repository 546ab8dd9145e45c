// The statistics of the selected range, in one line, with the note every statistics view carries.
export function describeStats(stats) {
  const f = stats.frame;
  return `rows ${stats.range.from}–${stats.range.to}: ${f.count} periods, avg ${f.avg ?? "—"} ms, p99 ${f.p99 ?? "—"} ms. ` +
    "A single GPU frame may be quantized; aggregates are the honest reading.";
}
