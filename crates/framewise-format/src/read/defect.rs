//! What the reader reports about damage it worked around.

use std::fmt;

use crate::container::fourcc_name;
use crate::error::DecodeError;
use crate::model::SymId;

/// Something wrong inside a capture that the reader worked around.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Defect {
    /// The file ends inside a record (or inside a record header).
    TruncatedTail {
        /// Where the incomplete record starts.
        offset: u64,
        /// Bytes from there to the end of the file, lost.
        bytes_lost: u64,
    },
    /// Bytes that hold no intact record were skipped.
    Corrupt {
        /// First skipped byte.
        offset: u64,
        /// How many bytes were skipped before the next intact record.
        bytes_skipped: u64,
    },
    /// An intact record of a type this reader does not know was skipped.
    UnknownRecord {
        /// Record offset.
        offset: u64,
        /// Its type.
        record_type: u32,
    },
    /// An intact record (checksum good) whose payload did not decode.
    BadPayload {
        /// Record offset.
        offset: u64,
        /// Its type.
        record_type: u32,
        /// Why.
        error: DecodeError,
    },
    /// A symbol some record refers to is defined by no intact record.
    UnresolvedSymbol {
        /// The id.
        id: SymId,
        /// Offset of the first record that refers to it.
        first_offset: u64,
    },
    /// Two records define the same id differently; the first definition is kept.
    ConflictingSymbol {
        /// The id.
        id: SymId,
        /// Offset of the record with the later definition.
        offset: u64,
    },
    /// The writer never reached stop: the file was read by scanning.
    Unclosed {
        /// Where the last intact record ends.
        end_offset: u64,
    },
    /// The header says CLOSED but the directory could not be used; the file was scanned.
    DirectoryUnusable {
        /// Why.
        reason: String,
    },
    /// No intact META record.
    MissingMeta,
    /// The 32-byte header failed its check (its magic is one bit from `SGPT`, or
    /// its checksum does not match) but the file holds intact records: it was read by
    /// scanning, trusting nothing the header says.
    HeaderDamaged {
        /// What the check found.
        reason: String,
    },
    /// Bytes after the directory record, which ends a closed capture, are not part of it and
    /// were not read (junk, or another capture appended to the file).
    TrailingBytes {
        /// Where they start (the directory record's end).
        offset: u64,
        /// How many.
        bytes: u64,
    },
    /// A scanned file's intact directory lists frames after the last frame the scan read:
    /// their records are no longer in the file (removed, or lost with bytes the scan could not
    /// tell from a clean end).
    FramesMissing {
        /// How many frames the directory lists after the last frame read.
        count: u64,
        /// The first of them.
        first_index: u64,
    },
    /// A frame record the directory (or the scan) located does not read back: the frame it
    /// held is lost, and every other frame is unaffected.
    FrameUnreadable {
        /// The frame's index, as the directory (or the record's intact head) gives it.
        index: u64,
        /// Offset of its record.
        offset: u64,
        /// Length of its record, framing included.
        length: u64,
        /// What is wrong with the record: [`Defect::Corrupt`] (not an intact `FRAM` of
        /// that length there) or [`Defect::BadPayload`] (intact, but does not decode).
        cause: Box<Defect>,
    },
}

impl fmt::Display for Defect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TruncatedTail { offset, bytes_lost } => {
                write!(
                    f,
                    "truncated tail: incomplete record at offset {offset}, {bytes_lost} bytes lost"
                )
            }
            Self::Corrupt {
                offset,
                bytes_skipped,
            } => {
                write!(
                    f,
                    "corrupt data at offset {offset}: {bytes_skipped} bytes skipped"
                )
            }
            Self::UnknownRecord {
                offset,
                record_type,
            } => {
                write!(
                    f,
                    "unknown record type {} at offset {offset} skipped",
                    fourcc_name(*record_type)
                )
            }
            Self::BadPayload {
                offset,
                record_type,
                error,
            } => {
                write!(
                    f,
                    "{} record at offset {offset} does not decode: {error}",
                    fourcc_name(*record_type)
                )
            }
            Self::UnresolvedSymbol { id, first_offset } => {
                write!(f, "symbol {id} (first used by the record at offset {first_offset}) is defined by no intact record")
            }
            Self::ConflictingSymbol { id, offset } => {
                write!(
                    f,
                    "symbol {id} redefined differently at offset {offset}; first definition kept"
                )
            }
            Self::Unclosed { end_offset } => {
                write!(f, "capture was not closed (the writer never reached stop); recovered by scanning up to offset {end_offset}")
            }
            Self::DirectoryUnusable { reason } => {
                write!(f, "directory unusable ({reason}); recovered by scanning")
            }
            Self::MissingMeta => write!(f, "no intact META record"),
            Self::HeaderDamaged { reason } => {
                write!(f, "header damaged ({reason}); recovered by scanning")
            }
            Self::TrailingBytes { offset, bytes } => {
                write!(
                    f,
                    "{bytes} bytes follow the directory record that ends the capture (from offset {offset}): not part of it, not read (another capture appended, or junk?)"
                )
            }
            Self::FramesMissing { count, first_index } => write!(
                f,
                "frames missing: the directory lists {count} frames after the last one read (the first: frame {first_index}); their records are not in the file"
            ),
            Self::FrameUnreadable {
                index,
                offset,
                length,
                cause,
            } => {
                write!(
                    f,
                    "frame {index} is lost: its {length}-byte record at offset {offset} does not read ({cause})"
                )
            }
        }
    }
}

impl std::error::Error for Defect {}
