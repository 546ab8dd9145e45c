// The selected frame's topology: its passes (kind, culled) in recorded order, what each
// reads and writes, and the resources. Without a topology it says why (the server's reason).

import { DASH, fill, fmtCount, h, table } from "./api.js";

/** Renders /api/structure into `root`. */
export function renderStructure(root, structure) {
  const title = h("h2", {}, "Structure ", h("span", { class: "muted" }, `row ${structure.row}`));
  const topology = structure.topology;
  if (!topology) {
    fill(root, title, h("p", { class: "muted", id: "structure-reason" }, `No topology: ${structure.reason ?? "none recorded"}.`));
    root.dataset.passes = "0";
    return;
  }
  const reads = topology.passes.map(() => []);
  const writes = topology.passes.map(() => []);
  for (const edge of topology.edges) {
    const resource = topology.resources[edge.resource];
    if (!resource || !reads[edge.pass]) continue;
    const label = edge.version ? `${resource.label} v${edge.version}` : resource.label;
    if (edge.access !== "write") reads[edge.pass].push(label);
    if (edge.access !== "read") writes[edge.pass].push(label);
  }
  const passRows = topology.passes.map((pass, position) =>
    h(
      "tr",
      { class: pass.culled ? "culled" : null, dataset: { pass: pass.label } },
      h("td", { class: "num" }, String(position)),
      h("td", { class: "name", title: pass.scope ? `recorded by scope ${pass.scope}` : null }, pass.label),
      h("td", {}, h("span", { class: `kind kind-${pass.kind}` }, pass.kind)),
      h("td", {}, pass.culled ? "culled" : ""),
      h("td", { class: "edges" }, reads[position].join(", ") || DASH),
      h("td", { class: "edges" }, writes[position].join(", ") || DASH),
    ),
  );
  const resourceRows = topology.resources.map((resource) =>
    h(
      "tr",
      {},
      h("td", { class: "name" }, resource.label),
      h("td", {}, resource.kind),
      h("td", {}, resource.format ?? DASH),
      h("td", { class: "num" }, resource.bytes === undefined || resource.bytes === null ? DASH : fmtCount(resource.bytes)),
      h("td", {}, resource.transient ? "transient" : "persistent"),
    ),
  );
  const culled = topology.passes.filter((pass) => pass.culled).length;
  fill(
    root,
    title,
    h(
      "p",
      { class: "muted small" },
      `topology ${topology.id} · ${topology.passes.length} passes (${culled} culled) · ` +
        `${topology.resources.length} resources · ${topology.edges.length} edges`,
    ),
    table(["#", "pass", "kind", "", "reads", "writes"], passRows, { id: "pass-structure", class: "data" }, { numeric: [0] }),
    h("h3", {}, "Resources"),
    table(["resource", "kind", "format", "bytes", ""], resourceRows, { id: "resource-structure", class: "data" }, { numeric: [3] }),
  );
  root.dataset.passes = String(topology.passes.length);
}
