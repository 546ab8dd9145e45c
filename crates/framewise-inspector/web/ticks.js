// Ruler ticks: a round step (1, 2 or 5 × 10^k ns) for about `count` ticks over a span, and a
// label with as many decimals as the step needs, so that neighbouring ticks never read the
// same at any zoom ("3200.5124 ms" when the step is 200 ns).

/** The round step (ns, at least 1) for about `count` ticks across `span` ns. */
export function tickStep(span, count) {
  const raw = Math.max(span / Math.max(1, count), 1);
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const multiple of [1, 2, 5, 10]) if (power * multiple >= raw) return power * multiple;
  return power * 10;
}

/** `ns` as a tick label for ticks `step` ns apart: milliseconds (seconds past 10 s steps). */
export function tickLabel(ns, step) {
  const at = Math.round(ns / step) * step;
  if (step >= 1e10) return `${(at / 1e9).toFixed(0)} s`;
  const stepMs = step / 1e6;
  const decimals = Math.max(0, Math.ceil(-Math.log10(stepMs) - 1e-9));
  return `${(at / 1e6).toFixed(decimals)} ms`;
}
