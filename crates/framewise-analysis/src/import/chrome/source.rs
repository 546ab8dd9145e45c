//! The bytes of a Chrome trace as serde_json asks for them: a buffer refilled in pieces from
//! any reader, counting what it hands out (for the offsets of errors and of a cut-off
//! array) and reporting progress on each refill.

use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

use crate::load::Reporter;

/// Where the reader stands, shared with the visitors (serde_json owns the reader while
/// they run).
#[derive(Default)]
pub(super) struct Position {
    /// Bytes handed to the parser.
    pub(super) consumed: Cell<u64>,
    /// One past the last byte handed out that is neither whitespace nor `,`.
    pub(super) significant_end: Cell<u64>,
}

/// The text's bytes as serde_json asks for them (one at a time), from a buffer refilled
/// in pieces; counts them and reports progress on each refill.
pub(super) struct Source<'p, R> {
    pub(super) inner: R,
    pub(super) buf: Vec<u8>,
    pub(super) at: usize,
    pub(super) len: usize,
    pub(super) position: Rc<Position>,
    pub(super) reporter: Reporter<'p>,
}

impl<R: Read> Source<'_, R> {
    pub(super) fn refill(&mut self) -> std::io::Result<()> {
        self.at = 0;
        self.len = loop {
            match self.inner.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        self.reporter.update(self.position.consumed.get());
        Ok(())
    }

    /// Skips whitespace and returns the next byte without consuming it (`None` at the end).
    pub(super) fn peek_significant(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            if self.at == self.len {
                self.refill()?;
                if self.len == 0 {
                    return Ok(None);
                }
            }
            match self.buf.get(self.at) {
                Some(b) if b.is_ascii_whitespace() => {
                    self.at += 1;
                    self.position.consumed.set(self.position.consumed.get() + 1);
                }
                Some(&b) => return Ok(Some(b)),
                None => return Ok(None),
            }
        }
    }
}

impl<R: Read> Read for Source<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.len {
            self.refill()?;
        }
        let available = self.buf.get(self.at..self.len).unwrap_or(&[]);
        let n = available.len().min(out.len());
        let (Some(from), Some(to)) = (available.get(..n), out.get_mut(..n)) else {
            return Ok(0);
        };
        to.copy_from_slice(from);
        let start = self.position.consumed.get();
        if let Some(last) = from
            .iter()
            .rposition(|b| !(b.is_ascii_whitespace() || *b == b','))
        {
            self.position.significant_end.set(start + last as u64 + 1);
        }
        self.position.consumed.set(start + n as u64);
        self.at += n;
        Ok(n)
    }
}
