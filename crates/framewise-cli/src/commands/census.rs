//! `framewise census [INPUT]`: the scene census a game recorded — the latest census's
//! totals, its heaviest entries, the meshes and materials shared, the lights — and the hints
//! read off the censuses (framewise-analysis's `census`, framewise-census's rules).
//!
//! INPUT is a capture (`.sgpt`: its `CENS` records) or a census document
//! (`.framewise/census.json`, or one census); without it, `census.json` in the `.framewise/`
//! directory (`--dir`, else `FRAMEWISE_DIR`, else the nearest one up).
//!
//! Exit: 0 printed (hints are leads, not failures); 2 the input holds no census (a capture
//! recorded without one); 4 unreadable input, neither a capture nor a census document.

use std::path::{Path, PathBuf};

use framewise_analysis::census::{read_censuses, CensusError, CensusSource};
use framewise_analysis::model::Defect;
use framewise_census::{AssetCounts, Census, Hint, LightKind, CENSUS_FILE};
use serde::Serialize;
use serde_json::Value;

use crate::commands::{defects_console, defects_markdown, input_or_dir_file, serde_name, Outcome};
use crate::input;
use crate::ledger::DirArgs;
use crate::list::{self, ListArgs, Noun};
use crate::output::{self, Annotation, OutputArgs, Report};
use crate::table::{inline, Align, Table, NONE};

/// `framewise census`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A capture (.sgpt) or a census document (census.json) [default: census.json in the
    /// .framewise/ directory].
    pub input: Option<PathBuf>,
    #[command(flatten)]
    pub dir: DirArgs,
    #[command(flatten)]
    pub list: ListArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The document `framewise census --format json` prints (docs/cli/census.md,
/// `framewise.census-report/1`).
#[derive(Clone, Debug, Serialize)]
pub struct CensusView {
    schema: &'static str,
    /// The input, as given.
    pub input: String,
    /// `capture` or `census-file`.
    pub source: CensusSource,
    /// How many censuses the input holds.
    pub censuses: usize,
    /// The latest census, whole; `null` when there is none.
    pub census: Option<Census>,
    /// Every census, oldest first: when, and the figures that move.
    pub history: Vec<HistoryPoint>,
    /// The hints.
    pub hints: Vec<Hint>,
    /// What the capture lost (a census record that did not read among it).
    pub defects: Vec<Defect>,
    #[serde(skip)]
    list: ListArgs,
}

/// One census of the series, in brief.
#[derive(Clone, Debug, Serialize)]
pub struct HistoryPoint {
    /// The frame it was taken at, when known.
    pub frame: Option<u64>,
    /// Entities.
    pub entities: u64,
    /// Triangles.
    pub triangles: u64,
    /// Loaded asset counts.
    pub assets: AssetCounts,
}

/// The input `args` name, or the default `census.json`.
fn input_path(args: &Args) -> anyhow::Result<PathBuf> {
    input_or_dir_file(
        args.input.as_deref(),
        &args.dir,
        CENSUS_FILE,
        "no census yet (a game writes it when it records a census with the incident log on; or name a capture)",
    )
}

/// Reads the input and builds the view: what the CLI prints and the MCP tool returns.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<CensusView>> {
    let path = input_path(args)?;
    let read = read_censuses(&path).map_err(|e| match e {
        CensusError::Load(load) => input::load_error(&path, &load),
        other => anyhow::anyhow!("{other}"),
    })?;
    let history = read
        .censuses
        .iter()
        .map(|c| HistoryPoint {
            frame: c.frame,
            entities: c.totals.entities,
            triangles: c.totals.triangles,
            assets: c.assets,
        })
        .collect();
    let exit_code = if read.censuses.is_empty() { 2 } else { 0 };
    Ok(Outcome {
        view: CensusView {
            schema: "framewise.census-report/1",
            input: input::shown(&path),
            source: read.source,
            censuses: read.censuses.len(),
            census: read.censuses.last().cloned(),
            history,
            hints: read.hints,
            defects: read.defects,
            list: args.list,
        },
        exit_code,
    })
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let inputs: Vec<&Path> = args.input.iter().map(PathBuf::as_path).collect();
    args.output.check_inputs(&inputs)?;
    let outcome = evaluate(&args)?;
    output::emit(&args.output, &outcome.view)?;
    Ok(outcome.exit_code)
}

/// `1,234,567`.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn opt_count(n: Option<u64>) -> String {
    n.map_or_else(|| NONE.to_owned(), count)
}

fn bytes(n: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if n >= 1024 * 1024 {
        format!("{:.1} MiB", n as f64 / MIB)
    } else {
        format!("{} B", count(n))
    }
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

/// A hint's evidence as `name=value` pairs (its JSON fields, in order).
fn evidence_text(hint: &Hint) -> String {
    let Ok(Value::Object(fields)) = serde_json::to_value(&hint.evidence) else {
        return String::new();
    };
    fields
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                Value::Null => "unknown".to_owned(),
                other => other.to_string(),
            };
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

const ENTRIES: Noun = Noun("entry", "entries");
const GROUPS: Noun = Noun("group", "groups");
const LIGHTS: Noun = Noun("light", "lights");
const MESHES: Noun = Noun("mesh", "meshes");
const MATERIALS: Noun = Noun("material", "materials");
const TEXTURES: Noun = Noun("texture", "textures");
const HINTS: Noun = Noun("hint", "hints");

impl CensusView {
    fn headline(&self) -> String {
        let source = serde_name(&self.source);
        match &self.census {
            None => format!(
                "{} ({source}): no census recorded (a game records one with Session::record_census)",
                inline(&self.input)
            ),
            Some(c) => format!(
                "census of {} ({source}, {} {}; the latest at frame {}, engine {})",
                inline(&self.input),
                self.censuses,
                Noun("census", "censuses").of(self.censuses),
                c.frame.map_or_else(|| NONE.to_owned(), |f| f.to_string()),
                inline(&c.engine)
            ),
        }
    }

    fn totals_lines(c: &Census) -> Vec<String> {
        let t = &c.totals;
        vec![
            format!(
                "{} entities ({} visible) · {} mesh instances · {} triangles",
                count(t.entities),
                opt_count(t.visible_entities),
                count(t.mesh_instances),
                count(t.triangles)
            ),
            format!(
                "{} unique meshes · {} unique materials · {} shared mesh + material {} · {} shadow casters",
                count(t.unique_meshes),
                count(t.unique_materials),
                count(t.shared_groups),
                GROUPS.of(t.shared_groups as usize),
                count(t.shadow_casters)
            ),
            format!(
                "{} {} ({} casting shadows) · textures {} exact + {} estimated · draw calls {NONE} (a rendered frame measures them)",
                count(t.lights),
                LIGHTS.of(t.lights as usize),
                count(t.shadow_casting_lights),
                bytes(t.texture_bytes),
                bytes(t.texture_bytes_estimate)
            ),
            format!(
                "loaded: {} {} · {} {} · {} {}",
                count(c.assets.meshes),
                MESHES.of(c.assets.meshes as usize),
                count(c.assets.materials),
                MATERIALS.of(c.assets.materials as usize),
                count(c.assets.textures),
                TEXTURES.of(c.assets.textures as usize)
            ),
        ]
    }

    fn entries_table(&self, c: &Census) -> (Table, usize) {
        let sorted = c.entries_by_triangles();
        let (shown, hidden) = self.list.cut(sorted.len());
        let mut t = Table::new(&[
            "entry",
            "entities",
            "visible",
            "triangles",
            "meshes",
            "materials",
            "shadow",
            "site",
        ])
        .align(7, Align::Left);
        for e in &sorted[..shown] {
            t.row(vec![
                e.name.clone(),
                count(e.entities),
                opt_count(e.visible_entities),
                count(e.triangles),
                count(e.unique_meshes),
                count(e.unique_materials),
                count(e.shadow_casters),
                e.site.clone().unwrap_or_else(|| NONE.to_owned()),
            ]);
        }
        (t, hidden)
    }

    fn groups_table(&self, c: &Census) -> (Table, usize) {
        let (shown, hidden) = self.list.take(&c.shared_groups);
        let mut t = Table::new(&[
            "mesh",
            "material",
            "instances",
            "entries",
            "batched",
            "sites",
        ])
        .align(1, Align::Left)
        .align(4, Align::Left)
        .align(5, Align::Left);
        for g in shown {
            t.row(vec![
                g.mesh.clone(),
                g.material.clone(),
                count(g.instances),
                count(g.entries.len() as u64),
                yes_no(g.batched).to_owned(),
                if g.sites.is_empty() {
                    NONE.to_owned()
                } else {
                    g.sites.join(", ")
                },
            ]);
        }
        (t, hidden)
    }

    fn lights_table(&self, c: &Census) -> (Table, usize) {
        let (shown, hidden) = self.list.take(&c.lights);
        let mut t = Table::new(&["light", "kind", "shadows", "shadow map", "site"])
            .align(1, Align::Left)
            .align(2, Align::Left)
            .align(4, Align::Left);
        for l in shown {
            t.row(vec![
                l.name.clone(),
                match l.kind {
                    LightKind::Point => "point",
                    LightKind::Spot => "spot",
                    LightKind::Directional => "directional",
                    LightKind::Other => "other",
                }
                .to_owned(),
                if l.shadows { "yes" } else { "no" }.to_owned(),
                l.shadow_map_px
                    .map_or_else(|| NONE.to_owned(), |px| format!("{px} px")),
                l.site.clone().unwrap_or_else(|| NONE.to_owned()),
            ]);
        }
        (t, hidden)
    }
}

impl Report for CensusView {
    fn json(&self) -> anyhow::Result<Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn console(&self, out: &mut String) {
        out.push_str(&self.headline());
        out.push('\n');
        if let Some(c) = &self.census {
            for line in Self::totals_lines(c) {
                out.push_str(&format!("  {line}\n"));
            }
            let sections = [
                (
                    "entries, most triangles first",
                    self.entries_table(c),
                    ENTRIES,
                ),
                ("meshes and materials shared", self.groups_table(c), GROUPS),
                ("lights", self.lights_table(c), LIGHTS),
            ];
            for (title, (table, hidden), noun) in sections {
                if table.is_empty() {
                    continue;
                }
                out.push_str(&format!("\n  {title}:\n"));
                table.console(out, 4);
                list::more_console(hidden, noun, 4, out);
            }
            let (hints, hidden) = self.list.take(&self.hints);
            if hints.is_empty() {
                out.push_str("\n  no hints\n");
            } else {
                out.push_str(&format!("\n  {}:\n", HINTS.count(self.hints.len())));
            }
            for h in hints {
                out.push_str(&format!("    {} — {}\n", h.kind.name(), inline(&h.subject)));
                out.push_str(&format!("      evidence: {}\n", inline(&evidence_text(h))));
                out.push_str(&format!("      fix: {}\n", inline(&h.fix)));
                out.push_str(&format!("      site: {}\n", inline(&h.site)));
            }
            list::more_console(hidden, HINTS, 4, out);
        }
        defects_console(&self.defects, "defects", out);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!("**{}**\n\n", self.headline()));
        if let Some(c) = &self.census {
            for line in Self::totals_lines(c) {
                out.push_str(&format!("- {line}\n"));
            }
            let sections = [
                (
                    "Entries, most triangles first",
                    self.entries_table(c),
                    ENTRIES,
                ),
                ("Meshes and materials shared", self.groups_table(c), GROUPS),
                ("Lights", self.lights_table(c), LIGHTS),
            ];
            for (title, (table, hidden), noun) in sections {
                if table.is_empty() {
                    continue;
                }
                out.push_str(&format!("\n### {title}\n\n"));
                table.markdown(out);
                list::more_markdown(hidden, noun, out);
            }
            out.push_str("\n### Hints\n\n");
            let (hints, hidden) = self.list.take(&self.hints);
            if hints.is_empty() {
                out.push_str("No hints.\n");
            }
            for h in hints {
                out.push_str(&format!(
                    "- **{}** — {}: {} (evidence: {}; site: `{}`)\n",
                    h.kind.name(),
                    inline(&h.subject),
                    inline(&h.fix),
                    inline(&evidence_text(h)),
                    inline(&h.site)
                ));
            }
            list::more_markdown(hidden, HINTS, out);
        }
        defects_markdown(&self.defects, "Defects", out);
    }

    fn annotations(&self) -> Vec<Annotation> {
        self.hints
            .iter()
            .map(|h| Annotation {
                level: "warning",
                title: format!("{}: {}", h.kind.name(), h.subject),
                message: format!("{} (site: {})", h.fix, h.site),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(203_660), "203,660");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(6 * 1024 * 1024), "6.0 MiB");
    }
}
