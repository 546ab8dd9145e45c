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

/// A decoded `/api/window` body: the header; per lane its spans as the analysis crate
/// serializes a `WindowSpan`; the GPU spans as it serializes a `WindowGpuSpan`; per counter
/// its values as it serializes a `CounterSample` (every value an f64, as the page reads it).
struct Decoded {
    header: Value,
    lanes: Vec<Vec<Value>>,
    gpu: Vec<Value>,
    counters: Vec<Vec<(u64, f64)>>,
}

fn decode(bytes: &[u8]) -> Decoded {
    assert_eq!(&bytes[..8], b"FWWINDOW");
    let len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    assert_eq!(&bytes[12..16], &[0; 4]);
    let header: Value = serde_json::from_slice(&bytes[16..16 + len]).unwrap();
    let mut at = (16 + len).next_multiple_of(8);
    let f64s = |at: &mut usize, n| column(bytes, at, n, f64::from_le_bytes);
    let u32s = |at: &mut usize, n| column(bytes, at, n, u32::from_le_bytes);
    let mut lanes = Vec::new();
    for lane in header["lanes"].as_array().unwrap() {
        let n = lane["spans"].as_u64().unwrap() as usize;
        let (start, dur, own) = (f64s(&mut at, n), f64s(&mut at, n), f64s(&mut at, n));
        let (row, scope, depth) = (u32s(&mut at, n), u32s(&mut at, n), u32s(&mut at, n));
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
    let n = header["gpu_spans"].as_u64().unwrap() as usize;
    let (start, dur) = (f64s(&mut at, n), f64s(&mut at, n));
    let (row, pass, depth) = (u32s(&mut at, n), u32s(&mut at, n), u32s(&mut at, n));
    at = at.next_multiple_of(8);
    let passes = header["passes"].as_array().unwrap();
    let gpu = (0..n)
        .map(|i| {
            serde_json::json!({
                "row": row[i], "pass": passes[pass[i] as usize], "depth": depth[i],
                "start_ns": start[i] as i64, "dur_ns": dur[i] as u64,
            })
        })
        .collect();
    let mut counters = Vec::new();
    for counter in header["counters"].as_array().unwrap() {
        let n = counter["samples"].as_u64().unwrap() as usize;
        let values = f64s(&mut at, n);
        let rows = u32s(&mut at, n);
        at = at.next_multiple_of(8);
        counters.push(rows.into_iter().map(u64::from).zip(values).collect());
    }
    assert_eq!(at, bytes.len(), "the columns end the body");
    Decoded {
        header,
        lanes,
        gpu,
        counters,
    }
}

#[test]
fn a_window_is_the_analysis_crates_window_of_the_rows() {
    let (_, counter_values) = same_as_the_analysis_crates(demo());
    assert!(counter_values > 0, "the demo's windows hold counter values");
    let dir = tempfile::tempdir().unwrap();
    let path = {
        let _recording = recording();
        gpu::gpu_recording(dir.path())
    };
    let (gpu_spans, _) = same_as_the_analysis_crates(&path);
    assert!(gpu_spans > 0, "the GPU recording's windows hold GPU spans");
}

/// Every window of a few row ranges of `path`, decoded, equals the analysis crate's window
/// of the same rows; the GPU spans and counter values compared.
fn same_as_the_analysis_crates(path: &Path) -> (usize, usize) {
    let app = app(path);
    let capture = with_spans(path);
    let n = capture.frame_count();
    // The columns compared below are not all empty: GPU spans and counter values included.
    let (mut gpu_spans, mut counter_values) = (0, 0);
    for (from, to) in [(0, 1), (10, 60), (n - 5, n), (3, 3)] {
        let (status, bytes) = get_raw(
            &app,
            &format!("/api/window?from={from}&to={to}&token={TOKEN}"),
            None,
        );
        assert_eq!(status, StatusCode::OK, "rows {from}..{to}");
        let Decoded {
            header,
            lanes,
            gpu,
            counters: values,
        } = decode(&bytes);
        assert_eq!(header["schema"], "framewise.inspector.window/3");
        let expected: Value =
            serde_json::to_value(window(&capture, &FrameSource::kept(), from..to).unwrap())
                .unwrap();
        for key in ["from", "to", "origin_ns", "scopes", "frames", "marks"] {
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
        gpu_spans += gpu.len();
        counter_values += values.iter().map(Vec::len).sum::<usize>();
        assert_eq!(
            &Value::from(gpu),
            &expected["gpu"],
            "gpu of rows {from}..{to}"
        );
        let counters = header["counters"].as_array().unwrap();
        let want_counters = expected["counters"].as_array().unwrap();
        assert_eq!(counters.len(), want_counters.len());
        assert_eq!(values.len(), want_counters.len());
        for ((got, values), want) in counters.iter().zip(&values).zip(want_counters) {
            let id = got["id"].as_u64().unwrap() as usize;
            assert_eq!(capture.counters()[id].name, want["name"].as_str().unwrap());
            assert_eq!(got["name"], want["name"]);
            assert_eq!(got["kind"], want["kind"]);
            let want_values: Vec<(u64, f64)> = want["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| (v["row"].as_u64().unwrap(), v["value"].as_f64().unwrap()))
                .collect();
            assert_eq!(
                values, &want_values,
                "{} in rows {from}..{to}",
                want["name"]
            );
        }
        assert_eq!(header["frames"].as_array().unwrap().len(), to - from);
        assert!(to == from || !lanes.is_empty(), "rows {from}..{to}");
    }
    (gpu_spans, counter_values)
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
