//! `framewise view --follow`: tails a capture that a running game is still writing. Only
//! the file is watched (no control channel to the game): a thread polls its length and
//! modification time and, when they changed, loads it again through framewise-analysis
//! (the same `open_with_frame_source` as the first load) and swaps the served snapshot.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use framewise_analysis::{load, Capture, DefectKind, FrameSource, LoadError, LoadOptions};

use crate::api::{FollowStatus, Live, Snapshot};
use crate::{Compared, Inspector};

/// How often the file is looked at, unless [`Follow::with_interval`] says otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(500);

/// A capture to follow as its file grows: the first load, and what every reload needs
/// (the path, the load options, the capture to compare against). Serve it with
/// [`crate::Server::following`] or [`crate::router_following`].
pub struct Follow {
    path: PathBuf,
    file: String,
    options: LoadOptions,
    compare: Option<Compared>,
    interval: Duration,
    first: Inspector,
    closed: bool,
    /// The file as it was when the first load began; `None`: unknown, so the first poll
    /// reloads.
    seen: Option<Fingerprint>,
    /// The recording session the first load read: a reload of another session's capture
    /// (the file replaced) is not this capture grown.
    session: Option<String>,
}

impl std::fmt::Debug for Follow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follow")
            .field("path", &self.path)
            .field("interval", &self.interval)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

/// What says a file changed: its length and modification time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint {
    bytes: u64,
    modified: Option<SystemTime>,
}

fn fingerprint(path: &Path) -> std::io::Result<Fingerprint> {
    let meta = std::fs::metadata(path)?;
    Ok(Fingerprint {
        bytes: meta.len(),
        modified: meta.modified().ok(),
    })
}

/// The writer finished the file: the reader found it closed. (An `.sgpt` still being
/// written reads as unclosed; other kinds are never written incrementally.)
fn is_closed(capture: &Capture) -> bool {
    !capture
        .defects()
        .iter()
        .any(|d| d.kind == DefectKind::Unclosed)
}

impl Follow {
    /// Loads `path` through framewise-analysis (as [`Inspector::open`] does) and, when
    /// given, `compare` (summary only, once: it is not followed).
    pub fn open(path: &Path, compare: Option<&Path>) -> Result<Self, LoadError> {
        let options = LoadOptions::new();
        let seen = fingerprint(path).ok();
        let (capture, frames) = load::open_with_frame_source(path, &options, |_| {})?;
        let compared = match compare {
            Some(other) => Some(Compared {
                file: other.display().to_string(),
                capture: load::open(other, &LoadOptions::new().with_summary_only(true))?,
            }),
            None => None,
        };
        let mut follow = Self::with_frames(
            capture,
            frames,
            path,
            &path.display().to_string(),
            options,
            compared,
        );
        follow.seen = seen;
        Ok(follow.with_project(crate::issues::find_project(path)))
    }

    /// Follows a capture the caller loaded from `path` with
    /// [`load::open_with_frame_source`] and `options` (reloads use the same options);
    /// `file` is the path as the user gave it. The first poll reloads once, since the file
    /// may have grown since that load.
    pub fn with_frames(
        capture: Capture,
        frames: FrameSource,
        path: &Path,
        file: &str,
        options: LoadOptions,
        compare: Option<Compared>,
    ) -> Self {
        let closed = is_closed(&capture);
        let session = capture.meta().session.clone();
        let first = Inspector::build(capture, frames, file, compare.as_ref());
        Self {
            path: path.to_owned(),
            file: file.to_owned(),
            options,
            compare,
            interval: DEFAULT_INTERVAL,
            first,
            closed,
            seen: None,
            session,
        }
    }

    /// Serves the issues catalogue of the `.framewise/` directory `dir` on every reload
    /// (see [`Inspector::with_project`]).
    pub fn with_project(mut self, dir: Option<PathBuf>) -> Self {
        self.first = self.first.with_project(dir);
        self
    }

    /// How often the file is looked at (default [`DEFAULT_INTERVAL`]).
    pub fn with_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// The state to serve, with the follow thread started when the file is not closed
    /// yet. The thread holds the state weakly: it ends at its next look once the server
    /// dropped it, or when the file is closed.
    pub(crate) fn start(self) -> std::io::Result<Arc<Live>> {
        let Self {
            path,
            file,
            options,
            compare,
            interval,
            first,
            closed,
            seen,
            session,
        } = self;
        let live = Arc::new(Live::new(Snapshot {
            inspector: Arc::new(first),
            follow: Some(FollowStatus {
                generation: 0,
                closed,
                last_error: None,
            }),
        }));
        if !closed {
            let follower = Follower {
                live: Arc::downgrade(&live),
                path,
                file,
                options,
                compare,
                interval,
                seen,
                session,
            };
            std::thread::Builder::new()
                .name("framewise-follow".into())
                .spawn(move || follower.run())?;
        }
        Ok(live)
    }
}

/// The follow thread's state: one reload at a time, by construction.
struct Follower {
    live: Weak<Live>,
    path: PathBuf,
    file: String,
    options: LoadOptions,
    compare: Option<Compared>,
    interval: Duration,
    seen: Option<Fingerprint>,
    session: Option<String>,
}

impl Follower {
    fn run(mut self) {
        loop {
            std::thread::sleep(self.interval);
            let Some(live) = self.live.upgrade() else {
                return; // the server stopped
            };
            if self.look(&live) {
                return; // the file is closed
            }
        }
    }

    /// Reloads when the file changed since the last look; true once it is closed.
    fn look(&mut self, live: &Live) -> bool {
        let current = live.current();
        let Some(status) = current.follow.clone() else {
            return true;
        };
        let now = match fingerprint(&self.path) {
            Ok(now) => now,
            Err(e) => {
                self.failed(live, &current, status, format!("{}: {e}", self.file));
                return false;
            }
        };
        if self.seen == Some(now) {
            return false;
        }
        self.seen = Some(now);
        match load::open_with_frame_source(&self.path, &self.options, |_| {}) {
            Ok((capture, _))
                if self.session.is_some() && capture.meta().session != self.session =>
            {
                // Another recording's capture at the path (moved or copied over it): the
                // followed one did not grow into it. Keep serving what was read, and say so.
                let short =
                    |s: Option<&str>| s.map_or("none".to_owned(), |s| s.chars().take(8).collect());
                self.failed(
                    live,
                    &current,
                    status,
                    format!(
                        "{}: the file is now another recording's capture (session {}… → {}…): it was replaced; run framewise view on it to inspect it",
                        self.file,
                        short(self.session.as_deref()),
                        short(capture.meta().session.as_deref())
                    ),
                );
                false
            }
            Ok((capture, frames)) => {
                let closed = is_closed(&capture);
                let inspector =
                    Inspector::build(capture, frames, &self.file, self.compare.as_ref())
                        .with_project(current.project().map(Path::to_owned));
                live.replace(Snapshot {
                    inspector: Arc::new(inspector),
                    follow: Some(FollowStatus {
                        generation: status.generation.saturating_add(1),
                        closed,
                        last_error: None,
                    }),
                });
                closed
            }
            Err(e) => {
                self.failed(live, &current, status, e.to_string());
                false
            }
        }
    }

    /// Keeps serving the last good state, saying why the file could not be read.
    fn failed(&self, live: &Live, current: &Snapshot, status: FollowStatus, error: String) {
        if status.last_error.as_deref() == Some(error.as_str()) {
            return;
        }
        live.replace(Snapshot {
            inspector: Arc::clone(&current.inspector),
            follow: Some(FollowStatus {
                last_error: Some(error),
                ..status
            }),
        });
    }
}
