//! A background load's state as the API sees it: the strip the file's directory gave, how
//! far the load is (`/api/loading`), and the answer every other document gets meanwhile.

use std::sync::{Mutex, PoisonError};

use axum::body::Bytes;
use framewise_analysis::{Progress, Stage};
use serde::Serialize;

use super::ApiError;

/// What a background load shares with the routes while it runs.
pub(crate) struct Loading {
    /// `/api/strip` until the load ends: from the file's directory.
    pub(crate) strip: Bytes,
    /// Frames the directory lists.
    pub(crate) frame_count: usize,
    state: Mutex<State>,
}

#[derive(Clone, Default)]
struct State {
    progress: Option<Progress>,
    /// Every frame is read; the hitches, statistics and comparison are being computed.
    analysing: bool,
    error: Option<String>,
}

/// `/api/loading` (`framewise.inspector.loading/1`).
#[derive(Serialize)]
pub(crate) struct LoadingDoc {
    schema: &'static str,
    /// `loading`, `ready` or `failed`.
    state: &'static str,
    /// What the load is doing, while it runs: framewise-analysis's stage name (`frames`
    /// for an `.sgpt`), then `analysing` once every frame is read.
    stage: Option<&'static str>,
    /// What `done` and `total` count: `frames` or `bytes`.
    unit: Option<&'static str>,
    done: u64,
    total: u64,
    /// Frames in the capture: the directory's while loading, the loaded capture's after.
    frame_count: usize,
    /// Why the load failed.
    error: Option<String>,
}

impl LoadingDoc {
    /// Loaded: every frame done.
    pub(crate) fn ready(frame_count: usize) -> Self {
        Self {
            schema: "framewise.inspector.loading/1",
            state: "ready",
            stage: None,
            unit: None,
            done: frame_count as u64,
            total: frame_count as u64,
            frame_count,
            error: None,
        }
    }
}

impl Loading {
    pub(crate) fn new(strip: Bytes, frame_count: usize) -> Self {
        Self {
            strip,
            frame_count,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> State {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The load reported progress.
    pub(crate) fn progress(&self, p: Progress) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .progress = Some(p);
    }

    /// Every frame is read: what is left is computing the documents.
    pub(crate) fn analysing(&self) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .analysing = true;
    }

    /// The load failed: every document but the strip answers 500 with `error` from now on.
    pub(crate) fn fail(&self, error: String) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .error = Some(error);
    }

    pub(crate) fn doc(&self) -> LoadingDoc {
        let s = self.state();
        let stage = s.progress.map(|p| p.stage);
        LoadingDoc {
            schema: "framewise.inspector.loading/1",
            state: if s.error.is_some() {
                "failed"
            } else {
                "loading"
            },
            stage: if s.analysing {
                Some("analysing")
            } else {
                stage.map(Stage::name)
            },
            unit: stage.map(Stage::unit),
            done: s.progress.map_or(0, |p| p.done),
            total: s.progress.map_or(0, |p| p.total),
            frame_count: self.frame_count,
            error: s.error,
        }
    }

    /// What a document that needs the loaded capture answers meanwhile.
    pub(crate) fn refusal(&self) -> ApiError {
        let s = self.state();
        match (s.error, s.progress) {
            (Some(error), _) => ApiError::internal(format!("loading the capture failed: {error}")),
            (None, Some(p)) => ApiError::unavailable(format!(
                "the capture is still loading ({} {} of {}): /api/loading says when it is ready",
                p.done,
                p.stage.unit(),
                p.total
            )),
            (None, None) => ApiError::unavailable(
                "the capture is still loading: /api/loading says when it is ready",
            ),
        }
    }
}
