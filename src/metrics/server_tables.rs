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
//! - nodetool, only for the nodes of a local cluster headroom started (found as the server
//!   pauses find theirs, [`PauseSource`]): `tablehistograms <ks> <table>` adds the 75th, 95th
//!   and 98th percentiles of the table's latencies, sstables per read, and the partition size
//!   and cell count distributions of its sstables; `proxyhistograms` gives the node's
//!   coordinator latencies over every table.
//!
//! These are the server's own views, not records of headroom's requests: latency
//! percentiles come from decaying reservoirs that weigh the last minutes most, counts are
//! cumulative since the node started, and partition figures describe the sstables on disk
//! (nothing while the data is still in memtables). Reading them never fails a run: what
//! cannot be read becomes a note.

use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::statement::unprepared::Statement;
use scylla::value::{CqlValue, Row};
use serde::{Deserialize, Serialize};

use crate::cluster::LocalCluster;
use crate::metrics::server_pauses::{PauseNode, PauseSource};
use crate::metrics::server_samples::Sampler;
use crate::workload::any::AnyWorkload;
use crate::workload::WorkloadConfig;

/// The server's figures of a run directory.
pub const SERVER_TABLES_JSON: &str = "server-tables.json";
/// How long one nodetool command may take before it is abandoned (a JVM starts each time).
const NODETOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// The step of the latencies `system_views` gives, µs (see [`figure_from_row`]).
pub const CQL_LATENCY_RESOLUTION_US: f64 = 1000.0;
/// How long one query of a virtual table may take.
const CQL_TIMEOUT: Duration = Duration::from_secs(10);

/// The virtual tables read per node, with the unit of their values once converted.
/// Latency tables hold milliseconds; they are stored in microseconds, as nodetool prints.
const VIEWS: &[(&str, Unit)] = &[
    ("local_read_latency", Unit::Micros),
    ("local_write_latency", Unit::Micros),
    ("coordinator_read_latency", Unit::Micros),
    ("coordinator_write_latency", Unit::Micros),
    ("rows_per_read", Unit::Rows),
    ("tombstones_per_read", Unit::Tombstones),
    ("max_partition_size", Unit::Bytes),
];

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
    /// server-samples.jsonl ([`crate::metrics::server_samples`]).
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

// ---------------------------------------------------------------------------------------
// nodetool's text

/// Parses the table nodetool `tablehistograms` and `proxyhistograms` print: a header row
/// that starts with `Percentile`, an optional row of units, then one row per percentile
/// (`50%`, ..., `Min`, `Max`). Returns one figure per column, named by `name_of` (None
/// skips a column); values nodetool could not compute (`NaN`) stay `None`. Errors name
/// what was missing.
pub fn parse_histograms(
    text: &str,
    source: &str,
    name_of: impl Fn(&str) -> Option<(&'static str, Unit)>,
) -> Result<Vec<Figure>, String> {
    let mut lines = text.lines();
    let header = lines
        .by_ref()
        .find(|l| l.trim_start().starts_with("Percentile"))
        .ok_or_else(|| format!("{source} printed no `Percentile` header"))?;
    let lines: Vec<&str> = lines.collect();
    let first_row = lines
        .iter()
        .find(|l| l.starts_with("50%"))
        .ok_or_else(|| format!("{source} printed a header but no percentile rows"))?;
    let columns = split_columns(header, first_row).ok_or_else(|| {
        format!("{source}: the header {header:?} names more columns than {first_row:?} has")
    })?;
    let mut figures: Vec<Option<Figure>> = columns
        .iter()
        .map(|c| {
            name_of(c).map(|(name, unit)| Figure {
                name: name.to_string(),
                source: source.to_string(),
                unit: Some(unit),
                ..Figure::default()
            })
        })
        .collect();
    let mut rows = 0;
    for line in lines {
        let mut cells = line.split_whitespace();
        let Some(label) = cells.next() else { continue };
        let slot: fn(&mut Figure) -> &mut Option<f64> = match label {
            "50%" => |f| &mut f.p50,
            "75%" => |f| &mut f.p75,
            "95%" => |f| &mut f.p95,
            "98%" => |f| &mut f.p98,
            "99%" => |f| &mut f.p99,
            "Min" => |f| &mut f.min,
            "Max" => |f| &mut f.max,
            // The units row, a blank line, or a message.
            _ => continue,
        };
        let values: Vec<&str> = cells.collect();
        if values.len() != figures.len() {
            return Err(format!(
                "{source}: the {label} row has {} values for {} columns: {line:?}",
                values.len(),
                figures.len()
            ));
        }
        for (figure, value) in figures.iter_mut().zip(values) {
            let Some(figure) = figure else { continue };
            let parsed = parse_number(value)
                .ok_or_else(|| format!("{source}: {value:?} in the {label} row is no number"))?;
            *slot(figure) = parsed.filter(|v| v.is_finite());
        }
        rows += 1;
    }
    if rows == 0 {
        return Err(format!("{source} printed a header but no percentile rows"));
    }
    Ok(figures.into_iter().flatten().collect())
}

/// The names of the value columns of a header row. Names may hold spaces and stand one
/// space apart (`CAS Write Latency View Write Latency`), but every column is right-aligned
/// with its values: each name is the header's text above the span of its value in `row`.
fn split_columns(header: &str, row: &str) -> Option<Vec<String>> {
    let mut ends = Vec::new();
    let mut in_token = false;
    for (i, c) in row.char_indices() {
        if c.is_whitespace() {
            if in_token {
                ends.push(i);
            }
            in_token = false;
        } else {
            in_token = true;
        }
    }
    if in_token {
        ends.push(row.len());
    }
    // The first token is the row's label, under the left-aligned "Percentile".
    let label_end = header.find("Percentile").unwrap_or(0) + "Percentile".len();
    let mut names = Vec::new();
    let mut from = ends.first().copied().unwrap_or(0).max(label_end);
    for &end in ends.iter().skip(1) {
        let name = header.get(from.min(header.len())..end.min(header.len()));
        names.push(name.unwrap_or("").trim().to_string());
        from = end.max(from);
    }
    let rest = header.get(from.min(header.len())..).unwrap_or("");
    rest.trim().is_empty().then_some(names)
}

/// A number as nodetool prints it (`12.5`, `1,234.56` in some locales' grouping, `NaN`);
/// `Some(None)` for NaN.
fn parse_number(text: &str) -> Option<Option<f64>> {
    if text.eq_ignore_ascii_case("nan") {
        return Some(None);
    }
    text.replace(',', "").parse::<f64>().ok().map(Some)
}

/// Names the figure of a nodetool column, or skips it.
type ColumnNames = fn(&str) -> Option<(&'static str, Unit)>;

/// The columns of `nodetool tablehistograms`.
pub fn table_column(column: &str) -> Option<(&'static str, Unit)> {
    match column {
        "Read Latency" => Some(("local_read_latency", Unit::Micros)),
        "Write Latency" => Some(("local_write_latency", Unit::Micros)),
        "SSTables" => Some(("sstables_per_read", Unit::Sstables)),
        "Partition Size" => Some(("partition_size", Unit::Bytes)),
        "Cell Count" => Some(("cell_count", Unit::Cells)),
        _ => None,
    }
}

/// The columns of `nodetool proxyhistograms` kept (CAS and view latencies are left out).
pub fn proxy_column(column: &str) -> Option<(&'static str, Unit)> {
    match column {
        "Read Latency" => Some(("proxy_read_latency", Unit::Micros)),
        "Write Latency" => Some(("proxy_write_latency", Unit::Micros)),
        "Range Latency" => Some(("proxy_range_latency", Unit::Micros)),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// system_views rows

/// A figure from one row of a `system_views` table, given as (column, value) pairs.
/// Column names differ between versions (`p50th` in 4.0, `p50th_ms` from 4.1; `max`,
/// `max_ms`; `mebibytes` for sizes), so they are matched by their stem.
///
/// The latency columns do not hold milliseconds: Cassandra multiplies the reservoir's
/// values by 10⁻⁶ as if they were nanoseconds, but they are microseconds (measured on
/// 5.0.9: `max_ms` 0.005 while nodetool printed a max of 4768 µs), then rounds to three
/// decimals. So a column's value × 10⁶ is microseconds, to the nearest 1000 µs
/// ([`CQL_LATENCY_RESOLUTION_US`]). Sizes in mebibytes become bytes (also rounded by the
/// server, to whole MiB).
pub fn figure_from_row(view: &str, unit: Unit, columns: &[(String, Option<f64>)]) -> Figure {
    let mut figure = Figure {
        name: view.to_string(),
        source: format!("system_views.{view}"),
        unit: Some(unit),
        ..Figure::default()
    };
    const MIB: f64 = 1024.0 * 1024.0;
    if unit == Unit::Micros {
        figure.resolution = Some(CQL_LATENCY_RESOLUTION_US);
    }
    for (column, value) in columns {
        let Some(value) = *value else { continue };
        let (stem, scale) = match column.rsplit_once('_') {
            Some((stem, "ms")) => (stem, 1e6),
            _ if column == "mebibytes" => {
                figure.resolution = Some(MIB);
                ("max", MIB)
            }
            _ if unit == Unit::Micros => (column.as_str(), 1e6),
            _ => (column.as_str(), 1.0),
        };
        let scaled = value * scale;
        match stem {
            "count" => figure.count = Some(value.max(0.0) as u64),
            "per_second" => figure.per_second = Some(value),
            "p50th" | "50th" => figure.p50 = Some(scaled),
            "p99th" | "99th" => figure.p99 = Some(scaled),
            "max" => figure.max = Some(scaled),
            _ => {}
        }
    }
    figure
}

/// A CQL value as a number, when it is one.
fn number(value: &CqlValue) -> Option<f64> {
    match value {
        CqlValue::Double(v) => Some(*v),
        CqlValue::Float(v) => Some(f64::from(*v)),
        CqlValue::BigInt(v) => Some(*v as f64),
        CqlValue::Int(v) => Some(f64::from(*v)),
        CqlValue::SmallInt(v) => Some(f64::from(*v)),
        CqlValue::Counter(c) => Some(c.0 as f64),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Reading

/// A local node nodetool can reach.
#[derive(Debug, Clone)]
struct LocalNode {
    cluster_dir: PathBuf,
    index: u32,
    name: String,
    address: SocketAddr,
}

/// Where a run reads Cassandra's figures for its table.
pub struct TablesReader {
    session: Arc<Session>,
    keyspace: String,
    table: String,
    local: Vec<LocalNode>,
}

impl TablesReader {
    /// A reader for `keyspace.table` over `session`, adding nodetool's figures for the
    /// local nodes `pause_nodes` names (those a [`PauseSource`] found for the run).
    pub fn new(
        session: Arc<Session>,
        keyspace: &str,
        table: &str,
        pause_nodes: &[PauseNode],
    ) -> TablesReader {
        let local = pause_nodes.iter().filter_map(local_node).collect();
        TablesReader {
            session,
            keyspace: keyspace.to_string(),
            table: table.to_string(),
            local,
        }
    }

    /// Whether nodetool adds its figures.
    pub fn has_local_nodes(&self) -> bool {
        !self.local.is_empty()
    }

    /// Every node's figures now; what fails becomes a note in `notes`.
    pub async fn snapshot(&self, notes: &mut Vec<String>) -> Snapshot {
        let taken_at = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
        // nodetool's JVMs start while the queries run.
        let local = self.local.clone();
        let (keyspace, table) = (self.keyspace.clone(), self.table.clone());
        let nodetool = tokio::task::spawn_blocking(move || {
            local
                .iter()
                .map(|n| (n.clone(), nodetool_figures(n, &keyspace, &table)))
                .collect::<Vec<_>>()
        });
        let mut nodes = self.cql_figures(notes).await;
        match nodetool.await {
            Ok(per_node) => {
                for (node, (figures, node_notes)) in per_node {
                    notes.extend(node_notes);
                    match nodes
                        .iter_mut()
                        .find(|n| n.address == node.address.to_string())
                    {
                        Some(entry) => {
                            entry.node = node.name.clone();
                            entry.figures.extend(figures);
                        }
                        None => nodes.push(NodeTables {
                            node: node.name.clone(),
                            address: node.address.to_string(),
                            figures,
                        }),
                    }
                }
            }
            Err(e) => notes.push(format!("nodetool could not be run: {e}")),
        }
        Snapshot { taken_at, nodes }
    }

    /// The `system_views` figures of every node the session knows.
    pub(crate) async fn cql_figures(&self, notes: &mut Vec<String>) -> Vec<NodeTables> {
        let state = self.session.get_cluster_state();
        let mut out = Vec::new();
        for node in state.get_nodes_info() {
            let address = SocketAddr::new(node.address.ip(), node.address.port());
            let profile = ExecutionProfile::builder()
                .load_balancing_policy(SingleTargetLoadBalancingPolicy::new(
                    NodeIdentifier::Node(node.clone()),
                    None,
                ))
                .request_timeout(Some(CQL_TIMEOUT))
                .build()
                .into_handle();
            let mut figures = Vec::new();
            for &(view, unit) in VIEWS {
                let cql = format!(
                    "SELECT * FROM system_views.{view} WHERE keyspace_name = ? AND table_name = ?"
                );
                let mut statement = Statement::new(cql);
                statement.set_execution_profile_handle(Some(profile.clone()));
                match self.view_rows(statement).await {
                    Ok(Some(columns)) => figures.push(figure_from_row(view, unit, &columns)),
                    // No row yet: the table has no such figure on this node.
                    Ok(None) => {}
                    Err(e) => notes.push(format!(
                        "{address}: system_views.{view} could not be read: {e}"
                    )),
                }
            }
            // A node of a local cluster headroom started goes by its name.
            let name = self
                .local
                .iter()
                .find(|n| n.address == address)
                .map_or_else(|| address.to_string(), |n| n.name.clone());
            out.push(NodeTables {
                node: name,
                address: address.to_string(),
                figures,
            });
        }
        out
    }

    /// The row of the run's table in one virtual table, as (column, number) pairs.
    async fn view_rows(
        &self,
        statement: Statement,
    ) -> Result<Option<Vec<(String, Option<f64>)>>, String> {
        let result = self
            .session
            .query_unpaged(statement, (&self.keyspace, &self.table))
            .await
            .map_err(|e| e.to_string())?;
        let rows = result.into_rows_result().map_err(|e| e.to_string())?;
        let names: Vec<String> = rows
            .column_specs()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        let mut typed = rows.rows::<Row>().map_err(|e| e.to_string())?;
        let Some(row) = typed.next() else {
            return Ok(None);
        };
        let row = row.map_err(|e| e.to_string())?;
        Ok(Some(
            names
                .into_iter()
                .zip(row.columns)
                .map(|(name, value)| (name, value.as_ref().and_then(number)))
                .collect(),
        ))
    }
}

/// The local node behind a pause node: its directory is `<cluster>/nodeN`, holding `logs`.
fn local_node(node: &PauseNode) -> Option<LocalNode> {
    let node_dir = node.logs_dir.parent()?;
    let index = node.name.strip_prefix("node")?.parse().ok()?;
    Some(LocalNode {
        cluster_dir: node_dir.parent()?.to_path_buf(),
        index,
        name: node.name.clone(),
        address: node.address,
    })
}

/// nodetool's figures for one node; failures become notes.
fn nodetool_figures(node: &LocalNode, keyspace: &str, table: &str) -> (Vec<Figure>, Vec<String>) {
    let mut figures = Vec::new();
    let mut notes = Vec::new();
    let cluster = match LocalCluster::open(&node.cluster_dir) {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!("{}: nodetool not run: {e}", node.name));
            return (figures, notes);
        }
    };
    let commands: [(&[&str], &str, ColumnNames); 2] = [
        (
            &["tablehistograms", keyspace, table],
            "nodetool tablehistograms",
            table_column,
        ),
        (
            &["proxyhistograms"],
            "nodetool proxyhistograms",
            proxy_column,
        ),
    ];
    // Both JVMs at once: each takes seconds to start.
    let started: Vec<_> = commands
        .iter()
        .map(|(args, source, _)| {
            cluster
                .nodetool(node.index)
                .map_err(|e| e.to_string())
                .and_then(|mut c| {
                    c.args(*args);
                    spawn(c, source)
                })
        })
        .collect();
    for ((_, source, columns), child) in commands.iter().zip(started) {
        let text = child.and_then(|c| finish(c, source));
        match text.and_then(|t| parse_histograms(&t, source, columns)) {
            Ok(found) => figures.extend(found),
            Err(e) => notes.push(format!("{}: {e}", node.name)),
        }
    }
    (figures, notes)
}

fn spawn(mut command: Command, source: &str) -> Result<std::process::Child, String> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{source} could not start: {e}"))
}

/// Waits for a nodetool process (at most [`NODETOOL_TIMEOUT`], then kills it) and returns
/// its output, or why there is none.
fn finish(mut child: std::process::Child, source: &str) -> Result<String, String> {
    // Read the pipes on threads so a chatty process cannot block on a full pipe.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + NODETOOL_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{source} took longer than {} s and was stopped",
                    NODETOOL_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("{source}: {e}")),
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    if !status.success() {
        let said = err
            .lines()
            .chain(out.lines())
            .find(|l| !l.trim().is_empty());
        return Err(format!(
            "{source} failed ({status}){}",
            said.map(|s| format!(": {}", s.trim())).unwrap_or_default()
        ));
    }
    Ok(out)
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

/// The figures of one run: read once before the measured run ([`TablesRecording::begin`])
/// and once after ([`TablesRecording::end`]).
pub struct TablesRecording {
    reader: Option<Arc<TablesReader>>,
    file: ServerTablesFile,
    sampler: Option<Sampler>,
}

impl TablesRecording {
    /// Reads the "before" figures of the table `workload` loads, over `session`, with
    /// nodetool's for the local nodes `source` finds for `hosts` when `nodetool` is true.
    /// Writes server-tables.json
    /// into `out` at once, so the before figures survive a run that never ends cleanly.
    pub async fn begin(
        session: Arc<Session>,
        workload: &WorkloadConfig,
        source: &PauseSource,
        hosts: &[String],
        nodetool: bool,
        out: &Path,
    ) -> TablesRecording {
        let mut file = ServerTablesFile {
            keyspace: workload.keyspace.clone(),
            table: String::new(),
            before: None,
            after: None,
            notes: Vec::new(),
            samples_every_s: None,
            samples: 0,
        };
        let reader = match AnyWorkload::table_of(workload) {
            Ok(table) => {
                file.table = table.clone();
                let nodes = if nodetool {
                    source.nodes_for(hosts).unwrap_or_default()
                } else {
                    Vec::new()
                };
                Some(Arc::new(TablesReader::new(
                    session,
                    &workload.keyspace,
                    &table,
                    &nodes,
                )))
            }
            Err(e) => {
                file.notes.push(format!(
                    "the workload's table is not known, nothing read: {e}"
                ));
                None
            }
        };
        if let Some(reader) = &reader {
            file.before = Some(reader.snapshot(&mut file.notes).await);
        }
        write(out, &file);
        TablesRecording {
            reader,
            file,
            sampler: None,
        }
    }

    /// Reads the figures over CQL every `every` from the run's start `t0` until
    /// [`TablesRecording::end`], into `out`/server-samples.jsonl (see [`Sampler`]).
    pub fn sample_every(
        &mut self,
        every: Duration,
        t0: tokio::time::Instant,
        started_at: SystemTime,
        out: &Path,
    ) {
        if let Some(reader) = &self.reader {
            self.file.samples_every_s = Some(every.as_secs_f64());
            self.sampler = Some(Sampler::start(reader.clone(), every, t0, started_at, out));
        }
    }

    /// Stops the readings during the run, reads the "after" figures and writes
    /// server-tables.json again.
    pub async fn end(mut self, out: &Path) -> ServerTablesFile {
        if let Some(sampler) = self.sampler.take() {
            let end = sampler.finish().await;
            self.file.samples = end.samples;
            self.file.notes.extend(end.notes);
        }
        if let Some(reader) = &self.reader {
            self.file.after = Some(reader.snapshot(&mut self.file.notes).await);
        }
        write(out, &self.file);
        self.file
    }
}

// ---------------------------------------------------------------------------------------
// Summaries

/// The rows of the terminal's table, per node: each percentile of read and write latency,
/// before → after, in µs, and the requests the node counted in between.
pub fn describe(file: &ServerTablesFile) -> Vec<String> {
    let mut lines = Vec::new();
    let after_nodes = file.after.as_ref().map_or(&[][..], |s| &s.nodes[..]);
    for after in after_nodes {
        let before = file
            .before
            .as_ref()
            .and_then(|s| s.nodes.iter().find(|n| n.address == after.address));
        lines.push(format!(
            "{} ({}), µs          before → after",
            after.node, after.address
        ));
        for (name, label) in [
            ("local_read_latency", "Read Latency"),
            ("local_write_latency", "Write Latency"),
        ] {
            let Some(now) = after.figure(name) else {
                continue;
            };
            // A node that never served this kind of request has only zeros to show.
            if after.count(name) == Some(0) {
                continue;
            }
            let earlier = before.and_then(|b| b.figure(name));
            for (i, p) in ["50P", "75P", "95P", "98P", "99P"].iter().enumerate() {
                let Some(value) = now.percentiles()[i] else {
                    continue;
                };
                let was = earlier
                    .and_then(|f| f.percentiles()[i])
                    .map_or("-".to_string(), |v| format!("{v:.2}"));
                lines.push(format!("  {label} {p:<4} {was:>12} → {value:.2}"));
            }
            if let Some(count) = after.count(name) {
                let grew = before
                    .and_then(|b| b.count(name))
                    .map(|c| format!(" (+{})", count.saturating_sub(c)))
                    .unwrap_or_default();
                lines.push(format!("  {label} count {count}{grew}"));
            }
        }
    }
    for note in &file.notes {
        lines.push(format!("note: {note}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = include_str!("../../tests/fixtures/nodetool/tablehistograms.txt");
    const PROXY: &str = include_str!("../../tests/fixtures/nodetool/proxyhistograms.txt");
    const EMPTY: &str =
        include_str!("../../tests/fixtures/nodetool/tablehistograms-no-sstables.txt");

    fn named<'a>(figures: &'a [Figure], name: &str) -> &'a Figure {
        figures
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no {name} in {figures:#?}"))
    }

    #[test]
    fn tablehistograms_of_a_loaded_node_give_every_column() {
        let figures = parse_histograms(TABLE, "nodetool tablehistograms", table_column).unwrap();
        let names: Vec<&str> = figures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "local_read_latency",
                "local_write_latency",
                "sstables_per_read",
                "partition_size",
                "cell_count"
            ]
        );
        let write = named(&figures, "local_write_latency");
        assert_eq!(write.unit, Some(Unit::Micros));
        assert_eq!(write.source, "nodetool tablehistograms");
        assert!(write.count.is_none());
        // Every percentile row is there, in order.
        let p = write.percentiles().map(Option::unwrap);
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
        assert!(write.min.unwrap() <= p[0] && p[4] <= write.max.unwrap());
    }

    #[test]
    fn tablehistograms_without_sstables_leave_partition_figures_unknown() {
        let figures = parse_histograms(EMPTY, "nodetool tablehistograms", table_column).unwrap();
        let size = named(&figures, "partition_size");
        assert_eq!(size.p50, None);
        assert_eq!(size.max, None);
        assert!(named(&figures, "local_write_latency").p50.is_some());
    }

    #[test]
    fn proxyhistograms_keep_read_write_and_range_latency() {
        let figures = parse_histograms(PROXY, "nodetool proxyhistograms", proxy_column).unwrap();
        let names: Vec<&str> = figures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "proxy_read_latency",
                "proxy_write_latency",
                "proxy_range_latency"
            ]
        );
        assert!(named(&figures, "proxy_write_latency").p99.unwrap() > 0.0);
    }

    #[test]
    fn a_short_row_or_missing_header_is_an_error() {
        let err =
            parse_histograms("error: no such table\n", "nodetool x", table_column).unwrap_err();
        assert!(err.contains("no `Percentile` header"), "{err}");
        let text = "Percentile  Read Latency  Write Latency\n50%  1.0\n";
        let err = parse_histograms(text, "nodetool x", table_column).unwrap_err();
        assert!(err.contains("names more columns than"), "{err}");
        let text = "Percentile  Read Latency\n50%                  1.0\n75%     1.0    2.0\n";
        let err = parse_histograms(text, "nodetool x", table_column).unwrap_err();
        assert!(
            err.contains("the 75% row has 2 values for 1 columns"),
            "{err}"
        );
        let text = "Percentile  Read Latency\n50%                 fast\n";
        let err = parse_histograms(text, "nodetool x", table_column).unwrap_err();
        assert!(err.contains("\"fast\""), "{err}");
    }

    fn row(pairs: &[(&str, f64)]) -> Vec<(String, Option<f64>)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), Some(*v)))
            .collect()
    }

    #[test]
    fn latency_rows_in_milliseconds_become_microseconds() {
        // Cassandra 5.0's columns.
        let columns = row(&[
            ("count", 1234.0),
            ("max_ms", 0.005),
            ("p50th_ms", 0.0),
            ("p99th_ms", 0.002),
            ("per_second", 99.5),
        ]);
        let mut columns = columns;
        columns.insert(0, ("keyspace_name".into(), None));
        let f = figure_from_row("local_write_latency", Unit::Micros, &columns);
        assert_eq!(f.count, Some(1234));
        assert_eq!(f.source, "system_views.local_write_latency");
        // What 5.0.9 printed beside nodetool's max of 4768 µs.
        assert_eq!(f.p50, Some(0.0));
        assert!((f.p99.unwrap() - 2000.0).abs() < 1e-6);
        assert!((f.max.unwrap() - 5000.0).abs() < 1e-6);
        assert_eq!(f.resolution, Some(CQL_LATENCY_RESOLUTION_US));
        assert_eq!(f.per_second, Some(99.5));
        assert_eq!(f.p75, None);
        // 4.0's names, without the suffix, are scaled the same way.
        let old = figure_from_row(
            "local_read_latency",
            Unit::Micros,
            &row(&[
                ("count", 3.0),
                ("p50th", 0.001),
                ("p99th", 0.002),
                ("max", 0.004),
            ]),
        );
        assert_eq!(old.count, Some(3));
        assert!((old.max.unwrap() - 4000.0).abs() < 1e-6);
    }

    #[test]
    fn count_rows_keep_their_values() {
        let f = figure_from_row(
            "rows_per_read",
            Unit::Rows,
            &row(&[
                ("count", 10.0),
                ("max", 3.0),
                ("p50th", 1.0),
                ("p99th", 2.0),
            ]),
        );
        assert_eq!((f.p50, f.p99, f.max), (Some(1.0), Some(2.0), Some(3.0)));
        assert_eq!(f.resolution, None);
        let size = figure_from_row(
            "max_partition_size",
            Unit::Bytes,
            &row(&[("mebibytes", 1.0)]),
        );
        assert_eq!(size.max, Some(1024.0 * 1024.0));
    }

    #[test]
    fn the_summary_shows_before_and_after_and_the_counted_writes() {
        let node = |count: u64, p50: f64| NodeTables {
            node: "node1".into(),
            address: "127.0.0.5:9042".into(),
            figures: vec![
                Figure {
                    name: "local_write_latency".into(),
                    source: "system_views.local_write_latency".into(),
                    count: Some(count),
                    p50: Some(p50),
                    p99: Some(p50 * 4.0),
                    ..Figure::default()
                },
                Figure {
                    name: "local_write_latency".into(),
                    source: "nodetool tablehistograms".into(),
                    p50: Some(p50),
                    p75: Some(p50 * 2.0),
                    p95: Some(p50 * 3.0),
                    p98: Some(p50 * 3.5),
                    p99: Some(p50 * 4.0),
                    ..Figure::default()
                },
            ],
        };
        let file = ServerTablesFile {
            keyspace: "ks".into(),
            table: "t".into(),
            before: Some(Snapshot {
                taken_at: String::new(),
                nodes: vec![node(100, 10.0)],
            }),
            after: Some(Snapshot {
                taken_at: String::new(),
                nodes: vec![node(1100, 12.0)],
            }),
            notes: vec!["node1: nodetool proxyhistograms failed".into()],
            samples_every_s: None,
            samples: 0,
        };
        let lines = describe(&file).join("\n");
        assert!(
            lines.contains("Write Latency 75P         20.00 → 24.00"),
            "{lines}"
        );
        assert!(
            lines.contains("Write Latency count 1100 (+1000)"),
            "{lines}"
        );
        assert!(lines.contains("note: node1: nodetool proxyhistograms failed"));
        assert!(!lines.contains("Read Latency"), "{lines}");
        let mut idle = file.clone();
        for snapshot in [&mut idle.before, &mut idle.after].into_iter().flatten() {
            for figure in &mut snapshot.nodes[0].figures {
                figure.count = figure.count.map(|_| 0);
            }
        }
        assert!(!describe(&idle).join("\n").contains("Write Latency"));
    }
}
