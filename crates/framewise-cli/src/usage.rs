//! Usage errors on one line: clap's message, then the usage of the verb it concerns, and for
//! a verb that does not exist, the verb that does what its name asks for.

use crate::Cli;

/// Clap's error, folded onto one line: the message, then the usage in parentheses. Clap
/// renders no usage for a value its parser refused (`--top 0`); the usage then comes from
/// the verb named in `argv`, so every usage error carries it.
pub fn usage_line(err: &clap::Error, argv: &[std::ffi::OsString]) -> String {
    let text = err.render().to_string();
    let verb_usage;
    let (message, usage) = match text.split_once("Usage:") {
        Some((m, u)) => (m, u.lines().next().unwrap_or("").trim()),
        None => {
            verb_usage = verb_usage_line(argv);
            (text.as_str(), verb_usage.as_str())
        }
    };
    let message = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut message = message
        .strip_prefix("error: ")
        .unwrap_or(&message)
        .to_owned();
    if let Some(hint) = unknown_verb_hint(err) {
        // Clap's own tip goes by spelling alone (`export` → `report`): the verb that does
        // what the word means replaces it.
        if let Some((before, _tip)) = message.split_once(" tip: ") {
            message = before.trim_end().to_owned();
        }
        message.push_str(&format!(" {hint}"));
    }
    if usage.is_empty() {
        message
    } else {
        format!("{message} (usage: {usage})")
    }
}

/// The usage line of the verb `argv` names (its first word after the program), or of
/// `framewise` itself when it names none.
fn verb_usage_line(argv: &[std::ffi::OsString]) -> String {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    cli.build();
    let verb = argv.get(1).and_then(|v| v.to_str());
    let usage = match verb.and_then(|v| cli.find_subcommand_mut(v)) {
        Some(sub) => sub.render_usage(),
        None => cli.render_usage(),
    };
    let usage = usage.to_string();
    usage
        .split_once("Usage:")
        .map_or(usage.as_str(), |(_, u)| u)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_owned()
}

/// Words a user may type for a verb, and the verb that does it.
const SYNONYMS: &[(&[&str], &str)] = &[
    (&["export", "chrome", "perfetto", "convert"], "trace"),
    (&["compare", "cmp"], "diff"),
    (&["regress", "regression", "verify"], "gate"),
    (&["stats", "summary", "summarise", "stat"], "summarize"),
    (&["open", "serve", "ui", "inspector", "browse"], "view"),
    (&["spikes", "stutter", "stutters", "jank"], "hitches"),
    (&["blame", "explain"], "attribute"),
    (&["benchmark", "measure"], "bench"),
    (&["budget", "budgets"], "check"),
    (&["dump"], "inspect"),
    (&["tail", "follow"], "watch"),
    (&["setup", "scaffold"], "init"),
];

/// Words for what framewise keeps in a file rather than serves by a verb, and where it is.
const FILES: &[(&str, &str)] = &[
    (
        "ledger",
        "the bench ledger is .framewise/bench-history.jsonl, one JSON line per `framewise bench --compare`: read it with any JSON-lines reader (or the MCP tool get_ledger)",
    ),
];

/// For an unknown verb that means one of ours: `tip: the verb for that is 'trace': export …`.
fn unknown_verb_hint(err: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use clap::CommandFactory;
    if err.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    let Some(ContextValue::String(word)) = err.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    let word = word.to_ascii_lowercase();
    if let Some(&(_, hint)) = FILES.iter().find(|(w, _)| *w == word) {
        return Some(format!("tip: {hint}"));
    }
    let verb = SYNONYMS
        .iter()
        .find(|(words, _)| words.contains(&word.as_str()))
        .map(|&(_, verb)| verb)?;
    let cli = Cli::command();
    let about = cli
        .find_subcommand(verb)
        .and_then(|sub| sub.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    let about = about.trim_end_matches('.');
    let mut chars = about.chars();
    let about: String = chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default();
    Some(format!("tip: the verb for that is '{verb}': {about}"))
}
