//! Zero heap allocation on the game thread in steady state.

use framewise::world::{InputsHeld, Spawns, WorldCamera};
use framewise::{counter, gauge, mark, scope, Session, Sink, WriterMode};

use crate::common;

/// The world object's handles, made once.
struct World {
    goblins: Spawns,
    inputs: InputsHeld,
    camera: WorldCamera,
}

/// One frame's work: 200 scopes (20 systems of 1 + 9 nested), counters, a gauge, a mark, and
/// the world object (a spawn, the inputs held, the camera's pose).
fn frame_of_200_scopes(session: &Session, frame: u64, world: &World) {
    world.goblins.spawned(frame % 3);
    world.goblins.removed(1);
    world.inputs.set(frame & 0b11);
    world
        .camera
        .record_pose([frame as f64, 10.0, 0.0], [0.0, 0.0, 0.0, 1.0]);
    session.set_phase("play");
    for _ in 0..20 {
        let _system = scope!("system");
        for _ in 0..3 {
            let _a = scope!("system.a");
            let _b = scope!("system.a.b");
            let _c = scope!("system.a.b.c");
        }
        counter!("draw_calls", 3);
    }
    gauge!("entities", frame);
    if frame.is_multiple_of(60) {
        mark!("minute");
    }
    session.end_frame();
}

#[test]
fn the_game_thread_does_not_allocate_in_steady_state() {
    let _serial = common::serial();
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(Sink::stream(std::io::sink()))
        .unwrap();
    let world = World {
        goblins: Spawns::new("goblin"),
        inputs: InputsHeld::new(),
        camera: WorldCamera::new(),
    };
    const WARM_UP: u64 = 500;
    const MEASURED: u64 = 10_000;
    for frame in 0..WARM_UP {
        frame_of_200_scopes(&session, frame, &world);
    }
    let allocations = common::count_allocations(|| {
        for frame in WARM_UP..WARM_UP + MEASURED {
            frame_of_200_scopes(&session, frame, &world);
        }
    });
    let report = session.stop().unwrap();
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.frames_written, WARM_UP + MEASURED);
    assert_eq!(
        allocations, 0,
        "the game thread allocated {allocations} times over {MEASURED} frames of 200 scopes"
    );
}

#[test]
fn the_counting_allocator_does_count() {
    // The zero above means something only if allocations on this thread are seen.
    let allocations = common::count_allocations(|| {
        let v: Vec<u64> = (0..100).collect();
        std::hint::black_box(v);
    });
    assert!(allocations >= 1);
}
