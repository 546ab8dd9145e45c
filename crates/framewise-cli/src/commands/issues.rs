//! `framewise issues [--fp ID]`: the issues catalogue — `perf.jsonl`'s incidents folded by
//! footprint (count, first and last seen, builds, worst, last evidence, situation, fixes).
//!
//! Exit: 0 once the ledger was read (an empty catalogue included); 4 when there is no
//! `.framewise/`, a file cannot be read, `--from` is after `--to`, or `--fp` names no issue of
//! the ledger.

use anyhow::bail;
use framewise_incidents::fold::{
    Catalogue, CatalogueOptions, Issue, IssuesDoc, LedgerFiles, LedgerInfo, Occurrences,
};

use crate::commands::Outcome;
use crate::ledger::{self, ago, parse_instant, skipped_line, DirArgs};
use crate::list::{self, ListArgs, Noun};
use crate::output::{self, OutputArgs, Report};
use crate::table::{inline, Align, Table, NONE};

/// `framewise issues`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// One issue's history: its row and every occurrence (a footprint id, 8 hex digits).
    #[arg(long, value_name = "ID", value_parser = parse_footprint_id)]
    pub fp: Option<String>,
    #[command(flatten)]
    pub fold: FoldArgs,
    #[command(flatten)]
    pub dir: DirArgs,
    #[command(flatten)]
    pub list: ListArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What the catalogue folds: shared by `issues` and `report`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct FoldArgs {
    /// Keep the records of bench and CI runs (`automated`), left out by default.
    #[arg(long)]
    pub include_automated: bool,
    /// Count occurrences at or after this time (ISO 8601, or a date).
    #[arg(long, value_name = "ISO", value_parser = parse_instant)]
    pub from: Option<i64>,
    /// Count occurrences at or before this time (ISO 8601, or a date).
    #[arg(long, value_name = "ISO", value_parser = parse_instant)]
    pub to: Option<i64>,
    /// Also fold this `.sgpt` capture's incidents, derived as `hitches --append` derives
    /// them, where `perf.jsonl` does not hold them yet (nothing is written; repeatable).
    #[arg(long = "capture", value_name = "FILE")]
    pub captures: Vec<std::path::PathBuf>,
}

/// A footprint id as typed: 8 hex digits (read in lowercase).
pub fn parse_footprint_id(text: &str) -> Result<String, String> {
    let id = text.trim().to_ascii_lowercase();
    if id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(id)
    } else {
        Err(format!(
            "`{text}` is not a footprint id (8 hex digits, e.g. a3f92c1d)"
        ))
    }
}

/// The catalogue of the ledger in `dir`, as `fold` asks, with what was read.
pub fn fold(
    dir: &DirArgs,
    fold: &FoldArgs,
    occurrences: Occurrences,
) -> anyhow::Result<(Catalogue, LedgerInfo)> {
    ledger::check_range(fold.from, fold.to)?;
    let dir = dir.locate()?;
    let options = CatalogueOptions {
        include_automated: fold.include_automated,
        from_ms: fold.from,
        to_ms: fold.to,
        now_ms: ledger::now_ms(),
        occurrences,
    };
    let mut files = LedgerFiles::read(&dir)?;
    for capture in &fold.captures {
        let added = crate::commands::hitches_append::fold_into(capture, &mut files.records)?;
        say!(
            "framewise: folded {} derived from {} that {} does not hold",
            crate::list::Noun("record", "records")
                .count(usize::try_from(added).unwrap_or(usize::MAX)),
            capture.display(),
            dir.join(framewise_incidents::PERF_FILE).display()
        );
    }
    let doc = files.issues(&options);
    Ok((doc.catalogue, doc.ledger))
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let inputs: Vec<&std::path::Path> = args.fold.captures.iter().map(|p| p.as_path()).collect();
    args.output.check_inputs(&inputs)?;
    let outcome = evaluate(&args)?;
    output::emit(&args.output, &outcome.view)?;
    Ok(outcome.exit_code)
}

/// The verb's result without printing it (`framewise issues` and the MCP server's
/// `list_issues` both call this): exit 0.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<IssuesView>> {
    let occurrences = if args.fp.is_some() {
        Occurrences::All
    } else {
        Occurrences::None
    };
    let (mut catalogue, ledger) = fold(&args.dir, &args.fold, occurrences)?;
    if let Some(id) = &args.fp {
        catalogue.issues.retain(|i| &i.id == id);
        if catalogue.issues.is_empty() {
            bail!(
                "no incident with footprint {id} in {} ({} incidents folded{})",
                ledger.dir,
                catalogue.incidents,
                if catalogue.automated_left_out > 0 && !args.fold.include_automated {
                    "; automated records were left out: --include-automated"
                } else {
                    ""
                }
            );
        }
    }
    Ok(Outcome {
        view: IssuesView {
            doc: IssuesDoc {
                catalogue,
                ledger,
                total_issues: None,
            },
            list: args.list,
            one: args.fp.is_some(),
            title: "issues",
            ranged: args.fold.from.is_some() || args.fold.to.is_some(),
        },
        exit_code: 0,
    })
}

/// `issues` and `report` for people.
pub struct IssuesView {
    /// The document.
    pub doc: IssuesDoc,
    /// `--top`/`--all`.
    pub list: ListArgs,
    /// `--fp`: one issue, with its occurrences.
    pub one: bool,
    /// The verb's name.
    pub title: &'static str,
    /// Whether `--from`/`--to` bounded the fold: an empty catalogue then says so.
    pub ranged: bool,
}

const ISSUES: Noun = Noun("issue", "issues");

fn worst(issue: &Issue) -> String {
    issue.worst.as_ref().map_or_else(
        || NONE.to_owned(),
        |w| match w.unit.as_str() {
            "ms" => format!("{:.1} ms", w.value),
            unit => format!("{:.3} {unit}", w.value),
        },
    )
}

fn situation(issue: &Issue) -> String {
    issue
        .situation
        .iter()
        .map(|[k, v]| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn builds(issue: &Issue) -> String {
    if issue.builds.is_empty() {
        NONE.to_owned()
    } else {
        list::some_names(&issue.builds, 3)
    }
}

impl IssuesView {
    fn headline(&self) -> String {
        let c = &self.doc.catalogue;
        let total = self.doc.total_issues.unwrap_or(c.issues.len() as u64);
        let mut line = format!(
            "{}: {} from {} {}",
            inline(&self.doc.ledger.dir),
            ISSUES.count(usize::try_from(total).unwrap_or(usize::MAX)),
            c.incidents,
            if c.incidents == 1 {
                "incident"
            } else {
                "incidents"
            }
        );
        if c.automated_left_out > 0 {
            line.push_str(&format!(
                " ({} automated left out: --include-automated)",
                c.automated_left_out
            ));
        }
        line
    }

    fn table(&self, issues: &[Issue]) -> Table {
        let mut t = Table::new(&[
            "fp",
            "count",
            "last",
            "worst",
            "builds",
            "issue",
            "situation",
        ])
        .align(0, Align::Left)
        .align(4, Align::Left)
        .align(5, Align::Left)
        .align(6, Align::Left);
        for i in issues {
            t.row(vec![
                i.id.clone(),
                format!("×{}", i.count),
                ago(i.last_ago_ms),
                worst(i),
                builds(i),
                format!("{} {}", i.glyph, i.label),
                situation(i),
            ]);
        }
        t
    }

    fn details(issue: &Issue, bullet: &str, out: &mut String) {
        if let Some(g) = &issue.last_guess {
            out.push_str(&format!(
                "{bullet}last evidence: {} ({}): {}\n",
                inline(&g.guess),
                crate::commands::serde_name(&g.confidence),
                inline(&g.evidence)
            ));
        }
        if issue.fixes.is_empty() {
            out.push_str(&format!(
                "{bullet}fixes: none recorded (framewise fix --footprints {} --title \"…\")\n",
                inline(&issue.id)
            ));
        }
        for f in &issue.fixes {
            let mut line = format!("{bullet}fix {}: {}", inline(&f.at), inline(&f.title));
            if let Some(c) = &f.commit {
                line.push_str(&format!(" ({})", inline(c)));
            }
            if let Some([b, a]) = f.p95_ms {
                line.push_str(&format!(" · p95 {b:.2} → {a:.2} ms"));
            }
            if let Some([b, a]) = f.hitches_per_hour {
                line.push_str(&format!(" · hitches/h {b} → {a}"));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }

    fn occurrences(issue: &Issue) -> Table {
        let mut t = Table::new(&["at", "build", "session", "frame", "value", "guess"])
            .align(0, Align::Left)
            .align(1, Align::Left)
            .align(2, Align::Left)
            .align(5, Align::Left);
        for o in &issue.occurrences {
            t.row(vec![
                o.at.clone(),
                o.build.clone().unwrap_or_else(|| NONE.to_owned()),
                o.session
                    .as_deref()
                    .map_or_else(|| NONE.to_owned(), |s| s.chars().take(8).collect()),
                o.frame.to_string(),
                o.value.map_or_else(|| NONE.to_owned(), |v| format!("{v}")),
                o.guess.clone().unwrap_or_else(|| NONE.to_owned()),
            ]);
        }
        t
    }
}

impl Report for IssuesView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.doc)?)
    }

    fn console(&self, out: &mut String) {
        out.push_str(&self.headline());
        out.push('\n');
        if let Some(line) = skipped_line(&self.doc.ledger) {
            out.push_str(&format!("  {line}\n"));
        }
        let issues = &self.doc.catalogue.issues;
        if issues.is_empty() {
            if self.ranged && self.doc.ledger.records > 0 {
                out.push_str("\nno incidents recorded in the --from/--to range\n");
                return;
            }
            out.push_str("\nno incidents recorded");
            out.push_str(if self.doc.ledger.records == 0 {
                " yet: run the game with a recording session, or `framewise hitches CAPTURE --append`\n"
            } else {
                "\n"
            });
            return;
        }
        if let [issue] = issues.as_slice() {
            if self.one {
                out.push_str(&format!(
                    "\n{} {} · {}\n  key: {}\n  ×{} · first {} · last {} ({}) · worst {} · builds {}\n",
                    issue.glyph,
                    inline(&issue.label),
                    inline(&issue.id),
                    inline(&issue.key),
                    issue.count,
                    issue.first,
                    issue.last,
                    ago(issue.last_ago_ms),
                    inline(&worst(issue)),
                    inline(&builds(issue)),
                ));
                if !issue.situation.is_empty() {
                    out.push_str(&format!("  situation: {}\n", inline(&situation(issue))));
                }
                Self::details(issue, "  ", out);
                out.push_str(&format!("\noccurrences ({})\n", issue.occurrences.len()));
                Self::occurrences(issue).console(out, 2);
                return;
            }
        }
        out.push('\n');
        let (shown, hidden) = self.list.take(issues);
        self.table(shown).console(out, 2);
        list::more_console(hidden, ISSUES, 2, out);
        for issue in shown
            .iter()
            .take(if self.title == "report" { 5 } else { 3 })
        {
            out.push_str(&format!(
                "\n{} {} ×{}\n",
                inline(&issue.id),
                inline(&issue.label),
                issue.count
            ));
            Self::details(issue, "  ", out);
        }
        if let Some(first) = shown.first() {
            out.push_str(&format!(
                "\nnext: framewise issues --fp {}   (one issue's history)\n",
                inline(&first.id)
            ));
        }
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!(
            "### framewise {}: {}\n\n",
            self.title,
            self.headline()
        ));
        let issues = &self.doc.catalogue.issues;
        if issues.is_empty() {
            out.push_str("No incidents recorded.\n");
            return;
        }
        let (shown, hidden) = self.list.take(issues);
        self.table(shown).markdown(out);
        list::more_markdown(hidden, ISSUES, out);
        for issue in shown {
            out.push_str(&format!(
                "\n**{} {}** (`{}`)\n\n",
                issue.glyph,
                inline(&issue.label),
                inline(&issue.key)
            ));
            Self::details(issue, "- ", out);
            if self.one && !issue.occurrences.is_empty() {
                out.push('\n');
                Self::occurrences(issue).markdown(out);
            }
        }
    }
}
