//! The symbol block that opens every payload.
//!
//! ```text
//! count varint
//! per symbol: id varint, kind u8, name string, extra_len varint, extra bytes
//!   kind 0 scope:   extra = file string, line varint
//!   kind 4 counter: extra = counter kind u8 (0 sum, 1 gauge)
//!   other kinds:    extra empty (readers skip extra bytes of kinds they do not know)
//! ```

use crate::error::DecodeError;
use crate::model::{CounterKind, Symbol, SymbolKind};
use crate::wire::{put_str, put_varint, Cursor};

fn kind_byte(kind: &SymbolKind) -> u8 {
    match kind {
        SymbolKind::Scope { .. } => 0,
        SymbolKind::Thread => 1,
        SymbolKind::Pass => 2,
        SymbolKind::Pipeline => 3,
        SymbolKind::Counter(_) => 4,
        SymbolKind::Resource => 5,
        SymbolKind::Phase => 6,
        SymbolKind::Mark => 7,
        SymbolKind::Queue => 8,
        SymbolKind::Label => 9,
        SymbolKind::Unknown { kind, .. } => *kind,
    }
}

/// Appends a symbol block holding `symbols`.
pub fn encode_symbol_block<'s>(
    out: &mut Vec<u8>,
    symbols: impl ExactSizeIterator<Item = &'s Symbol>,
) {
    put_varint(out, symbols.len() as u64);
    let mut extra = Vec::new();
    for s in symbols {
        put_varint(out, u64::from(s.id));
        out.push(kind_byte(&s.kind));
        put_str(out, &s.name);
        extra.clear();
        match &s.kind {
            SymbolKind::Scope { file, line } => {
                put_str(&mut extra, file);
                put_varint(&mut extra, u64::from(*line));
            }
            SymbolKind::Counter(k) => extra.push(match k {
                CounterKind::Sum => 0,
                CounterKind::Gauge => 1,
            }),
            SymbolKind::Unknown { extra: bytes, .. } => extra.extend_from_slice(bytes),
            _ => {}
        }
        put_varint(out, extra.len() as u64);
        out.extend_from_slice(&extra);
    }
}

/// Reads a symbol block.
pub fn decode_symbol_block(c: &mut Cursor<'_>) -> Result<Vec<Symbol>, DecodeError> {
    let count = c.count(4)?;
    let mut symbols = Vec::with_capacity(count);
    for _ in 0..count {
        let id = c.varint_u32("symbol id")?;
        let kind = c.u8()?;
        let name = c.string()?;
        let extra_len = c.count(1)?;
        let extra = c.bytes(extra_len)?;
        let mut e = Cursor::new(extra);
        let kind = match kind {
            0 => {
                let file = e.string()?;
                let line = e.varint_u32("scope line")?;
                e.finish()?;
                SymbolKind::Scope { file, line }
            }
            1 => SymbolKind::Thread,
            2 => SymbolKind::Pass,
            3 => SymbolKind::Pipeline,
            4 => {
                let offset = c.pos();
                let k = match e.u8()? {
                    0 => CounterKind::Sum,
                    1 => CounterKind::Gauge,
                    v => {
                        return Err(DecodeError::InvalidValue {
                            field: "counter kind",
                            value: u64::from(v),
                            offset,
                        })
                    }
                };
                e.finish()?;
                SymbolKind::Counter(k)
            }
            5 => SymbolKind::Resource,
            6 => SymbolKind::Phase,
            7 => SymbolKind::Mark,
            8 => SymbolKind::Queue,
            9 => SymbolKind::Label,
            other => SymbolKind::Unknown {
                kind: other,
                extra: extra.to_vec(),
            },
        };
        symbols.push(Symbol { id, kind, name });
    }
    Ok(symbols)
}
