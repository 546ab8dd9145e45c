// What the page does when a part of what it shows cannot be read, the rest being fine:
//
// `--issues-broken`: the game's `.framewise/` cannot be read (tests/browser.rs puts a
// directory where `perf.jsonl` belongs), so /api/issues answers 500. The Issues panel says so,
// with the server's reason; every other view loads and the page says ready, with no error.
//
// `--file-changed`: the capture's file is cut short after the page opened on it (the script
// prints "ready N" and tests/browser.rs truncates the file), so reading a frame the cut lost
// answers 500. A selection of such a frame (End, a click on its hitch) leaves every view on
// the frame shown before (strip, timeline and its view, caption, data-selected-row), says
// which frame could not be shown and the server's reason, and throws nothing the page does not
// catch; the next selection that reads clears the message.

import { TIMEOUT_MS, check, waitFor, watchedPage } from "./lib.mjs";

/** The problems seen but the console's note of each 500 these modes provoke on purpose. */
const unexpected = (problems) => problems.filter((p) => !/status of 500/.test(p));

/** GET /api/PATH with the token: its status and its JSON (null when not JSON). */
function rawClient(base) {
  return async (path, params = {}) => {
    const url = new URL(`/api/${path}`, base);
    for (const [key, value] of Object.entries({ ...params, token: base.searchParams.get("token") })) url.searchParams.set(key, String(value));
    const response = await fetch(url);
    const body = await response.json().catch(() => null);
    return { status: response.status, body };
  };
}

export async function runIssuesBroken(browserContext, api, address) {
  const base = new URL(address);
  const raw = rawClient(base);
  const [capture, strip, hitches] = await Promise.all([api("capture"), api("strip"), api("hitches")]);
  check(capture.issues && capture.issues.dir, "--issues-broken, but /api/capture names no .framewise/");
  const issues = await raw("issues");
  check(issues.status === 500 && issues.body?.error, `--issues-broken, but /api/issues answered ${issues.status}`);

  const { page, problems } = await watchedPage(browserContext);
  await page.goto(base.href);
  await waitFor(page, "body[data-ready='1'], body[data-error]", "the first render", problems);
  const error = await page.getAttribute("body", "data-error");
  check(!error, `an unreadable incident log takes the page down (${error}): ${await page.textContent("#error")}`);
  check(!(await page.isVisible("#error")), "an error is shown beside the Issues panel's");

  // The Issues panel says what could not be read, and why.
  check(await page.isVisible("#issues"), "the Issues panel is hidden: the incident log's failure is said nowhere");
  const said = (await page.textContent("#issues-error")) ?? "";
  check(said.includes(issues.body.error), `the Issues panel says "${said}", not the server's reason "${issues.body.error}"`);
  check((await page.getAttribute("#issues", "data-error")) === issues.body.error, "the Issues panel's data-error is not the server's reason");

  // Every other view is there.
  const drawn = Number(await page.getAttribute("#strip", "data-frames"));
  check(drawn === capture.frame_count, `the strip drew ${drawn} frames of ${capture.frame_count}`);
  const hitchRows = await page.locator("#hitch-table tbody tr").count();
  check(hitchRows === hitches.hitches.length, `the hitch list has ${hitchRows} rows, /api/hitches ${hitches.hitches.length}`);
  const selected = await page.getAttribute("body", "data-selected-row");
  check(selected !== null && (await page.getAttribute("#timeline", "data-row")) === selected, `the timeline is of row ${await page.getAttribute("#timeline", "data-row")}, the selection ${selected}`);
  check((await page.textContent("#timeline-caption")).includes(`(row ${selected})`), "the timeline's caption is not of the selected row");
  check(((await page.textContent("#stat-frame-p50")) ?? "").trim() !== "", "the statistics are not shown");
  await waitFor(page, "#flame-panel[data-from]", "the flame graph", problems);
  const rest = unexpected(problems);
  check(rest.length === 0, rest[0]);
  await page.close();
  return `the Issues panel says "${said.slice(0, 80)}…", ${strip.index.length} frames, ${hitchRows} hitches and every other view shown`;
}

/** The selection as every view shows it. */
async function views(page) {
  return page.evaluate(() => ({
    selected: document.body.dataset.selectedRow,
    strip: document.getElementById("strip").dataset.selected,
    timeline: document.getElementById("timeline").dataset.row,
    view: document.getElementById("timeline").dataset.view,
    caption: document.getElementById("timeline-caption").textContent,
    structure: document.getElementById("structure").textContent,
    hitch: [...document.querySelectorAll("#hitch-table tr.selected")].map((tr) => tr.dataset.row).join(","),
    error: document.body.dataset.error ?? null,
    message: document.getElementById("error").hidden ? null : document.getElementById("error").textContent,
  }));
}

export async function runFileChanged(browserContext, api, address) {
  const base = new URL(address);
  const raw = rawClient(base);
  const [capture, strip, hitches] = await Promise.all([api("capture"), api("strip"), api("hitches")]);
  const last = capture.frame_count - 1;
  const { page, problems } = await watchedPage(browserContext);
  await page.goto(base.href);
  await waitFor(page, "body[data-ready='1'], body[data-error]", "the first render", problems);
  check(!(await page.getAttribute("body", "data-error")), `the page shows an error before the file changed: ${await page.textContent("#error")}`);
  const opened = Number(await page.getAttribute("body", "data-selected-row"));
  const before = await views(page);

  // The test cuts the file short now; the server then answers 500 for the last frame.
  console.log(`ready ${capture.frame_count}`);
  const deadline = Date.now() + TIMEOUT_MS;
  let lost = await raw("frame", { row: last });
  while (lost.status !== 500) {
    check(Date.now() < deadline, `the file was cut, but /api/frame?row=${last} still answers ${lost.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    lost = await raw("frame", { row: last });
  }
  check((await raw("frame", { row: opened })).status === 200, `the cut lost the row the page opened on (${opened}): the fixture must keep it`);

  // End: the last frame cannot be read. Every view stays on the row shown, the message says
  // which frame could not be shown and the server's reason.
  await page.focus("#strip");
  await page.keyboard.press("End");
  await waitFor(page, "body[data-error]", "selecting a frame that no longer reads back", problems);
  await page.waitForFunction((row) => document.getElementById("timeline").dataset.row === String(row), opened, { timeout: 2000 }).catch(() => {});
  const after = await views(page);
  for (const key of ["selected", "strip", "timeline", "view", "caption", "structure", "hitch"]) {
    check(after[key] === before[key], `after a failed selection of row ${last}, the ${key} is ${JSON.stringify(after[key])}, it was ${JSON.stringify(before[key])} (half-applied)`);
  }
  check(after.error === "frame", `a frame that cannot be read is reported as data-error="${after.error}", not "frame"`);
  check(after.message && after.message.includes(`row ${last}`) && after.message.includes(lost.body.error), `the message after End says "${after.message}", not row ${last} and the server's "${lost.body.error}"`);
  check(!after.message.includes("Could not load the capture"), `a frame that cannot be read is reported as the capture failing to load: "${after.message}"`);

  // A click on the hitch of a frame the cut lost: the same, and no uncaught rejection.
  const lostHitches = [];
  for (const hitch of hitches.hitches) {
    const row = strip.index.indexOf(hitch.frame);
    if (row >= 0 && row !== opened && (await raw("frame", { row })).status === 500) lostHitches.push(row);
  }
  let hitchSummary = "no hitch among the frames lost";
  if (lostHitches.length > 0) {
    const row = lostHitches[lostHitches.length - 1];
    await page.click(`#hitch-table tbody tr[data-row='${row}']`);
    await page.waitForFunction((r) => (document.getElementById("error").textContent ?? "").includes(`(row ${r})`), row, { timeout: TIMEOUT_MS }).catch(() => {});
    const clicked = await views(page);
    check(clicked.message && clicked.message.includes(`(row ${row})`), `a click on the hitch of row ${row}, which no longer reads back, says "${clicked.message}"`);
    for (const key of ["selected", "strip", "timeline", "caption", "hitch"]) {
      check(clicked[key] === before[key], `after a click on the hitch of row ${row}, which no longer reads back, the ${key} is ${JSON.stringify(clicked[key])}, it was ${JSON.stringify(before[key])}`);
    }
    hitchSummary = `a click on the hitch of row ${row} kept it too`;
  }
  const pageErrors = problems.filter((p) => p.startsWith("page error"));
  check(pageErrors.length === 0, `a failed selection threw past the page: ${pageErrors[0]}`);

  // A frame that reads: selected, and the message goes.
  const readable = [opened + 1, opened - 1].find((row) => row >= 0 && row < capture.frame_count);
  check((await raw("frame", { row: readable })).status === 200, `row ${readable}, next to the opening row, no longer reads back: the fixture must keep it`);
  await page.focus("#strip");
  await page.keyboard.press(readable > opened ? "ArrowRight" : "ArrowLeft");
  await waitFor(page, `body[data-selected-row='${readable}']`, `selecting row ${readable}, which reads`, problems);
  const moved = await views(page);
  check(moved.strip === String(readable) && moved.timeline === String(readable) && moved.caption.includes(`(row ${readable})`), `after selecting row ${readable}: ${JSON.stringify(moved)}`);
  check(moved.error === null && moved.message === null, `the message stays once a frame reads again: "${moved.message}"`);
  const rest = unexpected(problems);
  check(rest.length === 0, rest[0]);
  await page.close();
  return `End on the lost row ${last} kept row ${opened} in every view and said "${after.message.slice(0, 60)}…"; ${hitchSummary}; row ${readable} then selected and the message cleared`;
}
