// Screenshots of every view at 1280×720, as artefacts of the browser tests: each panel as the
// page lays it out at that size (from its top, at most the viewport's height), the opening
// viewport, and the search box with its results. `dir` exists; names are `<view>.png`.

import { join } from "node:path";

/** The panels, by file name. */
const PANELS = [
  ["strip", "section[aria-label='frame strip']"],
  ["timeline", "section[aria-label='timeline']"],
  ["span-detail", "#span-detail"],
  ["flame", "#flame-panel"],
  ["comparison", "#diff"],
  ["statistics", "#stats"],
  ["series", "#detail"],
  ["hitches", "#hitches"],
  ["compare-frames", "#compare"],
  ["structure", "#structure"],
];

export async function takeShots(page, dir, search) {
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.mouse.move(0, 0);
  const saved = [];
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(dir, "page.png") });
  saved.push("page");
  // The timeline over a few frames, as one reads it zoomed out (then fitted back).
  await page.focus("#strip");
  for (let i = 0; i < 9; i++) await page.keyboard.press("s");
  await page.mouse.move(0, 0);
  for (const [name, selector] of PANELS) {
    const panel = page.locator(selector);
    if (!(await panel.isVisible())) continue;
    // Its top at the top of the 1280×720 viewport (as far as the page scrolls), cut at the
    // viewport's bottom: what a reader sees of it at that size.
    await panel.evaluate((el) => el.scrollIntoView({ block: "start" }));
    const box = await panel.boundingBox();
    const height = Math.min(box.height, 720 - Math.max(0, box.y));
    await page.screenshot({ path: join(dir, `${name}.png`), clip: { x: box.x, y: Math.max(0, box.y), width: box.width, height } });
    saved.push(name);
  }
  await page.focus("#strip");
  await page.keyboard.press("f");
  if (search) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.fill("#search", search);
    await page.waitForSelector(`#search-results[data-query='${search}']:not([hidden])`, { timeout: 10_000 });
    const box = await page.locator("#search-results").boundingBox();
    await page.screenshot({ path: join(dir, "search.png"), clip: { x: 0, y: 0, width: 1280, height: Math.min(720, Math.ceil(box.y + box.height + 8)) } });
    saved.push("search");
    await page.keyboard.press("Escape");
  }
  return saved;
}
