// Drives the inspector in Debian's chromium and checks what it renders against the API,
// which this script fetches itself with the page's token.
//
//   node inspector.test.mjs URL [--expect-recovered] [--expect-gpu] [--expect-issues]
//   node inspector.test.mjs URL --follow
//   node inspector.test.mjs URL --loading
//   node inspector.test.mjs URL --issues-broken | --file-changed | --zoomed-out
//   node inspector.test.mjs URL --no-spans | --repeated-indices
//
// URL is the address `framewise view` printed (http://127.0.0.1:PORT/?token=…). With
// --follow the capture is still being written: once the page shows it live, the script
// prints "ready N" (N frames drawn) and waits for the writer (tests/browser.rs) to append
// frames and close the file, then checks that the strip grew and the page says closed. With
// --loading the server holds the capture's load: the script checks the strip is painted while
// it loads, prints "painted N" and waits for the test to release the load (loading.mjs). With
// --issues-broken the game's incident log cannot be read, with --file-changed the capture's
// file is cut short once the script prints "ready N" (failures.mjs); with --zoomed-out the
// capture has thousands of frames with a counter (counters.mjs); with --no-spans the capture
// records no spans, with --repeated-indices it holds two recordings (honest.mjs). Env:
// FRAMEWISE_CHROMIUM (default: chromium on PATH), FRAMEWISE_BROWSER_SHOT (save a full-page
// screenshot there), FRAMEWISE_BROWSER_SHOTS (a directory: save every view at 1280×720).
// Exit 0 when every check holds; else 1 with one line naming the first that did not.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { Failure, TIMEOUT_MS, apiClient, check, sameMs, waitFor, watchedPage } from "./lib.mjs";
import { checkLayout, checkTables } from "./tables.mjs";
import { checkFlame } from "./flame.mjs";
import { checkSearch } from "./search.mjs";
import { checkIssues } from "./issues.mjs";
import { checkTimeline, goTo } from "./timeline.mjs";
import { checkComparison } from "./compare.mjs";
import { takeShots } from "./shots.mjs";
import { checkLoadingHeight, checkSelection } from "./selection.mjs";
import { runLoading } from "./loading.mjs";
import { runFileChanged, runIssuesBroken } from "./failures.mjs";
import { runZoomedOut } from "./counters.mjs";
import { runNoSpans, runRepeatedIndices } from "./honest.mjs";

const args = process.argv.slice(2);
const address = args.find((arg) => !arg.startsWith("--"));
const expectRecovered = args.includes("--expect-recovered");
const expectGpu = args.includes("--expect-gpu");
const following = args.includes("--follow");
const expectIssues = args.includes("--expect-issues");
const loadingMode = args.includes("--loading");
/** The modes that check one thing each against the address (their module, their runner). */
const MODES = {
  "--issues-broken": runIssuesBroken,
  "--file-changed": runFileChanged,
  "--zoomed-out": runZoomedOut,
  "--no-spans": runNoSpans,
  "--repeated-indices": runRepeatedIndices,
};
const mode = Object.keys(MODES).find((flag) => args.includes(flag));

function chromiumPath() {
  if (process.env.FRAMEWISE_CHROMIUM) return process.env.FRAMEWISE_CHROMIUM;
  try {
    return execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim();
  } catch {
    throw new Failure("no chromium on PATH (scripts/install-test-deps installs Debian's chromium)");
  }
}

async function run(browserContext) {
  const base = new URL(address);
  const api = apiClient(base);
  const [capture, strip, hitches, stats] = await Promise.all([api("capture"), api("strip"), api("hitches"), api("stats")]);
  const { page, problems } = await watchedPage(browserContext);

  await page.goto(base.href);
  await waitFor(page, "body[data-ready='1'], body[data-error]", "the first render", problems);
  const error = await page.getAttribute("body", "data-error");
  check(!error, `the page shows an error (${error}): ${await page.textContent("#error")}`);

  // The opening view: the first hitch (by row) is selected, else the worst frame (longest
  // period, else longest work); the hitch list shows at least ten rows (or all of them).
  // The loaded strip flags exactly the rows /api/hitches lists, in row order.
  const hitchRowsByRow = strip.hitch.flatMap((isHitch, r) => (isHitch ? [r] : []));
  check(hitchRowsByRow.length === hitches.hitches.length, `the strip flags ${hitchRowsByRow.length} rows, /api/hitches lists ${hitches.hitches.length}`);
  const argmax = (values) => values.reduce((best, value, r) => (value !== null && (best === null || value > values[best]) ? r : best), null);
  const opening = hitchRowsByRow.length ? Math.min(...hitchRowsByRow) : argmax(strip.period_ns) ?? argmax(strip.work_ns) ?? 0;
  const openedOn = await page.getAttribute("body", "data-selected-row");
  check(openedOn === String(opening), `the page opened on row ${openedOn}, not ${hitchRowsByRow.length ? "the first hitch" : "the worst frame"} (row ${opening})`);
  if (hitchRowsByRow.length) {
    const selectedHitch = await page.getAttribute(`#hitch-row-${opening}`, "class");
    check((selectedHitch ?? "").includes("selected"), "the hitch list does not mark the opening selection");
    const visibleHitches = await page.evaluate(() => {
      const list = document.querySelector("#hitches .scroll").getBoundingClientRect();
      return [...document.querySelectorAll("#hitch-table tbody tr")].filter((tr) => {
        const r = tr.getBoundingClientRect();
        return r.top >= list.top - 0.5 && r.bottom <= list.bottom + 0.5;
      }).length;
    });
    const wanted = Math.min(10, hitches.hitches.length);
    check(visibleHitches >= wanted, `the hitch list shows ${visibleHitches} whole rows, fewer than ${wanted}`);
  }

  // Header and banner.
  check((await page.textContent("#fact-file dd")) === capture.file, "the header does not name the capture's file");
  check(capture.frame_count > 0 && capture.frame_count === strip.period_ns.length, "the API's frame count and strip disagree");
  const bannerShown = await page.isVisible("#banner");
  if (expectRecovered) {
    check(capture.recovered === true, "--expect-recovered, but /api/capture says recovered: false");
    check(bannerShown, "the capture is recovered and the page shows no banner");
    const banner = await page.textContent("#banner");
    for (const defect of capture.defects) check(banner.includes(defect.kind), `the banner does not list defect ${defect.kind}`);
    // The lost frames, counted here from the strip's own frame indices.
    let lost = 0;
    for (let row = 1; row < strip.index.length; row++) lost += strip.index[row] - strip.index[row - 1] - 1;
    check(Number(await page.getAttribute("#lost", "data-lost")) === lost, `the banner does not count the ${lost} frames missing from the frame indices`);
    const lostText = await page.textContent("#lost");
    check(lostText.includes(`${lost} ${lost === 1 ? "frame" : "frames"} lost`), `the banner does not say "${lost} frames lost": ${lostText}`);
    if (capture.defects.some((d) => d.kind === "truncated-tail" || d.kind === "unclosed")) {
      const last = strip.index[strip.index.length - 1];
      check(lostText.includes(`ends after frame ${last}`), `the banner does not say the file ends after frame ${last}: ${lostText}`);
    }
  } else {
    check(capture.recovered === false, `the capture is recovered (${capture.defects.map((d) => d.kind).join(", ")}) and --expect-recovered was not given`);
    check(!bannerShown, "a banner is shown for a capture that was not recovered");
  }

  // The strip drew every frame; hitches are marked.
  const drawn = Number(await page.getAttribute("#strip", "data-frames"));
  check(drawn === capture.frame_count, `the strip drew ${drawn} frames of ${capture.frame_count}`);
  const marks = Number(await page.getAttribute("#strip", "data-hitch-marks"));
  check((marks > 0) === strip.hitch.some(Boolean), `the strip marks ${marks} hitch columns; the API has ${strip.hitch.filter(Boolean).length} hitches`);

  // Frames with dropped spans are marked (a tick per column that holds one).
  const droppedMarks = Number(await page.getAttribute("#strip", "data-dropped-marks"));
  check((droppedMarks > 0) === strip.dropped_spans.some((n) => n > 0), `the strip marks ${droppedMarks} columns with dropped spans; the API has ${strip.dropped_spans.filter((n) => n > 0).length} frames with some`);

  // Hitches list.
  const hitchRows = await page.locator("#hitch-table tbody tr").count();
  check(hitchRows === hitches.hitches.length, `the hitch list has ${hitchRows} rows, /api/hitches ${hitches.hitches.length}`);

  // Statistics over the whole capture, and the note that always goes with them.
  sameMs(await page.textContent("#stat-frame-p50"), stats.frame.p50, "frame p50");
  sameMs(await page.textContent("#stat-frame-p95"), stats.frame.p95, "frame p95");
  const note = (await page.textContent("#quant-note")) ?? "";
  check(note.includes("quantized") && note.includes("aggregates"), "the statistics do not carry the quantization note");

  // The statistics' tables sort by any column and filter by name.
  const sortedScopes = await checkTables(page, stats, problems);

  // With `--compare OTHER`, the capture comparison leads with the verdict and lists every
  // metric, ranked.
  let comparisonSummary = "no comparison";
  if (capture.compare) {
    comparisonSummary = await checkComparison(page, api);
  } else {
    check(!(await page.isVisible("#diff")), "a capture comparison is shown without --compare");
  }

  // Clicking the first hitch selects its row; the timeline shows that frame's lanes
  // (without hitches, those of the frame the page opened on).
  let row = opening;
  if (hitches.hitches.length > 0) {
    const first = hitches.hitches[0];
    row = strip.index.indexOf(first.frame);
    check(row >= 0, `hitch frame ${first.frame} is not in the strip`);
    // Move away first (End selects the last row), so that the click has something to change.
    const last = capture.frame_count - 1;
    await page.focus("#strip");
    await page.keyboard.press(row === last ? "Home" : "End");
    await waitFor(page, `body[data-selected-row='${row === last ? 0 : last}']`, "the End / Home key", problems);
    await page.click("#hitch-table tbody tr >> nth=0");
    await waitFor(page, `body[data-selected-row='${row}']`, "clicking the first hitch", problems);
  }
  const frame = await api("frame", { row });
  check(!expectGpu || frame.gpu.spans.length > 0, `--expect-gpu, but row ${row} has no GPU spans`);
  check(Number(await page.getAttribute("#timeline", "data-row")) === row, "the timeline is not of the selected row");
  const dropped = await page.textContent("#timeline-dropped");
  check(dropped.includes(String(frame.dropped_spans)), `the timeline shows "${dropped}", the frame dropped ${frame.dropped_spans}`);
  // The continuous timeline: lanes, hover, click, zoom and pan, keyboard, ticks, counters.
  const timelineSummary = await checkTimeline(page, api, capture, strip, row, frame, problems);
  const lanes = JSON.parse((await page.getAttribute("#timeline", "data-lanes")) ?? "[]");

  // The flame graph of the selected frame, of every frame, of one thread, and the
  // differential one.
  const flameSummary = await checkFlame(page, api, row, capture, problems);

  // Structure of the selected frame.
  const structure = await api("structure", { row });
  if (structure.topology) {
    const labels = await page.locator("#pass-structure tbody tr td.name").allTextContents();
    check(labels.length === structure.topology.passes.length, `structure lists ${labels.length} passes, the frame has ${structure.topology.passes.length}`);
    for (const pass of structure.topology.passes) check(labels.includes(pass.label), `structure does not list pass ${pass.label}`);
  } else {
    check((await page.textContent("#structure-reason")).includes(structure.reason ?? ""), "structure does not say why there is no topology");
  }

  // Pass detail: the first scope's sparkline has a point for each row it ran in.
  const firstScope = await page.getAttribute("#scope-table tbody tr >> nth=0", "data-name").catch(() => undefined);
  if (firstScope !== undefined && firstScope !== null) {
    await page.click(`#scope-table tbody tr >> nth=0`);
    await waitFor(page, "#sparkline", `clicking scope ${firstScope}`, problems);
    const series = await api("series", { kind: "scope", name: firstScope });
    const points = Number(await page.getAttribute("#sparkline", "data-points"));
    check(points === series.values.filter((value) => value !== null).length, `the sparkline of ${firstScope} has ${points} points`);
    // A click on the series' largest value selects its frame (with more rows than columns,
    // a column's largest value is the row it selects); hovering it reads the value.
    let peak = null;
    series.values.forEach((v, r) => {
      if (v !== null && (peak === null || v > series.values[peak])) peak = r;
    });
    if (peak !== null && peak !== row) {
      const plot = JSON.parse(await page.getAttribute("#sparkline", "data-plot"));
      await page.locator("#sparkline").scrollIntoViewIfNeeded();
      const sb = await page.locator("#sparkline").boundingBox();
      const per = series.values.length / plot.columns;
      const x = sb.x + plot.left + (Math.floor(peak / per) + 0.5) * (plot.width / plot.columns);
      await page.mouse.move(x, sb.y + sb.height / 2);
      const tip = await page.textContent("#tooltip");
      check(tip.includes(`row ${peak}:`), `hovering the series' peak (row ${peak}) reads "${tip}"`);
      await page.mouse.click(x, sb.y + sb.height / 2);
      await waitFor(page, `body[data-selected-row='${peak}']`, `clicking the series' peak (row ${peak})`, problems);
      await goTo(page, row, problems);
    }
  }

  // Comparison: pin the selection (P), move to the next frame (→), the table appears.
  check(capture.frame_count > 1, "one frame: nothing to compare");
  const b = row + 1 < capture.frame_count ? row + 1 : row - 1;
  await page.focus("#strip");
  await page.keyboard.press("p");
  await page.keyboard.press(b > row ? "ArrowRight" : "ArrowLeft");
  await waitFor(page, `body[data-selected-row='${b}']`, "the arrow key", problems);
  await waitFor(page, "#compare-table", "pinning a frame and selecting another", problems);
  const compare = await api("compare", { a: row, b });
  const compareRows = await page.locator("#compare-table tbody tr").count();
  check(compareRows === compare.rows.length, `the comparison has ${compareRows} rows, /api/compare ${compare.rows.length}`);

  // A click on the strip selects the frame under it (with more frames than pixels, the
  // column's tallest, which is the bar drawn there).
  const box = await page.locator("#strip").boundingBox();
  const threeQuarters = Math.floor(capture.frame_count * 0.75);
  const target = threeQuarters === b ? threeQuarters - 1 : threeQuarters;
  await page.mouse.click(box.x + ((target + 0.5) * box.width) / capture.frame_count, box.y + box.height / 2);
  await waitFor(page, `body:not([data-selected-row='${b}'])`, "clicking the strip", problems);
  const clicked = Number(await page.getAttribute("body", "data-selected-row"));
  const perPixel = Math.max(1, capture.frame_count / box.width);
  check(Math.abs(clicked - target) <= 2 * perPixel, `a click on row ${target} of the strip selected row ${clicked}`);

  // Dragging across the strip restricts the statistics to that range.
  await page.mouse.move(box.x + box.width * 0.2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await waitFor(page, `body:not([data-range='0-${capture.frame_count}'])`, "dragging across the strip", problems);
  const [from, to] = (await page.getAttribute("body", "data-range")).split("-").map(Number);
  const near = (value, share) => Math.abs(value - share * capture.frame_count) <= capture.frame_count / 50 + 2;
  check(near(from, 0.2) && near(to, 0.5), `a drag over 20–50% of the strip selected rows ${from}–${to} of ${capture.frame_count}`);
  const rangeStats = await api("stats", { from, to });
  sameMs(await page.textContent("#stat-frame-p50"), rangeStats.frame.p50, `frame p50 over rows ${from}–${to}`);

  // A selection's spans are on screen before the panels that follow it are rendered, and
  // overlapping selections leave every panel on the last one.
  const selectionSummary = `${await checkSelection(page, api, capture, clicked, problems)}; ${await checkLoadingHeight(browserContext, base, capture)}`;

  // Search: `/`, a scope's name, its longest run a click (or Enter) away.
  const searchSummary = await checkSearch(page, api, capture, strip, Number(await page.getAttribute("body", "data-selected-row")), problems);

  // Issues: the game's catalogue beside the capture, when it belongs to one.
  const issuesSummary = await checkIssues(page, api, capture, strip, expectIssues, problems);

  // Tables: every header sits over its column the way the column's cells are aligned
  // (numbers right, names left); p99.9 is printed as such; gauges and sums apart.
  const misaligned = await page.evaluate(() => {
    const bad = [];
    for (const t of document.querySelectorAll("main table")) {
      const heads = [...t.querySelectorAll("thead th")];
      const first = t.querySelector("tbody tr");
      if (!first) continue;
      [...first.children].forEach((td, i) => {
        const th = heads[i];
        if (!th) return;
        const a = getComputedStyle(td).textAlign;
        const b = getComputedStyle(th).textAlign;
        const right = (x) => x === "right" || x === "end";
        if (right(a) !== right(b)) bad.push(`${t.id || "table"} column ${i} (${th.textContent}): cells ${a}, header ${b}`);
      });
    }
    return bad;
  });
  check(misaligned.length === 0, `headers not aligned with their columns: ${misaligned.join("; ")}`);
  const statsHeads = await page.locator("#frame-table thead th").allTextContents();
  check(statsHeads.includes("p99.9") && !statsHeads.includes("p999"), `the statistics' headers are ${JSON.stringify(statsHeads)}, without p99.9`);
  const gaugeNames = Object.entries(stats.counters ?? {}).filter(([, c]) => c.kind === "gauge").map(([name]) => name);
  const sumNames = Object.entries(stats.counters ?? {}).filter(([, c]) => c.kind !== "gauge").map(([name]) => name);
  const shownNames = async (id) => (await page.locator(`#${id} tbody tr`).evaluateAll((trs) => trs.map((tr) => tr.dataset.name))).sort();
  check(JSON.stringify(await shownNames("gauge-table")) === JSON.stringify([...gaugeNames].sort()), "the gauge table does not list exactly the gauges");
  check(JSON.stringify(await shownNames("counter-table")) === JSON.stringify([...sumNames].sort()), "the counter table does not list exactly the sum counters");
  if (gaugeNames.length) {
    const gaugeHeads = await page.locator("#gauge-table thead th").allTextContents();
    check(!gaugeHeads.some((x) => x === "sum" || x === "total"), `gauges show a sum: ${JSON.stringify(gaugeHeads)}`);
    check(gaugeHeads.includes("p50"), `gauges show no median level: ${JSON.stringify(gaugeHeads)}`);
    // The median shown is the statistics' own: the first gauge row's p50 cell, against the API's
    // for the range the page shows (the drag above).
    const first = [...gaugeNames].sort()[0];
    const p50Cell = await page
      .locator(`#gauge-table tbody tr[data-name="${first}"] td`)
      .nth(gaugeHeads.indexOf("p50"))
      .textContent();
    const p50 = rangeStats.counters[first].p50;
    // Shown rounded to the table's digits: equal within a hundredth of the value (or of 1).
    const shown = Number(p50Cell.replace(/[^0-9.eE+-]/g, ""));
    check(
      p50 === null ? !/[0-9]/.test(p50Cell) : Math.abs(shown - p50) <= 0.01 * Math.max(1, Math.abs(p50)),
      `the gauge ${first}'s p50 reads ${JSON.stringify(p50Cell)}, where the statistics say ${p50}`,
    );
  }
  const counterHeads = await page.locator("#counter-table thead th").allTextContents();
  if (sumNames.length) check(counterHeads.includes("p50"), `counters show no median: ${JSON.stringify(counterHeads)}`);

  // No hidden columns and no panel wider than its box at laptop and desktop sizes
  // (measured by element boxes).
  await checkLayout(page, [[1280, 720], [1366, 768], [1920, 1080]], { width: 1400, height: 1000 });

  let shots = "";
  if (process.env.FRAMEWISE_BROWSER_SHOTS) {
    const saved = await takeShots(page, process.env.FRAMEWISE_BROWSER_SHOTS, capture.scopes[0]?.name?.slice(0, 3));
    shots = `, ${saved.length} screenshots in ${process.env.FRAMEWISE_BROWSER_SHOTS}`;
  }
  if (process.env.FRAMEWISE_BROWSER_SHOT) {
    await page.mouse.move(0, 0); // no tooltip over the picture
    await page.screenshot({ path: process.env.FRAMEWISE_BROWSER_SHOT, fullPage: true });
  }
  check(problems.length === 0, problems[0]);
  await page.close();

  // Without the token the page says what to do instead of failing silently; with a wrong
  // one the server's 403 is explained the same way.
  for (const [label, href] of [
    ["no token", new URL("/", base).href],
    ["a wrong token", new URL("/?token=00000000000000000000000000000000", base).href],
  ]) {
    const tokenPage = await browserContext.newPage();
    const errors = [];
    tokenPage.on("pageerror", (e) => errors.push(e.message));
    await tokenPage.goto(href);
    await waitFor(tokenPage, "body[data-error]", `opening the page with ${label}`, errors);
    check((await tokenPage.getAttribute("body", "data-error")) === "token", `with ${label} the page does not report a token problem`);
    check((await tokenPage.textContent("#error")).includes("token"), `with ${label} the message does not mention the token`);
    check(errors.length === 0, `with ${label}: page error ${errors[0]}`);
    await tokenPage.close();
  }
  return `${capture.frame_count} frames, ${hitches.hitches.length} hitches, opened on row ${opening}, ${lanes.length} lanes in row ${row}, ${compareRows} comparison rows, ${sortedScopes} scopes sorted and filtered, ${flameSummary}, ${selectionSummary}, ${searchSummary}, ${issuesSummary}, ${timelineSummary}, ${comparisonSummary}${shots}`;
}

/** `--follow`: a capture being written; the strip must grow as frames land, until closed. */
async function runFollow(browserContext) {
  const base = new URL(address);
  const api = apiClient(base);
  const first = await api("capture");
  check(first.follow && first.follow.closed === false, `--follow, but /api/capture's follow is ${JSON.stringify(first.follow)}`);
  const { page, problems } = await watchedPage(browserContext);
  await page.goto(base.href);
  await waitFor(page, "body[data-ready='1'], body[data-error]", "the first render", problems);
  const error = await page.getAttribute("body", "data-error");
  check(!error, `the page shows an error (${error}): ${await page.textContent("#error")}`);
  const drawnBefore = Number(await page.getAttribute("#strip", "data-frames"));
  check(drawnBefore === first.frame_count, `the strip drew ${drawnBefore} frames, the API has ${first.frame_count}`);
  check((await page.getAttribute("#banner", "data-kind")) === "live", "a file still being written is not shown as live");
  check((await page.textContent("#banner")).includes("still being written"), "the live banner does not say the file is still being written");
  check((await page.textContent("#live")).startsWith("live ·"), `the indicator says "${await page.textContent("#live")}"`);
  // On the newest frame: the selection must follow the frames that arrive.
  await page.focus("#strip");
  await page.keyboard.press("End");
  await waitFor(page, `body[data-selected-row='${drawnBefore - 1}']`, "selecting the last frame", problems);

  console.log(`ready ${drawnBefore}`);
  try {
    await page.waitForSelector("body[data-follow-closed='1']", { timeout: 90_000 });
  } catch {
    throw new Failure(`the page never said the file was closed (generation ${await page.getAttribute("body", "data-generation")})${problems[0] ? ` (${problems[0]})` : ""}`);
  }
  const last = await api("capture");
  check(last.follow.closed === true, "the page says closed, the API does not");
  const drawnAfter = Number(await page.getAttribute("#strip", "data-frames"));
  check(drawnAfter === last.frame_count, `the strip drew ${drawnAfter} frames, the API has ${last.frame_count}`);
  check(drawnAfter > drawnBefore, `the strip did not grow (${drawnBefore} → ${drawnAfter} frames)`);
  check(
    (await page.getAttribute("body", "data-selected-row")) === String(drawnAfter - 1),
    `the selection stayed on row ${await page.getAttribute("body", "data-selected-row")}, not the newest frame ${drawnAfter - 1}`,
  );
  check((await page.textContent("#live")).startsWith("closed ·"), `the indicator says "${await page.textContent("#live")}" once closed`);
  check(!(await page.isVisible("#banner")), "a banner is still shown for the closed, intact capture");
  check(problems.length === 0, problems[0]);
  return `${drawnBefore} → ${drawnAfter} frames while following, then closed`;
}

async function main() {
  check(address, "usage: node inspector.test.mjs URL [--expect-recovered] [--expect-gpu] [--expect-issues] | URL --follow");
  const profile = mkdtempSync(join(tmpdir(), "framewise-chromium-"));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath(),
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
      ],
      timeout: TIMEOUT_MS,
    });
    const summary = mode
      ? await MODES[mode](context, apiClient(new URL(address)), address)
      : following
        ? await runFollow(context)
        : loadingMode
          ? await runLoading(context, address)
          : await run(context);
    console.log(`ok: inspector ${summary}${expectRecovered ? ", recovered banner shown" : ""}${expectGpu ? ", GPU track shown" : ""}`);
  } finally {
    await context?.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((error) => {
  const message = error instanceof Failure ? error.message : `${error.name}: ${error.message}`;
  console.log(`FAIL: ${message.split("\n")[0]}`);
  process.exit(1);
});
