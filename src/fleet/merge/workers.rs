//! The workers' run directories read, and checked to be one fleet's before anything is
//! written: the same workload, schedule, SLA and interval length, each worker once, none
//! missing.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::catalogue::{CONFIG_JSON, HISTOGRAMS_HLOG, INTERVALS_CSV};
use crate::engine::LoadMode;
use crate::results::config::{RunSettings, WorkerSlot};
use crate::results::summary::RunSummary;
use crate::usage::UsageError;

/// One worker's run directory, read.
pub(super) struct Worker {
    pub dir: PathBuf,
    pub settings: RunSettings,
    pub slot: WorkerSlot,
    pub start: SystemTime,
    pub summary: RunSummary,
    pub hlog: Vec<u8>,
    pub csv: String,
}

/// Reads every directory; refuses one that is not a finished worker's.
pub(super) fn read_workers(dirs: &[PathBuf]) -> anyhow::Result<Vec<Worker>> {
    if dirs.is_empty() {
        return Err(UsageError::new("merge: give the workers' run directories").into());
    }
    let mut workers = Vec::new();
    for dir in dirs {
        let refuse = |why: String| -> anyhow::Error {
            UsageError::new(format!("cannot merge {}: {why}", dir.display())).into()
        };
        if !dir.join(CONFIG_JSON).is_file() {
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
            &dir.join(HISTOGRAMS_HLOG),
            crate::usage::MAX_DATA_FILE_BYTES,
        )
        .map_err(|e| refuse(format!("{HISTOGRAMS_HLOG}: {e}")))?;
        let csv = crate::usage::read_bounded_text(
            &dir.join(INTERVALS_CSV),
            crate::usage::MAX_DATA_FILE_BYTES,
        )
        .map_err(|e| refuse(format!("{INTERVALS_CSV}: {e}")))?;
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
pub(super) fn check(workers: &[Worker]) -> Result<Vec<String>, UsageError> {
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
pub(super) fn fleet_mode(mode: LoadMode, workers: usize) -> LoadMode {
    match mode {
        LoadMode::Closed { concurrency } => LoadMode::Closed {
            concurrency: concurrency * workers,
        },
        open => open,
    }
}

/// The op types, in the first worker's order, then any only another had.
pub(super) fn op_names(workers: &[Worker]) -> Vec<String> {
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
