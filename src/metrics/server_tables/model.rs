//! The model of the server's figures as the run directory keeps them: server-tables.json
//! ([`ServerTablesFile`]: a [`Snapshot`] of every node's [`NodeTables`] before and after
//! the run, each a list of [`Figure`]s) and the lines of server-samples.jsonl
//! ([`ServerSample`]), with their serde forms.
//!
//! Apart from the readers so that what only reads the files back (the report, the summaries
//! of `server_samples`) depends on these types alone, not on the driver or on nodetool.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::catalogue::SERVER_TABLES_JSON;

/// What a figure's values count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Microseconds.
    Micros,
    /// Bytes.
    Bytes,
    /// Cells of a partition.
    Cells,
    /// SSTables touched by one read.
    Sstables,
    /// Live rows read by one query.
    Rows,
    /// Tombstones read by one query.
    Tombstones,
}

/// server-tables.json: Cassandra's own figures for a run's table, before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerTablesFile {
    /// The workload's keyspace.
    pub keyspace: String,
    /// The workload's table.
    pub table: String,
    /// Read just before the measured run began.
    pub before: Option<Snapshot>,
    /// Read as soon as the measured run ended.
    pub after: Option<Snapshot>,
    /// What could not be read, said plainly.
    #[serde(default)]
    pub notes: Vec<String>,
    /// With `--server-stats-every`: its period, seconds, and the readings written to
    /// server-samples.jsonl (`metrics::server_samples`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_every_s: Option<f64>,
    /// Readings in server-samples.jsonl.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub samples: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The figures of every node at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// When the reading began, RFC 3339.
    pub taken_at: String,
    /// One entry per node, in the order the nodes were found.
    pub nodes: Vec<NodeTables>,
}

/// One node's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeTables {
    /// `node1`, ... for a local cluster headroom started; else the node's address.
    pub node: String,
    /// Its CQL endpoint.
    pub address: String,
    /// Every figure read, each with its source.
    pub figures: Vec<Figure>,
}

impl NodeTables {
    /// The figure `name` with the most percentiles (nodetool's over CQL's when both exist).
    pub fn figure(&self, name: &str) -> Option<&Figure> {
        self.figures
            .iter()
            .filter(|f| f.name == name)
            .max_by_key(|f| f.known())
    }

    /// The count of `name` from whichever source has one (only CQL does).
    pub fn count(&self, name: &str) -> Option<u64> {
        self.figures
            .iter()
            .filter(|f| f.name == name)
            .find_map(|f| f.count)
    }
}

/// One distribution as the server reports it. Values are in `unit`; a percentile the
/// source does not give is `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// `local_read_latency`, `local_write_latency`, `coordinator_read_latency`,
    /// `coordinator_write_latency`, `proxy_read_latency`, `proxy_write_latency`,
    /// `proxy_range_latency`, `sstables_per_read`, `partition_size`, `cell_count`,
    /// `rows_per_read`, `tombstones_per_read` or `max_partition_size`.
    pub name: String,
    /// Where it came from: `system_views.<table>` (CQL), `nodetool tablehistograms` or
    /// `nodetool proxyhistograms`.
    pub source: String,
    /// What the values count.
    pub unit: Option<Unit>,
    /// Events recorded since the node started (CQL only).
    pub count: Option<u64>,
    /// The server's recent rate, events per second (CQL only).
    pub per_second: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 75th percentile (nodetool only).
    pub p75: Option<f64>,
    /// 95th percentile (nodetool only).
    pub p95: Option<f64>,
    /// 98th percentile (nodetool only).
    pub p98: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// Smallest value (nodetool only).
    pub min: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
    /// The step the source rounds values to, in `unit`, when it is coarse (1000 µs for
    /// latencies over CQL, 1 MiB for the largest partition).
    #[serde(default)]
    pub resolution: Option<f64>,
}

impl Figure {
    fn known(&self) -> usize {
        [
            self.p50, self.p75, self.p95, self.p98, self.p99, self.min, self.max,
        ]
        .iter()
        .filter(|v| v.is_some())
        .count()
    }

    /// The percentiles of the seed's table, in order: 50, 75, 95, 98, 99.
    pub fn percentiles(&self) -> [Option<f64>; 5] {
        [self.p50, self.p75, self.p95, self.p98, self.p99]
    }
}

/// One reading of every node, taken while the load ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSample {
    /// When the reading began, seconds since the run's start (histograms.hlog's time base;
    /// the warmup comes first).
    pub at_s: f64,
    /// The same moment, RFC 3339.
    pub taken_at: String,
    /// Every node's figures.
    pub nodes: Vec<NodeTables>,
    /// What could not be read this time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Writes server-tables.json into `out`; a failure to write is reported, not fatal.
pub fn write(out: &Path, file: &ServerTablesFile) {
    let path = out.join(SERVER_TABLES_JSON);
    let written = serde_json::to_string_pretty(file)
        .map_err(|e| e.to_string())
        .and_then(|text| std::fs::write(&path, text).map_err(|e| e.to_string()));
    if let Err(e) = written {
        eprintln!("Warning: could not write {}: {e}", path.display());
    }
}
