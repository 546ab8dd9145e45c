// One bar per frame, its height the period; a frame with no period is a gap, never zero.
export function drawStrip(canvas, strip) {
  const ctx = canvas.getContext("2d");
  const n = strip.period_ns.length;
  const ceiling = 4 * strip.budget_ns;
  const w = canvas.width / Math.max(n, 1);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  for (let i = 0; i < n; i++) {
    const p = strip.period_ns[i];
    if (p === null) continue;
    const h = (Math.min(p, ceiling) / ceiling) * canvas.height;
    ctx.fillStyle = strip.hitch[i] ? "#c33" : strip.paused[i] ? "#999" : "#369";
    ctx.fillRect(i * w, canvas.height - h, Math.max(w - 1, 1), h);
  }
}
