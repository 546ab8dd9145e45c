//! Bisection inside a running game, whatever drives its updates (winit, the schedule
//! runner, a loop): the protocol (`framewise_census::bisect`) runs on a thread of its own and
//! asks the game for each step; the game answers at the end of its updates.
//!
//! At the end of an update (the `Last` schedule) the driver answers the protocol's requests
//! — list candidates, hide, show, snapshot — one after another, until the protocol asks
//! for a frame: the driver then lets the game run on and, at the end of the first update
//! whose measurements are in (its render time comes back an update or a few later; see
//! `timing`), replies with what that update cost. So each measured frame is one real update
//! of the game's own loop, rendering included. When the protocol ends, the game resumes and the report is written
//! to `.framewise/bisect.json` and kept as the [`FramewiseBisectReport`] resource.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;

use bevy::ecs::message::{Message, MessageCursor, Messages};
use bevy::ecs::resource::Resource;
use bevy::ecs::system::Local;
use bevy::ecs::world::World;
use framewise_census::{
    bisect, BisectEngine, BisectError, BisectOptions, BisectReport, Candidate, EngineError,
    FrameCost, WorldSnapshot,
};

use crate::bisect::{engine_name, write_report, Pause, WorldScene};
use crate::timing::{FrameClock, Source};

/// Ask the running game for a bisection (`MessageWriter<FramewiseBisectRequest>`): it starts
/// at the end of this update; one at a time (a request while one runs is ignored).
#[derive(Clone, Copy, Debug, Default, Message)]
pub struct FramewiseBisectRequest(pub BisectOptions);

/// The last bisection the game ran, inserted when it ends: the report, or why it could not
/// run.
#[derive(Debug, Resource)]
pub struct FramewiseBisectReport(pub Result<BisectReport, String>);

/// When the plugin's settings ask for a bisection without a message: after this many
/// updates, with these options.
#[derive(Clone, Copy, Debug, Resource)]
pub(crate) struct BisectAt {
    pub(crate) updates: u64,
    pub(crate) options: BisectOptions,
}

/// A step the protocol asks of the game.
enum Op {
    Candidates,
    Hide(String),
    Show(String),
    Frame,
    Snapshot,
}

/// The game's answer.
enum Reply {
    Candidates(Vec<Candidate>),
    Done(Result<(), EngineError>),
    Frame(FrameCost),
    Snapshot(WorldSnapshot),
}

/// The protocol's side: each engine call is a request to the game and its answer.
struct Remote {
    ops: Sender<Op>,
    replies: Receiver<Reply>,
    render_ms_source: Option<String>,
}

impl Remote {
    fn ask(&self, op: Op) -> Result<Reply, EngineError> {
        let gone = || EngineError("the game stopped during the bisection".to_owned());
        self.ops.send(op).map_err(|_| gone())?;
        self.replies.recv().map_err(|_| gone())
    }
}

fn unexpected() -> EngineError {
    EngineError("the game answered another request".to_owned())
}

impl BisectEngine for Remote {
    fn name(&self) -> String {
        engine_name()
    }

    fn candidates(&mut self) -> Result<Vec<Candidate>, EngineError> {
        match self.ask(Op::Candidates)? {
            Reply::Candidates(c) => Ok(c),
            _ => Err(unexpected()),
        }
    }

    fn hide(&mut self, id: &str) -> Result<(), EngineError> {
        match self.ask(Op::Hide(id.to_owned()))? {
            Reply::Done(r) => r,
            _ => Err(unexpected()),
        }
    }

    fn show(&mut self, id: &str) -> Result<(), EngineError> {
        match self.ask(Op::Show(id.to_owned()))? {
            Reply::Done(r) => r,
            _ => Err(unexpected()),
        }
    }

    fn render_frame(&mut self) -> Result<FrameCost, EngineError> {
        match self.ask(Op::Frame)? {
            Reply::Frame(cost) => Ok(cost),
            _ => Err(unexpected()),
        }
    }

    fn snapshot(&mut self) -> Result<WorldSnapshot, EngineError> {
        match self.ask(Op::Snapshot)? {
            Reply::Snapshot(s) => Ok(s),
            _ => Err(unexpected()),
        }
    }

    fn render_ms_source(&self) -> Option<String> {
        self.render_ms_source.clone()
    }
}

/// A bisection under way.
#[derive(Resource)]
struct Running {
    ops: Mutex<Receiver<Op>>,
    replies: Sender<Reply>,
    protocol: Option<JoinHandle<Result<BisectReport, BisectError>>>,
    scene: WorldScene,
    /// Which updates were drawn in the current state, and what they cost.
    clock: FrameClock,
    /// The protocol asked for a frame: the updates since then are drawn for it, and the
    /// first of them whose measurements are in answers it.
    frame_asked: bool,
    pause: Option<Pause>,
}

/// Starts a bisection: the game pauses, the protocol's thread starts.
fn start(world: &mut World, options: BisectOptions) {
    let (ops_tx, ops_rx) = channel();
    let (replies_tx, replies_rx) = channel();
    let clock = FrameClock::start(world);
    let render_ms_source = clock.source().map(Source::describe);
    let spawned = std::thread::Builder::new()
        .name("framewise-bisect".to_owned())
        .spawn(move || {
            let mut remote = Remote {
                ops: ops_tx,
                replies: replies_rx,
                render_ms_source,
            };
            bisect(&mut remote, &options)
        });
    let protocol = match spawned {
        Ok(handle) => handle,
        Err(error) => {
            FrameClock::stop(world);
            world.insert_resource(FramewiseBisectReport(Err(format!(
                "cannot start the bisection's thread: {error}"
            ))));
            return;
        }
    };
    let pause = Pause::start(world);
    world.insert_resource(Running {
        ops: Mutex::new(ops_rx),
        replies: replies_tx,
        protocol: Some(protocol),
        scene: WorldScene::default(),
        clock,
        frame_asked: false,
        pause: Some(pause),
    });
}

/// Answers the protocol until it asks for a frame (or ends).
fn serve(world: &mut World) {
    let Some(mut running) = world.remove_resource::<Running>() else {
        return;
    };
    // The update ending now was drawn in the state it began with.
    running.clock.updated(world);
    if running.frame_asked {
        let cost = running
            .clock
            .ready(world)
            .or_else(|| running.clock.stalled().then(|| FrameClock::untimed(world)));
        let Some(cost) = cost else {
            // Not measured yet: the game runs another update.
            world.insert_resource(running);
            return;
        };
        running.frame_asked = false;
        // A closed channel means the protocol ended; the next receive says so.
        let _ = running.replies.send(Reply::Frame(cost));
    }
    loop {
        let op = match running.ops.lock() {
            Ok(ops) => ops.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        let reply = match op {
            Ok(Op::Frame) => match running.clock.ready(world) {
                // An update drawn in this state already has its measurements in.
                Some(cost) => Reply::Frame(cost),
                None => {
                    running.frame_asked = true;
                    world.insert_resource(running);
                    return;
                }
            },
            Ok(Op::Candidates) => Reply::Candidates(running.scene.candidates(world)),
            Ok(Op::Hide(id)) => {
                running.clock.changed();
                Reply::Done(running.scene.hide(world, &id))
            }
            Ok(Op::Show(id)) => {
                running.clock.changed();
                Reply::Done(running.scene.show(world, &id))
            }
            Ok(Op::Snapshot) => Reply::Snapshot(WorldScene::snapshot(world)),
            Err(_) => break, // the protocol's thread dropped its sender: it ended
        };
        let _ = running.replies.send(reply);
    }
    finish(world, running);
}

/// The protocol ended: resume the game, keep and write the report.
fn finish(world: &mut World, mut running: Running) {
    FrameClock::stop(world);
    if let Some(pause) = running.pause.take() {
        pause.end(world);
    }
    let result = match running.protocol.take().map(JoinHandle::join) {
        Some(Ok(Ok(report))) => Ok(report),
        Some(Ok(Err(error))) => Err(error.to_string()),
        Some(Err(_)) | None => Err("the bisection's thread panicked".to_owned()),
    };
    match &result {
        Ok(report) => write_report(report),
        Err(error) => say!("framewise: bisection failed: {error}"),
    }
    world.insert_resource(FramewiseBisectReport(result));
}

/// Runs at the end of every update: starts a bisection when asked (a message, or the
/// plugin's `bisect_at_update` setting), and serves the one under way.
pub(crate) fn drive_bisection(
    world: &mut World,
    mut cursor: Local<MessageCursor<FramewiseBisectRequest>>,
    mut updates: Local<u64>,
) {
    *updates += 1;
    let asked = world
        .get_resource::<Messages<FramewiseBisectRequest>>()
        .and_then(|messages| cursor.read(messages).last().copied())
        .map(|request| request.0)
        .or_else(|| {
            world
                .get_resource::<BisectAt>()
                .filter(|at| at.updates == *updates)
                .map(|at| at.options)
        });
    if let Some(options) = asked {
        if !world.contains_resource::<Running>() {
            start(world, options);
        }
    }
    serve(world);
}
