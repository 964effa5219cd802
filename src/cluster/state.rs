//! The cluster's record on disk (`cluster.json` in the cluster directory): its
//! configuration and the pid headroom launched each node with.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::ClusterConfig;
use super::ClusterError;

/// The file name of the record in the cluster directory.
pub const STATE_FILE: &str = "cluster.json";

/// What headroom knows about a cluster it started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterState {
    /// How the nodes are configured.
    pub config: ClusterConfig,
    /// The pid of each node's JVM as launched, node 1 first; `None` for a node not running
    /// or never started.
    pub pids: Vec<Option<u32>>,
    /// The Java that runs the nodes, e.g. "17.0.15 (/usr/bin/java)".
    pub java: String,
}

impl ClusterState {
    /// The record's path in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(STATE_FILE)
    }

    /// Reads the record in `dir`; `Ok(None)` when there is none.
    pub fn load(dir: &Path) -> Result<Option<ClusterState>, ClusterError> {
        let path = Self::path(dir);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ClusterError::io(format!("reading {}", path.display()))(e)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| ClusterError::Io {
                context: format!(
                    "reading {} (remove the directory if it is not a headroom cluster)",
                    path.display()
                ),
                source: e.into(),
            })
    }

    /// Writes the record to `dir` atomically (a crash leaves the old or the new record).
    pub fn save(&self, dir: &Path) -> Result<(), ClusterError> {
        let path = Self::path(dir);
        let partial = dir.join(format!("{STATE_FILE}.partial"));
        let text = serde_json::to_string_pretty(self).expect("the state always serializes");
        fs::write(&partial, text + "\n")
            .map_err(ClusterError::io(format!("writing {}", partial.display())))?;
        fs::rename(&partial, &path).map_err(ClusterError::io(format!("writing {}", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_survives_a_round_trip_and_absence_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(ClusterState::load(dir.path()).unwrap(), None);
        let state = ClusterState {
            config: ClusterConfig {
                nodes: 2,
                ..ClusterConfig::default()
            },
            pids: vec![Some(42), None],
            java: "17.0.15 (/usr/bin/java)".into(),
        };
        state.save(dir.path()).unwrap();
        assert_eq!(ClusterState::load(dir.path()).unwrap(), Some(state));
        let text = fs::read_to_string(dir.path().join(STATE_FILE)).unwrap();
        assert!(text.contains("\"heap\""), "{text}");
    }

    #[test]
    fn a_corrupt_record_names_its_path() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(STATE_FILE), "{").unwrap();
        let err = ClusterState::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("cluster.json"), "{err}");
    }
}
