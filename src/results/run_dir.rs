//! A run directory read back whole, for the report and the comparisons: its settings,
//! summary, intervals, histogram log, percentile distributions and server figures, each
//! through its own format's reader.
//!
//! A run directory holds config.json, summary.json, intervals.csv, histograms.hlog, one
//! `<op>.hgrm` per operation type (see [`crate::run`]) and, when the run loaded a local
//! cluster headroom started, pauses.json ([`crate::metrics::server_pauses`]); a vector run
//! also vectors.json ([`crate::catalogue::VECTORS_JSON`]).
//! A run still going, or cut short by a crash, lacks some of these: whatever is missing or
//! unreadable becomes a note rather than an error, so that a report can be made of any
//! directory that holds something to show.
//!
//! Percentiles are never averaged: a run's whole-run latency is taken from the sum of its
//! measured histograms, decoded from histograms.hlog. Its figures per interval are read by
//! `figures::Timeline::load`, the one model every view of a run draws.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Deserialize;

use super::config::RunSettings;
use super::hgrm::{parse_hgrm, Spectrum};
use super::hlog::{for_each_interval, is_measured_response_tag, HICCUP_TAG};
use super::intervals_csv::{parse_intervals, IntervalRow, WindowRow};
use super::summary::RunSummary;
use crate::catalogue::{
    CONFIG_JSON, HGRM, HISTOGRAMS_HLOG, INTERVALS_CSV, MAINTENANCE_JSON, PAUSES_JSON,
    SERVER_TABLES_JSON, SUMMARY_JSON, VECTORS_JSON,
};
use crate::engine::LoadMode;
use crate::metrics::server_pauses::PausesFile;
use crate::metrics::server_tables::ServerTablesFile;
use crate::sla::Sla;
use crate::stats::{new_histogram, percentiles_and_mean};

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

/// Everything one run directory holds that the report shows.
#[derive(Debug, Clone)]
pub struct RunData {
    /// The directory.
    pub dir: PathBuf,
    /// A short name for legends and headings.
    pub label: String,
    /// config.json, typed; `None` when it is missing or holds settings this version cannot
    /// read (a note says why).
    pub config: Option<RunSettings>,
    /// config.json as written, for a grid of every setting: a file of another version shows
    /// as it is, without the settings it did not have.
    pub config_written: Option<serde_json::Value>,
    /// summary.json; `None` while the run goes on, or after a crash.
    pub summary: Option<RunSummary>,
    /// Open or closed loop, from summary.json or else config.json.
    pub mode: Option<LoadMode>,
    /// Warmup, seconds.
    pub warmup_s: f64,
    /// When the schedule ended, seconds since the start: warmup plus the planned duration
    /// (else the measured length). Intervals from then on only collect late answers.
    pub planned_end_s: Option<f64>,
    /// The SLA the run judged its windows by, when it had one.
    pub sla: Option<Sla>,
    /// intervals.csv's interval rows.
    pub intervals: Vec<IntervalRow>,
    /// intervals.csv's judged windows.
    pub windows: Vec<WindowRow>,
    /// How many intervals histograms.hlog holds (their figures are read by
    /// `figures::Timeline::load`).
    pub logged_intervals: usize,
    /// Response times of the whole measured part, every operation type merged (from
    /// histograms.hlog; for a run of one operation type, from summary.json when the log is
    /// missing).
    pub whole: Option<Percentiles>,
    /// One response-time distribution per operation type, from `<op>.hgrm`.
    pub spectra: Vec<Spectrum>,
    /// pauses.json: the server pauses of the run's nodes, when the run loaded a local
    /// cluster headroom started.
    pub pauses: Option<PausesFile>,
    /// maintenance.json: the operations and faults run during the load (`--during`).
    pub maintenance: Option<crate::maintenance::MaintenanceFile>,
    /// server-tables.json: Cassandra's own histograms of the run's table, before and after.
    pub server_tables: Option<ServerTablesFile>,
    /// server-samples.jsonl: Cassandra's own figures read during the run
    /// (`--server-stats-every`); empty without.
    pub server_samples: Vec<crate::metrics::server_samples::ServerSample>,
    /// vectors.json: what a vector workload searched and how its exact neighbours were
    /// found; `None` for another workload.
    pub vectors: Option<crate::workload::vector::VectorFacts>,
    /// Files that were missing or could not be read, said plainly.
    pub notes: Vec<String>,
}

impl RunData {
    /// Reads a run directory; what is missing or unreadable becomes a note.
    pub fn load(dir: &Path, label: String) -> RunData {
        let mut notes = Vec::new();
        let config_written: Option<serde_json::Value> =
            read_json(&dir.join(CONFIG_JSON), &mut notes);
        let config =
            config_written
                .as_ref()
                .and_then(|written| match RunSettings::deserialize(written) {
                    Ok(settings) => Some(settings),
                    Err(e) => {
                        notes.push(format!(
                        "config.json holds settings this version of headroom cannot read ({}); \
                         they are shown as written.",
                        crate::usage::cut(&e.to_string(), 200)
                    ));
                        None
                    }
                });
        let summary: Option<RunSummary> = read_json(&dir.join(SUMMARY_JSON), &mut notes);
        if summary.is_none() && !dir.join(SUMMARY_JSON).exists() && config_written.is_some() {
            notes.push(
                "summary.json is missing: the run is still going, or it ended before it could \
                 write its summary. What it recorded so far is shown."
                    .to_string(),
            );
        }
        let mode = summary
            .as_ref()
            .map(|s| s.mode)
            .or(config.as_ref().map(|c| c.mode));
        let warmup_s = summary
            .as_ref()
            .map(|s| s.warmup_s)
            .or(config.as_ref().map(|c| c.warmup_s))
            .unwrap_or(0.0);
        let planned_end_s = config
            .as_ref()
            .and_then(|c| c.duration_s)
            .or_else(|| summary.as_ref().map(|s| s.measured_s))
            .map(|d| warmup_s + d);
        let sla = config.as_ref().and_then(|c| c.sla.clone()).or_else(|| {
            let sla = summary.as_ref()?.sla.as_ref()?;
            Sla::parse(&sla.spec, Duration::from_secs_f64(sla.window_s)).ok()
        });

        let (intervals, windows) = match read_run_file(&dir.join(INTERVALS_CSV)) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => parse_intervals(&text, &mut notes),
                Err(_) => {
                    notes.push(format!("{INTERVALS_CSV} could not be read: it is not text."));
                    (Vec::new(), Vec::new())
                }
            },
            Err(why) => {
                notes.push(format!("{INTERVALS_CSV} {why}."));
                (Vec::new(), Vec::new())
            }
        };
        let (logged_intervals, whole) = match read_run_file(&dir.join(HISTOGRAMS_HLOG)) {
            Ok(bytes) => read_hlog(&bytes, &mut notes),
            Err(why) => {
                notes.push(format!("{HISTOGRAMS_HLOG} {why}."));
                (0, None)
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
        let maintenance = read_json(&dir.join(MAINTENANCE_JSON), &mut notes);
        // Absent for runs made before headroom read them: nothing to note either.
        let server_tables: Option<ServerTablesFile> =
            read_json(&dir.join(SERVER_TABLES_JSON), &mut notes);
        let server_samples = crate::metrics::server_samples::read_samples(dir, &mut notes);
        // Absent for every workload but the vector one.
        let vectors = read_json(&dir.join(VECTORS_JSON), &mut notes);
        RunData {
            dir: dir.to_path_buf(),
            label,
            config,
            config_written,
            summary,
            mode,
            warmup_s,
            planned_end_s,
            sla,
            intervals,
            windows,
            logged_intervals,
            whole,
            spectra,
            pauses,
            maintenance,
            server_tables,
            server_samples,
            vectors,
            notes,
        }
    }

    /// Whether anything of the run could be read: its configuration, its summary or some of
    /// its intervals.
    pub fn holds_anything(&self) -> bool {
        self.config_written.is_some()
            || self.summary.is_some()
            || !self.intervals.is_empty()
            || self.logged_intervals > 0
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

    /// The attempted rate of an open-loop run, per second: what the run's process sent
    /// ([`RunSettings::process_rate`]), so a fleet's worker's directory shows its share, as
    /// its summary.json does; the mode's rate when config.json could not be read.
    pub fn attempted_rate(&self) -> Option<f64> {
        match self.mode {
            Some(LoadMode::Open { rate_per_s, .. }) => Some(
                self.config
                    .as_ref()
                    .and_then(RunSettings::process_rate)
                    .unwrap_or(rate_per_s),
            ),
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
        match (&self.summary, &self.config) {
            (Some(s), _) => Some(s.workload.clone()),
            (None, Some(c)) => Some(c.workload.name.clone()),
            (None, None) => None,
        }
    }
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
const MAX_RUN_FILE_BYTES: u64 = crate::usage::MAX_DATA_FILE_BYTES;

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
    crate::usage::read_bounded(path, MAX_RUN_FILE_BYTES)
        .map_err(|e| format!("could not be read: {e}"))
}

/// histograms.hlog: how many intervals it holds (of response times, `<op>.rt` and
/// `warmup.<op>.rt`, or of the client's hiccups), and the sum of the measured response times
/// (`<op>.rt`) over the run. Reading stops at a line that does not parse (a crash can tear
/// the last one), with a note.
pub fn read_hlog(bytes: &[u8], notes: &mut Vec<String>) -> (usize, Option<Percentiles>) {
    let mut starts: BTreeSet<u64> = BTreeSet::new();
    let mut whole = new_histogram();
    let mut unaddable = 0;
    let keep = |tag: &str| {
        is_measured_response_tag(tag)
            || (tag.starts_with("warmup.") && tag.ends_with(".rt"))
            || tag == HICCUP_TAG
    };
    for_each_interval(bytes, HISTOGRAMS_HLOG, notes, keep, |interval| {
        starts.insert((interval.start_s * 1000.0).round() as u64);
        // Histograms that cannot be added (another precision) are rare enough to skip.
        if is_measured_response_tag(interval.tag) && whole.add(&interval.histogram).is_err() {
            unaddable += 1;
        }
    });
    if unaddable > 0 {
        notes.push(format!(
            "{HISTOGRAMS_HLOG}: {unaddable} histogram(s) could not be added up and were left out."
        ));
    }
    (starts.len(), Percentiles::of(&whole))
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
                .filter_map(|n| n.strip_suffix(HGRM).map(str::to_string))
                .filter(|n| !n.ends_with(".service"))
                .collect();
            names.sort();
            ops = names;
        }
    }
    let mut spectra = Vec::new();
    for op in ops {
        let path = dir.join(format!("{op}{HGRM}"));
        let Ok(text) = crate::usage::read_bounded_text(&path, crate::usage::MAX_INPUT_FILE_BYTES)
        else {
            continue;
        };
        match parse_hgrm(&op, &text) {
            Some(spectrum) => spectra.push(spectrum),
            None => notes.push(format!("{op}{HGRM} could not be read.")),
        }
    }
    spectra
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::run_fixture;

    /// The log's intervals are counted, and its measured response times summed: neither the
    /// warmup's, nor the hiccups, nor recall.
    #[test]
    fn a_histogram_log_gives_its_intervals_and_its_measured_whole() {
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
            let tag = if i < 10 {
                "warmup.write.rt"
            } else {
                "write.rt"
            };
            log.write_interval(Some(tag), at, second, &with(i + 1))
                .unwrap();
            log.write_interval(Some("write.recall"), at, second, &with(7))
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
        let (logged, whole) = read_hlog(&bytes, &mut notes);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(logged, 200);
        assert_eq!(whole.unwrap().count, (11..=200).sum::<u64>() + 1000);
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
            run.sla.as_ref().map(ToString::to_string).as_deref(),
            Some("p99.9<100ms, max<50ms, read:p99<5ms, window=5s")
        );
        assert_eq!(run.config.as_ref().unwrap().workload.name, "timeseries");
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
        // One histogram-log interval per second.
        assert_eq!(run.logged_intervals, 10);
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

    /// Worker 2 of a fleet of 4 at 1000/s attempted 250/s: its directory's report says so,
    /// as its summary.json does, not the fleet's rate.
    #[test]
    fn a_fleet_workers_directory_shows_its_share_of_the_rate() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "intervals.csv",
            "histograms.hlog",
            "read.hgrm",
            "write.hgrm",
        ] {
            fs::copy(run_fixture().join(name), dir.path().join(name)).unwrap();
        }
        let mut config = RunSettings::read(&run_fixture()).unwrap();
        config.worker = Some(crate::results::config::WorkerSlot::new(
            2,
            4,
            std::time::SystemTime::UNIX_EPOCH,
        ));
        config.write(dir.path()).unwrap();
        let mut summary = RunSummary::read(&run_fixture()).unwrap();
        summary.attempted_rate_per_s = config.process_rate();
        summary.write(dir.path()).unwrap();
        let run = RunData::load(dir.path(), "worker-2".into());
        assert_eq!(run.attempted_rate(), Some(250.0));
        assert_eq!(
            run.attempted_rate(),
            run.summary.unwrap().attempted_rate_per_s
        );
        // The fleet's own directory (no worker slot) shows the whole rate.
        let whole = RunData::load(&run_fixture(), "run".into());
        assert_eq!(whole.attempted_rate(), Some(1000.0));
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
        assert_eq!(run.logged_intervals, 10);
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
}
