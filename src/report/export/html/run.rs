//! One run's section: its timeline and spectrum, and beside them, when the run recorded
//! them, its ANN queries' recall (`recall.rs`), its nodes' pauses, the maintenance done during it and Cassandra's own figures;
//! then its tables (`tables.rs`) and, for a run with `--validate`, what it found of the
//! data (`validation.rs`).

use super::page::{table, Page};
use super::prose::run_sentence;
use super::recall::recall_part;
use super::validation::validation_part;
use super::tables::{
    errors_table, settings_table, sla_table, summary_table, validity_part, workers_part,
};
use crate::figures::Timeline;
use crate::format::{self, format_number};
use crate::report::charts;
use crate::results::run_dir::RunData;

/// A run's own section: its timeline, spectrum, summary, SLA, errors and configuration.
/// `alone`: the page holds this run only, and its header says what the run did already.
pub(super) fn run_section(
    page: &mut Page,
    run: &RunData,
    n: usize,
    alone: bool,
) -> anyhow::Result<()> {
    page.section(&format!("run-{}", n + 1), &format!("Run {}", run.label));
    if !alone {
        page.para(&run_sentence(run));
    }
    let figures = Timeline::load(run);
    for chart in charts::timeline(run, &figures, &run.label) {
        page.figure(chart)?;
    }
    recall_part(page, run, &figures)?;
    pause_part(page, run, &figures, &run.label)?;
    maintenance_part(page, run);
    server_tables_part(page, run);
    server_samples_part(page, run, &figures)?;
    for chart in charts::spectrum(&[], std::slice::from_ref(run)) {
        page.figure(chart)?;
    }
    if let Some(summary) = &run.summary {
        page.h3("Summary");
        summary_table(page, summary);
        validity_part(page, summary);
        validation_part(page, summary);
        workers_part(page, summary);
        if let Some(sla) = &summary.sla {
            page.h3(&format!("Service level: {}", sla.spec));
            sla_table(page, summary);
        }
    }
    errors_table(page, std::slice::from_ref(&run), false);
    page.h3("Configuration");
    match &run.config_written {
        Some(config) => settings_table(page, config, &[]),
        None => page.note("config.json is missing."),
    }
    Ok(())
}

/// When the run has pauses.json: the chart of its client latency beside its nodes' pauses,
/// a table of each node's pause figures, and the notes on logs that could not be read.
pub(super) fn pause_part(
    page: &mut Page,
    run: &RunData,
    figures: &Timeline,
    title: &str,
) -> anyhow::Result<()> {
    let Some(pauses) = &run.pauses else {
        return Ok(());
    };
    if let Some(chart) = charts::pauses::pause_timeline(run, figures, title) {
        page.figure(chart)?;
    }
    if !pauses.nodes.is_empty() {
        let header = [
            "Node",
            "Collector",
            "Pauses",
            "Per minute",
            "Stopped ms",
            "Stopped %",
            "p50 ms",
            "p99 ms",
            "p99.9 ms",
            "max ms",
            "To safepoint, max ms",
            "Longest pause",
        ];
        let minutes = pauses.measured_s() / 60.0;
        let ms = |v: Option<f64>| v.map_or("-".to_string(), format_number);
        let rows: Vec<(Vec<String>, &str)> = pauses
            .nodes
            .iter()
            .map(|n| {
                let longest = n.longest.first().map_or("-".to_string(), |p| {
                    format!(
                        "{} ms at {} s: {}",
                        format_number(p.length_ms),
                        format_number(p.offset_s),
                        p.kind
                    )
                });
                (
                    vec![
                        format!("{} ({})", n.node, n.address),
                        n.collector.clone().unwrap_or_else(|| "-".to_string()),
                        format::group_thousands(n.count),
                        if minutes > 0.0 {
                            format_number(n.count as f64 / minutes)
                        } else {
                            "-".to_string()
                        },
                        format_number(n.stopped_ms),
                        format_number(n.stopped_percent),
                        ms(n.p50_ms),
                        ms(n.p99_ms),
                        ms(n.p999_ms),
                        ms((n.count > 0).then_some(n.max_ms)),
                        ms(n.time_to_safepoint_max_ms),
                        longest,
                    ],
                    "",
                )
            })
            .collect();
        let numeric = [
            false, false, true, true, true, true, true, true, true, true, true, false,
        ];
        page.para(&format!(
            "Server pauses of the measured part ({} s), from each node's GC log: every \
             stop-the-world pause, collections and other safepoints alike, its length the time \
             the node's application threads were stopped.",
            format_number(pauses.measured_s())
        ));
        page.body.push_str(&table(&header, &rows, &numeric));
    }
    for note in &pauses.notes {
        page.note(&format!("Server pauses: {note}"));
    }
    Ok(())
}

/// When the run has maintenance.json: a table of its nodetool operations and wall times.
fn maintenance_part(page: &mut Page, run: &RunData) {
    let Some(file) = &run.maintenance else {
        return;
    };
    page.h3("Maintenance during the run");
    page.para(&format!(
        "nodetool operations on keyspace {} while the load went on (--during), one node after \
         another; times in seconds since the start of the run, the time base of the charts \
         above. The load ended at {} s.",
        file.keyspace,
        file.load_end_s.map_or("-".to_string(), format_number)
    ));
    let header = [
        "Operation",
        "Node",
        "Due s",
        "Start s",
        "End s",
        "Wall time s",
        "Status",
        "Output (last line)",
    ];
    let s = |v: Option<f64>| v.map_or("-".to_string(), format_number);
    let rows: Vec<(Vec<String>, &str)> = file
        .operations
        .iter()
        .map(|r| {
            let status = match (r.status, r.exit_code) {
                (crate::maintenance::Status::Ok, _) => "ok".to_string(),
                (status, Some(code)) => format!("{} (exit {code}) ✗", status.describe()),
                (status, None) => format!("{} ✗", status.describe()),
            };
            (
                vec![
                    r.operation.describe(),
                    r.node.clone(),
                    format_number(r.planned_s),
                    s(r.start_s),
                    s(r.end_s),
                    s(r.wall_s),
                    status,
                    r.output_tail.lines().last().unwrap_or("").to_string(),
                ],
                "",
            )
        })
        .collect();
    let numeric = [false, false, true, true, true, true, false, false];
    page.body.push_str(&table(&header, &rows, &numeric));
}

/// When the run has server-tables.json: Cassandra's own histograms of the run's table,
/// before → after, beside the client's response times of the same run, in µs.
fn server_tables_part(page: &mut Page, run: &RunData) {
    use crate::metrics::server_tables::{Figure, NodeTables};
    let Some(file) = &run.server_tables else {
        return;
    };
    page.h3(&format!(
        "Cassandra's own histograms of {}.{}",
        file.keyspace, file.table
    ));
    page.para(
        "What the nodes themselves report for the run's table, read just before the measured \
         run and as it ended (before → after). Latencies are in µs. These are the server's \
         views, not records of this run's requests: its percentiles come from decaying \
         reservoirs that weigh the last minutes most, its counts are cumulative since the node \
         started (so after − before is what the node counted during the run), and the \
         replica's latency leaves out the network and the coordinator. The client's rows are \
         every successful request of the measured part, from the intended start.",
    );
    let header = [
        "Node", "Figure", "Source", "Unit", "Count", "p50", "p75", "p95", "p98", "p99", "max",
    ];
    let value = |v: Option<f64>| v.map_or("-".to_string(), format_number);
    let change = |before: Option<f64>, after: Option<f64>| match (before, after) {
        (Some(b), Some(a)) => format!("{} → {}", format_number(b), format_number(a)),
        (None, a) => value(a),
        (Some(b), None) => format!("{} → -", format_number(b)),
    };
    let mut rows: Vec<(Vec<String>, &str)> = Vec::new();
    if let Some(summary) = &run.summary {
        for op in &summary.ops {
            let l = &op.response_time;
            let us = |ms: f64| Some(ms * 1000.0);
            rows.push((
                vec![
                    "client".to_string(),
                    format!("{} response time", op.op),
                    "headroom".to_string(),
                    "µs".to_string(),
                    format::group_thousands(op.ok),
                    value(us(l.p50_ms)),
                    "-".to_string(),
                    value(us(l.p95_ms)),
                    "-".to_string(),
                    value(us(l.p99_ms)),
                    value(us(l.max_ms)),
                ],
                "",
            ));
        }
    }
    let after_nodes = file.after.as_ref().map_or(&[][..], |s| &s.nodes[..]);
    for after in after_nodes {
        let before: Option<&NodeTables> = file
            .before
            .as_ref()
            .and_then(|s| s.nodes.iter().find(|n| n.address == after.address));
        for figure in &after.figures {
            let earlier: Option<&Figure> = before.and_then(|b| {
                b.figures
                    .iter()
                    .find(|f| f.name == figure.name && f.source == figure.source)
            });
            let count = match (earlier.and_then(|f| f.count), figure.count) {
                (Some(b), Some(a)) => format!(
                    "{} (+{})",
                    format::group_thousands(a),
                    format::group_thousands(a.saturating_sub(b))
                ),
                (None, Some(a)) => format::group_thousands(a),
                _ => "-".to_string(),
            };
            let unit = figure.unit.map_or("-".to_string(), |u| match u {
                crate::metrics::server_tables::Unit::Micros => "µs".to_string(),
                other => format!("{other:?}").to_lowercase(),
            });
            let mut cells = vec![
                format!("{} ({})", after.node, after.address),
                figure.name.replace('_', " "),
                figure.source.clone(),
                unit,
                count,
            ];
            let now = figure.percentiles().into_iter().chain([figure.max]);
            let was = earlier.map_or([None; 6], |f| {
                let p = f.percentiles();
                [p[0], p[1], p[2], p[3], p[4], f.max]
            });
            cells.extend(now.zip(was).map(|(a, b)| change(b, a)));
            rows.push((cells, ""));
        }
    }
    let numeric = [
        false, false, false, false, true, true, true, true, true, true, true,
    ];
    page.body.push_str(&table(&header, &rows, &numeric));
    for note in &file.notes {
        page.note(&format!("Cassandra's histograms: {note}"));
    }
}

/// When the run read Cassandra's figures during the load (`--server-stats-every`): its
/// chart beside the client's p99 and, per node, the range of the readings.
fn server_samples_part(page: &mut Page, run: &RunData, figures: &Timeline) -> anyhow::Result<()> {
    use crate::metrics::server_samples;
    if run.server_samples.is_empty() {
        return Ok(());
    }
    page.h3("Cassandra's own latency during the run");
    if let Some(chart) = charts::server_latency::server_latency(run, figures, &run.label) {
        page.figure(chart)?;
    }
    let rows: Vec<(Vec<String>, &str)> =
        server_samples::summarize(&run.server_samples, run.warmup_s)
            .into_iter()
            .map(|r| {
                (
                    vec![
                        format!("{} ({})", r.node, r.address),
                        r.what.clone(),
                        r.readings.to_string(),
                        format_number(r.p99_us[0] / 1000.0),
                        format_number(r.p99_us[1] / 1000.0),
                        format_number(r.p99_us[2] / 1000.0),
                        r.per_second.map_or("-".to_string(), format_number),
                    ],
                    "",
                )
            })
            .collect();
    if !rows.is_empty() {
        page.para(&format!(
            "The readings of the measured part, per node: the smallest, median and largest \
             99th percentile of the replica's latency in ms (the readings step by 1 ms, so 0 \
             means under half a millisecond), and the requests the node counted \
             per second between its first and last reading ({} readings in all, in {}).",
            run.server_samples.len(),
            crate::catalogue::SERVER_SAMPLES_JSONL
        ));
        let header = [
            "Node",
            "Requests",
            "Readings",
            "99P min, ms",
            "99P median, ms",
            "99P max, ms",
            "Counted per second",
        ];
        page.body.push_str(&table(
            &header,
            &rows,
            &[false, false, true, true, true, true, true],
        ));
    }
    for sample in run
        .server_samples
        .iter()
        .filter(|s| !s.notes.is_empty())
        .take(3)
    {
        page.note(&format!(
            "Reading at {} s: {}",
            format_number(sample.at_s),
            sample.notes.join("; ")
        ));
    }
    Ok(())
}
