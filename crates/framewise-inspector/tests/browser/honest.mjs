// What the page says of what a capture does not hold, and of a damaged one.
//
// `--no-spans`: a `.litecap` v3 (per-frame phase times, no spans; tests/browser.rs writes
// it): the flame graph says its spans were not recorded (the server's reason) rather than
// show an empty graph, and a search for a phase lists its frames with the same word instead
// of an empty list of runs.
//
// `--repeated-indices`: two recordings in one file, frame indices 0.. twice: the hitch list's
// rows are the rows the strip marks (each hitch on the row it was found on, never the other
// recording's frame of the same index), the page opens on the first, and a click on the
// last selects its row.

import { check, waitFor, watchedPage } from "./lib.mjs";

async function opened(browserContext, address) {
  const { page, problems } = await watchedPage(browserContext);
  await page.goto(new URL(address).href);
  await waitFor(page, "body[data-ready='1'], body[data-error]", "the first render", problems);
  check(!(await page.getAttribute("body", "data-error")), `the page shows an error: ${await page.textContent("#error")}`);
  return { page, problems };
}

export async function runNoSpans(browserContext, api, address) {
  const { page, problems } = await opened(browserContext, address);
  const row = Number(await page.getAttribute("body", "data-selected-row"));
  await waitFor(page, `#flame-panel[data-from='${row}'][data-kind='flame'][data-spans-recorded]`, "the flame graph of the selected frame", problems);
  const doc = await api("flame", { from: row, to: row + 1 });
  check(doc.spans_recorded === false && doc.reason, `/api/flame says spans_recorded ${doc.spans_recorded} of a capture without spans`);
  check((await page.getAttribute("#flame-panel", "data-spans-recorded")) === "false", "the flame panel does not mark its spans not recorded");
  check(await page.isVisible("#flame-unrecorded"), "the flame graph does not say its spans were not recorded");
  const said = (await page.textContent("#flame-unrecorded")) ?? "";
  check(said === doc.reason, `the flame graph says "${said.slice(0, 80)}", the server "${doc.reason.slice(0, 80)}"`);

  await page.fill("#search", "render");
  await waitFor(page, "#search-results[data-query='render']:not([hidden])", `searching for "render"`, problems);
  const group = page.locator("#search-results .search-group[data-name='render']");
  check((await group.getAttribute("data-spans-recorded")) === "false", "the search result of render does not mark its runs unknown");
  const text = (await group.textContent()) ?? "";
  check(text.includes("spans not recorded"), `the search result of render does not say its spans were not recorded: "${text.slice(0, 120)}"`);
  const frames = await group.locator("button.occurrence").count();
  check(frames > 0, "the search result of render lists none of its frames");
  check((await group.locator("button.run").count()) === 0, "the search result of render lists runs it cannot know");
  check(problems.length === 0, problems[0]);
  return `the flame graph and the search say spans not recorded (${frames} frames listed)`;
}

export async function runRepeatedIndices(browserContext, api, address) {
  const [strip, hitches] = await Promise.all([api("strip"), api("hitches")]);
  const marked = strip.hitch.flatMap((isHitch, r) => (isHitch ? [r] : []));
  check(marked.length === hitches.hitches.length && marked.length > 1, `the strip marks ${marked.length} rows, /api/hitches lists ${hitches.hitches.length}`);
  const seen = new Set();
  check(strip.index.some((index) => seen.has(index) || !seen.add(index)), "--repeated-indices, but no frame index repeats");
  const { page, problems } = await opened(browserContext, address);
  const listed = await page.locator("#hitch-table tbody tr").evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.row)));
  check(JSON.stringify(listed) === JSON.stringify(marked), `the hitch list's rows are ${JSON.stringify(listed)}, the strip marks ${JSON.stringify(marked)}`);
  check((await page.getAttribute("body", "data-selected-row")) === String(marked[0]), `the page opened on row ${await page.getAttribute("body", "data-selected-row")}, not the first hitch's (${marked[0]})`);
  const last = marked[marked.length - 1];
  await page.click(`#hitch-table tbody tr[data-row='${last}']`);
  await waitFor(page, `body[data-selected-row='${last}']`, `row ${last} selected from the hitch list`, problems);
  const selected = await page.locator("#hitch-table tr.selected").evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.row)));
  check(JSON.stringify(selected) === JSON.stringify([last]), `the hitch list marks rows ${JSON.stringify(selected)} for row ${last}`);
  check(problems.length === 0, problems[0]);
  return `${marked.length} hitches on the rows the strip marks, in a capture whose indices repeat`;
}
