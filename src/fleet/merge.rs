//! `headroom merge`: the run directories of a fleet's workers added into one run directory,
//! as if one process had sent the whole schedule.
//!
//! Histograms are added, never percentiles averaged: each worker's histogram log is read
//! interval by interval, every interval placed on absolute time (the worker's time zero plus
//! its offset) and added to the merged interval it falls in, tag by tag. From the merged
//! intervals the merged run is written by the writers of a single run (`run::files`):
//! histograms.hlog, intervals.csv, the SLA judged again window by window on the merged
//! histograms, the `<op>.hgrm` distributions, and summary.json, whose requests, errors by
//! class, rates and client cost are the workers' sums, with each worker's own figures beside
//! them ([`WorkerFigures`]). `report`, `compare` and the capacity files read the result as
//! any run directory.
//!
//! A merge refuses (exit 2, nothing written) directories that are no worker's, workers of
//! different fleets, workloads, schedules, SLAs or interval lengths, a worker given twice,
//! and a fleet with a worker missing; it warns when the workers' start times differ by more
//! than a tenth of the interval, and says by how much. Closed-loop workers merge too (the
//! fleet's concurrency is their sum): a fleet's probe of the cluster's ceiling.
//!
//! **Why one file near the 800-line limit.** A merge is one pass (read and check the workers,
//! add their intervals, sum their figures) over the workers' types; what grows next here (the
//! populate's merge, say) goes to a file of its own.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use hdrhistogram::Histogram;

use crate::engine::{Interval, LoadMode, StopReason};
use crate::metrics::{ErrorClass, OpHistograms, Phase};
use crate::results::config::{FleetOrigin, RunSettings, WorkerSlot};
use crate::results::hlog::{encoded_intervals, EncodedInterval, HICCUP_TAG};
use crate::results::intervals_csv::parse_intervals;
use crate::results::summary::{
    ClientCost, Latency, OpSummary, PopulateSummary, RunSummary, SlaSummary, WorkerFigures,
};
use crate::run::files::RunFiles;
use crate::run::policy::run_threads;
use crate::sla::{ClientFigures, Validity, ValidityVerdict};
use crate::stats::new_histogram;
use crate::usage::UsageError;

/// One worker's run directory, read.
struct Worker {
    dir: PathBuf,
    settings: RunSettings,
    slot: WorkerSlot,
    start: SystemTime,
    summary: RunSummary,
    hlog: Vec<u8>,
    csv: String,
}

/// The workers' directories, read and checked: one fleet, ready to merge.
pub struct Fleet {
    workers: Vec<Worker>,
    /// Things the user should know (clock skew), one sentence each.
    pub warnings: Vec<String>,
}

/// Reads and checks the workers' run directories `dirs`; a refusal is a [`UsageError`], and
/// nothing is written.
pub fn read(dirs: &[PathBuf]) -> anyhow::Result<Fleet> {
    let workers = read_workers(dirs)?;
    let warnings = check(&workers)?;
    Ok(Fleet { workers, warnings })
}

impl Fleet {
    /// How many workers.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    /// Whether there is none (never, once read).
    pub fn is_empty(&self) -> bool {
        self.workers.is_empty()
    }

    /// Writes the merged run directory into `out` (which the caller has claimed);
    /// `command_line` is the merge's, for config.json. Returns its summary.
    pub fn write(&self, out: &Path, command_line: Vec<String>) -> anyhow::Result<RunSummary> {
        merge(&self.workers, out, command_line)
    }
}

fn merge(workers: &[Worker], out: &Path, command_line: Vec<String>) -> anyhow::Result<RunSummary> {
    let first = &workers[0];
    let t0 = workers
        .iter()
        .map(|w| w.start)
        .min()
        .expect("one worker at least");
    let interval_s = first.settings.interval_s;
    let op_names = op_names(workers);

    // Every worker's intervals, placed on the merged time line.
    let mut slots: BTreeMap<u64, Slot> = BTreeMap::new();
    let mut notes = Vec::new();
    for worker in workers {
        let shift_s = worker
            .start
            .duration_since(t0)
            .unwrap_or_default()
            .as_secs_f64();
        let index_of = |start_s: f64| ((shift_s + start_s) / interval_s).round().max(0.0) as u64;
        let label = format!("{}/histograms.hlog", worker.dir.display());
        for entry in encoded_intervals(&worker.hlog, &label, &mut notes) {
            let slot = slots.entry(index_of(entry.start_s)).or_default();
            slot.length_s = slot.length_s.max(entry.length_s);
            slot.add(&entry, &op_names)?;
        }
        let (rows, _) = parse_intervals(&worker.csv, &mut notes);
        let mut backlog_seen = BTreeMap::new();
        for row in rows {
            let slot = slots
                .entry(index_of(row.start_s))
                .or_default()
                .sized(op_names.len());
            let Some(op) = op_names.iter().position(|o| *o == row.op) else {
                continue;
            };
            let phase = if row.phase == "warmup" {
                Phase::Warmup
            } else {
                Phase::Measure
            };
            slot.errors[op][phase.index()] += row.errors;
            if let Some(b) = row.backlog {
                backlog_seen.insert(index_of(row.start_s), b);
            }
        }
        for (index, backlog) in backlog_seen {
            slots.entry(index).or_default().backlog += backlog;
        }
    }
    if let Some(note) = notes.first() {
        return Err(UsageError::new(format!("cannot merge: {note}")).into());
    }

    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut settings = first.settings.clone();
    settings.worker = None;
    settings.threads = workers.iter().map(|w| run_threads(&w.settings)).sum();
    settings.threads_from_rate = false;
    settings.mode = fleet_mode(settings.mode, workers.len());
    settings.command_line = command_line;
    settings.fleet = Some(FleetOrigin {
        workers: first.slot.count,
        start_at: crate::results::config::rfc3339(t0),
        dirs: workers
            .iter()
            .map(|w| w.dir.display().to_string())
            .collect(),
    });
    settings.write(out)?;

    let planned = settings
        .duration_s
        .map(|d| Duration::from_secs_f64(d + settings.warmup_s));
    let mut files = RunFiles::create(
        out,
        t0,
        &op_names,
        settings.warmup_s,
        planned,
        settings.sla.clone(),
        true,
    )?;
    let mut totals: Vec<[OpHistograms; 2]> = vec![Default::default(); op_names.len()];
    let mut hiccups = new_histogram();
    let mut max_backlog = 0;
    for (index, slot) in slots {
        let interval = slot.into_interval(index, interval_s);
        files.interval(&interval);
        for (total, ops) in totals.iter_mut().zip(&interval.ops) {
            for phase in Phase::ALL {
                total[phase.index()].add(&ops[phase.index()]);
            }
        }
        if let Some(h) = &interval.hiccups {
            hiccups.add(h).expect("auto-resizing histograms always add");
        }
        max_backlog = max_backlog.max(interval.backlog);
    }
    // The merged run ran its measured part to the end when every worker did.
    let completed = workers
        .iter()
        .all(|w| w.summary.stop == StopReason::Completed);
    files.judge_last(completed);
    let client_decided = files.client_decided();
    let verdict = files.finish()?;
    for (i, name) in op_names.iter().enumerate() {
        let stats = &totals[i][Phase::Measure.index()];
        if stats.ok > 0 {
            crate::results::hgrm::write_file(
                &out.join(format!("{name}.hgrm")),
                &stats.response_ns,
            )?;
            crate::results::hgrm::write_file(
                &out.join(format!("{name}.service.hgrm")),
                &stats.service_ns,
            )?;
        }
    }
    let mut summary = summarize(
        workers,
        &op_names,
        &totals,
        &hiccups,
        max_backlog,
        client_decided,
        verdict,
        t0,
    );
    summary.populate = merge_populate(workers, out)?;
    summary.write(out)?;
    Ok(summary)
}

/// The workers' populates added: rows and errors summed, over the longest one's time; the
/// writes' histograms added from each worker's populate.hlog, and written as the merged
/// populate.hgrm and populate.service.hgrm.
fn merge_populate(workers: &[Worker], out: &Path) -> anyhow::Result<Option<PopulateSummary>> {
    let populates: Vec<(&Worker, &PopulateSummary)> = workers
        .iter()
        .filter_map(|w| w.summary.populate.as_ref().map(|p| (w, p)))
        .collect();
    let Some((_, first)) = populates.first() else {
        return Ok(None);
    };
    let seconds = populates.iter().map(|(_, p)| p.seconds).fold(0.0, f64::max);
    let written: u64 = populates.iter().map(|(_, p)| p.written).sum();
    let mut merged = PopulateSummary {
        rows: populates.iter().map(|(_, p)| p.rows).sum(),
        written,
        errors: populates.iter().map(|(_, p)| p.errors).sum(),
        seconds,
        rate_per_s: written as f64 / seconds.max(1e-9),
        writes: None,
    };
    // Summaries written before the writes were measured have none to add.
    let Some(op) = first.writes.as_ref().map(|w| w.op.clone()) else {
        return Ok(Some(merged));
    };
    if populates.iter().any(|(_, p)| p.writes.is_none()) {
        return Ok(Some(merged));
    }
    let mut histograms = [new_histogram(), new_histogram(), new_histogram()];
    let tags = ["rt", "st", "wt"].map(|t| format!("{op}.{t}"));
    let mut writes = OpSummary::of(&op, &OpHistograms::default(), seconds);
    let mut notes = Vec::new();
    for (worker, populate) in &populates {
        let path = worker.dir.join(crate::run::populate::POPULATE_HLOG);
        let bytes = crate::usage::read_bounded(&path, crate::usage::MAX_DATA_FILE_BYTES)
            .with_context(|| format!("reading {}", path.display()))?;
        let label = path.display().to_string();
        crate::results::hlog::for_each_interval(
            &bytes,
            &label,
            &mut notes,
            |tag| tags.iter().any(|t| t == tag),
            |interval| {
                let i = tags.iter().position(|t| t == interval.tag).expect("kept");
                histograms[i]
                    .add(&interval.histogram)
                    .expect("auto-resizing histograms always add");
            },
        );
        let w = populate.writes.as_ref().expect("checked above");
        writes.requests += w.requests;
        writes.ok += w.ok;
        for (class, n) in &w.errors {
            *writes.errors.entry(class.clone()).or_default() += n;
        }
        for (class, example) in &w.error_examples {
            writes
                .error_examples
                .entry(class.clone())
                .or_insert_with(|| example.clone());
        }
    }
    if let Some(note) = notes.first() {
        anyhow::bail!("{note}");
    }
    let [response, service, wait] = &histograms;
    writes.rate_per_s = writes.requests as f64 / seconds.max(1e-9);
    writes.response_time = Latency::of(response);
    writes.service_time = Latency::of(service);
    writes.wait_time = Latency::of(wait);
    if writes.ok > 0 {
        for (name, histogram) in crate::run::populate::POPULATE_HGRM
            .iter()
            .zip([response, service])
        {
            crate::results::hgrm::write_file(&out.join(name), histogram)?;
        }
    }
    merged.writes = Some(writes);
    Ok(Some(merged))
}

/// The histograms and counts of one merged interval.
#[derive(Default)]
struct Slot {
    length_s: f64,
    /// Per op type and phase: response, service and wait histograms.
    ops: Vec<[[Option<Histogram<u64>>; 3]; 2]>,
    /// Per op type and phase: failed requests.
    errors: Vec<[u64; 2]>,
    hiccups: Option<Histogram<u64>>,
    backlog: u64,
}

impl Slot {
    /// Room for `n_ops` op types.
    fn sized(&mut self, n_ops: usize) -> &mut Slot {
        if self.ops.len() < n_ops {
            self.ops.resize(n_ops, Default::default());
            self.errors.resize(n_ops, [0; 2]);
        }
        self
    }

    fn add(&mut self, entry: &EncodedInterval, op_names: &[String]) -> anyhow::Result<()> {
        self.sized(op_names.len());
        let histogram = entry.decode().ok_or_else(|| {
            UsageError::new(format!(
                "cannot merge: a histogram of tag {} could not be decoded",
                entry.tag
            ))
        })?;
        let target = if entry.tag == HICCUP_TAG {
            &mut self.hiccups
        } else {
            let (phase, rest) = match entry.tag.strip_prefix("warmup.") {
                Some(rest) => (Phase::Warmup, rest),
                None => (Phase::Measure, entry.tag.as_str()),
            };
            let Some((op, kind)) = rest.rsplit_once('.') else {
                return Ok(());
            };
            let kind = match kind {
                "rt" => 0,
                "st" => 1,
                "wt" => 2,
                _ => return Ok(()),
            };
            let Some(op) = op_names.iter().position(|o| o == op) else {
                return Ok(());
            };
            &mut self.ops[op][phase.index()][kind]
        };
        target
            .get_or_insert_with(new_histogram)
            .add(&histogram)
            .expect("auto-resizing histograms always add");
        Ok(())
    }

    fn into_interval(self, index: u64, interval_s: f64) -> Interval {
        let n_ops = self.errors.len().max(self.ops.len());
        let mut ops: Vec<[OpHistograms; 2]> = vec![Default::default(); n_ops];
        for (op, phases) in self.ops.into_iter().enumerate() {
            for (phase, [response, service, wait]) in phases.into_iter().enumerate() {
                let stats = &mut ops[op][phase];
                if let Some(h) = response {
                    stats.ok = h.len();
                    stats.response_ns = h;
                }
                if let Some(h) = service {
                    stats.service_ns = h;
                }
                if let Some(h) = wait {
                    stats.wait_ns = h;
                }
            }
        }
        for (op, phases) in self.errors.iter().enumerate() {
            for (phase, errors) in phases.iter().enumerate() {
                // Per interval the logs keep how many failed, not of which class: the
                // classes are the workers' summaries' (summed in summary.json).
                if *errors > 0 {
                    ops[op][phase].errors.insert(ErrorClass::Other, *errors);
                }
            }
        }
        let interval_ns = (interval_s * 1e9) as u64;
        Interval {
            index,
            start_ns: index * interval_ns,
            length_ns: ((self.length_s * 1e9) as u64).max(1),
            ops,
            hiccups: self.hiccups,
            backlog: self.backlog,
        }
    }
}

/// Reads every directory; refuses one that is not a finished worker's.
fn read_workers(dirs: &[PathBuf]) -> anyhow::Result<Vec<Worker>> {
    if dirs.is_empty() {
        return Err(UsageError::new("merge: give the workers' run directories").into());
    }
    let mut workers = Vec::new();
    for dir in dirs {
        let refuse = |why: String| -> anyhow::Error {
            UsageError::new(format!("cannot merge {}: {why}", dir.display())).into()
        };
        if !dir.join(crate::results::config::CONFIG_JSON).is_file() {
            return Err(refuse("it is not a run directory (no config.json)".into()));
        }
        let settings = RunSettings::read(dir).map_err(|e| refuse(format!("{e:#}")))?;
        let Some(slot) = settings.worker.clone() else {
            return Err(refuse(
                "it is not a fleet worker's run (its config.json has no --worker)".into(),
            ));
        };
        let start = slot
            .start_time()
            .ok_or_else(|| refuse(format!("its start time '{}' does not read", slot.start_at)))?;
        let summary = RunSummary::read(dir).map_err(|_| {
            refuse("it has no summary.json: the worker did not finish its run".into())
        })?;
        let hlog = crate::usage::read_bounded(
            &dir.join("histograms.hlog"),
            crate::usage::MAX_DATA_FILE_BYTES,
        )
        .map_err(|e| refuse(format!("histograms.hlog: {e}")))?;
        let csv = crate::usage::read_bounded_text(
            &dir.join("intervals.csv"),
            crate::usage::MAX_DATA_FILE_BYTES,
        )
        .map_err(|e| refuse(format!("intervals.csv: {e}")))?;
        workers.push(Worker {
            dir: dir.clone(),
            settings,
            slot,
            start,
            summary,
            hlog,
            csv,
        });
    }
    workers.sort_by_key(|w| w.slot.index);
    Ok(workers)
}

/// Refuses workers that do not make one fleet; warns of skewed start times.
fn check(workers: &[Worker]) -> Result<Vec<String>, UsageError> {
    let first = &workers[0];
    let n = first.slot.count;
    let same = |what: &str, differs: &dyn Fn(&Worker) -> bool| -> Result<(), UsageError> {
        match workers.iter().find(|w| differs(w)) {
            Some(w) => Err(UsageError::new(format!(
                "cannot merge: {} and {} have different {what}; a fleet's workers run one \
                 config.json",
                first.dir.display(),
                w.dir.display()
            ))),
            None => Ok(()),
        }
    };
    same("fleet sizes (N of --worker K/N)", &|w| w.slot.count != n)?;
    let json = |w: &Worker| serde_json::to_string(&w.settings.workload).unwrap_or_default();
    same("workloads", &|w| json(w) != json(first))?;
    same("schedules (rate, arrivals, in-flight limit)", &|w| {
        w.settings.mode != first.settings.mode
    })?;
    same("lengths (warmup, duration or request count)", &|w| {
        (w.settings.warmup_s, w.settings.duration_s, w.settings.ops)
            != (
                first.settings.warmup_s,
                first.settings.duration_s,
                first.settings.ops,
            )
    })?;
    same("SLAs", &|w| {
        w.settings.sla.as_ref().map(|s| (s.to_string(), s.window))
            != first
                .settings
                .sla
                .as_ref()
                .map(|s| (s.to_string(), s.window))
    })?;
    same("interval lengths", &|w| {
        w.settings.interval_s != first.settings.interval_s
    })?;
    same("seeds", &|w| {
        w.settings.workload.seed != first.settings.workload.seed
    })?;
    same("versions of headroom", &|w| {
        w.settings.headroom_version != first.settings.headroom_version
    })?;
    for pair in workers.windows(2) {
        if pair[0].slot.index == pair[1].slot.index {
            return Err(UsageError::new(format!(
                "cannot merge: worker {} of {n} is given twice ({} and {})",
                pair[0].slot.index,
                pair[0].dir.display(),
                pair[1].dir.display()
            )));
        }
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !workers.iter().any(|w| w.slot.index == *k))
        .map(|k| k.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(UsageError::new(format!(
            "cannot merge: worker(s) {} of {n} missing; the merged run would lack their share \
             of the schedule",
            missing.join(", ")
        )));
    }
    let mut warnings = Vec::new();
    let (earliest, latest) = (
        workers.iter().map(|w| w.start).min().expect("workers"),
        workers.iter().map(|w| w.start).max().expect("workers"),
    );
    let skew = latest.duration_since(earliest).unwrap_or_default();
    if skew.as_secs_f64() > first.settings.interval_s / 10.0 {
        warnings.push(format!(
            "the workers' start times differ by {:.3} s, more than a tenth of the {} s interval: \
             their intervals are placed on absolute time, but requests meant to be sent together \
             were not (different --start-at, or clocks out of step)",
            skew.as_secs_f64(),
            first.settings.interval_s
        ));
    }
    Ok(warnings)
}

/// The fleet's load: an open loop's schedule is the workers' one; a closed loop keeps every
/// worker's requests in flight together.
fn fleet_mode(mode: LoadMode, workers: usize) -> LoadMode {
    match mode {
        LoadMode::Closed { concurrency } => LoadMode::Closed {
            concurrency: concurrency * workers,
        },
        open => open,
    }
}

/// The op types, in the first worker's order, then any only another had.
fn op_names(workers: &[Worker]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for w in workers {
        for op in w.summary.ops.iter().chain(&w.summary.warmup) {
            if !names.contains(&op.op) {
                names.push(op.op.clone());
            }
        }
    }
    names
}

/// summary.json of the merged run.
#[allow(clippy::too_many_arguments)]
fn summarize(
    workers: &[Worker],
    op_names: &[String],
    totals: &[[OpHistograms; 2]],
    hiccups: &Histogram<u64>,
    max_backlog: u64,
    client_decided: u64,
    verdict: Option<(crate::sla::Sla, crate::sla::RunVerdict)>,
    t0: SystemTime,
) -> RunSummary {
    let first = &workers[0].summary;
    let measured_s = workers
        .iter()
        .map(|w| w.summary.measured_s)
        .fold(0.0, f64::max)
        .max(1e-9);
    let rate_sum = |rate: fn(&RunSummary) -> f64| {
        workers
            .iter()
            .map(|w| rate(&w.summary) * w.summary.measured_s)
            .sum::<f64>()
            / measured_s
    };
    let phase = |p: Phase, seconds: f64| -> Vec<OpSummary> {
        op_names
            .iter()
            .enumerate()
            .filter_map(|(i, name)| {
                let of_workers = workers.iter().filter_map(|w| {
                    let list = if p == Phase::Measure {
                        &w.summary.ops
                    } else {
                        &w.summary.warmup
                    };
                    list.iter().find(|o| o.op == *name)
                });
                let mut ok = 0;
                let mut errors: BTreeMap<String, u64> = BTreeMap::new();
                let mut examples: BTreeMap<String, String> = BTreeMap::new();
                for op in of_workers {
                    ok += op.ok;
                    for (class, n) in &op.errors {
                        *errors.entry(class.clone()).or_insert(0) += n;
                    }
                    for (class, example) in &op.error_examples {
                        examples
                            .entry(class.clone())
                            .or_insert_with(|| example.clone());
                    }
                }
                let requests = ok + errors.values().sum::<u64>();
                if requests == 0 {
                    return None;
                }
                let mut summary = OpSummary::of(name, &totals[i][p.index()], seconds);
                summary.requests = requests;
                summary.ok = ok;
                summary.errors = errors;
                summary.error_examples = examples;
                summary.rate_per_s = if seconds > 0.0 {
                    requests as f64 / seconds
                } else {
                    0.0
                };
                Some(summary)
            })
            .collect()
    };
    let ops = phase(Phase::Measure, measured_s);
    let sent: f64 = workers
        .iter()
        .map(|w| {
            let c = &w.summary.client;
            if c.cpu_us_per_request > 0.0 {
                c.cpu_s * 1e6 / c.cpu_us_per_request
            } else {
                0.0
            }
        })
        .sum();
    let cpu_s: f64 = workers.iter().map(|w| w.summary.client.cpu_s).sum();
    let hiccup = Latency::of(hiccups);
    let validity = validity(workers, totals, &hiccup, max_backlog, client_decided, cpu_s);
    let stop = workers
        .iter()
        .map(|w| w.summary.stop)
        .find(|s| *s != StopReason::Completed)
        .unwrap_or(StopReason::Completed);
    RunSummary {
        headroom_version: first.headroom_version.clone(),
        workload: first.workload.clone(),
        mode: fleet_mode(workers[0].settings.mode, workers.len()),
        latency_kind: first.latency_kind.clone(),
        stop,
        started_at: humantime::format_rfc3339_millis(t0).to_string(),
        warmup_s: first.warmup_s,
        measured_s,
        attempted_rate_per_s: match workers[0].settings.mode {
            LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
            LoadMode::Closed { .. } => None,
        },
        achieved_rate_per_s: rate_sum(|s| s.achieved_rate_per_s),
        failed_rate_per_s: rate_sum(|s| s.failed_rate_per_s),
        max_backlog,
        unsent_requests: workers.iter().map(|w| w.summary.unsent_requests).sum(),
        validity: Some(validity),
        ops,
        warmup: phase(Phase::Warmup, first.warmup_s),
        // Added by `merge_populate`, which reads the workers' populate.hlog.
        populate: None,
        client: ClientCost {
            cpu_s,
            cpu_us_per_request: if sent > 0.0 { cpu_s * 1e6 / sent } else { 0.0 },
            peak_rss_bytes: workers
                .iter()
                .map(|w| w.summary.client.peak_rss_bytes)
                .max()
                .unwrap_or(0),
            hiccup_max_ms: hiccup.max_ms,
            hiccup_p999_ms: hiccup.p999_ms,
        },
        sla: verdict.map(|(sla, verdict)| SlaSummary {
            spec: sla.to_string(),
            window_s: sla.window.as_secs_f64(),
            verdict,
        }),
        workers: workers.iter().map(worker_figures).collect(),
    }
}

/// One worker's own figures: its rates, its send lag (from its `.wt` tags), its cost.
fn worker_figures(worker: &Worker) -> WorkerFigures {
    let mut lag = new_histogram();
    let mut notes = Vec::new();
    for entry in encoded_intervals(&worker.hlog, "histograms.hlog", &mut notes) {
        if entry.tag.ends_with(".wt") && !entry.tag.starts_with("warmup.") {
            if let Some(h) = entry.decode() {
                lag.add(&h).expect("auto-resizing histograms always add");
            }
        }
    }
    let lag = Latency::of(&lag);
    let s = &worker.summary;
    WorkerFigures {
        index: worker.slot.index,
        dir: worker.dir.display().to_string(),
        attempted_rate_per_s: s.attempted_rate_per_s.unwrap_or(0.0),
        achieved_rate_per_s: s.achieved_rate_per_s,
        failed_rate_per_s: s.failed_rate_per_s,
        send_lag_p99_ms: lag.p99_ms,
        send_lag_max_ms: lag.max_ms,
        cpu_us_per_request: s.client.cpu_us_per_request,
        valid: s.is_valid(),
        stop: s.stop,
    }
}

/// The merged run's validity: decided again on the fleet's figures (summed counts, merged
/// waits, the windows judged on the merged histograms); client-bound, too, when any worker
/// was, naming it.
#[allow(clippy::too_many_arguments)]
fn validity(
    workers: &[Worker],
    totals: &[[OpHistograms; 2]],
    hiccup: &Latency,
    max_backlog: u64,
    client_decided: u64,
    cpu_s: f64,
) -> Validity {
    let figures: Vec<&ClientFigures> = workers
        .iter()
        .filter_map(|w| w.summary.validity.as_ref().map(|v| &v.figures))
        .collect();
    let mut wait = new_histogram();
    for stats in totals {
        wait.add(&stats[Phase::Measure.index()].wait_ns)
            .expect("auto-resizing histograms always add");
    }
    let wait = Latency::of(&wait);
    let threads: usize = workers.iter().map(|w| run_threads(&w.settings)).sum();
    let wall_s = workers
        .iter()
        .map(|w| w.summary.warmup_s + w.summary.measured_s)
        .fold(0.0, f64::max)
        .max(1e-9);
    let merged = ClientFigures {
        threads,
        cpu_share_of_threads: cpu_s / (wall_s * threads.max(1) as f64),
        wait_p99_ms: wait.p99_ms,
        wait_p999_ms: wait.p999_ms,
        wait_max_ms: wait.max_ms,
        lag_limit_ms: figures.first().map_or(0.0, |f| f.lag_limit_ms),
        hiccup_p999_ms: hiccup.p999_ms,
        hiccup_max_ms: hiccup.max_ms,
        max_backlog,
        unsent: figures.iter().map(|f| f.unsent).sum(),
        unsent_held: figures.iter().any(|f| f.unsent_held),
        limit_waits: figures.iter().map(|f| f.limit_waits).sum(),
        late_sends: figures.iter().map(|f| f.late_sends).sum(),
        measured_requests: figures.iter().map(|f| f.measured_requests).sum(),
        client_decided_windows: client_decided,
    };
    let open = matches!(workers[0].settings.mode, LoadMode::Open { .. });
    let mut validity = Validity::decide(merged, open);
    let bound: Vec<String> = workers
        .iter()
        .filter_map(|w| {
            let v = w.summary.validity.as_ref()?;
            (!v.is_valid()).then(|| {
                let why: Vec<&str> = v
                    .reasons
                    .iter()
                    .filter(|r| !r.starts_with("figures:"))
                    .map(String::as_str)
                    .collect();
                format!(
                    "worker {} could not keep its schedule: {}",
                    w.slot.index,
                    why.join("; ")
                )
            })
        })
        .collect();
    if !bound.is_empty() {
        if validity.is_valid() {
            validity.advice = Some(
                "give that worker more --threads (and cores), a machine of its own, or add \
                 workers; the server was not the limit, so this run says nothing about it"
                    .to_string(),
            );
        }
        validity.verdict = ValidityVerdict::ClientBound;
        let mut reasons = bound;
        reasons.append(&mut validity.reasons);
        validity.reasons = reasons;
    }
    validity
}
