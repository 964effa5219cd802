//! The catalogue of what headroom writes in its output directories and in a local cluster's
//! directory: every file, ending and folder, which commands write it, what it holds, and
//! whether `--force` may remove it. Every writer and reader names its file by the constant
//! here, and `output_dir` decides from these entries what is headroom's (the one rule of
//! what headroom may write over); the suite walks what each command wrote against it.
//!
//! A name is exact (`config.json`), an ending (`*.hgrm`: a name ending so), or a pattern
//! whose `#` stands for a number (`worker-#`: `worker-1`, `worker-12`). Besides the folders
//! named here, a folder that holds one of the files named here is an output directory of
//! headroom's own: a matrix names each configuration's search after its values.
//!
//! Data only: the lookups below read the table, nothing more.

/// A command that writes some of the catalogue's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `run`.
    Run,
    /// `capacity`.
    Capacity,
    /// `capacity --matrix`.
    Matrix,
    /// `sweep`.
    Sweep,
    /// `compare`.
    Compare,
    /// A fleet's merge, by `merge` or by a search with `--workers`.
    Merge,
    /// `report`.
    Report,
    /// `cluster start`.
    Cluster,
    /// `quickstart`.
    Quickstart,
    /// `kube unpack` and a fleet's worker pod.
    Kube,
}

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file.
    File,
    /// A folder whose entries are catalogued too.
    Folder,
    /// A folder whose contents are all headroom's (or its nodes'), not catalogued one by one.
    Whole,
}

/// Whether `--force` may remove an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// `--force` removes it, with the rest of a directory that holds only headroom's entries.
    Force,
    /// Replaced even without `--force`: the note of a command that never started.
    Leftover,
    /// Only inside a local cluster's directory (one holding [`CLUSTER_JSON`]), which
    /// `--force` removes whole: never alone, nor anywhere else.
    WithCluster,
}

/// One name headroom writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Exact, `*ENDING` or a pattern with `#` for a number.
    pub name: &'static str,
    /// A file or a folder.
    pub kind: Kind,
    /// The commands that write it.
    pub writers: &'static [Command],
    /// What it holds, in a few words.
    pub holds: &'static str,
    /// Whether `--force` may remove it.
    pub removal: Removal,
}

/// A run's settings.
pub const CONFIG_JSON: &str = "config.json";
/// A run's totals and verdicts.
pub const SUMMARY_JSON: &str = "summary.json";
/// A run's histograms, one per interval and tag.
pub const HISTOGRAMS_HLOG: &str = "histograms.hlog";
/// A run's intervals and SLA windows, one row each.
pub const INTERVALS_CSV: &str = "intervals.csv";
/// Why a command never started, alone in its directory.
pub const ERROR_TXT: &str = "error.txt";
/// What a `--phase load` run wrote.
pub const LOAD_JSON: &str = "load.json";
/// The populate's interval log.
pub const POPULATE_HLOG: &str = "populate.hlog";
/// The populate's response times.
pub const POPULATE_HGRM: &str = "populate.hgrm";
/// The populate's service times.
pub const POPULATE_SERVICE_HGRM: &str = "populate.service.hgrm";
/// The nodes' pauses per interval.
pub const PAUSES_HLOG: &str = "pauses.hlog";
/// The nodes' pauses.
pub const PAUSES_JSON: &str = "pauses.json";
/// The record of `--during`'s operations.
pub const MAINTENANCE_JSON: &str = "maintenance.json";
/// Cassandra's table figures before and after a run.
pub const SERVER_TABLES_JSON: &str = "server-tables.json";
/// Cassandra's figures sampled during a run, one JSON object per line.
pub const SERVER_SAMPLES_JSONL: &str = "server-samples.jsonl";
/// A vector run's vectors and how their exact neighbours were found.
pub const VECTORS_JSON: &str = "vectors.json";
/// The report of a directory.
pub const REPORT_HTML: &str = "report.html";
/// A search's settings.
pub const SEARCH_JSON: &str = "search.json";
/// A search's records, one JSON line per probe or trial.
pub const CAPACITY_JSONL: &str = "capacity.jsonl";
/// A search's summary and answer, rewritten after every trial.
pub const CAPACITY_JSON: &str = "capacity.json";
/// A sweep's settings and steps.
pub const SWEEP_JSON: &str = "sweep.json";
/// A comparison.
pub const COMPARE_JSON: &str = "compare.json";
/// A matrix's configurations: the file that makes a directory a matrix.
pub const MATRIX_JSON: &str = "matrix.json";
/// A local cluster's record: the file that makes a directory a cluster's.
pub const CLUSTER_JSON: &str = "cluster.json";
/// A local cluster's role and its password (mode 0600).
pub const CREDENTIALS_JSON: &str = "credentials.json";

/// `<op>.hgrm` and `<op>.service.hgrm`: an operation type's percentile distribution.
pub const HGRM: &str = ".hgrm";
/// A chart (`report --svg`).
pub const SVG: &str = ".svg";
/// A fleet worker's output (`worker-K.log`).
pub const LOG: &str = ".log";
/// A file being replaced atomically (`capacity.json.partial`, `cluster.json.partial`).
pub const PARTIAL: &str = ".partial";
/// A file being replaced atomically (`sweep.json.tmp`, `matrix.json.tmp`).
pub const TMP: &str = ".tmp";

/// A search's trials, one run directory each.
pub const TRIALS: &str = "trials";
/// A search's probe run.
pub const PROBE: &str = "probe";
/// A fleet trial's workers, one run directory each.
pub const WORKERS: &str = "workers";
/// The populate of a fleet's or a degraded search's run.
pub const POPULATE: &str = "populate";
/// A sweep's steps, one run directory each.
pub const STEPS: &str = "steps";
/// A matrix's copies of its nodes' logs.
pub const SERVER: &str = "server";
/// A matrix's local cluster.
pub const CLUSTER: &str = "cluster";
/// A local cluster's certificates and keys.
pub const TLS: &str = "tls";

/// A trial's run directory under [`TRIALS`].
pub const TRIAL_DIR: &str = "rate-#-repeat-#";
/// A step's run directory under [`STEPS`].
pub const STEP_DIR: &str = "concurrency-#";
/// A fleet worker's run directory (under [`WORKERS`], or as `kube unpack` leaves it).
pub const WORKER_DIR: &str = "worker-#";
/// A local node's folder.
pub const NODE_DIR: &str = "node#";

use Command::*;

const RUNS: &[Command] = &[Run, Capacity, Matrix, Sweep, Quickstart, Merge, Kube];
const SEARCHES: &[Command] = &[Capacity, Matrix, Quickstart];
const CLUSTERS: &[Command] = &[Cluster, Quickstart, Matrix];

const fn file(name: &'static str, writers: &'static [Command], holds: &'static str) -> Entry {
    Entry {
        name,
        kind: Kind::File,
        writers,
        holds,
        removal: Removal::Force,
    }
}

const fn folder(name: &'static str, writers: &'static [Command], holds: &'static str) -> Entry {
    Entry {
        name,
        kind: Kind::Folder,
        writers,
        holds,
        removal: Removal::Force,
    }
}

/// Every name headroom writes in its output directories and a local cluster's directory.
pub const ENTRIES: &[Entry] = &[
    // A run directory: a run's, and each trial's, step's and worker's.
    file(CONFIG_JSON, RUNS, "the run's settings"),
    file(SUMMARY_JSON, RUNS, "the run's totals and verdicts"),
    file(HISTOGRAMS_HLOG, RUNS, "one histogram per interval and tag"),
    file(INTERVALS_CSV, RUNS, "one row per interval and SLA window"),
    file("*.hgrm", RUNS, "an operation type's percentiles"),
    file(POPULATE_HLOG, RUNS, "the populate's intervals"),
    file(POPULATE_HGRM, RUNS, "the populate's percentiles"),
    file(POPULATE_SERVICE_HGRM, RUNS, "the populate's service times"),
    file(LOAD_JSON, RUNS, "the rows a --phase load wrote"),
    file(PAUSES_HLOG, RUNS, "the nodes' GC pauses per interval"),
    file(PAUSES_JSON, RUNS, "the nodes' GC pauses"),
    file(MAINTENANCE_JSON, RUNS, "--during's operations"),
    file(SERVER_TABLES_JSON, RUNS, "Cassandra's table figures"),
    file(SERVER_SAMPLES_JSONL, RUNS, "Cassandra's figures sampled"),
    file(VECTORS_JSON, RUNS, "a vector run's vectors"),
    Entry {
        name: ERROR_TXT,
        kind: Kind::File,
        writers: &[Run, Capacity, Sweep],
        holds: "why a command never started",
        removal: Removal::Leftover,
    },
    file(
        REPORT_HTML,
        &[Run, Capacity, Matrix, Sweep, Compare, Quickstart, Report],
        "the report",
    ),
    file("*.svg", &[Report], "a chart (report --svg)"),
    file("*.log", &[Capacity], "a fleet worker's output"),
    file(
        "*.partial",
        &[Capacity, Cluster, Run],
        "a file being replaced",
    ),
    file("*.tmp", &[Sweep, Matrix], "a file being replaced"),
    // A search's directory.
    file(SEARCH_JSON, SEARCHES, "the search's settings"),
    file(CAPACITY_JSONL, SEARCHES, "one record per trial"),
    file(CAPACITY_JSON, SEARCHES, "the search's answer"),
    folder(PROBE, SEARCHES, "the probe's run"),
    folder(TRIALS, SEARCHES, "one run per trial"),
    folder(TRIAL_DIR, SEARCHES, "a trial's run"),
    folder(
        POPULATE,
        SEARCHES,
        "a fleet's or degraded search's populate",
    ),
    folder(WORKERS, SEARCHES, "a fleet trial's workers"),
    folder(WORKER_DIR, &[Capacity, Kube], "a fleet worker's run"),
    // A sweep's, a comparison's and a matrix's.
    file(SWEEP_JSON, &[Sweep], "the sweep's steps"),
    folder(STEPS, &[Sweep], "one run per step"),
    folder(STEP_DIR, &[Sweep], "a step's run"),
    file(COMPARE_JSON, &[Compare, Matrix], "the comparison"),
    file(MATRIX_JSON, &[Matrix], "the matrix's configurations"),
    folder(CLUSTER, &[Matrix], "the matrix's local cluster"),
    Entry {
        name: SERVER,
        kind: Kind::Whole,
        writers: &[Matrix],
        holds: "each node's logs, kept",
        removal: Removal::Force,
    },
    // A local cluster's directory.
    file(CLUSTER_JSON, CLUSTERS, "the cluster's record"),
    Entry {
        name: CREDENTIALS_JSON,
        kind: Kind::File,
        writers: CLUSTERS,
        holds: "headroom's role",
        removal: Removal::WithCluster,
    },
    Entry {
        name: TLS,
        kind: Kind::Whole,
        writers: CLUSTERS,
        holds: "certificates and keys",
        removal: Removal::WithCluster,
    },
    Entry {
        name: NODE_DIR,
        kind: Kind::Whole,
        writers: CLUSTERS,
        holds: "a node's configuration, data and logs",
        removal: Removal::WithCluster,
    },
];

/// Whether `name` is written by `entry`'s name: exact, `*ENDING`, or `#` for a number.
pub fn matches(entry: &str, name: &str) -> bool {
    if let Some(ending) = entry.strip_prefix('*') {
        return name.len() > ending.len() && name.ends_with(ending);
    }
    let mut rest = name;
    let mut parts = entry.split('#');
    let Some(first) = parts.next() else {
        return false;
    };
    let Some(after) = rest.strip_prefix(first) else {
        return false;
    };
    rest = after;
    for part in parts {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        let Some(after) = rest[digits..].strip_prefix(part) else {
            return false;
        };
        rest = after;
    }
    rest.is_empty()
}

/// The entry that names `name`, if any.
pub fn find(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| matches(e.name, name))
}

/// Whether a file of this name, anywhere in an output directory, is headroom's.
pub fn is_output_file(name: &str) -> bool {
    find_of(name, Kind::File).is_some_and(|e| e.removal != Removal::WithCluster)
}

/// Whether `name` is one of the files, exactly named, that make a directory headroom's.
pub fn is_marker(name: &str) -> bool {
    ENTRIES.iter().any(|e| {
        e.kind == Kind::File
            && e.removal != Removal::WithCluster
            && !e.name.contains(['*', '#'])
            && e.name == name
    })
}

/// The folder entry of this name, outside a local cluster's directory.
pub fn output_folder(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| {
        e.kind != Kind::File && e.removal != Removal::WithCluster && matches(e.name, name)
    })
}

/// Whether `name` is one of a local cluster's own entries (its nodes' folders, certificates,
/// credentials), headroom's only in a directory holding [`CLUSTER_JSON`].
pub fn is_cluster_entry(name: &str) -> bool {
    ENTRIES
        .iter()
        .any(|e| e.removal == Removal::WithCluster && matches(e.name, name))
}

fn find_of(name: &str, kind: Kind) -> Option<&'static Entry> {
    ENTRIES
        .iter()
        .find(|e| e.kind == kind && matches(e.name, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_exactly_by_ending_or_by_number() {
        assert!(matches("config.json", "config.json"));
        assert!(!matches("config.json", "config.json.bak"));
        assert!(matches("*.hgrm", "read.service.hgrm"));
        assert!(!matches("*.hgrm", ".hgrm"));
        assert!(matches("worker-#", "worker-12"));
        assert!(!matches("worker-#", "worker-"));
        assert!(!matches("worker-#", "worker-1x"));
        assert!(matches("rate-#-repeat-#", "rate-5200-repeat-1"));
        assert!(!matches("rate-#-repeat-#", "rate-5200-repeat-"));
        assert!(!matches("rate-#-repeat-#", "rate-x-repeat-1"));
        assert!(matches("node#", "node3"));
        assert!(!matches("node#", "nodes"));
    }

    #[test]
    fn each_name_is_catalogued_once() {
        for (i, a) in ENTRIES.iter().enumerate() {
            for b in &ENTRIES[i + 1..] {
                assert_ne!(a.name, b.name);
            }
            assert!(!a.writers.is_empty() && !a.holds.is_empty(), "{}", a.name);
        }
    }

    /// The names under `dir` that no entry of their kind names.
    fn unnamed(dir: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_dir = entry.file_type().unwrap().is_dir();
            let kind = if is_dir { Kind::Folder } else { Kind::File };
            match find_of(&name, kind) {
                Some(_) if is_dir => unnamed(&entry.path(), found),
                Some(_) => {}
                None => found.push(entry.path().display().to_string()),
            }
        }
    }

    #[test]
    fn the_recorded_run_search_and_sweep_hold_only_catalogued_names() {
        use crate::fixtures::{capacity_fixture, run_fixture, sweep_fixture};
        let mut found = Vec::new();
        for dir in [run_fixture(), capacity_fixture(), sweep_fixture()] {
            unnamed(&dir, &mut found);
        }
        assert!(found.is_empty(), "{found:?}");
        let planted = tempfile::tempdir().unwrap();
        std::fs::create_dir(planted.path().join(TRIALS)).unwrap();
        std::fs::write(planted.path().join("trials/notes.md"), "").unwrap();
        unnamed(planted.path(), &mut found);
        assert_eq!(found.len(), 1, "a planted file is named: {found:?}");
    }

    #[test]
    fn lookups_keep_a_clusters_entries_to_its_directory() {
        assert!(is_output_file(VECTORS_JSON));
        assert!(is_output_file("read.hgrm"));
        assert!(is_output_file("worker-2.log"));
        assert!(!is_output_file(CREDENTIALS_JSON));
        assert!(!is_output_file("notes.txt"));
        assert!(is_marker(VECTORS_JSON));
        assert!(!is_marker("read.hgrm"));
        assert!(!is_marker(CREDENTIALS_JSON));
        assert!(output_folder(TRIALS).is_some());
        assert!(output_folder("rate-900-repeat-2").is_some());
        assert!(output_folder(TLS).is_none());
        assert!(output_folder("node1").is_none());
        assert!(is_cluster_entry("node1"));
        assert!(is_cluster_entry(TLS));
        assert!(is_cluster_entry(CREDENTIALS_JSON));
        assert!(!is_cluster_entry(CONFIG_JSON));
    }
}
