//! Errors in what the user typed, found by headroom rather than by clap: a flag's value that
//! cannot work, a file that cannot be read as what it should be, an output directory that is
//! not free. Such an error ends a command with exit code 2, as clap's own do, before anything
//! connects or is written.

/// Whether an error is the user's to mend (a flag, a file, a host, credentials) rather than a
/// failure: the one question that decides exit code 2. Each concern's error type answers it
/// for its own variants (a cluster's invalid configuration is the user's; a node that will
/// not start is not).
pub trait Blame {
    /// Whether this error comes from what the user gave.
    fn is_usage_error(&self) -> bool;
}

/// What the user gave cannot work; the message names the flag or file and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

impl UsageError {
    /// An error with this message (one line, naming the flag or file).
    pub fn new(message: impl Into<String>) -> UsageError {
        UsageError(message.into())
    }
}

impl Blame for UsageError {
    fn is_usage_error(&self) -> bool {
        true
    }
}

/// A [`UsageError`] with this message, as an [`anyhow::Error`] for a command's result.
pub fn usage_error(message: impl Into<String>) -> anyhow::Error {
    UsageError::new(message).into()
}

/// What an I/O error says, in words, without the number the system gives it
/// ("No such file or directory", not "... (os error 2)").
pub fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

/// Input quoted in a message, cut short when long: its first `max` characters, then how
/// long it was. A 1 MB file echoed whole helps no one.
pub fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}… ({count} characters)")
}

/// `text` with each line over `max` characters cut short ([`cut`]): the safety net of every
/// message headroom prints on its way out.
pub fn cut_lines(text: &str, max: usize) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            let (body, end) = match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            };
            format!("{}{end}", cut(body, max))
        })
        .collect()
}

/// The largest input file headroom reads (a workload, profile or property file, a run's
/// JSON): far above any real one, far below what would exhaust memory.
pub const MAX_INPUT_FILE_BYTES: u64 = 10 << 20;

/// Opens a file the user named for reading, refusing anything but a regular file (a
/// directory, a FIFO, a device such as /dev/zero) by name before it is opened: opening a
/// FIFO with no writer would block for ever. The file is opened non-blocking and checked
/// again, should it have been replaced in between. `what` says what the file is, e.g. "the
/// workload file".
pub fn open_input_file(
    path: &std::path::Path,
    what: &str,
) -> Result<(std::fs::File, std::fs::Metadata), UsageError> {
    use std::os::unix::fs::OpenOptionsExt;
    let display = path.display();
    let cannot = |e: std::io::Error| UsageError::new(format!("cannot read {what} {display}: {e}"));
    let kind = |meta: &std::fs::Metadata| -> Result<(), UsageError> {
        if meta.is_dir() {
            Err(UsageError::new(format!("{what} {display} is a directory")))
        } else if !meta.is_file() {
            Err(UsageError::new(format!(
                "{what} {display} is not a regular file (a FIFO, socket or device): give a file"
            )))
        } else {
            Ok(())
        }
    };
    kind(&std::fs::metadata(path).map_err(cannot)?)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    kind(&meta)?;
    Ok((file, meta))
}

/// The largest data file of a run directory headroom reads back (a long run's histogram
/// log): far above a day of one-second intervals, below what would exhaust memory.
pub const MAX_DATA_FILE_BYTES: u64 = 1 << 30;

/// Reads a file headroom may find in a directory it was given (a run's JSON, a histogram
/// log), with [`open_input_file`]'s care and at most `max` bytes: a FIFO or device in
/// its place is an error, never a wait, and an outsized file is an error before it is
/// read. The errors are I/O errors, a missing file [`std::io::ErrorKind::NotFound`] as
/// usual, for callers that treat absence as a case of its own.
pub fn read_bounded(path: &std::path::Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let not_regular = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, socket or device)",
        )
    };
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let too_large = || {
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("more than the {} MB headroom reads", max >> 20),
        )
    };
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_bounded`] as text; bytes that are not UTF-8 are an
/// [`std::io::ErrorKind::InvalidData`] error.
pub fn read_bounded_text(path: &std::path::Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_bounded(path, max)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Reads a text file the user named, refusing one over [`MAX_INPUT_FILE_BYTES`] (or not a
/// regular file, such as /dev/zero or a FIFO) by name before reading it, and text that is
/// not UTF-8. `what` says what the file is, e.g. "the workload file".
pub fn read_input_file(path: &std::path::Path, what: &str) -> Result<String, UsageError> {
    use std::io::Read;
    let display = path.display();
    let (file, meta) = open_input_file(path, what)?;
    if meta.len() > MAX_INPUT_FILE_BYTES {
        return Err(UsageError::new(format!(
            "{what} {display} is {:.1} MB: more than the {} MB headroom reads",
            meta.len() as f64 / (1u64 << 20) as f64,
            MAX_INPUT_FILE_BYTES >> 20
        )));
    }
    let mut bytes = Vec::new();
    // A file that grows while it is read still stops at the limit.
    file.take(MAX_INPUT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| UsageError::new(format!("cannot read {what} {display}: {e}")))?;
    if bytes.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(UsageError::new(format!(
            "{what} {display} is more than the {} MB headroom reads",
            MAX_INPUT_FILE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        UsageError::new(format!(
            "{what} {display} is not text (UTF-8): byte {} cannot be read",
            e.utf8_error().valid_up_to()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_is_said_without_its_number() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(io_reason(&e), "No such file or directory");
        let e = std::io::Error::other("odd (really)");
        assert_eq!(io_reason(&e), "odd (really)");
    }

    #[test]
    fn long_input_is_quoted_cut_short() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("abcdefghijkl", 4), "abcd… (12 characters)");
        assert_eq!(cut("ééééé", 2), "éé… (5 characters)");
    }

    #[test]
    fn each_line_of_a_message_is_cut_on_its_own() {
        let text = format!("short\n{}\nend", "x".repeat(50));
        assert_eq!(
            cut_lines(&text, 10),
            "short\nxxxxxxxxxx… (50 characters)\nend"
        );
        assert_eq!(cut_lines("a\n", 10), "a\n");
    }

    #[test]
    fn input_files_are_refused_by_name_when_they_cannot_be_text() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok.yaml");
        std::fs::write(&ok, "a: 1\n").unwrap();
        assert_eq!(read_input_file(&ok, "the workload file").unwrap(), "a: 1\n");
        let big = dir.path().join("big.yaml");
        std::fs::write(&big, vec![b'#'; (MAX_INPUT_FILE_BYTES + 1) as usize]).unwrap();
        let e = read_input_file(&big, "the workload file")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("big.yaml is 10.0 MB: more than the 10 MB"),
            "{e}"
        );
        let e = read_input_file(std::path::Path::new("/dev/zero"), "the property file")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("the property file /dev/zero is not a regular file"),
            "{e}"
        );
        // A FIFO nobody writes to: refused at once, never opened (which would block).
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read_input_file(&fifo, "--password-file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("fifo is not a regular file (a FIFO"), "{e}");
        let e = read_input_file(dir.path(), "the profile")
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("is a directory"), "{e}");
        let binary = dir.path().join("bin");
        std::fs::write(&binary, [b'a', 0xff, b'b']).unwrap();
        let e = read_input_file(&binary, "the profile")
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("is not text (UTF-8): byte 1 cannot be read"),
            "{e}"
        );
        let e = read_input_file(&dir.path().join("none"), "the profile")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot read the profile"), "{e}");
    }
}
