use super::parse::{ArrayEnd, RawSpan, ReadSpan};
use super::*;

fn read(text: &[u8]) -> Result<(u64, ArrayEnd), ChromeError> {
    read_events(text, text.len() as u64, &mut no_progress).map(|(p, end)| (p.elements, end))
}

#[test]
fn cut_off_array_keeps_whole_events() {
    let text = br#"[{"ph":"X","name":"frame","ts":0,"dur":10,"pid":1,"tid":1},
{"ph":"X","name":"frame","ts":16,"dur":10,"pid":1,"tid":1},{"ph":"X","na"#;
    let (events, end) = read(text).expect("tolerated");
    assert_eq!(events, 2);
    assert!(matches!(end, ArrayEnd::Truncated(_)));
}

#[test]
fn open_array_is_allowed() {
    let (events, end) = read(br#"[{"ph":"i","ts":1},"#).expect("tolerated");
    assert_eq!(events, 1);
    assert_eq!(end, ArrayEnd::Open);
}

#[test]
fn rejects_non_traces() {
    assert!(matches!(read(b"42"), Err(ChromeError::NotATrace { .. })));
    assert!(matches!(
        read(b"{\"a\":1}"),
        Err(ChromeError::NotATrace { .. })
    ));
    assert!(matches!(
        read(b"{\"traceEvents\":{}}"),
        Err(ChromeError::NotATrace { .. })
    ));
    assert!(matches!(read(b"[}"), Err(ChromeError::NotJson { .. })));
    assert!(matches!(read(b""), Err(ChromeError::NotATrace { .. })));
}

#[test]
fn cut_off_object_form() {
    let text = br#"{"displayTimeUnit":"ms","traceEvents":[{"ph":"X","name":"f","ts":0,"dur":5,"pid":1,"tid":1},{"ph":"#;
    let (events, end) = read(text).expect("tolerated");
    assert_eq!(events, 1);
    assert!(matches!(end, ArrayEnd::Truncated(_)));
}

#[test]
fn fields_of_any_type_are_read_not_rejected() {
    let text = br#"[{"ph":"X","name":7,"ts":"soon","dur":1,"pid":[1],"tid":{"a":[{}]},"args":3},
{"ph":"X","name":"f","ts":0,"dur":5,"pid":1.5,"tid":-2,"args":{"line":"12","file":"a.rs","x":{"y":[1,2]}}},
"not an event", 12, null]"#;
    let (parsed, end) = read_events(&text[..], 0, &mut no_progress).expect("tolerated");
    assert_eq!(end, ArrayEnd::Closed);
    assert_eq!(parsed.elements, 5);
    assert_eq!(parsed.untimed, 1);
    assert_eq!(parsed.unknown.get("(none)"), Some(&3));
    assert_eq!(parsed.thread_pids, ["1.5"]);
    assert_eq!(parsed.thread_tids, ["-2"]);
    assert_eq!(parsed.site_list.len(), 1);
    let (file, line) = parsed.site_list[0];
    assert_eq!((parsed.strings.get(file), line), ("a.rs", 12));
}

#[test]
fn a_span_row_is_32_bytes() {
    // What the importer holds per span, whatever the text: the bound on its memory.
    assert_eq!(std::mem::size_of::<ReadSpan>(), 32);
    assert_eq!(std::mem::size_of::<RawSpan>(), 32);
}

#[test]
fn a_counter_sample_that_is_no_finite_number_is_a_defect_not_a_silent_gap() {
    use crate::model::{DefectKind, Numeric};
    // Ten frames, one `c` sample each; three are strings that read as no finite number.
    let mut events = Vec::new();
    for i in 0..10u64 {
        let ts = i * 16_000;
        let value = match i {
            3 => serde_json::json!("inf"),
            5 => serde_json::json!("NaN"),
            7 => serde_json::json!("-inf"),
            _ => serde_json::json!(i),
        };
        events.push(serde_json::json!({"ph": "X", "name": "frame", "pid": 1, "tid": 1, "ts": ts, "dur": 10_000}));
        events.push(serde_json::json!({"ph": "C", "name": "c", "pid": 1, "tid": 1, "ts": ts + 10, "args": {"value": value}}));
        // A second sample of `d` in frame 4, after a finite one: the frame keeps the finite one.
        events.push(serde_json::json!({"ph": "C", "name": "d", "pid": 1, "tid": 1, "ts": ts + 10, "args": {"value": 2}}));
        if i == 4 {
            events.push(serde_json::json!({"ph": "C", "name": "d", "pid": 1, "tid": 1, "ts": ts + 20, "args": {"value": "inf"}}));
        }
    }
    let text = serde_json::json!({ "traceEvents": events }).to_string();
    let capture = import(text.as_bytes(), &LoadOptions::default()).expect("imports");
    let defect = capture
        .defects()
        .iter()
        .find(|d| d.message.contains("not finite"))
        .unwrap_or_else(|| panic!("no defect for the samples: {:?}", capture.defects()));
    assert_eq!(
        (defect.kind, defect.count),
        (DefectKind::Importer, 4),
        "{defect:?}"
    );
    assert!(defect.message.contains("`c`, `d`"), "{}", defect.message);
    // The finite samples are whole numbers: the counter stays exact.
    let numeric = |name: &str| {
        capture
            .counters()
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.numeric)
    };
    assert_eq!(numeric("c"), Some(Numeric::Integer));
    let s = crate::summarize(&capture);
    assert_eq!(s.counters.get("c").map(|c| c.count), Some(7));
    assert_eq!(
        s.counters.get("d").map(|c| (c.count, c.max)),
        Some((10, Some(crate::stats::Num::Int(2))))
    );
    assert!(s.defects.iter().any(|d| d.message.contains("not finite")));
}
