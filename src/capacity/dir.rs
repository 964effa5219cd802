//! A capacity search's directory read back: capacity.json, and each trial's and the
//! probe's run directory (see [`crate::results::run_dir`]), for the report and the
//! comparisons.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

use super::settings::SearchSettings;
use super::{Summary as SearchSummary, TrialRecord};
use crate::catalogue::{CAPACITY_JSON, PROBE};
use crate::results::dir_label;
use crate::results::run_dir::RunData;
use crate::sla::Sla;

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
    /// capacity.json: the settings as written, the probe, the rows and the capacity.
    pub summary: SearchSummary,
    /// The settings, typed; `None` when capacity.json holds settings this version cannot
    /// read (a note says why).
    pub settings: Option<SearchSettings>,
    /// The SLA every window was judged by.
    pub sla: Option<Sla>,
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
        let path = dir.join(CAPACITY_JSON);
        let text = crate::usage::read_bounded_text(&path, crate::usage::MAX_INPUT_FILE_BYTES)
            .with_context(|| {
                format!(
                    "reading {}: a capacity search writes it after its first trial",
                    path.display()
                )
            })?;
        let summary: SearchSummary =
            serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
        let mut notes = Vec::new();
        let settings = match SearchSettings::deserialize(&summary.config) {
            Ok(settings) => Some(settings),
            Err(e) => {
                notes.push(format!(
                    "capacity.json holds settings this version of headroom cannot read ({}); \
                     they are shown as written.",
                    crate::usage::cut(&e.to_string(), 200)
                ));
                None
            }
        };
        let label = settings
            .as_ref()
            .and_then(|s| s.label.clone())
            .unwrap_or_else(|| dir_label(dir));
        let sla = settings.as_ref().map(|s| s.sla.clone());
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
                .then(|| RunData::load(&probe_dir, PROBE.to_string()))
        });
        Ok(SearchData {
            dir: dir.to_path_buf(),
            label,
            summary,
            settings,
            sla,
            trials,
            probe,
            notes,
        })
    }

    /// The records the search kept, the probe first, as capacity.jsonl holds them.
    pub fn records(&self) -> Vec<super::Record> {
        let probe = self.summary.outcome.probe.clone().map(super::Record::Probe);
        probe
            .into_iter()
            .chain(
                self.trials
                    .iter()
                    .map(|t| super::Record::Trial(t.record.clone())),
            )
            .collect()
    }

    /// The number of repeats per rate the search was configured with.
    pub fn repeats(&self) -> u32 {
        self.settings.as_ref().map_or(1, |s| s.repeats)
    }

    /// The workload's name.
    pub fn workload(&self) -> Option<String> {
        Some(self.settings.as_ref()?.run.workload.name.clone())
    }
}

/// A trial's label: its rate, and its repeat when there may be several.
fn trial_label(record: &TrialRecord) -> String {
    format!(
        "{}/s #{}",
        crate::format::format_rate(record.rate_per_s),
        record.repeat
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::capacity_fixture;

    #[test]
    fn a_capacity_search_reads_with_its_trials() {
        let search = SearchData::load(&capacity_fixture()).unwrap();
        assert_eq!(search.label, "capacity");
        assert_eq!(search.summary.outcome.capacity_per_s, Some(5200.0));
        assert_eq!(
            search.sla.as_ref().map(ToString::to_string).as_deref(),
            Some("p99<20ms, window=5s")
        );
        assert!(search.notes.is_empty(), "{:?}", search.notes);
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
        let figures = crate::figures::Timeline::load(failing);
        for (interval, p99) in [(3, 108.200), (4, 3.731), (5, 1.391), (6, 1.026)] {
            let latency = figures.intervals[interval].latency.unwrap().ms();
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
        assert_eq!(lowest.logged_intervals, 0);
        assert_eq!(lowest.whole.unwrap().p99_ms, 1.029631);
        assert!(lowest.notes.iter().any(|n| n.contains("histograms.hlog")));
    }
}
