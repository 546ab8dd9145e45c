// Two frames' rows whose values differ.
export function describeCompare(c) {
  const changed = c.rows.filter((r) => r.delta !== null && r.delta !== 0).length;
  return `frames ${c.a.index} and ${c.b.index}: ${changed} of ${c.rows.length} values differ`;
}
