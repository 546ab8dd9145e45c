//! The reader: every whole line of `perf.jsonl` that parses, with what it skipped counted.
//!
//! A crash can leave a last line without its newline (a torn line): it is skipped and
//! counted, never an error, and a reader that resumes from a byte cursor
//! ([`read_from`]) resumes *before* it, so the line is read whole once a writer finishes
//! it. A line that is not JSON, a record of a known type that does not parse, one whose
//! frame time is no measurement (`"frame_ms": 1e308`: [`Record::has_implausible_time`]), one
//! whose jitter size is none (`"units": 1e306`: [`Record::has_implausible_size`]), or an
//! incident whose footprint id is not 8 hex digits ([`Record::has_bad_footprint_id`]) is
//! malformed: skipped and counted. A footprint id written in capitals is read in lowercase,
//! as ids are written and typed. A JSON object of another `type` (written by a newer
//! framewise or another tool) is skipped and counted apart. A UTF-8 byte-order mark at the
//! start of a line (an editor saved the file with one) is skipped.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;

use crate::record::{Record, RECORD_TYPES};
use crate::Error;

/// What a read found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadOutcome {
    /// The records, in file order.
    pub records: Vec<Record>,
    /// Lines that were not a JSON object, or a known type that did not parse.
    pub malformed: u64,
    /// JSON objects of a `type` this reader does not know (or without a `type`).
    pub unknown_type: u64,
    /// Whether the file ended in a line without its newline (skipped).
    pub torn_last_line: bool,
    /// The byte offset just past the last whole line read: where to resume.
    pub next_offset: u64,
}

#[derive(Deserialize)]
struct TypeOnly {
    #[serde(rename = "type")]
    record_type: Option<String>,
}

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `line` without a UTF-8 byte-order mark at its start.
pub(crate) fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(BOM).unwrap_or(line)
}

/// Parses one line (without its newline; a byte-order mark at its start is skipped);
/// `Err(true)` for malformed, `Err(false)` for a type this reader does not know.
pub fn parse_line(line: &[u8]) -> Result<Record, bool> {
    let line = without_bom(line);
    let Ok(probe) = serde_json::from_slice::<TypeOnly>(line) else {
        return Err(true);
    };
    match probe.record_type {
        Some(t) if RECORD_TYPES.contains(&t.as_str()) => {
            match serde_json::from_slice::<Record>(line) {
                Ok(mut record)
                    if !record.has_implausible_time()
                        && !record.has_implausible_size()
                        && !record.has_bad_footprint_id() =>
                {
                    if let Some(fp) = record.footprint_mut() {
                        fp.id.make_ascii_lowercase();
                    }
                    Ok(record)
                }
                _ => Err(true),
            }
        }
        _ => Err(false),
    }
}

/// The whole lines of a byte buffer: each without its newline, blank lines left out.
pub(crate) struct WholeLines<'a> {
    /// The lines, in order.
    pub lines: Vec<&'a [u8]>,
    /// Whether the buffer ended in a line without its newline (not in `lines`).
    pub torn: bool,
    /// The byte offset just past the last newline.
    pub end: usize,
}

/// Splits `bytes` into whole lines: a last line without its newline (still being written,
/// or torn by a crash) is not one, and blank lines (a byte-order mark alone is blank) are
/// skipped.
pub(crate) fn whole_lines(bytes: &[u8]) -> WholeLines<'_> {
    let mut out = WholeLines {
        lines: Vec::new(),
        torn: false,
        end: 0,
    };
    let mut start = 0usize;
    while start < bytes.len() {
        let rest = bytes.get(start..).unwrap_or_default();
        let Some(newline) = rest.iter().position(|&b| b == b'\n') else {
            out.torn = without_bom(rest).iter().any(|b| !b.is_ascii_whitespace());
            break;
        };
        let line = rest.get(..newline).unwrap_or_default();
        start += newline + 1;
        out.end = start;
        if !without_bom(line).iter().all(u8::is_ascii_whitespace) {
            out.lines.push(line);
        }
    }
    out
}

/// Parses the lines of `bytes`, which start at byte `base_offset` of their file.
pub fn parse_bytes(bytes: &[u8], base_offset: u64) -> ReadOutcome {
    let lines = whole_lines(bytes);
    let mut outcome = ReadOutcome {
        torn_last_line: lines.torn,
        next_offset: base_offset + lines.end as u64,
        ..ReadOutcome::default()
    };
    for line in lines.lines {
        match parse_line(line) {
            Ok(record) => outcome.records.push(record),
            Err(true) => outcome.malformed += 1,
            Err(false) => outcome.unknown_type += 1,
        }
    }
    outcome
}

/// Reads every record of the file at `path`.
pub fn read_all(path: &Path) -> Result<ReadOutcome, Error> {
    read_from(path, 0)
}

/// Reads the records from byte `offset` on (a cursor a previous read returned as
/// `next_offset`). An offset past the end (the file was truncated or replaced) reads from
/// the start. A path that is not a regular file (a FIFO, a device) is an error, never
/// opened: reading a FIFO would wait for a writer.
pub fn read_from(path: &Path, offset: u64) -> Result<ReadOutcome, Error> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    crate::regular_or_missing(path)?;
    let mut file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let offset = if offset > len { 0 } else { offset };
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(io)?;
    Ok(parse_bytes(&bytes, offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEARTBEAT: &str = r#"{"type":"heartbeat","at":"2026-12-01T00:00:00.000Z","automated":false,"frame":9,"window":{"frames":10},"hitches":0}"#;

    #[test]
    fn torn_last_line_is_skipped_and_not_passed() {
        let text = format!("{HEARTBEAT}\n{}", &HEARTBEAT[..40]);
        let outcome = parse_bytes(text.as_bytes(), 100);
        assert_eq!(outcome.records.len(), 1);
        assert!(outcome.torn_last_line);
        assert_eq!(outcome.malformed, 0);
        assert_eq!(outcome.next_offset, 100 + HEARTBEAT.len() as u64 + 1);
    }

    #[test]
    fn malformed_and_unknown_lines_are_counted_apart() {
        let text = format!(
            "not json\n{{\"type\":\"answer\",\"id\":1}}\n{{\"type\":\"hitch\",\"frame\":\"x\"}}\n\n{HEARTBEAT}\n"
        );
        let outcome = parse_bytes(text.as_bytes(), 0);
        assert_eq!(outcome.records.len(), 1);
        assert_eq!(
            outcome.malformed, 2,
            "not json, and a hitch that does not parse"
        );
        assert_eq!(outcome.unknown_type, 1);
        assert!(!outcome.torn_last_line);
        assert_eq!(outcome.next_offset, text.len() as u64);
    }

    #[test]
    fn a_frame_time_that_is_no_measurement_is_malformed() {
        let absurd = HEARTBEAT.replace(r#""frames":10"#, r#""frames":10,"p95_ms":1e308"#);
        let negative = HEARTBEAT.replace(r#""frames":10"#, r#""frames":10,"median_ms":-4.0"#);
        let a_week = HEARTBEAT.replace(r#""frames":10"#, r#""frames":10,"p95_ms":604800000"#);
        let text = format!("{absurd}\n{negative}\n{a_week}\n");
        let outcome = parse_bytes(text.as_bytes(), 0);
        assert_eq!(outcome.malformed, 2, "1e308 ms and -4 ms");
        assert_eq!(outcome.records.len(), 1, "a week is the longest frame time");
    }

    const JITTER: &str = r#"{"type":"jitter","at":"2026-12-01T10:00:00.000Z","automated":false,"track":"unit","kind":"snap","frame":7,"jump":[0,1,0],"units":UNITS,"unit":"m","travel_units":0.1,"speed":6,"dt_ms":16.7,"from":[0,0,0],"to":[0,1,0],"classification":[],"footprint":{"v":1,"id":"d52db37a","key":"jitter|unit|snap|play|snap|vertical"}}"#;

    #[test]
    fn a_jitter_size_that_is_no_measurement_is_malformed() {
        let lines: Vec<String> = ["1e306", "-0.5", "0.5"]
            .iter()
            .map(|u| JITTER.replace("UNITS", u))
            .chain([
                JITTER
                    .replace("UNITS", "0.5")
                    .replace(r#""to":[0,1,0]"#, r#""to":[0,1e300,0]"#),
                JITTER
                    .replace("UNITS", "0.5")
                    .replace(r#""speed":6"#, r#""speed":-6"#),
            ])
            .collect();
        let outcome = parse_bytes(format!("{}\n", lines.join("\n")).as_bytes(), 0);
        assert_eq!(
            outcome.malformed, 4,
            "1e306 units, a negative length, a far coordinate, a negative speed"
        );
        assert_eq!(outcome.records.len(), 1);
        let big = JITTER.replace("UNITS", "1e16");
        assert!(
            parse_line(big.as_bytes()).is_ok(),
            "within two gauges' reach"
        );
    }

    #[test]
    fn a_heartbeat_window_of_no_duration_is_malformed() {
        let negative = HEARTBEAT.replace(r#""frames":10"#, r#""frames":10,"seconds":-10"#);
        let ten = HEARTBEAT.replace(r#""frames":10"#, r#""frames":10,"seconds":10.2"#);
        assert_eq!(parse_line(negative.as_bytes()), Err(true));
        assert!(parse_line(ten.as_bytes()).is_ok());
    }

    #[test]
    fn footprint_ids_are_read_in_lowercase_and_must_be_hex() {
        let upper = JITTER
            .replace("UNITS", "0.5")
            .replace("d52db37a", "D52DB37A");
        let read = parse_line(upper.as_bytes()).expect("an id in capitals reads");
        assert_eq!(read.footprint().map(|f| f.id.as_str()), Some("d52db37a"));
        for bad in ["NOT-HEX!", "d52db37", "d52db37a0", ""] {
            let line = JITTER.replace("UNITS", "0.5").replace("d52db37a", bad);
            assert_eq!(parse_line(line.as_bytes()), Err(true), "{bad:?}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let text = format!("\u{feff}{HEARTBEAT}\n{HEARTBEAT}\n");
        let outcome = parse_bytes(text.as_bytes(), 0);
        assert_eq!((outcome.records.len(), outcome.malformed), (2, 0));
        assert_eq!(outcome.next_offset, text.len() as u64);
        // A mark alone on a line, or ending a file, is blank, not a torn or malformed line.
        let outcome = parse_bytes("\u{feff}\n\u{feff}".as_bytes(), 0);
        assert_eq!((outcome.malformed, outcome.torn_last_line), (0, false));
    }
}
