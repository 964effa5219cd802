//! What `headroom run` (and each trial of a search, each step of a sweep) shows in the
//! terminal: a line per interval above a progress bar, the failing SLA windows as they come,
//! and the summary. The library run tells; this prints.
//!
//! **Why one file of about 610 lines.** The live lines and the summary print the same figures
//! in the same words and widths; kept together they stay alike.

use std::path::Path;
use std::time::Duration;

use crate::engine::{self, Interval, LoadMode, StopReason};
use crate::figures::Figures;
use crate::format::format_big;
use crate::metrics::server_pauses;
use crate::metrics::server_tables;
use crate::results::summary::{Latency, PopulateSummary, RunSummary, SlaSummary};
use crate::run::{Control, Finished, Measuring, RunObserver};
use crate::sla::{Judged, Judgement, Validity};
use crate::workload::AnyWorkload;

use super::recall::{self, RecallOps};

/// Prints a run's events as they come.
#[derive(Default)]
pub struct Terminal {
    op_names: Vec<String>,
    /// Each op type's share; those without one are left out of the live header.
    op_weights: Vec<f64>,
    has_warmup: bool,
    /// The op types judged for recall and the k of each one's recall@k.
    recall_ops: Vec<(String, usize)>,
    header_printed: bool,
    /// A progress bar under the live lines, when standard output is a terminal.
    progress_bar: Option<indicatif::ProgressBar>,
}

impl Terminal {
    /// A terminal for a run.
    pub fn new() -> Terminal {
        Terminal::default()
    }

    /// A line of live output, above the progress bar when there is one.
    fn say(&self, line: String) {
        match &self.progress_bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }

    fn live_line(&mut self, interval: &Interval) {
        if !self.header_printed {
            self.header_printed = true;
            self.say(self.header_line());
        }
        self.say(self.interval_line(interval));
        if let Some(bar) = &self.progress_bar {
            let end_s = (interval.start_ns + interval.length_ns) as f64 / 1e9;
            bar.set_position(end_s as u64);
        }
    }

    /// The names of the live line's columns.
    fn header_line(&self) -> String {
        let ops: Vec<String> = self
            .op_names
            .iter()
            .zip(&self.op_weights)
            .filter(|(_, w)| **w > 0.0)
            .map(|(n, _)| {
                format!(
                    "{n}: rate p50 p99 p99.9 max{}",
                    recall::header_column(&self.recall_ops, n)
                )
            })
            .collect();
        format!(
            "{:>8} {:>9} {:>7} {:>8} | {}   (ms{})",
            "time",
            "ops/s",
            "errors",
            "backlog",
            ops.join(" | "),
            recall::header_note(&self.recall_ops)
        )
    }

    /// An interval's line: its rate, errors and backlog, and each op's rate, percentiles
    /// (and mean recall), all read from the interval's figures.
    fn interval_line(&self, interval: &Interval) -> String {
        let f = Figures::of_interval(interval, &self.op_names);
        let mut parts: Vec<String> = f
            .ops
            .iter()
            .map(|o| {
                // Every request of the interval failed: no latency, shown as 0.
                let [p50, p99, p999, max] = o.response.map_or([0.0; 4], |q| {
                    let ms = q.ms();
                    [ms.p50_ms, ms.p99_ms, ms.p999_ms, ms.max_ms]
                });
                format!(
                    "{}: {:.0} {p50:.2} {p99:.2} {p999:.2} {max:.2}{}",
                    o.op,
                    f.per_s(o.requests),
                    recall::interval_mark(o.recall.as_ref())
                )
            })
            .collect();
        let phase = if f.warmup && self.has_warmup {
            " warmup"
        } else {
            ""
        };
        if parts.is_empty() {
            parts.push("no answers in this interval".to_string());
        }
        format!(
            "{:>7.1}s {:>9.0} {:>7} {:>8} | {}{phase}",
            f.end_s,
            f.requests_per_s(),
            f.errors,
            interval.backlog,
            parts.join(" | ")
        )
    }
}

impl RunObserver for Terminal {
    fn note(&mut self, line: &str) {
        println!("{line}");
    }

    fn problem(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn prepared(&mut self, out: &Path, native: bool) {
        println!("Run directory: {}", out.display());
        println!(
            "Requests sent by: {}",
            if native {
                "headroom's own connections (--sender native)"
            } else {
                "the scylla driver (--sender driver)"
            }
        );
    }

    fn populating(&mut self, rows: u64, in_flight: usize) {
        println!("Populating {rows} rows ({in_flight} in flight)...");
    }

    fn populate_interval(&mut self, at_s: f64, rows: u64, rate_per_s: f64) {
        println!("  populate {at_s:>6.0}s {rows:>10} rows {rate_per_s:>9.0}/s");
    }

    fn populated(&mut self, summary: &PopulateSummary) {
        println!(
            "Populated {} rows in {:.1} s ({:.0} rows/s, {} errors).",
            summary.written, summary.seconds, summary.rate_per_s, summary.errors
        );
        if let Some(w) = summary.writes.as_ref().filter(|w| w.ok > 0) {
            let r = &w.response_time;
            println!(
                "  {} while populating: p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms \
                 (populate.hgrm)",
                w.op, r.p50_ms, r.p99_ms, r.p999_ms, r.max_ms
            );
        }
    }

    fn measuring(&mut self, start: &Measuring) {
        let settings = start.settings;
        let worker = match &settings.worker {
            Some(w) => format!(
                " as worker {} of {} (requests {}, {}, {}, ... of the schedule)",
                w.index,
                w.count,
                w.index,
                w.index + w.count,
                w.index + 2 * w.count
            ),
            None => String::new(),
        };
        println!(
            "Running {} ({}) against {}{worker}; latencies are {}.",
            settings.workload.name,
            describe_mode(&settings.mode),
            settings.hosts.join(", "),
            settings.mode.latency_kind()
        );
        self.op_names = start.op_names.to_vec();
        self.op_weights = start.op_weights.to_vec();
        self.has_warmup = settings.warmup_s > 0.0;
        self.recall_ops = AnyWorkload::recall_ops_of(&settings.workload);
        self.header_printed = false;
        self.progress_bar = progress_bar(start.planned);
    }

    fn interval(&mut self, interval: &Interval) -> Control {
        self.live_line(interval);
        Control::Go
    }

    fn window(&mut self, judged: &Judged) {
        if judged.verdict.pass {
            return;
        }
        let window = &judged.window;
        let of = judged.verdict.window_ms.map_or(String::new(), |ms| {
            format!(
                " of {}",
                humantime::format_duration(Duration::from_millis(ms))
            )
        });
        self.say(format!(
            "  SLA window {}{of} ({:.0}-{:.0} s after warmup) FAILED: {}{}",
            window.index + 1,
            window.start_ns as f64 / 1e9,
            (window.start_ns + window.length_ns) as f64 / 1e9,
            judged.verdict.failures(),
            if judged.by_client {
                " — the client's own wait before sending decided it"
            } else {
                ""
            }
        ));
    }

    fn finished(&mut self, run: &Finished) {
        if let Some(bar) = self.progress_bar.take() {
            bar.finish_and_clear();
        }
        print_summary(run.summary, &self.recall_ops);
        if let Some(pauses) = run.pauses {
            println!(
                "  server pauses in the measured part ({}):",
                crate::catalogue::PAUSES_JSON
            );
            for line in server_pauses::describe(pauses) {
                println!("  {line}");
            }
        }
        if let Some(maintenance) = run.maintenance {
            println!(
                "  maintenance during the run ({}):",
                crate::catalogue::MAINTENANCE_JSON
            );
            for line in crate::maintenance::runner::describe(maintenance) {
                println!("    {line}");
            }
        }
        if let Some(validation) = &run.summary.validation {
            println!("  validation ({}, `validation`):", crate::catalogue::SUMMARY_JSON);
            for line in super::validation::describe(validation) {
                println!("    {line}");
            }
        }
        print_server_tables(run.server_tables);
        if run.server_tables.samples_every_s.is_some() {
            print_server_samples(run.server_tables, run.out, run.warmup_s);
        }
        println!("\nFiles: {}", run.out.display());
        if run.summary.stop == StopReason::AllRequestsFailing {
            eprintln!(
                "Error: every request failed for {} s; the run stopped. See the error examples above.",
                engine::ALL_FAILING_LIMIT.as_secs()
            );
        }
    }
}

/// A bar counting the run's seconds, when standard output is a terminal and the run has a
/// planned length; plain lines otherwise (pipes, files, CI).
fn progress_bar(planned: Option<Duration>) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    let planned = planned?;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(planned.as_secs().max(1));
    let style = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} s  {msg}")
        .expect("a valid template");
    bar.set_style(style);
    Some(bar)
}

/// Cassandra's own view of the run's table, after the client's summary.
fn print_server_tables(file: &server_tables::ServerTablesFile) {
    println!(
        "  Cassandra's own histograms of {}.{} ({}; decaying server-side views):",
        file.keyspace,
        file.table,
        crate::catalogue::SERVER_TABLES_JSON
    );
    for line in server_tables::describe(file) {
        println!("    {line}");
    }
}

/// What the readings during the measured part showed (`--server-stats-every`).
fn print_server_samples(file: &server_tables::ServerTablesFile, out: &Path, warmup_s: f64) {
    use crate::metrics::server_samples;
    let mut notes = Vec::new();
    let samples = server_samples::read_samples(out, &mut notes);
    println!(
        "  Cassandra's own figures every {} s during the measured part ({}, {} readings in all):",
        file.samples_every_s.unwrap_or_default(),
        crate::catalogue::SERVER_SAMPLES_JSONL,
        file.samples
    );
    let lines = server_samples::describe(&samples, warmup_s);
    if lines.is_empty() {
        println!("    none of the table's requests counted in the readings");
    }
    for line in lines.iter().chain(&notes) {
        println!("    {line}");
    }
}

fn describe_mode(mode: &LoadMode) -> String {
    match mode {
        LoadMode::Open {
            rate_per_s,
            arrivals,
            max_in_flight,
        } => {
            format!(
                "open loop at {} requests/s, {arrivals:?} arrivals, at most {max_in_flight} in flight",
                format_big(*rate_per_s)
            )
        }
        LoadMode::Closed { concurrency } => format!("closed loop, {concurrency} in flight"),
    }
}

/// The summary of a run (or a merged one) as the run prints it at its end; `recall_ops`
/// gives the k of each op type judged for recall.
pub(crate) fn print_summary(s: &RunSummary, recall_ops: &RecallOps) {
    println!("\nSummary ({}):", s.latency_kind);
    let failed = if s.failed_rate_per_s > 0.0 {
        format!(" (successful answers; {:.0}/s failed)", s.failed_rate_per_s)
    } else {
        String::new()
    };
    match s.attempted_rate_per_s {
        Some(rate) => {
            let note = if s.achieved_rate_per_s < rate * 0.99 {
                "  ← the target was NOT reached"
            } else {
                ""
            };
            println!(
                "  rate: attempted {}/s, achieved {:.0}/s{failed} over {:.1} s; largest client backlog {}{note}",
                format_big(rate),
                s.achieved_rate_per_s,
                s.measured_s,
                format_big(s.max_backlog as f64)
            );
            if s.unsent_requests > 0.0 {
                println!(
                    "  {} requests of the schedule were never sent (the client was still behind it {} s after its end)",
                    format_big(s.unsent_requests),
                    engine::SEND_GRACE.as_secs()
                );
            }
        }
        None => println!(
            "  rate: {:.0}/s{failed} over {:.1} s",
            s.achieved_rate_per_s, s.measured_s
        ),
    }
    if s.stop != StopReason::Completed {
        println!("  stopped early: {:?}", s.stop);
    }
    // The op column is as wide as the longest name (YCSB's READ-MODIFY-WRITE).
    let width = s.ops.iter().map(|o| o.op.len()).max().unwrap_or(0).max(8);
    println!(
        "  {:<width$} {:>10} {:>9}   {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}   (ms; service time in brackets)",
        "op", "requests", "rate/s", "mean", "p50", "p95", "p99", "p99.9", "p99.99", "max"
    );
    for op in &s.ops {
        let (r, v) = (&op.response_time, &op.service_time);
        if op.ok == 0 {
            println!(
                "  {:<width$} {:>10} {:>9.0}   no request was answered: every one failed",
                op.op, op.requests, op.rate_per_s
            );
        } else {
            print_latency_lines(&op.op, op.requests, op.rate_per_s, r, v, width);
        }
        let w = &op.wait_time;
        println!(
            "  {:<width$} wait in client before the send: p50 {:.3}, p99 {:.3}, p99.9 {:.3}, max {:.3}",
            "", w.p50_ms, w.p99_ms, w.p999_ms, w.max_ms
        );
        for (class, n) in &op.errors {
            let example = op
                .error_examples
                .get(class)
                .map(String::as_str)
                .unwrap_or("");
            println!("  {:<width$} {n} {class} errors, e.g. {example}", "");
        }
        if let Some(r) = &op.recall {
            let k = recall::k_of(recall_ops, &op.op);
            println!("  {:<width$} {}", "", recall::summary_line(r, k));
        }
    }
    if let Some(sla) = &s.sla {
        print_sla(sla, s.is_valid());
    }
    if let Some(v) = &s.validity {
        print_validity(v);
    }
    print_workers(s);
    let c = &s.client;
    println!(
        "  client: {:.2} s CPU ({:.2} µs per request), peak memory {} MiB, hiccups max {:.2} ms (p99.9 {:.2} ms)",
        c.cpu_s,
        c.cpu_us_per_request,
        c.peak_rss_bytes >> 20,
        c.hiccup_max_ms,
        c.hiccup_p999_ms
    );
}

/// A merged run's workers, one line each, so that a slow one shows.
fn print_workers(s: &RunSummary) {
    if s.workers.is_empty() {
        return;
    }
    println!(
        "  {} workers:  {:>6} {:>12} {:>12} {:>14} {:>14} {:>10}",
        s.workers.len(),
        "worker",
        "attempted/s",
        "achieved/s",
        "send lag p99",
        "send lag max",
        "µs/request"
    );
    for w in &s.workers {
        let mark = match (w.valid, w.stop) {
            (_, stop) if stop != StopReason::Completed => format!("  stopped: {stop:?}"),
            (false, _) => "  ← could not keep its schedule".to_string(),
            (true, _) => String::new(),
        };
        let attempted = if w.attempted_rate_per_s > 0.0 {
            format!("{:.0}", w.attempted_rate_per_s)
        } else {
            "—".to_string()
        };
        println!(
            "              {:>6} {:>12} {:>12.0} {:>11.2} ms {:>11.2} ms {:>10.2}{mark}",
            w.index,
            attempted,
            w.achieved_rate_per_s,
            w.send_lag_p99_ms,
            w.send_lag_max_ms,
            w.cpu_us_per_request
        );
    }
}

/// The measurement's validity: one line when valid, the reasons and what to do when not.
fn print_validity(v: &Validity) {
    let f = &v.figures;
    if v.is_valid() && f.limit_waits > 0 {
        println!(
            "  measurement: valid — the server set the pace: {} requests found every in-flight \
             slot taken (--max-in-flight) and waited for the server to answer, so their wait \
             before the send is the server's",
            f.limit_waits
        );
        return;
    }
    if v.is_valid() {
        println!(
            "  measurement: valid — the client kept its schedule (wait before send p99 {:.2} ms)",
            f.wait_p99_ms
        );
        return;
    }
    println!(
        "  measurement: INVALID: client-bound — the client, not the server, limited this run:"
    );
    for reason in &v.reasons {
        println!("    - {reason}");
    }
    if let Some(advice) = &v.advice {
        println!("    what to do: {advice}");
    }
}

/// An op's line of response-time percentiles and its line of service-time ones.
fn print_latency_lines(op: &str, requests: u64, rate: f64, r: &Latency, v: &Latency, width: usize) {
    println!(
        "  {op:<width$} {requests:>10} {rate:>9.0}   {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
        r.mean_ms, r.p50_ms, r.p95_ms, r.p99_ms, r.p999_ms, r.p9999_ms, r.max_ms
    );
    println!(
        "  {:<width$} {:>10} {:>9}  ({:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3})",
        "", "", "", v.mean_ms, v.p50_ms, v.p95_ms, v.p99_ms, v.p999_ms, v.p9999_ms, v.max_ms
    );
}

/// The SLA verdict: overall, the worst window of each term, and the failing windows. A run
/// that is not `valid` has no verdict; its windows are shown as judged.
fn print_sla(sla: &SlaSummary, valid: bool) {
    let v = &sla.verdict;
    let verdict = if !valid {
        format!(
            "NO VERDICT (the run was client-bound; as judged, {} failed)",
            v.failing_in_words()
        )
    } else if let Judgement::NoVerdict(why) = v.judgement() {
        format!("NO VERDICT ({why})")
    } else if v.pass {
        "PASS".to_string()
    } else if v.failing_by_failures > 0 {
        format!(
            "FAIL in {} ({} of them on failed requests alone: a failed request counts as \
             slower than any threshold)",
            v.failing_in_words(),
            v.failing_by_failures
        )
    } else {
        format!("FAIL in {}", v.failing_in_words())
    };
    println!("  SLA {}: {verdict}", sla.spec);
    for worst in &v.worst {
        let windows = v.windows_of(worst);
        if worst.windows == Some(0) {
            println!(
                "    {:<16} no complete window of its length in the run: no verdict",
                worst.term
            );
            continue;
        }
        if worst.requests == Some(0) && windows > 0 {
            println!(
                "    {:<16} no request in any of the {windows} windows: no verdict",
                worst.term
            );
            continue;
        }
        let Some(value) = worst.describe() else {
            continue;
        };
        let on_max = if worst.judged_on_max_windows > 0 {
            format!(
                " ({} windows had too few requests for the percentile and were judged on their max)",
                worst.judged_on_max_windows
            )
        } else {
            String::new()
        };
        let of = worst.window_ms.map_or(String::new(), |ms| {
            format!(
                " of {}",
                humantime::format_duration(Duration::from_millis(ms))
            )
        });
        println!(
            "    {:<16} worst window {} (window {}{of}), failed in {} of {windows} windows{on_max}",
            worst.term,
            value,
            worst.window_index.map_or(0, |i| i + 1),
            worst.failing_windows
        );
    }
    const LISTED: usize = 20;
    for window in v.failing.iter().take(LISTED) {
        let of = window.window_ms.map_or(String::new(), |ms| {
            format!(
                " of {}",
                humantime::format_duration(Duration::from_millis(ms))
            )
        });
        println!(
            "    failing window {}{of} ({:.0}-{:.0} s after warmup): {}",
            window.index + 1,
            window.start_ns as f64 / 1e9,
            (window.start_ns + window.length_ns) as f64 / 1e9,
            window.failures()
        );
    }
    if v.failing.len() > LISTED {
        println!(
            "    ... and {} more failing windows (summary.json lists them all)",
            v.failing.len() - LISTED
        );
    }
    if let Some(partial) = v.partial_window_s {
        println!(
            "    the last {partial:.1} s were a partial window and were not judged (an SLA holds \
             for whole windows)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::OpHistograms;

    fn terminal(recall_ops: Vec<(String, usize)>) -> Terminal {
        Terminal {
            op_names: vec!["write".to_string(), "ann".to_string()],
            op_weights: vec![0.1, 0.9],
            recall_ops,
            ..Terminal::default()
        }
    }

    /// A second-long interval: a write answered in 2 ms, an ANN query in 4 ms, and the
    /// query's recall `recall` when given.
    fn interval(recall: Option<f64>) -> Interval {
        let mut write = OpHistograms::default();
        write.record_ok(2_000_000, 1_000_000);
        let mut ann = OpHistograms::default();
        ann.record_ok(4_000_000, 3_000_000);
        if let Some(r) = recall {
            ann.record_recall(r);
        }
        Interval {
            index: 0,
            start_ns: 0,
            length_ns: 1_000_000_000,
            ops: vec![
                [OpHistograms::default(), write],
                [OpHistograms::default(), ann],
            ],
            hiccups: None,
            backlog: 0,
            in_flight: 0,
        }
    }

    #[test]
    fn recall_live_line_ends_an_ops_part_with_its_mean_recall() {
        let t = terminal(vec![("ann".to_string(), 10)]);
        let header = t.header_line();
        assert!(header.contains("write: rate p50 p99 p99.9 max | ann: rate p50 p99 p99.9 max r"));
        assert!(header.ends_with(
            "(ms; r: mean recall@10 of the interval's answers, a failed request counting 0)"
        ));
        let line = t.interval_line(&interval(Some(0.8)));
        assert!(
            line.ends_with("| write: 1 2.00 2.00 2.00 2.00 | ann: 1 4.00 4.00 4.00 4.00 r0.800"),
            "{line}"
        );
    }

    #[test]
    fn recall_live_line_without_recall_is_as_before() {
        let t = terminal(Vec::new());
        let header = t.header_line();
        assert!(
            header
                .ends_with("| write: rate p50 p99 p99.9 max | ann: rate p50 p99 p99.9 max   (ms)"),
            "{header}"
        );
        let line = t.interval_line(&interval(None));
        assert!(
            line.ends_with("| write: 1 2.00 2.00 2.00 2.00 | ann: 1 4.00 4.00 4.00 4.00"),
            "{line}"
        );
        assert!(!line.contains(" r0"));
    }
}
