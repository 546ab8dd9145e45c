// The frame's topology in one line, or why there is none.
export function describeStructure(s) {
  if (s.topology === null) return s.reason;
  return `topology ${s.topology.id}: ${s.topology.passes.map((p) => p.label).join(" → ")}`;
}
