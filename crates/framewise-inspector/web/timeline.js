// The selected frame in words: its lanes and their span counts.
export function describeFrame(frame) {
  const lanes = frame.lanes.map((l) => `${l.thread}: ${l.spans.length} spans`).join(", ");
  return `frame ${frame.index}: work ${frame.work_ns} ns; ${lanes || "no spans"}; ${frame.dropped_spans} dropped`;
}
