// Tables that sort by any column and filter by name, as a profiler's tables do: a click on a
// header sorts by it (again: the other way), the box above filters rows whose name holds the
// text (case-insensitive). Nulls ("—") always sort last, whichever the direction. Names sort
// naturally (counter_2 before counter_10). The sort and filter of a table are kept by its id,
// so that a table redrawn for another range keeps them.

import { DASH, h } from "./api.js";

/** Sort and filter per table id: `{ column, descending, filter }`. */
const kept = new Map();

const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });

/** Compares two sort keys (numbers or strings), nulls last regardless of `descending`. */
export function compareKeys(a, b, descending) {
  const missing = (v) => v === null || v === undefined || (typeof v === "number" && Number.isNaN(v));
  if (missing(a) || missing(b)) return missing(a) === missing(b) ? 0 : missing(a) ? 1 : -1;
  const order = typeof a === "number" && typeof b === "number" ? a - b : collator.compare(String(a), String(b));
  return descending ? -order : order;
}

/**
 * A sortable, filterable table. `columns`: `{ label, numeric, key(item), cell(item) }` (the
 * key is what sorts: a number, a string or null); `items`: the rows' data; `row(item,
 * cells)`: the `tr` for an item given its cells; `name(item)`: what the filter matches;
 * `initial`: `{ column, descending }` before the user sorts. Returns the section (filter box
 * and table); the table carries `data-sort` ("column:asc|desc") and `data-shown` for tests.
 */
export function dataTable({ id, title, columns, items, row, name, initial, attrs = {} }) {
  const state = kept.get(id) ?? { column: initial?.column ?? 0, descending: initial?.descending ?? false, filter: "" };
  kept.set(id, state);
  const body = h("tbody", {});
  const count = h("span", { class: "muted small", id: `${id}-count` });
  const heads = columns.map((column, i) =>
    h(
      "th",
      { class: column.numeric ? "num" : null, scope: "col" },
      h(
        "button",
        {
          type: "button",
          class: "sort",
          title: `sort by ${column.label || "name"}`,
          onclick: () => {
            state.descending = state.column === i ? !state.descending : Boolean(column.numeric);
            state.column = i;
            render();
          },
        },
        column.label,
      ),
    ),
  );
  const table = h("table", { ...attrs, id, class: "data sortable" }, h("thead", {}, h("tr", {}, heads)), body);
  const filter = h("input", {
    type: "search",
    id: `${id}-filter`,
    class: "filter",
    placeholder: "filter by name",
    "aria-label": `filter ${title ?? id} by name`,
    value: state.filter,
    oninput: (event) => {
      state.filter = event.target.value;
      render();
    },
  });

  function render() {
    const needle = state.filter.trim().toLowerCase();
    const shown = items.filter((item) => !needle || name(item).toLowerCase().includes(needle));
    const column = columns[state.column] ?? columns[0];
    // Ties keep a stable, natural name order.
    shown.sort((a, b) => compareKeys(column.key(a), column.key(b), state.descending) || collator.compare(name(a), name(b)));
    body.replaceChildren(...shown.map((item) => row(item, columns.map((c) => c.cell(item)))));
    heads.forEach((th, i) => {
      if (i === state.column) th.setAttribute("aria-sort", state.descending ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
    table.dataset.sort = `${state.column}:${state.descending ? "desc" : "asc"}`;
    table.dataset.shown = String(shown.length);
    count.textContent = needle ? `${shown.length} of ${items.length}` : `${items.length}`;
  }
  render();
  return h(
    "section",
    { class: "table-block" },
    h("div", { class: "table-head" }, title ? h("h3", {}, title) : null, h("span", { class: "spacer" }), count, filter),
    table,
  );
}

/** A cell's sort key for a value that may be null. */
export const keyOf = (value) => (value === null || value === undefined || value === DASH ? null : value);
