//! Errors at the format's two boundaries: encoding (writer) and decoding (reader).

use std::io;

/// Why a payload could not be decoded. Offsets are within the payload.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The payload ended before a field did.
    #[error("payload ends at byte {len} but a field needs {needed} more bytes at offset {offset}")]
    UnexpectedEnd {
        /// Where the field started.
        offset: usize,
        /// Bytes the field still needed.
        needed: usize,
        /// Payload length.
        len: usize,
    },
    /// A varint ran past 10 bytes or overflowed 64 bits.
    #[error("malformed varint at offset {offset}")]
    BadVarint {
        /// Where it started.
        offset: usize,
    },
    /// A count claims more elements than the remaining bytes could hold.
    #[error(
        "count {count} at offset {offset} exceeds what the remaining {remaining} bytes can hold"
    )]
    ImplausibleCount {
        /// The count read.
        count: u64,
        /// Where it was read.
        offset: usize,
        /// Bytes left in the payload.
        remaining: usize,
    },
    /// A string was not UTF-8.
    #[error("string at offset {offset} is not valid UTF-8")]
    BadUtf8 {
        /// Where it started.
        offset: usize,
    },
    /// A field held a value the format does not allow.
    #[error("invalid {field} value {value} at offset {offset}")]
    InvalidValue {
        /// The field's name.
        field: &'static str,
        /// The value found.
        value: u64,
        /// Where it was read.
        offset: usize,
    },
    /// A lane's events end a top-level span and begin a deeper, zero-length top-level span
    /// at the instant it ended. That span lies inside the previous one, where the writer's
    /// lane algorithm would have nested it: no writer writes these events for these spans
    /// (docs/FORMAT.md §8.2, "What a reader refuses in a lane", rule 9).
    #[error(
        "lane of thread symbol {thread}: span {span} begins with no span open at {start_ns} ns, \
         where the previous top-level span (depth {previous_depth}) ends, with depth {depth} \
         and no length: it lies inside that span, where a writer nests it"
    )]
    LaneNesting {
        /// The lane's thread symbol.
        thread: u32,
        /// Index of the offending span in the lane.
        span: usize,
        /// Its start (and end), ns.
        start_ns: u64,
        /// Its depth, as coded.
        depth: u32,
        /// The depth of the top-level span before it.
        previous_depth: u32,
    },
    /// Bytes were left over after the last field.
    #[error("{extra} unexpected trailing bytes after the last field")]
    TrailingBytes {
        /// How many.
        extra: usize,
    },
}

/// Why a record could not be encoded or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The sink failed.
    #[error("write failed: {0}")]
    Io(#[from] io::Error),
    /// A record referenced a symbol the symbol table does not define.
    #[error("symbol {id} is referenced but not defined")]
    UndefinedSymbol {
        /// The id.
        id: u32,
    },
    /// A lane's spans were not properly nested in pre-order.
    #[error("lane of thread symbol {thread}: span {index} {reason}")]
    BadNesting {
        /// The lane's thread symbol.
        thread: u32,
        /// Index of the offending span.
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A payload exceeded the 4 GiB a record can frame.
    #[error("payload of {bytes} bytes exceeds the record limit of 4 GiB")]
    PayloadTooLarge {
        /// Payload size.
        bytes: usize,
    },
    /// A write was attempted after an earlier write failed, leaving the stream unusable.
    #[error("the writer failed earlier and accepts no more records")]
    Poisoned,
}

/// Why a file could not be opened as a capture at all (damage inside a capture is
/// reported as [`crate::read::Defect`]s instead).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Fewer than 32 bytes: no header.
    #[error("not a .sgpt capture: {len} bytes, shorter than the 32-byte header")]
    TooShort {
        /// File length.
        len: u64,
    },
    /// The magic is not `SGPT`.
    #[error(
        "not a .sgpt capture: magic is {found:08x} ({printable:?}), expected 54504753 (\"SGPT\")"
    )]
    BadMagic {
        /// The magic found.
        found: u32,
        /// The four bytes, printable characters kept.
        printable: String,
    },
    /// The header checksum does not match.
    #[error("header checksum mismatch: expected crc {expected:08x}, found {found:08x}")]
    BadHeaderChecksum {
        /// CRC computed over bytes [0, 8).
        expected: u32,
        /// CRC stored at byte 12.
        found: u32,
    },
    /// The file needs a newer reader.
    #[error("capture needs reader version {min_reader_version} or newer (format version {format_version}); this reader is version {reader_version}")]
    TooNew {
        /// The file's format version.
        format_version: u16,
        /// The oldest reader the file accepts.
        min_reader_version: u16,
        /// This reader's version.
        reader_version: u16,
    },
}
