//! Tests of [`super`]: claiming, naming and emptying output directories.

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

#[test]
fn a_directory_that_cannot_be_made_is_refused_and_one_that_can_is_left_unmade() {
    let root = tempfile::tempdir().unwrap();
    let fresh = root.path().join("a").join("b");
    check_creatable(&fresh, "--out").unwrap();
    assert!(
        !root.path().join("a").exists(),
        "the trial directory is removed again"
    );
    let file = root.path().join("f");
    fs::write(&file, "x").unwrap();
    let e = check_creatable(&file.join("sub"), "--out")
        .unwrap_err()
        .to_string();
    assert!(e.contains("is a file, not a directory"), "{e}");
    let e = check_creatable(Path::new("/proc/headroom-out"), "--out")
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot be made there"), "{e}");
    assert!(!e.contains("os error"), "{e}");
}

#[test]
fn force_empties_a_vector_runs_directory() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("vector-run");
    fs::create_dir(&run).unwrap();
    for name in [
        "config.json",
        "summary.json",
        "histograms.hlog",
        "intervals.csv",
        "ann.hgrm",
        "ann.service.hgrm",
        "vectors.json",
    ] {
        fs::write(run.join(name), "{}").unwrap();
    }
    claim(&run, true, A_RUNS_LEFTOVERS).unwrap();
    assert_eq!(fs::read_dir(&run).unwrap().count(), 0, "emptied");
}

#[test]
fn force_empties_a_matrix_with_its_nodes_logs_kept() {
    let root = tempfile::tempdir().unwrap();
    let matrix = root.path().join("matrix");
    fs::create_dir_all(matrix.join("server/node1")).unwrap();
    fs::write(matrix.join("matrix.json"), "{}").unwrap();
    for name in ["gc.log", "gc.log.0", "system.log"] {
        fs::write(matrix.join("server/node1").join(name), "log").unwrap();
    }
    claim(&matrix, true, A_RUNS_LEFTOVERS).unwrap();
    assert_eq!(fs::read_dir(&matrix).unwrap().count(), 0, "emptied");
}

#[test]
fn force_empties_a_directory_holding_every_catalogued_name() {
    use catalogue::{Removal, ENTRIES};
    // A name each entry stands for: `#` a number, `*` a stem.
    let example = |name: &str| name.replace('#', "7").replace('*', "op");
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("out");
    let cluster = out.join(catalogue::CLUSTER);
    fs::create_dir_all(&cluster).unwrap();
    fs::write(cluster.join(catalogue::CLUSTER_JSON), "{}").unwrap();
    for entry in ENTRIES {
        let dir = if entry.removal == Removal::WithCluster {
            &cluster
        } else {
            &out
        };
        let path = dir.join(example(entry.name));
        match entry.kind {
            Kind::File => fs::write(&path, "x").unwrap(),
            Kind::Folder | Kind::Whole => fs::create_dir_all(&path).unwrap(),
        }
    }
    assert!(
        foreign_entries(&out).is_empty(),
        "{:?}",
        foreign_entries(&out)
    );
    claim(&out, true, A_RUNS_LEFTOVERS).unwrap();
    assert_eq!(fs::read_dir(&out).unwrap().count(), 0, "emptied");
}
