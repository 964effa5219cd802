//! What names every format: the [`Definition`] of a run's workload beyond the shared
//! settings, and [`WorkloadConfig`], the shared settings over it, as config.json stores them.
//!
//! Above the formats (it names each one's definition), below [`super::any`], which picks the
//! format a definition asks for. The formats read the shared settings through
//! [`WorkloadSettings`] without seeing this type.

use serde::{Deserialize, Serialize};

use super::common::settings::WorkloadSettings;
use super::{stress, vector, ycsb};

/// Where a workload's definition comes from, beyond the shared settings of
/// [`WorkloadConfig`]: as stored in config.json, so that a run can be repeated from it alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "format", rename_all = "kebab-case")]
pub enum Definition {
    /// A built-in workload, named by [`WorkloadConfig::name`].
    #[default]
    Builtin,
    /// A file in headroom's own format (docs/workloads.md).
    Declarative {
        /// Where it was read from.
        path: String,
        /// The file's text, as read: the run can be repeated from config.json alone.
        text: String,
        /// Weights from `--ops NAME=W,...`, replacing the file's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        op_mix: Option<Vec<(String, f64)>>,
    },
    /// A cassandra-stress user profile.
    CassandraStress(stress::StressDefinition),
    /// Several cassandra-stress profiles in one run (`a.yaml,b.yaml`).
    CassandraStressSet(stress::multi::StressSet),
    /// YCSB's CoreWorkload, from its property format.
    Ycsb(Box<ycsb::YcsbConfig>),
    /// The vector search built-in: its vectors, similarity and k.
    Vector(vector::model::VectorDefinition),
}

/// The settings of a workload, as stored in the run's config.json: the shared settings over
/// this run's [`Definition`].
pub type WorkloadConfig = WorkloadSettings<Definition>;

impl WorkloadConfig {
    /// Checks the shared settings; the error names the flag. The replicas a consistency level
    /// needs are counted only where `--replication` makes the keyspace (a built-in or YCSB: a
    /// profile or workload file may create its own).
    pub fn validate(&self) -> Result<(), String> {
        let uses_replication = matches!(self.definition, Definition::Builtin | Definition::Ycsb(_));
        self.check(uses_replication)
    }
}
