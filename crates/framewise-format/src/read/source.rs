//! Where an opened capture's bytes come from: memory, or the file read at an offset.

use std::borrow::Cow;
use std::fs::File;
#[cfg(not(unix))]
use std::io::{Read, Seek, SeekFrom};
use std::sync::Mutex;

pub(super) enum Source {
    Memory(Vec<u8>),
    File(Mutex<File>),
}

impl Source {
    pub(super) fn read_at(&self, offset: u64, len: u64) -> std::io::Result<Cow<'_, [u8]>> {
        match self {
            Source::Memory(bytes) => {
                let range = usize::try_from(offset)
                    .ok()
                    .and_then(|s| Some(s..s.checked_add(usize::try_from(len).ok()?)?))
                    .filter(|r| r.end <= bytes.len())
                    .ok_or_else(|| {
                        std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "range past the end")
                    })?;
                Ok(Cow::Borrowed(&bytes[range]))
            }
            Source::File(file) => {
                let mut buf = vec![0u8; usize::try_from(len).map_err(std::io::Error::other)?];
                let guard = file
                    .lock()
                    .map_err(|_| std::io::Error::other("file lock poisoned"))?;
                // One positioned read (pread) where the platform has it: a frame read is
                // one system call, not a seek and a read.
                #[cfg(unix)]
                {
                    use std::os::unix::fs::FileExt;
                    guard.read_exact_at(&mut buf, offset)?;
                }
                #[cfg(not(unix))]
                {
                    let mut f = guard;
                    f.seek(SeekFrom::Start(offset))?;
                    f.read_exact(&mut buf)?;
                }
                Ok(Cow::Owned(buf))
            }
        }
    }
}
