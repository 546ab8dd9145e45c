// Sorting and filtering the statistics' tables, and the layout at laptop and desktop sizes
// (no panel wider than its box), checked by reading the page's rows and element boxes.

import { check, waitFor } from "./lib.mjs";

const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });

/** The names of a table's body rows, in the order shown. */
async function shownNames(page, id) {
  return page.locator(`#${id} tbody tr`).evaluateAll((trs) => trs.map((tr) => tr.dataset.name));
}

/** Whether `values` are in order (descending or not), every null after every number. */
function ordered(values, descending) {
  const firstNull = values.findIndex((v) => v === null || v === undefined);
  if (firstNull >= 0 && values.slice(firstNull).some((v) => v !== null && v !== undefined)) return false;
  const known = firstNull >= 0 ? values.slice(0, firstNull) : values;
  return known.every((v, i) => i === 0 || (descending ? known[i - 1] >= v : known[i - 1] <= v));
}

/** Clicks the header labelled `label` of table `id`; resolves once its sort changed. */
async function sortBy(page, id, label, problems) {
  const before = await page.getAttribute(`#${id}`, "data-sort");
  await page.click(`#${id} thead th button:text-is("${label}")`);
  await waitFor(page, `#${id}:not([data-sort='${before}'])`, `sorting ${id} by ${label}`, problems);
}

/**
 * The scope table sorts by any column (both ways, nulls last) and filters by name; the
 * counter table opens in natural name order. `stats` is /api/stats of the range shown.
 */
export async function checkTables(page, stats, problems) {
  const scopes = stats.scopes ?? {};
  const names = Object.keys(scopes);
  if (names.length > 1) {
    // Opens largest total first.
    const opened = (await shownNames(page, "scope-table")).map((n) => scopes[n].total);
    check(ordered(opened, true), `the scope table does not open by total, largest first: ${opened.slice(0, 6).join(", ")}`);
    for (const [label, key] of [["calls", "calls"], ["p95", "p95"], ["frames", "count"]]) {
      await sortBy(page, "scope-table", label, problems);
      const first = (await shownNames(page, "scope-table")).map((n) => scopes[n][key]);
      check(ordered(first, true), `sorting scopes by ${label} (first click) is not descending: ${first.slice(0, 8).join(", ")}`);
      await sortBy(page, "scope-table", label, problems);
      const second = (await shownNames(page, "scope-table")).map((n) => scopes[n][key]);
      check(ordered(second, false), `sorting scopes by ${label} (second click) is not ascending: ${second.slice(0, 8).join(", ")}`);
    }
    await sortBy(page, "scope-table", "name", problems);
    const byName = await shownNames(page, "scope-table");
    check(byName.every((n, i) => i === 0 || collator.compare(byName[i - 1], n) <= 0), `sorting scopes by name is not in name order: ${byName.slice(0, 6).join(", ")}`);
    check(byName.length === names.length, `the scope table shows ${byName.length} rows, the range has ${names.length} scopes`);

    // Filtering: a piece of one name, in other case; exactly the names that hold it remain.
    const longest = [...names].sort((a, b) => b.length - a.length)[0];
    const needle = longest.slice(1, Math.max(3, Math.ceil(longest.length / 2))).toUpperCase();
    await page.fill("#scope-table-filter", needle);
    await waitFor(page, `#scope-table[data-shown='${names.filter((n) => n.toLowerCase().includes(needle.toLowerCase())).length}']`, `filtering scopes by "${needle}"`, problems);
    const filtered = await shownNames(page, "scope-table");
    const expected = names.filter((n) => n.toLowerCase().includes(needle.toLowerCase()));
    check(filtered.length === expected.length && expected.every((n) => filtered.includes(n)), `filtering scopes by "${needle}" shows ${JSON.stringify(filtered)}, expected ${JSON.stringify(expected)}`);
    await page.fill("#scope-table-filter", "");
    await waitFor(page, `#scope-table[data-shown='${names.length}']`, "clearing the scope filter", problems);
  }
  const counterNames = await shownNames(page, "counter-table").catch(() => []);
  check(
    counterNames.every((n, i) => i === 0 || collator.compare(counterNames[i - 1], n) <= 0),
    `the counter table is not in natural name order: ${counterNames.slice(0, 12).join(", ")}`,
  );
  return names.length;
}

/**
 * At each size, no panel is wider than its box and no element in a panel reaches past the
 * panel's right edge (element boxes, as laid out); the page itself does not scroll sideways.
 */
export async function checkLayout(page, sizes, restore) {
  for (const [width, height] of sizes) {
    await page.setViewportSize({ width, height });
    const overflow = await page.evaluate(() => {
      const found = [];
      const doc = document.documentElement;
      if (doc.scrollWidth > doc.clientWidth + 1) found.push(`the page scrolls sideways (${doc.scrollWidth} > ${doc.clientWidth})`);
      for (const panel of document.querySelectorAll("main .panel")) {
        if (panel.hidden || panel.offsetParent === null) continue;
        const box = panel.getBoundingClientRect();
        const name = panel.id || panel.getAttribute("aria-label");
        if (panel.scrollWidth > panel.clientWidth + 1) found.push(`#${name} scrollWidth ${panel.scrollWidth} > clientWidth ${panel.clientWidth}`);
        for (const el of panel.querySelectorAll("*")) {
          const r = el.getBoundingClientRect();
          if (r.width === 0 && r.height === 0) continue;
          if (r.right > box.right + 0.5) found.push(`${name}: ${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""} "${el.textContent.slice(0, 24)}" right ${Math.round(r.right)} > ${Math.round(box.right)}`);
          else if ((el.tagName === "TABLE" || el.tagName === "TH" || el.tagName === "TD") && el.scrollWidth > el.clientWidth + 1) {
            found.push(`${name}: ${el.tagName.toLowerCase()} "${el.textContent.slice(0, 24)}" clips its content`);
          }
        }
      }
      return found;
    });
    check(overflow.length === 0, `at ${width}x${height} a panel overflows: ${overflow.slice(0, 4).join("; ")}`);
  }
  if (restore) await page.setViewportSize(restore);
}
