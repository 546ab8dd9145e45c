// `--loading`: the server serves a capture whose load it holds (tests/browser.rs releases it
// once this script prints "painted N"). The page must draw the strip from the file's
// directory and say it is loading before anything else is ready, then, once the load is
// released, render every view with the loaded capture's strip.

import { Failure, check, decodeStrip, waitFor, watchedPage } from "./lib.mjs";

export async function runLoading(browserContext, address) {
  const base = new URL(address);
  const raw = (path) => fetch(new URL(`/api/${path}?token=${base.searchParams.get("token")}`, base));
  const loading = await (await raw("loading")).json();
  check(loading.state === "loading", `the load is held, but /api/loading says ${loading.state}`);
  const early = decodeStrip(await (await raw("strip")).arrayBuffer());
  check(!early.complete && early.phase === null && early.dropped_spans === null, "the directory's strip claims phases or dropped spans it cannot know");
  check(early.index.length === loading.frame_count, `the strip has ${early.index.length} rows, /api/loading ${loading.frame_count} frames`);
  for (const path of ["capture", "hitches", "stats"]) {
    const status = (await raw(path)).status;
    check(status === 503, `/api/${path} answered ${status} while the capture loads, not 503`);
  }

  const { page, problems } = await watchedPage(browserContext);
  await page.goto(base.href);
  await waitFor(page, "body[data-strip-painted], body[data-error]", "the strip's first paint", problems);
  check(!(await page.getAttribute("body", "data-error")), `the page shows an error: ${await page.textContent("#error")}`);
  check((await page.getAttribute("body", "data-loading")) === "1", "the strip is painted but the page does not say it is loading");
  check((await page.getAttribute("body", "data-ready")) === null, "the page says ready while the capture is still loading");
  const drawn = Number(await page.getAttribute("#strip", "data-frames"));
  check(drawn === loading.frame_count, `the strip drew ${drawn} frames while loading, the directory lists ${loading.frame_count}`);
  const marks = Number(await page.getAttribute("#strip", "data-hitch-marks"));
  check((marks > 0) === early.hitch.some(Boolean), `the strip marks ${marks} hitch columns; the directory's strip has ${early.hitch.filter(Boolean).length}`);
  check(Number(await page.getAttribute("#strip", "data-dropped-marks")) === 0, "dropped spans are marked before they are known");
  check(await page.isVisible("#loading"), "no loading indication under the strip");
  check((await page.textContent("#loading")).includes("Loading the capture"), `the loading line says "${await page.textContent("#loading")}"`);
  check(!(await page.isVisible("#stats")) && !(await page.isVisible("#timeline")), "statistics or the timeline are shown before the capture is loaded");

  // A click on the strip while it loads picks the frame the page opens on.
  const box = await page.locator("#strip").boundingBox();
  const target = Math.floor(0.25 * drawn);
  await page.mouse.click(box.x + box.width * 0.25, box.y + box.height * 0.6);

  console.log(`painted ${drawn}`);
  await waitFor(page, "body[data-ready='1'], body[data-error]", "the render once the load is released", problems);
  check(!(await page.getAttribute("body", "data-error")), `the page shows an error once loaded: ${await page.textContent("#error")}`);
  check(!(await page.isVisible("#loading")) && (await page.getAttribute("body", "data-loading")) === null, "the loading indication stays after the load");
  const after = Number(await page.getAttribute("#strip", "data-frames"));
  const capture = await (await raw("capture")).json();
  check(after === capture.frame_count, `the strip drew ${after} frames once loaded, the capture has ${capture.frame_count}`);
  const selected = Number(await page.getAttribute("body", "data-selected-row"));
  check(Math.abs(selected - target) <= 1, `the page opened on row ${selected}, not the row ${target} clicked while it loaded`);
  check(await page.isVisible("#timeline"), "the timeline is not shown once loaded");
  const full = decodeStrip(await (await raw("strip")).arrayBuffer());
  check(full.complete && full.phase !== null, "the strip served once loaded is not the complete one");
  if (problems.length) throw new Failure(problems[0]);
  return `${drawn} frames painted while loading, opened on the row clicked meanwhile (${selected})`;
}
