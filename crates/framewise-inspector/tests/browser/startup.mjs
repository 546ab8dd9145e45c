// Measures how long `framewise view CAPTURE` takes from its start to the frame strip's pixels
// in headless chromium (docs/performance/inspector.md); not a test, it checks nothing.
//
//   node startup.mjs BIN CAPTURE [RUNS]
//
// Per run: chromium is started first (a blank page, so its own start is not counted); then
// `BIN view CAPTURE --port 0` is spawned, its address line read, the
// page opened, and the clock read when the page marks the strip painted (body
// data-strip-painted: set in the animation frame after the strip was drawn) and when every
// view is rendered (data-ready). Prints one line per run: address line, strip painted and
// every view ready, each from the spawn; the bytes of /api/strip; the server's peak RSS.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { chromium } from "playwright-core";

const [bin, capture, runsText] = process.argv.slice(2);
if (!bin || !capture) {
  console.log("usage: node startup.mjs BIN CAPTURE [RUNS]");
  process.exit(2);
}
const runs = Number(runsText ?? 3);
const TIMEOUT_MS = 120_000;

async function once(context) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto("about:blank");
  let stripBytes = null;
  page.on("response", async (response) => {
    if (new URL(response.url()).pathname === "/api/strip" && stripBytes === null) {
      stripBytes = (await response.body().catch(() => Buffer.alloc(0))).length;
    }
  });
  const start = performance.now();
  const spawnedAt = Date.now();
  const child = spawn(bin, ["view", capture, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /^inspector: (\S+)$/m.exec(out);
      if (match) resolve(match[1]);
    });
    child.on("exit", () => reject(new Error(`view exited before its address line: ${stderr}`)));
  });
  const address = performance.now() - start;
  await page.goto(url);
  await page.waitForSelector("#strip[data-frames]", { timeout: TIMEOUT_MS });
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  const painted = performance.now() - start;
  // Where the page's time went (ms from the navigation's start, the page's own clock).
  const pixelsAt = await page.evaluate(() => performance.timeOrigin + Number(document.body.dataset.stripPainted ?? NaN));
  const page_ms = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const strip = performance.getEntriesByType("resource").find((r) => new URL(r.name).pathname === "/api/strip");
    const painted = document.body.dataset.stripPainted;
    return `shell ${Math.round(nav.responseEnd)}, scripts run ${Math.round(nav.domContentLoadedEventEnd)}, strip fetched ${Math.round(strip?.startTime ?? NaN)}–${Math.round(strip?.responseEnd ?? NaN)}${painted ? `, strip painted ${painted}` : ""}`;
  });
  await page.waitForSelector("body[data-ready='1'], body[data-error]", { timeout: TIMEOUT_MS });
  const ready = performance.now() - start;
  const loadingSeen = await page.evaluate(() => document.body.dataset.error ?? "");
  await page.close();
  const rss = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.kill("SIGTERM");
  await exited;
  const ms = (t) => `${Math.round(t)} ms`;
  console.log(
    `address line ${ms(address)} · strip painted ${ms(painted)} (by the page's clock ${ms(pixelsAt - spawnedAt)}) · every view ready ${ms(ready)}${loadingSeen ? ` (error: ${loadingSeen})` : ""} · /api/strip ${stripBytes} B · page: ${page_ms} · peak RSS ${rss ? `${(Number(rss) / 1024).toFixed(0)} MB` : "?"}`,
  );
}

const profile = mkdtempSync(join(tmpdir(), "framewise-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.FRAMEWISE_CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
try {
  for (let run = 0; run < runs; run++) await once(context);
} finally {
  await context.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
}
