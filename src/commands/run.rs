//! `headroom run`: connect, set up the workload, optionally populate, drive the load, and
//! write the run directory as the run goes.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::cli::RunArgs;
use crate::client::{self, ClientConfig};
use crate::engine::clock::RealClock;
use crate::engine::schedule::{End, Progress};
use crate::engine::{self, EngineConfig, Interval, IntervalSink, LoadMode, StopReason};
use crate::metrics::{self, Phase};
use crate::report::export::hgrm;
use crate::report::export::hlog::HlogWriter;
use crate::report::export::intervals_csv::IntervalsCsv;
use crate::report::summary::{ClientCost, Latency, OpSummary, PopulateSummary, RunSummary};
use crate::workload::builtin::{Builtin, WorkloadError, BUILTIN_NAMES};
use crate::workload::{compaction_map, replication_map, Workload, WorkloadConfig};

/// Concurrency of the populate phase: enough to keep a node busy without a rate.
const POPULATE_CONCURRENCY: usize = 128;

/// config.json: everything that decides what a run does, resolved, so it can be repeated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    /// headroom's version.
    pub headroom_version: String,
    /// Contact points.
    pub hosts: Vec<String>,
    /// The workload and its settings.
    pub workload: WorkloadConfig,
    /// Open or closed loop.
    pub mode: LoadMode,
    /// Warmup, seconds.
    pub warmup_s: f64,
    /// Measured duration, seconds, when bounded by time.
    pub duration_s: Option<f64>,
    /// Measured requests, when bounded by count.
    pub ops: Option<u64>,
    /// Interval length, seconds.
    pub interval_s: f64,
    /// Client threads.
    pub threads: usize,
    /// Request timeout, seconds.
    pub request_timeout_s: f64,
    /// Connections per node.
    pub connections: usize,
    /// Requests due within this many seconds of each other are sent together.
    pub send_resolution_s: f64,
    /// The command line, as typed.
    pub command_line: Vec<String>,
}

impl RunConfig {
    /// Resolves and checks the flags; every error here is the user's input.
    pub fn from_args(args: &RunArgs) -> Result<RunConfig, WorkloadError> {
        if !BUILTIN_NAMES.contains(&args.workload.as_str()) {
            return Err(WorkloadError::Unknown(args.workload.clone()));
        }
        let workload = WorkloadConfig {
            name: args.workload.clone(),
            keyspace: args.keyspace.clone(),
            partitions: args.partitions,
            partition_generator: args.partition_generator,
            read_ratio: args.read_ratio,
            delete_ratio: args.delete_ratio,
            populate: args.populate,
            replication: replication_map(&args.replication).map_err(WorkloadError::Invalid)?,
            compaction: args
                .compaction
                .as_deref()
                .map(compaction_map)
                .transpose()
                .map_err(WorkloadError::Invalid)?,
            ttl_s: args.ttl.map(|d| d.as_secs() as u32),
            consistency: args.consistency.to_ascii_uppercase(),
            drop: args.drop,
            seed: args.seed,
        };
        workload.validate().map_err(WorkloadError::Invalid)?;
        crate::workload::builtin::parse_consistency(&workload.consistency)?;
        let mode = match (args.rate, args.concurrency) {
            (Some(rate), _) => {
                if args.max_in_flight == 0 {
                    return Err(WorkloadError::Invalid(
                        "--max-in-flight must be at least 1".into(),
                    ));
                }
                LoadMode::Open {
                    rate_per_s: rate,
                    arrivals: args.arrivals,
                    max_in_flight: args.max_in_flight,
                }
            }
            (None, Some(0)) => {
                return Err(WorkloadError::Invalid(
                    "--concurrency must be at least 1".into(),
                ))
            }
            (None, c) => LoadMode::Closed {
                concurrency: c.unwrap_or(64),
            },
        };
        if args.interval < Duration::from_millis(10) {
            return Err(WorkloadError::Invalid(
                "--interval must be at least 10ms".into(),
            ));
        }
        let threads = args
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        if threads == 0 {
            return Err(WorkloadError::Invalid(
                "--threads must be at least 1".into(),
            ));
        }
        let duration = match (args.duration, args.ops) {
            (Some(d), _) => Some(d),
            (None, Some(_)) => None,
            (None, None) => Some(Duration::from_secs(60)),
        };
        Ok(RunConfig {
            headroom_version: env!("CARGO_PKG_VERSION").to_string(),
            hosts: client::parse_hosts(&args.hosts)
                .map_err(|e| WorkloadError::Invalid(e.to_string()))?,
            workload,
            mode,
            warmup_s: args.warmup.as_secs_f64(),
            duration_s: duration.map(|d| d.as_secs_f64()),
            ops: args.ops,
            interval_s: args.interval.as_secs_f64(),
            threads,
            request_timeout_s: args.timeout.as_secs_f64(),
            connections: args.connections,
            send_resolution_s: args.send_resolution.as_secs_f64(),
            command_line: std::env::args().collect(),
        })
    }

    fn end(&self) -> End {
        End {
            warmup_ns: (self.warmup_s * 1e9) as u64,
            duration_ns: self.duration_s.map(|d| (d * 1e9) as u64),
            ops: self.ops,
        }
    }
}

/// Runs `headroom run`.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let config = RunConfig::from_args(&args)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_run_dir(&config.workload.name));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.threads)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let credentials = args.username.clone().zip(args.password.clone());
    let result = runtime.block_on(run_async(&config, &out, credentials));
    // The dispatcher thread may still sleep towards a slot that will never be sent.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

/// runs/<UTC time>-<workload>
fn default_run_dir(workload: &str) -> PathBuf {
    let stamp = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let stamp: String = stamp
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect::<String>()
        .replace('T', "-");
    PathBuf::from("runs").join(format!("{stamp}-{workload}"))
}

/// Leaves a note of why a run could not start, and nothing else, in its directory.
fn note_failure(out: &Path, error: &dyn std::fmt::Display) {
    if fs::create_dir_all(out).is_ok() {
        let _ = fs::write(
            out.join("error.txt"),
            format!("The run did not start: {error}\n"),
        );
    }
}

async fn run_async(
    config: &RunConfig,
    out: &Path,
    credentials: Option<(String, String)>,
) -> anyhow::Result<ExitCode> {
    let client_config = ClientConfig {
        hosts: config.hosts.clone(),
        request_timeout: Duration::from_secs_f64(config.request_timeout_s),
        connections: config.connections,
        credentials,
    };
    let session = match client::connect(&client_config).await {
        Ok(s) => s,
        Err(e) => {
            note_failure(out, &e);
            return Err(e.into());
        }
    };
    let workload = match Builtin::prepare(session, &config.workload).await {
        Ok(w) => Arc::new(w),
        Err(e) => {
            note_failure(out, &e);
            return Err(e.into());
        }
    };
    fs::create_dir_all(out)
        .with_context(|| format!("creating the run directory {}", out.display()))?;
    write_json(&out.join("config.json"), config)?;
    println!("Run directory: {}", out.display());

    let progress = Arc::new(Progress::default());
    spawn_signal_handler(progress.clone());

    let populate = if config.workload.populate > 0 {
        Some(populate(&workload, config, progress.clone()).await)
    } else {
        None
    };
    if progress.stop.load(Ordering::Relaxed) {
        println!("Stopped during populate.");
        return Ok(ExitCode::from(130));
    }

    let engine_config = EngineConfig {
        mode: config.mode,
        end: config.end(),
        interval: Duration::from_secs_f64(config.interval_s),
        workers: config.threads,
        first_seq: config.workload.populate,
        only_op: None,
        seed: config.workload.seed,
        hiccups: true,
        send_resolution: Duration::from_secs_f64(config.send_resolution_s),
    };
    println!(
        "Running {} ({}) against {}; latencies are {}.",
        config.workload.name,
        describe_mode(&config.mode),
        config.hosts.join(", "),
        config.mode.latency_kind()
    );
    let started_at = SystemTime::now();
    let clock = RealClock::start_now();
    let op_names: Vec<String> = workload.op_names().iter().map(|s| s.to_string()).collect();
    let planned = config
        .duration_s
        .map(|d| Duration::from_secs_f64(d + config.warmup_s));
    let mut sink = RunFiles::create(out, started_at, &op_names, config.warmup_s > 0.0, planned)?;
    let cpu_before = metrics::process::cpu_time();
    let outcome = engine::run(workload.clone(), clock, &engine_config, progress, &mut sink).await;
    let cpu = metrics::process::cpu_time().saturating_sub(cpu_before);
    sink.finish()?;

    let summary = summarize(config, &op_names, &outcome, started_at, cpu, populate);
    for (i, name) in op_names.iter().enumerate() {
        let stats = &outcome.totals[i][Phase::Measure.index()];
        if stats.ok > 0 {
            write_hgrm(&out.join(format!("{name}.hgrm")), &stats.response_ns)?;
            write_hgrm(&out.join(format!("{name}.service.hgrm")), &stats.service_ns)?;
        }
    }
    write_json(&out.join("summary.json"), &summary)?;
    print_summary(&summary);
    println!("\nFiles: {}", out.display());
    Ok(match outcome.stop {
        StopReason::Completed => ExitCode::SUCCESS,
        StopReason::Interrupted => ExitCode::from(130),
        StopReason::AllRequestsFailing => {
            eprintln!(
                "Error: every request failed for {} s; the run stopped. See the error examples above.",
                engine::ALL_FAILING_LIMIT.as_secs()
            );
            ExitCode::from(1)
        }
    })
}

fn describe_mode(mode: &LoadMode) -> String {
    match mode {
        LoadMode::Open {
            rate_per_s,
            arrivals,
            max_in_flight,
        } => {
            format!("open loop at {rate_per_s} requests/s, {arrivals:?} arrivals, at most {max_in_flight} in flight")
        }
        LoadMode::Closed { concurrency } => format!("closed loop, {concurrency} in flight"),
    }
}

/// Ctrl-C and SIGTERM end the run: no new requests, the ones in flight are awaited.
fn spawn_signal_handler(progress: Arc<Progress>) {
    tokio::spawn(async move {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return,
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        eprintln!("\nStopping: no new requests; waiting for those in flight...");
        progress.stop.store(true, Ordering::Relaxed);
    });
}

async fn populate(
    workload: &Arc<Builtin>,
    config: &RunConfig,
    progress: Arc<Progress>,
) -> PopulateSummary {
    let rows = config.workload.populate;
    println!("Populating {rows} rows ({POPULATE_CONCURRENCY} in flight)...");
    let engine_config = EngineConfig {
        mode: LoadMode::Closed {
            concurrency: POPULATE_CONCURRENCY,
        },
        end: End {
            warmup_ns: 0,
            duration_ns: None,
            ops: Some(rows),
        },
        interval: Duration::from_secs(5),
        workers: config.threads,
        first_seq: 0,
        only_op: Some(workload.populate_op()),
        seed: config.workload.seed,
        hiccups: false,
        send_resolution: Duration::ZERO,
    };
    struct Quiet(u64);
    impl IntervalSink for Quiet {
        fn interval(&mut self, interval: &Interval) {
            let done: u64 = interval.ops.iter().flatten().map(|s| s.total()).sum();
            self.0 += done;
            println!(
                "  populate {:>6.0}s {:>10} rows {:>9.0}/s",
                (interval.start_ns + interval.length_ns) as f64 / 1e9,
                self.0,
                done as f64 / (interval.length_ns as f64 / 1e9)
            );
        }
    }
    let started = Instant::now();
    let outcome = engine::run(
        workload.clone(),
        RealClock::start_now(),
        &engine_config,
        progress,
        &mut Quiet(0),
    )
    .await;
    let seconds = started.elapsed().as_secs_f64();
    let stats = &outcome.totals[workload.populate_op()][Phase::Measure.index()];
    let summary = PopulateSummary {
        rows,
        written: stats.ok,
        errors: stats.error_count(),
        seconds,
        rate_per_s: stats.ok as f64 / seconds.max(1e-9),
    };
    println!(
        "Populated {} rows in {:.1} s ({:.0} rows/s, {} errors).",
        summary.written, summary.seconds, summary.rate_per_s, summary.errors
    );
    summary
}

fn summarize(
    config: &RunConfig,
    op_names: &[String],
    outcome: &engine::Outcome,
    started_at: SystemTime,
    cpu: Duration,
    populate: Option<PopulateSummary>,
) -> RunSummary {
    let warmup_s = config.warmup_s;
    let measured_s = (outcome.elapsed_ns as f64 / 1e9 - warmup_s).max(1e-9);
    let phase = |p: Phase, seconds: f64| -> Vec<OpSummary> {
        op_names
            .iter()
            .enumerate()
            .map(|(i, name)| OpSummary::of(name, &outcome.totals[i][p.index()], seconds))
            .filter(|s| s.requests > 0)
            .collect()
    };
    let ops = phase(Phase::Measure, measured_s);
    let requests: u64 = outcome.totals.iter().flatten().map(|s| s.total()).sum();
    let measured_requests: u64 = ops.iter().map(|o| o.requests).sum();
    let hiccups = Latency::of(&outcome.hiccups);
    RunSummary {
        headroom_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: config.workload.name.clone(),
        mode: config.mode,
        latency_kind: config.mode.latency_kind().to_string(),
        stop: outcome.stop,
        started_at: humantime::format_rfc3339_millis(started_at).to_string(),
        warmup_s,
        measured_s,
        attempted_rate_per_s: match config.mode {
            LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
            LoadMode::Closed { .. } => None,
        },
        achieved_rate_per_s: measured_requests as f64 / measured_s,
        max_backlog: outcome.max_backlog,
        ops,
        warmup: phase(Phase::Warmup, warmup_s),
        populate,
        client: ClientCost {
            cpu_s: cpu.as_secs_f64(),
            cpu_us_per_request: if requests > 0 {
                cpu.as_secs_f64() * 1e6 / requests as f64
            } else {
                0.0
            },
            peak_rss_bytes: metrics::process::peak_rss_bytes(),
            hiccup_max_ms: hiccups.max_ms,
            hiccup_p999_ms: hiccups.p999_ms,
        },
    }
}

fn print_summary(s: &RunSummary) {
    println!("\nSummary ({}):", s.latency_kind);
    match s.attempted_rate_per_s {
        Some(rate) => {
            let note = if s.achieved_rate_per_s < rate * 0.99 {
                "  ← the target was NOT reached"
            } else {
                ""
            };
            println!(
                "  rate: attempted {rate:.0}/s, achieved {:.0}/s over {:.1} s; largest client backlog {}{note}",
                s.achieved_rate_per_s, s.measured_s, s.max_backlog
            );
        }
        None => println!(
            "  rate: {:.0}/s over {:.1} s",
            s.achieved_rate_per_s, s.measured_s
        ),
    }
    if s.stop != StopReason::Completed {
        println!("  stopped early: {:?}", s.stop);
    }
    println!(
        "  {:<8} {:>10} {:>9}   {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}   (ms; service time in brackets)",
        "op", "requests", "rate/s", "mean", "p50", "p95", "p99", "p99.9", "p99.99", "max"
    );
    for op in &s.ops {
        let (r, v) = (&op.response_time, &op.service_time);
        println!(
            "  {:<8} {:>10} {:>9.0}   {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            op.op,
            op.requests,
            op.rate_per_s,
            r.mean_ms,
            r.p50_ms,
            r.p95_ms,
            r.p99_ms,
            r.p999_ms,
            r.p9999_ms,
            r.max_ms
        );
        println!(
            "  {:<8} {:>10} {:>9}  ({:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3})",
            "", "", "", v.mean_ms, v.p50_ms, v.p95_ms, v.p99_ms, v.p999_ms, v.p9999_ms, v.max_ms
        );
        let w = &op.wait_time;
        println!(
            "  {:<8} wait in client before the send: p50 {:.3}, p99 {:.3}, p99.9 {:.3}, max {:.3}",
            "", w.p50_ms, w.p99_ms, w.p999_ms, w.max_ms
        );
        for (class, n) in &op.errors {
            let example = op
                .error_examples
                .get(class)
                .map(String::as_str)
                .unwrap_or("");
            println!("  {:<8} {n} {class} errors, e.g. {example}", "");
        }
    }
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

fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value).expect("serializable");
    fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

fn write_hgrm(path: &Path, histogram: &hdrhistogram::Histogram<u64>) -> anyhow::Result<()> {
    let mut file = std::io::BufWriter::new(
        fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    hgrm::write_percentiles(&mut file, histogram, 5, 1e6)
        .with_context(|| format!("writing {}", path.display()))?;
    file.flush()
        .with_context(|| format!("writing {}", path.display()))
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

/// The run directory's interval files and the live output, fed one interval at a time.
struct RunFiles {
    hlog: HlogWriter<std::io::BufWriter<fs::File>>,
    csv: IntervalsCsv,
    op_names: Vec<String>,
    has_warmup: bool,
    error: Option<anyhow::Error>,
    header_printed: bool,
    /// A progress bar under the live lines, when standard output is a terminal.
    progress_bar: Option<indicatif::ProgressBar>,
}

impl RunFiles {
    fn create(
        out: &Path,
        start: SystemTime,
        op_names: &[String],
        has_warmup: bool,
        planned: Option<Duration>,
    ) -> anyhow::Result<Self> {
        let hlog_path = out.join("histograms.hlog");
        let hlog = HlogWriter::create(&hlog_path, start)
            .with_context(|| format!("creating {}", hlog_path.display()))?;
        let csv = IntervalsCsv::create(&out.join("intervals.csv"))?;
        Ok(RunFiles {
            hlog,
            csv,
            op_names: op_names.to_vec(),
            has_warmup,
            error: None,
            header_printed: false,
            progress_bar: progress_bar(planned),
        })
    }

    /// A line of live output, above the progress bar when there is one.
    fn say(&self, line: String) {
        match &self.progress_bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }

    fn finish(self) -> anyhow::Result<()> {
        if let Some(bar) = &self.progress_bar {
            bar.finish_and_clear();
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn write(&mut self, interval: &Interval) -> anyhow::Result<()> {
        let offset = Duration::from_nanos(interval.start_ns);
        let length = Duration::from_nanos(interval.length_ns);
        for (i, name) in self.op_names.iter().enumerate() {
            for phase in Phase::ALL {
                let stats = &interval.ops[i][phase.index()];
                if stats.total() == 0 {
                    continue;
                }
                let prefix = if phase == Phase::Warmup {
                    "warmup."
                } else {
                    ""
                };
                self.hlog.write_interval(
                    Some(&format!("{prefix}{name}.rt")),
                    offset,
                    length,
                    &stats.response_ns,
                )?;
                self.hlog.write_interval(
                    Some(&format!("{prefix}{name}.st")),
                    offset,
                    length,
                    &stats.service_ns,
                )?;
                self.csv.row(interval, phase, name, stats)?;
            }
        }
        if let Some(h) = &interval.hiccups {
            self.hlog
                .write_interval(Some("client.hiccup"), offset, length, h)?;
        }
        self.csv.flush()?;
        Ok(())
    }

    fn print(&mut self, interval: &Interval) {
        if !self.header_printed {
            self.header_printed = true;
            let ops: Vec<String> = self
                .op_names
                .iter()
                .map(|n| format!("{n}: rate p50 p99 p99.9 max"))
                .collect();
            self.say(format!(
                "{:>8} {:>9} {:>7} {:>8} | {}   (ms)",
                "time",
                "ops/s",
                "errors",
                "backlog",
                ops.join(" | ")
            ));
        }
        let seconds = interval.length_ns as f64 / 1e9;
        let mut total = 0;
        let mut errors = 0;
        let mut parts = Vec::new();
        let mut warmup = false;
        for (i, name) in self.op_names.iter().enumerate() {
            let mut stats = interval.ops[i][Phase::Measure.index()].clone();
            let w = &interval.ops[i][Phase::Warmup.index()];
            if w.total() > 0 {
                warmup = true;
                stats.add(w);
            }
            total += stats.total();
            errors += stats.error_count();
            if stats.total() == 0 {
                continue;
            }
            let l = Latency::of(&stats.response_ns);
            parts.push(format!(
                "{name}: {:.0} {:.2} {:.2} {:.2} {:.2}",
                stats.total() as f64 / seconds,
                l.p50_ms,
                l.p99_ms,
                l.p999_ms,
                l.max_ms
            ));
        }
        let phase = if warmup && self.has_warmup {
            " warmup"
        } else {
            ""
        };
        let end_s = (interval.start_ns + interval.length_ns) as f64 / 1e9;
        if parts.is_empty() {
            parts.push("no answers in this interval".to_string());
        }
        self.say(format!(
            "{end_s:>7.1}s {:>9.0} {:>7} {:>8} | {}{phase}",
            total as f64 / seconds,
            errors,
            interval.backlog,
            parts.join(" | ")
        ));
        if let Some(bar) = &self.progress_bar {
            bar.set_position(end_s as u64);
        }
    }
}

impl IntervalSink for RunFiles {
    fn interval(&mut self, interval: &Interval) {
        self.print(interval);
        if self.error.is_none() {
            if let Err(e) = self.write(interval) {
                eprintln!("Error: {e:#}; the run goes on, but its files are incomplete");
                self.error = Some(e);
            }
        }
    }
}
