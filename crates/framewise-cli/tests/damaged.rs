//! One damaged file, every verb: the same frames, the same defects. A corrupt frame record
//! the directory still lists, a flipped header bit, bytes after the directory.

use crate::support::{write_game, Dir, Game};
use crate::view::served_capture;
use serde_json::Value;

/// The frame whose record is damaged.
const LOST: u64 = 150;

/// The defect kinds of a JSON report.
fn kinds(json: &Value) -> Vec<String> {
    json["defects"]
        .as_array()
        .expect("defects")
        .iter()
        .map(|d| d["kind"].as_str().expect("kind").to_owned())
        .collect()
}

/// Runs every verb that reads one capture on `file` and checks they agree: `frames`
/// frames, the same defects, judged the same way.
fn every_verb_agrees(dir: &Dir, file: &str, frames: u64, defect_kinds: &[&str]) {
    let inspect = dir.run(&["inspect", file, "--json"]).expect(0).json();
    assert_eq!(inspect["frames"]["count"], frames, "{file}: inspect");
    assert_eq!(kinds(&inspect), defect_kinds, "{file}: inspect");

    let summary = dir.run(&["summarize", file, "--json"]).expect(0).json();
    let capture = &summary["capture"];
    assert_eq!(capture["frames"], frames, "{file}: summarize");
    assert_eq!(kinds(&summary), defect_kinds, "{file}: summarize");
    assert_eq!(summary["defects"], inspect["defects"], "{file}");

    // Every non-paused frame with a period is judged.
    let hitches = dir.run(&["hitches", file, "--json"]).expect(1).json();
    let with_period = frames
        - capture["frames_without_period"].as_u64().expect("count")
        - capture["frames_paused"].as_u64().expect("count");
    assert_eq!(hitches["frames_judged"], with_period, "{file}: hitches");
    assert_eq!(hitches["defects"], inspect["defects"], "{file}: hitches");

    let attribution = dir.run(&["attribute", file, "--json"]).expect(0).json();
    assert_eq!(
        attribution["defects"], inspect["defects"],
        "{file}: attribute"
    );

    // Frames lost to damage make a comparison inconclusive unless allowed.
    let diff = dir
        .run(&["diff", file, file, "--json", "--allow-damaged"])
        .expect(0)
        .json();
    assert_eq!(diff["inputs"]["base"]["frames"], frames, "{file}: diff");

    let served = served_capture(dir, file);
    assert_eq!(served["frame_count"], frames, "{file}: view");
}

#[test]
fn every_verb_counts_the_same_frames_when_a_listed_frame_record_is_corrupt() {
    let dir = Dir::new();
    let path = dir.path("lost.sgpt");
    write_game(&path, &Game::default());
    let mut bytes = std::fs::read(&path).unwrap();
    let entry = framewise_format::read::from_bytes(bytes.clone())
        .unwrap()
        .frame_entry(LOST as usize)
        .unwrap();
    assert_eq!(entry.index, LOST);
    bytes[(entry.offset + 24) as usize] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();

    every_verb_agrees(&dir, "lost.sgpt", 299, &["corrupt-range"]);
    let inspect = dir
        .run(&["inspect", "lost.sgpt", "--json"])
        .expect(0)
        .json();
    assert_eq!(inspect["frames"]["unreadable"], 1);
    let defect = &inspect["defects"][0];
    assert_eq!(defect["frame"], LOST);
    assert_eq!(defect["offset"], entry.offset);
    let message = defect["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("frame {LOST} is lost")),
        "{message}"
    );

    // The lost frame is named as lost, not as a frame the capture never had.
    let run = dir
        .run(&["attribute", "lost.sgpt", "--frame", &LOST.to_string()])
        .expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains(&format!("frame {LOST} was lost to damage")),
        "{line}"
    );
    assert!(line.contains(&format!("offset {}", entry.offset)), "{line}");
    let run = dir
        .run(&["attribute", "lost.sgpt", "--frame", "9999"])
        .expect(4);
    assert!(
        run.one_error_line().contains("no frame with index 9999"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_flipped_header_bit_keeps_every_frame_in_every_verb() {
    let dir = Dir::new();
    let path = dir.path("game.sgpt");
    write_game(&path, &Game::default());
    let bytes = std::fs::read(&path).unwrap();
    // The magic, a version byte and the checksum: each fails the header's check.
    for (name, at) in [("magic.sgpt", 1), ("version.sgpt", 6), ("crc.sgpt", 14)] {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x08;
        dir.write(name, &damaged);
        every_verb_agrees(&dir, name, 300, &["header-damaged"]);
    }
    // A header with nothing after it is still not a capture.
    let mut lone = bytes[..32].to_vec();
    lone[1] ^= 0x08;
    lone.extend_from_slice(&[0u8; 64]);
    dir.write("lone.sgpt", &lone);
    let run = dir.run(&["summarize", "lone.sgpt"]).expect(4);
    assert!(
        run.one_error_line().contains("not a .sgpt capture"),
        "{}",
        run.stderr
    );
}

#[test]
fn bytes_after_the_directory_are_a_defect_in_every_verb() {
    let dir = Dir::new();
    let path = dir.path("game.sgpt");
    write_game(&path, &Game::default());
    let mut bytes = std::fs::read(&path).unwrap();
    let end = bytes.len() as u64;
    bytes.extend_from_slice(b"appended by something else");
    dir.write("trailing.sgpt", &bytes);
    every_verb_agrees(&dir, "trailing.sgpt", 300, &["trailing-bytes"]);
    let inspect = dir
        .run(&["inspect", "trailing.sgpt", "--json"])
        .expect(0)
        .json();
    assert_eq!(inspect["defects"][0]["offset"], end);
    assert_eq!(inspect["defects"][0]["count"], 26);
}
