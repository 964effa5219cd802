//! The cluster's record on disk (`cluster.json` in the cluster directory): its
//! configuration and the pid headroom launched each node with.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::ClusterConfig;
use super::ClusterError;
use crate::catalogue::{CLUSTER_JSON, PARTIAL};

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
    /// The command that started the cluster for its own use and removes it when it ends
    /// (a quickstart, a matrix); `None` for `headroom cluster start` and the library's
    /// callers. Only its owner removes such a cluster by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
}

/// Which command started a cluster for itself, and which process it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// What started it, e.g. `quickstart`, or `matrix DIR`.
    pub command: String,
    /// The process that started it.
    pub pid: u32,
    /// When that process started (clock ticks since boot, /proc/PID/stat): with the pid,
    /// it names one process, never a later one that was given the same pid.
    pub started: u64,
}

impl Owner {
    /// This process, as the owner `command`.
    pub fn this_process(command: impl Into<String>) -> Owner {
        let pid = std::process::id();
        Owner {
            command: command.into(),
            pid,
            started: super::process::start_time(pid).unwrap_or(0),
        }
    }

    /// Whether the owning process still runs: a cluster whose owner is gone was left
    /// behind (the command was killed before it could remove it).
    pub fn is_alive(&self) -> bool {
        !super::process::has_exited(self.pid)
            && super::process::start_time(self.pid) == Some(self.started)
    }
}

impl ClusterState {
    /// The record's path in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(CLUSTER_JSON)
    }

    /// Reads the record in `dir`; `Ok(None)` when there is none.
    pub fn load(dir: &Path) -> Result<Option<ClusterState>, ClusterError> {
        let path = Self::path(dir);
        let text = match crate::usage::read_bounded_text(&path, crate::usage::MAX_INPUT_FILE_BYTES)
        {
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
        let partial = dir.join(format!("{CLUSTER_JSON}{PARTIAL}"));
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
            owner: None,
        };
        state.save(dir.path()).unwrap();
        assert_eq!(ClusterState::load(dir.path()).unwrap(), Some(state));
        let text = fs::read_to_string(dir.path().join(CLUSTER_JSON)).unwrap();
        assert!(text.contains("\"heap\""), "{text}");
    }

    #[test]
    fn a_corrupt_record_names_its_path() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(CLUSTER_JSON), "{").unwrap();
        let err = ClusterState::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("cluster.json"), "{err}");
    }
}
