//! The container framing: the 32-byte header and the 16-byte record header.

use crate::error::OpenError;

/// Builds a FourCC: the four ASCII bytes read as a little-endian u32, so the bytes appear
/// in the file in reading order.
pub const fn fourcc(code: &[u8; 4]) -> u32 {
    u32::from_le_bytes(*code)
}

/// File magic, `SGPT`.
pub const MAGIC: u32 = fourcc(b"SGPT");
/// Record sync marker, `SREC`.
pub const SYNC: u32 = fourcc(b"SREC");
/// `META` record type.
pub const META: u32 = fourcc(b"META");
/// `SYMS` record type.
pub const SYMS: u32 = fourcc(b"SYMS");
/// `TOPO` record type.
pub const TOPO: u32 = fourcc(b"TOPO");
/// `FRAM` record type.
pub const FRAM: u32 = fourcc(b"FRAM");
/// `CNTR` record type.
pub const CNTR: u32 = fourcc(b"CNTR");
/// `DIRE` record type.
pub const DIRE: u32 = fourcc(b"DIRE");
/// `CENS` record type (format version 2): a scene census, as a JSON document.
pub const CENS: u32 = fourcc(b"CENS");

/// The format version this crate writes (2: version 1 plus the `CENS` record, which a
/// version 1 reader skips, so the oldest reader stays 1).
pub const FORMAT_VERSION: u16 = 2;
/// The oldest reader that can read what this crate writes.
pub const MIN_READER_VERSION: u16 = 1;
/// This reader's version: files whose `min_reader_version` exceeds it are refused.
pub const READER_VERSION: u16 = 2;

/// Header length in bytes.
pub const HEADER_LEN: usize = 32;
/// Record header length in bytes.
pub const RECORD_HEADER_LEN: usize = 16;
/// Header flag: the writer reached stop and patched the directory pointer.
pub const FLAG_CLOSED: u32 = 1;

/// A record type's four characters, for messages (`FRAM`, or hex when not printable).
pub fn fourcc_name(code: u32) -> String {
    let b = code.to_le_bytes();
    if b.iter().all(|c| c.is_ascii_graphic()) {
        b.iter().map(|&c| c as char).collect()
    } else {
        format!("0x{code:08x}")
    }
}

/// Whether `found`, the four bytes where the magic belongs, is the magic with one bit
/// flipped: a damaged `.sgpt` header rather than another format (a reader may then look for
/// intact records, docs/FORMAT.md §13.1).
pub fn is_damaged_magic(found: u32) -> bool {
    (found ^ MAGIC).count_ones() == 1
}

/// The 32-byte file header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version of the writer.
    pub format_version: u16,
    /// Oldest reader version that may read the file.
    pub min_reader_version: u16,
    /// Flags; bit 0 is [`FLAG_CLOSED`].
    pub flags: u32,
    /// Byte offset of the `DIRE` record, 0 when the session never stopped.
    pub directory_offset: u64,
    /// Length of the whole `DIRE` record, framing included.
    pub directory_byte_length: u64,
}

impl Header {
    /// A fresh header for a writer: not closed, no directory.
    pub fn new() -> Self {
        Self {
            format_version: FORMAT_VERSION,
            min_reader_version: MIN_READER_VERSION,
            flags: 0,
            directory_offset: 0,
            directory_byte_length: 0,
        }
    }

    /// Whether the CLOSED flag is set.
    pub fn is_closed(&self) -> bool {
        self.flags & FLAG_CLOSED != 0
    }

    /// The 32 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4..6].copy_from_slice(&self.format_version.to_le_bytes());
        b[6..8].copy_from_slice(&self.min_reader_version.to_le_bytes());
        b[8..12].copy_from_slice(&self.flags.to_le_bytes());
        let crc = crc32fast::hash(&b[0..8]);
        b[12..16].copy_from_slice(&crc.to_le_bytes());
        b[16..24].copy_from_slice(&self.directory_offset.to_le_bytes());
        b[24..32].copy_from_slice(&self.directory_byte_length.to_le_bytes());
        b
    }

    /// Parses and validates the header at the start of `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<Self, OpenError> {
        let Some(b) = bytes.get(..HEADER_LEN) else {
            // A file shorter than a header can still be recognised as not ours by its magic.
            if bytes.len() >= 4 {
                let magic = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                if magic != MAGIC {
                    return Err(bad_magic(magic));
                }
            }
            return Err(OpenError::TooShort {
                len: bytes.len() as u64,
            });
        };
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(a)
        };
        let magic = u32_at(0);
        if magic != MAGIC {
            return Err(bad_magic(magic));
        }
        let expected = crc32fast::hash(&b[0..8]);
        let found = u32_at(12);
        if expected != found {
            return Err(OpenError::BadHeaderChecksum { expected, found });
        }
        let header = Self {
            format_version: u16_at(4),
            min_reader_version: u16_at(6),
            flags: u32_at(8),
            directory_offset: u64_at(16),
            directory_byte_length: u64_at(24),
        };
        if header.min_reader_version > READER_VERSION {
            return Err(OpenError::TooNew {
                format_version: header.format_version,
                min_reader_version: header.min_reader_version,
                reader_version: READER_VERSION,
            });
        }
        Ok(header)
    }
}

impl Default for Header {
    fn default() -> Self {
        Self::new()
    }
}

fn bad_magic(found: u32) -> OpenError {
    let printable = found
        .to_le_bytes()
        .iter()
        .map(|&c| if c.is_ascii_graphic() { c as char } else { '.' })
        .collect();
    OpenError::BadMagic { found, printable }
}

/// Builds the 16-byte record header for a payload.
pub fn record_header(record_type: u32, payload: &[u8]) -> [u8; RECORD_HEADER_LEN] {
    record_header_of(record_type, payload.len() as u32, crc32fast::hash(payload))
}

/// Where a record header's CRC field starts: after the sync word, the type and the length.
pub const RECORD_CRC_AT: usize = 12;

/// The 16-byte record header of a payload of `payload_len` bytes whose CRC is `crc`.
pub fn record_header_of(record_type: u32, payload_len: u32, crc: u32) -> [u8; RECORD_HEADER_LEN] {
    let mut h = [0u8; RECORD_HEADER_LEN];
    h[0..4].copy_from_slice(&SYNC.to_le_bytes());
    h[4..8].copy_from_slice(&record_type.to_le_bytes());
    h[8..RECORD_CRC_AT].copy_from_slice(&payload_len.to_le_bytes());
    h[RECORD_CRC_AT..16].copy_from_slice(&crc.to_le_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourccs_match_their_literals() {
        assert_eq!(MAGIC, 0x5450_4753);
        assert_eq!(SYNC, 0x4345_5253);
        assert_eq!(META, u32::from_le_bytes(*b"META"));
        assert_eq!(FRAM.to_le_bytes(), *b"FRAM");
        assert_eq!(fourcc_name(DIRE), "DIRE");
        assert_eq!(fourcc_name(0x0000_0001), "0x00000001");
    }

    #[test]
    fn header_round_trips_and_flags_patch_keeps_checksum() {
        let mut h = Header::new();
        let bytes = h.to_bytes();
        assert_eq!(Header::parse(&bytes).unwrap(), h);
        h.flags = FLAG_CLOSED;
        h.directory_offset = 1234;
        let patched = h.to_bytes();
        assert_eq!(
            bytes[12..16],
            patched[12..16],
            "checksum covers bytes [0, 8) only"
        );
        assert!(Header::parse(&patched).unwrap().is_closed());
    }

    #[test]
    fn a_magic_one_bit_off_is_damaged_not_foreign() {
        assert!(!is_damaged_magic(MAGIC));
        assert!(is_damaged_magic(MAGIC ^ 1));
        assert!(is_damaged_magic(MAGIC ^ 0x8000_0000));
        assert!(!is_damaged_magic(MAGIC ^ 0x0100_0010));
        assert!(!is_damaged_magic(fourcc(b"SGPX")));
        assert!(!is_damaged_magic(MAGIC ^ 0x0700_0000));
        assert!(!is_damaged_magic(fourcc(b"LCAP")));
    }

    #[test]
    fn newer_min_reader_is_refused() {
        let mut h = Header::new();
        h.min_reader_version = READER_VERSION + 1;
        assert!(matches!(
            Header::parse(&h.to_bytes()),
            Err(OpenError::TooNew { .. })
        ));
    }
}
