//! The `CENS` payload (format version 2): a scene census, carried as the JSON document
//! `framewise.census/1` (docs/cli/census.md). This crate checks the framing (symbol block, one
//! UTF-8 string, nothing after it); the document's own shape is read by `framewise-census`.

use crate::error::DecodeError;
use crate::model::Symbol;
use crate::payload::symbols::{decode_symbol_block, encode_symbol_block};
use crate::wire::{put_str, Cursor};

/// Appends a CENS payload: an empty symbol block (the document names nothing by symbol),
/// then the document.
pub fn encode_census(out: &mut Vec<u8>, document: &str) {
    encode_symbol_block(out, std::iter::empty());
    put_str(out, document);
}

/// Reads a CENS payload: the symbols its block defines and the document.
pub fn decode_census(payload: &[u8]) -> Result<(Vec<Symbol>, String), DecodeError> {
    let mut c = Cursor::new(payload);
    let symbols = decode_symbol_block(&mut c)?;
    let document = c.string()?;
    c.finish()?;
    Ok((symbols, document))
}
