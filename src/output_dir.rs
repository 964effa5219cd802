//! A command's output directory (`--out`) belongs to one run, search, sweep or comparison:
//! files of two runs in one directory would be read back as one (a new run's report drawing
//! the old run's pauses). [`claim`] refuses a directory that already holds files, unless the
//! user asked for `--force`, which empties it first — and only a directory headroom wrote.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::usage::UsageError;

/// Files headroom writes at the top of its output directories: a directory holding one of
/// them is headroom's, and `--force` may empty it.
const HEADROOM_FILES: [&str; 13] = [
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
];

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

/// What `compare` leaves: a comparison is made again from its directories, so a new one
/// replaces it.
pub const A_COMPARISONS_LEFTOVERS: &[&str] = &["compare.json", "report.html", "error.txt"];

/// Makes `dir` this command's: fine when it does not exist (the command creates it), is
/// empty, or holds only `leftovers` (which are removed); a directory with other files in it
/// is refused, or with `force` emptied when headroom wrote it. Call it once every other input
/// is checked, before anything connects.
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
    let ours = names.iter().any(|n| HEADROOM_FILES.contains(&n.as_str()));
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
    if !ours {
        return Err(UsageError::new(format!(
            "--out {} holds files headroom did not write ({}): --force empties only a \
             directory of headroom's. Give another --out",
            dir.display(),
            sample(&names)
        )));
    }
    fs::remove_dir_all(dir)
        .and_then(|()| fs::create_dir_all(dir))
        .map_err(|e| UsageError::new(format!("--force could not empty {}: {e}", dir.display())))?;
    Ok(())
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

        // A failed run's note, or an earlier comparison, is replaced without --force.
        let failed = root.path().join("failed");
        fs::create_dir(&failed).unwrap();
        fs::write(failed.join("error.txt"), "The run did not start").unwrap();
        claim(&failed, false, A_RUNS_LEFTOVERS).unwrap();
        assert_eq!(fs::read_dir(&failed).unwrap().count(), 0);
        let compared = root.path().join("compared");
        fs::create_dir(&compared).unwrap();
        fs::write(compared.join("compare.json"), "{}").unwrap();
        fs::write(compared.join("report.html"), "<html>").unwrap();
        assert!(claim(&compared, false, A_RUNS_LEFTOVERS).is_err());
        claim(&compared, false, A_COMPARISONS_LEFTOVERS).unwrap();
        assert_eq!(fs::read_dir(&compared).unwrap().count(), 0);

        let file = root.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(claim(&file, true, A_RUNS_LEFTOVERS)
            .unwrap_err()
            .to_string()
            .contains("is a file"));
    }
}
