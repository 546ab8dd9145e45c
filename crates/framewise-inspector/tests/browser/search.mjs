// Search: `/` focuses the box; a scope's name lists its runs (single spans: frame, thread,
// start, duration), longest first, with a count of the rest — checked against every span of
// that scope in the capture, read from /api/window; a click on the longest selects its frame,
// outlines the span in the timeline and opens its detail; Enter jumps to the first match's
// longest run; Esc closes the results.

import { TIMEOUT_MS, check, waitFor } from "./lib.mjs";
import { windowOf } from "./timeline.mjs";

async function typeQuery(page, text, problems) {
  await page.fill("#search", text);
  await waitFor(page, `#search-results[data-query='${text}']:not([hidden])`, `searching for "${text}"`, problems);
}

/** Every run of the scope `name` in the capture, from /api/window: [dur, row, start from its frame, thread]. */
async function everyRun(page, capture, strip, name) {
  const runs = [];
  for (let from = 0; from < capture.frame_count; from += 1000) {
    const win = await windowOf(page, from, Math.min(capture.frame_count, from + 1000));
    for (const lane of win.lanes) {
      for (const s of lane.spans) {
        if (win.scopes[s.scope].name === name) runs.push([s.dur_ns, s.row, s.start_ns - strip.begin_ns[s.row], lane.thread]);
      }
    }
  }
  return runs.sort((a, b) => b[0] - a[0] || a[1] - b[1] || a[2] - b[2]);
}

/** `selected` is the row selected now. */
export async function checkSearch(page, api, capture, strip, selected, problems) {
  await page.focus("#strip");
  await page.keyboard.press("/");
  check(await page.evaluate(() => document.activeElement?.id === "search"), "the / key does not focus the search box");

  // A scope whose longest run is not in the frame selected, so that the jump is seen.
  let target = null;
  for (const scope of capture.scopes) {
    const found = await api("search", { q: scope.name, limit: 10 });
    const first = found.matches[0];
    if (first?.kind === "scope" && first.name === scope.name && first.spans.longest.length > 0 && first.spans.longest[0].row !== selected) {
      target = { name: scope.name, found };
      break;
    }
  }
  if (!target) return "search: no scope to jump to";
  const { found } = target;
  await typeQuery(page, target.name, problems);
  const groups = await page.locator("#search-results .search-group").evaluateAll((s) => s.map((g) => [g.dataset.kind, g.dataset.name]));
  check(
    JSON.stringify(groups) === JSON.stringify(found.matches.map((m) => [m.kind, m.name])),
    `searching "${target.name}" lists ${JSON.stringify(groups)}, /api/search ${JSON.stringify(found.matches.map((m) => [m.kind, m.name]))}`,
  );
  const first = found.matches[0];
  const buttons = page.locator("#search-results .search-group >> nth=0").locator("button.run");
  const shown = await buttons.evaluateAll((bs) => bs.map((b) => [Number(b.dataset.durNs), Number(b.dataset.row), Number(b.dataset.startNs), b.dataset.thread]));
  const served = first.spans.longest.map((r) => [r.dur_ns, r.row, r.start_ns, r.thread ?? ""]);
  check(JSON.stringify(shown) === JSON.stringify(served), `the runs shown ${JSON.stringify(shown)} are not /api/search's ${JSON.stringify(served)}`);

  // Independently: the capture's every run of the scope, longest first.
  const all = await everyRun(page, capture, strip, target.name);
  check(first.spans.complete && first.spans.total === all.length, `${target.name} has ${all.length} runs in the windows, /api/search says ${first.spans.total} (complete: ${first.spans.complete})`);
  const expected = all.slice(0, shown.length);
  check(shown.length === Math.min(10, all.length), `${shown.length} runs shown of ${all.length} (limit 10)`);
  check(JSON.stringify(shown) === JSON.stringify(expected), `the runs shown ${JSON.stringify(shown)} are not the longest of the capture ${JSON.stringify(expected)}`);
  const rest = all.length - shown.length;
  const restText = (await page.locator("#search-results .search-group >> nth=0").locator(".rest").textContent().catch(() => "")) ?? "";
  check(rest === 0 ? restText === "" : restText.replace(/\u2009/g, "").includes(`${rest} more`), `${rest} runs not shown, the results say "${restText}"`);

  // A click on the longest: its frame selected, the span outlined in the timeline, its detail open.
  const [dur, row, start, thread] = shown[0];
  await page.click("#search-results .search-group >> nth=0 >> button.run >> nth=0");
  await waitFor(page, `body[data-selected-row='${row}']`, `clicking ${target.name}'s longest run`, problems);
  check(await page.isHidden("#search-results"), "the results stay open after a jump");
  const focus = JSON.stringify({ row, thread, depth: first.spans.longest[0].depth, start_ns: strip.begin_ns[row] + start, dur_ns: dur });
  await page.waitForFunction((want) => document.getElementById("timeline").dataset.focus === want, focus, { timeout: TIMEOUT_MS }).catch(() => {});
  const got = await page.getAttribute("#timeline", "data-focus");
  check(got === focus, `the timeline outlines ${got}, not the run clicked ${focus}`);
  await waitFor(page, `#span-detail[data-name='${target.name}'][data-row='${row}'][data-dur-ns='${dur}']:not([hidden])`, "the run's detail", problems);

  // Enter jumps to the first match's longest run; Esc closes the results.
  const [away, awayRow] = row === 0 ? ["End", capture.frame_count - 1] : ["Home", 0];
  await page.focus("#strip");
  await page.keyboard.press(away);
  await waitFor(page, `body[data-selected-row='${awayRow}']`, `the ${away} key`, problems);
  await page.keyboard.press("/");
  await typeQuery(page, target.name.toUpperCase(), problems);
  await page.keyboard.press("Enter");
  await waitFor(page, `body[data-selected-row='${row}']`, "Enter in the search box", problems);
  check(await page.evaluate(() => document.activeElement?.id !== "search"), "the search box keeps the keys after a jump");
  await page.keyboard.press("/");
  check(await page.evaluate(() => document.activeElement?.id === "search"), "the / key does not focus the search box after a jump");
  await page.keyboard.press("Escape");
  check(await page.isHidden("#search-results"), "Esc does not close the search results");

  // Esc, or a click away, before a search has answered: the late answer does not reopen
  // the list; focusing the box again searches what it holds.
  const part = target.name.slice(0, -1);
  await page.keyboard.press("/");
  await page.keyboard.type(part);
  await page.keyboard.press("Escape");
  await page.waitForTimeout(600); // past the box's 120 ms pause and the search's answer
  check(await page.isHidden("#search-results"), "a search answered after Esc reopens the results");
  await page.keyboard.press("/");
  await page.keyboard.type(part);
  await page.click("#header h1");
  await page.waitForTimeout(600);
  check(await page.isHidden("#search-results"), "a search answered after a click away reopens the results");
  await page.focus("#search");
  await waitFor(page, `#search-results[data-query='${part}']:not([hidden])`, "focusing the box after a click away cancelled its search", problems);
  await page.keyboard.press("Escape");

  // Enter straight after typing jumps to what was typed, not to the previous answer.
  await page.focus("#strip");
  await page.keyboard.press(away);
  await waitFor(page, `body[data-selected-row='${awayRow}']`, `the ${away} key`, problems);
  await page.keyboard.press("/");
  await page.keyboard.type(target.name);
  await page.keyboard.press("Enter");
  await waitFor(page, `body[data-selected-row='${row}']`, "Enter before the search had answered", problems);
  return `search found ${found.matches.length} matches for ${target.name}, its ${all.length} runs ranked, jumped to the longest (${dur} ns in row ${row})`;
}
