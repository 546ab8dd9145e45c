// The flame graph: what the page draws for a selection is the analysis crate's fold of that
// selection (/api/flame), name by name it adds up to the per-frame series the capture's own
// aggregates give (/api/series: another path through the analysis crate), one thread can be
// folded alone, and "Set as A" turns it into the differential graph (/api/flame-diff).

import { TIMEOUT_MS, check, waitFor } from "./lib.mjs";

async function shown(page, from, to, kind, problems, thread = "") {
  const selector = `#flame-panel[data-from='${from}'][data-to='${to}'][data-kind='${kind}'][data-thread='${thread}']`;
  await waitFor(page, selector, `the flame graph of rows ${from}–${to} (${kind}${thread ? `, ${thread}` : ""})`, problems);
  return JSON.parse(await page.getAttribute("#flame", "data-roots"));
}

function sameRoots(drawn, roots, what) {
  const expected = roots.map((n) => [n.name, n.total_ns, n.self_ns, n.calls]);
  check(JSON.stringify(drawn) === JSON.stringify(expected), `${what}: the page draws roots ${JSON.stringify(drawn).slice(0, 200)}, /api/flame has ${JSON.stringify(expected).slice(0, 200)}`);
}

/** `row` is the selected row; `capture` /api/capture. Returns a one-line summary. */
export async function checkFlame(page, api, row, capture, problems) {
  // Opens on the selected frame.
  const frameRoots = await shown(page, row, row + 1, "flame", problems);
  const one = await api("flame", { from: row, to: row + 1 });
  sameRoots(frameRoots, one.roots, `row ${row}`);

  // Every frame, merged.
  const n = capture.frame_count;
  await page.selectOption("#flame-mode", "all");
  const allRoots = await shown(page, 0, n, "flame", problems);
  const all = await api("flame", { from: 0, to: n });
  sameRoots(allRoots, all.roots, "all frames");
  check(all.total_ns === all.roots.reduce((s, r) => s + r.total_ns, 0), "/api/flame's total is not its roots' sum");
  const table = await page.locator("#flame-table tbody tr").evaluateAll((trs) => trs.map((tr) => [tr.dataset.name, Number(tr.dataset.totalNs), Number(tr.dataset.selfNs), Number(tr.dataset.calls)]));
  check(table.length === all.names.length, `the by-name table has ${table.length} rows, /api/flame ${all.names.length} names`);
  for (const t of all.names) {
    const line = table.find(([name]) => name === t.name);
    check(line && line[1] === t.total_ns && line[2] === t.self_ns && line[3] === t.calls, `the by-name table's ${t.name} is ${JSON.stringify(line)}, /api/flame says ${JSON.stringify(t)}`);
  }
  // Name by name, the fold of the spans equals the per-frame totals the load aggregated.
  for (const t of all.names.slice(0, 4)) {
    const series = await api("series", { kind: "scope", name: t.name });
    const sum = series.values.reduce((s, v) => s + (v ?? 0), 0);
    check(sum === t.total_ns, `scope ${t.name}: the fold of every frame says ${t.total_ns} ns, its series adds to ${sum} ns`);
  }

  // One thread alone.
  if (capture.threads.length > 0) {
    const thread = all.threads[0] ?? capture.threads[0];
    await page.selectOption("#flame-thread", thread);
    const threadRoots = await shown(page, 0, n, "flame", problems, thread);
    sameRoots(threadRoots, (await api("flame", { from: 0, to: n, thread })).roots, `thread ${thread}`);
    await page.selectOption("#flame-thread", "");
    await shown(page, 0, n, "flame", problems);
  }

  // A click on the widest root zooms into it: it is the only root drawn.
  if (all.roots.length > 0) {
    await page.locator("#flame").scrollIntoViewIfNeeded();
    const box = await page.locator("#flame").boundingBox();
    await page.mouse.click(box.x + 2, box.y + 5);
    await page.waitForFunction(() => JSON.parse(document.getElementById("flame").dataset.roots).length === 1, null, { timeout: TIMEOUT_MS }).catch(() => {});
    const zoomed = JSON.parse(await page.getAttribute("#flame", "data-roots"));
    check(zoomed.length === 1 && zoomed[0][0] === all.roots[0].name, `clicking ${all.roots[0].name} zooms to ${JSON.stringify(zoomed).slice(0, 80)}`);
    await page.mouse.dblclick(box.x + box.width / 2, box.y + 5);
  }

  // Differential: the first half as A, then every frame as B.
  await page.selectOption("#flame-mode", "frame");
  await shown(page, row, row + 1, "flame", problems);
  await page.click("#flame-base");
  await shown(page, row, row + 1, "diff", problems);
  await page.selectOption("#flame-mode", "all");
  const diffRoots = await shown(page, 0, n, "diff", problems);
  const diff = await api("flame-diff", { a_from: row, a_to: row + 1, b_from: 0, b_to: n });
  check(
    JSON.stringify(diffRoots) === JSON.stringify(diff.roots.map((d) => [d.name, d.a_ns, d.b_ns])),
    `the differential graph draws ${JSON.stringify(diffRoots).slice(0, 160)}, /api/flame-diff has ${JSON.stringify(diff.roots.map((d) => [d.name, d.a_ns, d.b_ns])).slice(0, 160)}`,
  );
  await page.click("#flame-base"); // clear A
  await page.selectOption("#flame-mode", "frame");
  await shown(page, row, row + 1, "flame", problems);
  return `flame graph of ${all.names.length} names over ${n} frames`;
}
