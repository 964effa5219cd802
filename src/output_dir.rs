//! Where headroom writes, and the one rule every command's outputs go through: headroom
//! never deletes or overwrites a file it did not write, and never one of a command's inputs.
//!
//! - An output directory (`--out`) belongs to one run, search, sweep, comparison or merge:
//!   files of two runs in one directory would be read back as one (a new run's report
//!   drawing the old run's pauses). [`claim`] refuses a directory that already holds files,
//!   unless the user asked for `--force`, which then removes what headroom wrote there and
//!   nothing else: a directory holding anything headroom does not write is refused whole.
//! - An output that would be, hold or sit inside one of the command's input directories is
//!   refused ([`claim_apart`]): `merge A B --out A --force` would empty an input.
//! - A single output file (a report, a chart) replaces only a file headroom made of that
//!   kind, recognised by its content ([`claim_file`]): `report RUN -o RUN/config.json` must
//!   not turn the run's configuration into HTML.
//! - A run a search does again (`--resume` after an interruption) replaces only an
//!   unfinished run's directory ([`replace_unfinished`]).

use std::fs;
use std::io::{ErrorKind, Read};
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use crate::catalogue::{self, Kind, ERROR_TXT, SEARCH_JSON};
use crate::usage::UsageError;

/// The most entries [`foreign_entries`] looks at: a directory with more is not searched
/// further (a home directory given as `--out` by mistake).
const MAX_ENTRIES_SEARCHED: usize = 100_000;

/// runs/<UTC time>-<what>, e.g. runs/20261122-041500-keyvalue; with `-2`, `-3`... when a
/// command of the same second has it already.
pub fn default_out_dir(what: &str) -> PathBuf {
    let stamp = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let stamp: String = stamp
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect::<String>()
        .replace('T', "-");
    let base = format!("{stamp}-{}", out_dir_label(what));
    (1..)
        .map(|n| match n {
            1 => PathBuf::from("runs").join(&base),
            n => PathBuf::from("runs").join(format!("{base}-{n}")),
        })
        .find(|dir| !dir.exists())
        .expect("an unused name")
}

/// What names a run directory: a workload file's stem (`workloads/kv.yaml` gives `kv`),
/// with anything but letters, digits, `-` and `_` made a `-`.
fn out_dir_label(what: &str) -> String {
    let stem = Path::new(what)
        .file_stem()
        .map_or(what.into(), |s| s.to_string_lossy());
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Whether the directory `dir`, which does not exist, can be made: its nearest existing
/// ancestor must be a directory in which one can be made. The first missing level is made
/// and removed again at once, so that a place no directory can go (`/proc/x`, a read-only
/// mount, a file's "subdirectory") is refused before anything connects, and nothing is left.
pub fn check_creatable(dir: &Path, flag: &str) -> Result<(), UsageError> {
    let mut first_missing = dir.to_path_buf();
    let mut ancestor = dir.parent();
    while let Some(parent) = ancestor {
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        match fs::metadata(parent) {
            Ok(meta) if meta.is_dir() => break,
            Ok(_) => {
                return Err(UsageError::new(format!(
                    "{flag} {}: {} is a file, not a directory",
                    dir.display(),
                    parent.display()
                )))
            }
            Err(_) => {
                first_missing = parent.to_path_buf();
                ancestor = parent.parent();
            }
        }
    }
    match fs::create_dir(&first_missing) {
        Ok(()) => {
            let _ = fs::remove_dir(&first_missing);
            Ok(())
        }
        // Made meanwhile by someone else: it can be used.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(UsageError::new(format!(
            "{flag} {}: {} cannot be made there ({})",
            dir.display(),
            if first_missing == dir {
                "the directory".to_string()
            } else {
                first_missing.display().to_string()
            },
            crate::usage::io_reason(&e)
        ))),
    }
}

/// What an earlier command may have left that a new one replaces without `--force`: the note
/// of a run that never started.
pub const A_RUNS_LEFTOVERS: &[&str] = &[ERROR_TXT];

/// Makes `dir` this command's: fine when it does not exist (the command creates it), is
/// empty, or holds only `leftovers` (which are removed); a directory with other files in it
/// is refused, or with `force` emptied of what headroom wrote, when it holds nothing else.
/// Call it once every other input is checked, before anything connects.
pub fn claim(dir: &Path, force: bool, leftovers: &[&str]) -> Result<(), UsageError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        // Missing, or below a file: whether it can be made says which.
        Err(e)
            if e.kind() == ErrorKind::NotFound
                || (e.kind() == ErrorKind::NotADirectory && !dir.is_file()) =>
        {
            return check_creatable(dir, "--out")
        }
        Err(e) if e.kind() == ErrorKind::NotADirectory || dir.is_file() => {
            return Err(UsageError::new(format!(
                "--out {} is a file, not a directory",
                dir.display()
            )))
        }
        Err(e) => {
            return Err(UsageError::new(format!(
                "--out {} cannot be read: {e}",
                dir.display()
            )))
        }
    };
    let names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if names.iter().all(|n| leftovers.contains(&n.as_str())) {
        for name in &names {
            fs::remove_file(dir.join(name)).map_err(|e| {
                UsageError::new(format!(
                    "--out {}: cannot remove {name}: {e}",
                    dir.display()
                ))
            })?;
        }
        return Ok(());
    }
    let ours = names
        .iter()
        .any(|n| catalogue::is_marker(n) || is_worker_folder(n));
    if !force {
        let what = if ours {
            "the files of an earlier run"
        } else {
            "other files"
        };
        let resume = if names.iter().any(|n| n == SEARCH_JSON) {
            format!(
                "; to continue that capacity search: headroom capacity --resume {}",
                dir.display()
            )
        } else {
            String::new()
        };
        return Err(UsageError::new(format!(
            "--out {} already holds {what} ({}): an output directory belongs to one run. \
             Give another --out{}{resume}",
            dir.display(),
            sample(&names),
            if ours {
                ", or --force to empty it first"
            } else {
                ""
            }
        )));
    }
    let foreign = foreign_entries(dir);
    if !ours || !foreign.is_empty() {
        let shown: Vec<String> = if foreign.is_empty() {
            names.clone()
        } else {
            foreign
                .iter()
                .map(|p| p.strip_prefix(dir).unwrap_or(p).display().to_string())
                .collect()
        };
        return Err(UsageError::new(format!(
            "--out {} holds files headroom did not write ({}): --force removes only what \
             headroom wrote, and never beside other files. Give another --out, or move them",
            dir.display(),
            sample(&shown)
        )));
    }
    for name in &names {
        let path = dir.join(name);
        let removed = if path.is_dir() && !path.is_symlink() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(|e| {
            UsageError::new(format!("--force could not remove {}: {e}", path.display()))
        })?;
    }
    Ok(())
}

/// The entries under `dir` that headroom does not write (or cannot tell), at most a few:
/// what `--force` must never remove. A folder is headroom's when it is one of the folders
/// headroom makes, or an output directory of its own (it holds one of headroom's files),
/// and everything in it is headroom's; a local cluster's folder (`cluster.json`) is wholly
/// headroom's, its nodes' data included.
fn foreign_entries(dir: &Path) -> Vec<PathBuf> {
    let mut foreign = Vec::new();
    let mut searched = 0;
    search_foreign(dir, &mut foreign, &mut searched);
    foreign
}

fn search_foreign(dir: &Path, foreign: &mut Vec<PathBuf>, searched: &mut usize) {
    let Ok(entries) = fs::read_dir(dir) else {
        foreign.push(dir.to_path_buf());
        return;
    };
    let entries: Vec<fs::DirEntry> = entries.filter_map(Result::ok).collect();
    let is_cluster = entries
        .iter()
        .any(|e| e.file_name() == catalogue::CLUSTER_JSON);
    for entry in entries {
        if foreign.len() >= 3 {
            return;
        }
        *searched += 1;
        if *searched > MAX_ENTRIES_SEARCHED {
            foreign.push(dir.to_path_buf());
            return;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            foreign.push(path);
            continue;
        };
        if is_cluster && catalogue::is_cluster_entry(&name) {
            continue;
        }
        if kind.is_dir() {
            match catalogue::output_folder(&name) {
                Some(entry) if entry.kind == Kind::Whole => {}
                Some(_) => search_foreign(&path, foreign, searched),
                None if holds_marker(&path) => search_foreign(&path, foreign, searched),
                None => foreign.push(path),
            }
        } else if !(kind.is_file() && catalogue::is_output_file(&name)) {
            foreign.push(path);
        }
    }
}

/// Whether the folder `dir` is an output directory of headroom's own: it holds one of the
/// files whose names make a directory headroom's.
fn holds_marker(dir: &Path) -> bool {
    catalogue::ENTRIES
        .iter()
        .any(|e| catalogue::is_marker(e.name) && dir.join(e.name).is_file())
}

/// `worker-1`, ...: a fleet worker's run directory, as `kube unpack` writes it, or the
/// working folder of one.
fn is_worker_folder(name: &str) -> bool {
    catalogue::matches(catalogue::WORKER_DIR, name)
}

/// Makes `dir` a new directory's place: fine when it does not exist or is empty, refused
/// when it holds anything (say, a worker's run unpacked there before).
pub fn claim_new(dir: &Path) -> Result<(), UsageError> {
    match fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => Err(UsageError::new(format!(
            "{} holds files already: headroom writes a new directory there only. Give another \
             --out, or move it away",
            dir.display()
        ))),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(UsageError::new(format!(
            "{} cannot be used: {e}",
            dir.display()
        ))),
    }
}

/// Refuses an output directory `out` (given as `flag`) that is one of the command's input
/// directories, holds one, or lies inside one: writing there, or emptying it with
/// `--force`, would change what the command reads.
pub fn claim_apart(out: &Path, inputs: &[PathBuf], flag: &str) -> Result<(), UsageError> {
    let out_abs = absolute(out);
    for input in inputs {
        let input_abs = absolute(input);
        let relation = if out_abs == input_abs {
            "is"
        } else if input_abs.starts_with(&out_abs) {
            "holds"
        } else if out_abs.starts_with(&input_abs) {
            "is inside"
        } else {
            continue;
        };
        return Err(UsageError::new(format!(
            "{flag} {} {relation} the input {}: headroom never writes over what it reads. \
             Give another {flag}",
            out.display(),
            input.display()
        )));
    }
    Ok(())
}

/// A path made absolute and free of `.`, `..` and symbolic links as far as it exists, so
/// that two spellings of one place compare equal.
fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    // The longest part that exists, resolved; the rest added word by word.
    let mut existing = joined.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(resolved) = existing.canonicalize() {
            let mut out = resolved;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize(&out);
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return normalize(&joined),
        }
    }
}

/// `a/./b/../c` as `a/c`, without asking the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A kind of file headroom writes alone, recognised by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    /// An HTML report: `<meta name="generator" content="headroom ...">` in its head.
    Report,
    /// A chart as SVG: [`SVG_MARK`] before its root element.
    Chart,
    /// A worker image archive (`kube image`): a tar whose first entry is `blobs/`.
    ImageArchive,
}

/// The first line of every SVG file headroom writes, so that `--svg` recognises its own.
pub const SVG_MARK: &str = "<!-- a chart of headroom's -->";

impl Made {
    fn recognises(self, head: &str) -> bool {
        match self {
            Made::Report => head.contains("<meta name=\"generator\" content=\"headroom"),
            Made::Chart => head.starts_with(SVG_MARK),
            // A tar header's first bytes are the entry's name.
            Made::ImageArchive => head.starts_with("blobs/\0"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Made::Report => "a report",
            Made::Chart => "a chart",
            Made::ImageArchive => "an image archive",
        }
    }
}

/// Makes `path` (given as `flag`) free for a file of kind `made`: fine when nothing is
/// there, or when headroom wrote the file there as that kind (it is replaced); refused when
/// it is a directory, not a regular file, or a file headroom did not make that way, such as
/// a run's own `config.json`.
pub fn claim_file(path: &Path, flag: &str, made: Made) -> Result<(), UsageError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(UsageError::new(format!(
                "{flag} {} cannot be checked: {e}",
                path.display()
            )))
        }
    };
    if meta.is_dir() {
        return Err(UsageError::new(format!(
            "{flag} {} is a directory: give the file to write",
            path.display()
        )));
    }
    let refuse = || {
        UsageError::new(format!(
            "{flag} {} exists and is not {} headroom wrote: headroom never overwrites a file \
             it did not write. Give another {flag}, or remove the file first",
            path.display(),
            made.name()
        ))
    };
    if !meta.is_file() {
        return Err(refuse());
    }
    let mut head = Vec::with_capacity(4096);
    let read = fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    if read.is_err() || !made.recognises(&String::from_utf8_lossy(&head)) {
        return Err(refuse());
    }
    Ok(())
}

/// Makes way for a run a search does again: `dir` is removed when it holds an unfinished
/// run (one interrupted or failed before its end, `finished` false), and refused when its
/// run finished: that run has results, and whatever lost its record must be mended first.
pub fn replace_unfinished(dir: &Path, finished: bool) -> Result<(), UsageError> {
    if !dir.exists() {
        return Ok(());
    }
    if finished {
        return Err(UsageError::new(format!(
            "{} holds a finished run that the search has no record of: headroom will not \
             run it again over its files. Its record was lost from capacity.jsonl (cut or \
             edited); restore the file, or move {} away, then resume",
            dir.display(),
            dir.display()
        )));
    }
    let foreign = foreign_entries(dir);
    if !foreign.is_empty() {
        let shown: Vec<String> = foreign.iter().map(|p| p.display().to_string()).collect();
        return Err(UsageError::new(format!(
            "{} holds files headroom did not write ({}): move them away, then resume",
            dir.display(),
            sample(&shown)
        )));
    }
    fs::remove_dir_all(dir)
        .map_err(|e| UsageError::new(format!("cannot remove {}: {e}", dir.display())))
}

/// Takes back what a command wrote in `dir` before it failed without a result (a sweep
/// whose first step could not start), leaving only its `error.txt`: a directory holding
/// only that is free for the next attempt without `--force` ([`A_RUNS_LEFTOVERS`]). Does
/// nothing when `dir` holds anything headroom did not write.
pub fn withdraw(dir: &Path, note: &str) {
    if !foreign_entries(dir).is_empty() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let _ = if path.is_dir() && !path.is_symlink() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
    }
    let _ = fs::write(dir.join(ERROR_TXT), format!("{note}\n"));
}

/// Whether a failed command may leave its note in `dir`: only when the directory is its own,
/// that is it does not exist yet or is empty.
pub fn may_leave_note(dir: &Path) -> bool {
    match fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) => e.kind() == ErrorKind::NotFound,
    }
}

/// A few of the names, sorted, for a message.
fn sample(names: &[String]) -> String {
    let mut names = names.to_vec();
    names.sort();
    let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    if names.len() > shown.len() {
        format!("{}, ... {} in all", shown.join(", "), names.len())
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
#[path = "output_dir_tests.rs"]
mod tests;
