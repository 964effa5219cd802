//! A configuration matrix (`capacity --matrix gc=g1,zgc --matrix heap=2G,4G`): its axes,
//! every combination in order, each combination's name and directory, and matrix.json, which
//! records what ran so that a report or `--resume` finds every configuration again.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::comparison::CompareOptions;
use crate::catalogue::{CAPACITY_JSON, MATRIX_JSON, TMP};
use crate::cluster::{ClusterSettings, GcKind};
use crate::units;

/// The most combinations a matrix may have: each is a whole capacity search.
pub const MAX_COMBINATIONS: usize = 64;

/// The keys a matrix varies: the local cluster's (gc, heap, nodes, version), and the nodes
/// its searches keep down (degraded).
const KEYS: [&str; 5] = ["gc", "heap", "nodes", "version", "degraded"];

/// The matrix key of the nodes kept down.
const DEGRADED: &str = "degraded";

/// One `--matrix KEY=V1,V2`: a key and its values, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    /// gc, heap, nodes or version.
    pub key: String,
    /// The values, in the order given.
    pub values: Vec<String>,
}

/// One combination: a value per axis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Combination {
    /// (key, value) per axis, in the axes' order.
    pub settings: Vec<(String, String)>,
    /// The configuration's name, from the axes that vary: the value alone when one axis
    /// varies (`zgc`), else `key=value` pairs (`gc=zgc heap=2G`); nodes down read as
    /// `healthy` or `1 node down` (`gc=zgc 1 node down`).
    pub label: String,
    /// The configuration's directory name, from the same settings, with anything but
    /// letters, digits, `.` and `-` made `-` (`gc-zgc_heap-2G`).
    pub dir_name: String,
}

impl Combination {
    /// A combination of `settings`, named after those whose axis has several values
    /// (`varies`, one per setting); after all of them when none varies.
    fn new(settings: Vec<(String, String)>, varies: &[bool]) -> Combination {
        let mut named: Vec<&(String, String)> = settings
            .iter()
            .zip(varies)
            .filter(|(_, v)| **v)
            .map(|(s, _)| s)
            .collect();
        if named.is_empty() {
            named = settings.iter().collect();
        }
        let label = match named.as_slice() {
            [(key, value)] if key == DEGRADED => degraded_label(value),
            [(_, value)] => value.clone(),
            _ => named
                .iter()
                .map(|(k, v)| match k.as_str() {
                    DEGRADED => degraded_label(v),
                    _ => format!("{k}={v}"),
                })
                .collect::<Vec<_>>()
                .join(" "),
        };
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                        c
                    } else {
                        '-'
                    }
                })
                .collect()
        };
        let dir_name = named
            .iter()
            .map(|(k, v)| format!("{}-{}", clean(k), clean(v)))
            .collect::<Vec<_>>()
            .join("_");
        Combination {
            settings,
            label,
            dir_name,
        }
    }

    /// `base` with this combination's settings: the local cluster to start.
    pub fn apply(&self, base: &ClusterSettings) -> Result<ClusterSettings, String> {
        let mut args = base.clone();
        for (key, value) in &self.settings {
            match key.as_str() {
                "gc" => args.gc = Some(parse_gc(value)?),
                "heap" => {
                    args.heap = Some(
                        units::parse_heap(value)
                            .map_err(|e| format!("--matrix heap={value}: {e}"))?,
                    )
                }
                "nodes" => args.nodes = Some(parse_nodes(value)?),
                "version" => args.cassandra_version = Some(value.clone()),
                // Not the cluster's: its searches'.
                DEGRADED => {
                    parse_nodes_down(value)?;
                }
                other => return Err(format!("--matrix: unknown key '{other}'")),
            }
        }
        Ok(args)
    }

    /// The nodes this configuration's search keeps down (`degraded=1`); `None` for every
    /// node up.
    pub fn nodes_down(&self) -> Option<u32> {
        self.settings
            .iter()
            .find(|(key, _)| key == DEGRADED)
            .and_then(|(_, value)| parse_nodes_down(value).ok().flatten())
    }
}

/// `degraded=N` in a configuration's name: `healthy`, `1 node down`.
fn degraded_label(value: &str) -> String {
    match parse_nodes_down(value) {
        Ok(None) => "healthy".to_string(),
        Ok(Some(1)) => "1 node down".to_string(),
        Ok(Some(n)) => format!("{n} nodes down"),
        Err(_) => format!("{DEGRADED}={value}"),
    }
}

fn parse_nodes_down(value: &str) -> Result<Option<u32>, String> {
    let n = value.parse::<u32>().map_err(|_| {
        format!("--matrix degraded={value}: write the nodes kept down, 0 (every node up) or 1")
    })?;
    crate::capacity::degraded::parse_nodes_down(n)
        .map_err(|why| format!("--matrix {DEGRADED}={value}: {why}"))
}

fn parse_gc(value: &str) -> Result<GcKind, String> {
    GcKind::parse(value).ok_or_else(|| {
        format!("--matrix gc={value}: not a collector; write g1, zgc, shenandoah or parallel")
    })
}

fn parse_nodes(value: &str) -> Result<u32, String> {
    match value.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "--matrix nodes={value}: write a number of nodes, at least 1"
        )),
    }
}

/// Reads the `--matrix` flags. Each is `KEY=V1,V2,...`; a key appears once. The error is one
/// line naming the flag and what would be right.
pub fn parse(flags: &[String]) -> Result<Vec<Axis>, String> {
    let mut axes: Vec<Axis> = Vec::new();
    for flag in flags {
        let Some((key, values)) = flag.split_once('=') else {
            return Err(format!(
                "--matrix '{flag}': write KEY=V1,V2,... with KEY one of {}, e.g. gc=g1,zgc",
                KEYS.join(", ")
            ));
        };
        let key = key.trim().to_ascii_lowercase();
        if !KEYS.contains(&key.as_str()) {
            return Err(format!(
                "--matrix '{flag}': unknown key '{key}'; the keys are {}",
                KEYS.join(", ")
            ));
        }
        if axes.iter().any(|a| a.key == key) {
            return Err(format!(
                "--matrix {key} is given twice: list all its values in one flag, {key}=A,B"
            ));
        }
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return Err(format!("--matrix '{flag}': a value is empty"));
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(format!("--matrix '{flag}': {v} is listed twice"));
            }
            let probe = Combination::new(vec![(key.clone(), v.clone())], &[true]);
            probe.apply(&ClusterSettings::default())?;
        }
        axes.push(Axis { key, values });
    }
    let count: usize = axes.iter().map(|a| a.values.len()).product();
    if count > MAX_COMBINATIONS {
        return Err(format!(
            "--matrix gives {count} combinations, more than {MAX_COMBINATIONS}: each is a whole \
             capacity search"
        ));
    }
    Ok(axes)
}

/// Every combination of the axes: the first axis varies slowest.
pub fn combinations(axes: &[Axis]) -> Vec<Combination> {
    let mut all: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for axis in axes {
        all = all
            .into_iter()
            .flat_map(|c| {
                axis.values.iter().map(move |v| {
                    let mut settings = c.clone();
                    settings.push((axis.key.clone(), v.clone()));
                    settings
                })
            })
            .collect();
    }
    let varies: Vec<bool> = axes.iter().map(|a| a.values.len() > 1).collect();
    all.into_iter()
        .map(|settings| Combination::new(settings, &varies))
        .collect()
}

/// Where one configuration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryStatus {
    /// Not started.
    Pending,
    /// Its search is running (or was cut short by a crash).
    Running,
    /// Its search finished.
    Complete,
    /// Ctrl-C stopped it.
    Interrupted,
    /// Its cluster or search failed; `error` says why.
    Failed,
    /// Its search stopped at a client-bound trial: no capacity (the client, not the
    /// cluster, limited it).
    Invalid,
}

/// One configuration of a matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    /// Its name.
    pub label: String,
    /// Its capacity search's directory, relative to the matrix's.
    pub dir: String,
    /// Its settings.
    pub combination: Combination,
    /// The local cluster it ran on, described.
    pub cluster: Option<String>,
    /// Where it stands.
    pub status: EntryStatus,
    /// Why it failed.
    pub error: Option<String>,
}

/// matrix.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatrixFile {
    /// The axes, as given.
    pub axes: Vec<Axis>,
    /// The local cluster every combination starts from.
    pub base_cluster: ClusterSettings,
    /// Where each configuration's local cluster lives while it runs.
    pub cluster_dir: PathBuf,
    /// The capacity search each configuration runs (its settings as `search.json` holds
    /// them, before the configuration's own).
    pub search: crate::capacity::settings::SearchSettings,
    /// How the comparison is made (baseline, prices, target load).
    pub compare: CompareOptions,
    /// The configurations, in order.
    pub entries: Vec<Entry>,
}

impl MatrixFile {
    /// Reads `dir`/matrix.json.
    pub fn load(dir: &Path) -> anyhow::Result<MatrixFile> {
        let path = dir.join(MATRIX_JSON);
        let text = crate::usage::read_bounded_text(&path, crate::usage::MAX_INPUT_FILE_BYTES)
            .with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
    }

    /// Writes `dir`/matrix.json atomically (a crash leaves the old or the new file).
    pub fn save(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join(MATRIX_JSON);
        let temporary = dir.join(format!("{MATRIX_JSON}{TMP}"));
        fs::write(&temporary, serde_json::to_string_pretty(self)?)
            .with_context(|| format!("writing {}", temporary.display()))?;
        fs::rename(&temporary, &path).with_context(|| format!("writing {}", path.display()))
    }

    /// The directories of the configurations whose search has left a result, in order.
    pub fn search_dirs(&self, dir: &Path) -> Vec<PathBuf> {
        self.entries
            .iter()
            .map(|e| dir.join(&e.dir))
            .filter(|d| d.join(CAPACITY_JSON).exists())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_combination_in_order_with_names_and_directories() {
        let axes = parse(&flags(&["gc=g1,zgc,shenandoah", "heap=2G,4G"])).unwrap();
        let all = combinations(&axes);
        assert_eq!(all.len(), 6);
        let labels: Vec<&str> = all.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels[0], "gc=g1 heap=2G");
        assert_eq!(labels[1], "gc=g1 heap=4G");
        assert_eq!(labels[5], "gc=shenandoah heap=4G");
        assert_eq!(all[3].dir_name, "gc-zgc_heap-4G");

        let one = combinations(&parse(&flags(&["gc=g1,zgc"])).unwrap());
        assert_eq!(
            one.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(),
            ["g1", "zgc"]
        );
        assert_eq!(one[1].dir_name, "gc-zgc");
        // An axis of one value is part of every configuration, not of its name.
        let fixed = combinations(&parse(&flags(&["gc=g1,zgc", "heap=1G"])).unwrap());
        assert_eq!(fixed[1].label, "zgc");
        assert_eq!(fixed[1].settings[1], ("heap".to_string(), "1G".to_string()));
        let single = combinations(&parse(&flags(&["gc=zgc", "heap=1G"])).unwrap());
        assert_eq!(single[0].label, "gc=zgc heap=1G");
    }

    #[test]
    fn a_combination_sets_the_cluster_it_names() {
        let axes = parse(&flags(&["gc=ZGC", "heap=2G", "nodes=3", "version=4.1.10"])).unwrap();
        let c = &combinations(&axes)[0];
        let args = c.apply(&ClusterSettings::default()).unwrap();
        assert_eq!(args.gc, Some(GcKind::Zgc));
        assert_eq!(args.heap.map(|h| h.to_jvm()), Some("2G".to_string()));
        assert_eq!(args.nodes, Some(3));
        assert_eq!(args.cassandra_version.as_deref(), Some("4.1.10"));
    }

    #[test]
    fn nodes_down_name_the_configuration_and_leave_the_cluster_as_it_is() {
        let axes = parse(&flags(&["degraded=0,1"])).unwrap();
        let all = combinations(&axes);
        let labels: Vec<&str> = all.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["healthy", "1 node down"]);
        assert_eq!(all[1].dir_name, "degraded-1");
        assert_eq!((all[0].nodes_down(), all[1].nodes_down()), (None, Some(1)));
        let base = ClusterSettings {
            nodes: Some(3),
            ..ClusterSettings::default()
        };
        assert_eq!(all[1].apply(&base).unwrap(), base);
        let two = combinations(&parse(&flags(&["gc=g1,zgc", "degraded=0,1"])).unwrap());
        let labels: Vec<&str> = two.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "gc=g1 healthy",
                "gc=g1 1 node down",
                "gc=zgc healthy",
                "gc=zgc 1 node down"
            ]
        );
        assert_eq!(two[3].dir_name, "gc-zgc_degraded-1");
        // A fixed degraded=1 is part of every configuration, not of its name.
        let fixed = combinations(&parse(&flags(&["gc=g1,zgc", "degraded=1"])).unwrap());
        assert_eq!(fixed[1].label, "zgc");
        assert_eq!(fixed[1].nodes_down(), Some(1));
    }

    #[test]
    fn bad_matrices_are_refused_with_the_flag_named() {
        for (bad, says) in [
            ("gc", "write KEY=V1,V2"),
            ("colour=red", "unknown key 'colour'"),
            ("gc=g1,,zgc", "a value is empty"),
            ("gc=g1,g1", "g1 is listed twice"),
            ("gc=cms", "not a collector"),
            ("nodes=0", "at least 1"),
            ("heap=lots", "heap"),
            (
                "degraded=2",
                "--matrix degraded=2: headroom takes one node down",
            ),
            ("degraded=one", "0 (every node up) or 1"),
        ] {
            let e = parse(&flags(&[bad])).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let twice = parse(&flags(&["gc=g1", "gc=zgc"])).unwrap_err();
        assert!(twice.contains("given twice"), "{twice}");
        let values: Vec<String> = (0..9).map(|i| format!("{}G", i + 1)).collect();
        let big = parse(&flags(&[
            &format!("heap={}", values.join(",")),
            "nodes=1,2,3,4,5,6,7,8",
        ]))
        .unwrap_err();
        assert!(big.contains("72 combinations"), "{big}");
    }
}
