//! Serving a capture while it loads (`framewise view`'s start): the file's frame directory
//! is read first (framewise-analysis's [`load::frame_directory`]: every frame's period,
//! work, GPU time and hitch flag, no frame decoded), `/api/strip` is served from it at
//! once, and a thread named `framewise-load` loads the capture as [`Inspector::open`]
//! does. Until it is done, `/api/loading` says how far it is and every other document
//! answers 503 (500 with the reason should it fail); the loaded capture then replaces the
//! directory's strip with its own. The directory and the load read the file by its path, one
//! after the other: a file replaced or rewritten in between (its identity, size or time of
//! change no longer those it had when its directory was read) fails the load, rather than
//! serve one file's strip beside another's frames.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Bytes;
use framewise_analysis::load::{self, FrameDirectory};
use framewise_analysis::{Capture, CaptureBuilder, LoadError, LoadOptions, SourceKind};

use crate::api::{Live, Loading, Snapshot};
use crate::{Compared, Inspector};

/// Called once the load ends, on the load thread: the capture loaded, or why not.
type OnLoaded = Box<dyn FnOnce(Result<&Capture, &LoadError>) + Send>;

/// A capture to serve while it loads: see the module's documentation. Serve it with
/// [`crate::Server::background`] or [`crate::router_background`].
pub struct Background {
    path: PathBuf,
    /// What the file was when its directory was read (`None`: its metadata did not read).
    identity: Option<Identity>,
    file: String,
    options: LoadOptions,
    directory: FrameDirectory,
    compare: Option<Compared>,
    project: Option<PathBuf>,
    on_loaded: Option<OnLoaded>,
    before: Option<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Background {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Background")
            .field("path", &self.path)
            .field("frames", &self.directory.len())
            .finish_non_exhaustive()
    }
}

impl Background {
    /// Reads `path`'s frame directory, to load the rest with `options` once served
    /// (the issues catalogue: the nearest `.framewise/`, as [`Inspector::open`] finds it).
    /// `Ok(None)` when the file has no usable directory (not an `.sgpt`, still being
    /// written, cut off or damaged): load it first instead ([`Inspector::open`]). Err when
    /// the file cannot be read at all.
    pub fn open(path: &Path, options: LoadOptions) -> Result<Option<Self>, LoadError> {
        // Taken before the directory is read: a change while it is read shows after the load.
        let identity = Identity::of(path);
        Ok(load::frame_directory(path)?.map(|directory| Self {
            path: path.to_owned(),
            identity,
            file: path.display().to_string(),
            options,
            directory,
            compare: None,
            project: crate::issues::find_project(path),
            on_loaded: None,
            before: None,
        }))
    }

    /// Compares against `compare`, loaded already (`/api/diff`, `/api/comparison`).
    pub fn with_compare(mut self, compare: Option<Compared>) -> Self {
        self.compare = compare;
        self
    }

    /// Serves the issues catalogue of the `.framewise/` directory `dir` (see
    /// [`Inspector::with_project`]).
    pub fn with_project(mut self, dir: Option<PathBuf>) -> Self {
        self.project = dir;
        self
    }

    /// Calls `f` on the load thread once the load ends, with the capture or the error,
    /// before the loaded capture is served (`framewise view` prints its defects).
    pub fn on_loaded(
        mut self,
        f: impl FnOnce(Result<&Capture, &LoadError>) + Send + 'static,
    ) -> Self {
        self.on_loaded = Some(Box::new(f));
        self
    }

    /// Runs `f` on the load thread before the load begins: the page is served from the
    /// directory for as long as it runs (tests hold the load to look at the page then).
    pub fn before_loading(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.before = Some(Box::new(f));
        self
    }

    /// Frames the directory lists.
    pub fn frame_count(&self) -> usize {
        self.directory.len()
    }

    /// The state to serve, with the load thread started.
    pub(crate) fn start(self) -> std::io::Result<Arc<Live>> {
        let Self {
            path,
            identity,
            file,
            options,
            directory,
            compare,
            project,
            on_loaded,
            before,
        } = self;
        let loading = Arc::new(Loading::new(
            Bytes::from(crate::strip::of_directory(&directory)),
            directory.len(),
        ));
        drop(directory);
        // Never read: every route that would read it answers 503 until the load is done.
        let stand_in = Inspector::new(
            CaptureBuilder::new(SourceKind::Sgpt, false).finish(),
            &file,
            None,
        );
        let live = Arc::new(Live::loading(
            Snapshot {
                inspector: Arc::new(stand_in),
                follow: None,
            },
            Arc::clone(&loading),
        ));
        let shared = Arc::clone(&live);
        std::thread::Builder::new()
            .name("framewise-load".into())
            .spawn(move || {
                if let Some(before) = before {
                    before();
                }
                let loaded = load::open_with_frame_source(&path, &options, |p| loading.progress(p))
                    .and_then(|loaded| {
                        if Identity::of(&path) == identity {
                            return Ok(loaded);
                        }
                        Err(LoadError::Io {
                            path: path.clone(),
                            source: std::io::Error::other(
                                "the file changed after its frame directory was read (replaced or rewritten): run framewise view again",
                            ),
                        })
                    });
                if let Some(f) = on_loaded {
                    f(loaded.as_ref().map(|(capture, _)| capture));
                }
                match loaded {
                    Ok((capture, frames)) => {
                        loading.analysing();
                        let inspector = Inspector::with_frames(capture, frames, &file, compare)
                            .with_project(project);
                        shared.loaded(Snapshot {
                            inspector: Arc::new(inspector),
                            follow: None,
                        });
                    }
                    Err(e) => loading.fail(e.to_string()),
                }
            })?;
        Ok(live)
    }
}

/// What tells one file at a path from another, or from itself rewritten: its device and inode
/// (on Unix), its size and its time of last change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    #[cfg(unix)]
    device_inode: (u64, u64),
    bytes: u64,
    modified: Option<std::time::SystemTime>,
}

impl Identity {
    fn of(path: &Path) -> Option<Self> {
        let m = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Some(Self {
            #[cfg(unix)]
            device_inode: (m.dev(), m.ino()),
            bytes: m.len(),
            modified: m.modified().ok(),
        })
    }
}
