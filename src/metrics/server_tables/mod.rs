//! What Cassandra itself reports about the table a run loads, read just before the measured
//! run and again when it ends, and written into the run directory as `server-tables.json`
//! ([`ServerTablesFile`]) beside the client's latencies.
//!
//! Two sources, each figure saying which it came from:
//!
//! - CQL, `system_views` (Cassandra 4.0 and later), asked of every node on its own (the
//!   virtual tables are node-local): the replica's read and write latency of the table
//!   (`local_read_latency`, `local_write_latency`), the latency of requests the node
//!   coordinated for it (`coordinator_read_latency`, `coordinator_write_latency`), rows and
//!   tombstones read per query, and the largest partition. Latency tables give a count, the
//!   median, the 99th percentile, the maximum and a rate. This works against any cluster.
//! - nodetool, only for the nodes of a local cluster headroom started (the local nodes behind
//!   the run's hosts, [`LocalNodes`](crate::cluster::LocalNodes), as the server pauses'):
//!   `tablehistograms <ks> <table>` adds the 75th, 95th and 98th percentiles of the table's
//!   latencies, sstables per read, and the partition size and cell count distributions of its
//!   sstables; `proxyhistograms` gives the node's coordinator latencies over every table.
//!
//! These are the server's own views, not records of headroom's requests: latency
//! percentiles come from decaying reservoirs that weigh the last minutes most, counts are
//! cumulative since the node started, and partition figures describe the sstables on disk
//! (nothing while the data is still in memtables). Reading them never fails a run: what
//! cannot be read becomes a note.
//!
//! The files: `model` (server-tables.json and the lines of server-samples.jsonl, with their
//! serde forms), `nodetool` (nodetool's text and the running of it), `cql` (the
//! `system_views` reader, [`TablesReader`]), `recording` (a run's [`TablesRecording`] and
//! its in-run [`Sampler`]) and `describe` (the terminal's summary). Everything public is
//! re-exported here; what moved in from `server_samples` (the sampler and the line it
//! writes) is also re-exported there, at the paths it had.

mod cql;
mod describe;
mod model;
mod nodetool;
mod recording;

pub use cql::{figure_from_row, TablesReader, CQL_LATENCY_RESOLUTION_US};
pub use describe::describe;
pub use model::{write, Figure, NodeTables, ServerSample, ServerTablesFile, Snapshot, Unit};
pub use nodetool::{parse_histograms, proxy_column, table_column};
pub use recording::{Sampler, SamplingEnd, TablesRecording, MIN_EVERY};
