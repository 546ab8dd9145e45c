//! The verbs that read `.framewise/` (`issues`, `report`, `history`, `fix`, `watch`): where
//! the directory is, and its files read with what was skipped counted.

use std::path::PathBuf;

use anyhow::bail;
use framewise_incidents::fold::LedgerInfo;
use framewise_incidents::{DIR_ENV, DIR_NAME, FIXES_FILE, PERF_FILE};

/// `--dir`, flattened into the verbs that read `.framewise/`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct DirArgs {
    /// The `.framewise/` directory [default: $FRAMEWISE_DIR, else `.framewise/` in the
    /// working directory or the nearest parent that has one].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl DirArgs {
    /// The directory: `--dir`, else `FRAMEWISE_DIR`, else the nearest `.framewise/` from
    /// the working directory up. An error when none is found or `--dir` is not a directory.
    pub fn locate(&self) -> anyhow::Result<PathBuf> {
        if let Some(dir) = &self.dir {
            if !dir.is_dir() {
                bail!(
                    "{}: not a directory (--dir names the .framewise/ directory)",
                    dir.display()
                );
            }
            return Ok(dir.clone());
        }
        if let Some(dir) = std::env::var_os(DIR_ENV).filter(|v| !v.is_empty()) {
            let dir = PathBuf::from(dir);
            if !dir.is_dir() {
                bail!("{}: not a directory (named by {DIR_ENV})", dir.display());
            }
            return Ok(dir);
        }
        let here = std::env::current_dir()?;
        let mut not_dir = None;
        for at in here.ancestors() {
            let dir = at.join(DIR_NAME);
            if dir.is_dir() {
                return Ok(dir);
            }
            if not_dir.is_none() && std::fs::symlink_metadata(&dir).is_ok() {
                not_dir = Some(dir);
            }
        }
        // A `.framewise` that is a file (or a dangling link) is why none was found: say so.
        let why = not_dir
            .map(|p| format!(" ({} is there, but not a directory)", p.display()))
            .unwrap_or_default();
        bail!(
            "no {DIR_NAME}/ in {} or its parents{why}: run `framewise init` in the game's repository, or pass --dir",
            here.display()
        )
    }
}

/// A line for people when something in the ledger was skipped, else nothing.
pub fn skipped_line(info: &LedgerInfo) -> Option<String> {
    let mut parts = Vec::new();
    if info.malformed > 0 {
        parts.push(format!("{} malformed", info.malformed));
    }
    if info.unknown_type > 0 {
        parts.push(format!("{} of unknown type", info.unknown_type));
    }
    if info.torn_last_line {
        parts.push("a torn last line".to_owned());
    }
    if info.unstamped > 0 {
        parts.push(format!("{} without a readable time", info.unstamped));
    }
    let mut line = String::new();
    if !parts.is_empty() {
        line = format!("skipped in {PERF_FILE}: {}", parts.join(", "));
    }
    if info.fixes_skipped > 0 {
        if !line.is_empty() {
            line.push_str("; ");
        }
        line.push_str(&format!(
            "skipped in {FIXES_FILE}: {}",
            crate::list::Noun("line", "lines")
                .count(usize::try_from(info.fixes_skipped).unwrap_or(usize::MAX))
        ));
    }
    (!line.is_empty()).then_some(line)
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A `--from`/`--to` bound: an ISO 8601 instant or a date.
pub fn parse_instant(text: &str) -> Result<i64, String> {
    framewise_incidents::fold::unix_ms_from_iso(text).ok_or_else(|| {
        format!("`{text}` is not an ISO 8601 time (2026-12-01T16:20:00Z) or date (2026-12-01)")
    })
}

/// Refuses a `--from` later than its `--to`: such a range holds no time, so a fold over it
/// would read as a log with nothing in it (`no incidents recorded`) when the bounds were
/// only swapped.
pub fn check_range(from: Option<i64>, to: Option<i64>) -> anyhow::Result<()> {
    match (from, to) {
        (Some(from), Some(to)) if from > to => anyhow::bail!(
            "--from {} is after --to {}: the range holds no time (swap them?)",
            framewise_incidents::iso_from_unix_ms(from),
            framewise_incidents::iso_from_unix_ms(to)
        ),
        _ => Ok(()),
    }
}

/// "3h ago", the way a person reads a last occurrence; a time after now (a clock set
/// wrong, a hand-edited line) is "in the future", never "0s ago".
pub fn ago(ms: i64) -> String {
    if ms <= -500 {
        return "in the future".to_owned();
    }
    let s = (ms.max(0) + 500) / 1000;
    if s < 60 {
        return format!("{s}s ago");
    }
    let m = (s + 30) / 60;
    if m < 60 {
        return format!("{m}m ago");
    }
    let h = (m + 30) / 60;
    if h < 48 {
        return format!("{h}h ago");
    }
    format!("{}d ago", (h + 12) / 24)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ago_reads_like_a_person() {
        assert_eq!(ago(-5), "0s ago");
        assert_eq!(ago(-3_600_000), "in the future");
        assert_eq!(ago(42_000), "42s ago");
        assert_eq!(ago(5 * 60_000), "5m ago");
        assert_eq!(ago(3 * 3_600_000), "3h ago");
        assert_eq!(ago(72 * 3_600_000), "3d ago");
    }

    /// The inspector's Issues panel says when an issue was last seen with its own `ago`
    /// (`web/ago.js`): run in node on the same values, it must read as this one, "in the
    /// future" included. Skipped without node, unless CI or FRAMEWISE_REQUIRE_BROWSER is set.
    #[test]
    fn the_inspector_says_ago_as_the_console_does() {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../framewise-inspector/web/ago.js"
        );
        let mut values: Vec<i64> = vec![
            i64::from(i32::MIN),
            -86_400_000,
            -3_600_000,
            -501,
            -500,
            -499,
            -1,
            0,
            499,
            500,
            59_499,
            59_500,
            89_999,
            90_000,
            3_569_999,
            3_570_000,
            (47 * 60 + 29) * 60_000 + 59_499,
            (47 * 60 + 30) * 60_000,
            400 * 86_400_000,
        ];
        // And a spread over every unit, from a fixed seed.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(i64::try_from(x % 40_000_000_000).unwrap() - 20_000_000);
        }
        let list = serde_json::to_string(&values).unwrap();
        let run = std::process::Command::new("node")
            .args([
                "--input-type=module",
                "-e",
                "import { readFileSync } from 'node:fs';\
                 const [path, list] = process.argv.slice(-2);\
                 const source = Buffer.from(readFileSync(path, 'utf8')).toString('base64');\
                 const { ago } = await import(`data:text/javascript;base64,${source}`);\
                 for (const ms of JSON.parse(list)) console.log(ago(ms));",
                script,
                &list,
            ])
            .output();
        let required = ["CI", "FRAMEWISE_REQUIRE_BROWSER"]
            .iter()
            .any(|v| std::env::var(v).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false"));
        let run = match run {
            Ok(run) => run,
            Err(e) if !required => {
                say!("skipped: node does not run ({e})");
                return;
            }
            Err(e) => panic!("node does not run: {e}"),
        };
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let said: Vec<String> = String::from_utf8(run.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let expected: Vec<String> = values.iter().map(|&ms| ago(ms)).collect();
        assert_eq!(said.len(), expected.len());
        for ((ms, said), expected) in values.iter().zip(&said).zip(&expected) {
            assert_eq!(said, expected, "ago({ms})");
        }
    }
}
