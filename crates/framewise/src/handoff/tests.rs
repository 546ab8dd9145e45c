//! The hand-off's guarantees, with real threads: order, drops, waits and wake-ups.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use framewise_format::model::{CounterTrack, Sample, SymId};

use super::*;

/// Frame close's part: the frame's index into the batch, and the exchange.
fn frame(shared: &Shared, sender: &mut Sender, batch: Box<FrameBatch>, index: u64) -> Exchange {
    let mut batch = batch;
    batch.closed.index = index;
    let bytes = batch.estimated_bytes();
    shared.exchange(sender, batch, bytes)
}

fn sent(exchange: Exchange) -> Box<FrameBatch> {
    match exchange {
        Exchange::Sent(fresh) => fresh,
        Exchange::Dropped(_) => panic!("dropped"),
        Exchange::Failed(_) => panic!("failed"),
    }
}

fn track(counter: SymId) -> Message {
    Message::CounterTrack(CounterTrack {
        counter,
        samples: vec![Sample { at_ns: 0, value: 0 }],
    })
}

/// What the writer side saw, in order: frame indices, and control messages as `u64::MAX -
/// counter`.
fn writer_side(shared: Arc<Shared>) -> std::thread::JoinHandle<Vec<u64>> {
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        loop {
            match shared.receive(&WakePlan::default(), || 0) {
                Message::Frame(batch) => {
                    seen.push(batch.closed.index);
                    shared.recycle(batch);
                }
                Message::CounterTrack(track) => seen.push(u64::MAX - u64::from(track.counter)),
                Message::Topology(_) | Message::Census(_) => {}
                Message::Stop => {
                    shared.writer_ended();
                    return seen;
                }
            }
        }
    })
}

#[test]
fn frames_and_control_messages_arrive_in_the_order_sent() {
    let shared = Arc::new(Shared::new(WriterMode::Lossless, usize::MAX, 3));
    let mut sender = Sender::default();
    let writer = writer_side(Arc::clone(&shared));
    let mut batch = shared.take_free();
    let mut expected = Vec::new();
    for index in 0..2000u64 {
        batch = sent(frame(&shared, &mut sender, batch, index));
        expected.push(index);
        if index % 7 == 0 {
            let counter = (index / 7) as SymId;
            shared.send(track(counter));
            expected.push(u64::MAX - u64::from(counter));
        }
    }
    shared.send(Message::Stop);
    assert_eq!(writer.join().unwrap(), expected);
}

#[test]
fn realtime_drops_the_frame_when_no_batch_is_free_and_never_waits() {
    let shared = Shared::new(WriterMode::Realtime, usize::MAX, 2);
    let mut sender = Sender::default();
    let batch = shared.take_free();
    let batch = sent(frame(&shared, &mut sender, batch, 0));
    // The pool is empty: the next frame is refused, its batch given back.
    let batch = match frame(&shared, &mut sender, batch, 1) {
        Exchange::Dropped(same) => same,
        _ => panic!("expected a drop"),
    };
    assert_eq!(batch.closed.index, 1);
    // The writer takes frame 0 and gives its batch back: room again.
    let Some(Message::Frame(written)) = shared.pop() else {
        panic!("frame 0 is queued");
    };
    assert_eq!(written.closed.index, 0);
    shared.recycle(written);
    let _ = sent(frame(&shared, &mut sender, batch, 2));
}

#[test]
fn the_byte_bound_refuses_a_frame_while_others_are_queued() {
    let shared = Shared::new(WriterMode::Realtime, 100, 4);
    let mut sender = Sender::default();
    let batch = shared.take_free();
    // An empty batch is estimated at 64 bytes: one fits, two do not.
    let batch = sent(frame(&shared, &mut sender, batch, 0));
    let batch = match frame(&shared, &mut sender, batch, 1) {
        Exchange::Dropped(same) => same,
        _ => panic!("expected a drop over the byte bound"),
    };
    let Some(Message::Frame(written)) = shared.pop() else {
        panic!("frame 0 is queued");
    };
    shared.recycle(written);
    // Nothing queued: any frame is taken, whatever its size.
    let _ = sent(frame(&shared, &mut sender, batch, 2));
}

#[test]
fn a_lossless_game_waits_until_the_writer_gives_a_batch_back() {
    let shared = Arc::new(Shared::new(WriterMode::Lossless, usize::MAX, 2));
    let mut sender = Sender::default();
    let batch = sent(frame(&shared, &mut sender, shared.take_free(), 0));
    let returned = Arc::new(AtomicBool::new(false));
    let game = {
        let (shared, returned) = (Arc::clone(&shared), Arc::clone(&returned));
        std::thread::spawn(move || {
            let outcome = frame(&shared, &mut sender, batch, 1);
            returned.store(true, Ordering::SeqCst);
            matches!(outcome, Exchange::Sent(_))
        })
    };
    // No timing is asserted, only that the game did not go on without room.
    std::thread::sleep(Duration::from_millis(30));
    assert!(
        !returned.load(Ordering::SeqCst),
        "the game went on with no batch free"
    );
    let Some(Message::Frame(written)) = shared.pop() else {
        panic!("frame 0 is queued");
    };
    shared.recycle(written);
    assert!(
        game.join().unwrap(),
        "the frame was sent once room came back"
    );
}

#[test]
fn a_failed_session_releases_a_waiting_game() {
    let shared = Arc::new(Shared::new(WriterMode::Lossless, usize::MAX, 2));
    let mut sender = Sender::default();
    let batch = sent(frame(&shared, &mut sender, shared.take_free(), 0));
    let game = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            matches!(frame(&shared, &mut sender, batch, 1), Exchange::Failed(_))
        })
    };
    std::thread::sleep(Duration::from_millis(10));
    shared.fail(SessionError::WriterPanicked);
    assert!(game.join().unwrap());
}

#[test]
fn control_messages_after_the_writer_ended_are_dropped_not_waited_on() {
    let shared = Shared::new(WriterMode::Lossless, usize::MAX, 1);
    shared.writer_ended();
    // More than the queue holds: a sender that waited would never return.
    for counter in 0..(CONTROL_SLOTS as SymId + 10) {
        shared.send(track(counter));
    }
}

#[test]
fn a_parked_writer_is_woken_by_every_kind_of_send() {
    // Many rounds of: the writer parks on an empty queue, a message wakes it, from two
    // sending threads at once. A lost or reordered message shows as a wrong sequence, a
    // writer that is never woken (and never re-checks) as a hang.
    let shared = Arc::new(Shared::new(WriterMode::Lossless, usize::MAX, 4));
    let mut sender = Sender::default();
    let writer = writer_side(Arc::clone(&shared));
    let control = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            for counter in 0..500 {
                shared.send(track(counter));
                std::thread::yield_now();
            }
        })
    };
    let mut batch = shared.take_free();
    for index in 0..5000u64 {
        batch = sent(frame(&shared, &mut sender, batch, index));
        if index % 16 == 0 {
            std::thread::yield_now();
        }
    }
    control.join().unwrap();
    shared.send(Message::Stop);
    let seen = writer.join().unwrap();
    let frames: Vec<u64> = seen.iter().copied().filter(|&v| v < 5000).collect();
    let tracks: Vec<u64> = seen.iter().copied().filter(|&v| v >= 5000).collect();
    assert_eq!(frames, (0..5000).collect::<Vec<_>>());
    assert_eq!(
        tracks,
        (0..500u64).map(|c| u64::MAX - c).collect::<Vec<_>>()
    );
}

#[test]
fn close_wakes_a_parked_writer_once_a_quarter_of_the_queue_waits() {
    assert_eq!(
        [1, 8, 32, 48, 128, 512, 1 << 20].map(wake_at_queued),
        [8, 8, 8, 12, 32, 32, 32]
    );
    // No writer thread gathers here: the frames stay queued, and the writer's announcement
    // that it parked is withdrawn by the sender that wakes it.
    for (slots, wake_at) in [(128usize, 32u64), (48, 12), (8, 8)] {
        let shared = Shared::new(WriterMode::Lossless, usize::MAX, slots + 1);
        let mut sender = Sender::default();
        shared.writer_parked.store(true, Ordering::Relaxed);
        let mut batch = shared.take_free();
        for index in 0..wake_at {
            assert!(
                shared.writer_parked.load(Ordering::Relaxed),
                "{slots} slots: woken at {index} frames queued"
            );
            batch = sent(frame(&shared, &mut sender, batch, index));
            shared.nudge_writer(&mut sender);
        }
        assert!(
            !shared.writer_parked.load(Ordering::Relaxed),
            "{slots} slots: not woken at {wake_at} frames queued"
        );
    }
}
