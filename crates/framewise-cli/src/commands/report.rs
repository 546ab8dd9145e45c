//! `framewise report`: the top five issues of the catalogue, each with its last evidence
//! and the fixes recorded against it — what to look at first.
//!
//! Exit: 0 once the ledger was read; 4 when there is no `.framewise/`, a file cannot be
//! read, or `--from` is after `--to`.

use framewise_incidents::fold::Occurrences;

use framewise_incidents::fold::IssuesDoc;

use crate::commands::issues::{self, FoldArgs, IssuesView};
use crate::ledger::DirArgs;
use crate::list::ListArgs;
use crate::output::{self, OutputArgs};

/// How many issues the report lists.
pub const TOP: usize = 5;

/// `framewise report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub fold: FoldArgs,
    #[command(flatten)]
    pub dir: DirArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let inputs: Vec<&std::path::Path> = args.fold.captures.iter().map(|p| p.as_path()).collect();
    args.output.check_inputs(&inputs)?;
    let (mut catalogue, ledger) = issues::fold(&args.dir, &args.fold, Occurrences::None)?;
    let total = catalogue.issues.len() as u64;
    catalogue.issues.truncate(TOP);
    let view = IssuesView {
        doc: IssuesDoc {
            catalogue,
            ledger,
            total_issues: Some(total),
        },
        list: ListArgs {
            top: TOP,
            all: false,
        },
        one: false,
        title: "report",
        ranged: args.fold.from.is_some() || args.fold.to.is_some(),
    };
    output::emit(&args.output, &view)?;
    Ok(0)
}
