//! Finding intact records: one at an offset, the next after damage, every one in a file.

use crate::container::{HEADER_LEN, RECORD_HEADER_LEN, SYNC};

use super::Defect;

/// Where one intact record sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRef {
    /// Record type.
    pub record_type: u32,
    /// Offset of its `SREC` marker.
    pub offset: u64,
    /// Payload length.
    pub payload_len: u32,
}

impl RecordRef {
    /// Length of the whole record, framing included.
    pub fn length(&self) -> u64 {
        RECORD_HEADER_LEN as u64 + u64::from(self.payload_len)
    }

    /// Offset of the payload.
    pub fn payload_offset(&self) -> u64 {
        self.offset + RECORD_HEADER_LEN as u64
    }
}

pub(super) fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The intact record at `pos`, if sync, length and checksum agree.
pub(super) fn record_at(bytes: &[u8], pos: usize) -> Option<RecordRef> {
    if u32_at(bytes, pos)? != SYNC {
        return None;
    }
    let record_type = u32_at(bytes, pos + 4)?;
    let payload_len = u32_at(bytes, pos + 8)?;
    // Every payload opens with a symbol block, so none is empty; refusing P = 0 keeps
    // `SREC` followed by zeros (CRC of nothing is 0) from passing as a record.
    if payload_len == 0 {
        return None;
    }
    let crc = u32_at(bytes, pos + 12)?;
    let start = pos + RECORD_HEADER_LEN;
    let payload = bytes.get(start..start.checked_add(payload_len as usize)?)?;
    if crc32fast::hash(payload) != crc {
        return None;
    }
    Some(RecordRef {
        record_type,
        offset: pos as u64,
        payload_len,
    })
}

/// Finds the next offset at or after `from` holding an intact record.
fn next_record(bytes: &[u8], from: usize) -> Option<(usize, RecordRef)> {
    let marker = SYNC.to_le_bytes();
    let mut pos = from;
    while pos + RECORD_HEADER_LEN <= bytes.len() {
        let hit = bytes[pos..].windows(4).position(|w| w == marker)?;
        pos += hit;
        if let Some(r) = record_at(bytes, pos) {
            return Some((pos, r));
        }
        pos += 1;
    }
    None
}

/// Scans the records of a whole file image (header included) from byte 32. An unreadable
/// tail (no intact record from some offset to the end) is the last defect, as a
/// [`Defect::TruncatedTail`].
pub fn scan_records(bytes: &[u8]) -> (Vec<RecordRef>, Vec<Defect>) {
    let Scan {
        records,
        mut defects,
        tail,
    } = scan(bytes);
    if let Some(tail) = tail {
        defects.push(tail.truncated());
    }
    (records, defects)
}

/// What a scan of a whole file image read.
pub(crate) struct Scan {
    /// The intact records, in file order.
    pub(crate) records: Vec<RecordRef>,
    /// What was skipped between them.
    pub(crate) defects: Vec<Defect>,
    /// Where the file stops holding intact records before its end, if it does: what that
    /// is (a cut, bytes after the directory, a lost directory) is the reader's to say.
    pub(crate) tail: Option<Tail>,
}

/// Bytes from `offset` to the end of the file that hold no intact record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tail {
    /// Where the unreadable bytes begin.
    pub(crate) offset: u64,
    /// How many there are, to the end of the file.
    pub(crate) bytes: u64,
}

impl Tail {
    /// The tail as a cut: a record begun and not finished.
    pub(crate) fn truncated(self) -> Defect {
        Defect::TruncatedTail {
            offset: self.offset,
            bytes_lost: self.bytes,
        }
    }
}

/// Scans the records of a whole file image (header included) from byte 32.
pub(crate) fn scan(bytes: &[u8]) -> Scan {
    let mut records = Vec::new();
    let mut defects = Vec::new();
    let mut tail = None;
    let mut pos = HEADER_LEN.min(bytes.len());
    while pos < bytes.len() {
        if let Some(r) = record_at(bytes, pos) {
            pos += r.length() as usize;
            records.push(r);
            continue;
        }
        match next_record(bytes, pos + 1) {
            Some((next, _)) => {
                defects.push(Defect::Corrupt {
                    offset: pos as u64,
                    bytes_skipped: (next - pos) as u64,
                });
                pos = next;
            }
            None => {
                tail = Some(Tail {
                    offset: pos as u64,
                    bytes: (bytes.len() - pos) as u64,
                });
                break;
            }
        }
    }
    Scan {
        records,
        defects,
        tail,
    }
}
