// Not a test: how long the page takes to show spans, measured by the page itself
// (`performance.now()`), for docs/performance/inspector.md. Against a running `framewise view`:
//
//   node measure.mjs URL [RUNS]
//
// Each run opens the page afresh (nothing fetched yet), waits until the server has loaded
// the capture (`/api/loading` says "ready": its load behind the page shares the cores), and
// prints:
// - "frame": a frame selected far from any frame seen (End, Home, a click in the middle of
//   the strip): from the input event (its time stamp: the key down, the button up) to the
//   frame's spans on screen (the page's `data-painted-at`: the first task after the
//   rendering update that followed their draw, web/timeline.js), split into the input to the
//   timeline's ask for its frames, to their draw, to the screen; and the timeline's older
//   figure, from its ask to the end of its draw (fetch, decode, draw: the script's work
//   only, without the browser's style, layout, paint and commit after it), the rows it
//   fetched and the spans drawn;
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

// FRAMEWISE_MEASURE_PROFILE=1: each frame selection is sampled by chromium's profiler, and
// the functions that held the page's main thread longest are printed (self time).
const PROFILE = Boolean(process.env.FRAMEWISE_MEASURE_PROFILE);
// FRAMEWISE_MEASURE_TRACE=1: each frame selection is traced (chromium's "devtools.timeline"
// category, what DevTools' Performance panel records), and the renderer main thread's time
// from the input event to the spans on screen is printed by kind: scripts, style recalculation
// (UpdateLayoutTree), layout, pre-paint, paint, layerize, commit; layouts forced by a script
// are counted with the function that forced them.
const TRACE = Boolean(process.env.FRAMEWISE_MEASURE_TRACE);

/** Starts a trace on `session`; the returned function stops it and resolves to its events. */
async function startTrace(session) {
  const events = [];
  session.on("Tracing.dataCollected", ({ value }) => events.push(...value));
  const complete = new Promise((resolve) => session.once("Tracing.tracingComplete", resolve));
  await session.send("Tracing.start", {
    transferMode: "ReportEvents",
    traceConfig: { includedCategories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "disabled-by-default-devtools.timeline.stack", "blink.user_timing"] },
  });
  return async () => {
    await session.send("Tracing.end");
    await complete;
    return events;
  };
}

/**
 * The renderer main thread's time by kind (the top-level tasks' total, and inside them each
 * kind's own), from the first input event (keydown or a pointer's) of `events` on.
 */
function traceSummary(events) {
  const isInput = (e) => e.ph === "X" && e.name === "EventDispatch" && /^(keydown|pointerup)$/.test(e.args?.data?.type ?? "");
  const input = events.find(isInput);
  if (!input) return "no input event in the trace";
  const painted = events.find((e) => e.name === "framewise:spans-painted" && e.pid === input.pid && e.ts > input.ts);
  const onMain = events.filter((e) => e.pid === input.pid && e.tid === input.tid && e.ph === "X" && e.dur !== undefined);
  const from = input.ts;
  const until = painted ? painted.ts : Infinity;
  const kinds = ["RunTask", "FunctionCall", "EventDispatch", "TimerFire", "FireAnimationFrame", "v8.run", "UpdateLayoutTree", "Layout", "PrePaint", "Paint", "PaintImage", "Layerize", "UpdateLayer", "Commit", "HitTest", "ParseAuthorStyleSheet", "ResourceReceivedData"];
  const total = new Map();
  const count = new Map();
  const forced = new Map();
  let last = from;
  for (const e of onMain) {
    if (e.ts < from || e.ts >= until) continue;
    last = Math.max(last, Math.min(until, e.ts + e.dur));
    if (!kinds.includes(e.name)) continue;
    total.set(e.name, (total.get(e.name) ?? 0) + e.dur / 1000);
    count.set(e.name, (count.get(e.name) ?? 0) + 1);
    const stack = e.args?.beginData?.stackTrace;
    if ((e.name === "Layout" || e.name === "UpdateLayoutTree") && stack?.length) {
      const key = `${e.name} by ${stack[0].functionName || "(anonymous)"} (${stack[0].url.split("/").pop()}:${stack[0].lineNumber})`;
      forced.set(key, (forced.get(key) ?? 0) + e.dur / 1000);
    }
  }
  if (process.env.FRAMEWISE_MEASURE_TRACE === "all") {
    const byName = new Map();
    for (const e of onMain) if (e.ts >= from && e.ts < until) byName.set(e.name, (byName.get(e.name) ?? 0) + e.dur / 1000);
    console.log(`    every event: ${[...byName].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([n, ms]) => `${n} ${ms.toFixed(1)}`).join(", ")}`);
  }
  const parts = kinds.filter((k) => total.has(k)).map((k) => `${k} ${total.get(k).toFixed(1)} ms ×${count.get(k)}`);
  const forcedParts = [...forced].map(([k, ms]) => `${k} ${ms.toFixed(1)} ms`);
  return `${((last - from) / 1000).toFixed(1)} ms traced from the input ${painted ? "to the spans on screen" : "on (no spans-painted mark)"}: ${parts.join(", ")}${forcedParts.length ? `; forced by scripts: ${forcedParts.join(", ")}` : "; no layout forced by a script"}`;
}

/** A CPU profile's heaviest functions by self time: "name (file:line) ms", the top 12. */
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const f = node.callFrame;
    const key = `${f.functionName || "(anonymous)"} (${f.url.split("/").pop()}:${f.lineNumber + 1})`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  return [...self]
    .filter(([key]) => !key.startsWith("(idle)"))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([key, ms]) => `${key} ${ms.toFixed(1)}`)
    .join(", ");
}

const data = (page) => page.evaluate(() => ({ ...document.getElementById("timeline").dataset }));

/**
 * Runs `action`, which selects `row` (null: whichever row it selects), then waits until the
 * timeline has drawn that row's spans and every frame in its view; the row and the dataset.
 */
async function timedSelect(page, action, row) {
  await page.evaluate(() => {
    const t = document.getElementById("timeline").dataset;
    delete t.loadMs;
    delete t.paintedAt;
    delete t.paintedRow;
    window.inputAt = undefined;
    performance.clearResourceTimings();
  });
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
      return a <= v0 && v1 <= b && d.paintedRow === String(r);
    },
    row,
    { timeout: 60_000 },
  );
  const d = await data(page);
  // From the input event (its own time stamp: when the key or the button went down/up, before
  // any of the page's handlers ran) to the selected frame's spans on screen (the task after
  // the rendering update that followed their draw: see `markPainted` in web/timeline.js).
  const inputAt = await page.evaluate(() => window.inputAt);
  d.screenMs = inputAt === undefined ? undefined : (Number(d.paintedAt) - inputAt).toFixed(1);
  // Where that went: the input to the timeline's ask for its frames, the ask to its draw
  // (fetch, decode, draw: `loadMs`), the draw to the screen.
  if (inputAt !== undefined && d.loadAt !== undefined && d.loadMs !== undefined) {
    const asked = Number(d.loadAt) - inputAt;
    d.split = `input → ask ${asked.toFixed(1)}, → drawn ${(asked + Number(d.loadMs)).toFixed(1)}, → on screen ${d.screenMs}`;
  }
  return [row, d];
}

/**
 * Where a selection's time went, on the page's clock from the timeline asking for its frames
 * (`loadAt`): each API request the selection made (when it was sent, when its first byte and
 * its last arrived: the server's time is from sending to the first byte) and when the
 * timeline's pixels were done.
 */
async function requestsOf(page) {
  return page.evaluate(() => {
    const d = document.getElementById("timeline").dataset;
    if (d.loadAt === undefined || d.loadMs === undefined) return null;
    const t0 = Number(d.loadAt);
    const at = (t) => (t - t0).toFixed(1);
    const requests = performance
      .getEntriesByType("resource")
      .filter((e) => e.name.includes("/api/"))
      .map((e) => {
        const url = new URL(e.name);
        url.searchParams.delete("token");
        const what = `${url.pathname.slice(5)}${url.search ? ` ${url.search.slice(1)}` : ""}`;
        return `${what} [${at(e.startTime)} → ${at(e.responseStart)} → ${at(e.responseEnd)}, ${e.encodedBodySize} B]`;
      });
    return `requests (ms from the timeline's ask: sent → first byte → last byte): ${requests.join("; ")}; pixels at ${d.loadMs}`;
  });
}

async function one(context, run) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1400, height: 1000 });
  const started = Date.now();
  await page.goto(address);
  await page.waitForSelector("body[data-ready='1']", { timeout: 120_000 });
  const count = await page.evaluate(async () => (await (await import("/app/api.js")).get("capture")).frame_count);
  // The capture's load behind the page is finished first (it shares the cores), and the input
  // events' time stamps are kept (capture phase: before the page's own handlers).
  await page.evaluate(async () => {
    const { get } = await import("/app/api.js");
    while ((await get("loading")).state !== "ready") await new Promise((resolve) => setTimeout(resolve, 100));
    for (const type of ["keydown", "pointerup"]) window.addEventListener(type, (event) => (window.inputAt = event.timeStamp), { capture: true });
  });
  console.log(`run ${run}: page ready in ${Date.now() - started} ms, ${count} frames, the capture loaded`);
  // Each selection is made on a page at rest: what the page still does after it is ready
  // (the flame graph of the frame it opened on, the neighbours fetched ahead) is done first.
  const settle = () => page.waitForLoadState("networkidle").then(() => page.waitForTimeout(300));
  await settle();
  await page.focus("#strip");
  const frame = async (label, action, row) => {
    const profiler = PROFILE ? await page.context().newCDPSession(page) : null;
    if (profiler) {
      await profiler.send("Profiler.enable");
      await profiler.send("Profiler.setSamplingInterval", { interval: 100 });
      await profiler.send("Profiler.start");
    }
    const tracer = TRACE ? await page.context().newCDPSession(page) : null;
    const stopTrace = tracer ? await startTrace(tracer) : null;
    await settle();
    const [r, d] = await timedSelect(page, action, row);
    if (stopTrace) {
      console.log(`    trace: ${traceSummary(await stopTrace())}`);
      await tracer.detach();
    }
    if (profiler) {
      const { profile } = await profiler.send("Profiler.stop");
      console.log(`    main thread, by self time: ${selfTimes(profile)}`);
      await profiler.detach();
    }
    const fetched = d.loadMs === undefined ? "nothing fetched (its frames were)" : `${d.loadRows} rows fetched, fetch + decode + draw ${d.loadMs} ms`;
    console.log(`  frame ${label} (row ${r}): input → spans on screen ${d.screenMs} ms${d.split ? ` (${d.split})` : ""}; ${d.drawnSpans} spans drawn, ${fetched} (draw alone ${d.drawMs} ms)`);
    const requests = await requestsOf(page);
    if (requests) console.log(`    ${requests}`);
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
