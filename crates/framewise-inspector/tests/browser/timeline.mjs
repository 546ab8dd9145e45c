// The continuous timeline, against /api/window: its lanes; hovering and clicking a span (its
// detail: duration, self, worst frames with jumps); the keyboard (S zooms out until several
// frames lie end to end, D pans across a frame boundary, W zooms in until the ticks need
// decimals and none reads the same, F fits the selection); the strip's selection driving it
// and a click in it selecting a frame; counters as tracks; the draw time of a 200-frame view.

import { TIMEOUT_MS, check, waitFor } from "./lib.mjs";

async function data(page) {
  return page.evaluate(() => ({ ...document.getElementById("timeline").dataset }));
}

const view = async (page) => JSON.parse((await data(page)).view);

/**
 * /api/window over rows [from, to), fetched and decoded by the page's own module (the API
 * tests check its bytes against the analysis crate), each lane's spans as objects.
 */
export async function windowOf(page, from, to) {
  return page.evaluate(async ([from, to]) => {
    const { decodeWindow, spanOf } = await import("/app/window.js");
    const { getBytes } = await import("/app/api.js");
    const w = decodeWindow(await getBytes("window", { from, to }));
    const spans = (lane) => Array.from({ length: lane.n }, (_, i) => {
      const { name, site, ...span } = spanOf(lane, i);
      return span;
    });
    return { ...w, lanes: w.lanes.map((lane) => ({ thread: lane.thread, spans: spans(lane) })), gpu: { n: w.gpu.n, spans: Array.from({ length: w.gpu.n }, (_, i) => spanOf(w.gpu, i)) } };
  }, [from, to]);
}

/** Presses `key` until `done(dataset)` or `max` presses; the dataset after. */
async function pressUntil(page, key, done, max, what) {
  let d = await data(page);
  for (let i = 0; i < max && !done(d); i++) {
    await page.keyboard.press(key);
    d = await data(page);
  }
  check(done(d), `${what}: not reached after ${max} presses of ${key} (view ${d.view}, ${d.framesInView} frames in view)`);
  return d;
}

/** Selects `target` with the arrow keys (Shift moves ten rows). */
export async function goTo(page, target, problems) {
  await page.focus("#strip");
  let at = Number(await page.getAttribute("body", "data-selected-row"));
  while (at !== target) {
    const far = Math.abs(target - at) >= 10;
    await page.keyboard.press(`${far ? "Shift+" : ""}${target > at ? "ArrowRight" : "ArrowLeft"}`);
    at += (target > at ? 1 : -1) * (far ? 10 : 1);
  }
  await waitFor(page, `body[data-selected-row='${target}']`, `moving to row ${target}`, problems);
}

/** The x of `ns` (from the origin) in the timeline's box, for the view in its dataset. */
function xOf(box, layout, [from, to], ns) {
  return box.x + layout.gutter + ((ns - from) / (to - from)) * (box.width - layout.gutter);
}

export async function checkTimeline(page, api, capture, strip, row, frame, problems) {
  await waitFor(page, "#timeline[data-rows]", "the timeline's first window", problems);
  await page.waitForFunction((r) => {
    const [from, to] = JSON.parse(document.getElementById("timeline").dataset.rows);
    return from <= r && r < to;
  }, row, { timeout: TIMEOUT_MS });
  const d0 = await data(page);
  const [from, to] = JSON.parse(d0.rows);
  const win = await windowOf(page, from, to);
  check(String(win.origin_ns) === d0.origin, `the timeline's origin ${d0.origin} is not /api/window's ${win.origin_ns}`);
  const expectedLanes = win.lanes.map((l) => l.thread);
  if (win.gpu.n > 0) expectedLanes.push("GPU (nominal)");
  check(d0.lanes === JSON.stringify(expectedLanes), `timeline lanes ${d0.lanes}, /api/window has ${JSON.stringify(expectedLanes)}`);
  check(d0.counters === JSON.stringify(win.counters.map((c) => c.name)), `the counter tracks ${d0.counters} are not /api/window's counters`);
  // The GPU spans of the row, decoded from the window's columns, are /api/frame's (pass,
  // depth, duration; the start from the frame's begin).
  const gpuOfRow = win.gpu.spans.filter((s) => s.row === row).map((s) => [s.name, s.depth, s.start_ns - strip.begin_ns[row], s.dur_ns]);
  const gpuOfFrame = frame.gpu.spans.map((s) => [s.pass, s.depth, s.start_ns, s.dur_ns]);
  check(JSON.stringify(gpuOfRow) === JSON.stringify(gpuOfFrame), `row ${row}'s GPU spans in /api/window ${JSON.stringify(gpuOfRow).slice(0, 200)} are not /api/frame's ${JSON.stringify(gpuOfFrame).slice(0, 200)}`);
  // So are its counter values, decoded from the counters' columns.
  const countersOfRow = win.counters.flatMap((c) => c.values.filter((v) => v.row === row).map((v) => [c.name, v.value])).sort();
  const countersOfFrame = frame.counters.map((c) => [c.name, c.value]).sort();
  check(JSON.stringify(countersOfRow) === JSON.stringify(countersOfFrame), `row ${row}'s counters in /api/window ${JSON.stringify(countersOfRow).slice(0, 200)} are not /api/frame's ${JSON.stringify(countersOfFrame).slice(0, 200)}`);
  const fitted = JSON.parse(d0.view);
  const [rowBegin, rowEnd] = [strip.begin_ns[row], strip.begin_ns[row] + (strip.period_ns[row] ?? strip.work_ns[row])];
  check(fitted[0] <= rowBegin && rowEnd <= fitted[1] && fitted[1] - fitted[0] < (rowEnd - rowBegin) * 1.2 + 2000, `the view ${d0.view} does not fit row ${row} (${rowBegin}–${rowEnd})`);

  // Hover, then click, the widest outermost span of the selected frame.
  const laneIndex = win.lanes.findIndex((l) => l.spans.some((s) => s.row === row && s.depth === 0));
  let detailSummary = "no span in the frame";
  if (laneIndex >= 0) {
    const widest = win.lanes[laneIndex].spans.filter((s) => s.row === row && s.depth === 0).sort((p, q) => q.dur_ns - p.dur_ns)[0];
    const scope = win.scopes[widest.scope];
    const layout = JSON.parse(d0.layout);
    await page.locator("#timeline").scrollIntoViewIfNeeded();
    const box = await page.locator("#timeline").boundingBox();
    const mid = widest.start_ns + widest.dur_ns / 2;
    const at = [xOf(box, layout, fitted, mid), box.y + layout.tops[laneIndex] + layout.row / 2];
    await page.mouse.move(...at);
    const tip = ((await page.textContent("#tooltip")) ?? "").replace(/\u2009/g, "");
    check(await page.isVisible("#tooltip"), "hovering a span shows no tooltip");
    check(tip.includes(scope.name) && tip.includes(`${widest.dur_ns} ns`), `the tooltip over ${scope.name} (${widest.dur_ns} ns) says "${tip}"`);
    check(!scope.site || tip.includes(scope.site), `the tooltip over ${scope.name} does not name its site ${scope.site}`);
    await page.mouse.click(...at);
    await waitFor(page, `#span-detail[data-name='${scope.name}'][data-row='${row}']:not([hidden])`, `clicking span ${scope.name}`, problems);
    const sd = await page.evaluate(() => ({ ...document.getElementById("span-detail").dataset }));
    check(Number(sd.durNs) === widest.dur_ns && Number(sd.selfNs) === widest.self_ns, `the span detail says ${sd.durNs} ns (self ${sd.selfNs}), /api/window ${widest.dur_ns} (self ${widest.self_ns})`);
    const found = (await api("search", { q: scope.name, limit: 8 })).matches.find((m) => m.kind === "scope" && m.name === scope.name);
    const worst = await page.locator("#span-worst button").evaluateAll((bs) => bs.map((b) => Number(b.dataset.row)));
    check(JSON.stringify(worst) === JSON.stringify(found.occurrences.map((o) => o.row)), `the span's worst frames ${JSON.stringify(worst)} are not /api/search's`);
    const jump = worst.find((r) => r !== row);
    if (jump !== undefined) {
      await page.click(`#span-worst button[data-row='${jump}']`);
      await waitFor(page, `body[data-selected-row='${jump}']`, `jumping to ${scope.name}'s worst frame`, problems);
      await goTo(page, row, problems);
    }
    detailSummary = `span ${scope.name} opened`;

    // The wheel zooms in around the pointer; a double-click fits the selection again.
    await page.locator("#timeline").scrollIntoViewIfNeeded();
    const box2 = await page.locator("#timeline").boundingBox();
    await page.mouse.move(xOf(box2, layout, fitted, mid), box2.y + layout.tops[laneIndex] + layout.row / 2);
    await page.mouse.wheel(0, -400);
    await page.waitForFunction((before) => document.getElementById("timeline").dataset.view !== before, JSON.stringify(fitted), { timeout: TIMEOUT_MS }).catch(() => {});
    const [zf, zt] = await view(page);
    check(zt - zf < (fitted[1] - fitted[0]) * 0.9 && zf <= mid && mid <= zt, "the wheel does not zoom the timeline at the pointer");
    // On the frame row, inside the selected frame: no span there, and no other frame.
    await page.mouse.dblclick(xOf(box2, layout, [zf, zt], mid), box2.y + 25);
    check(JSON.stringify(await view(page)) === JSON.stringify(fitted), "a double-click does not fit the selection again");
  }

  // S zooms out until frames lie end to end, their spans drawn from several frames.
  await page.focus("#strip");
  await page.mouse.move(0, 0);
  const wide = await pressUntil(page, "s", (d) => Number(d.framesInView) >= Math.min(8, capture.frame_count), 30, "zooming out");
  await page.waitForFunction(() => JSON.parse(document.getElementById("timeline").dataset.drawnRows).length >= 2, null, { timeout: TIMEOUT_MS }).catch(() => {});
  const drawnRows = JSON.parse((await data(page)).drawnRows);
  check(drawnRows.length >= Math.min(2, capture.frame_count), `zoomed out over ${wide.framesInView} frames, spans of ${JSON.stringify(drawnRows)} drawn`);
  const stripView = await page.getAttribute("#strip", "data-view");
  const [sf, st] = (stripView ?? "0-0").split("-").map(Number);
  check(sf <= row && row < st && st - sf === Number((await data(page)).framesInView), `the strip shows rows ${stripView} as the timeline's view (${(await data(page)).framesInView} frames)`);

  // F fits the selection; D pans across the boundary into the next frame, its spans drawn.
  await page.keyboard.press("f");
  check(JSON.stringify(await view(page)) === JSON.stringify(fitted), "F does not fit the selected frame");
  const next = row + 1 < capture.frame_count ? row + 1 : null;
  if (next !== null) {
    await pressUntil(page, "d", (d) => JSON.parse(d.view)[0] > strip.begin_ns[next], 12, `panning past the boundary of row ${next}`);
    await page.waitForFunction((r) => JSON.parse(document.getElementById("timeline").dataset.drawnRows).includes(r), next, { timeout: TIMEOUT_MS }).catch(() => {});
    const nextSpans = win.lanes.some((l) => l.spans.some((s) => s.row === next)) || (await api("frame", { row: next })).lanes.length > 0;
    check(!nextSpans || JSON.parse((await data(page)).drawnRows).includes(next), `panned into row ${next}, its spans are not drawn (${(await data(page)).drawnRows})`);
    const before = (await view(page))[0];
    await page.keyboard.press("a");
    check((await view(page))[0] < before, "A does not pan left");
  }

  // W zooms in until the ticks are a few hundred ns apart: every label differs.
  await page.keyboard.press("f");
  const deep = await pressUntil(page, "w", (d) => JSON.parse(d.view)[1] - JSON.parse(d.view)[0] < 4000, 60, "zooming in");
  const ticks = JSON.parse(deep.ticks);
  check(ticks.length >= 2 && new Set(ticks).size === ticks.length, `at a ${JSON.parse(deep.view)[1] - JSON.parse(deep.view)[0]} ns view the ticks read ${JSON.stringify(ticks)}`);

  // A click between spans (on the frame row) selects the frame under it, keeping the view.
  let clickSummary = "";
  if (next !== null) {
    await page.keyboard.press("f");
    await pressUntil(page, "s", (d) => Number(d.framesInView) >= 3, 12, "zooming out to three frames");
    const v = await view(page);
    const layout = JSON.parse((await data(page)).layout);
    await page.locator("#timeline").scrollIntoViewIfNeeded();
    const box = await page.locator("#timeline").boundingBox();
    const nextMid = strip.begin_ns[next] + (strip.period_ns[next] ?? strip.work_ns[next]) / 2;
    if (nextMid < v[1]) {
      await page.mouse.click(xOf(box, layout, v, nextMid), box.y + 25);
      await waitFor(page, `body[data-selected-row='${next}']`, "clicking the next frame in the timeline", problems);
      check(JSON.stringify(await view(page)) === JSON.stringify(v), "a click in the timeline moved its view");
      clickSummary = ", a click selected the next frame";
    }
  }

  // Strip → timeline: End selects the last frame; the timeline fits it.
  await page.focus("#strip");
  await page.keyboard.press("End");
  const last = capture.frame_count - 1;
  await waitFor(page, `body[data-selected-row='${last}']`, "the End key", problems);
  const lastView = await view(page);
  check(lastView[0] <= strip.begin_ns[last] && strip.begin_ns[last] <= lastView[1], `after End the timeline shows ${JSON.stringify(lastView)}, not row ${last} at ${strip.begin_ns[last]}`);

  // A 200-frame view: how long its draw took (reported, not judged).
  let drawMs = "";
  if (capture.frame_count >= 200) {
    await goTo(page, Math.floor(capture.frame_count / 2), problems);
    await page.mouse.move(0, 0);
    await pressUntil(page, "s", (d) => Number(d.framesInView) >= 200, 40, "zooming out to 200 frames");
    // Once the window loaded covers every frame in view.
    await page.waitForFunction(() => {
      const [a, b] = JSON.parse(document.getElementById("timeline").dataset.rows);
      const [v0, v1] = document.getElementById("strip").dataset.view.split("-").map(Number);
      return a <= v0 && v1 <= b;
    }, null, { timeout: TIMEOUT_MS });
    await page.keyboard.press("d");
    await page.keyboard.press("a");
    const d = await data(page);
    drawMs = `, ${d.framesInView} frames (${d.drawnSpans} spans) drawn in ${d.drawMs} ms, the last ${d.loadRows} rows not yet fetched fetched and drawn in ${d.loadMs} ms`;
  }
  await goTo(page, row, problems);
  await page.keyboard.press("f");
  return `timeline: the last rows fetched (${d0.loadRows}) drawn in ${d0.loadMs} ms, ${expectedLanes.length} lanes, ${win.counters.length} counter tracks, ${detailSummary}, ${ticks.length} distinct ticks at a ${JSON.parse(deep.view)[1] - JSON.parse(deep.view)[0]} ns view${clickSummary}${drawMs}`;
}
