// Following a capture a running game is still writing (`framewise view --follow`): polls
// /api/capture about once a second while the file is open, keeps the "live · N frames"
// indicator current, and hands every new generation (a successful reload) to the page. It
// stops once the writer closed the file. Marks the body for tests: data-generation (the one
// the page shows) and data-follow-closed.

import { get, plural } from "./api.js";

const POLL_MS = 1000;

/**
 * Follows `capture` (an /api/capture document whose `follow` is non-null). `onGeneration`
 * receives each new document and resolves once the page shows it; the next poll waits for it.
 */
export function follow(capture, indicator, onGeneration) {
  let shown = capture.follow.generation;
  render(indicator, capture);
  if (capture.follow.closed) return;
  const tick = async () => {
    let next;
    try {
      next = await get("capture");
    } catch (error) {
      render(indicator, null, `cannot reach the server: ${error.message}`);
      setTimeout(tick, POLL_MS);
      return;
    }
    if (next.follow && next.follow.generation !== shown) {
      await onGeneration(next);
      shown = next.follow.generation;
    }
    render(indicator, next);
    if (next.follow && !next.follow.closed) setTimeout(tick, POLL_MS);
  };
  setTimeout(tick, POLL_MS);
}

function render(indicator, capture, unreachable = null) {
  indicator.hidden = false;
  if (capture === null) {
    indicator.classList.add("warn");
    indicator.title = unreachable;
    indicator.textContent = "live · server unreachable";
    return;
  }
  const { generation, closed, last_error: lastError } = capture.follow;
  const frames = plural(capture.frame_count, "frame", "frames");
  let text = closed ? `closed · ${frames}` : `live · ${frames}`;
  if (lastError) text += " · last reload failed";
  indicator.textContent = text;
  indicator.classList.toggle("closed", closed);
  indicator.classList.toggle("warn", Boolean(lastError));
  indicator.title = lastError
    ? `The file could not be read again (${lastError}); showing the last good reading.`
    : closed
      ? "The writer closed the file: no longer following it."
      : "The file is still being written: new frames appear as they are written.";
  document.body.dataset.generation = String(generation);
  document.body.dataset.liveFrames = String(capture.frame_count);
  if (closed) document.body.dataset.followClosed = "1";
}
