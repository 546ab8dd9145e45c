// Not a test: how long the page takes to show spans, measured by the page itself
// (`performance.now()`), for docs/PERFORMANCE.md. Against a running `framewise view`:
//
//   node measure.mjs URL [RUNS]
//
// Each run opens the page afresh (nothing fetched yet) and prints:
// - "frame": a frame selected far from any frame seen (End, Home, a click in the middle of
//   the strip): the timeline's own figure from asking for its frames not yet fetched to
//   their pixels (fetch, decode, draw), the rows it fetched and the spans drawn;
// - "zoom": S pressed from that frame until 200 frames or more are in view: the slowest
//   step that had to fetch (the view's neighbours are fetched ahead, so most need nothing);
// - "window": 200 rows never fetched (a quarter into the capture), fetched and decoded with
//   the page's own module as the timeline does it (its cache: the missing chunks in one
//   request, cut into chunks) and as one request decoded whole; the draw of a 200-frame
//   view is the "zoom" line's.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [address, runsText] = process.argv.slice(2);
const runs = Number(runsText ?? 3);
const chromiumPath = process.env.FRAMEWISE_CHROMIUM ?? execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim();

const data = (page) => page.evaluate(() => ({ ...document.getElementById("timeline").dataset }));

/**
 * Runs `action`, which selects `row` (null: whichever row it selects), then waits until the
 * timeline has drawn that row's spans and every frame in its view; the row and the dataset.
 */
async function timedSelect(page, action, row) {
  await page.evaluate(() => delete document.getElementById("timeline").dataset.loadMs);
  const before = await page.getAttribute("body", "data-selected-row");
  await action();
  if (row === null) {
    await page.waitForFunction((b) => document.body.dataset.selectedRow !== b, before, { timeout: 60_000 });
    row = Number(await page.getAttribute("body", "data-selected-row"));
  }
  await page.waitForFunction(
    (r) => {
      const d = document.getElementById("timeline").dataset;
      if (document.body.dataset.selectedRow !== String(r) || !d.rows || !JSON.parse(d.drawnRows).includes(r)) return false;
      const [a, b] = JSON.parse(d.rows);
      const [v0, v1] = document.getElementById("strip").dataset.view.split("-").map(Number);
      return a <= v0 && v1 <= b;
    },
    row,
    { timeout: 60_000 },
  );
  return [row, await data(page)];
}

async function one(context, run) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1400, height: 1000 });
  const started = Date.now();
  await page.goto(address);
  await page.waitForSelector("body[data-ready='1']", { timeout: 120_000 });
  const count = await page.evaluate(async () => (await (await import("/app/api.js")).get("capture")).frame_count);
  console.log(`run ${run}: page ready in ${Date.now() - started} ms, ${count} frames`);
  await page.focus("#strip");
  const frame = async (label, action, row) => {
    const [r, d] = await timedSelect(page, action, row);
    const fetched = d.loadMs === undefined ? "nothing fetched (its frames were)" : `${d.loadRows} rows fetched, fetch + decode + draw ${d.loadMs} ms`;
    console.log(`  frame ${label} (row ${r}): ${d.drawnSpans} spans drawn, ${fetched} (draw alone ${d.drawMs} ms)`);
  };
  await frame("End", () => page.keyboard.press("End"), count - 1);
  await frame("Home", () => page.keyboard.press("Home"), 0);
  const box = await page.locator("#strip").boundingBox();
  await frame("strip click", () => page.mouse.click(box.x + box.width / 2, box.y + box.height / 2), null);

  // Zoom out from there to 200 frames: every step that fetched, the slowest.
  await page.mouse.move(0, 0);
  await page.focus("#strip");
  let slowest = 0;
  let fetches = 0;
  let d = await data(page);
  for (let i = 0; i < 40 && Number(d.framesInView) < 200; i++) {
    await page.evaluate(() => delete document.getElementById("timeline").dataset.loadMs);
    await page.keyboard.press("s");
    await page.waitForFunction(() => {
      const t = document.getElementById("timeline").dataset;
      const [a, b] = JSON.parse(t.rows);
      const [v0, v1] = document.getElementById("strip").dataset.view.split("-").map(Number);
      return a <= v0 && v1 <= b;
    }, null, { timeout: 60_000 });
    d = await data(page);
    if (d.loadMs !== undefined) {
      fetches++;
      slowest = Math.max(slowest, Number(d.loadMs));
    }
  }
  console.log(`  zoom to ${d.framesInView} frames (${d.drawnSpans} spans): ${fetches} steps fetched, the slowest fetch + decode + draw ${slowest.toFixed(1)} ms; the view drawn in ${d.drawMs} ms`);

  // 200 rows never fetched: the page's module, as chunks in parallel and as one request.
  const from = Math.max(0, Math.floor(count / 4) - 100);
  const to = Math.min(count, from + 200);
  const w = await page.evaluate(async ([from, to, count]) => {
    const { WindowCache, decodeWindow } = await import("/app/window.js");
    const { getBytes } = await import("/app/api.js");
    let t = performance.now();
    const chunks = await new WindowCache(count).load(from, to);
    const chunked = performance.now() - t;
    t = performance.now();
    const buffer = await getBytes("window", { from, to });
    const whole = decodeWindow(buffer);
    const single = performance.now() - t;
    const spans = whole.lanes.reduce((sum, lane) => sum + lane.n, 0);
    return { chunked, chunks: chunks.length, single, bytes: buffer.byteLength, spans };
  }, [from, to, count]);
  console.log(`  window rows ${from}..${to} (${w.spans} spans, ${w.bytes} bytes as one answer): fetch + decode ${w.chunked.toFixed(1)} ms as the timeline does it (${w.chunks} chunks), ${w.single.toFixed(1)} ms as one request decoded whole`);
  await page.close();
}

const profile = mkdtempSync(join(tmpdir(), "framewise-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
try {
  for (let run = 1; run <= runs; run++) await one(context, run);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
