// What follows a selection: the timeline's spans are on screen first, and the panels that
// follow the selected frame (caption, structure, flame graph, the hitch list's mark) are
// rendered after them, for the frame selected last even when several selections overlap;
// while a selection's frames load, the timeline keeps its height (the page under it does
// not move).

import { TIMEOUT_MS, check, waitFor, watchedPage } from "./lib.mjs";

/** The panels' view of the selected frame, read from the page. */
async function panels(page) {
  return page.evaluate(() => ({
    selected: document.body.dataset.selectedRow,
    afterSpans: document.body.dataset.panelsAfterSpans,
    painted: document.getElementById("timeline").dataset.paintedRow,
    timelineRow: document.getElementById("timeline").dataset.row,
    caption: document.getElementById("timeline-caption").textContent,
    structure: document.querySelector("#structure h2")?.textContent ?? "",
    selectedHitches: [...document.querySelectorAll("#hitch-table tr.selected")].map((tr) => tr.dataset.row),
  }));
}

/** The panels show `row` (frame `index`), rendered after its spans were on screen. */
async function checkPanels(page, api, row, what) {
  const flameRow = () => page.evaluate(() => {
    const panel = document.getElementById("flame-panel");
    return panel.dataset.from === undefined ? null : [Number(panel.dataset.from), Number(panel.dataset.to)];
  });
  await page.waitForFunction(
    (r) => {
      const panel = document.getElementById("flame-panel");
      return document.body.dataset.selectedRow === String(r) && panel.dataset.from === String(r);
    },
    row,
    { timeout: TIMEOUT_MS },
  ).catch(() => {});
  const p = await panels(page);
  const frame = await api("frame", { row });
  check(p.selected === String(row), `${what}: the page says row ${p.selected} is selected, not ${row}`);
  check(p.timelineRow === String(row), `${what}: the timeline is of row ${p.timelineRow}, not ${row}`);
  check(p.painted === String(row), `${what}: the timeline's last painted selection is row ${p.painted}, not ${row}`);
  check(p.afterSpans === "true", `${what}: the panels were rendered before row ${row}'s spans were on screen`);
  check(p.caption.startsWith(`frame ${frame.index} (row ${row})`), `${what}: the caption reads "${p.caption.slice(0, 60)}", not frame ${frame.index} (row ${row})`);
  check(p.structure.includes(`row ${row}`), `${what}: the structure panel is of "${p.structure}", not row ${row}`);
  const flame = await flameRow();
  check(flame !== null && flame[0] === row && flame[1] === row + 1, `${what}: the flame graph folds rows ${JSON.stringify(flame)}, not row ${row}`);
  const hitchRow = frame.hitch ? [String(row)] : [];
  check(JSON.stringify(p.selectedHitches) === JSON.stringify(hitchRow), `${what}: the hitch list marks rows ${JSON.stringify(p.selectedHitches)}, not ${JSON.stringify(hitchRow)}`);
}

/**
 * A selection far away (End or Home: its frames not fetched yet), then five arrow presses
 * without waiting (the selections overlap): the panels end up of the last frame, each time
 * rendered after that frame's spans were on screen. `from` is the row selected before: the
 * far end is the one away from it.
 */
export async function checkSelection(page, api, capture, from, problems) {
  const last = capture.frame_count - 1;
  const far = from < last / 2 ? last : 0;
  await page.focus("#strip");
  await page.keyboard.press(far === last ? "End" : "Home");
  await waitFor(page, `body[data-selected-row='${far}']`, far === last ? "End" : "Home", problems);
  await checkPanels(page, api, far, far === last ? "End" : "Home");

  const step = far === last ? "ArrowLeft" : "ArrowRight";
  const presses = Math.min(5, last);
  for (let i = 0; i < presses; i++) await page.keyboard.press(step);
  const target = far === last ? far - presses : far + presses;
  await waitFor(page, `body[data-selected-row='${target}']`, `${presses} presses of ${step}`, problems);
  await checkPanels(page, api, target, `${presses} presses of ${step} in a row`);

  return `panels after the spans: ${far === last ? "End" : "Home"} and ${presses} overlapping presses`;
}

/**
 * On a fresh page (nothing fetched but the opening view and its neighbours), End or Home
 * (the end away from the opening row) with /api/window answering 300 ms late: every height the timeline's canvas takes meanwhile (a
 * ResizeObserver's, each rendering update) is at least the smaller of its heights before
 * and after, and that end's spans arrive.
 */
export async function checkLoadingHeight(browserContext, base, capture) {
  const { page, problems } = await watchedPage(browserContext);
  try {
    await page.goto(base.href);
    await waitFor(page, "body[data-ready='1']", "the first render", problems);
    await page.waitForLoadState("networkidle");
    // The end away from the opening row: its frames are not fetched yet.
    const last = capture.frame_count - 1;
    const opened = Number(await page.getAttribute("body", "data-selected-row"));
    const [key, target] = opened < last / 2 ? ["End", last] : ["Home", 0];
    const before = await page.evaluate(() => {
      const canvas = document.getElementById("timeline");
      window.timelineHeights = [];
      new ResizeObserver(([entry]) => window.timelineHeights.push(entry.contentRect.height)).observe(canvas);
      return canvas.getBoundingClientRect().height;
    });
    let delayed = 0;
    await page.route("**/api/window?**", async (route) => {
      delayed++;
      await new Promise((resolve) => setTimeout(resolve, 300));
      await route.continue();
    });
    await page.focus("#strip");
    await page.keyboard.press(key);
    await waitFor(page, `body[data-selected-row='${target}']`, `${key} with late frames`, problems);
    await page.waitForFunction((r) => document.getElementById("timeline").dataset.paintedRow === String(r), target, { timeout: TIMEOUT_MS });
    const { heights, after } = await page.evaluate(() => ({ heights: window.timelineHeights, after: document.getElementById("timeline").getBoundingClientRect().height }));
    await page.unrouteAll({ behavior: "wait" });
    check(delayed > 0, `${key} fetched nothing: the check of the timeline's height while loading saw no load`);
    const floor = Math.min(before, after);
    check(heights.every((h) => h >= floor - 0.5), `while ${key}'s frames loaded the timeline's height went to ${Math.min(...heights)} px (before ${before}, after ${after})`);
    check(problems.length === 0, problems[0]);
    return `the timeline kept its height (${before} → ${after} px) while ${key}'s frames came 300 ms late`;
  } finally {
    await page.close();
  }
}
