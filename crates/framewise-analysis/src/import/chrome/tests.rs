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
