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

use crate::usage::UsageError;

/// Files headroom writes at the top of its output directories: a directory holding one of
/// them is headroom's.
const HEADROOM_FILES: [&str; 20] = [
    "config.json",
    "summary.json",
    "histograms.hlog",
    "intervals.csv",
    "error.txt",
    "load.json",
    "search.json",
    "capacity.jsonl",
    "capacity.json",
    "sweep.json",
    "compare.json",
    "matrix.json",
    "report.html",
    "pauses.hlog",
    "pauses.json",
    "maintenance.json",
    "server-tables.json",
    "server-samples.jsonl",
    "populate.hlog",
    "cluster.json",
];

/// Endings of other files headroom writes: percentile distributions, charts, a fleet
/// worker's log, and the temporary names of files replaced atomically.
const HEADROOM_ENDINGS: [&str; 5] = [".hgrm", ".svg", ".log", ".partial", ".tmp"];

/// Folders headroom makes inside its output directories: a search's trials and probe, a
/// fleet's workers and populate, a sweep's steps, a matrix's cluster and server figures.
const HEADROOM_FOLDERS: [&str; 7] = [
    "trials", "probe", "workers", "populate", "steps", "server", "cluster",
];

/// What a local cluster's directory holds besides `cluster.json`: its nodes' folders
/// (`node1`, ...), certificates and credentials; the nodes wrote everything under them.
const CLUSTER_ENTRIES: [&str; 3] = ["tls", "credentials.json", "cluster.json.partial"];

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

/// What an earlier command may have left that a new one replaces without `--force`: the note
/// of a run that never started.
pub const A_RUNS_LEFTOVERS: &[&str] = &["error.txt"];

/// Makes `dir` this command's: fine when it does not exist (the command creates it), is
/// empty, or holds only `leftovers` (which are removed); a directory with other files in it
/// is refused, or with `force` emptied of what headroom wrote, when it holds nothing else.
/// Call it once every other input is checked, before anything connects.
pub fn claim(dir: &Path, force: bool, leftovers: &[&str]) -> Result<(), UsageError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
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
        .any(|n| HEADROOM_FILES.contains(&n.as_str()) || is_worker_folder(n));
    if !force {
        let what = if ours {
            "the files of an earlier run"
        } else {
            "other files"
        };
        let resume = if names.iter().any(|n| n == "search.json") {
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
    let is_cluster = entries.iter().any(|e| e.file_name() == "cluster.json");
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
        if is_cluster && (is_node_folder(&name) || CLUSTER_ENTRIES.contains(&name.as_str())) {
            continue;
        }
        if kind.is_dir() {
            let folder_is_ours = HEADROOM_FOLDERS.contains(&name.as_str())
                || is_worker_folder(&name)
                || HEADROOM_FILES.iter().any(|f| path.join(f).is_file());
            if folder_is_ours {
                search_foreign(&path, foreign, searched);
            } else {
                foreign.push(path);
            }
        } else if !(kind.is_file() && is_headroom_file(&name)) {
            foreign.push(path);
        }
    }
}

/// Whether headroom writes files of this name in its output directories.
fn is_headroom_file(name: &str) -> bool {
    HEADROOM_FILES.contains(&name) || HEADROOM_ENDINGS.iter().any(|end| name.ends_with(end))
}

/// `node1`, `node2`, ...: a local cluster's node folders.
fn is_node_folder(name: &str) -> bool {
    name.strip_prefix("node")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `worker-1`, ...: a fleet worker's run directory, as `kube unpack` writes it, or the
/// working folder of one.
fn is_worker_folder(name: &str) -> bool {
    name.strip_prefix("worker-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
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
    let _ = fs::write(dir.join("error.txt"), format!("{note}\n"));
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
mod tests {
    use super::*;

    #[test]
    fn run_directories_are_named_after_the_workload_file_stem() {
        assert_eq!(out_dir_label("keyvalue"), "keyvalue");
        assert_eq!(out_dir_label("workloads/time series.yaml"), "time-series");
        let dir = default_out_dir("../x/kv.yml");
        assert_eq!(dir.parent(), Some(Path::new("runs")));
        assert!(dir.to_string_lossy().ends_with("-kv"), "{}", dir.display());
    }

    #[test]
    fn a_new_or_empty_directory_is_taken_as_it_is() {
        let root = tempfile::tempdir().unwrap();
        let new = root.path().join("new");
        claim(&new, false, A_RUNS_LEFTOVERS).unwrap();
        assert!(!new.exists(), "the command creates it");
        assert!(may_leave_note(&new));
        fs::create_dir(&new).unwrap();
        claim(&new, false, A_RUNS_LEFTOVERS).unwrap();
        assert!(may_leave_note(&new));
    }

    #[test]
    fn a_directory_with_files_is_refused_unless_forced_and_headrooms() {
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("run");
        fs::create_dir(&run).unwrap();
        fs::write(run.join("summary.json"), "{}").unwrap();
        fs::write(run.join("pauses.json"), "{}").unwrap();
        assert!(!may_leave_note(&run));
        let e = claim(&run, false, A_RUNS_LEFTOVERS)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("already holds the files of an earlier run (pauses.json, summary.json)"),
            "{e}"
        );
        assert!(e.contains("--force"), "{e}");
        fs::write(run.join("search.json"), "{}").unwrap();
        let e = claim(&run, false, A_RUNS_LEFTOVERS)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with(&format!("headroom capacity --resume {}", run.display())),
            "{e}"
        );
        claim(&run, true, A_RUNS_LEFTOVERS).unwrap();
        assert!(run.is_dir());
        assert_eq!(fs::read_dir(&run).unwrap().count(), 0, "emptied");

        let home = root.path().join("home");
        fs::create_dir(&home).unwrap();
        for name in ["notes.txt", "a", "b", "c"] {
            fs::write(home.join(name), "mine").unwrap();
        }
        let e = claim(&home, false, A_RUNS_LEFTOVERS)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("already holds other files (a, b, c, ... 4 in all)"),
            "{e}"
        );
        assert!(!e.contains("--force"), "{e}");
        let e = claim(&home, true, A_RUNS_LEFTOVERS)
            .unwrap_err()
            .to_string();
        assert!(e.contains("headroom did not write"), "{e}");
        assert_eq!(fs::read_dir(&home).unwrap().count(), 4, "untouched");

        // A failed run's note is replaced without --force.
        let failed = root.path().join("failed");
        fs::create_dir(&failed).unwrap();
        fs::write(failed.join("error.txt"), "The run did not start").unwrap();
        claim(&failed, false, A_RUNS_LEFTOVERS).unwrap();
        assert_eq!(fs::read_dir(&failed).unwrap().count(), 0);

        let file = root.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(claim(&file, true, A_RUNS_LEFTOVERS)
            .unwrap_err()
            .to_string()
            .contains("is a file"));
    }

    #[test]
    fn force_removes_what_headroom_wrote_and_never_beside_anything_else() {
        let root = tempfile::tempdir().unwrap();
        // A capacity search with a trial, a fleet's workers and a stray note in a trial.
        let search = root.path().join("search");
        let trial = search.join("trials/rate-1000-repeat-1");
        fs::create_dir_all(trial.join("workers/worker-1")).unwrap();
        for (path, text) in [
            ("search.json", "{}"),
            ("capacity.jsonl", ""),
            ("capacity.json.partial", ""),
            ("trials/rate-1000-repeat-1/config.json", "{}"),
            ("trials/rate-1000-repeat-1/write.hgrm", ""),
            ("trials/rate-1000-repeat-1/workers/worker-1.log", ""),
            (
                "trials/rate-1000-repeat-1/workers/worker-1/summary.json",
                "{}",
            ),
        ] {
            fs::write(search.join(path), text).unwrap();
        }
        fs::write(trial.join("my-notes.md"), "mine").unwrap();
        let e = claim(&search, true, A_RUNS_LEFTOVERS)
            .unwrap_err()
            .to_string();
        assert!(e.contains("headroom did not write"), "{e}");
        assert!(e.contains("my-notes.md"), "{e}");
        assert!(trial.join("config.json").exists(), "nothing removed");
        fs::remove_file(trial.join("my-notes.md")).unwrap();
        claim(&search, true, A_RUNS_LEFTOVERS).unwrap();
        assert_eq!(fs::read_dir(&search).unwrap().count(), 0);

        // A matrix: configurations under their own names, a leftover cluster with its data.
        let matrix = root.path().join("matrix");
        fs::create_dir_all(matrix.join("g1/trials")).unwrap();
        fs::create_dir_all(matrix.join("cluster/node1/data/ks")).unwrap();
        fs::write(matrix.join("matrix.json"), "{}").unwrap();
        fs::write(matrix.join("g1/search.json"), "{}").unwrap();
        fs::write(matrix.join("cluster/cluster.json"), "{}").unwrap();
        fs::write(matrix.join("cluster/node1/data/ks/nb-1-big-Data.db"), "x").unwrap();
        claim(&matrix, true, A_RUNS_LEFTOVERS).unwrap();
        assert_eq!(fs::read_dir(&matrix).unwrap().count(), 0);

        // A folder of the user's among headroom's files.
        let mixed = root.path().join("mixed");
        fs::create_dir_all(mixed.join("photos")).unwrap();
        fs::write(mixed.join("summary.json"), "{}").unwrap();
        let e = claim(&mixed, true, A_RUNS_LEFTOVERS)
            .unwrap_err()
            .to_string();
        assert!(e.contains("photos"), "{e}");
        assert!(mixed.join("summary.json").exists());
    }

    #[test]
    fn an_output_never_is_holds_or_sits_in_an_input() {
        let root = tempfile::tempdir().unwrap();
        let a = root.path().join("a");
        let b = root.path().join("b");
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        let inputs = [a.clone(), b.clone()];
        let spelled = root.path().join("b/../a/.");
        let e = claim_apart(&spelled, &inputs, "--out")
            .unwrap_err()
            .to_string();
        assert!(e.contains(" is the input "), "{e}");
        let e = claim_apart(root.path(), &inputs, "--out")
            .unwrap_err()
            .to_string();
        assert!(e.contains(" holds the input "), "{e}");
        let e = claim_apart(&b.join("new/deeper"), &inputs, "-o")
            .unwrap_err()
            .to_string();
        assert!(e.contains(" is inside the input "), "{e}");
        claim_apart(&root.path().join("merged"), &inputs, "--out").unwrap();
        claim_apart(&root.path().join("ab"), &inputs, "--out").unwrap();
    }

    #[test]
    fn a_file_is_replaced_only_when_headroom_made_it_that_way() {
        let root = tempfile::tempdir().unwrap();
        let report = root.path().join("report.html");
        claim_file(&report, "-o", Made::Report).unwrap();
        fs::write(
            &report,
            "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"generator\" content=\"headroom 0.1.0\">",
        )
        .unwrap();
        claim_file(&report, "-o", Made::Report).unwrap();
        let config = root.path().join("config.json");
        fs::write(&config, "{}").unwrap();
        let e = claim_file(&config, "-o", Made::Report)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a report headroom wrote"), "{e}");
        assert_eq!(fs::read_to_string(&config).unwrap(), "{}");
        let e = claim_file(root.path(), "-o", Made::Report)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a directory"), "{e}");
        let chart = root.path().join("latency.svg");
        fs::write(&chart, format!("{SVG_MARK}\n<svg></svg>")).unwrap();
        claim_file(&chart, "--svg", Made::Chart).unwrap();
        fs::write(&chart, "<svg>someone else's</svg>").unwrap();
        assert!(claim_file(&chart, "--svg", Made::Chart).is_err());
    }

    #[test]
    fn a_command_that_failed_before_any_result_leaves_only_its_note() {
        let root = tempfile::tempdir().unwrap();
        let sweep = root.path().join("sweep");
        fs::create_dir_all(sweep.join("steps/concurrency-4")).unwrap();
        fs::write(sweep.join("sweep.json"), "{}").unwrap();
        fs::write(sweep.join("steps/concurrency-4/error.txt"), "no").unwrap();
        withdraw(&sweep, "The sweep did not start: refused");
        let names: Vec<_> = fs::read_dir(&sweep)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["error.txt"]);
        claim(&sweep, false, A_RUNS_LEFTOVERS).unwrap();
        // Beside a file of the user's, nothing is taken back.
        fs::write(sweep.join("sweep.json"), "{}").unwrap();
        fs::write(sweep.join("mine.txt"), "mine").unwrap();
        withdraw(&sweep, "x");
        assert!(sweep.join("sweep.json").exists());
    }

    #[test]
    fn only_an_unfinished_run_is_done_again_over_its_directory() {
        let root = tempfile::tempdir().unwrap();
        let trial = root.path().join("rate-100-repeat-1");
        replace_unfinished(&trial, false).unwrap();
        fs::create_dir_all(&trial).unwrap();
        fs::write(trial.join("summary.json"), "{}").unwrap();
        let e = replace_unfinished(&trial, true).unwrap_err().to_string();
        assert!(e.contains("finished run"), "{e}");
        assert!(trial.join("summary.json").exists());
        replace_unfinished(&trial, false).unwrap();
        assert!(!trial.exists());
    }
}
