//! One file per verb. Each parses nothing itself (its `Args` is clap's), asks
//! framewise-analysis for every number, renders, and returns the exit code.

pub mod attribute;
pub mod bench;
pub mod bisect;
pub mod census;
pub mod check;
pub mod demo;
pub mod demo_settings;
pub mod diff;
pub mod doctor;
pub mod fix;
pub mod footprint;
pub mod gate;
pub mod golden;
pub mod history;
pub mod hitches;
pub mod hitches_append;
pub mod hook_status;
pub mod init;
pub mod inspect;
pub mod issues;
pub mod mcp;
pub mod report;
pub mod summarize;
pub mod trace;
pub mod view;
pub mod watch;

use framewise_analysis::gate::Verdict;
use framewise_analysis::model::Defect;
use framewise_analysis::{Side, SideDefect};

use crate::table::Table;

/// A verb's result before it is printed: what the CLI renders (the view is its
/// [`crate::output::Report`]) and what the MCP server returns, from one function per verb.
pub struct Outcome<V> {
    /// The result, ready to render or serialize.
    pub view: V,
    /// The exit code the CLI returns for it (docs/CLI.md's table).
    pub exit_code: u8,
}

/// The input a verb was given, or `name` in the `.framewise/` directory (`--dir`, else
/// `$FRAMEWISE_DIR`, else the nearest one up); an error when that file is not there yet,
/// saying `{path}: {missing}`.
pub fn input_or_dir_file(
    input: Option<&std::path::Path>,
    dir: &crate::ledger::DirArgs,
    name: &str,
    missing: &str,
) -> anyhow::Result<std::path::PathBuf> {
    if let Some(path) = input {
        return Ok(path.to_owned());
    }
    let path = dir.locate()?.join(name);
    if !path.exists() {
        anyhow::bail!("{}: {missing}", path.display());
    }
    Ok(path)
}

/// Exit codes by verdict (docs/CONCEPTS.md, "Exit codes"): the analysis crate owns the mapping.
pub fn exit(verdict: Verdict) -> u8 {
    u8::try_from(verdict.exit_code()).unwrap_or(crate::EXIT_ERROR)
}

/// A serde enum's name as it appears in the JSON (`truncated-tail`, `STEADY`, `sum`).
pub fn serde_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".to_owned(),
    }
}

/// One side's defects of a comparison's result.
fn side_defects(defects: &[SideDefect], side: Side) -> Vec<Defect> {
    defects
        .iter()
        .filter(|d| d.side == side)
        .map(|d| d.defect.clone())
        .collect()
}

/// A comparison's defects for people: the base's, then the candidate's, each under its own
/// title (nothing for a side without any).
pub fn side_defects_console(defects: &[SideDefect], out: &mut String) {
    defects_console(&side_defects(defects, Side::Base), "base defects", out);
    defects_console(&side_defects(defects, Side::Cand), "candidate defects", out);
}

/// A comparison's defects as markdown, as [`side_defects_console`] lists them.
pub fn side_defects_markdown(defects: &[SideDefect], out: &mut String) {
    defects_markdown(&side_defects(defects, Side::Base), "Base defects", out);
    defects_markdown(&side_defects(defects, Side::Cand), "Candidate defects", out);
}

/// The defects table, or nothing when there are none.
pub fn defects_console(defects: &[Defect], title: &str, out: &mut String) {
    if defects.is_empty() {
        return;
    }
    out.push_str(&format!("\n{title} ({})\n", defects.len()));
    for d in defects {
        out.push_str(&format!("  {}\n", crate::table::inline(&defect_line(d))));
    }
}

/// One defect for people: its kind (unless the message already opens with it), the
/// message, and the offset (unless the message already names it).
pub fn defect_line(d: &Defect) -> String {
    let kind = serde_name(&d.kind);
    let mut line = if d.message.starts_with(&kind.replace('-', " ")) {
        d.message.clone()
    } else {
        format!("{kind}: {}", d.message)
    };
    if let Some(offset) = d.offset {
        if !d.message.contains(&offset.to_string()) {
            line.push_str(&format!(" [offset {offset}]"));
        }
    }
    line
}

/// A pointer near the top of a report when the capture has defects: they are listed at
/// the end, which a reader of a long report may never reach.
pub fn defects_pointer(defects: &[Defect], out: &mut String) {
    if defects.is_empty() {
        return;
    }
    let mut kinds: Vec<String> = Vec::new();
    for d in defects {
        let k = serde_name(&d.kind);
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    out.push_str(&format!(
        "  {} {} ({}), listed at the end: the numbers cover only what was recorded and recovered\n",
        defects.len(),
        if defects.len() == 1 {
            "capture defect"
        } else {
            "capture defects"
        },
        kinds.join(", ")
    ));
}

/// The defects as markdown.
pub fn defects_markdown(defects: &[Defect], title: &str, out: &mut String) {
    if defects.is_empty() {
        return;
    }
    out.push_str(&format!("\n**{title} ({})**\n\n", defects.len()));
    let mut t =
        Table::new(&["kind", "message", "offset", "count"]).align(1, crate::table::Align::Left);
    for d in defects {
        t.row(vec![
            serde_name(&d.kind),
            d.message.clone(),
            d.offset
                .map_or_else(|| crate::table::NONE.to_owned(), |o| o.to_string()),
            d.count.to_string(),
        ]);
    }
    t.markdown(out);
}
