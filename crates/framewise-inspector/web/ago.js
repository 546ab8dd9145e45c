// When an issue was last seen, read as a person reads it: the same words as the console of
// `framewise issues` (`ago` in crates/framewise-cli/src/ledger.rs; a test runs both on the
// same values). It imports nothing, so node can load it alone.

/**
 * "3h ago" for a last occurrence `ms` milliseconds before now; "in the future" for one after
 * it (a clock set wrong, a hand-edited line); null when `ms` is no number.
 */
export function ago(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return null;
  if (ms <= -500) return "in the future";
  const s = Math.floor((Math.max(ms, 0) + 500) / 1000);
  if (s < 60) return `${s}s ago`;
  const m = Math.floor((s + 30) / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor((m + 30) / 60);
  if (h < 48) return `${h}h ago`;
  return `${Math.floor((h + 12) / 24)}d ago`;
}
