//! Long lists for people: `--top N` and `--all`, and the `… N more` line that says what was
//! left out and how to see it. Only the console and markdown renderings are cut; JSON
//! always carries every row.

use std::fmt::Write as _;

/// How many rows of a long list the console and markdown show.
pub const DEFAULT_TOP: usize = 15;

/// `--top N` and `--all`, flattened into every verb whose lists can be long.
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct ListArgs {
    /// Console and markdown: show at most N rows of each long list, the ones that matter
    /// most first, and say how many were left out (JSON always has every row).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TOP, value_parser = parse_top)]
    pub top: usize,
    /// Console and markdown: list every row (JSON always has every row).
    #[arg(long, conflicts_with = "top")]
    pub all: bool,
}

impl Default for ListArgs {
    fn default() -> Self {
        Self {
            top: DEFAULT_TOP,
            all: false,
        }
    }
}

fn parse_top(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1 (use --all to list every row)".to_owned()),
        Ok(n) => Ok(n),
        // All digits, yet no usize: more rows than any list has; every row is meant.
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(format!(
            "`{s}` rows is more than any list holds: --all lists every row"
        )),
        Err(_) => Err(format!("`{s}` is not a whole number of rows")),
    }
}

impl ListArgs {
    /// The most rows to show of a list of `len`, and how many that leaves out.
    pub fn cut(&self, len: usize) -> (usize, usize) {
        if self.all || len <= self.top {
            (len, 0)
        } else {
            (self.top, len - self.top)
        }
    }

    /// The first rows of `items` that are shown, and how many are left out.
    pub fn take<'a, T>(&self, items: &'a [T]) -> (&'a [T], usize) {
        let (shown, hidden) = self.cut(items.len());
        (&items[..shown], hidden)
    }
}

/// A noun with its plural (`scope`/`scopes`, `hitch`/`hitches`).
#[derive(Clone, Copy, Debug)]
pub struct Noun(pub &'static str, pub &'static str);

impl Noun {
    /// `1 scope`, `2 scopes`.
    pub fn count(self, n: usize) -> String {
        format!("{n} {}", self.of(n))
    }

    /// The singular for 1, else the plural.
    pub fn of(self, n: usize) -> &'static str {
        if n == 1 {
            self.0
        } else {
            self.1
        }
    }
}

/// `… 105 more scopes (--all to list every one, --format json for machines)`, or nothing
/// when nothing was left out. `indent` spaces go before it (console).
pub fn more_console(hidden: usize, noun: Noun, indent: usize, out: &mut String) {
    if hidden == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "{:indent$}… {} more {} (--all to list every one, --format json for machines)",
        "",
        hidden,
        noun.of(hidden)
    );
}

/// The markdown form of [`more_console`]: a line of its own after a table.
pub fn more_markdown(hidden: usize, noun: Noun, out: &mut String) {
    if hidden == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "\n_… {} more {} (`--all` lists every one; `--format json` has them all)_",
        hidden,
        noun.of(hidden)
    );
}

/// `top 15 of 120 by total` when a list is cut, else empty: a heading's qualifier.
pub fn top_words(shown: usize, total: usize, by: &str) -> String {
    if shown < total {
        format!("top {shown} of {total} by {by}")
    } else {
        String::new()
    }
}

/// Names in a sentence: at most `max`, then `and N more`.
pub fn some_names(names: &[String], max: usize) -> String {
    if names.len() <= max {
        return names.join(", ");
    }
    format!(
        "{}, and {} more",
        names[..max].join(", "),
        names.len() - max
    )
}

/// A path as a shell word a reader can paste: quoted only when it needs to be.
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@,".contains(c));
    if plain {
        s.to_owned()
    } else if s.chars().any(char::is_control) {
        // A line break or an escape inside plain quotes would be printed raw (cutting the
        // suggestion's line, driving the terminal): bash's $'…' quoting spells them out.
        let mut out = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' => out.push_str(r"\\"),
                '\'' => out.push_str(r"\'"),
                '\n' => out.push_str(r"\n"),
                '\r' => out.push_str(r"\r"),
                '\t' => out.push_str(r"\t"),
                c if c.is_control() && u32::from(c) < 0x100 => {
                    out.push_str(&format!("\\x{:02x}", u32::from(c)));
                }
                c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_with_control_characters_is_spelt_out_for_bash() {
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(
            shell_word("c\n::x\u{1b}[2J'q\\.json"),
            r"$'c\n::x\x1b[2J\'q\\.json'"
        );
    }

    #[test]
    fn cut_and_more() {
        let top = ListArgs {
            top: 15,
            all: false,
        };
        assert_eq!(top.cut(120), (15, 105));
        assert_eq!(top.cut(15), (15, 0));
        assert_eq!(top.cut(3), (3, 0));
        let all = ListArgs { top: 15, all: true };
        assert_eq!(all.cut(120), (120, 0));
        let mut s = String::new();
        more_console(105, Noun("scope", "scopes"), 2, &mut s);
        assert_eq!(
            s,
            "  … 105 more scopes (--all to list every one, --format json for machines)\n"
        );
        let mut s = String::new();
        more_console(0, Noun("scope", "scopes"), 2, &mut s);
        assert!(s.is_empty());
        assert_eq!(Noun("hitch", "hitches").count(1), "1 hitch");
        assert_eq!(top_words(15, 120, "total"), "top 15 of 120 by total");
        assert_eq!(top_words(3, 3, "total"), "");
    }

    #[test]
    fn top_must_be_positive() {
        assert!(parse_top("0").is_err());
        assert!(parse_top("x").is_err());
        assert_eq!(parse_top("3"), Ok(3));
    }

    #[test]
    fn names_and_words() {
        let names: Vec<String> = ["a", "b", "c"].iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(some_names(&names, 5), "a, b, c");
        assert_eq!(some_names(&names, 2), "a, b, and 1 more");
        assert_eq!(shell_word("dir/game.sgpt"), "dir/game.sgpt");
        assert_eq!(shell_word("my game.sgpt"), "'my game.sgpt'");
        assert_eq!(shell_word("it's.sgpt"), r"'it'\''s.sgpt'");
    }
}
