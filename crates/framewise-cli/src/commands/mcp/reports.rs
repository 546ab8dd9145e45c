//! Where the MCP tools write their whole JSON reports: the default folder (inside the
//! `.framewise/` the tools read), the check made before the handshake, and a report's file
//! reserved before a tool that changes `.framewise/` runs (so that a report that cannot be
//! written stops the tool before it records anything).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::ledger::DirArgs;
use crate::output::{self, Report};

/// The reports directory when `--reports` is not given: `mcp/` in the `.framewise/` the
/// tools read (found as they find it: `$FRAMEWISE_DIR`, else the nearest from the working
/// directory up), so that a server started in a subdirectory of the game's repository never
/// makes a `.framewise/` there that the tools would then read instead of the repository's;
/// `.framewise/mcp` when there is none (nothing to shadow). Relative when it is the working
/// directory's own.
pub(super) fn default_reports() -> PathBuf {
    let relative = PathBuf::from(framewise_incidents::DIR_NAME).join("mcp");
    let Ok(dir) = DirArgs::default().locate() else {
        return relative;
    };
    let here = std::env::current_dir().ok();
    if dir.is_absolute()
        && dir.parent() == here.as_deref()
        && dir.ends_with(framewise_incidents::DIR_NAME)
    {
        return relative;
    }
    dir.join("mcp")
}

/// Refuses, before the handshake, a reports directory no tool could write into: one that is
/// something other than a directory, or that lies under something other than a directory
/// (`--reports capture.sgpt/sub`), would fail every call that writes a report.
pub(super) fn usable_reports(reports: &Path) -> anyhow::Result<()> {
    const WHY: &str = "the tools write their reports into it";
    for at in reports.ancestors() {
        let at = if at.as_os_str().is_empty() {
            Path::new(".")
        } else {
            at
        };
        match std::fs::metadata(at) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(meta) => {
                if at == reports {
                    anyhow::bail!("--reports {}: not a directory ({WHY})", reports.display());
                }
                let kind = framewise_analysis::load::file_kind(&meta);
                anyhow::bail!(
                    "--reports {}: {} is a {kind}, not a directory, so the directory cannot be made there ({WHY})",
                    reports.display(),
                    at.display()
                );
            }
            Err(_) if std::fs::symlink_metadata(at).is_ok() => anyhow::bail!(
                "--reports {}: {} is a link to nothing, so the directory cannot be made there ({WHY})",
                reports.display(),
                at.display()
            ),
            Err(_) => {}
        }
    }
    Ok(())
}

/// Where reports go, and a sequence number that keeps their names apart.
#[derive(Debug)]
pub(super) struct Reports {
    dir: PathBuf,
    seq: AtomicU64,
    /// Held while a report's file is made or, unwritten, removed with the directories made
    /// for it: a call that failed never removes a directory another call is writing into.
    lock: std::sync::Mutex<()>,
}

impl Reports {
    /// Reports written under `dir` (made when first needed).
    pub(super) fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_owned(),
            seq: AtomicU64::new(0),
            lock: std::sync::Mutex::default(),
        }
    }

    /// Makes the file a tool's report will be written to, `<tool>-<unix ms>-<pid>-<n>.json`
    /// (`unrun`, said when it cannot be, tells what was not done). A tool that changes
    /// `.framewise/` calls it before it runs anything: a reports directory that cannot be made
    /// or written is an error before a verb appends to fixes.jsonl or the bench ledger, not
    /// after (an agent retrying the call would record it twice). The file is removed unless
    /// the report is written into it, and so are the directories made for it (a call that
    /// failed leaves no `.framewise/` behind).
    pub(super) fn reserve(self: &Arc<Self>, tool: &str, unrun: &str) -> anyhow::Result<Reserved> {
        let _held = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The directories missing, deepest first: made here, and removed with the file.
        let created: Vec<PathBuf> = self
            .dir
            .ancestors()
            .filter(|d| !d.as_os_str().is_empty())
            .take_while(|d| std::fs::symlink_metadata(d).is_err())
            .map(Path::to_path_buf)
            .collect();
        if let Err(e) = std::fs::create_dir_all(&self.dir) {
            anyhow::bail!(
                "{}: cannot create the reports directory (--reports): {e}{unrun}",
                self.dir.display()
            );
        }
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let path = self
            .dir
            .join(format!("{tool}-{ms}-{}-{n}.json", std::process::id()));
        if let Err(e) = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            anyhow::bail!(
                "{}: cannot write a report in the reports directory (--reports): {e}{unrun}",
                path.display()
            );
        }
        Ok(Reserved {
            reports: Arc::clone(self),
            path,
            created,
            written: false,
        })
    }

    /// Writes the JSON document of a verb that changed nothing and returns its path.
    pub(super) fn write(
        self: &Arc<Self>,
        tool: &str,
        report: &dyn Report,
    ) -> anyhow::Result<String> {
        self.reserve(tool, "")?.write(report)
    }
}

/// What [`Reports::reserve`] adds when a tool that changes `.framewise/` cannot write its
/// report.
pub(super) const NOTHING_RUN: &str = "; nothing was run or recorded";

/// A report's file, made before the tool ran ([`Reports::reserve`]).
#[derive(Debug)]
pub(super) struct Reserved {
    reports: Arc<Reports>,
    path: PathBuf,
    /// The directories made for it, deepest first.
    created: Vec<PathBuf>,
    written: bool,
}

impl Reserved {
    /// Writes a verb's JSON document into the file and returns its path.
    pub(super) fn write(mut self, report: &dyn Report) -> anyhow::Result<String> {
        output::write_json(&self.path, &output::json_text(&report.json()?)?)?;
        self.written = true;
        Ok(self.path.display().to_string())
    }

    /// For a verb that changed `.framewise/`: the report's path, or, when it could not be
    /// written, why — never an error, which would read as nothing having been done.
    pub(super) fn write_after_change(
        self,
        report: &dyn Report,
    ) -> (Option<String>, Option<String>) {
        match self.write(report) {
            Ok(path) => (Some(path), None),
            Err(e) => (None, Some(output::one_line(&e))),
        }
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if self.written {
            return;
        }
        let _held = self
            .reports
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = std::fs::remove_file(&self.path);
        for dir in &self.created {
            // Only while empty: another call's report stays, and so does its directory.
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_under_a_file_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a.sgpt");
        std::fs::write(&file, b"x").unwrap();
        let message = usable_reports(&file.join("sub/deeper"))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("a.sgpt is a regular file, not a directory"),
            "{message}"
        );
        let message = usable_reports(&file).unwrap_err().to_string();
        assert!(
            message.ends_with(": not a directory (the tools write their reports into it)"),
            "{message}"
        );
        assert!(usable_reports(&tmp.path().join("new/sub")).is_ok());
        assert!(usable_reports(Path::new("relative/new")).is_ok());
    }

    /// A report that cannot be written after a verb changed `.framewise/` is said, not an
    /// error; the reserved file of a call that failed is removed.
    #[test]
    fn a_reserved_report_is_removed_unless_written() {
        let tmp = tempfile::tempdir().unwrap();
        let reports = Arc::new(Reports::new(&tmp.path().join("r/mcp")));
        let reserved = reports.reserve("fix", NOTHING_RUN).unwrap();
        let path = reserved.path.clone();
        assert!(path.is_file());
        drop(reserved);
        assert!(!path.exists(), "a call that failed leaves no report");
        assert!(
            !tmp.path().join("r").exists(),
            "nor the directories made for it"
        );
        let kept = reports.reserve("a", "").unwrap();
        drop(reports.reserve("b", "").unwrap());
        assert!(kept.path.is_file(), "another call's file stays");

        std::fs::write(tmp.path().join("f"), b"x").unwrap();
        let blocked = Arc::new(Reports::new(&tmp.path().join("f/r")));
        let message = blocked.reserve("fix", NOTHING_RUN).unwrap_err().to_string();
        assert!(
            message.ends_with("; nothing was run or recorded"),
            "{message}"
        );
    }
}
