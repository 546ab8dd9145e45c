//! The deriver on synthetic frames: hitches and their limits, heartbeats, usermarks,
//! session-end and the profile.

use framewise_format::model::{
    CounterKind, CounterValue, CpuSpan, Frame, Lane, Mark, MarkKind, SymId, Symbol, SymbolKind,
    SymbolTable,
};
use framewise_incidents::derive::{Deriver, SessionFacts, HEARTBEAT_PLAY_NS, SESSION_CAP};
use framewise_incidents::Record;

const MS: u64 = 1_000_000;
const PHASE: SymId = 1;
const THREAD: SymId = 2;
const UPDATE: SymId = 3;
const REBUILD: SymId = 4;
const PIPELINES: SymId = 5;
const ENTITIES: SymId = 6;
const USERMARK: SymId = 7;
const REC: SymId = 8;

fn symbols() -> SymbolTable {
    let mut table = SymbolTable::new();
    let scope = |line| SymbolKind::Scope {
        file: "src/game.rs".into(),
        line,
    };
    for (id, kind, name) in [
        (PHASE, SymbolKind::Phase, "play"),
        (THREAD, SymbolKind::Thread, "main"),
        (UPDATE, scope(10), "update"),
        (REBUILD, scope(20), "rebuild_flow_fields"),
        (
            PIPELINES,
            SymbolKind::Counter(CounterKind::Sum),
            "pipelines_created",
        ),
        (
            ENTITIES,
            SymbolKind::Counter(CounterKind::Gauge),
            "entities",
        ),
        (USERMARK, SymbolKind::Mark, "usermark"),
        (REC, scope(30), "rec"),
    ] {
        table.insert(Symbol {
            id,
            kind,
            name: name.into(),
        });
    }
    table
}

/// A stream of frames, each beginning where the previous period ended.
struct Frames {
    next_index: u64,
    begin_ns: u64,
}

impl Frames {
    fn new() -> Self {
        Self {
            next_index: 0,
            begin_ns: 1_000 * MS,
        }
    }

    /// A frame of `period_ns` whose work is one `update` scope: three quarters of the
    /// period, or `rebuild_ns` of `rebuild_flow_fields` nested in it and 3 ms more.
    fn frame(&mut self, period_ns: u64, rebuild_ns: u64, pipelines: i64) -> Frame {
        let begin = self.begin_ns;
        let update_ns = if rebuild_ns > 0 {
            rebuild_ns + 3 * MS
        } else {
            period_ns * 3 / 4
        };
        let mut spans = vec![CpuSpan {
            scope: UPDATE,
            depth: 0,
            start_ns: begin,
            end_ns: begin + update_ns,
        }];
        if rebuild_ns > 0 {
            spans.push(CpuSpan {
                scope: REBUILD,
                depth: 1,
                start_ns: begin,
                end_ns: begin + rebuild_ns.min(update_ns),
            });
        }
        let frame = Frame {
            index: self.next_index,
            phase: Some(PHASE),
            cpu_begin_ns: begin,
            cpu_end_ns: begin + update_ns,
            lanes: vec![Lane {
                thread: THREAD,
                spans,
                dropped_spans: 0,
            }],
            counters: vec![
                CounterValue {
                    counter: PIPELINES,
                    value: pipelines,
                },
                CounterValue {
                    counter: ENTITIES,
                    value: 1000,
                },
            ],
            ..Frame::default()
        };
        self.next_index += 1;
        self.begin_ns += period_ns;
        frame
    }
}

fn facts() -> SessionFacts {
    SessionFacts {
        build: Some("b7".into()),
        situation: vec![
            ("view".into(), "top".into()),
            ("mode".into(), "demo".into()),
        ],
        regime: None,
        session: Some("00112233445566778899aabbccddeeff".into()),
        automated: false,
        wall_start_unix_ns: 1_796_142_000_000 * MS,
        frame_budget_ns: None,
        motion_settings: Vec::new(),
        world_inputs: Vec::new(),
    }
}

fn run(frames: impl IntoIterator<Item = Frame>) -> (Vec<Record>, Deriver) {
    let symbols = symbols();
    let mut deriver = Deriver::new(facts());
    let mut out = Vec::new();
    for frame in frames {
        deriver.observe(&frame, &symbols, &mut out);
    }
    deriver.finish(&symbols, &mut out);
    (out, deriver)
}

/// The records `pick` keeps, in order.
fn pick<'r, T>(records: &'r [Record], pick: impl Fn(&'r Record) -> Option<&'r T>) -> Vec<&'r T> {
    records.iter().filter_map(pick).collect()
}

fn hitches(records: &[Record]) -> Vec<&framewise_incidents::HitchRecord> {
    pick(records, |r| match r {
        Record::Hitch(h) => Some(h),
        _ => None,
    })
}

#[test]
fn one_long_frame_is_one_hitch_with_its_evidence() {
    let mut f = Frames::new();
    let mut frames: Vec<Frame> = (0..120).map(|_| f.frame(16 * MS, 0, 0)).collect();
    frames.push(f.frame(80 * MS, 55 * MS, 0)); // frame 120: a synchronous rebuild
    frames.extend((0..30).map(|_| f.frame(16 * MS, 0, 0)));
    let (records, _) = run(frames);
    let hitches = hitches(&records);
    assert_eq!(hitches.len(), 1, "{records:#?}");
    let h = hitches[0];
    assert_eq!(h.frame, 120);
    assert_eq!(h.frame_ms, 80.0);
    assert_eq!(h.median_ms, Some(16.0));
    assert_eq!(h.threshold_ms, 32.0);
    assert_eq!(h.common.phase.as_deref(), Some("play"));
    assert_eq!(h.common.build.as_deref(), Some("b7"));
    assert_eq!(
        h.common.ctx.as_deref(),
        Some("mode=demo,view=top"),
        "canonical situation"
    );
    assert_eq!(
        h.common.at, "2026-12-01T16:20:02.978Z",
        "wall start + the frame's end"
    );
    assert_eq!(h.scopes.first().map(|s| s.name.as_str()), Some("update"));
    assert_eq!(
        h.scopes.first().and_then(|s| s.site.as_deref()),
        Some("src/game.rs:10")
    );
    assert_eq!(h.delta.get("pipelines_created"), Some(&0));
    assert_eq!(
        h.delta.get("entities"),
        Some(&0),
        "a gauge's change in the frame"
    );
    let top = h.classification.first().expect("classified");
    assert_eq!(top.guess, "long-cpu-scope", "{:#?}", h.classification);
    assert_eq!(top.scope.as_deref(), Some("rebuild_flow_fields"));
    assert!(h
        .footprint
        .key
        .starts_with("hitch|play|long-cpu-scope|section:rebuild_flow_fields"));
    assert!(
        h.footprint.key.ends_with("|ctx:mode=demo,view=top"),
        "{}",
        h.footprint.key
    );
    assert_eq!(h.footprint.id.len(), 8);
}

#[test]
fn hitches_within_a_second_give_one_record_that_counts_the_rest() {
    let mut f = Frames::new();
    let mut frames: Vec<Frame> = (0..100).map(|_| f.frame(16 * MS, 0, 0)).collect();
    // Three hitches inside one second; the second is the worst.
    frames.push(f.frame(60 * MS, 0, 0)); // 100
    frames.extend((0..10).map(|_| f.frame(16 * MS, 0, 0)));
    frames.push(f.frame(90 * MS, 0, 2)); // 111
    frames.extend((0..10).map(|_| f.frame(16 * MS, 0, 0)));
    frames.push(f.frame(70 * MS, 0, 0)); // 122
    frames.extend((0..100).map(|_| f.frame(16 * MS, 0, 0)));
    let (records, deriver) = run(frames);
    let hitches = hitches(&records);
    assert_eq!(hitches.len(), 1);
    assert_eq!(hitches[0].frame, 111, "the worst hitch of the window");
    assert_eq!(hitches[0].dropped_since_last, Some(2));
    assert_eq!(hitches[0].classification[0].guess, "pipeline-compile");
    assert_eq!(deriver.dropped().hitch, 2);
    let Some(Record::SessionEnd(end)) = records.last() else {
        panic!("session-end is last: {records:#?}");
    };
    assert_eq!(end.dropped.hitch, 2);
    assert_eq!(end.written.hitch, 1);
    assert_eq!(end.frames, 223);
}

#[test]
fn heartbeats_count_play_not_pauses() {
    let mut f = Frames::new();
    let play_frames = (HEARTBEAT_PLAY_NS / (20 * MS)) as usize;
    // Half the play, a long pause, then the other half: one heartbeat, at the end.
    let mut frames: Vec<Frame> = (0..play_frames / 2)
        .map(|_| f.frame(20 * MS, 0, 0))
        .collect();
    frames.extend((0..1000).map(|_| {
        let mut frame = f.frame(20 * MS, 0, 0);
        frame.paused = true;
        frame
    }));
    frames.extend((0..play_frames / 2 + 2).map(|_| f.frame(20 * MS, 0, 0)));
    let (records, _) = run(frames);
    let beats = pick(&records, |r| match r {
        Record::Heartbeat(b) => Some(b),
        _ => None,
    });
    assert_eq!(beats.len(), 1, "10 s of play, not 30 s of session");
    let beat = beats[0];
    assert_eq!(beat.window.frames as usize, play_frames);
    assert_eq!(beat.window.median_ms, Some(20.0));
    assert_eq!(beat.window.seconds, Some(10.0));
    assert_eq!(beat.counters.get("entities"), Some(&1000));
    assert_eq!(beat.hitches, 0);
    let Some(Record::SessionEnd(end)) = records.last() else {
        panic!("session-end is last");
    };
    assert_eq!(end.paused_frames, 1000);
    assert_eq!(end.written.heartbeat, 1);
}

#[test]
fn a_usermark_freezes_the_trailing_window() {
    let mut f = Frames::new();
    let mut frames: Vec<Frame> = (0..400).map(|_| f.frame(16 * MS, 0, 0)).collect();
    frames.push(f.frame(45 * MS, 0, 1)); // 400
    frames.extend((0..20).map(|_| f.frame(16 * MS, 0, 0)));
    let mut marked = f.frame(16 * MS, 0, 0); // 421
    marked.marks.push(Mark {
        name: USERMARK,
        thread: THREAD,
        at_ns: marked.cpu_begin_ns,
        kind: MarkKind::User {
            window_ns: 5_000 * MS,
            note: "felt a stutter".into(),
        },
    });
    frames.push(marked);
    frames.extend((0..5).map(|_| f.frame(16 * MS, 0, 0)));
    let (records, _) = run(frames);
    let marks = pick(&records, |r| match r {
        Record::Usermark(m) => Some(m),
        _ => None,
    });
    assert_eq!(marks.len(), 1);
    let mark = marks[0];
    assert_eq!(mark.frame, 421);
    assert_eq!(mark.note.as_deref(), Some("felt a stutter"));
    assert_eq!(mark.window.ms, Some(5000.0));
    // 5 s of 16 ms frames before the mark (the frame open at the mark has no period yet).
    assert!(mark.window.frames >= 300, "{:?}", mark.window);
    assert_eq!(mark.worst_frames.len(), 5);
    assert_eq!(mark.worst_frames[0].frame, 400);
    assert_eq!(mark.worst_frames[0].frame_ms, 45.0);
    assert_eq!(
        mark.worst_frames[0].classification[0].guess,
        "pipeline-compile"
    );
    assert!(mark
        .footprint
        .key
        .starts_with("usermark|play|pipeline-compile"));
}

#[test]
fn the_session_cap_counts_what_it_drops() {
    let mut f = Frames::new();
    let mut frames = Vec::new();
    // A hitch every 1.5 s, more than the cap allows.
    for _ in 0..(SESSION_CAP + 20) {
        frames.extend((0..90).map(|_| f.frame(16 * MS, 0, 0)));
        frames.push(f.frame(100 * MS, 0, 0));
    }
    // The last frame has no period until another follows it.
    frames.push(f.frame(16 * MS, 0, 0));
    let (records, _) = run(frames);
    let Some(Record::SessionEnd(end)) = records.last() else {
        panic!("session-end is last");
    };
    assert_eq!(end.written.hitch, SESSION_CAP);
    assert_eq!(end.dropped.hitch, 20);
    assert_eq!(hitches(&records).len() as u64, SESSION_CAP);
}

#[test]
fn profile_is_due_every_two_seconds_and_checks_the_budget() {
    let symbols = symbols();
    let mut deriver = Deriver::new(facts());
    let mut f = Frames::new();
    let mut out = Vec::new();
    let mut profiles = Vec::new();
    for _ in 0..300 {
        deriver.observe(&f.frame(20 * MS, 0, 0), &symbols, &mut out);
        profiles.extend(deriver.profile_due(&symbols));
    }
    // 300 frames of 20 ms: 6 s, a profile at 2 s and 4 s (and at 6 s if the last frame
    // reached it).
    assert!((2..=3).contains(&profiles.len()), "{}", profiles.len());
    let last = profiles.last().expect("a profile");
    assert_eq!(last.frame.median_ms, Some(20.0));
    assert_eq!(last.frame.fps, Some(50.0));
    assert_eq!(last.budgets.checked, 1);
    assert_eq!(
        last.budgets.breached,
        ["frame_ms"],
        "20 ms is over the 16.67 ms budget"
    );
    // Work is 15 ms of every 20 ms frame: under the 16 ms jank bar.
    assert_eq!(last.class.as_deref(), Some("STEADY"));
    assert!(!last.paused);
}

#[test]
fn a_span_naming_no_symbol_with_a_huge_id_is_left_out_not_allocated_for() {
    // A damaged capture fed after the fact (`hitches --append`): a span whose scope id no
    // symbol defines, at the top of the id range. Sizing the per-scope scratch by it would
    // ask for 2^32 entries; the span is left out and the rest of the frame still counts.
    let mut frames = Frames::new();
    let mut all: Vec<Frame> = (0..120).map(|_| frames.frame(16 * MS, 0, 0)).collect();
    let mut damaged = frames.frame(80 * MS, 0, 0);
    damaged.lanes[0].spans.push(CpuSpan {
        scope: u32::MAX,
        depth: 1,
        start_ns: damaged.cpu_begin_ns,
        end_ns: damaged.cpu_begin_ns + MS,
    });
    all.push(damaged);
    all.extend((0..120).map(|_| frames.frame(16 * MS, 0, 0)));
    let (records, _) = run(all);
    let hitch = hitches(&records);
    assert_eq!(hitch.len(), 1, "{records:#?}");
    assert_eq!(hitch[0].frame, 120);
}

#[test]
fn profile_states_counters_and_scopes_over_its_window() {
    // 100 frames of 20 ms: `update` is 15 ms of each; 10 of them nest a 5 ms rebuild (its
    // `update` then runs 8 ms); pipelines_created counts 0..=9 in turn, entities 1000.
    let symbols = symbols();
    let mut deriver = Deriver::new(facts());
    let mut f = Frames::new();
    let mut out = Vec::new();
    for i in 0..100i64 {
        let rebuild_ns = if i % 10 == 5 { 5 * MS } else { 0 };
        deriver.observe(&f.frame(20 * MS, rebuild_ns, i % 10), &symbols, &mut out);
    }
    let profile = deriver.profile(&symbols);
    // Counters and scopes need no period: all 100 frames count, the newest (whose period
    // is not known yet) included, so frame 99's 9 is the last.
    let pipelines = &profile.counter_stats["pipelines_created"];
    assert_eq!(pipelines.count, 100);
    assert_eq!((pipelines.min, pipelines.max, pipelines.last), (0, 9, 9));
    // 10 × (0 + … + 9) = 450 over 100 frames.
    assert_eq!(pipelines.avg, 4.5);
    let entities = &profile.counter_stats["entities"];
    assert_eq!(
        (entities.min, entities.max, entities.avg),
        (1000, 1000, 1000.0)
    );
    let update = &profile.scopes["update"];
    assert_eq!(update.count, 100);
    assert_eq!((update.min_ms, update.max_ms), (8.0, 15.0));
    assert_eq!(update.p50_ms, Some(15.0));
    assert_eq!(update.p95_ms, Some(15.0));
    // The rebuild ran in 10 of the frames: a median, but no p95 under 20 frames.
    let rebuild = &profile.scopes["rebuild_flow_fields"];
    assert_eq!(rebuild.count, 10);
    assert_eq!(
        (rebuild.avg_ms, rebuild.p50_ms, rebuild.p95_ms),
        (5.0, Some(5.0), None)
    );
    // What was written reads back whole.
    let json = serde_json::to_value(&profile).expect("profile serializes");
    assert_eq!(json["counter_stats"]["pipelines_created"]["max"], 9);
    assert_eq!(json["scopes"]["update"]["p95_ms"], 15.0);
    assert!(json["scopes"]["rebuild_flow_fields"]
        .get("p95_ms")
        .is_none());
}

/// `spans` (scope, depth, duration) appended to `frame`'s lane in pre-order, each child
/// starting where its parent starts, each span at depth 0 after the frame's other work.
fn with_spans(mut frame: Frame, spans: &[(SymId, u32, u64)]) -> Frame {
    let start = frame.cpu_begin_ns;
    frame.lanes[0]
        .spans
        .extend(spans.iter().map(|&(scope, depth, duration_ns)| CpuSpan {
            scope,
            depth,
            start_ns: start,
            end_ns: start + duration_ns,
        }));
    frame
}

#[test]
fn a_recursive_scope_is_counted_once_in_its_inclusive_total() {
    // `summarize`'s meaning (the analysis's fold): an instance of a scope inside another
    // instance of it is already in the outer one's inclusive time.
    const US: u64 = 1_000;
    let symbols = symbols();
    let mut deriver = Deriver::new(facts());
    let mut f = Frames::new();
    let mut out = Vec::new();
    for i in 0..100 {
        let frame = f.frame(20 * MS, 0, 0);
        let frame = if i % 2 == 0 {
            // `rec` nested 4 deep, 300 µs of its own per level: 1.2 ms inclusive.
            with_spans(
                frame,
                &[
                    (REC, 0, 1_200 * US),
                    (REC, 1, 900 * US),
                    (REC, 2, 600 * US),
                    (REC, 3, 300 * US),
                ],
            )
        } else {
            // Another scope in between (rec > rebuild > rec): 1 ms inclusive for `rec`,
            // 700 µs for `rebuild_flow_fields`.
            with_spans(
                frame,
                &[(REC, 0, MS), (REBUILD, 1, 700 * US), (REC, 2, 400 * US)],
            )
        };
        deriver.observe(&frame, &symbols, &mut out);
    }
    let profile = deriver.profile(&symbols);
    let rec = &profile.scopes["rec"];
    assert_eq!((rec.min_ms, rec.max_ms), (1.0, 1.2), "{rec:?}");
    let rebuild = &profile.scopes["rebuild_flow_fields"];
    assert_eq!(rebuild.max_ms, 0.7, "{rebuild:?}");
    // `update` nests nothing of its own: 15 ms per frame.
    assert_eq!(profile.scopes["update"].max_ms, 15.0);
}

#[test]
fn a_recursive_scope_in_a_hitch_is_its_inclusive_time() {
    // A 60 ms hitch frame whose `rec` runs nested 4 deep, 10 ms of its own per level: 40
    // ms inclusive (a sum over the levels, 100 ms, would be longer than the frame).
    let mut f = Frames::new();
    let mut frames: Vec<Frame> = (0..120).map(|_| f.frame(16 * MS, 0, 0)).collect();
    let mut hitch = f.frame(60 * MS, 0, 0);
    // `update` runs 5 ms of it, `rec` the rest.
    hitch.lanes[0].spans[0].end_ns = hitch.cpu_begin_ns + 5 * MS;
    frames.push(with_spans(
        hitch,
        &[
            (REC, 0, 40 * MS),
            (REC, 1, 30 * MS),
            (REC, 2, 20 * MS),
            (REC, 3, 10 * MS),
        ],
    ));
    frames.extend((0..30).map(|_| f.frame(16 * MS, 0, 0)));
    let (records, _) = run(frames);
    let hitches = hitches(&records);
    assert_eq!(hitches.len(), 1, "{records:#?}");
    let h = hitches[0];
    assert_eq!(h.frame, 120);
    let rec = h
        .scopes
        .iter()
        .find(|s| s.name == "rec")
        .expect("rec listed");
    assert_eq!(rec.ms, 40.0, "{:#?}", h.scopes);
    assert!(
        h.scopes.iter().all(|s| s.ms <= h.frame_ms),
        "no scope is longer than its frame: {:#?}",
        h.scopes
    );
    let top = h.classification.first().expect("classified");
    assert_eq!(top.guess, "long-cpu-scope", "{:#?}", h.classification);
    assert_eq!(top.scope.as_deref(), Some("rec"));
    assert!(
        top.evidence.contains("40"),
        "the evidence states 40 ms: {}",
        top.evidence
    );
}

#[test]
fn profile_counts_the_newest_frame_and_leaves_out_paused_ones() {
    // `summarize` takes counters and scopes over every non-paused frame, the last included
    // (it needs no period for them). 50 frames: frame 49, the newest, draws 500 pipelines
    // and runs a 20 ms rebuild; frame 20 is paused and would say 9,999.
    let symbols = symbols();
    let mut deriver = Deriver::new(facts());
    let mut f = Frames::new();
    let mut out = Vec::new();
    for i in 0..50u64 {
        let mut frame = match i {
            49 => f.frame(30 * MS, 20 * MS, 500),
            20 => f.frame(16 * MS, 40 * MS, 9_999),
            _ => f.frame(16 * MS, 0, 1),
        };
        frame.paused = i == 20;
        deriver.observe(&frame, &symbols, &mut out);
    }
    let profile = deriver.profile(&symbols);
    assert_eq!(profile.frame_index, 49);
    assert_eq!(profile.window.frames, 50);
    let pipelines = &profile.counter_stats["pipelines_created"];
    assert_eq!(pipelines.count, 49, "the paused frame is left out");
    assert_eq!(
        (pipelines.min, pipelines.max, pipelines.last),
        (1, 500, 500),
        "{pipelines:?}"
    );
    // (48 × 1 + 500) / 49.
    assert_eq!(pipelines.avg, (548.0f64 / 49.0 * 1000.0).round() / 1000.0);
    let rebuild = &profile.scopes["rebuild_flow_fields"];
    assert_eq!((rebuild.count, rebuild.max_ms), (1, 20.0), "{rebuild:?}");
    let update = &profile.scopes["update"];
    assert_eq!(update.count, 49);
    assert_eq!(update.max_ms, 23.0, "the newest frame's 20 + 3 ms");
    // Frame times still need periods: the newest frame's is unknown, the paused one's left
    // out, so 48 periods of 16 ms.
    assert_eq!(profile.frame.median_ms, Some(16.0));
}
