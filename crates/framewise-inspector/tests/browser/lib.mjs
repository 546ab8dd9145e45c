// What every part of the browser script shares: failing with one line, waiting for the page,
// asking the API directly, and comparing a displayed time with the API's.

export const TIMEOUT_MS = 30_000;

export class Failure extends Error {}
export function check(condition, message) {
  if (!condition) throw new Failure(message);
}

/** The API, asked directly (not through the page), with the token from the address. */
export function apiClient(base) {
  const token = base.searchParams.get("token");
  return async (path, params = {}) => {
    const url = new URL(`/api/${path}`, base);
    for (const [key, value] of Object.entries({ ...params, token })) url.searchParams.set(key, String(value));
    const response = await fetch(url);
    check(response.ok, `GET /api/${path} answered ${response.status}`);
    return response.json();
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

/** Waits for `selector`; a time-out fails with `what` and any page error seen so far. */
export async function waitFor(page, selector, what, problems) {
  try {
    await page.waitForSelector(selector, { timeout: TIMEOUT_MS });
  } catch {
    throw new Failure(`${what}: ${selector} did not appear in ${TIMEOUT_MS / 1000} s${problems[0] ? ` (${problems[0]})` : ""}`);
  }
}

