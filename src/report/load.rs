//! Reading what runs and capacity searches leave on disk into typed data for the report.
//!
//! A run directory holds config.json, summary.json, intervals.csv, histograms.hlog, one
//! `<op>.hgrm` per operation type (see `commands::run`) and, when the run loaded a local
//! cluster headroom started, pauses.json ([`crate::metrics::server_pauses`]); a capacity
//! search's directory holds search.json, capacity.json and one run directory per trial (see
//! [`crate::capacity`]); a concurrency sweep's holds sweep.json and one run directory per
//! step (see [`crate::sweep`]).
//! A run still going, or cut short by a crash, lacks some of these: whatever is missing or
//! unreadable becomes a note in the report rather than an error, so that a report can be
//! made of any directory that holds something to show.
//!
//! Percentiles are never averaged: the latency of an interval is taken from the merged
//! histograms of every operation type in that interval, and a run's whole-run latency from
//! the sum of its measured histograms, both decoded from histograms.hlog.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

use crate::capacity::store::{CONFIG_FILE, SUMMARY_FILE};
use crate::capacity::{Summary as SearchSummary, TrialRecord};
use crate::compare::matrix::{MatrixFile, MATRIX_FILE};
use crate::compare::CompareOptions;
use crate::engine::LoadMode;
use crate::metrics::server_pauses::{PausesFile, PAUSES_JSON};
use crate::metrics::server_tables::{ServerTablesFile, SERVER_TABLES_JSON};
use crate::metrics::{new_histogram, percentiles_and_mean};
use crate::results::summary::RunSummary;
use crate::sweep::{SweepFile, SWEEP_FILE};

/// The hlog tag of the client's hiccup meter.
const HICCUP_TAG: &str = "client.hiccup";

/// What the report is made of: each directory given, in the order given.
#[derive(Debug, Default)]
pub struct Input {
    /// Run directories given directly.
    pub runs: Vec<RunData>,
    /// Capacity searches (each a "configuration" in the charts that compare them).
    pub searches: Vec<SearchData>,
    /// Concurrency sweeps.
    pub sweeps: Vec<SweepData>,
    /// How the capacity searches are compared when there are several.
    pub compare: CompareOptions,
}

impl Input {
    /// Reads every directory: a configuration matrix's searches when it holds matrix.json,
    /// a capacity search when it holds capacity.json or search.json,
    /// a run when it holds summary.json, config.json or intervals.csv. Fails for a directory
    /// that is neither, naming it.
    pub fn load(dirs: &[PathBuf]) -> anyhow::Result<Input> {
        let mut input = Input::default();
        for dir in dirs {
            // What a directory holds is the user's input: a directory that cannot be read as
            // what it claims to be is a usage error (exit code 2).
            input
                .load_dir(dir)
                .map_err(|e| crate::usage::UsageError::new(format!("{e:#}")))?;
        }
        Ok(input)
    }

    fn load_dir(&mut self, dir: &Path) -> anyhow::Result<()> {
        let input = self;
        {
            if !dir.is_dir() {
                bail!("{} is not a directory", dir.display());
            }
            if dir.join(MATRIX_FILE).exists() {
                // A configuration matrix: each configuration's search, compared as it asked.
                let matrix = MatrixFile::load(dir)?;
                for search in matrix.search_dirs(dir) {
                    input.searches.push(SearchData::load(&search)?);
                }
                input.compare = matrix.compare;
            } else if dir.join(SWEEP_FILE).exists() {
                input.sweeps.push(SweepData::load(dir)?);
            } else if dir.join(SUMMARY_FILE).exists() || dir.join(CONFIG_FILE).exists() {
                input.searches.push(SearchData::load(dir)?);
            } else if ["summary.json", "config.json", "intervals.csv"]
                .iter()
                .any(|f| dir.join(f).exists())
            {
                let run = RunData::load(dir, dir_label(dir));
                if !run.holds_anything() {
                    bail!(
                        "{} holds nothing headroom can read as a run: {}",
                        dir.display(),
                        run.notes.join(" ")
                    );
                }
                input.runs.push(run);
            } else {
                bail!(
                    "{} is neither a run directory (summary.json, config.json, intervals.csv), \
                     a capacity search (capacity.json, search.json) nor a sweep (sweep.json)",
                    dir.display()
                );
            }
        }
        Ok(())
    }
}

/// A directory's name, for labels: the last component of its canonical path.
pub fn dir_label(dir: &Path) -> String {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

/// Latency percentiles of one histogram, in milliseconds, with its count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    /// Successful requests the percentiles stand on.
    pub count: u64,
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    pub p999_ms: f64,
    /// 99.99th percentile.
    pub p9999_ms: f64,
    /// Largest.
    pub max_ms: f64,
}

impl Percentiles {
    /// The percentiles of a histogram of nanoseconds (Java HdrHistogram's rule); `None` when
    /// it is empty.
    pub fn of(h: &Histogram<u64>) -> Option<Percentiles> {
        if h.is_empty() {
            return None;
        }
        let ([p50, p99, p999, p9999], _) = percentiles_and_mean(h, [50.0, 99.0, 99.9, 99.99]);
        let ms = |v: u64| v as f64 / 1e6;
        Some(Percentiles {
            count: h.len(),
            p50_ms: ms(p50),
            p99_ms: ms(p99),
            p999_ms: ms(p999),
            p9999_ms: ms(p9999),
            max_ms: ms(h.max()),
        })
    }
}

/// One row of intervals.csv for one interval, phase and operation type.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    /// Start, seconds since the start of the run.
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// `warmup` or `measure`.
    pub phase: String,
    /// The operation type.
    pub op: String,
    /// Requests that ended in the interval, successful or not.
    pub requests: u64,
    /// Failed requests.
    pub errors: u64,
}

/// One judged SLA window (an intervals.csv row of phase `window`).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRow {
    /// Start, seconds since the start of the run (warmup included).
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// Whether every term held.
    pub pass: bool,
    /// The terms that failed.
    pub failed: Vec<String>,
}

/// What one interval of histograms.hlog says: the response times of every operation type
/// merged (warmup and measured), and the client's hiccups.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalLatency {
    /// Start, seconds since the start of the run.
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// Response-time percentiles of the interval's successful requests; `None` without any.
    pub latency: Option<Percentiles>,
    /// The client hiccup meter's percentiles in the interval, when it recorded any.
    pub hiccup: Option<Percentiles>,
}

/// A percentile distribution (`<op>.hgrm`): the steps of HdrHistogram's text layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Spectrum {
    /// The operation type (the file's stem).
    pub op: String,
    /// (percentile as a fraction below 1, value in ms), in file order; the final 100% row
    /// is left out (its 1/(1−p) is infinite): see `max_ms`.
    pub points: Vec<(f64, f64)>,
    /// The largest value, ms.
    pub max_ms: f64,
    /// Values in the distribution.
    pub count: u64,
}

/// Everything one run directory holds that the report shows.
#[derive(Debug, Clone)]
pub struct RunData {
    /// The directory.
    pub dir: PathBuf,
    /// A short name for legends and headings.
    pub label: String,
    /// config.json, as written (kept untyped so that files of other versions still show).
    pub config: Option<serde_json::Value>,
    /// summary.json; `None` while the run goes on, or after a crash.
    pub summary: Option<RunSummary>,
    /// Open or closed loop, from summary.json or else config.json.
    pub mode: Option<LoadMode>,
    /// Warmup, seconds.
    pub warmup_s: f64,
    /// When the schedule ended, seconds since the start: warmup plus the planned duration
    /// (else the measured length). Intervals from then on only collect late answers.
    pub planned_end_s: Option<f64>,
    /// The SLA's canonical terms and window, when the run had one.
    pub sla: Option<(String, f64)>,
    /// intervals.csv's interval rows.
    pub intervals: Vec<IntervalRow>,
    /// intervals.csv's judged windows.
    pub windows: Vec<WindowRow>,
    /// Per interval of histograms.hlog, in time order.
    pub timeline: Vec<IntervalLatency>,
    /// Response times of the whole measured part, every operation type merged (from
    /// histograms.hlog; for a run of one operation type, from summary.json when the log is
    /// missing).
    pub whole: Option<Percentiles>,
    /// One response-time distribution per operation type, from `<op>.hgrm`.
    pub spectra: Vec<Spectrum>,
    /// pauses.json: the server pauses of the run's nodes, when the run loaded a local
    /// cluster headroom started.
    pub pauses: Option<PausesFile>,
    /// maintenance.json: the nodetool operations run during the load (`--during`).
    pub maintenance: Option<crate::maintenance::MaintenanceFile>,
    /// server-tables.json: Cassandra's own histograms of the run's table, before and after.
    pub server_tables: Option<ServerTablesFile>,
    /// server-samples.jsonl: Cassandra's own figures read during the run
    /// (`--server-stats-every`); empty without.
    pub server_samples: Vec<crate::metrics::server_samples::ServerSample>,
    /// Files that were missing or could not be read, said plainly.
    pub notes: Vec<String>,
}

impl RunData {
    /// Reads a run directory; what is missing or unreadable becomes a note.
    pub fn load(dir: &Path, label: String) -> RunData {
        let mut notes = Vec::new();
        let config: Option<serde_json::Value> = read_json(&dir.join("config.json"), &mut notes);
        let summary: Option<RunSummary> = read_json(&dir.join("summary.json"), &mut notes);
        if summary.is_none() && !dir.join("summary.json").exists() && config.is_some() {
            notes.push(
                "summary.json is missing: the run is still going, or it ended before it could \
                 write its summary. What it recorded so far is shown."
                    .to_string(),
            );
        }
        let config_mode = config
            .as_ref()
            .and_then(|c| c.get("mode"))
            .and_then(|m| serde_json::from_value::<LoadMode>(m.clone()).ok());
        let mode = summary.as_ref().map(|s| s.mode).or(config_mode);
        let warmup_s = summary
            .as_ref()
            .map(|s| s.warmup_s)
            .or_else(|| config.as_ref()?.get("warmup_s")?.as_f64())
            .unwrap_or(0.0);
        let planned_end_s = config
            .as_ref()
            .and_then(|c| c.get("duration_s")?.as_f64())
            .or_else(|| summary.as_ref().map(|s| s.measured_s))
            .map(|d| warmup_s + d);
        let sla = summary
            .as_ref()
            .and_then(|s| s.sla.as_ref().map(|sla| (sla.spec.clone(), sla.window_s)))
            .or_else(|| {
                let sla = config.as_ref()?.get("sla")?;
                Some((
                    sla.get("terms")?.as_str()?.to_string(),
                    sla.get("window_s")?.as_f64()?,
                ))
            });

        let (intervals, windows) = match read_run_file(&dir.join("intervals.csv")) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => parse_intervals(&text, &mut notes),
                Err(_) => {
                    notes.push("intervals.csv could not be read: it is not text.".to_string());
                    (Vec::new(), Vec::new())
                }
            },
            Err(why) => {
                notes.push(format!("intervals.csv {why}."));
                (Vec::new(), Vec::new())
            }
        };
        let (timeline, whole) = match read_run_file(&dir.join("histograms.hlog")) {
            Ok(bytes) => read_hlog(&bytes, &mut notes),
            Err(why) => {
                notes.push(format!("histograms.hlog {why}."));
                (Vec::new(), None)
            }
        };
        // Without a histogram log, a run of one operation type still has its whole-run
        // percentiles in summary.json; several types cannot be merged from there.
        let whole = whole.or_else(|| match summary.as_ref().map(|s| s.ops.as_slice()) {
            Some([op]) if op.ok > 0 => Some(Percentiles {
                count: op.ok,
                p50_ms: op.response_time.p50_ms,
                p99_ms: op.response_time.p99_ms,
                p999_ms: op.response_time.p999_ms,
                p9999_ms: op.response_time.p9999_ms,
                max_ms: op.response_time.max_ms,
            }),
            _ => None,
        });
        let spectra = read_spectra(dir, summary.as_ref(), &mut notes);
        // Absent for a run against a cluster headroom did not start: nothing to note.
        let pauses: Option<PausesFile> = read_json(&dir.join(PAUSES_JSON), &mut notes);
        let maintenance = read_json(&dir.join(crate::maintenance::MAINTENANCE_JSON), &mut notes);
        // Absent for runs made before headroom read them: nothing to note either.
        let server_tables: Option<ServerTablesFile> =
            read_json(&dir.join(SERVER_TABLES_JSON), &mut notes);
        let server_samples = crate::metrics::server_samples::read_samples(dir, &mut notes);
        RunData {
            dir: dir.to_path_buf(),
            label,
            config,
            summary,
            mode,
            warmup_s,
            planned_end_s,
            sla,
            intervals,
            windows,
            timeline,
            whole,
            spectra,
            pauses,
            maintenance,
            server_tables,
            server_samples,
            notes,
        }
    }

    /// Whether anything of the run could be read: its configuration, its summary or some of
    /// its intervals.
    pub fn holds_anything(&self) -> bool {
        self.config.is_some()
            || self.summary.is_some()
            || !self.intervals.is_empty()
            || !self.timeline.is_empty()
    }

    /// Whether the run kept a fixed rate (open loop).
    pub fn is_open_loop(&self) -> bool {
        matches!(self.mode, Some(LoadMode::Open { .. }))
    }

    /// The concurrency of a closed-loop run.
    pub fn concurrency(&self) -> Option<usize> {
        match self.mode {
            Some(LoadMode::Closed { concurrency }) => Some(concurrency),
            _ => None,
        }
    }

    /// The attempted rate of an open-loop run, per second.
    pub fn attempted_rate(&self) -> Option<f64> {
        match self.mode {
            Some(LoadMode::Open { rate_per_s, .. }) => Some(rate_per_s),
            _ => None,
        }
    }

    /// The achieved rate over the measured part, per second: from summary.json, else from
    /// the measured intervals.
    pub fn achieved_rate(&self) -> Option<f64> {
        if let Some(s) = &self.summary {
            return Some(s.achieved_rate_per_s);
        }
        let measured: Vec<&IntervalRow> = self
            .intervals
            .iter()
            .filter(|r| r.phase == "measure")
            .collect();
        let requests: u64 = measured.iter().map(|r| r.requests).sum();
        let mut starts: Vec<(u64, f64)> = measured
            .iter()
            .map(|r| ((r.start_s * 1000.0).round() as u64, r.length_s))
            .collect();
        starts.sort_by_key(|s| s.0);
        starts.dedup_by_key(|s| s.0);
        let seconds: f64 = starts.iter().map(|s| s.1).sum();
        (seconds > 0.0).then(|| requests as f64 / seconds)
    }

    /// The workload's name, from summary.json or config.json.
    pub fn workload(&self) -> Option<String> {
        if let Some(s) = &self.summary {
            return Some(s.workload.clone());
        }
        Some(
            self.config
                .as_ref()?
                .get("workload")?
                .get("name")?
                .as_str()?
                .to_string(),
        )
    }
}

/// A trial of a capacity search: its record, and its run directory when it could be read.
#[derive(Debug, Clone)]
pub struct TrialData {
    /// The record the search kept.
    pub record: TrialRecord,
    /// The trial's own run.
    pub run: Option<RunData>,
}

/// A capacity search's directory.
#[derive(Debug, Clone)]
pub struct SearchData {
    /// The directory.
    pub dir: PathBuf,
    /// The configuration's name in charts and headings: search.json's `label` when it has
    /// one, else the directory's name.
    pub label: String,
    /// capacity.json: the settings, the probe, the rows and the capacity.
    pub summary: SearchSummary,
    /// The SLA's canonical terms and window.
    pub sla: Option<(String, f64)>,
    /// The trials, by attempted rate then repeat.
    pub trials: Vec<TrialData>,
    /// The probe's run.
    pub probe: Option<RunData>,
    /// Files that were missing or could not be read.
    pub notes: Vec<String>,
}

impl SearchData {
    /// Reads a capacity search's directory and every trial's run directory.
    pub fn load(dir: &Path) -> anyhow::Result<SearchData> {
        let path = dir.join(SUMMARY_FILE);
        let text = fs::read_to_string(&path).with_context(|| {
            format!(
                "reading {}: a capacity search writes it after its first trial",
                path.display()
            )
        })?;
        let summary: SearchSummary =
            serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
        let config = &summary.config;
        let label = config
            .get("label")
            .and_then(|l| l.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| dir_label(dir));
        let sla = config.get("sla").and_then(|sla| {
            Some((
                sla.get("terms")?.as_str()?.to_string(),
                sla.get("window_s")?.as_f64()?,
            ))
        });
        let mut notes = Vec::new();
        let mut trials = Vec::new();
        for row in &summary.outcome.rows {
            for record in &row.trials {
                let run_dir = dir.join(&record.dir);
                let run = if run_dir.is_dir() {
                    Some(RunData::load(&run_dir, trial_label(record)))
                } else {
                    notes.push(format!(
                        "The run directory of the trial at {}/s (repeat {}), {}, is missing.",
                        record.rate_per_s, record.repeat, record.dir
                    ));
                    None
                };
                trials.push(TrialData {
                    record: record.clone(),
                    run,
                });
            }
        }
        let probe = summary.outcome.probe.as_ref().and_then(|p| {
            let probe_dir = dir.join(&p.dir);
            probe_dir
                .is_dir()
                .then(|| RunData::load(&probe_dir, "probe".to_string()))
        });
        Ok(SearchData {
            dir: dir.to_path_buf(),
            label,
            summary,
            sla,
            trials,
            probe,
            notes,
        })
    }

    /// The number of repeats per rate the search was configured with.
    pub fn repeats(&self) -> u32 {
        self.summary
            .config
            .get("repeats")
            .and_then(|r| r.as_u64())
            .map_or(1, |r| r as u32)
    }

    /// The workload's name.
    pub fn workload(&self) -> Option<String> {
        Some(
            self.summary
                .config
                .get("run")?
                .get("workload")?
                .get("name")?
                .as_str()?
                .to_string(),
        )
    }
}

/// A concurrency sweep's directory (see [`crate::sweep`]).
#[derive(Debug, Clone)]
pub struct SweepData {
    /// The directory.
    pub dir: PathBuf,
    /// Its name in headings: the directory's name.
    pub label: String,
    /// sweep.json: the settings, the steps and why the sweep stopped.
    pub file: SweepFile,
    /// Steps whose run directory is missing.
    pub notes: Vec<String>,
}

impl SweepData {
    /// Reads a sweep's directory. The charts and the table come from sweep.json alone
    /// (each step's record holds its percentiles, from the sum of its measured
    /// histograms); a step's run directory that is missing becomes a note.
    pub fn load(dir: &Path) -> anyhow::Result<SweepData> {
        let file = SweepFile::read(dir)?;
        let notes = file
            .steps
            .iter()
            .filter(|s| !dir.join(&s.dir).is_dir() && s.end != crate::sweep::StepEnd::Failed)
            .map(|s| {
                format!(
                    "The run directory of the step at concurrency {}, {}, is missing.",
                    s.concurrency, s.dir
                )
            })
            .collect();
        Ok(SweepData {
            dir: dir.to_path_buf(),
            label: dir_label(dir),
            file,
            notes,
        })
    }
}

/// A trial's label: its rate, and its repeat when there may be several.
fn trial_label(record: &TrialRecord) -> String {
    format!(
        "{}/s #{}",
        crate::capacity::table::format_rate(record.rate_per_s),
        record.repeat
    )
}

/// Reads a JSON file: `None` when it is missing, and with a note when it cannot be read or
/// does not parse (or is larger than any headroom writes).
fn read_json<T: serde::de::DeserializeOwned>(path: &Path, notes: &mut Vec<String>) -> Option<T> {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if !path.exists() {
        // The caller says why a missing file matters.
        return None;
    }
    match crate::usage::read_input_file(path, "the file") {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(value) => Some(value),
            Err(e) => {
                notes.push(format!(
                    "{name} could not be read: {}.",
                    crate::usage::cut(&e.to_string(), 200)
                ));
                None
            }
        },
        Err(e) => {
            notes.push(format!("{e}."));
            None
        }
    }
}

/// The largest intervals.csv or histograms.hlog a report reads: days of one-second
/// intervals, far below what would exhaust memory.
const MAX_RUN_FILE_BYTES: u64 = 1 << 30;

/// A run's interval file, whole; the error completes "FILE ...": missing, not a file, or
/// too large.
fn read_run_file(path: &Path) -> Result<Vec<u8>, String> {
    let meta = fs::metadata(path).map_err(|_| "is missing".to_string())?;
    if !meta.is_file() {
        return Err("is not a regular file".to_string());
    }
    if meta.len() > MAX_RUN_FILE_BYTES {
        return Err(format!(
            "is {} MB, more than the {} MB a report reads",
            meta.len() >> 20,
            MAX_RUN_FILE_BYTES >> 20
        ));
    }
    fs::read(path).map_err(|e| format!("could not be read: {e}"))
}

/// intervals.csv: its interval rows and its window rows. Rows that do not parse are skipped
/// with one note (a crash can tear the last line).
pub fn parse_intervals(text: &str, notes: &mut Vec<String>) -> (Vec<IntervalRow>, Vec<WindowRow>) {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return (Vec::new(), Vec::new());
    };
    let columns: Vec<&str> = header.split(',').collect();
    let col = |name: &str| columns.iter().position(|c| *c == name);
    let (Some(start), Some(length), Some(phase), Some(op), Some(requests), Some(errors)) = (
        col("start_s"),
        col("length_s"),
        col("phase"),
        col("op"),
        col("requests"),
        col("errors"),
    ) else {
        notes.push("intervals.csv has an unknown header.".to_string());
        return (Vec::new(), Vec::new());
    };
    let (sla, failed) = (col("sla"), col("sla_failed"));
    let mut rows = Vec::new();
    let mut windows = Vec::new();
    let mut skipped = 0;
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let get = |i: usize| cells.get(i).copied().unwrap_or("");
        let parsed = (|| {
            let start_s: f64 = get(start).parse().ok()?;
            let length_s: f64 = get(length).parse().ok()?;
            if get(phase) == "window" {
                let pass = sla.map(get) == Some("pass");
                let failed = failed
                    .map(get)
                    .unwrap_or("")
                    .split(';')
                    .filter(|t| !t.is_empty())
                    .map(str::to_string)
                    .collect();
                windows.push(WindowRow {
                    start_s,
                    length_s,
                    pass,
                    failed,
                });
                return Some(());
            }
            rows.push(IntervalRow {
                start_s,
                length_s,
                phase: get(phase).to_string(),
                op: get(op).to_string(),
                requests: get(requests).parse().ok()?,
                errors: get(errors).parse().ok()?,
            });
            Some(())
        })();
        if parsed.is_none() {
            skipped += 1;
        }
    }
    if skipped > 0 {
        notes.push(format!(
            "intervals.csv: {skipped} row(s) could not be read and were left out."
        ));
    }
    (rows, windows)
}

/// One decoded interval of an HdrHistogram interval log.
pub struct LoggedInterval<'a> {
    /// The interval's tag.
    pub tag: &'a str,
    /// Start, seconds since the log's start time.
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// Its values.
    pub histogram: Histogram<u64>,
}

/// Decodes the intervals of an interval log whose tag `keep` accepts, handing each to `each`
/// in file order. Reading stops at a line that does not parse (a crash can tear the last
/// one), with a note naming `file`; histograms that cannot be decoded are counted in a note.
pub fn for_each_interval(
    bytes: &[u8],
    file: &str,
    notes: &mut Vec<String>,
    keep: impl Fn(&str) -> bool,
    mut each: impl FnMut(LoggedInterval<'_>),
) {
    let mut deserializer = Deserializer::new();
    let mut undecodable = 0;
    for entry in IntervalLogIterator::new(bytes) {
        let interval = match entry {
            Ok(LogEntry::Interval(interval)) => interval,
            Ok(_) => continue,
            Err(_) => {
                notes.push(format!(
                    "{file} ends in a line that could not be read (the run may have been cut \
                     short); the intervals before it are shown."
                ));
                break;
            }
        };
        let Some(tag) = interval.tag().map(|t| t.as_str()) else {
            continue;
        };
        if !keep(tag) {
            continue;
        }
        let decoded: Option<Histogram<u64>> = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .ok()
            .and_then(|raw| deserializer.deserialize(&mut &raw[..]).ok());
        let Some(histogram) = decoded else {
            undecodable += 1;
            continue;
        };
        each(LoggedInterval {
            tag,
            start_s: interval.start_timestamp().as_secs_f64(),
            length_s: interval.duration().as_secs_f64(),
            histogram,
        });
    }
    if undecodable > 0 {
        notes.push(format!(
            "{file}: {undecodable} histogram(s) could not be decoded and were left out."
        ));
    }
}

/// Whether a histograms.hlog tag holds measured response times (`<op>.rt`).
pub fn is_measured_response_tag(tag: &str) -> bool {
    tag.ends_with(".rt") && !tag.starts_with("warmup.")
}

/// histograms.hlog: per interval, the merged response times of every operation type (tags
/// `<op>.rt` and `warmup.<op>.rt`) and the client's hiccups; and the sum of the measured
/// response times (`<op>.rt`) over the run. Reading stops at a line that does not parse (a
/// crash can tear the last one), with a note.
pub fn read_hlog(
    bytes: &[u8],
    notes: &mut Vec<String>,
) -> (Vec<IntervalLatency>, Option<Percentiles>) {
    struct Slot {
        start_s: f64,
        length_s: f64,
        latency: Histogram<u64>,
        hiccup: Histogram<u64>,
    }
    fn summarize(slot: Slot) -> IntervalLatency {
        IntervalLatency {
            start_s: slot.start_s,
            length_s: slot.length_s,
            latency: Percentiles::of(&slot.latency),
            hiccup: Percentiles::of(&slot.hiccup),
        }
    }
    // The log holds each interval's tags together, in time order: an interval is summed up
    // and its histograms dropped once two later ones have begun, so that reading a long
    // run's log holds a few histograms, not all of them. (The margin of two keeps an entry
    // that comes a little out of order in its interval.)
    let mut slots: BTreeMap<u64, Slot> = BTreeMap::new();
    let mut timeline: Vec<IntervalLatency> = Vec::new();
    let mut whole = new_histogram();
    let mut unaddable = 0;
    let keep = |tag: &str| {
        is_measured_response_tag(tag)
            || (tag.starts_with("warmup.") && tag.ends_with(".rt"))
            || tag == HICCUP_TAG
    };
    for_each_interval(bytes, "histograms.hlog", notes, keep, |interval| {
        let slot = slots
            .entry((interval.start_s * 1000.0).round() as u64)
            .or_insert_with(|| Slot {
                start_s: interval.start_s,
                length_s: interval.length_s,
                latency: new_histogram(),
                hiccup: new_histogram(),
            });
        let target = if interval.tag == HICCUP_TAG {
            &mut slot.hiccup
        } else {
            &mut slot.latency
        };
        // Histograms that cannot be added (another precision) are rare enough to skip.
        if target.add(&interval.histogram).is_err() {
            unaddable += 1;
            return;
        }
        if is_measured_response_tag(interval.tag) && whole.add(&interval.histogram).is_err() {
            unaddable += 1;
        }
        while slots.len() > 2 {
            let (_, slot) = slots.pop_first().expect("more than two");
            timeline.push(summarize(slot));
        }
    });
    if unaddable > 0 {
        notes.push(format!(
            "histograms.hlog: {unaddable} histogram(s) could not be added up and were left out."
        ));
    }
    timeline.extend(slots.into_values().map(summarize));
    // An entry later than the margin would have started its interval anew, out of order.
    timeline.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    (timeline, Percentiles::of(&whole))
}

/// The response-time distribution of each operation type, from `<op>.hgrm`, in the order of
/// summary.json's operations (else by file name). Service-time files are left out.
fn read_spectra(
    dir: &Path,
    summary: Option<&RunSummary>,
    notes: &mut Vec<String>,
) -> Vec<Spectrum> {
    let mut ops: Vec<String> = summary
        .map(|s| s.ops.iter().map(|o| o.op.clone()).collect())
        .unwrap_or_default();
    if ops.is_empty() {
        if let Ok(entries) = fs::read_dir(dir) {
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".hgrm").map(str::to_string))
                .filter(|n| !n.ends_with(".service"))
                .collect();
            names.sort();
            ops = names;
        }
    }
    let mut spectra = Vec::new();
    for op in ops {
        let path = dir.join(format!("{op}.hgrm"));
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        match parse_hgrm(&op, &text) {
            Some(spectrum) => spectra.push(spectrum),
            None => notes.push(format!("{op}.hgrm could not be read.")),
        }
    }
    spectra
}

/// A `.hgrm` file's rows (Value, Percentile, TotalCount, 1/(1−Percentile)) and footer.
pub fn parse_hgrm(op: &str, text: &str) -> Option<Spectrum> {
    let mut points = Vec::new();
    let mut max_ms = None;
    let mut count = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(footer) = line.strip_prefix("#[Max") {
            // #[Max     =       21.381, Total count    =        16000]
            let mut parts = footer.split(',');
            max_ms = parts
                .next()
                .and_then(|p| p.split('=').nth(1))
                .and_then(|v| v.trim().parse::<f64>().ok());
            count = parts
                .next()
                .and_then(|p| p.split('=').nth(1))
                .and_then(|v| v.trim().trim_end_matches(']').trim().parse::<u64>().ok());
            continue;
        }
        let cells: Vec<&str> = line.split_whitespace().collect();
        if cells.len() != 4 {
            // The header, blank lines, the last (100%) row and the other footer lines.
            continue;
        }
        let (Ok(value), Ok(percentile)) = (cells[0].parse::<f64>(), cells[1].parse::<f64>()) else {
            continue;
        };
        if percentile < 1.0 {
            points.push((percentile, value));
        }
    }
    let max_ms = max_ms.or_else(|| points.last().map(|p| p.1))?;
    Some(Spectrum {
        op: op.to_string(),
        points,
        max_ms,
        count: count.unwrap_or(0),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A long log is read one interval at a time (only the last few are held as
    /// histograms), and gives every interval in order, an entry that comes a little late
    /// still counted in its own interval.
    #[test]
    fn a_histogram_log_is_read_interval_by_interval() {
        use crate::results::hlog::HlogWriter;
        use std::time::{Duration, UNIX_EPOCH};
        let mut log = HlogWriter::new(Vec::new(), UNIX_EPOCH).unwrap();
        let second = Duration::from_secs(1);
        let with = |n: u64| {
            let mut h = new_histogram();
            h.record_n(1_000_000, n).unwrap();
            h
        };
        for i in 0..200u64 {
            let at = second * i as u32;
            log.write_interval(Some("write.rt"), at, second, &with(i + 1))
                .unwrap();
            log.write_interval(Some(HICCUP_TAG), at, second, &with(1))
                .unwrap();
            if i == 101 {
                // Interval 100's reads, written after interval 101 began.
                log.write_interval(Some("read.rt"), second * 100, second, &with(1000))
                    .unwrap();
            }
        }
        let bytes = log.into_inner().unwrap();
        let mut notes = Vec::new();
        let (timeline, whole) = read_hlog(&bytes, &mut notes);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(timeline.len(), 200);
        for (i, interval) in timeline.iter().enumerate() {
            assert_eq!(interval.start_s, i as f64);
            let expected = i as u64 + 1 + if i == 100 { 1000 } else { 0 };
            assert_eq!(interval.latency.unwrap().count, expected, "interval {i}");
            assert_eq!(interval.hiccup.unwrap().count, 1);
        }
        assert_eq!(whole.unwrap().count, (1..=200).sum::<u64>() + 1000);
    }

    /// The first 10 s of a real run: 5 s of warmup, one 5 s SLA window, writes and reads.
    pub(crate) fn run_fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run")
    }

    /// A real automatic capacity search (probe left out); only two trials kept their
    /// histogram logs.
    pub(crate) fn capacity_fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/capacity")
    }

    /// A real four-step sweep (`--concurrency 2..8 --step-duration 4s`); of each step's
    /// directory only summary.json is kept.
    pub(crate) fn sweep_fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/sweep")
    }

    #[test]
    fn a_sweep_reads_from_its_sweep_json() {
        let input = Input::load(&[sweep_fixture()]).unwrap();
        assert!(input.runs.is_empty() && input.searches.is_empty());
        let sweep = &input.sweeps[0];
        assert_eq!(sweep.label, "sweep");
        assert!(sweep.notes.is_empty(), "{:?}", sweep.notes);
        assert_eq!(sweep.file.workload, "keyvalue");
        assert_eq!(sweep.file.status, crate::sweep::SweepStatus::Completed);
        let concurrencies: Vec<usize> = sweep.file.steps.iter().map(|s| s.concurrency).collect();
        assert_eq!(concurrencies, [2, 3, 5, 7]);
        // Each record holds what its step's own summary says.
        for step in &sweep.file.steps {
            let summary: RunSummary = serde_json::from_str(
                &fs::read_to_string(sweep.dir.join(&step.dir).join("summary.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(summary.achieved_rate_per_s, step.achieved_per_s);
            assert_eq!(summary.ops[0].requests, step.requests);
            assert_eq!(summary.ops[0].service_time.p99_ms, step.service_time.p99_ms);
        }

        // A step directory that went missing is a note, not an error.
        let dir = tempfile::tempdir().unwrap();
        fs::copy(
            sweep_fixture().join(SWEEP_FILE),
            dir.path().join(SWEEP_FILE),
        )
        .unwrap();
        let torn = SweepData::load(dir.path()).unwrap();
        assert_eq!(torn.notes.len(), 4, "{:?}", torn.notes);
        assert!(torn.notes[0].contains("steps/concurrency-2"));
    }

    #[test]
    fn a_run_directory_reads_into_its_parts() {
        let run = RunData::load(&run_fixture(), "run".into());
        assert!(run.notes.is_empty(), "{:?}", run.notes);
        assert!(run.is_open_loop());
        assert_eq!(run.attempted_rate(), Some(1000.0));
        assert_eq!(run.warmup_s, 5.0);
        assert_eq!(run.planned_end_s, Some(25.0));
        assert_eq!(run.workload().as_deref(), Some("timeseries"));
        assert_eq!(
            run.sla,
            Some(("p99.9<100ms, max<50ms, read:p99<5ms, window=5s".into(), 5.0))
        );
        // 10 intervals of writes and reads, and one judged window.
        assert_eq!(run.intervals.len(), 20);
        assert_eq!(run.intervals[0].phase, "warmup");
        assert_eq!(run.intervals[0].requests, 800);
        assert_eq!(
            run.windows,
            vec![WindowRow {
                start_s: 5.0,
                length_s: 5.0,
                pass: true,
                failed: vec![]
            }]
        );
        // One histogram-log interval per second, each with hiccups.
        assert_eq!(run.timeline.len(), 10);
        assert!(run.timeline.iter().all(|i| i.hiccup.is_some()));
        let first = run.timeline[0].latency.unwrap();
        assert_eq!(first.count, 1000);
        // The whole measured part (5-10 s) is the one window: the same merged histograms
        // give the same percentiles as the run's own judge wrote to intervals.csv.
        let whole = run.whole.unwrap();
        assert_eq!(whole.count, 5000);
        let ms3 = |v: f64| (v * 1000.0).round() / 1000.0;
        assert_eq!(
            [whole.p50_ms, whole.p99_ms, whole.p999_ms, whole.max_ms].map(ms3),
            [0.432, 4.047, 16.450, 21.381]
        );
        let ops: Vec<&str> = run.spectra.iter().map(|s| s.op.as_str()).collect();
        assert_eq!(ops, ["write", "read"]);
        assert_eq!(run.spectra[0].max_ms, 21.381);
        assert_eq!(run.spectra[0].count, 16000);
        assert_eq!(run.spectra[0].points[0], (0.0, 0.113));
        assert!(run.spectra[0].points.iter().all(|p| p.0 < 1.0));
    }

    #[test]
    fn a_capacity_search_reads_with_its_trials() {
        let search = SearchData::load(&capacity_fixture()).unwrap();
        assert_eq!(search.label, "capacity");
        assert_eq!(search.summary.outcome.capacity_per_s, Some(5200.0));
        assert_eq!(search.sla, Some(("p99<20ms, window=5s".into(), 5.0)));
        assert_eq!(search.repeats(), 1);
        assert_eq!(search.workload().as_deref(), Some("keyvalue"));
        let rates: Vec<f64> = search.trials.iter().map(|t| t.record.rate_per_s).collect();
        assert_eq!(rates, [2800.0, 4200.0, 4900.0, 5200.0, 5500.0, 10900.0]);
        assert!(search.trials.iter().all(|t| t.run.is_some()));
        // The probe's directory was left out of the fixture.
        assert!(search.probe.is_none());

        let failing = search.trials[4].run.as_ref().unwrap();
        assert_eq!(failing.label, "5 500/s #1");
        assert_eq!(failing.windows.len(), 1);
        assert!(!failing.windows[0].pass);
        assert_eq!(failing.windows[0].failed, ["p99<20ms"]);
        // Intervals of measured writes only: the log's percentiles are intervals.csv's.
        for (interval, p99) in [(3, 108.200), (4, 3.731), (5, 1.391), (6, 1.026)] {
            let latency = failing.timeline[interval].latency.unwrap();
            assert_eq!((latency.p99_ms * 1000.0).round() / 1000.0, p99);
        }
        // The whole run from the log is the summary's, to the nanosecond.
        let summary = &failing.summary.as_ref().unwrap().ops[0].response_time;
        let whole = failing.whole.unwrap();
        assert_eq!(
            [whole.p50_ms, whole.p99_ms, whole.p999_ms, whole.max_ms],
            [
                summary.p50_ms,
                summary.p99_ms,
                summary.p999_ms,
                summary.max_ms
            ]
        );

        // Without a log, one operation type's whole run comes from summary.json.
        let lowest = search.trials[0].run.as_ref().unwrap();
        assert!(lowest.timeline.is_empty());
        assert_eq!(lowest.whole.unwrap().p99_ms, 1.029631);
        assert!(lowest.notes.iter().any(|n| n.contains("histograms.hlog")));
    }

    #[test]
    fn a_directory_with_nothing_to_show_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = Input::load(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(
            error.to_string().contains("is neither a run directory"),
            "{error}"
        );
        let missing = dir.path().join("missing");
        let error = Input::load(&[missing]).unwrap_err();
        assert!(error.to_string().contains("is not a directory"), "{error}");
        assert!(error.downcast_ref::<crate::usage::UsageError>().is_some());

        // Files named as a run's, holding nothing readable: no page, a usage error naming
        // what could not be read.
        for (name, bytes) in [
            ("summary.json", &b"\x00\xff garbage"[..]),
            ("config.json", b"{not json"),
            ("intervals.csv", b"\xfe\xff"),
            ("histograms.hlog", b"#[random]\nnonsense\n"),
        ] {
            fs::write(dir.path().join(name), bytes).unwrap();
        }
        let error = Input::load(&[dir.path().to_path_buf()]).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("holds nothing headroom can read as a run"),
            "{text}"
        );
        assert!(text.contains("config.json could not be read"), "{text}");
        assert!(error.downcast_ref::<crate::usage::UsageError>().is_some());
    }

    #[test]
    fn a_corrupt_summary_is_said_to_be_unreadable_not_missing() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["config.json", "intervals.csv", "histograms.hlog"] {
            fs::copy(run_fixture().join(name), dir.path().join(name)).unwrap();
        }
        fs::write(dir.path().join("summary.json"), "{\"stop\": ").unwrap();
        let run = RunData::load(dir.path(), "corrupt".into());
        assert!(run.summary.is_none() && run.holds_anything());
        assert!(
            run.notes
                .iter()
                .any(|n| n.starts_with("summary.json could not be read")),
            "{:?}",
            run.notes
        );
        assert!(
            !run.notes.iter().any(|n| n.contains("is missing")),
            "{:?}",
            run.notes
        );
    }

    #[test]
    fn a_torn_run_keeps_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let hlog = fs::read_to_string(run_fixture().join("histograms.hlog")).unwrap();
        let torn = &hlog[..hlog.len() - 100];
        fs::write(dir.path().join("histograms.hlog"), torn).unwrap();
        let csv = fs::read_to_string(run_fixture().join("intervals.csv")).unwrap();
        fs::write(dir.path().join("intervals.csv"), &csv[..csv.len() - 20]).unwrap();
        fs::copy(
            run_fixture().join("config.json"),
            dir.path().join("config.json"),
        )
        .unwrap();
        let run = RunData::load(dir.path(), "torn".into());
        assert!(run.summary.is_none());
        assert_eq!(run.timeline.len(), 10);
        assert!(run.intervals.len() >= 19);
        assert!(
            run.notes
                .iter()
                .any(|n| n.contains("summary.json is missing")),
            "{:?}",
            run.notes
        );
        assert!(run.notes.iter().any(|n| n.contains("could not be read")));
        // The rate comes from the measured intervals when there is no summary.
        assert_eq!(run.achieved_rate(), Some(1000.0));
    }

    #[test]
    fn hgrm_and_csv_parsers_take_the_layouts_headroom_writes() {
        let text = "       Value     Percentile TotalCount 1/(1-Percentile)\n\n\
                    \x20      0.100 0.000000000000          1           1.00\n\
                    \x20      0.500 0.500000000000          5           2.00\n\
                    \x20      9.000 0.900000000000          9          10.00\n\
                    \x20     12.000 1.000000000000         10\n\
                    #[Mean    =        1.000, StdDeviation   =        2.000]\n\
                    #[Max     =       12.000, Total count    =           10]\n\
                    #[Buckets =           15, SubBuckets     =         2048]\n";
        let s = parse_hgrm("write", text).unwrap();
        assert_eq!(s.points, [(0.0, 0.1), (0.5, 0.5), (0.9, 9.0)]);
        assert_eq!((s.max_ms, s.count), (12.0, 10));

        let mut notes = Vec::new();
        let (rows, windows) = parse_intervals(
            "start_s,length_s,phase,op,requests,errors,rate_per_s,p50_ms,p90_ms,p99_ms,p999_ms,p9999_ms,max_ms,backlog,sla,sla_failed\n\
             0.000,1.000,measure,write,10,2,10.0,1,1,1,1,1,1,0,,\n\
             0.000,1.000,window,all,10,2,10.0,1,1,1,1,1,1,,fail,p99<1ms;errors<1%\n\
             1.000,oops\n",
            &mut notes,
        );
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].requests, rows[0].errors), (10, 2));
        assert_eq!(windows[0].failed, ["p99<1ms", "errors<1%"]);
        assert_eq!(notes.len(), 1);
    }
}
