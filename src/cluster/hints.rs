//! The hints a local node holds for other nodes: the `*.hints` files in its hints directory.
//!
//! A coordinator that cannot write to a replica keeps the write as a hint, buffered in memory
//! and appended every 10 s (`hints_flush_period`) to a file named after the replica's host
//! id; once the replica is back, the file is closed, sent to it and deleted. So a node's
//! hints directory holding no `.hints` file (and 10 s since the last write that could make
//! one) means it has delivered every hint it had. `nodetool listpendinghints` is no better
//! a signal: it lists only closed files, and said "This node does not have any pending
//! hints" while node 1 held a 1.1 MB file for a node that was down (Cassandra 5.0.9, see
//! docs/decisions/0015), and it costs a JVM per node and poll.

use std::fs;
use std::io::ErrorKind;

use super::{ClusterError, NodeSpec};

/// Hint files a node holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PendingHints {
    /// `.hints` files.
    pub files: usize,
    /// Their size, bytes.
    pub bytes: u64,
}

impl PendingHints {
    /// Whether there is nothing left to deliver.
    pub fn is_empty(self) -> bool {
        self.files == 0
    }
}

impl std::ops::Add for PendingHints {
    type Output = PendingHints;

    fn add(self, other: PendingHints) -> PendingHints {
        PendingHints {
            files: self.files + other.files,
            bytes: self.bytes + other.bytes,
        }
    }
}

/// The hint files node `spec` holds now; none when it has no hints directory yet. A file
/// deleted while the directory is read (delivered just then) is not counted.
pub fn pending(spec: &NodeSpec) -> Result<PendingHints, ClusterError> {
    let dir = spec.hints_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(PendingHints::default()),
        Err(e) => return Err(ClusterError::io(format!("reading {}", dir.display()))(e)),
    };
    let mut found = PendingHints::default();
    for entry in entries {
        let entry = entry.map_err(ClusterError::io(format!("reading {}", dir.display())))?;
        let name = entry.file_name();
        if !name.to_string_lossy().ends_with(".hints") {
            continue;
        }
        match entry.metadata() {
            Ok(meta) => {
                found.files += 1;
                found.bytes += meta.len();
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => {
                return Err(ClusterError::io(format!(
                    "reading {}",
                    entry.path().display()
                ))(e))
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    #[test]
    fn only_hints_files_count() {
        let dir = tempfile::tempdir().unwrap();
        let spec = NodeSpec {
            index: 1,
            address: Ipv4Addr::LOCALHOST,
            jmx_port: 7199,
            dir: dir.path().join("node1"),
            cores: None,
        };
        assert!(pending(&spec).unwrap().is_empty(), "no directory yet");
        fs::create_dir_all(spec.hints_dir()).unwrap();
        assert!(pending(&spec).unwrap().is_empty());
        let host = "c0fe5f2d-4654-47b3-871a-b77f89f86b81-1795809216842-2";
        fs::write(spec.hints_dir().join(format!("{host}.hints")), [0u8; 100]).unwrap();
        fs::write(spec.hints_dir().join(format!("{host}.crc32")), "1").unwrap();
        fs::write(spec.hints_dir().join("other.hints"), [0u8; 20]).unwrap();
        let found = pending(&spec).unwrap();
        assert_eq!(
            found,
            PendingHints {
                files: 2,
                bytes: 120
            }
        );
        assert!(!found.is_empty());
        assert_eq!(
            (found + found).bytes,
            240,
            "summed over the nodes that hold them"
        );
    }
}
