//! framewise-inspector is the local web inspector behind `framewise view`: an HTTP server
//! on the loopback interface that hands a browser the pictures' data for one capture (and
//! optionally a second one to compare), and the embedded web app that draws them.
//!
//! Who should use it: the `framewise` CLI (`framewise view`, `framewise demo --view`), and
//! tests that drive its API. Programs that want numbers should link `framewise-analysis`
//! instead: this crate never computes a number itself. Every statistic, hitch, series,
//! comparison and topology it serves is read through `framewise-analysis`, and the
//! documents it shares with the CLI (`summarize`, `hitches`, `diff` JSON) are the analysis
//! crate's own serializations, so the page and the CLI can never disagree. It binds
//! `127.0.0.1` only, never another interface, answers only requests whose `Host` is
//! `127.0.0.1:PORT` or `localhost:PORT` (403 otherwise, on every route), and answers
//! `/api/*` only to requests that carry the per-run token ([`Token`]). The API is specified in `docs/INSPECTOR.md`.
//!
//! ```no_run
//! use std::path::Path;
//!
//! // Reads the capture's frame directory, binds 127.0.0.1 on a free port; the rest loads
//! // through framewise-analysis behind, once it serves.
//! let server = framewise_inspector::Server::bind(Path::new("game.sgpt"), None, 0)?;
//! println!("inspector: {}", server.url());
//! server.run()?; // until Ctrl-C or SIGTERM
//! # Ok::<(), framewise_inspector::ServeError>(())
//! ```

#![forbid(unsafe_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use framewise_analysis::LoadError;

mod api;
mod assets;
mod background;
mod comparison;
mod flame;
mod follow;
mod host;
mod issues;
mod search;
mod strip;
mod token;
mod window;

pub use api::{Compared, Inspector};
pub use background::Background;
pub use follow::{Follow, DEFAULT_INTERVAL};
pub use issues::{find_project, project_dir};
pub use token::Token;

/// Why the inspector could not load, listen or serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A capture could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The port could not be bound (in use, or not allowed).
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port asked for (0: any free port).
        port: u16,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// No random token could be drawn from the operating system.
    #[error("cannot draw a random token: {0}")]
    Token(String),
    /// The server's runtime or socket failed while serving.
    #[error("serving failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The inspector bound to its loopback socket, with this run's token: call [`Server::run`]
/// (blocking until Ctrl-C or SIGTERM), [`Server::run_until`], or [`Server::spawn`].
#[derive(Debug)]
pub struct Server {
    listener: std::net::TcpListener,
    token: Token,
    served: Served,
    web_dir: Option<PathBuf>,
}

/// What a server serves: one load, or a capture it follows as its file grows.
#[derive(Debug)]
enum Served {
    Fixed(Box<Inspector>),
    Following(Box<Follow>),
    Loading(Box<Background>),
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector")
            .field("frames", &self.capture().frame_count())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Binds `127.0.0.1:port` (0: any free port) for `capture` compared with `compare`
    /// (loaded first, summary only, when given): served from its frame directory at once
    /// and loaded behind ([`Background`]) when it has one, else loaded through
    /// framewise-analysis first ([`Inspector::open`]).
    pub fn bind(capture: &Path, compare: Option<&Path>, port: u16) -> Result<Self, ServeError> {
        match Background::open(capture, framewise_analysis::LoadOptions::new())? {
            Some(background) => {
                let compared = compare.map(Compared::open).transpose()?;
                Self::background(background.with_compare(compared), port)
            }
            None => Self::new(Inspector::open(capture, compare)?, port),
        }
    }

    /// Binds `127.0.0.1:port` (0: any free port) to serve a capture while it loads: its
    /// strip from its directory at once, the rest once a thread named `framewise-load`
    /// loaded it (docs/INSPECTOR.md, "Opening a large capture").
    pub fn background(background: Background, port: u16) -> Result<Self, ServeError> {
        Self::serving(Served::Loading(Box::new(background)), port)
    }

    /// Binds `127.0.0.1:port` (0: any free port) for an inspector already built, and draws
    /// this run's token.
    pub fn new(inspector: Inspector, port: u16) -> Result<Self, ServeError> {
        Self::serving(Served::Fixed(Box::new(inspector)), port)
    }

    /// Loads `capture` (and `compare`, once) and binds `127.0.0.1:port` to follow it as a
    /// running game writes it (`framewise view --follow`): see [`Follow`].
    pub fn bind_following(
        capture: &Path,
        compare: Option<&Path>,
        port: u16,
    ) -> Result<Self, ServeError> {
        Self::following(Follow::open(capture, compare)?, port)
    }

    /// Binds `127.0.0.1:port` (0: any free port) to serve a followed capture: a thread
    /// named `framewise-follow` reloads it when its file changes, until the writer closed
    /// it (docs/INSPECTOR.md, "Following a capture being written").
    pub fn following(follow: Follow, port: u16) -> Result<Self, ServeError> {
        Self::serving(Served::Following(Box::new(follow)), port)
    }

    fn serving(served: Served, port: u16) -> Result<Self, ServeError> {
        let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
            .map_err(|source| ServeError::Bind { port, source })?;
        Ok(Self {
            listener,
            token: Token::random()?,
            served,
            web_dir: None,
        })
    }

    /// Serves the web app's files from `dir` instead of the embedded copies (read on every
    /// request, so that edits show on reload).
    pub fn with_web_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.web_dir = dir;
        self
    }

    /// The socket address it listens on (always `127.0.0.1`).
    pub fn addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, 0)))
    }

    /// This run's token.
    pub fn token(&self) -> &str {
        self.token.as_str()
    }

    /// The address to open: `http://127.0.0.1:PORT/?token=TOKEN`.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr(), self.token.as_str())
    }

    /// Serves until Ctrl-C (SIGINT) or SIGTERM.
    pub fn run(self) -> Result<(), ServeError> {
        self.run_announced(|_| Ok(()))
    }

    /// Serves until Ctrl-C (SIGINT) or SIGTERM, calling `ready` with [`Self::url`] once
    /// the signal handlers are installed (where `framewise view` prints its address line:
    /// whoever reads it may stop the server at once, and a SIGTERM then is a clean stop,
    /// never the default kill).
    pub fn run_announced(
        self,
        ready: impl FnOnce(&str) -> std::io::Result<()>,
    ) -> Result<(), ServeError> {
        let url = self.url();
        self.serve(move || {
            let shutdown = shutdown_signals()?;
            ready(&url)?;
            Ok(shutdown)
        })
    }

    /// Serves until `shutdown` completes; requests being answered are finished first.
    pub fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        self.serve(move || Ok(shutdown))
    }

    /// Serves on a single-threaded runtime on the calling thread (one browser on the same
    /// machine needs no more) until the future `start` returns (made inside the runtime)
    /// completes.
    fn serve<F: Future<Output = ()> + Send + 'static>(
        self,
        start: impl FnOnce() -> std::io::Result<F>,
    ) -> Result<(), ServeError> {
        let port = self.addr().port();
        let live = match self.served {
            Served::Fixed(inspector) => fixed(*inspector),
            Served::Following(follow) => follow.start()?,
            Served::Loading(background) => background.start()?,
        };
        let app = routes(live, self.token, self.web_dir, Some(port));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        self.listener.set_nonblocking(true)?;
        let listener = self.listener;
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener)?;
            let shutdown = start()?;
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
        })?;
        Ok(())
    }

    /// Serves on a background thread named `framewise-inspector` until the process exits
    /// (tests: read [`Self::addr`] and [`Self::token`] first).
    pub fn spawn(self) -> std::io::Result<std::thread::JoinHandle<Result<(), ServeError>>> {
        std::thread::Builder::new()
            .name("framewise-inspector".into())
            .spawn(move || self.run_until(std::future::pending()))
    }
}

/// The inspector's routes: `/` and `/app/*` (the web app, no token needed: they hold no
/// capture data) and `/api/*` (token required). Tests drive it in-process. It does not
/// check the `Host` header (it knows no port): a [`Server`] refuses a foreign `Host` with
/// 403 on every route before these are reached.
pub fn router(inspector: Inspector, token: Token, web_dir: Option<PathBuf>) -> axum::Router {
    routes(fixed(inspector), token, web_dir, None)
}

fn fixed(inspector: Inspector) -> Arc<api::Live> {
    Arc::new(api::Live::new(api::Snapshot {
        inspector: Arc::new(inspector),
        follow: None,
    }))
}

/// [`router`] for a followed capture: starts the thread that reloads it (it ends once the
/// router is dropped, or when the file is closed). Err when that thread cannot start.
pub fn router_following(
    follow: Follow,
    token: Token,
    web_dir: Option<PathBuf>,
) -> std::io::Result<axum::Router> {
    Ok(routes(follow.start()?, token, web_dir, None))
}

/// [`router`] for a capture that loads behind ([`Background`]): starts its load thread.
/// Err when that thread cannot start.
pub fn router_background(
    background: Background,
    token: Token,
    web_dir: Option<PathBuf>,
) -> std::io::Result<axum::Router> {
    Ok(routes(background.start()?, token, web_dir, None))
}

/// The routes; with `port`, behind the `Host` check (inside the headers every response
/// carries, so a refusal carries them too).
fn routes(
    live: Arc<api::Live>,
    token: Token,
    web_dir: Option<PathBuf>,
    port: Option<u16>,
) -> axum::Router {
    let api = api::routes(live, token);
    let app = assets::routes(web_dir)
        .merge(api)
        .fallback(|| async {
            (
                axum::http::StatusCode::NOT_FOUND,
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                r#"{"error":"no such path (the API is under /api, see docs/INSPECTOR.md)"}"#,
            )
        })
        // A refusal is one line of JSON, this one too.
        .method_not_allowed_fallback(|| async {
            (
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                r#"{"error":"only GET (and HEAD) are answered"}"#,
            )
        });
    let app = match port {
        Some(port) => app.layer(axum::middleware::from_fn_with_state(
            port,
            host::require_host,
        )),
        None => app,
    };
    app.layer(axum::middleware::from_fn(assets::headers))
}

/// Installs the handlers for Ctrl-C (SIGINT) and, on Unix, SIGTERM, now; the future
/// completes on the first of them. Call inside the runtime.
fn shutdown_signals() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {},
                _ = terminate.recv() => {},
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            // If the handler cannot be installed, only killing the process stops it.
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}
