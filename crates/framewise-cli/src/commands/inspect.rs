//! `framewise inspect FILE`: a structural dump, framewise-analysis's [`Inspection`] (the
//! same model the web inspector reads). For an `.sgpt`: the header, how it was opened
//! (directory or scan), META, intact records by type, the frame entries, symbols,
//! topologies and every defect (each frame is decoded to find them). For a `.litecap` or
//! Chrome trace: what the importer made of it — names, counts, notes and defects.
//!
//! Exit: 0 inspected (defects are data, not failure); 4 when the file cannot be read as
//! any capture.

use std::path::PathBuf;

use framewise_analysis::inspect::{inspect_with, ImportedDetail, Inspection, SgptDetail};
use serde_json::Value;

use crate::commands::{defects_console, defects_markdown, serde_name};
use crate::input::{self, Bar, InputArgs, Need};
use crate::list::{self, ListArgs, Noun};
use crate::output::{self, OutputArgs, Report};
use crate::table::{Align, Table, NONE};

/// `framewise inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The capture: .sgpt, .litecap or Chrome trace JSON.
    pub file: PathBuf,
    #[command(flatten)]
    pub list: ListArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[&args.file])?;
    let mut bar = Bar::new(input::shown(&args.file));
    let inspected = inspect_with(&args.file, &args.input.options(Need::Frames), |p| {
        bar.update(p)
    });
    bar.finish();
    let mut inspection = inspected.map_err(|e| input::load_error(&args.file, &e))?;
    // The path as the user spelled it.
    inspection.file = input::shown(&args.file);
    output::emit(
        &args.output,
        &InspectView {
            inspection,
            list: args.list,
        },
    )?;
    Ok(0)
}

struct InspectView {
    inspection: Inspection,
    list: ListArgs,
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| NONE.to_owned(), |v| v.to_string())
}

/// A declared value, or "not declared" (an empty string or a missing value).
fn declared(v: Option<String>, unit: &str) -> String {
    match v {
        Some(t) if !t.is_empty() => format!("{t}{unit}"),
        _ => "not declared".to_owned(),
    }
}

struct Style {
    heading: &'static str,
    bullet: &'static str,
    markdown: bool,
    list: ListArgs,
}

impl Style {
    fn table(&self, t: &Table, out: &mut String) {
        if self.markdown {
            out.push('\n');
            t.markdown(out);
        } else {
            t.console(out, 2);
        }
    }

    /// A table, then what `--top` left out of it.
    fn cut_table(&self, t: &Table, hidden: usize, noun: Noun, out: &mut String) {
        self.table(t, out);
        if self.markdown {
            list::more_markdown(hidden, noun, out);
        } else {
            list::more_console(hidden, noun, 2, out);
        }
    }
}

impl InspectView {
    fn sgpt_head(s: &SgptDetail, st: &Style, out: &mut String) {
        let b = st.bullet;
        let hd = &s.header;
        out.push_str(&format!(
            "{b}header: format v{} · min reader v{} · flags 0x{:x}{} · directory at {} ({} bytes)\n",
            hd.format_version,
            hd.min_reader_version,
            hd.flags,
            if hd.closed { " (CLOSED)" } else { " (not closed)" },
            hd.directory_offset,
            hd.directory_byte_length,
        ));
        out.push_str(&format!("{b}opened by {}\n", serde_name(&s.opened_by)));
        match &s.meta {
            None => out.push_str(&format!("{b}meta: none intact\n")),
            Some(m) => {
                out.push_str(&format!(
                    "{b}meta: level {} · build {} · writer {} · session {}\n",
                    m.capture_level,
                    declared(Some(m.build_id.clone()), ""),
                    m.writer,
                    m.session_id,
                ));
                out.push_str(&format!(
                    "{b}cpu clock: {} · resolution {} · gpu queues with timestamps: {} · frame budget {}\n",
                    declared(Some(m.cpu_clock.source.clone()), ""),
                    declared(m.cpu_clock.resolution_ns.map(|r| r.to_string()), " ns"),
                    m.gpu_clocks.len(),
                    declared(m.frame_budget_ns.map(|n| n.to_string()), " ns"),
                ));
                if let Some(a) = &m.adapter {
                    out.push_str(&format!(
                        "{b}adapter: {} {} ({}, {}, driver {})\n",
                        a.vendor, a.device, a.adapter_type, a.backend, a.driver
                    ));
                }
            }
        }
        out.push_str(&format!("\n{}records (intact)\n", st.heading));
        let mut t = Table::new(&["type", "count", "bytes"]);
        for r in &s.records {
            t.row(vec![
                r.record_type.clone(),
                r.count.to_string(),
                r.bytes.to_string(),
            ]);
        }
        st.table(&t, out);
    }

    fn sgpt_tail(s: &SgptDetail, st: &Style, out: &mut String) {
        let h = st.heading;
        let kinds: Vec<String> = s
            .symbol_kinds
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        out.push_str(&format!("\n{h}symbols ({})", s.symbols.len()));
        if !kinds.is_empty() {
            out.push_str(&format!(": {}", kinds.join(", ")));
        }
        out.push('\n');
        if !s.symbols.is_empty() {
            let mut t = Table::new(&["id", "kind", "name", "detail"])
                .align(0, Align::Right)
                .align(1, Align::Left)
                .align(2, Align::Left)
                .align(3, Align::Left);
            let (shown, hidden) = st.list.take(&s.symbols);
            for sym in shown {
                let detail = match (&sym.file, sym.line, sym.counter_kind) {
                    (Some(file), Some(line), _) => format!("{file}:{line}"),
                    (Some(file), None, _) => file.clone(),
                    (_, _, Some(k)) => serde_name(&k),
                    _ => String::new(),
                };
                t.row(vec![
                    sym.id.to_string(),
                    sym.kind.clone(),
                    sym.name.clone(),
                    detail,
                ]);
            }
            st.cut_table(&t, hidden, Noun("symbol", "symbols"), out);
        }
        out.push_str(&format!("\n{h}topologies ({})\n", s.topologies.len()));
        if !s.topologies.is_empty() {
            let mut t = Table::new(&["id", "passes", "culled", "resources", "edges"]);
            let (shown, hidden) = st.list.take(&s.topologies);
            for tp in shown {
                t.row(vec![
                    tp.id.clone(),
                    tp.passes.to_string(),
                    tp.culled_passes.to_string(),
                    tp.resources.to_string(),
                    tp.edges.to_string(),
                ]);
            }
            st.cut_table(&t, hidden, Noun("topology", "topologies"), out);
        }
    }

    fn imported(d: &ImportedDetail, st: &Style, out: &mut String) {
        let (h, b) = (st.heading, st.bullet);
        for (names, title) in [
            (&d.threads, "threads"),
            (&d.phases, "phases"),
            (&d.marks, "marks"),
        ] {
            if !names.is_empty() {
                out.push_str(&format!("{b}{title}: {}\n", names.join(", ")));
            }
        }
        out.push_str(&format!("\n{h}scopes ({})\n", d.scopes.len()));
        if !d.scopes.is_empty() {
            let mut t = Table::new(&["scope", "site"]).align(1, Align::Left);
            let (shown, hidden) = st.list.take(&d.scopes);
            for sc in shown {
                t.row(vec![sc.name.clone(), opt(sc.site.as_deref())]);
            }
            st.cut_table(&t, hidden, Noun("scope", "scopes"), out);
        }
        if !d.passes.is_empty() {
            out.push_str(&format!("\n{h}GPU passes ({})\n", d.passes.len()));
            let mut t = Table::new(&["pass", "queue"]).align(1, Align::Left);
            let (shown, hidden) = st.list.take(&d.passes);
            for p in shown {
                t.row(vec![p.name.clone(), opt(p.queue.as_deref())]);
            }
            st.cut_table(&t, hidden, Noun("pass", "passes"), out);
        }
        out.push_str(&format!("\n{h}counters ({})\n", d.counters.len()));
        if !d.counters.is_empty() {
            let mut t = Table::new(&["counter", "kind", "values"])
                .align(1, Align::Left)
                .align(2, Align::Left);
            let (shown, hidden) = st.list.take(&d.counters);
            for c in shown {
                t.row(vec![
                    c.name.clone(),
                    serde_name(&c.kind),
                    serde_name(&c.numeric),
                ]);
            }
            st.cut_table(&t, hidden, Noun("counter", "counters"), out);
        }
        if !d.notes.is_empty() {
            out.push_str(&format!("\n{h}notes\n"));
            for n in &d.notes {
                out.push_str(&format!("{b}{n}\n"));
            }
        }
    }

    fn lines(&self, out: &mut String, markdown: bool) {
        let i = &self.inspection;
        let st = if markdown {
            Style {
                heading: "#### ",
                bullet: "- ",
                markdown,
                list: self.list,
            }
        } else {
            Style {
                heading: "",
                bullet: "  ",
                markdown,
                list: self.list,
            }
        };
        out.push_str(&format!(
            "{}{} ({}{}, {} bytes)\n",
            if markdown {
                "### framewise inspect: "
            } else {
                ""
            },
            i.file,
            serde_name(&i.kind),
            i.source_version
                .map_or_else(String::new, |v| format!(" v{v}")),
            i.bytes
        ));
        if let Some(s) = i.sgpt() {
            Self::sgpt_head(s, &st, out);
        }
        let f = &i.frames;
        out.push_str(&format!(
            "\n{}frames: {} (index {} to {}) · {} with a period · {} with GPU time · {} paused",
            st.heading,
            f.count,
            opt(f.first_index),
            opt(f.last_index),
            f.with_period,
            f.with_gpu,
            f.paused
        ));
        if let Some(n) = f.hitch_flagged {
            out.push_str(&format!(" · {n} flagged as hitches by the writer"));
        }
        out.push('\n');
        if let Some(s) = i.sgpt() {
            Self::sgpt_tail(s, &st, out);
        }
        if let Some(d) = i.imported() {
            Self::imported(d, &st, out);
        }
        if markdown {
            defects_markdown(&i.defects, "Defects", out);
        } else {
            defects_console(&i.defects, "defects", out);
        }
        if i.defects.is_empty() {
            out.push_str(&format!("\n{}defects (0)\n", st.heading));
        }
    }
}

impl Report for InspectView {
    fn json(&self) -> anyhow::Result<Value> {
        Ok(serde_json::to_value(&self.inspection)?)
    }

    fn console(&self, out: &mut String) {
        self.lines(out, false);
    }

    fn markdown(&self, out: &mut String) {
        self.lines(out, true);
    }
}
