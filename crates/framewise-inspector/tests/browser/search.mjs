// Search: `/` focuses the box; a scope's name lists it with its frames worst first (the
// ranking checked against the scope's own per-frame series); a click on the worst frame
// selects it; Enter jumps to the first match's worst frame; Esc closes the results.

import { check, waitFor } from "./lib.mjs";

async function typeQuery(page, text, problems) {
  await page.fill("#search", text);
  await waitFor(page, `#search-results[data-query='${text}']:not([hidden])`, `searching for "${text}"`, problems);
}

/** `selected` is the row selected now. */
export async function checkSearch(page, api, capture, selected, problems) {
  await page.focus("#strip");
  await page.keyboard.press("/");
  check(await page.evaluate(() => document.activeElement?.id === "search"), "the / key does not focus the search box");

  // A scope whose worst frame is not the one selected, so that the jump is seen.
  let target = null;
  for (const scope of capture.scopes) {
    const series = await api("series", { kind: "scope", name: scope.name });
    let worst = null;
    series.values.forEach((v, row) => {
      if (v !== null && (worst === null || v > series.values[worst])) worst = row;
    });
    if (worst !== null && worst !== selected) {
      target = { name: scope.name, worst, series };
      break;
    }
  }
  if (!target) return "search: no scope to jump to";
  const found = await api("search", { q: target.name, limit: 10 });
  await typeQuery(page, target.name, problems);
  const groups = await page.locator("#search-results .search-group").evaluateAll((s) => s.map((g) => [g.dataset.kind, g.dataset.name]));
  check(
    JSON.stringify(groups) === JSON.stringify(found.matches.map((m) => [m.kind, m.name])),
    `searching "${target.name}" lists ${JSON.stringify(groups)}, /api/search ${JSON.stringify(found.matches.map((m) => [m.kind, m.name]))}`,
  );
  const first = found.matches[0];
  check(first.kind === "scope" && first.name === target.name, `the exact name ${target.name} is not the first match (${first.kind} ${first.name})`);
  const shownRows = await page.locator("#search-results .search-group >> nth=0").locator("button.occurrence").evaluateAll((bs) => bs.map((b) => Number(b.dataset.row)));
  check(JSON.stringify(shownRows) === JSON.stringify(first.occurrences.map((o) => o.row)), `the occurrences shown ${JSON.stringify(shownRows)} are not /api/search's`);
  const values = shownRows.map((row) => target.series.values[row]);
  check(values.every((v, i) => i === 0 || values[i - 1] >= v), `the occurrences of ${target.name} are not worst first: ${values.join(", ")}`);
  check(shownRows[0] === target.worst, `the first occurrence is row ${shownRows[0]}, the scope's worst frame is row ${target.worst}`);

  await page.click("#search-results .search-group >> nth=0 >> button.occurrence >> nth=0");
  await waitFor(page, `body[data-selected-row='${target.worst}']`, `clicking ${target.name}'s worst frame`, problems);
  check(await page.isHidden("#search-results"), "the results stay open after a jump");

  // Enter jumps to the first match's worst frame; Esc closes the results.
  const [away, awayRow] = target.worst === 0 ? ["End", capture.frame_count - 1] : ["Home", 0];
  await page.focus("#strip");
  await page.keyboard.press(away);
  await waitFor(page, `body[data-selected-row='${awayRow}']`, `the ${away} key`, problems);
  await page.keyboard.press("/");
  await typeQuery(page, target.name.toUpperCase(), problems);
  await page.keyboard.press("Enter");
  await waitFor(page, `body[data-selected-row='${target.worst}']`, "Enter in the search box", problems);
  await page.keyboard.press("/");
  await page.keyboard.press("Escape");
  check(await page.isHidden("#search-results"), "Esc does not close the search results");
  return `search found ${found.matches.length} matches for ${target.name}, jumped to row ${target.worst}`;
}
