//! `/api/window`: the analysis crate's window of frames on one axis, served as a JSON header
//! and binary span columns. The test decodes the bytes itself (as docs/INSPECTOR.md
//! describes them, not with the page's decoder) and compares every span with the analysis
//! crate's.

use framewise_analysis::window::window;
use framewise_analysis::FrameSource;

use super::*;

/// `n` little-endian numbers of `N` bytes from `bytes[*at..]`; `at` moves past them.
fn column<const N: usize, T>(
    bytes: &[u8],
    at: &mut usize,
    n: usize,
    read: fn([u8; N]) -> T,
) -> Vec<T> {
    let values = bytes[*at..*at + N * n]
        .chunks_exact(N)
        .map(|b| read(b.try_into().unwrap()))
        .collect();
    *at += N * n;
    values
}

/// A decoded `/api/window` body: the header, and per lane its spans as the analysis crate
/// serializes a `WindowSpan`.
fn decode(bytes: &[u8]) -> (Value, Vec<Vec<Value>>) {
    assert_eq!(&bytes[..8], b"FWWINDOW");
    let len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    assert_eq!(&bytes[12..16], &[0; 4]);
    let header: Value = serde_json::from_slice(&bytes[16..16 + len]).unwrap();
    let mut at = (16 + len).next_multiple_of(8);
    let mut lanes = Vec::new();
    for lane in header["lanes"].as_array().unwrap() {
        let n = lane["spans"].as_u64().unwrap() as usize;
        let f64s = |at: &mut usize| column(bytes, at, n, f64::from_le_bytes);
        let (start, dur, own) = (f64s(&mut at), f64s(&mut at), f64s(&mut at));
        let u32s = |at: &mut usize| column(bytes, at, n, u32::from_le_bytes);
        let (row, scope, depth) = (u32s(&mut at), u32s(&mut at), u32s(&mut at));
        at = at.next_multiple_of(8);
        lanes.push(
            (0..n)
                .map(|i| {
                    serde_json::json!({
                        "row": row[i], "scope": scope[i], "depth": depth[i],
                        "start_ns": start[i] as i64, "dur_ns": dur[i] as u64, "self_ns": own[i] as u64,
                    })
                })
                .collect(),
        );
    }
    assert_eq!(at, bytes.len(), "the columns end the body");
    (header, lanes)
}

#[test]
fn a_window_is_the_analysis_crates_window_of_the_rows() {
    let app = app(demo());
    let capture = with_spans(demo());
    let n = capture.frame_count();
    for (from, to) in [(0, 1), (10, 60), (n - 5, n), (3, 3)] {
        let (status, bytes) = get_raw(
            &app,
            &format!("/api/window?from={from}&to={to}&token={TOKEN}"),
            None,
        );
        assert_eq!(status, StatusCode::OK, "rows {from}..{to}");
        let (header, lanes) = decode(&bytes);
        assert_eq!(header["schema"], "framewise.inspector.window/2");
        let expected: Value =
            serde_json::to_value(window(&capture, &FrameSource::kept(), from..to).unwrap())
                .unwrap();
        for key in [
            "from",
            "to",
            "origin_ns",
            "scopes",
            "frames",
            "gpu",
            "marks",
        ] {
            assert_eq!(header[key], expected[key], "{key} of rows {from}..{to}");
        }
        let want_lanes = expected["lanes"].as_array().unwrap();
        assert_eq!(header["lanes"].as_array().unwrap().len(), want_lanes.len());
        assert_eq!(lanes.len(), want_lanes.len());
        for ((head, got), want) in header["lanes"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&lanes)
            .zip(want_lanes)
        {
            assert_eq!(head["thread"], want["thread"]);
            let id = head["thread_id"].as_u64().unwrap() as usize;
            assert_eq!(capture.threads()[id], want["thread"].as_str().unwrap());
            assert_eq!(
                got,
                want["spans"].as_array().unwrap(),
                "{} in rows {from}..{to}",
                want["thread"]
            );
        }
        let counters = header["counters"].as_array().unwrap();
        let want_counters = expected["counters"].as_array().unwrap();
        assert_eq!(counters.len(), want_counters.len());
        for (got, want) in counters.iter().zip(want_counters) {
            let id = got["id"].as_u64().unwrap() as usize;
            assert_eq!(capture.counters()[id].name, want["name"].as_str().unwrap());
            let mut got = got.clone();
            got.as_object_mut().unwrap().remove("id");
            assert_eq!(&got, want);
        }
        assert_eq!(header["frames"].as_array().unwrap().len(), to - from);
        assert!(to == from || !lanes.is_empty(), "rows {from}..{to}");
    }
}

#[test]
fn bad_windows_are_400_with_one_line() {
    let app = app(demo());
    all_bad(
        &app,
        &[
            "/api/window?from=0",
            "/api/window?to=3",
            "/api/window?from=5&to=4",
            "/api/window?from=0&to=9999",
        ],
    );
}
