//! Worker threads that each record their share of every frame between two barriers, shared
//! by the benches whose frames span several threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// `count` worker threads; each runs its share of a frame when the game thread begins the
/// frame, and the game thread waits for all of them when it ends it.
pub struct Workers {
    start: Arc<Barrier>,
    done: Arc<Barrier>,
    stop: Arc<AtomicBool>,
    handles: Vec<std::thread::JoinHandle<Duration>>,
}

impl Workers {
    /// Spawns `count` workers named `{name}-{w}`; worker `w` runs `share(w)` once per frame,
    /// which returns the time it counts for that frame (summed and returned by `join`).
    pub fn spawn<S>(count: usize, name: &str, share: impl Fn(usize) -> S) -> Self
    where
        S: FnMut() -> Duration + Send + 'static,
    {
        let start = Arc::new(Barrier::new(count + 1));
        let done = Arc::new(Barrier::new(count + 1));
        let stop = Arc::new(AtomicBool::new(false));
        let handles = (0..count)
            .map(|w| {
                let (start, done, stop) =
                    (Arc::clone(&start), Arc::clone(&done), Arc::clone(&stop));
                let mut share = share(w);
                std::thread::Builder::new()
                    .name(format!("{name}-{w}"))
                    .spawn(move || {
                        let mut total = Duration::ZERO;
                        loop {
                            start.wait();
                            if stop.load(Ordering::Relaxed) {
                                return total;
                            }
                            total += share();
                            done.wait();
                        }
                    })
                    .expect("spawn a worker")
            })
            .collect();
        Self {
            start,
            done,
            stop,
            handles,
        }
    }

    /// Lets the workers run one frame's share.
    pub fn begin_frame(&self) {
        self.start.wait();
    }

    /// Waits for the workers to finish this frame's share.
    pub fn end_frame(&self) {
        self.done.wait();
    }

    /// Stops the workers; the time their shares counted, summed.
    pub fn join(self) -> Duration {
        self.stop.store(true, Ordering::Relaxed);
        self.start.wait();
        self.handles
            .into_iter()
            .map(|h| h.join().expect("a worker ends"))
            .sum()
    }
}
