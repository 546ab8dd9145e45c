// `--zoomed-out`: a capture of thousands of short frames, each with a counter (tests/browser.rs
// records it). Zoomed out past the frames whose spans the timeline draws (MAX_SPAN_FRAMES),
// the counter tracks still cover every frame in view, from the counters' series: hovering
// anywhere along a track reads the value /api/series has for the frame named (a pixel
// column's largest), never "not recorded" for a frame that recorded it. And a tooltip
// follows a wheel zoom and a pan: it says what is under the still pointer after them.

import { TIMEOUT_MS, check, waitFor, watchedPage } from "./lib.mjs";

const MAX_SPAN_FRAMES = 400;

const dataset = (page) => page.evaluate(() => ({ ...document.getElementById("timeline").dataset }));
const tooltip = async (page) => ((await page.textContent("#tooltip")) ?? "").replace(/\u2009/g, "");

export async function runZoomedOut(browserContext, api, address) {
  const base = new URL(address);
  const [capture, strip] = await Promise.all([api("capture"), api("strip")]);
  check(capture.frame_count > 4 * MAX_SPAN_FRAMES, `--zoomed-out needs more than ${4 * MAX_SPAN_FRAMES} frames, the capture has ${capture.frame_count}`);
  // The test's counter (tests/browser.rs), else the capture's first sum counter.
  const counter = capture.counters.find((c) => c.name === "ticks") ?? capture.counters.find((c) => c.kind === "sum");
  check(counter, `--zoomed-out, but the capture has no sum counter (${JSON.stringify(capture.counters)})`);
  const series = await api("series", { kind: "counter", name: counter.name });
  const rowOf = new Map(strip.index.map((index, row) => [index, row]));

  const { page, problems } = await watchedPage(browserContext);
  await page.goto(base.href);
  await waitFor(page, "body[data-ready='1'], body[data-error]", "the first render", problems);
  check(!(await page.getAttribute("body", "data-error")), `the page shows an error: ${await page.textContent("#error")}`);

  // S (at the centre: the pointer is away) until the whole capture is in view.
  await page.mouse.move(0, 0);
  await page.focus("#strip");
  let d = await dataset(page);
  for (let i = 0; i < 80 && Number(d.framesInView) < capture.frame_count; i++) {
    await page.keyboard.press("s");
    d = await dataset(page);
  }
  check(Number(d.framesInView) === capture.frame_count, `S did not zoom out to the whole capture (${d.framesInView} frames in view)`);
  // Once the counters' values are in (checked after the readings: whatever the page does, a
  // reading must never say "not recorded" of a frame that recorded its counter).
  await page
    .waitForSelector("#timeline[data-series-state='ready'], #timeline[data-series-state='failed']", { timeout: TIMEOUT_MS })
    .catch(() => {});
  d = await dataset(page);
  const names = d.seriesCounters ? JSON.parse(d.seriesCounters) : JSON.parse(d.counters ?? "[]");
  check(names.includes(counter.name), `zoomed out, there is no track of ${counter.name} (${JSON.stringify(names)})`);

  // Along the whole track: each reading is /api/series' value of the frame it names, the
  // largest of the frames in its pixel column.
  const layout = JSON.parse(d.layout);
  await page.locator("#timeline").scrollIntoViewIfNeeded();
  const box = await page.locator("#timeline").boundingBox();
  const y = box.y + layout.counterTop + names.indexOf(counter.name) * layout.counter + layout.counter / 2;
  const pattern = new RegExp(`^${counter.name} \\(${counter.kind}\\) in frame (\\d+): (-?[\\d.]+)(?:\\n\\(the largest of frames (\\d+)–(\\d+), in this pixel column\\))?$`);
  // The capture's extent on the track (the view is a little wider than the capture).
  const [from, to] = JSON.parse(d.view);
  const lastRow = capture.frame_count - 1;
  const xOf = (ns) => box.x + layout.gutter + ((ns - from) / (to - from)) * (box.width - layout.gutter);
  const [left, right] = [xOf(strip.begin_ns[0]), xOf(strip.begin_ns[lastRow] + (strip.period_ns[lastRow] ?? strip.work_ns[lastRow]))];
  let read = 0;
  for (let share = 0.01; share < 1; share += 0.07) {
    const x = left + share * (right - left);
    await page.mouse.move(x, y);
    const tip = await tooltip(page);
    check(!tip.includes("not recorded"), `zoomed out, hovering ${counter.name} at ${Math.round(share * 100)}% of the track says "${tip}"`);
    const match = pattern.exec(tip);
    check(match, `zoomed out, hovering ${counter.name} at ${Math.round(share * 100)}% of the track says "${tip}"`);
    const row = rowOf.get(Number(match[1]));
    check(row !== undefined && Number(match[2]) === series.values[row], `the tooltip reads ${match[2]} for frame ${match[1]}, /api/series ${series.values[row]}`);
    if (match[3] !== undefined) {
      const [first, last] = [rowOf.get(Number(match[3])), rowOf.get(Number(match[4]))];
      const largest = Math.max(...series.values.slice(first, last + 1).filter((v) => v !== null).map(Math.abs));
      check(first <= row && row <= last && Math.abs(series.values[row]) === largest, `the tooltip names frame ${match[1]} as the largest of frames ${match[3]}–${match[4]}; /api/series' largest there is ${largest}`);
    }
    read++;
  }
  check(d.seriesState === "ready" && d.counterSource === "series", `zoomed out, the counters are ${d.seriesState} from ${d.counterSource}`);
  check(JSON.stringify(names) === JSON.stringify(capture.counters.map((c) => c.name)), `zoomed out, the counter tracks are ${d.seriesCounters}, the capture's counters ${JSON.stringify(capture.counters.map((c) => c.name))}`);

  // The view changes under a still pointer (a wheel zoom there, then D pans by a fifth of the
  // view): the tooltip says what is under it after each, as a hover there does (the wheel's
  // and the move's coordinates may fall either side of a pixel column's edge: a frame apart
  // at most).
  const x = Math.round((left + right) / 2);
  const yy = Math.round(y);
  const frameOf = (text) => Number(pattern.exec(text ?? "")?.[1] ?? NaN);
  const freshHover = async () => {
    await page.mouse.move(x, yy - 40);
    await page.mouse.move(x, yy);
    return (await page.isVisible("#tooltip")) ? tooltip(page) : null;
  };
  await page.mouse.move(x, yy);
  const beforeWheel = await tooltip(page);
  for (let i = 0; i < 3; i++) await page.mouse.wheel(0, -400);
  await page.waitForFunction((view) => document.getElementById("timeline").dataset.view !== view, d.view, { timeout: TIMEOUT_MS });
  const afterWheel = (await page.isVisible("#tooltip")) ? await tooltip(page) : null;
  const wheelFresh = await freshHover();
  check(Math.abs(frameOf(afterWheel) - frameOf(wheelFresh)) <= 1, `after a wheel zoom the tooltip says ${JSON.stringify(afterWheel)} (before it: ${JSON.stringify(beforeWheel)}), a hover at the same place ${JSON.stringify(wheelFresh)}`);
  const panned = (await dataset(page)).view;
  await page.keyboard.press("d");
  await page.waitForFunction((view) => document.getElementById("timeline").dataset.view !== view, panned, { timeout: TIMEOUT_MS });
  const afterPan = (await page.isVisible("#tooltip")) ? await tooltip(page) : null;
  const panFresh = await freshHover();
  check(
    frameOf(panFresh) - frameOf(wheelFresh) > 1 && Math.abs(frameOf(afterPan) - frameOf(panFresh)) <= 1,
    `after D the tooltip says ${JSON.stringify(afterPan)} (before it: ${JSON.stringify(wheelFresh)}), a hover at the same place ${JSON.stringify(panFresh)}`,
  );

  check(problems.length === 0, problems[0]);
  await page.close();
  return `zoomed out over ${capture.frame_count} frames: ${names.length} counter track(s) from their series, ${read} readings along ${counter.name} as /api/series has them; the tooltip follows a wheel zoom and a pan`;
}
