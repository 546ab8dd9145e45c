#![allow(missing_docs)]
use framewise_format::{model::Frame, payload, read};
fn main() {
    let p = std::env::args().nth(1).expect("path");
    let c = read::open(&p).expect("open");
    let (mut total, mut lanes, mut spans, mut frames) = (0usize, 0usize, 0usize, 0usize);
    for f in c.frames().flatten() {
        let mut whole = Vec::new();
        payload::encode_frame(&mut whole, &f, std::iter::empty()).expect("encode");
        let mut nolanes = Vec::new();
        payload::encode_frame(
            &mut nolanes,
            &Frame {
                lanes: vec![],
                ..f.clone()
            },
            std::iter::empty(),
        )
        .expect("encode");
        total += whole.len() + 16;
        lanes += whole.len() - nolanes.len();
        spans += f.lanes.iter().map(|l| l.spans.len()).sum::<usize>();
        frames += 1;
    }
    println!(
        "{frames} frames, {:.1} spans/frame: whole {:.2} B/span, lanes {:.2} B/span",
        spans as f64 / frames as f64,
        total as f64 / spans as f64,
        lanes as f64 / spans as f64
    );
}
