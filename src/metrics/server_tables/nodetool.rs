//! nodetool's side of the figures, for the nodes of a local cluster headroom started: the
//! parser of the tables `nodetool tablehistograms` and `proxyhistograms` print, and the
//! running of both for one node (a JVM each, started together, with a timeout).
//!
//! Apart from the CQL reader because it is plain text parsing and process handling, tested
//! on the fixtures of nodetool's output without a cluster.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cluster::{LocalCluster, NodeSpec};

use super::model::{Figure, Unit};

/// How long one nodetool command may take before it is abandoned (a JVM starts each time).
const NODETOOL_TIMEOUT: Duration = Duration::from_secs(60);

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

/// A local node nodetool can reach.
#[derive(Debug, Clone)]
pub(super) struct LocalNode {
    cluster_dir: PathBuf,
    index: u32,
    pub(super) name: String,
    pub(super) address: SocketAddr,
}

/// Where nodetool reaches a local node: its directory is `<cluster>/nodeN`.
pub(super) fn local_node(node: &NodeSpec) -> Option<LocalNode> {
    Some(LocalNode {
        cluster_dir: node.dir.parent()?.to_path_buf(),
        index: node.index,
        name: format!("node{}", node.index),
        address: node.native_addr(),
    })
}

/// nodetool's figures for one node; failures become notes.
pub(super) fn nodetool_figures(
    node: &LocalNode,
    keyspace: &str,
    table: &str,
) -> (Vec<Figure>, Vec<String>) {
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
                    let placement = &cluster.config().placement;
                    // On the nodes' cores and at their priority, not the client's.
                    crate::cpus::spawn_on(
                        placement.nodes_cores().as_ref(),
                        placement.node_nice,
                        || spawn(c, source),
                    )
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

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = include_str!("../../../tests/fixtures/nodetool/tablehistograms.txt");
    const PROXY: &str = include_str!("../../../tests/fixtures/nodetool/proxyhistograms.txt");
    const EMPTY: &str =
        include_str!("../../../tests/fixtures/nodetool/tablehistograms-no-sstables.txt");

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
}
