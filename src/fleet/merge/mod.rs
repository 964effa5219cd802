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
//!
//! `workers.rs` reads the workers' directories and checks they are one fleet; `summary.rs`
//! sums their figures into the merged summary (and the populate's).

mod summary;
mod workers;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use hdrhistogram::Histogram;

use crate::catalogue::{HGRM, HISTOGRAMS_HLOG, VECTORS_JSON};
use crate::engine::{Interval, StopReason};
use crate::metrics::{ErrorClass, OpHistograms, Phase};
use crate::results::config::FleetOrigin;
use crate::results::hlog::{encoded_intervals, EncodedInterval, HICCUP_TAG};
use crate::results::intervals_csv::parse_intervals;
use crate::results::summary::RunSummary;
use crate::run::files::RunFiles;
use crate::run::policy::run_threads;
use crate::stats::new_histogram;
use crate::usage::UsageError;

use summary::{merge_populate, summarize};
use workers::{check, fleet_mode, op_names, read_workers, Worker};

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
        let label = format!("{}/{HISTOGRAMS_HLOG}", worker.dir.display());
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
            let errors = &mut slot.errors[op][phase.index()];
            *errors = errors.saturating_add(row.errors);
            if let Some(b) = row.backlog {
                backlog_seen.insert(index_of(row.start_s), b);
            }
        }
        for (index, backlog) in backlog_seen {
            // Saturating: a worker's backlog that overflowed is u64::MAX already.
            let sum = &mut slots.entry(index).or_default().backlog;
            *sum = sum.saturating_add(backlog);
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
    // The workers searched the same vectors with the same truth (a function of the seed):
    // the first one's account of them is the merged run's.
    let vectors = first.dir.join(VECTORS_JSON);
    if vectors.is_file() {
        fs::copy(&vectors, out.join(VECTORS_JSON))
            .with_context(|| format!("copying {}", vectors.display()))?;
    }

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
                &out.join(format!("{name}{HGRM}")),
                &stats.response_ns,
            )?;
            crate::results::hgrm::write_file(
                &out.join(format!("{name}.service{HGRM}")),
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

/// The histograms and counts of one merged interval.
#[derive(Default)]
struct Slot {
    length_s: f64,
    /// Per op type and phase: response, service and wait histograms, and recall.
    ops: Vec<[[Option<Histogram<u64>>; 4]; 2]>,
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
                "recall" => 3,
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
            for (phase, [response, service, wait, recall]) in phases.into_iter().enumerate() {
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
                stats.recall = recall;
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
            // The workers' files keep no count in flight.
            in_flight: 0,
        }
    }
}
