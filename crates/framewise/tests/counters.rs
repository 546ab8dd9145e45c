//! Sum counters are exact per frame across threads; gauges hold levels; absent means not
//! measured.

use std::collections::HashMap;
use std::sync::{Arc, Barrier};

use framewise::{counter, gauge, Counter, Gauge, Session, WriterMode};
use framewise_format::model::{CounterKind, SymbolKind};

use crate::common::{self, name};

/// Each frame's counter values by counter name, from the capture at `path`, which must hold
/// `frames` frames.
fn values_per_frame(path: &std::path::Path, frames: i64) -> Vec<HashMap<String, i64>> {
    let capture = common::open(path);
    let decoded = common::frames(&capture);
    assert_eq!(decoded.len(), frames as usize);
    decoded
        .iter()
        .map(|frame| {
            frame
                .counters
                .iter()
                .map(|c| (name(&capture, c.counter), c.value))
                .collect()
        })
        .collect()
}

#[test]
fn sums_are_exact_per_frame_and_gauges_hold_their_level() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("counters");
    const FRAMES: i64 = 20;
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    let declared = Counter::sum("test.declared_never_counted");
    declared.declare();
    let handle = Counter::sum("test.handle_sum");
    let entities = Gauge::new("test.entities");

    let start = Arc::new(Barrier::new(2));
    let done = Arc::new(Barrier::new(2));
    let worker = {
        let (start, done) = (Arc::clone(&start), Arc::clone(&done));
        std::thread::Builder::new()
            .name("counting-worker".into())
            .spawn(move || {
                for frame in 0..FRAMES {
                    start.wait();
                    // Many small adds from another thread: each lands in exactly one frame.
                    for _ in 0..frame {
                        counter!("test.draw_calls", 2);
                    }
                    done.wait();
                }
            })
            .unwrap()
    };
    for frame in 0..FRAMES {
        start.wait();
        counter!("test.draw_calls", frame);
        for _ in 0..1000 {
            handle.add(1);
        }
        entities.set(100 + frame);
        if frame >= 5 {
            if frame % 2 == 1 {
                counter!("test.late_sum", 7u64);
            }
            gauge!("test.late_gauge", frame * 3);
        }
        done.wait();
        session.end_frame();
    }
    worker.join().unwrap();
    session.stop().unwrap();

    for (i, values) in values_per_frame(&path, FRAMES).iter().enumerate() {
        let i = i as i64;
        assert_eq!(
            values["test.draw_calls"],
            i + 2 * i,
            "frame {i}: main adds i, worker 2i"
        );
        assert_eq!(values["test.handle_sum"], 1000);
        assert_eq!(values["test.entities"], 100 + i);
        assert_eq!(
            values["test.declared_never_counted"], 0,
            "a declared counter reads 0 where nothing was counted"
        );
        if i < 5 {
            assert!(
                !values.contains_key("test.late_sum"),
                "frame {i}: not measured yet"
            );
            assert!(!values.contains_key("test.late_gauge"));
        } else {
            let expected = if i % 2 == 1 { 7 } else { 0 };
            assert_eq!(values["test.late_sum"], expected, "frame {i}");
            assert_eq!(values["test.late_gauge"], i * 3);
        }
    }
    // Kinds travel with the symbols.
    let capture = common::open(&path);
    let frames = common::frames(&capture);
    let kind_of = |counter_name: &str| {
        let id = frames[10]
            .counters
            .iter()
            .find(|c| name(&capture, c.counter) == counter_name)
            .unwrap()
            .counter;
        capture.symbols().get(id).unwrap().kind.clone()
    };
    assert_eq!(
        kind_of("test.draw_calls"),
        SymbolKind::Counter(CounterKind::Sum)
    );
    assert_eq!(
        kind_of("test.entities"),
        SymbolKind::Counter(CounterKind::Gauge)
    );
}

#[test]
fn counts_made_while_no_session_runs_are_not_recorded() {
    let _serial = common::serial();
    counter!("test.before_session", 5);
    let (_dir, path) = common::temp_capture("before");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    counter!("test.before_session", 1);
    session.end_frame();
    session.stop().unwrap();
    counter!("test.before_session", 9);
    let capture = common::open(&path);
    let frames = common::frames(&capture);
    let value = frames[0]
        .counters
        .iter()
        .find(|c| name(&capture, c.counter) == "test.before_session")
        .unwrap()
        .value;
    assert_eq!(value, 1);
}

/// Regression: `counter!` on a name first used with `gauge!` added into the gauge's level,
/// which frame close never resets, so the value grew without bound across frames. The
/// slot's kind (the first use) wins: the name stays a gauge and the write sets its level.
#[test]
fn counter_on_a_gauge_name_does_not_accumulate_across_frames() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("kind_clash");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    gauge!("test.clash_gauge_first", 10);
    counter!("test.clash_sum_first", 1);
    session.end_frame();
    for _ in 0..3 {
        counter!("test.clash_gauge_first", 1);
        counter!("test.clash_gauge_first", 2);
        gauge!("test.clash_sum_first", 5);
        gauge!("test.clash_sum_first", 6);
        session.end_frame();
    }
    session.stop().unwrap();
    let capture = common::open(&path);
    let frames = common::frames(&capture);
    let value = |frame: &framewise_format::model::Frame, counter_name: &str| {
        frame
            .counters
            .iter()
            .find(|c| name(&capture, c.counter) == counter_name)
            .unwrap()
            .value
    };
    assert_eq!(value(&frames[0], "test.clash_gauge_first"), 10);
    assert_eq!(value(&frames[0], "test.clash_sum_first"), 1);
    for frame in &frames[1..] {
        assert_eq!(
            value(frame, "test.clash_gauge_first"),
            2,
            "frame {}: a gauge carries the last level set, whatever macro set it",
            frame.index
        );
        assert_eq!(
            value(frame, "test.clash_sum_first"),
            11,
            "frame {}: a sum is the frame's total, whatever macro added to it",
            frame.index
        );
    }
}

/// A counter counted on three threads lands in the frame whose end follows each count: the
/// threads count between two barriers, frame close comes after the second, and every value
/// (narrow, and wider than 32 bits) is in its own frame, none in a neighbour. A gauge set on
/// a different thread every frame carries that frame's level.
#[test]
fn a_counter_counted_on_three_threads_lands_in_the_right_frame() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("three_threads");
    const FRAMES: i64 = 30;
    const WIDE: i64 = 1 << 40;
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    let start = Arc::new(Barrier::new(4));
    let done = Arc::new(Barrier::new(4));
    let workers: Vec<_> = (0..3i64)
        .map(|worker| {
            let (start, done) = (Arc::clone(&start), Arc::clone(&done));
            std::thread::Builder::new()
                .name(format!("counting-{worker}"))
                .spawn(move || {
                    for frame in 0..FRAMES {
                        start.wait();
                        for _ in 0..=worker {
                            counter!("test.three.narrow", frame);
                        }
                        if frame % 3 == worker {
                            counter!("test.three.wide", WIDE + frame);
                            gauge!("test.three.level", 1000 * frame + worker);
                        }
                        done.wait();
                    }
                })
                .unwrap()
        })
        .collect();
    for _ in 0..FRAMES {
        start.wait();
        done.wait();
        session.end_frame();
    }
    for worker in workers {
        worker.join().unwrap();
    }
    session.stop().unwrap();

    for (i, values) in values_per_frame(&path, FRAMES).iter().enumerate() {
        let i = i as i64;
        assert_eq!(
            values["test.three.narrow"],
            6 * i,
            "frame {i}: 1 + 2 + 3 adds of i"
        );
        assert_eq!(
            values["test.three.wide"],
            WIDE + i,
            "frame {i}: one thread's wide add"
        );
        assert_eq!(
            values["test.three.level"],
            1000 * i + i % 3,
            "frame {i}: the level set on thread {} this frame",
            i % 3
        );
    }
}

/// Counts from threads that exit before their frame closes are kept, in that frame: every
/// frame spawns fresh counting threads (which take over the per-thread totals of the threads
/// before them) and joins them before closing.
#[test]
fn counts_from_exited_threads_are_exact() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("exited_threads");
    const FRAMES: i64 = 12;
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    for frame in 0..FRAMES {
        let threads: Vec<_> = (0..3i64)
            .map(|worker| {
                std::thread::spawn(move || {
                    counter!("test.exited", frame + worker);
                    Counter::sum("test.exited.handle").add(frame * 1000 + worker);
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        session.end_frame();
    }
    session.stop().unwrap();

    for (i, values) in values_per_frame(&path, FRAMES).iter().enumerate() {
        let frame = i as i64;
        assert_eq!(values["test.exited"], 3 * frame + 3, "frame {frame}");
        assert_eq!(
            values["test.exited.handle"],
            3000 * frame + 3,
            "frame {frame}"
        );
    }
}

/// Many names: sums past the threads' cells (their counts in the slot's shared value) and
/// slots past the first chunk of 64 are as exact as the first ones, from two threads, and each
/// gauge holds its own level.
#[test]
fn many_names_past_the_cells_and_the_first_chunk_are_exact() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("many_counters");
    const FRAMES: i64 = 8;
    const NAMES: usize = 150;
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    // Every third name a gauge: 100 sums (more than the 64 with cells) and 50 gauges, in
    // three chunks of slots.
    let sums: Vec<(usize, Counter)> = (0..NAMES)
        .filter(|i| i % 3 != 2)
        .map(|i| (i, Counter::sum(&format!("test.many.{i}"))))
        .collect();
    let gauges: Vec<(usize, Gauge)> = (0..NAMES)
        .filter(|i| i % 3 == 2)
        .map(|i| (i, Gauge::new(&format!("test.many.{i}"))))
        .collect();
    let sums = Arc::new(sums);
    let start = Arc::new(Barrier::new(2));
    let done = Arc::new(Barrier::new(2));
    let worker = {
        let (sums, start, done) = (Arc::clone(&sums), Arc::clone(&start), Arc::clone(&done));
        std::thread::spawn(move || {
            for _ in 0..FRAMES {
                start.wait();
                for (_, sum) in sums.iter() {
                    sum.add(2);
                }
                done.wait();
            }
        })
    };
    for frame in 0..FRAMES {
        start.wait();
        for (i, sum) in sums.iter() {
            for _ in 0..=frame {
                sum.add(*i as i64 + 1);
            }
        }
        for (i, gauge) in &gauges {
            gauge.set(frame * 1000 + *i as i64);
        }
        done.wait();
        session.end_frame();
    }
    worker.join().unwrap();
    session.stop().unwrap();

    for (frame, values) in values_per_frame(&path, FRAMES).iter().enumerate() {
        let frame = frame as i64;
        for (i, _) in sums.iter() {
            assert_eq!(
                values[&format!("test.many.{i}")],
                (frame + 1) * (*i as i64 + 1) + 2,
                "frame {frame}, sum {i}"
            );
        }
        for (i, _) in &gauges {
            assert_eq!(
                values[&format!("test.many.{i}")],
                frame * 1000 + *i as i64,
                "frame {frame}, gauge {i}"
            );
        }
    }
}
