//! # framewise-format — the `.sgpt` capture container
//!
//! Who should use this crate: anything that reads or writes `.sgpt` bytes — the recorder
//! (`framewise`) writes through [`Writer`], the analysis crate reads through [`read`].
//! Games should link `framewise` instead, and tools that want numbers (percentiles,
//! hitches, verdicts) should use `framewise-analysis`. This crate holds no I/O policy (no
//! threads, no buffering decisions) and no analysis.
//!
//! ```
//! use framewise_format::{model::*, read, Writer};
//! use std::io::Cursor;
//!
//! let mut symbols = SymbolTable::new();
//! symbols.insert(Symbol { id: 1, kind: SymbolKind::Thread, name: "main".into() });
//! symbols.insert(Symbol {
//!     id: 2,
//!     kind: SymbolKind::Scope { file: "src/main.rs".into(), line: 10 },
//!     name: "update".into(),
//! });
//! let mut w = Writer::new(Cursor::new(Vec::new()), &Meta::default(), &symbols)?;
//! let frame = Frame {
//!     index: 0,
//!     cpu_begin_ns: 1_000,
//!     cpu_end_ns: 17_000,
//!     lanes: vec![Lane {
//!         thread: 1,
//!         spans: vec![CpuSpan { scope: 2, depth: 0, start_ns: 2_000, end_ns: 9_000 }],
//!         dropped_spans: 0,
//!     }],
//!     ..Frame::default()
//! };
//! w.write_frame(&frame, &symbols)?;
//! let bytes = w.finish_and_close(&[])?.into_inner();
//!
//! let capture = read::from_bytes(bytes)?;
//! assert!(capture.opened_by_directory());
//! let back = capture.read_frame(0).expect("intact frame");
//! assert_eq!(back, frame);
//! assert_eq!(capture.symbols().name(2), Some("update"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The normative specification follows.
#![doc = include_str!("../../../docs/FORMAT.md")]
#![forbid(unsafe_code)]

pub mod bits;
pub mod container;
pub mod derived;
pub mod error;
pub mod model;
pub mod payload;
pub mod read;
mod symset;
pub mod wire;
pub mod writer;

pub use container::{fourcc, Header, FORMAT_VERSION, MIN_READER_VERSION, READER_VERSION};
pub use error::{DecodeError, EncodeError, OpenError};
pub use payload::topology_id;
pub use read::{Capture, Defect};
pub use writer::{Writer, SYMBOL_REFRESH_FRAMES};
