//! The settings every workload format takes ([`WorkloadSettings`]): the keyspace and its
//! replication, the table's options, partitions, ratios, populate, consistency and seed, as a
//! run's config.json stores them, over the definition of whichever format the run uses.

use serde::{Deserialize, Serialize};

use super::cql_options::replication_total;
use super::generators::PartitionGenerator;

/// The settings every workload format takes, as config.json stores them, over the definition
/// `D` of the run's format (`workload::WorkloadConfig` names it). A format reads the shared
/// fields and never looks into `D`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSettings<D> {
    /// The workload's name: a built-in (keyvalue, timeseries), or the format's name for a
    /// workload read from a file.
    pub name: String,
    /// The definition beyond the shared settings.
    #[serde(default)]
    pub definition: D,
    /// Keyspace of the workload's table.
    pub keyspace: String,
    /// Number of distinct partition keys.
    pub partitions: u64,
    /// How partition keys are chosen.
    pub partition_generator: PartitionGenerator,
    /// Fraction of requests that are reads.
    pub read_ratio: f64,
    /// Fraction of requests that are deletes.
    pub delete_ratio: f64,
    /// Rows written before the measured run.
    pub populate: u64,
    /// The keyspace's replication, as a CQL map.
    pub replication: String,
    /// The table's compaction, as a CQL map, when not Cassandra's default.
    pub compaction: Option<String>,
    /// The table's default time to live in seconds.
    pub ttl_s: Option<u32>,
    /// Consistency level of every request.
    pub consistency: String,
    /// Drop and recreate the keyspace before the run.
    pub drop: bool,
    /// Seed of every value generator.
    pub seed: u64,
    /// Rows per partition (documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_partition: Option<u64>,
}

impl<D> WorkloadSettings<D> {
    /// Checks the ratios, the partitions and, when the keyspace is made from `--replication`
    /// (`uses_replication`), that it keeps the replicas the consistency level needs; the error
    /// names the flag.
    pub fn check(&self, uses_replication: bool) -> Result<(), String> {
        for (flag, value) in [
            ("--read-ratio", self.read_ratio),
            ("--delete-ratio", self.delete_ratio),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(format!("{flag} {value} must be between 0 and 1"));
            }
        }
        if self.read_ratio + self.delete_ratio > 1.0 + 1e-9 {
            return Err(format!(
                "--read-ratio {} plus --delete-ratio {} is more than 1",
                self.read_ratio, self.delete_ratio
            ));
        }
        if self.partitions == 0 {
            return Err("--partitions must be at least 1".into());
        }
        // TWO and THREE ask for that many replicas of every partition: a keyspace with
        // fewer could never answer one request.
        let needed = match self.consistency.to_ascii_uppercase().as_str() {
            _ if !uses_replication => 0,
            "TWO" => 2,
            "THREE" => 3,
            _ => 0,
        };
        if let Some(total) = replication_total(&self.replication).filter(|t| *t < needed) {
            return Err(format!(
                "--consistency {} needs {needed} replicas of every partition, but the keyspace's \
                 replication keeps {total}: every request would fail. Give --replication \
                 simple:{needed} (or more), or a lower --consistency",
                self.consistency.to_ascii_uppercase()
            ));
        }
        Ok(())
    }
}
