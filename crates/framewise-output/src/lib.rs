//! # framewise-output — how framewise's tools write a file
//!
//! Every file a framewise tool writes at a path the user named (`framewise trace -o`,
//! `--json PATH`, the demo's capture and golden PNG) goes through this crate, so one rule
//! holds everywhere:
//!
//! - **Symlinks are followed.** The file the link points at is written; the link stays.
//! - **A regular file (or nothing yet) is replaced atomically**: the bytes go to a
//!   temporary file beside it (`.<name>.<pid>-<n>.partial`, with the old file's
//!   permissions), which is renamed over it only when complete. A failed or interrupted
//!   write leaves the old file (or no file) under the name, never half a file.
//! - **Anything else is written through, never renamed over**: a FIFO, a character device
//!   (`/dev/null`, `/dev/stdout`), a socket is opened for writing as it is, as `cat > PATH`
//!   would. Renaming a temporary file over `/dev/null` (as root) would replace the device
//!   with a regular file.
//! - **This process's own stdout or stderr is written through, whatever it is**: a path that
//!   is the file one of them is open on (`/dev/stdout`, `/dev/fd/2`, `/proc/self/fd/1`, or
//!   that file's own name), a regular file included, is written through that very stream
//!   (a duplicate of its descriptor: the same offset, so what the process prints there
//!   follows the bytes instead of overwriting them). Replacing it would leave the stream
//!   writing into a file no name reaches (`tool --json=/dev/stdout > out.txt` would leave
//!   `out.txt` holding the JSON alone).
//! - **A directory is refused** with an error naming it.
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("report.json");
//! framewise_output::write_file(&path, |w| w.write_all(b"{}\n"))?;
//! assert_eq!(std::fs::read(&path)?, b"{}\n");
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! A writer that must hold the file open for a long time and write it in place (the
//! recorder streaming a capture that can be read while it grows) asks [`destination`]
//! where to write instead, and opens a non-regular destination with [`open_through`].

#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Symlinks followed before giving up (Linux's own limit).
const MAX_SYMLINKS: usize = 40;

/// Where the bytes for a user-named path go, after symlinks are followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// A regular file, or no file yet: the path to write (the final target of any
    /// symlinks). [`write_file`] replaces it atomically.
    File(PathBuf),
    /// Not a regular file (a FIFO, a character or block device, a socket), or the file this
    /// process's stdout or stderr is open on ([`standard_stream`]): written through, never
    /// renamed over.
    Through(PathBuf),
}

/// One of this process's standard output streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// File descriptor 1.
    Stdout,
    /// File descriptor 2.
    Stderr,
}

impl Stream {
    /// A duplicate of the stream's descriptor, as a file: it shares the stream's open file
    /// (its offset, its `O_APPEND`). `None` when the descriptor is not open.
    fn duplicate(self) -> Option<File> {
        use std::os::fd::AsFd;
        let fd = match self {
            Self::Stdout => io::stdout().as_fd().try_clone_to_owned(),
            Self::Stderr => io::stderr().as_fd().try_clone_to_owned(),
        };
        fd.ok().map(File::from)
    }
}

/// Which of this process's stdout and stderr `path` is, if either: the same file (device
/// and inode) as the one the stream is open on, reached through any links (`/dev/stdout`,
/// `/dev/fd/1`, `/proc/self/fd/2`) or named directly (the file `> out.txt` made). Stdout
/// when it is both.
pub fn standard_stream(path: &Path) -> Option<Stream> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    [Stream::Stdout, Stream::Stderr].into_iter().find(|stream| {
        stream
            .duplicate()
            .and_then(|f| f.metadata().ok())
            .is_some_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()))
    })
}

impl Destination {
    /// The path the bytes are written to (symlinks followed).
    pub fn path(&self) -> &Path {
        match self {
            Self::File(p) | Self::Through(p) => p,
        }
    }
}

/// An I/O error that names the path as the user spelled it, once.
fn named(path: &Path, what: &str, err: &io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{}: {what}: {err}", path.display()))
}

/// Whether `err` says there is nothing at the path: it does not exist, or a component of
/// its directory is no directory.
fn absent(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Follows `path` through symlinks to the path that is finally written (which need not
/// exist yet: a dangling symlink names the file to create).
fn follow(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
            }
            Ok(_) => return Ok(current),
            // Nothing there to follow (`missing/x`, or `file/x` under a regular file): the
            // file to create, whose creation says which directory is wanting.
            Err(e) if absent(&e) => return Ok(current),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// `path` as given, then each name its symlinks lead to, in order (the last is the file
/// reached, or the name a dangling link gives), at most `MAX_SYMLINKS` links deep: every
/// name a guard that refuses certain files by name must judge.
pub fn link_chain(path: &Path) -> Vec<PathBuf> {
    let mut chain = vec![path.to_path_buf()];
    let mut hop = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        let Ok(next) = std::fs::read_link(&hop) else {
            break;
        };
        hop = match hop.parent() {
            Some(parent) if next.is_relative() => parent.join(next),
            _ => next,
        };
        chain.push(hop.clone());
    }
    chain
}

/// Where the bytes for `path` go: follows symlinks, then tells a regular file (or none)
/// from anything else. A directory is an error that names `path`.
pub fn destination(path: &Path) -> io::Result<Destination> {
    // What the kernel reaches through every link, /proc's included: `/dev/stdout` is a link
    // to `/proc/self/fd/1`, whose text (`pipe:[8812]`) names no path to follow. Anything
    // there but a regular file or a directory is written through as it is, and so is the
    // regular file this process's stdout or stderr is open on (`> out.txt`): the link's text
    // names it, but renaming over it would cut the stream off from its name.
    if let Ok(meta) = std::fs::metadata(path) {
        if (!meta.is_file() && !meta.is_dir())
            || (meta.is_file() && standard_stream(path).is_some())
        {
            return Ok(Destination::Through(path.to_path_buf()));
        }
    }
    let target = follow(path).map_err(|e| named(path, "cannot follow the symlink", &e))?;
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{}: is a directory", path.display()),
        )),
        Ok(meta) if meta.is_file() => Ok(Destination::File(target)),
        Ok(_) => Ok(Destination::Through(target)),
        Err(e) if absent(&e) => Ok(Destination::File(target)),
        Err(e) => Err(named(path, "cannot write", &e)),
    }
}

/// Opens a non-regular destination for writing as it is: no creation, no truncation, no
/// rename (opening a FIFO waits for its reader, as `cat > FIFO` does). This process's own
/// stdout or stderr ([`standard_stream`]) is not opened again but duplicated: a new opening
/// of a regular file would write from its start, over what the stream printed, and a
/// socket cannot be opened by name at all. `shown` is the path as the user spelled it, for
/// the error.
pub fn open_through(shown: &Path, target: &Path) -> io::Result<File> {
    if let Some(file) = standard_stream(target).and_then(Stream::duplicate) {
        return Ok(file);
    }
    OpenOptions::new()
        .write(true)
        .open(target)
        .map_err(|e| named(shown, "cannot open for writing", &e))
}

/// Why the file for `shown` (written at `target`) cannot be created, said of the directory
/// it would go in: `out/x.json: cannot create it: out does not exist` when that directory is
/// missing, `…: out is not a directory` when a file stands in its way, else `…: cannot write
/// in DIR: <the OS's reason>`.
fn cannot_create(shown: &Path, target: &Path, err: &io::Error) -> io::Error {
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let message = if matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    ) {
        format!(
            "{}: cannot create it: {}",
            shown.display(),
            no_directory(dir)
        )
    } else {
        format!(
            "{}: cannot write in {}: {err}",
            shown.display(),
            dir.display()
        )
    };
    io::Error::new(err.kind(), message)
}

/// Why `dir` cannot hold a new file, when it is not a directory one can create files in:
/// `DIR does not exist` (nothing there, or a dangling link), `DIR is not a directory` (a
/// file, or a path through one), or `DIR takes no new files` (a directory whose file system
/// creates none, such as `/proc`).
pub fn no_directory(dir: &Path) -> String {
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            format!("{} does not exist", dir.display())
        }
        Ok(meta) if meta.is_dir() => format!("{} takes no new files", dir.display()),
        _ => format!("{} is not a directory", dir.display()),
    }
}

/// Distinguishes temporary files made by one process.
static TEMPORARIES: AtomicU64 = AtomicU64::new(0);

/// A temporary file beside the destination, removed on drop unless renamed into place.
struct Temporary {
    path: PathBuf,
    kept: bool,
}

impl Temporary {
    fn create(target: &Path) -> io::Result<(Self, File)> {
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target.file_name().unwrap_or_default();
        loop {
            let n = TEMPORARIES.fetch_add(1, Ordering::Relaxed);
            let mut temp_name = OsString::from(".");
            temp_name.push(name);
            temp_name.push(format!(".{}-{n}.partial", std::process::id()));
            let path = parent.join(temp_name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => return Ok((Self { path, kept: false }, file)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Writes the file at `path` by the crate's rule: `write` gets a buffered writer; a regular
/// destination is replaced only once `write` succeeded and everything was flushed; a
/// non-regular one is written through. `write`'s own error is returned as it is; this
/// function's errors (cannot create, cannot rename) name `path` once.
pub fn write_file<T, E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<T, E>,
) -> Result<T, E> {
    match destination(path)? {
        Destination::Through(target) => {
            let mut out = BufWriter::new(open_through(path, &target)?);
            let value = write(&mut out)?;
            out.flush().map_err(|e| named(path, "cannot write", &e))?;
            Ok(value)
        }
        Destination::File(target) => {
            let (mut temp, file) =
                Temporary::create(&target).map_err(|e| cannot_create(path, &target, &e))?;
            if let Ok(meta) = std::fs::metadata(&target) {
                // The replacement keeps the permissions the file had.
                let _ = file.set_permissions(meta.permissions());
            }
            let mut out = BufWriter::new(file);
            let value = write(&mut out)?;
            out.flush().map_err(|e| named(path, "cannot write", &e))?;
            drop(out);
            std::fs::rename(&temp.path, &target)
                .map_err(|e| named(path, "cannot move the finished file into place", &e))?;
            temp.kept = true;
            Ok(value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".partial"))
            .collect()
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_missing_directory_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("out.json");
        let err = write_file(&path, |w| w.write_all(b"x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: cannot create it: {} does not exist",
                path.display(),
                dir.path().join("missing").display()
            )
        );
        // Through a dangling symlink: the directory named is the one the link points into.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("/nonexistent-framewise/x.json", &link).unwrap();
        let err = write_file(&link, |w| w.write_all(b"x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: cannot create it: /nonexistent-framewise does not exist",
                link.display()
            )
        );
    }

    #[test]
    fn a_descriptor_s_link_to_a_pipe_is_written_through() {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        let (mut reader, writer) = std::io::pipe().unwrap();
        // What `-o /dev/stdout` reaches when stdout is a pipe.
        let path = PathBuf::from(format!("/proc/self/fd/{}", writer.as_raw_fd()));
        assert!(matches!(
            destination(&path).unwrap(),
            Destination::Through(_)
        ));
        write_file(&path, |w| w.write_all(b"through")).unwrap();
        drop(writer);
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        assert_eq!(text, "through");
    }

    /// A file in /proc (a directory that creates no file) said "/proc is not a directory".
    #[cfg(target_os = "linux")]
    #[test]
    fn a_directory_that_takes_no_new_files_is_named_as_such() {
        let path = Path::new("/proc/version");
        let err = write_file(path, |w| w.write_all(b"x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/proc/version: cannot create it: /proc takes no new files"
        );
    }

    #[test]
    fn a_path_under_a_regular_file_names_that_file_as_no_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("afile");
        std::fs::write(&file, "x").unwrap();
        let path = file.join("out.json");
        let err = write_file(&path, |w| w.write_all(b"x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: cannot create it: {} is not a directory",
                path.display(),
                file.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, "old").unwrap();
        let err = write_file(&path, |w| {
            w.write_all(b"half")?;
            Err::<(), _>(io::Error::other("the export failed"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "the export failed");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_symlink_is_followed_and_stays_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.json");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("target.json", &link).unwrap();
        // Dangling: the file it names is created.
        write_file(&link, |w| w.write_all(b"one")).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "one");
        write_file(&link, |w| w.write_all(b"two")).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
    }

    #[test]
    fn a_fifo_is_written_through_and_stays_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_file(&fifo, |w| w.write_all(b"through")).unwrap();
        assert_eq!(reader.join().unwrap(), b"through");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_directory_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_file(dir.path(), |w| w.write_all(b"x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{}: is a directory", dir.path().display())
        );
    }
}
