//! The check that a directory headroom wrote holds only names its catalogue
//! (`headroom::catalogue`) knows: the suite calls [`assert_catalogued`] at the end of the tests
//! that write a run, a search, a vector run, a sweep, a fleet's merge, a comparison, a matrix
//! and a report, so that a file a command starts to write fails the suite until it is
//! catalogued (and so `--force` can remove it).

use std::fs;
use std::path::{Path, PathBuf};

use headroom::catalogue::{self, Kind, Removal, CLUSTER_JSON, MATRIX_JSON, SEARCH_JSON};

/// Fails, naming them, when `dir` holds entries the catalogue does not know.
pub fn assert_catalogued(dir: &Path) {
    let unknown = uncatalogued(dir);
    assert!(
        unknown.is_empty(),
        "{} holds what headroom's catalogue does not name (src/catalogue.rs): {unknown:?}",
        dir.display()
    );
}

/// The entries under `dir` the catalogue does not name, walking its catalogued folders.
/// In a local cluster's directory (one holding cluster.json) its own entries are known
/// wherever it is; in a matrix (matrix.json) a folder holding search.json is a
/// configuration's search, named after its values.
pub fn uncatalogued(dir: &Path) -> Vec<PathBuf> {
    let mut unknown = Vec::new();
    walk(dir, &mut unknown);
    unknown
}

fn walk(dir: &Path, unknown: &mut Vec<PathBuf>) {
    let mut entries: Vec<(String, PathBuf, bool)> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            let is_dir = e.file_type().unwrap().is_dir();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.path(),
                is_dir,
            )
        })
        .collect();
    entries.sort();
    let holds = |name: &str| entries.iter().any(|(n, _, is_dir)| n == name && !is_dir);
    let is_cluster = holds(CLUSTER_JSON);
    let is_matrix = holds(MATRIX_JSON);
    for (name, path, is_dir) in &entries {
        let entry = catalogue::ENTRIES.iter().find(|e| {
            catalogue::matches(e.name, name)
                && (e.kind == Kind::File) != *is_dir
                && (is_cluster || e.removal != Removal::WithCluster)
        });
        match entry.map(|e| e.kind) {
            Some(Kind::File | Kind::Whole) => {}
            Some(Kind::Folder) => walk(path, unknown),
            None if *is_dir && is_matrix && path.join(SEARCH_JSON).is_file() => walk(path, unknown),
            None => unknown.push(path.clone()),
        }
    }
}

#[test]
fn the_check_names_what_the_catalogue_does_not_know() {
    let root = tempfile::tempdir().unwrap();
    let search = root.path();
    let trial = search.join("trials/rate-900-repeat-1");
    fs::create_dir_all(trial.join("workers/worker-1")).unwrap();
    fs::create_dir_all(search.join("cluster/node1/data")).unwrap();
    fs::create_dir_all(search.join("cluster/tls")).unwrap();
    for file in [
        "search.json",
        "capacity.jsonl",
        "capacity.json",
        "report.html",
        "trials/rate-900-repeat-1/config.json",
        "trials/rate-900-repeat-1/read.hgrm",
        "trials/rate-900-repeat-1/vectors.json",
        "trials/rate-900-repeat-1/workers/worker-1.log",
        "trials/rate-900-repeat-1/workers/worker-1/summary.json",
        "cluster/cluster.json",
        "cluster/credentials.json",
        "cluster/node1/data/anything",
    ] {
        fs::write(search.join(file), "x").unwrap();
    }
    assert_catalogued(search);

    // A file, a folder, a cluster's file outside a cluster, a folder under a file's name.
    fs::write(trial.join("notes.md"), "mine").unwrap();
    fs::create_dir(search.join("trials/rate-x")).unwrap();
    fs::write(search.join("credentials.json"), "{}").unwrap();
    fs::create_dir(trial.join("workers/worker-1/config.json")).unwrap();
    let mut relative: Vec<String> = uncatalogued(search)
        .iter()
        .map(|p| p.strip_prefix(search).unwrap().display().to_string())
        .collect();
    relative.sort();
    assert_eq!(
        relative,
        [
            "credentials.json",
            "trials/rate-900-repeat-1/notes.md",
            "trials/rate-900-repeat-1/workers/worker-1/config.json",
            "trials/rate-x",
        ]
    );
    let planted = std::panic::catch_unwind(|| assert_catalogued(search));
    assert!(planted.is_err(), "a planted file fails the check");
}

#[test]
fn the_recorded_directories_are_catalogued() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report");
    for kind in ["run", "capacity", "sweep"] {
        assert_catalogued(&fixtures.join(kind));
    }
}
