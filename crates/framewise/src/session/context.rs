//! What the host declares about the open frame, from any thread: phase, pause, usermarks,
//! GPU submissions and results, the frame graph, workloads and sampled gauges.

use std::time::Duration;

use framewise_format::model::{
    CounterTrack, GpuQueueFrame, Mark, MarkKind, PassWorkload, Sample, SymId, SymbolTable,
    TopoEdge, TopoPass, TopoResource, Topology, Workload,
};

use crate::gpu::{GpuPassTiming, GpuQueue, GpuTicket, Label, PassLabel};
use crate::handoff::{Delivery, Message};
use crate::intern::{self, NamedKind};
use crate::report::UsermarkRecord;
use crate::thread;
use crate::topology::{TopologyDesc, TopologyId};
use crate::{CaptureLevel, Gauge};

use super::{Session, FRAME_HISTORY, SAMPLES_PER_TRACK};

impl Session {
    /// Sets the phase (`boot`, `load`, `play`…) carried by every frame from the one open now.
    pub fn set_phase(&self, phase: &str) {
        let symbol = intern::intern(NamedKind::Phase, phase);
        self.inner.staging.lock().phase = Some(symbol);
    }

    /// Declares frames paused (recorded, but excluded from budgets and hitches) from the one
    /// open now.
    pub fn set_paused(&self, paused: bool) {
        self.inner.staging.lock().paused = paused;
    }

    /// Flags the trailing default window (5 s unless configured) as "it felt wrong here".
    /// Bind it to a hotkey.
    pub fn usermark(&self, note: &str) -> UsermarkRecord {
        self.usermark_with_window(note, self.inner.usermark_window)
    }

    /// Flags the trailing `window` as "it felt wrong here", with a note.
    pub fn usermark_with_window(&self, note: &str, window: Duration) -> UsermarkRecord {
        let at_ns = self.now_ns();
        let window_ns = u64::try_from(window.as_nanos()).unwrap_or(u64::MAX);
        let window_start_ns = at_ns.saturating_sub(window_ns);
        let thread = thread::current_thread_symbol().unwrap_or(SymId::MAX);
        let name = intern::intern(NamedKind::Mark, "usermark");
        let mut staging = self.inner.staging.lock();
        let frame = staging.index;
        // Walk back from the open frame to the one containing the window's start, as far as
        // the session remembers.
        let mut first_frame = frame;
        let clock = &self.inner.clock;
        let mut begin_ns = clock.ns(staging.begin_ticks);
        while begin_ns > window_start_ns && first_frame > 0 {
            let previous = first_frame - 1;
            if frame - previous >= FRAME_HISTORY as u64 {
                break;
            }
            first_frame = previous;
            begin_ns = clock.ns(staging.history_begin_ticks.get(previous));
        }
        let record = UsermarkRecord {
            note: note.to_owned(),
            at_ns,
            window_ns,
            window_start_ns,
            first_frame,
            frame,
        };
        if self.is_finished() {
            // No frame will carry it.
            return record;
        }
        staging.set = true;
        staging.marks.push(Mark {
            name,
            thread,
            at_ns,
            kind: MarkKind::User {
                window_ns,
                note: note.to_owned(),
            },
        });
        staging.usermarks.push(record.clone());
        record
    }

    /// The handle of a GPU queue declared on the builder.
    pub fn gpu_queue(&self, name: &str) -> Option<GpuQueue> {
        self.inner
            .queues
            .iter()
            .find(|(queue_name, _)| queue_name == name)
            .map(|(_, queue)| *queue)
    }

    /// Interns a pass label (once; reuse the handle every frame).
    pub fn pass_label(&self, label: &str) -> PassLabel {
        PassLabel {
            symbol: intern::intern(NamedKind::Pass, label),
        }
    }

    /// Interns a pipeline label.
    pub fn pipeline_label(&self, label: &str) -> Label {
        Label {
            symbol: intern::intern(NamedKind::Pipeline, label),
        }
    }

    /// Interns any other label (shader entry points, extra workload names).
    pub fn label(&self, label: &str) -> Label {
        Label {
            symbol: intern::intern(NamedKind::Label, label),
        }
    }

    /// Records that the open frame submitted GPU work on `queue` now. The frame is held
    /// until the ticket is delivered or `gpu_wait_frames` more frames close.
    pub fn gpu_submit(&self, queue: GpuQueue) -> GpuTicket {
        let submit_ns = self.now_ns();
        let mut staging = self.inner.staging.lock();
        if self.is_finished() {
            // No frame will be written: nothing to hold, nothing to keep.
            return GpuTicket {
                frame_index: staging.index,
                queue: queue.symbol,
            };
        }
        if !staging.gpu_queues.iter().any(|q| q.queue == queue.symbol) {
            staging.set = true;
            staging.gpu_queues.push(GpuQueueFrame {
                queue: queue.symbol,
                anchor: framewise_format::model::GpuAnchor {
                    cpu_submit_ns: Some(submit_ns),
                    cpu_readback_ns: None,
                },
            });
        }
        staging.gpu_outstanding += 1;
        GpuTicket {
            frame_index: staging.index,
            queue: queue.symbol,
        }
    }

    /// Hands over a submission's pass timestamps, read back now (any number of frames
    /// later). Results for a frame already written (or dropped) are counted late and ignored;
    /// once the session has finished, they are dropped (nothing is written any more, so a game
    /// that runs on after its frame limit holds nothing for them).
    pub fn gpu_deliver(&self, ticket: GpuTicket, passes: &[GpuPassTiming]) {
        if self.is_finished() {
            return;
        }
        let readback_ns = self.now_ns();
        let mut staging = self.inner.staging.lock();
        staging.set = true;
        let first_pass = staging.delivered_passes.len();
        staging.delivered_passes.extend_from_slice(passes);
        staging.deliveries.push(Delivery {
            frame_index: ticket.frame_index,
            queue: ticket.queue,
            readback_ns,
            first_pass,
            pass_count: passes.len(),
        });
    }

    /// Registers a frame graph (interning its names and hashing it by content) and, at
    /// level 1 and up, writes it once. Register once per distinct graph; then
    /// [`set_topology`](Self::set_topology) each frame.
    pub fn register_topology(&self, desc: &TopologyDesc) -> TopologyId {
        let mut topology = Topology {
            id: 0,
            passes: desc
                .passes
                .iter()
                .map(|pass| TopoPass {
                    label: intern::intern(NamedKind::Pass, &pass.label),
                    kind: pass.kind,
                    culled: pass.culled,
                    scope: pass
                        .scope
                        .as_deref()
                        .map(|scope| intern::intern_scope(scope, "", 0)),
                })
                .collect(),
            resources: desc
                .resources
                .iter()
                .map(|resource| TopoResource {
                    label: intern::intern(NamedKind::Resource, &resource.label),
                    kind: resource.kind,
                    format: resource
                        .format
                        .as_deref()
                        .map(|format| intern::intern(NamedKind::Label, format)),
                    usage: resource
                        .usage
                        .as_deref()
                        .map(|usage| intern::intern(NamedKind::Label, usage)),
                    declared_bytes: resource.declared_bytes,
                    transient: resource.transient,
                    imported: resource.imported,
                    first_use: resource.first_use,
                    last_use: resource.last_use,
                })
                .collect(),
            edges: desc
                .edges
                .iter()
                .map(|edge| TopoEdge {
                    pass: edge.pass,
                    resource: edge.resource,
                    access: edge.access,
                    version: edge.version,
                })
                .collect(),
        };
        let mut referenced = Vec::new();
        topology.referenced_symbols(&mut referenced);
        let mut table = SymbolTable::new();
        intern::copy_into(&mut table, &referenced);
        topology.id = framewise_format::topology_id(&topology, &table);
        let id = TopologyId(topology.id);
        let first_time = self.inner.topologies.lock().insert(id.0);
        if first_time && self.inner.level >= CaptureLevel::Structure && !self.is_finished() {
            self.inner
                .shared
                .send(Message::Topology(Box::new(topology)));
        }
        id
    }

    /// Records a scene census (at every capture level): a `CENS` record in the capture,
    /// written in order among the frames, and — when the live incident log is on — the
    /// session's censuses so far in `.framewise/census.json`. Take one on demand (a key, a
    /// level load, a test), never per frame: the census is cloned here and serialized on the
    /// writer thread. A census without a `frame` gets the open frame's index. Returns
    /// whether it was sent (false once the session has finished).
    pub fn record_census(&self, census: &framewise_census::Census) -> bool {
        if self.is_finished() {
            return false;
        }
        let mut census = census.clone();
        if census.frame.is_none() {
            census.frame = Some(self.inner.staging.lock().index);
        }
        self.inner.shared.send(Message::Census(Box::new(census)));
        true
    }

    /// Declares the frame graph the open frame runs (level 1 and up; ignored below).
    pub fn set_topology(&self, topology: TopologyId) {
        if self.inner.level >= CaptureLevel::Structure {
            let mut staging = self.inner.staging.lock();
            staging.topology = Some(topology.0);
            staging.set = true;
        }
    }

    /// Records one pass's workload in the open frame (level 2 and up; ignored below, and once
    /// the session has finished). `Workload`'s `None` fields mean unknown, which is not zero.
    pub fn record_workload(&self, pass: PassLabel, workload: Workload) {
        if self.inner.level >= CaptureLevel::Workload && !self.is_finished() {
            let mut staging = self.inner.staging.lock();
            staging.set = true;
            staging.workloads.push(PassWorkload {
                pass: pass.symbol,
                workload,
            });
        }
    }

    /// Samples a gauge's value now into its sampled track (`CNTR` records: value over time,
    /// not per frame), for levels sampled off the frame clock such as memory in use.
    pub fn sample(&self, gauge: &Gauge, value: i64) {
        let at_ns = self.now_ns();
        let counter = gauge.symbol();
        let full = {
            let mut staging = self.inner.staging.lock();
            let samples = staging.samples.entry(counter).or_default();
            samples.push(Sample { at_ns, value });
            (samples.len() >= SAMPLES_PER_TRACK).then(|| std::mem::take(samples))
        };
        if let Some(samples) = full {
            self.inner
                .shared
                .send(Message::CounterTrack(CounterTrack { counter, samples }));
        }
    }
}
