// The capture comparison (`--compare OTHER`): it opens with the gate's verdict and the
// headline metrics, lists every metric (none cut off) in /api/comparison's ranked order,
// colours only judged changes (a run-length total of runs of different lengths never), and
// breaks metric names only after their dots.

import { check } from "./lib.mjs";

export async function checkComparison(page, api) {
  const doc = await api("comparison");
  const diff = await api("diff");
  check(doc.rows.length === diff.rows.length, `/api/comparison ranks ${doc.rows.length} rows, /api/diff has ${diff.rows.length}`);
  // The verdict leads: the first thing under the panel's title.
  const first = await page.evaluate(() => document.querySelector("#diff > h2 + *")?.id);
  check(first === "verdict", `the capture comparison opens with #${first}, not the verdict`);
  check((await page.getAttribute("#verdict", "data-verdict")) === doc.verdict.verdict, "the verdict shown is not /api/comparison's");
  const verdictText = await page.textContent("#verdict");
  check(verdictText.includes(doc.verdict.verdict.toUpperCase()), `the verdict reads "${verdictText.slice(0, 60)}"`);
  for (const reason of doc.verdict.reasons) check(verdictText.includes(reason), `the verdict does not give the reason "${reason}"`);
  const headline = await page.locator("#headline-table tbody tr").evaluateAll((trs) => trs.map((tr) => tr.dataset.metric));
  check(JSON.stringify(headline) === JSON.stringify(doc.headline.map((r) => r.metric)), `headline ${JSON.stringify(headline)}, /api/comparison ${JSON.stringify(doc.headline.map((r) => r.metric))}`);

  // Every row, in ranked order.
  const shown = await page.locator("#comparison-table tbody tr").evaluateAll((trs) => trs.map((tr) => ({ metric: tr.dataset.metric, classes: [...tr.querySelectorAll("td")].map((td) => td.className).join(" ") })));
  check(JSON.stringify(shown.map((r) => r.metric)) === JSON.stringify(doc.rows.map((r) => r.metric)), `the comparison lists ${shown.length} rows, not /api/comparison's ${doc.rows.length} in its order`);
  let artefacts = 0;
  for (const [i, row] of doc.rows.entries()) {
    const coloured = /\b(better|worse)\b/.test(shown[i].classes);
    check(coloured === row.coloured, `${row.metric} is ${coloured ? "" : "not "}coloured, /api/comparison says coloured: ${row.coloured}`);
    if (row.coloured) check(shown[i].classes.includes(row.change), `${row.metric} is not coloured ${row.change}`);
    if (row.not_judged && /\.(count|calls|total|sum|self)$/.test(row.metric)) artefacts++;
  }
  if (doc.base.frames_judged !== doc.cand.frames_judged) {
    check(artefacts > 0, "runs of different lengths, yet no run-length total is set apart");
    const count = doc.rows.find((r) => r.metric === "frame.count");
    check(count && !count.coloured, "frame.count of runs of different lengths is coloured");
  }

  // Every name reads as the metric's path, and breaks only after a dot: every segment of
  // it lies on one line.
  const names = await page.locator("#comparison-table tbody td.metric").allTextContents();
  const wrong = names.filter((text, i) => text !== doc.rows[i].metric);
  check(names.length === doc.rows.length && wrong.length === 0, `metric cells read ${JSON.stringify(wrong.slice(0, 2))}, not the metrics' paths`);
  const segments = await page.locator("#diff td.metric .seg").count();
  check(segments >= doc.rows.length, `the metric names are not split into segments (${segments})`);
  const broken = await page.evaluate(() => [...document.querySelectorAll("#diff td.metric .seg")].filter((s) => s.getClientRects().length > 1).map((s) => s.textContent));
  check(broken.length === 0, `metric names broken inside a segment: ${broken.slice(0, 3).join(", ")}`);
  return `comparison: ${doc.verdict.verdict}, ${doc.rows.length} rows, ${artefacts} run-length totals set apart`;
}
