// GET /api/<path> with the per-run token from the page's address (docs/INSPECTOR.md).
export async function get(path, params = {}) {
  const token = new URLSearchParams(location.search).get("token") ?? "";
  const query = new URLSearchParams({ ...params, token });
  const response = await fetch(`/api/${path}?${query}`, { headers: { "X-Framewise-Token": token } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `${response.status}`);
  return body;
}

/** Text into an element, never parsed as HTML. */
export function text(id, value) {
  document.getElementById(id).textContent = value;
}
