use std::collections::HashMap;

use framewise_analysis::import::litecap;
use framewise_analysis::{write_trace, ExportError, LoadOptions, TraceOptions};
use serde_json::Value;

use crate::fixtures::*;

fn export(spec: &GameSpec, normalize: bool) -> Value {
    let c = game(&GameSpec {
        with_spans: true,
        ..spec.clone()
    });
    let mut out = Vec::new();
    let stats = write_trace(&c, TraceOptions { normalize }, &mut out).expect("writes");
    assert_eq!(stats.bytes, out.len() as u64);
    serde_json::from_slice(&out).expect("valid JSON")
}

fn events(v: &Value) -> &Vec<Value> {
    v["traceEvents"].as_array().expect("array")
}

#[test]
fn cpu_and_gpu_are_separate_named_processes() {
    let v = export(
        &GameSpec {
            frames: 20,
            ..GameSpec::default()
        },
        true,
    );
    let names: Vec<(i64, String)> = events(&v)
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .map(|e| {
            (
                e["pid"].as_i64().unwrap_or(-1),
                e["args"]["name"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![(1, "CPU".to_owned()), (2, "GPU (nominal clock)".to_owned())]
    );
    assert!(events(&v)
        .iter()
        .any(|e| e["ph"] == "M" && e["args"]["name"] == "graphics (nominal clock)"));
    assert!(events(&v)
        .iter()
        .any(|e| e["ph"] == "X" && e["pid"] == 2 && e["name"] == "main"));
    assert!(events(&v)
        .iter()
        .any(|e| e["ph"] == "C" && e["name"] == "draw_calls"));
    assert!(events(&v)
        .iter()
        .any(|e| e["ph"] == "X" && e["name"] == "frame 0" && e["ts"] == 0.0));
    assert!(v["otherData"]["gpu_clock"]
        .as_str()
        .unwrap_or("")
        .contains("nominal"));
}

#[test]
fn parents_are_never_shorter_than_children() {
    let v = export(
        &GameSpec {
            frames: 60,
            ..GameSpec::default()
        },
        false,
    );
    // Per (pid, tid): a stack of open X events, in the order written.
    let mut stacks: HashMap<(i64, i64), Vec<(f64, f64)>> = HashMap::new();
    let mut checked = 0;
    for e in events(&v)
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "cpu")
    {
        let key = (
            e["pid"].as_i64().unwrap_or(0),
            e["tid"].as_i64().unwrap_or(0),
        );
        let ts = e["ts"].as_f64().unwrap_or(0.0);
        let end = ts + e["dur"].as_f64().unwrap_or(0.0);
        let stack = stacks.entry(key).or_default();
        while let Some(&(_, pend)) = stack.last() {
            if ts >= pend {
                stack.pop();
            } else {
                break;
            }
        }
        if let Some(&(pstart, pend)) = stack.last() {
            assert!(
                ts >= pstart && end <= pend + 1e-9,
                "child [{ts}, {end}] outside parent [{pstart}, {pend}]"
            );
            checked += 1;
        }
        stack.push((ts, end));
    }
    assert!(checked >= 60, "physics nests in update every frame");
}

#[test]
fn microsecond_times_are_exact() {
    let v = export(
        &GameSpec {
            frames: 3,
            ..GameSpec::default()
        },
        false,
    );
    let update = events(&v)
        .iter()
        .find(|e| e["name"] == "update")
        .expect("span");
    assert_eq!(update["ts"].as_f64(), Some(1_000_000.0));
    assert_eq!(update["dur"].as_f64(), Some(5000.0));
    assert_eq!(update["args"]["site"], "src/game.rs:10");
}

#[test]
fn refuses_what_it_cannot_draw_honestly() {
    let lc = crate::litecap::sample(3, 10, 2);
    let c = litecap::import(
        &litecap::encode(&lc),
        &LoadOptions::default().with_spans(true),
    )
    .expect("valid");
    let e = write_trace(&c, TraceOptions::default(), Vec::new()).expect_err("no timeline");
    assert!(matches!(e, ExportError::NoTimeline { .. }));
    assert!(e.to_string().contains("no timeline"));
    let c = game(&GameSpec {
        frames: 3,
        ..GameSpec::default()
    });
    assert!(matches!(
        write_trace(&c, TraceOptions::default(), Vec::new()),
        Err(ExportError::NoSpans)
    ));
    // A v4 litecap has a timeline: it exports.
    let lc = crate::litecap::sample(4, 10, 2);
    let c = litecap::import(
        &litecap::encode(&lc),
        &LoadOptions::default().with_spans(true),
    )
    .expect("valid");
    assert!(write_trace(&c, TraceOptions::default(), Vec::new()).is_ok());
}

#[test]
fn trace_snapshot() {
    let v = export(
        &GameSpec {
            frames: 2,
            ..GameSpec::default()
        },
        true,
    );
    let mut v = v;
    redact_floats(&mut v);
    insta::assert_json_snapshot!("trace", v);
}

/// A trace `framewise trace` wrote reads back with the same frames: its frame track is taken
/// as the frames (paused ones included), not as 1,500 scopes named `frame N`, and not
/// replaced by whichever span happens to be most frequent.
#[test]
fn own_export_round_trips_its_frames() {
    let spec = GameSpec {
        frames: 400,
        with_spans: true,
        ..GameSpec::default()
    };
    let original = framewise_analysis::summarize(&game(&spec));
    let bytes = serde_json::to_vec(&export(&spec, false)).expect("bytes");
    let back = framewise_analysis::import::chrome::import(&bytes, &LoadOptions::default())
        .expect("imports");
    let again = framewise_analysis::summarize(&back);
    assert_eq!(again.capture.frames, original.capture.frames);
    assert_eq!(again.capture.frames_paused, original.capture.frames_paused);
    assert!(original.capture.frames_paused > 0, "the fixture pauses");
    for path in ["frame.count", "frame.p50", "frame.max", "work.avg"] {
        let (a, b) = (original.metric(path), again.metric(path));
        let close = match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-3 * a.abs().max(1.0),
            _ => false,
        };
        assert!(close, "{path}: {a:?} vs {b:?}");
    }
    for (name, scope) in &original.scopes.0 {
        let back = again.scopes.0.iter().find(|(n, _)| n == name);
        assert!(back.is_some(), "scope {name} survives the round trip");
        // With its call sites (`args.site`), which the import used to drop.
        assert_eq!(
            back.map(|(_, s)| &s.sites),
            Some(&scope.sites),
            "scope {name}'s sites"
        );
    }
    assert!(
        original.scopes.0.iter().any(|(_, s)| !s.sites.is_empty()),
        "the fixture has call sites"
    );
    assert!(
        !again.scopes.0.iter().any(|(n, _)| n.starts_with("frame ")),
        "frame markers are frames, not scopes"
    );
    assert!(
        again.notes.iter().any(|n| n.contains("own frame track")),
        "{:?}",
        again.notes
    );
}

/// A trace read back through the Chrome importer.
fn reimport(v: &Value) -> framewise_analysis::Capture {
    let bytes = serde_json::to_vec(v).expect("bytes");
    framewise_analysis::import::chrome::import(&bytes, &LoadOptions::default()).expect("imports")
}

/// The row of the frame with `index`.
fn row_of(c: &framewise_analysis::Capture, index: u64) -> usize {
    c.frames()
        .index
        .iter()
        .position(|&i| i == index)
        .expect("the frame is there")
}

/// A trace whose frame track skips indices lost those frames: the import says so with a
/// `dropped-frames` defect (so `gate` and `diff` are inconclusive on it, as on a capture that
/// lost frames) and leaves the period across the gap unknown, rather than reading the frame
/// before the gap as one long frame.
#[test]
fn a_frame_track_with_a_gap_lost_frames() {
    let spec = GameSpec {
        frames: 60,
        with_spans: true,
        ..GameSpec::default()
    };
    let mut v = export(&spec, false);
    let all = events(&v).len();
    if let Some(list) = v["traceEvents"].as_array_mut() {
        list.retain(|e| {
            let index = e["args"]["index"].as_u64();
            !(e["cat"] == "frame" && index.is_some_and(|i| (20..30).contains(&i)))
        });
    }
    assert_eq!(events(&v).len(), all - 10, "ten frames cut from the track");
    let back = reimport(&v);
    let lost: Vec<_> = back
        .defects()
        .iter()
        .filter(|d| d.kind == framewise_analysis::DefectKind::DroppedFrames)
        .collect();
    assert_eq!(lost.len(), 1, "{:?}", back.defects());
    assert_eq!(lost[0].count, 10);
    assert!(
        lost[0].message.contains("after frame 19"),
        "{}",
        lost[0].message
    );
    let (frames, row) = (back.frames(), row_of(&back, 19));
    assert_eq!(frames.index.get(row + 1), Some(&30));
    assert_eq!(frames.period_ns[row], None, "no period across the gap");

    // Exported from a capture that lost those frames to damage: its carried defect says so,
    // and the gap is not counted again.
    v["otherData"]["defects"] = serde_json::json!([
        {"kind": "corrupt-range", "message": "bytes 10..20 skipped", "count": 1}
    ]);
    let back = reimport(&v);
    let kinds: Vec<_> = back.defects().iter().map(|d| d.kind).collect();
    assert_eq!(kinds, [framewise_analysis::DefectKind::CorruptRange]);
    let (frames, row) = (back.frames(), row_of(&back, 19));
    assert_eq!(frames.period_ns[row], None, "no period across the gap");

    // The whole track reads as before: no defect.
    let back = reimport(&export(&spec, false));
    assert!(
        !back
            .defects()
            .iter()
            .any(|d| d.kind == framewise_analysis::DefectKind::DroppedFrames),
        "{:?}",
        back.defects()
    );
}

/// A trace `framewise trace` wrote keeps its counters' kinds: a per-frame sum comes back a sum
/// (so `counter.draw_calls.sum` gates the trace as it gates the capture), a gauge a gauge.
/// Without `otherData.counters` (another program's trace), every counter is a gauge again, and
/// a note says so.
#[test]
fn own_export_round_trips_its_counter_kinds() {
    use framewise_analysis::model::CounterKind;
    let spec = GameSpec {
        frames: 120,
        ..GameSpec::default()
    };
    let original_capture = game(&GameSpec {
        with_spans: true,
        ..spec.clone()
    });
    let original = framewise_analysis::summarize(&original_capture);
    let v = export(&spec, false);
    let declared = v["otherData"]["counters"].as_array().expect("declared");
    assert_eq!(declared.len(), original_capture.counters().len());
    assert_eq!(
        declared[0],
        serde_json::json!({"name": "draw_calls", "kind": "sum", "numeric": "integer"})
    );
    let back = reimport(&v);
    let kinds = |c: &framewise_analysis::Capture| -> Vec<(String, CounterKind)> {
        let mut kinds: Vec<_> = c
            .counters()
            .iter()
            .map(|c| (c.name.clone(), c.kind))
            .collect();
        kinds.sort_by(|a, b| a.0.cmp(&b.0));
        kinds
    };
    assert_eq!(kinds(&back), kinds(&original_capture));
    let again = framewise_analysis::summarize(&back);
    for path in [
        "counter.draw_calls.sum",
        "counter.bytes_uploaded.sum",
        "counter.entities.last",
    ] {
        let (a, b) = (original.metric(path), again.metric(path));
        assert!(a.is_some(), "{path} on the capture");
        assert_eq!(a, b, "{path}");
    }
    assert!(
        !again.notes.iter().any(|n| n.contains("as a gauge")),
        "{:?}",
        again.notes
    );

    // The same trace without the declarations reads as any other program's.
    let mut bare = v.clone();
    bare["otherData"]
        .as_object_mut()
        .expect("object")
        .remove("counters");
    let back = reimport(&bare);
    assert!(back.counters().iter().all(|c| c.kind == CounterKind::Gauge));
    let again = framewise_analysis::summarize(&back);
    assert_eq!(again.metric("counter.draw_calls.sum"), None);
    assert!(again.notes.iter().any(|n| n.contains("as a gauge")));

    // A declaration that is not framewise's, or names one counter twice, declares nothing.
    let mut twice = v.clone();
    twice["otherData"]["counters"]
        .as_array_mut()
        .expect("array")
        .push(serde_json::json!({"name": "draw_calls", "kind": "gauge", "numeric": "integer"}));
    let back = reimport(&twice);
    let draws = back.counters().iter().find(|c| c.name == "draw_calls");
    assert_eq!(draws.map(|c| c.kind), Some(CounterKind::Gauge));
    let mut other = v;
    other["otherData"]["generator"] = serde_json::json!("someone else");
    let back = reimport(&other);
    assert!(back.counters().iter().all(|c| c.kind == CounterKind::Gauge));
}

/// A trace keeps its capture's timing grade (`otherData.grade`): read back, a trace of a
/// software-rendered capture is `software`, as the capture is, and does not compare with
/// hardware timings; without the grade a CPU-only trace would read as `hardware`. Another
/// generator's `otherData.grade` is not trusted.
#[test]
fn own_export_keeps_its_timing_grade() {
    use framewise_analysis::model::{AdapterKind, TimingGrade};
    for adapter in [AdapterKind::Software, AdapterKind::Hardware] {
        let spec = GameSpec {
            adapter,
            ..GameSpec::default()
        };
        let capture = game(&GameSpec {
            with_spans: true,
            ..spec.clone()
        });
        let again = reimport(&export(&spec, false));
        assert_eq!(again.grade(), capture.grade(), "{adapter:?}");
    }
    // A CPU-only software capture's trace: no GPU event says anything of the adapter.
    let mut v = export(&GameSpec::default(), false);
    v["traceEvents"]
        .as_array_mut()
        .expect("array")
        .retain(|e| e["pid"] != 2);
    v["otherData"]["grade"]["timing"] = "software".into();
    assert_eq!(reimport(&v).grade().timing, TimingGrade::Software);
    v["otherData"]["generator"] = "another".into();
    assert_eq!(reimport(&v).grade().timing, TimingGrade::Hardware);
}

/// A trace keeps its capture's frame budget (`otherData.frame_budget_ns`): read back, its
/// jank and spike ratios are judged against the budget the capture declares, not 60 Hz, so a
/// capture gated against its own trace does not change. A capture that declares none writes
/// none; a value that is no budget, or another generator's, is not trusted.
#[test]
fn own_export_keeps_its_frame_budget() {
    let lc = crate::litecap::sample(4, 10, 2);
    let c = litecap::import(
        &litecap::encode(&lc),
        &LoadOptions::default().with_spans(true),
    )
    .expect("valid");
    assert_eq!(c.meta().frame_budget_ns, Some(16_000_000));
    let mut out = Vec::new();
    write_trace(&c, TraceOptions::default(), &mut out).expect("writes");
    let mut v: Value = serde_json::from_slice(&out).expect("valid JSON");
    assert_eq!(v["otherData"]["frame_budget_ns"], 16_000_000);
    let back = reimport(&v);
    assert_eq!(back.meta().frame_budget_ns, Some(16_000_000));
    assert_eq!(framewise_analysis::summarize(&back).budget_ms, 16.0);

    let none = export(&GameSpec::default(), false);
    assert!(none["otherData"].get("frame_budget_ns").is_none(), "{none}");
    assert_eq!(reimport(&none).meta().frame_budget_ns, None);

    for bad in [
        serde_json::json!(0),
        serde_json::json!(-5),
        serde_json::json!("fast"),
    ] {
        v["otherData"]["frame_budget_ns"] = bad.clone();
        let back = reimport(&v);
        assert_eq!(back.meta().frame_budget_ns, None, "{bad}");
        assert!(
            back.meta()
                .notes
                .iter()
                .any(|n| n.contains("frame_budget_ns") && n.contains("not a frame budget")),
            "{bad}: {:?}",
            back.meta().notes
        );
    }
    v["otherData"]["frame_budget_ns"] = 16_000_000.into();
    v["otherData"]["generator"] = "another".into();
    assert_eq!(reimport(&v).meta().frame_budget_ns, None);
}
