//! Inputs the MCP server must not open: its own streams (stdin carries the protocol) and
//! pipes or devices (reading one can block the server for good).

use std::path::Path;

/// Refuses an input the server must not open: a path naming one of its own streams
/// (`/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N`, `-`: its stdin carries the protocol, which
/// the tool would swallow), or a FIFO, a device or a socket (reading one blocks until a
/// writer comes, maybe forever, and the server would never exit). A regular file, a
/// directory and a path that does not exist are left to the verb, which says what is wrong.
pub(super) fn regular_input(argument: &str, path: &Path) -> anyhow::Result<()> {
    let shown = path.display();
    let meta = std::fs::metadata(path);
    if path.as_os_str() == "-" && meta.is_err() {
        anyhow::bail!(
            "{argument}: `-` is not a file, and the server's stdin carries the protocol: name a file"
        );
    }
    if names_a_stream(path) {
        anyhow::bail!(
            "{argument}: {shown} names one of the server's open streams (its stdin carries the protocol): name a file"
        );
    }
    if let Ok(meta) = meta {
        if !meta.is_file() && !meta.is_dir() {
            anyhow::bail!(
                "{argument}: {shown} is a {}, not a regular file: the server reads files only (a pipe or a device could block it)",
                framewise_analysis::load::file_kind(&meta)
            );
        }
    }
    Ok(())
}

/// Whether `path` names a file descriptor of the reading process: `/dev/stdin`,
/// `/dev/stdout`, `/dev/stderr`, anything in `/dev/fd/` or a `/proc/…/fd/` directory (by
/// where its directory really is, so `../../dev/stdin` and links to these directories count).
pub(super) fn names_a_stream(path: &Path) -> bool {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let Ok(parent) = parent.canonicalize() else {
        return false;
    };
    let in_dev = parent == Path::new("/dev");
    (in_dev && ["stdin", "stdout", "stderr"].iter().any(|s| name == *s))
        || parent == Path::new("/dev/fd")
        || (parent.starts_with("/proc") && parent.file_name().is_some_and(|n| n == "fd"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_own_streams_are_named_as_such() {
        for path in [
            "/dev/stdin",
            "/dev/stdout",
            "/dev/fd/0",
            "/dev/fd/7",
            "/proc/self/fd/0",
            "/proc/1/fd/3",
        ] {
            assert!(names_a_stream(Path::new(path)), "{path}");
        }
        for path in [
            "/dev/null",
            "/tmp/x.sgpt",
            "x.sgpt",
            "/proc/self/status",
            "/dev",
        ] {
            assert!(!names_a_stream(Path::new(path)), "{path}");
        }
        let refused = regular_input("capture", Path::new("/dev/stdin")).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("capture: /dev/stdin names one of the server's open streams"),
            "{refused}"
        );
        let refused = regular_input("capture", Path::new("/dev/null")).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("is a character device, not a regular file"),
            "{refused}"
        );
        assert!(regular_input("capture", Path::new("no/such/file.sgpt")).is_ok());
    }
}
