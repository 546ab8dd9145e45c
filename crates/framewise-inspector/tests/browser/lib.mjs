// What every part of the browser script shares: failing with one line, waiting for the page,
// asking the API directly, and comparing a displayed time with the API's.

import { readFileSync } from "node:fs";

export const TIMEOUT_MS = 30_000;

// The page's own decoder of /api/strip's binary columns (it imports nothing), loaded from
// its source: node 20 does not take web/'s ES modules by path.
const stripSource = readFileSync(new URL("../../web/stripdata.js", import.meta.url), "utf8");
export const { decodeStrip } = await import(`data:text/javascript;base64,${Buffer.from(stripSource).toString("base64")}`);

export class Failure extends Error {}
export function check(condition, message) {
  if (!condition) throw new Failure(message);
}

/**
 * The API, asked directly (not through the page), with the token from the address; the strip
 * decoded. Every document but `loading` is asked for once the capture is loaded (the server
 * may still be loading it behind: `/api/loading`).
 */
export function apiClient(base) {
  const token = base.searchParams.get("token");
  const fetchApi = async (path, params) => {
    const url = new URL(`/api/${path}`, base);
    for (const [key, value] of Object.entries({ ...params, token })) url.searchParams.set(key, String(value));
    const response = await fetch(url);
    check(response.ok, `GET /api/${path} answered ${response.status}`);
    return path === "strip" ? decodeStrip(await response.arrayBuffer()) : response.json();
  };
  let loaded = null;
  const whenLoaded = async () => {
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const loading = await fetchApi("loading", {});
      check(loading.state !== "failed", `the capture failed to load: ${loading.error}`);
      if (loading.state === "ready") return;
      check(Date.now() < deadline, `the capture did not load in ${TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return async (path, params = {}) => {
    if (path !== "loading") await (loaded ??= whenLoaded());
    return fetchApi(path, params);
  };
}

/** A displayed "12.34 ms" / "5.6 µs" must be the API's milliseconds to the digits shown. */
export function sameMs(text, ms, what) {
  if (ms === null || ms === undefined) {
    check(text.trim() === "—", `${what}: the API says null, the page shows "${text}"`);
    return;
  }
  const match = /^(-?[\d.]+) (ms|µs)$/.exec(text.trim());
  check(match, `${what}: "${text}" is not a time`);
  const shown = Number(match[1]) / (match[2] === "µs" ? 1000 : 1);
  const decimals = (match[1].split(".")[1] ?? "").length + (match[2] === "µs" ? 3 : 0);
  check(Math.abs(shown - ms) <= 0.5 * 10 ** -decimals + 1e-12, `${what}: page shows ${text}, API says ${ms} ms`);
}

/**
 * A new page, 1400×1000, whose console errors, page errors and failed requests are collected
 * in `problems` (a check fails on the first).
 */
export async function watchedPage(browserContext) {
  const page = await browserContext.newPage();
  await page.setViewportSize({ width: 1400, height: 1000 });
  const problems = [];
  page.on("console", (message) => message.type() === "error" && problems.push(`console error: ${message.text()}`));
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  return { page, problems };
}

/** Waits for `selector`; a time-out fails with `what` and any page error seen so far. */
export async function waitFor(page, selector, what, problems) {
  try {
    await page.waitForSelector(selector, { timeout: TIMEOUT_MS });
  } catch {
    throw new Failure(`${what}: ${selector} did not appear in ${TIMEOUT_MS / 1000} s${problems[0] ? ` (${problems[0]})` : ""}`);
  }
}

