// The Issues panel: shown only when the capture belongs to a game's `.framewise/` (then
// /api/capture names it under `issues`); one card per footprint of /api/issues, in its
// order, with its count, its situation chips, and the occurrences this capture recorded as
// buttons — a click selects that occurrence's frame.

import { check, waitFor } from "./lib.mjs";

/** `expected`: whether the page must show the panel. */
export async function checkIssues(page, api, capture, strip, expected, problems) {
  const shown = await page.isVisible("#issues");
  if (!expected) {
    check(!capture.issues, "/api/capture names a .framewise/ the test did not make");
    check(!shown, "the Issues panel is shown for a capture outside any game project");
    return "no issues panel";
  }
  check(capture.issues && capture.issues.dir, "--expect-issues, but /api/capture names no .framewise/");
  check(shown, "--expect-issues, but the Issues panel is hidden");
  const doc = await api("issues");
  const cards = await page.locator("#issues li.issue").evaluateAll((lis) => lis.map((li) => [li.dataset.id, li.dataset.count]));
  check(
    JSON.stringify(cards) === JSON.stringify(doc.issues.map((i) => [i.id, String(i.count)])),
    `the Issues panel lists ${JSON.stringify(cards)}, /api/issues ${JSON.stringify(doc.issues.map((i) => [i.id, i.count]))}`,
  );
  for (const issue of doc.issues) {
    const chips = await page.locator(`#issue-${issue.id} .chip`).allTextContents();
    check(
      JSON.stringify(chips) === JSON.stringify(issue.situation.map(([k, v]) => `${k}=${v}`)),
      `issue ${issue.id} shows the chips ${JSON.stringify(chips)}, its situation is ${JSON.stringify(issue.situation)}`,
    );
    check((await page.textContent(`#issue-${issue.id} .count`)) === `×${issue.count}`, `issue ${issue.id} does not show ×${issue.count}`);
  }
  // The last occurrence this capture recorded, at a row other than the selected one.
  const selected = Number(await page.getAttribute("body", "data-selected-row"));
  const occurrences = doc.issues.flatMap((i) => (i.occurrences ?? []).map((o) => ({ id: i.id, o, row: strip.index.indexOf(o.frame) })));
  check(occurrences.length > 0, "--expect-issues, but no occurrence of this capture is listed");
  const buttons = await page.locator("#issues button.occurrence").count();
  check(buttons === occurrences.filter((x) => x.row >= 0).length, `the panel has ${buttons} occurrence buttons, /api/issues ${occurrences.length} occurrences in this capture`);
  const target = [...occurrences].reverse().find((x) => x.row >= 0 && x.row !== selected);
  check(target, "no occurrence at a row other than the selected one");
  await page.click(`#issue-${target.id} button.occurrence[data-frame='${target.o.frame}']`);
  await waitFor(page, `body[data-selected-row='${target.row}']`, `clicking occurrence frame ${target.o.frame} in the Issues panel`, problems);
  return `${doc.issues.length} issues, ${occurrences.length} occurrences here, a click selected frame ${target.o.frame}`;
}
