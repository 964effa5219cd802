//! A comparison as tables of cells: the terminal prints them aligned, the HTML report puts
//! the same cells in `<table>`s, so both always say the same.
//!
//! 1. Configurations: capacity, highest throughput, each against the baseline (Azul's capacity and
//!    cost article).
//! 2. The worst window's SLA percentile per attempted rate and configuration (Azul's capacity and
//!    cost article).
//! 3. The change against the baseline per attempted rate, with its verdict (the Graviton2 instance
//!    comparison).
//! 4. Cost, with its assumptions (Azul's capacity and cost article and the Graviton2 instance
//!    comparison), when prices were given.
//!
//! **Why one file of about 650 lines.** Every table of a comparison is made of the same cell
//! formats (a change with its p-value or interval, signed milliseconds); one file keeps the
//! tables of a search comparison and a run comparison in one style.

use super::comparison::{Change, Comparison};
use super::runs::RunComparison;
use crate::capacity::Verdict as RateVerdict;
use crate::format::{format_money, format_percentile, format_rate, format_value};
use crate::results::summary::Latency;
use crate::validation::DataVerdict;

/// A titled table: a header and rows of the same width, and lines to print under it.
#[derive(Debug, Clone)]
pub struct Table {
    /// What the table shows.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
    /// Lines under the table: legends, assumptions.
    pub footer: Vec<String>,
}

/// The tables of a comparison, in the order they are shown.
pub fn tables(c: &Comparison) -> Vec<Table> {
    let mut out = vec![configurations(c)];
    if !c.rates.is_empty() {
        out.push(worst_by_rate(c));
        out.push(changes_by_rate(c));
    }
    if let Some(pauses) = pauses(c) {
        out.push(pauses);
    }
    if let Some(cost) = cost(c) {
        out.push(cost);
    }
    out.extend(c.scaling.iter().map(scaling));
    out
}

/// Capacity against nodes for one group: what each size measured, what the model gives, and
/// the statements under it.
fn scaling(s: &super::scaling::Scaling) -> Table {
    let mut sizes: Vec<u32> = s.observations.iter().map(|o| o.nodes).collect();
    sizes.extend(s.curve.iter().map(|p| p.nodes));
    sizes.sort_unstable();
    sizes.dedup();
    let rows = sizes
        .iter()
        .map(|&nodes| {
            let measured: Vec<String> = s
                .observations
                .iter()
                .filter(|o| o.nodes == nodes)
                .map(|o| o.capacity_per_s.map_or("none".to_string(), format_rate))
                .collect();
            let point = s.curve.iter().find(|p| p.nodes == nodes);
            vec![
                nodes.to_string(),
                if measured.is_empty() {
                    "-".to_string()
                } else {
                    measured.join(", ")
                },
                point.map_or("-".to_string(), |p| format_rate(p.capacity_per_s)),
                point.map_or("-".to_string(), |p| {
                    format!(
                        "{} – {}",
                        format_rate(p.low_per_s),
                        format_rate(p.high_per_s)
                    )
                }),
            ]
        })
        .collect();
    Table {
        title: format!("Capacity against nodes ({})", s.group),
        header: [
            "Nodes",
            "Measured/s (each repeat)",
            "Model/s",
            "Model interval/s",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        footer: s.statements.clone(),
    }
}

/// The nodes' stop-the-world pauses per configuration, over every trial (Azul's HotSpot and Zing
/// study).
fn pauses(c: &Comparison) -> Option<Table> {
    if c.configs.iter().all(|f| f.pauses.is_none()) {
        return None;
    }
    let header = [
        "Configuration",
        "Pauses/node-min",
        "Stopped",
        "p99 pause",
        "Max pause",
        "Max time to safepoint",
    ]
    .map(String::from)
    .to_vec();
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format_value(v, "ms"));
    let rows = c
        .configs
        .iter()
        .map(|f| match &f.pauses {
            None => {
                let mut cells = vec![f.label.clone(), "not recorded".to_string()];
                cells.resize(header.len(), "-".to_string());
                cells
            }
            Some(p) => vec![
                f.label.clone(),
                format!("{:.1}", p.per_minute),
                format!("{:.2}%", p.stopped_percent),
                ms(p.p99_ms),
                ms(p.max_ms),
                ms(p.longest_time_to_safepoint_ms),
            ],
        })
        .collect();
    Some(Table {
        title: "Server pauses (every trial, per node)".to_string(),
        header,
        rows,
        footer: vec![
            "From the nodes' GC and safepoint logs over each trial's measured part: \
             stop-the-world pauses per node and minute, the share of time the nodes were \
             stopped, the pause lengths' p99 and max, and the longest wait for threads to \
             reach a safepoint (part of the pause, not the collector's own work)."
                .to_string(),
        ],
    })
}

fn configurations(c: &Comparison) -> Table {
    let header = [
        "Configuration",
        "Capacity/s",
        "Capacity vs baseline",
        "Highest/s",
        "Probe/s",
        "Probe vs baseline",
    ]
    .map(String::from)
    .to_vec();
    let rows = c
        .configs
        .iter()
        .map(|f| {
            let baseline = f.label == c.baseline;
            vec![
                if baseline {
                    format!("{} (baseline)", f.label)
                } else {
                    f.label.clone()
                },
                with_data_mark(
                    f.capacity_per_s.map_or("none".to_string(), format_rate),
                    f.data.as_ref().map(|d| (d.defects, d.incomplete_runs > 0)),
                ),
                match &f.capacity_change {
                    _ if baseline => "-".to_string(),
                    Some(ch) => match ch.percent {
                        Some(p) => format!("{p:+.1}% {}", ch.verdict),
                        None => ch.verdict.clone(),
                    },
                    None => "-".to_string(),
                },
                format_rate(f.highest_achieved_per_s),
                f.probe_per_s.map_or("-".to_string(), format_rate),
                f.probe_change.as_ref().map_or("-".to_string(), with_p),
            ]
        })
        .collect();
    let mut footer = vec![
        "Capacity: the highest attempted rate at which every window of every repeat met the SLA. \
         A search brackets it between its highest pass and the lowest fail above; two \
         capacities differ beyond the searches' resolution only when their brackets do not \
         overlap. Whether that is more than run-to-run noise, only --repeats can tell."
            .to_string(),
    ];
    for f in &c.configs {
        if let Some(d) = &f.degraded {
            footer.push(format!(
                "{}: every probe and trial ran {}, stopped before its warmup and started \
                 again after it, with its hints delivered before the next.",
                f.label,
                d.describe()
            ));
        }
    }
    for f in &c.configs {
        if let Some(data) = &f.data {
            footer.push(format!("{} (--validate): {}.", f.label, data.describe()));
        }
    }
    if c.configs.iter().any(|f| f.probe_change.is_some()) {
        footer.push(format!(
            "Probe: closed-loop throughput; its change is tested with Welch's t-test on \
             per-window throughput at the {:.0}% level.",
            c.level * 100.0
        ));
    }
    Table {
        title: "Configurations".to_string(),
        header,
        rows,
        footer,
    }
}

/// A figure of a configuration or run whose data `--validate` checked (`data`: its defects,
/// and whether a final check could not read the whole table), marked when the data has a
/// defect or no verdict: the figure is then not one to quote alone.
fn with_data_mark(figure: String, data: Option<(u64, bool)>) -> String {
    match data {
        Some((defects, _)) if defects > 0 => format!("{figure} (DATA DEFECTS: {defects})"),
        Some((_, true)) => format!("{figure} (data: no verdict)"),
        _ => figure,
    }
}

fn worst_by_rate(c: &Comparison) -> Table {
    let term = c.term.as_deref().unwrap_or("latency");
    let subject = term
        .split(['<', '>'])
        .next()
        .unwrap_or(term)
        .trim()
        .to_string();
    let mut header = vec!["Attempted/s".to_string()];
    header.extend(c.configs.iter().map(|f| f.label.clone()));
    let rows = c
        .rates
        .iter()
        .map(|r| {
            let mut cells = vec![format_rate(r.rate_per_s)];
            cells.extend(r.cells.iter().map(|cell| {
                if !cell.tried {
                    return "-".to_string();
                }
                let value = cell
                    .worst_ms
                    .map_or("?".to_string(), |v| format_value(v, "ms"));
                match cell.verdict {
                    Some(RateVerdict::Fail) => format!("{value} ✗"),
                    Some(RateVerdict::Incomplete) => format!("{value} …"),
                    _ => value,
                }
            }));
            cells
        })
        .collect();
    Table {
        title: format!("Worst window's {subject} per attempted rate"),
        header,
        rows,
        footer: vec![format!(
            "The highest {subject} of any SLA window over the repeats; ✗: the rate failed \
             (the SLA {term}, or less than 99% of the rate achieved); -: not tried."
        )],
    }
}

fn changes_by_rate(c: &Comparison) -> Table {
    let percentile = format_percentile(c.percentile);
    let others: Vec<usize> = (0..c.configs.len())
        .filter(|&i| c.configs[i].label != c.baseline)
        .collect();
    let mut header = vec!["Attempted/s".to_string()];
    for &i in &others {
        header.push(format!("{} {percentile}", c.configs[i].label));
        header.push(format!("{} throughput", c.configs[i].label));
    }
    let rows = c
        .rates
        .iter()
        .filter(|r| others.iter().any(|&i| r.cells[i].latency.is_some()))
        .map(|r| {
            let mut cells = vec![format_rate(r.rate_per_s)];
            for &i in &others {
                let cell = &r.cells[i];
                cells.push(cell.latency.as_ref().map_or("-".to_string(), with_interval));
                cells.push(cell.throughput.as_ref().map_or("-".to_string(), with_p));
            }
            cells
        })
        .collect();
    Table {
        title: format!("Change against {} per attempted rate", c.baseline),
        header,
        rows,
        footer: vec![
            format!(
                "{percentile}: all requests of the rate's windows merged; the interval is a \
                 bootstrap {:.0}% interval of the difference in ms, resampling 1 s windows. \
                 Throughput: per-window mean, Welch's t-test. \"noise\": not significant at \
                 the {:.0}% level; \"untested\": too few windows.",
                (1.0 - c.level) * 100.0,
                c.level * 100.0
            ),
            "At rates every configuration carries, throughput follows the schedule: its \
             change is noise by design; it tells where one configuration falls behind."
                .to_string(),
        ],
    }
}

fn cost(c: &Comparison) -> Option<Table> {
    if c.configs.iter().all(|f| f.cost.is_none()) {
        return None;
    }
    let target = c
        .configs
        .iter()
        .find_map(|f| f.cost.as_ref()?.target.as_ref().map(|t| t.load_per_s));
    let mut header = [
        "Configuration",
        "Nodes",
        "$/node-hour",
        "Cluster $/h",
        "Capacity/s per $/h",
    ]
    .map(String::from)
    .to_vec();
    // --size-for degraded: the capacity each row is priced by, said beside its figures.
    let sized = c.configs.iter().any(|f| f.sized_for.is_some());
    if sized {
        header.insert(1, "Sized for".to_string());
    }
    if let Some(load) = target {
        header.push(format!("Nodes for {}/s", format_rate(load)));
        header.push("Per year".to_string());
    }
    let rows = c
        .configs
        .iter()
        .map(|f| {
            let Some(cost) = &f.cost else {
                let mut cells = vec![f.label.clone(), "no price".to_string()];
                cells.resize(header.len(), "-".to_string());
                return cells;
            };
            let mut cells = vec![f.label.clone()];
            if sized {
                cells.push(sized_for(f));
            }
            cells.extend([
                cost.nodes.to_string(),
                format_money(cost.node_price_per_hour),
                format_money(cost.cluster_per_hour),
                cost.capacity_per_dollar_hour
                    .map_or("-".to_string(), format_rate),
            ]);
            if target.is_some() {
                let t = cost.target.as_ref();
                cells.push(
                    t.and_then(|t| t.nodes)
                        .map_or("no capacity".to_string(), |n| n.to_string()),
                );
                cells.push(
                    t.and_then(|t| t.per_year)
                        .map_or("-".to_string(), format_money),
                );
            }
            cells
        })
        .collect();
    let mut footer: Vec<String> = Vec::new();
    for f in &c.configs {
        if let Some(s) = &f.sized_for {
            footer.push(format!(
                "{}: sized for one node down: capacity {} with {} stopped (its twin {}).",
                f.label,
                s.capacity_per_s
                    .map_or("none".to_string(), |c| format!("{}/s", format_rate(c))),
                s.degraded.node_name(),
                s.twin
            ));
        }
    }
    if sized {
        footer.push(
            "Sized for one node down, the cost assumes the capacity with a node down grows \
             in proportion to the nodes too; with more nodes one down is a smaller share, so \
             this errs towards more nodes."
                .to_string(),
        );
    }
    footer.extend(c.cost_assumptions.iter().cloned());
    Some(Table {
        title: if sized {
            "Cost, sized for one node down".to_string()
        } else {
            "Cost".to_string()
        },
        header,
        rows,
        footer,
    })
}

/// The capacity a row of the cost table is priced by, under `--size-for degraded`.
fn sized_for(f: &super::comparison::ConfigFigures) -> String {
    let rate = |c: Option<f64>| c.map_or("none".to_string(), |c| format!("{}/s", format_rate(c)));
    match (&f.sized_for, &f.degraded) {
        (Some(s), _) => format!(
            "{} with node {} down ({})",
            rate(s.capacity_per_s),
            s.degraded.node,
            s.twin
        ),
        (None, Some(d)) => format!(
            "{} with node {} down (its own)",
            rate(f.capacity_per_s),
            d.node
        ),
        (None, None) => rate(f.capacity_per_s),
    }
}

/// `+12.3% better (p=0.001)`.
fn with_p(change: &Change) -> String {
    match (change.p_value, &change.why) {
        (Some(p), _) => format!("{} ({})", change.describe(), format_p(p)),
        _ => change.describe(),
    }
}

/// `+12.3% worse [+0.4, +2.1] ms`.
fn with_interval(change: &Change) -> String {
    match change.interval {
        Some((low, high)) => format!(
            "{} [{}, {}] ms",
            change.describe(),
            signed_ms(low),
            signed_ms(high)
        ),
        None => change.describe(),
    }
}

fn signed_ms(value: f64) -> String {
    let sign = if value > 0.0 {
        "+"
    } else if value < 0.0 {
        "-"
    } else {
        ""
    };
    format!(
        "{sign}{}",
        format_value(value.abs(), "ms").trim_end_matches(" ms")
    )
}

/// `p=0.042`, `p<0.001`.
fn format_p(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".to_string()
    } else {
        format!("p={p:.3}")
    }
}

/// The tables of a comparison of runs: the runs against the baseline, then the client's response
/// times per operation type (the layout of WitFoo's Cassandra 4.0 tests: one row per percentile).
pub fn run_tables(c: &RunComparison) -> Vec<Table> {
    let header = [
        "Run",
        "Attempted/s",
        "Achieved/s",
        "Measured",
        "p99 vs baseline",
        "Throughput vs baseline",
    ]
    .map(String::from)
    .to_vec();
    let rows = c
        .runs
        .iter()
        .map(|r| {
            let baseline = r.label == c.baseline;
            vec![
                if baseline {
                    format!("{} (baseline)", r.label)
                } else {
                    r.label.clone()
                },
                with_data_mark(
                    r.attempted_per_s.map_or("-".to_string(), format_rate),
                    r.data.map(|d| (d.defects, !d.complete)),
                ),
                r.achieved_per_s.map_or("-".to_string(), format_rate),
                r.measured_s
                    .map_or("-".to_string(), |s| format!("{s:.0} s")),
                r.p99_change.as_ref().map_or("-".to_string(), with_interval),
                r.throughput_change.as_ref().map_or("-".to_string(), with_p),
            ]
        })
        .collect();
    let mut footer = vec![format!(
        "p99 of every operation type merged, with a bootstrap {:.0}% interval of the \
         difference in ms over 1 s windows; throughput per window, Welch's t-test; \
         \"noise\": not significant at the {:.0}% level.",
        (1.0 - c.level) * 100.0,
        c.level * 100.0
    )];
    for r in &c.runs {
        if let Some(data) = r.data.and_then(|d| DataVerdict::of([(d, None)])) {
            footer.push(format!("{} (--validate): {}.", r.label, data.describe()));
        }
    }
    let runs = Table {
        title: "Runs".to_string(),
        header,
        rows,
        footer,
    };

    let mut header = vec!["Response time (ms)".to_string()];
    header.extend(c.runs.iter().map(|r| r.label.clone()));
    let mut rows = Vec::new();
    for (o, op) in c.ops.iter().enumerate() {
        let pick: [(&str, Pick); 6] = [
            ("p50", |l| l.p50_ms),
            ("p95", |l| l.p95_ms),
            ("p99", |l| l.p99_ms),
            ("p99.9", |l| l.p999_ms),
            ("max", |l| l.max_ms),
            ("mean", |l| l.mean_ms),
        ];
        for (name, value) in pick {
            let mut cells = vec![format!("{op} {name}")];
            cells.extend(c.runs.iter().map(|r| {
                r.latency[o]
                    .as_ref()
                    .map_or("-".to_string(), |l| format_value(value(l), "ms"))
            }));
            rows.push(cells);
        }
    }
    let latency = Table {
        title: "Client response time per operation type".to_string(),
        header,
        rows,
        footer: vec![
            "From each request's intended start (open loop) or its send (closed loop), as each \
             run's summary.json; -: the run has no such operation."
                .to_string(),
        ],
    };
    let mut out = vec![runs, latency];
    let row_table =
        |title: &str, first: &str, rows: &[super::runs::Row], unit: &str, footer: &str| {
            let mut header = vec![first.to_string()];
            header.extend(c.runs.iter().map(|r| r.label.clone()));
            Table {
                title: title.to_string(),
                header,
                rows: rows
                    .iter()
                    .map(|row| {
                        let mut cells = vec![row.name.clone()];
                        cells.extend(
                            row.values
                                .iter()
                                .map(|v| v.map_or("-".to_string(), |v| format_value(v, unit))),
                        );
                        cells
                    })
                    .collect(),
                footer: vec![footer.to_string()],
            }
        };
    if !c.server.is_empty() {
        out.push(row_table(
            "Cassandra's own latency of the table after each run",
            "tablehistograms (µs)",
            &c.server,
            "",
            "As `nodetool tablehistograms` reports the run's table (else the system_views \
             tables over CQL, rounded to 1000 µs): the replica's own work, from decaying \
             reservoirs that weigh the last minutes most; not the client's view.",
        ));
    }
    if !c.maintenance.is_empty() {
        out.push(row_table(
            "Maintenance operations during each run (--during)",
            "Wall time (s)",
            &c.maintenance,
            "",
            "nodetool's wall time from launch to exit, its own JVM start included; -: the run \
             did not run it.",
        ));
    }
    out
}

/// Reads one figure of a latency summary.
type Pick = fn(&Latency) -> f64;

/// A comparison of runs for a terminal.
pub fn run_text(c: &RunComparison) -> String {
    print_tables(&run_tables(c), &c.notes)
}

/// The comparison for a terminal: every table aligned, then the notes.
pub fn text(c: &Comparison) -> String {
    print_tables(&tables(c), &c.notes)
}

fn print_tables(tables: &[Table], notes: &[String]) -> String {
    let mut out = String::new();
    for table in tables {
        out.push_str(&table.title);
        out.push('\n');
        out.push_str(&align(&table.header, &table.rows));
        for line in &table.footer {
            out.push_str(&format!("  {line}\n"));
        }
        out.push('\n');
    }
    for note in notes {
        out.push_str(&format!("Note: {note}\n"));
    }
    out
}

/// Columns padded to their widest cell: the first left-aligned, the others right-aligned.
fn align(header: &[String], rows: &[Vec<String>]) -> String {
    let mut lines: Vec<&[String]> = vec![header];
    lines.extend(rows.iter().map(Vec::as_slice));
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in lines {
        let mut text = String::new();
        for (c, cell) in line.iter().enumerate() {
            let pad = widths[c].saturating_sub(cell.chars().count());
            if c == 0 {
                text.push_str(cell);
                text.extend(std::iter::repeat_n(' ', pad));
            } else {
                text.push_str("  ");
                text.extend(std::iter::repeat_n(' ', pad));
                text.push_str(cell);
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}
