use framewise_analysis::import::chrome::{self, ChromeError};
use framewise_analysis::model::DefectKind;
use framewise_analysis::{summarize, Capture, LoadOptions};
use proptest::prelude::*;

/// A tracing-chrome-like trace: main thread frames of 16 ms with update/render inside, a
/// render thread with B/E spans, counters, marks and metadata.
pub fn trace(frames: usize) -> String {
    let mut ev = vec![
        r#"{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"game"}}"#.to_owned(),
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}}"#.to_owned(),
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"render"}}"#.to_owned(),
    ];
    for i in 0..frames {
        let t = 1000.0 + i as f64 * 16000.0;
        ev.push(format!(
            r#"{{"ph":"X","name":"frame","ts":{t},"dur":12000,"pid":1,"tid":1}}"#
        ));
        ev.push(format!(
            r#"{{"ph":"X","name":"update","ts":{},"dur":4000,"pid":1,"tid":1,"args":{{".file":"src/update.rs",".line":12}}}}"#,
            t + 100.0
        ));
        ev.push(format!(
            r#"{{"ph":"B","name":"draw","ts":{},"pid":1,"tid":2}}"#,
            t + 5000.0
        ));
        ev.push(format!(
            r#"{{"ph":"E","ts":{},"pid":1,"tid":2}}"#,
            t + 11000.0
        ));
        ev.push(format!(
            r#"{{"ph":"C","name":"draw_calls","ts":{},"pid":1,"args":{{"value":{}}}}}"#,
            t + 11000.0,
            100 + i
        ));
        if i == 3 {
            ev.push(format!(
                r#"{{"ph":"i","name":"checkpoint","ts":{},"pid":1,"tid":1,"s":"t"}}"#,
                t + 50.0
            ));
        }
    }
    format!("[{}]", ev.join(",\n"))
}

/// The note that says which frame span was auto-picked.
fn auto_pick_note(c: &Capture) -> &str {
    c.meta()
        .notes
        .iter()
        .find(|n| n.contains("auto-picked"))
        .expect("a note names the pick")
}

#[test]
fn array_form_auto_picks_the_frame_span() {
    let c = chrome::import(trace(30).as_bytes(), &LoadOptions::default()).expect("valid");
    assert_eq!(c.frame_count(), 30);
    assert_eq!(c.frames().period_ns[0], Some(16_000_000));
    assert_eq!(c.frames().row(0).map(|r| r.work_ns()), Some(12_000_000));
    let note = auto_pick_note(&c);
    assert!(
        note.contains("`frame`") && note.contains("game/main"),
        "{note}"
    );
    let s = summarize(&c);
    assert_eq!(
        s.scopes.get("draw").map(|d| (d.count, d.avg)),
        Some((30, Some(6.0))),
        "B/E on another thread, assigned by time"
    );
    assert_eq!(
        s.scopes.get("update").map(|u| u.sites.clone()),
        Some(vec!["src/update.rs:12".to_owned()])
    );
    assert_eq!(s.metric("counter.draw_calls.max"), Some(129.0));
    assert_eq!(c.marks().len(), 1);
    assert_eq!(c.marks()[0].frame_row, 3);
    // The frame span is the frame, not a scope (as long as the frame, it took all of every
    // hitch's excess); what ran inside it is at the top.
    assert!(s.scopes.get("frame").is_none());
    let with_spans = chrome::import(
        trace(3).as_bytes(),
        &LoadOptions::default().with_spans(true),
    )
    .expect("valid");
    let main: Vec<_> = with_spans
        .spans()
        .expect("kept")
        .cpu
        .frame(0)
        .iter()
        .map(|s| (with_spans.scopes()[s.scope as usize].name.as_str(), s.depth))
        .collect();
    assert!(main.contains(&("update", 0)), "{main:?}");
    assert!(!main.iter().any(|&(name, _)| name == "frame"), "{main:?}");
}

#[test]
fn object_form_and_explicit_frame_span() {
    let text = format!(r#"{{"traceEvents":{},"displayTimeUnit":"ms"}}"#, trace(10));
    let opts = LoadOptions::default().with_frame_span(Some("update".into()));
    let c = chrome::import(text.as_bytes(), &opts).expect("valid");
    assert_eq!(c.frame_count(), 10);
    assert_eq!(c.frames().row(0).map(|r| r.work_ns()), Some(4_000_000));
    assert!(!c.meta().notes.iter().any(|n| n.contains("auto-picked")));
    let missing = LoadOptions::default().with_frame_span(Some("nope".into()));
    assert!(matches!(
        chrome::import(text.as_bytes(), &missing),
        Err(ChromeError::FrameSpanNotFound { .. })
    ));
}

#[test]
fn cut_off_array_is_a_truncated_tail() {
    let full = trace(20);
    let cut = &full[..full.len() * 2 / 3];
    let c = chrome::import(cut.as_bytes(), &LoadOptions::default()).expect("tolerated");
    assert!(c.frame_count() >= 12);
    assert!(c
        .defects()
        .iter()
        .any(|d| d.kind == DefectKind::TruncatedTail && d.offset.is_some()));
}

#[test]
fn unclosed_unknown_and_out_of_order_are_defects() {
    let text = r#"[
{"ph":"X","name":"frame","ts":0,"dur":10,"pid":1,"tid":1},
{"ph":"X","name":"frame","ts":16,"dur":10,"pid":1,"tid":1},
{"ph":"E","ts":9,"pid":1,"tid":2},
{"ph":"B","name":"late","ts":3,"pid":1,"tid":2},
{"ph":"B","name":"open","ts":18,"pid":1,"tid":2},
{"ph":"Q","name":"weird","ts":1,"pid":1,"tid":1},
{"ph":"b","name":"async","ts":1,"pid":1,"tid":1,"id":1},
{"ph":"E","ts":20,"pid":1,"tid":3}
]"#;
    let c = chrome::import(text.as_bytes(), &LoadOptions::default()).expect("tolerated");
    let msgs: Vec<&str> = c.defects().iter().map(|d| d.message.as_str()).collect();
    assert!(
        msgs.iter().any(|m| m.contains("out of timestamp order")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("never closed (e.g. open)")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("unknown phase `Q`")),
        "{msgs:?}"
    );
    assert!(msgs.iter().any(|m| m.contains("no open B")), "{msgs:?}");
    assert!(c.meta().notes.iter().any(|n| n.contains("1 `b`")));
    // The sorted B/E pair became a 6 µs span in frame 0.
    let s = summarize(&c);
    assert_eq!(s.scopes.get("late").and_then(|l| l.max), Some(0.006));
}

/// An `X` event whose `dur` is not a number is a span lost: the defect is `dropped-spans`,
/// so a gate on a scope metric is incomplete (inconclusive), as on a capture whose recorder
/// dropped spans; with an `importer` defect the gate passed on the spans left (half of every
/// frame's `update` runs gone, `scope.update.p95` unchanged).
#[test]
fn an_x_event_without_a_duration_is_a_lost_span() {
    let whole = trace(120);
    let mut n = 0;
    let cut: Vec<String> = whole
        .lines()
        .map(|line| {
            if line.contains(r#""name":"update""#) {
                n += 1;
                if n % 2 == 0 {
                    return line.replace(r#""dur":4000"#, r#""dur":"soon""#);
                }
            }
            line.to_owned()
        })
        .collect();
    let c = chrome::import(cut.join("\n").as_bytes(), &LoadOptions::default()).expect("tolerated");
    let lost: Vec<_> = c
        .defects()
        .iter()
        .filter(|d| d.kind == DefectKind::DroppedSpans)
        .collect();
    assert_eq!(lost.len(), 1, "{:?}", c.defects());
    assert_eq!(lost[0].count, 60);
    let base =
        summarize(&chrome::import(whole.as_bytes(), &LoadOptions::default()).expect("valid"));
    let mut cfg = framewise_analysis::GateConfig::empty();
    cfg.set("scope.update.p95", 0.1).expect("valid");
    let r = framewise_analysis::gate(&base, &summarize(&c), &cfg).expect("names a scope");
    assert_eq!(
        r.verdict,
        framewise_analysis::Verdict::Inconclusive,
        "{:?}",
        r.reasons
    );
}

#[test]
fn overlapping_children_are_clipped_and_reported() {
    let text = r#"[
{"ph":"X","name":"frame","ts":0,"dur":20,"pid":1,"tid":1},
{"ph":"X","name":"parent","ts":0,"dur":10,"pid":1,"tid":1},
{"ph":"X","name":"child","ts":5,"dur":10,"pid":1,"tid":1}
]"#;
    let c = chrome::import(text.as_bytes(), &LoadOptions::default().with_spans(true))
        .expect("tolerated");
    let spans = c.spans().expect("kept").cpu.frame(0);
    assert_eq!(spans[1].end_ns, spans[0].end_ns);
    assert!(c.defects().iter().any(|d| d.message.contains("clipped")));
}

#[test]
fn no_spans_is_an_error() {
    let e = chrome::import(
        br#"[{"ph":"i","name":"x","ts":1}]"#,
        &LoadOptions::default(),
    )
    .expect_err("nothing to frame");
    assert_eq!(
        e.to_string(),
        "chrome trace: no X or B/E spans among 1 events; nothing to make frames from"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn any_prefix_never_panics(cut in 0usize..4000) {
        let full = trace(8);
        let cut = cut.min(full.len());
        let _ = chrome::import(&full.as_bytes()[..cut], &LoadOptions::default());
    }

    #[test]
    fn arbitrary_json_never_panics(text in "[\\[\\]{}\",:a-zA-Z0-9 .-]{0,120}") {
        let _ = chrome::import(text.as_bytes(), &LoadOptions::default().with_spans(true));
    }
}

/// A game trace of `frames` frames: `frame` on the main thread (14 of every 16.667 ms, with
/// `update` and `render` inside) and an audio mixer's `audio_tick` on its own thread three
/// times a frame (1 ms each): the audio tick is the most frequent top-level span. Spans
/// carry their source location, as tracing-chrome writes it.
fn game_with_audio_tick(frames: usize, frame_name: &str) -> String {
    let mut ev = vec![
        r#"{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"game"}}"#.to_owned(),
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}}"#.to_owned(),
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"audio"}}"#.to_owned(),
    ];
    let period_us = 16_666.667;
    for i in 0..frames {
        let t = 500.0 + i as f64 * period_us;
        ev.push(format!(
            r#"{{"ph":"X","name":"{frame_name}","ts":{t:.3},"dur":14000,"pid":1,"tid":1,"args":{{".file":"src/main.rs",".line":40}}}}"#
        ));
        ev.push(format!(
            r#"{{"ph":"X","name":"update","ts":{:.3},"dur":5000,"pid":1,"tid":1,"args":{{".file":"src/update.rs",".line":12}}}}"#,
            t + 100.0
        ));
        ev.push(format!(
            r#"{{"ph":"X","name":"render","ts":{:.3},"dur":8000,"pid":1,"tid":1,"args":{{".file":"src/render.rs",".line":88}}}}"#,
            t + 5200.0
        ));
        for k in 0..3 {
            ev.push(format!(
                r#"{{"ph":"X","name":"audio_tick","ts":{:.3},"dur":1000,"pid":1,"tid":7,"args":{{".file":"src/mixer.rs",".line":7}}}}"#,
                t + 300.0 + k as f64 * period_us / 3.0
            ));
        }
    }
    format!("[{}]", ev.join(",\n"))
}

#[test]
fn a_frequent_audio_tick_on_its_own_thread_does_not_frame_the_trace() {
    let c = chrome::import(
        game_with_audio_tick(600, "frame").as_bytes(),
        &LoadOptions::default(),
    )
    .expect("valid");
    assert_eq!(c.frame_count(), 600);
    assert_eq!(c.frames().row(0).map(|r| r.work_ns()), Some(14_000_000));
    let note = auto_pick_note(&c);
    assert!(
        note.contains("`frame`") && note.contains("game/main") && note.contains("84%"),
        "{note}"
    );
    assert!(
        note.contains("`audio_tick`") && note.contains("game/audio"),
        "the note names the runner-up: {note}"
    );
    // The audio ticks are still there, as scopes of the frames they start in.
    assert_eq!(
        summarize(&c).scopes.get("audio_tick").map(|s| s.calls),
        Some(1800)
    );
}

#[test]
fn the_span_that_tiles_its_thread_frames_the_trace_whatever_its_name() {
    let c = chrome::import(
        game_with_audio_tick(120, "GameLoop").as_bytes(),
        &LoadOptions::default(),
    )
    .expect("valid");
    assert_eq!(c.frame_count(), 120);
    assert!(
        c.meta().notes.iter().any(|n| n.contains("`GameLoop`")),
        "{:?}",
        c.meta().notes
    );
}

#[test]
fn on_a_tie_the_span_named_like_a_frame_frames_the_trace() {
    // Two threads, each tiled back to back by its own span: `tick` (four times as often)
    // and `frame`.
    let mut ev = Vec::new();
    for i in 0..400u64 {
        ev.push(format!(
            r#"{{"ph":"X","name":"tick","ts":{},"dur":4000,"pid":1,"tid":2}}"#,
            i * 4000
        ));
    }
    for i in 0..100u64 {
        ev.push(format!(
            r#"{{"ph":"X","name":"frame","ts":{},"dur":16000,"pid":1,"tid":1}}"#,
            i * 16000
        ));
    }
    let text = format!("[{}]", ev.join(",\n"));
    let c = chrome::import(text.as_bytes(), &LoadOptions::default()).expect("valid");
    assert_eq!(c.frame_count(), 100);
    let note = auto_pick_note(&c);
    assert!(
        note.contains("`frame`") && note.contains("named like a frame"),
        "{note}"
    );
}

#[test]
fn importing_a_large_trace_holds_neither_its_text_nor_a_json_tree() {
    // 3,000 frames of the game trace: several MB of JSON, imported as `summarize`, `diff`
    // and `gate` load it. Holding the text alone would take its size; a serde_json::Value
    // per event took 13 times it. Everything the import allocates, the capture it returns
    // included, stays under the text's size.
    let text = game_with_audio_tick(3_000, "frame");
    let (capture, peak) =
        crate::peak::peak_bytes_during(|| chrome::import(text.as_bytes(), &LoadOptions::default()));
    assert_eq!(capture.expect("valid").frame_count(), 3_000);
    assert!(
        peak < text.len(),
        "the import held {peak} bytes at once for a {} byte trace",
        text.len()
    );
}

/// A gate on `frame.p95` between a whole trace and `cand`.
fn gate_frames(base: &Capture, cand: &Capture) -> framewise_analysis::Verdict {
    let mut cfg = framewise_analysis::GateConfig::empty();
    cfg.set("frame.p95", 0.1).expect("valid");
    framewise_analysis::gate(&summarize(base), &summarize(cand), &cfg)
        .expect("gates frames")
        .verdict
}

/// Text after the document was ignored unsaid: a second, slower trace appended to a file
/// passed a gate on the first one's 200 frames (exit 0). It is damage now, so a comparison
/// is inconclusive; whitespace after the document is no damage.
#[test]
fn text_after_the_trace_is_damage_and_whitespace_is_not() {
    let whole = trace(120);
    let base = chrome::import(whole.as_bytes(), &LoadOptions::default()).expect("valid");
    let spaced = format!("{whole}\n \r\n\t");
    let c = chrome::import(spaced.as_bytes(), &LoadOptions::default()).expect("valid");
    assert!(c.defects().is_empty(), "{:?}", c.defects());
    for tail in [
        format!("\n{}", trace(40)),
        ",{\"ph\":\"X\"}]".to_owned(),
        "x".to_owned(),
    ] {
        let text = format!("{whole}{tail}");
        let c = chrome::import(text.as_bytes(), &LoadOptions::default()).expect("tolerated");
        let after: Vec<_> = c
            .defects()
            .iter()
            .filter(|d| d.message.contains("goes on after the trace ends"))
            .collect();
        assert_eq!(after.len(), 1, "{tail:?}: {:?}", c.defects());
        assert_eq!(after[0].kind, DefectKind::CorruptRange);
        assert_eq!(
            after[0].offset,
            Some(whole.len() as u64 + u64::from(tail.starts_with('\n')))
        );
        assert_eq!(c.frames().len(), 120);
        assert_eq!(
            gate_frames(&base, &c),
            framewise_analysis::Verdict::Inconclusive
        );
    }
}

/// B/E frames, `frame_ms` apart with 4 ms of work in each; the frame whose index is in
/// `open` has no closing `E`.
fn begin_end_frames(frames: u64, open: &[u64]) -> String {
    let mut ev = Vec::new();
    for i in 0..frames {
        let t = i * 10_000;
        ev.push(format!(
            r#"{{"ph":"B","name":"frame","pid":1,"tid":1,"ts":{t}}}"#
        ));
        ev.push(format!(
            r#"{{"ph":"B","name":"work","pid":1,"tid":1,"ts":{}}}"#,
            t + 100
        ));
        ev.push(format!(r#"{{"ph":"E","pid":1,"tid":1,"ts":{}}}"#, t + 4100));
        if !open.contains(&i) {
            ev.push(format!(
                r#"{{"ph":"E","pid":1,"tid":1,"ts":{}}}"#,
                t + 10_000
            ));
        }
    }
    format!("[{}]", ev.join(",\n"))
}

/// A frame span the import lost merged two frames into one of twice the period, and was
/// said only as an `importer` or `dropped-spans` defect: gate, diff and hitches passed on
/// a frame that never happened. It is a `dropped-frames` defect now (a comparison is
/// inconclusive), while the frame in flight when the trace ended is no frame lost.
#[test]
fn a_frame_span_lost_on_import_is_a_frame_lost() {
    let base_text = begin_end_frames(200, &[]);
    let base = chrome::import(base_text.as_bytes(), &LoadOptions::default()).expect("valid");
    assert!(base.defects().is_empty(), "{:?}", base.defects());

    let lost = |text: &str| -> (Capture, Vec<u64>) {
        let c = chrome::import(text.as_bytes(), &LoadOptions::default()).expect("tolerated");
        let counts = c
            .defects()
            .iter()
            .filter(|d| d.kind == DefectKind::DroppedFrames)
            .map(|d| d.count)
            .collect();
        (c, counts)
    };

    // A frame's `E` missing in the middle.
    let (c, counts) = lost(&begin_end_frames(200, &[100]));
    assert_eq!(counts, [1], "{:?}", c.defects());
    assert!(c
        .defects()
        .iter()
        .any(|d| d.message.contains("1 never closed") && d.message.contains("`frame` on")));
    assert_eq!(
        gate_frames(&base, &c),
        framewise_analysis::Verdict::Inconclusive
    );

    // The last frame's `E` missing: the frame in flight, not a frame lost between two.
    let (c, counts) = lost(&begin_end_frames(200, &[199]));
    assert!(counts.is_empty(), "{:?}", c.defects());

    // An `X` frame span without a valid `dur`, or with a `ts` that cannot be placed.
    let whole = trace(120);
    let frame_line = |n: usize| {
        whole
            .lines()
            .filter(|l| l.contains(r#""name":"frame""#))
            .nth(n)
            .expect("a frame")
            .to_owned()
    };
    let x = chrome::import(whole.as_bytes(), &LoadOptions::default()).expect("valid");
    for (from, to) in [
        (r#""dur":12000"#, r#""dur":null"#),
        (r#""dur":12000"#, r#""dur":-5"#),
        (r#""ts":"#, r#""ts":"later","was":"#),
        (r#""ts":"#, r#""ts":1e300,"was":"#),
    ] {
        let line = frame_line(60);
        let text = whole.replacen(&line, &line.replacen(from, to, 1), 1);
        assert_ne!(text, whole, "{to}");
        let (c, counts) = lost(&text);
        assert_eq!(counts, [1], "{to}: {:?}", c.defects());
        assert_eq!(c.frames().len(), 119, "{to}");
        assert_eq!(
            gate_frames(&x, &c),
            framewise_analysis::Verdict::Inconclusive,
            "{to}"
        );
    }
}

#[test]
fn threads_that_share_a_name_stay_apart() {
    // Two worker threads of one process named alike (a thread pool), each running a job
    // over the same time, and a thread of another process of the same name: three lanes,
    // never one with spans laid over each other at depth 0.
    let text = r#"[
{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"game"}},
{"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"game"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
{"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"worker"}},
{"ph":"M","name":"thread_name","pid":1,"tid":8,"args":{"name":"worker"}},
{"ph":"M","name":"thread_name","pid":2,"tid":7,"args":{"name":"worker"}},
{"ph":"X","name":"frame","ts":0,"dur":10000,"pid":1,"tid":1},
{"ph":"X","name":"frame","ts":16000,"dur":10000,"pid":1,"tid":1},
{"ph":"X","name":"job","ts":1000,"dur":5000,"pid":1,"tid":7},
{"ph":"X","name":"job","ts":2000,"dur":5000,"pid":1,"tid":8},
{"ph":"X","name":"job","ts":3000,"dur":5000,"pid":2,"tid":7}
]"#;
    let c =
        chrome::import(text.as_bytes(), &LoadOptions::default().with_spans(true)).expect("valid");
    let mut threads = c.threads().to_vec();
    threads.sort();
    assert_eq!(
        threads,
        [
            "game/main",
            "game/worker (pid 1, tid 7)",
            "game/worker (pid 2, tid 7)",
            "game/worker (tid 8)",
        ]
    );
    let spans = c.spans().expect("kept").cpu.frame(0);
    let jobs: Vec<_> = spans.iter().filter(|s| s.depth == 0).collect();
    assert_eq!(jobs.len(), 3, "{spans:?}");
    let mut lanes: Vec<u32> = jobs.iter().map(|s| s.thread).collect();
    lanes.sort_unstable();
    lanes.dedup();
    assert_eq!(lanes.len(), 3, "each job on its own thread: {spans:?}");
    // A name held once keeps its plain label.
    let one = chrome::import(trace(3).as_bytes(), &LoadOptions::default()).expect("valid");
    assert!(
        one.threads().iter().any(|t| t == "game/main")
            && one.threads().iter().any(|t| t == "game/render")
            && one.threads().iter().all(|t| !t.contains("(tid")),
        "{:?}",
        one.threads()
    );
}
