import { get, text } from "./api.js";
import { drawStrip } from "./strip.js";
import { describeFrame } from "./timeline.js";
import { describeStats } from "./stats.js";
import { describeStructure } from "./structure.js";
import { describeCompare } from "./compare.js";

async function main() {
  const capture = await get("capture");
  text("capture", `${capture.file}: ${capture.frame_count} frames`);
  if (capture.recovered) {
    const banner = document.getElementById("banner");
    banner.hidden = false;
    banner.textContent = "recovered: " + capture.defects.map((d) => d.message).join("; ");
  }
  drawStrip(document.getElementById("strip"), await get("strip"));
  text("stats", describeStats(await get("stats")));
  if (capture.frame_count > 0) {
    text("frame", describeFrame(await get("frame", { row: 0 })));
    text("structure", describeStructure(await get("structure", { row: 0 })));
    text("compare", describeCompare(await get("compare", { a: 0, b: capture.frame_count - 1 })));
  }
}

main().catch((e) => text("capture", `error: ${e.message}`));
