//! The reader of a run's table figures: [`TablesReader`] asks every node's `system_views`
//! over CQL (node by node, the virtual tables being node-local) and adds nodetool's figures
//! for the local nodes; [`figure_from_row`] turns one row of a virtual table into a figure.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::statement::unprepared::Statement;
use scylla::value::{CqlValue, Row};

use crate::cluster::NodeSpec;

use super::model::{Figure, NodeTables, Snapshot, Unit};
use super::nodetool::{local_node, nodetool_figures, LocalNode};

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

/// Where a run reads Cassandra's figures for its table.
pub struct TablesReader {
    session: Arc<Session>,
    keyspace: String,
    table: String,
    local: Vec<LocalNode>,
}

impl TablesReader {
    /// A reader for `keyspace.table` over `session`, adding nodetool's figures for the
    /// `local` nodes (those behind the run's hosts,
    /// [`LocalNodes`](crate::cluster::LocalNodes)).
    pub fn new(
        session: Arc<Session>,
        keyspace: &str,
        table: &str,
        local: &[NodeSpec],
    ) -> TablesReader {
        let local = local.iter().filter_map(local_node).collect();
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
                    // Down (a node lost, or kept down by a degraded search): one note for
                    // the node, not one per view.
                    Err(e) if !node.is_connected() => {
                        notes.push(format!(
                            "{address}: the node is down (no connection), no system_views \
                             figures: {e}"
                        ));
                        break;
                    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
