//! What a capacity search records about each run, one JSON object per line of
//! `capacity.jsonl`: the probe of the ceiling and every trial at a fixed attempted rate. These
//! types are the file format; the search's next step is a function of them alone. A trial's
//! record is made from its run's summary here ([`TrialRecord::from_summary`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use super::degraded::DownRecord;
use crate::engine::StopReason;
use crate::results::summary::RunSummary;
use crate::sla::{Judgement, Value};

/// The share of the attempted rate a trial must achieve to pass (METHOD.md §4): below it the
/// cluster did not carry the load, whatever its latencies.
pub const ACHIEVED_FRACTION: f64 = 0.99;

/// The [`TermValue::unit`] of a recall term's value.
pub const RECALL_UNIT: &str = "recall";

/// The worst window's value of one SLA term in one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TermValue {
    /// The term in its canonical spelling, e.g. `p99.9<100ms`.
    pub term: String,
    /// The worst window's value, in `unit` (for a latency term, of its answered requests).
    pub value: f64,
    /// `ms` for latencies, `%` for shares such as an error rate, [`RECALL_UNIT`] for a
    /// recall (a share between 0 and 1, whose worst window is its lowest).
    pub unit: String,
    /// Whether the term held in every window.
    pub pass: bool,
    /// The failed share of the worst window's requests, in percent; failed requests count as
    /// slower than any threshold.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_percent: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// A closed-loop run measuring the highest achieved throughput (the ceiling, C).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// Requests kept in flight.
    pub concurrency: usize,
    /// Throughput achieved over the measured period, per second.
    pub achieved_per_s: f64,
    /// Length of the measured period in seconds.
    pub seconds: f64,
    /// The directory holding the probe's own run files, relative to the search's directory.
    pub dir: String,
    /// The node kept down during the probe, in a degraded search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<DownRecord>,
}

/// One run at a fixed attempted rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// The attempted rate, per second.
    pub rate_per_s: f64,
    /// Which repeat of this rate, from 1.
    pub repeat: u32,
    /// The rate achieved over the measured period, per second: successful answers only.
    pub achieved_per_s: f64,
    /// Requests completed in the measured period.
    pub requests: u64,
    /// Requests that failed in the measured period.
    pub errors: u64,
    /// Whether every window met every SLA term.
    pub sla_pass: bool,
    /// The worst window's value of each SLA term.
    pub terms: Vec<TermValue>,
    /// The trial's verdict, by [`trial_passes`]; false for an invalid trial, which is not a
    /// fail either (see `invalid`).
    pub pass: bool,
    /// Why the trial failed, e.g. `p99.9<100ms failed in 2 of 3 windows`; `None` when it passed.
    pub reason: Option<String>,
    /// Why the trial measured the client rather than the server (`invalid: client-bound`),
    /// one sentence each; `None` for a valid trial. An invalid trial is neither a pass nor a
    /// fail, and the search stops at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<Vec<String>>,
    /// The directory holding the trial's own run files, relative to the search's directory.
    pub dir: String,
    /// Wall-clock seconds the trial took, preparation included.
    pub wall_s: f64,
    /// The node kept down during the trial, in a degraded search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<DownRecord>,
    /// Windows the SLA judged; `None` in records written before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<u32>,
    /// Of them, windows that failed the goal: a window over the SLA, or every window when the
    /// run did not carry the rate or did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_windows: Option<u32>,
    /// The mean recall of the measured part's ANN queries (every op type judged for recall,
    /// each request weighing the same; a failed request's counts 0); `None` for a workload
    /// without them and in records written before headroom measured recall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<f64>,
    /// What `--validate` found in the trial's data; `None` for a trial that did not validate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<crate::validation::DataCheck>,
}

/// The mean recall of a run's measured part over every op type judged for recall, each
/// request weighing the same; `None` when no op type has recall.
pub fn mean_recall(summary: &RunSummary) -> Option<f64> {
    let (sum, requests) = summary
        .ops
        .iter()
        .filter_map(|o| o.recall.as_ref())
        .fold((0.0, 0u64), |(sum, n), r| {
            (sum + r.mean * r.requests as f64, n + r.requests)
        });
    (requests > 0).then(|| sum / requests as f64)
}

impl TrialRecord {
    /// A trial's record, from its run's summary: the SLA's worst windows, the verdict
    /// ([`trial_passes`]) and why it failed or has none.
    pub fn from_summary(
        summary: &RunSummary,
        rate_per_s: f64,
        repeat: u32,
        dir: String,
        wall: Duration,
    ) -> TrialRecord {
        let requests: u64 = summary.ops.iter().map(|o| o.requests).sum();
        let errors: u64 = summary.ops.iter().map(|o| o.requests - o.ok).sum();
        let verdict = summary.sla.as_ref().map(|s| &s.verdict);
        let sla_pass = verdict.is_some_and(|v| v.pass);
        let terms = verdict
            .map(|v| {
                v.worst
                    .iter()
                    .map(|w| {
                        let (value, unit) = match w.value {
                            Some(Value::LatencyNs(ns)) => (ns as f64 / 1e6, "ms"),
                            Some(Value::Fraction(f)) => (f * 100.0, "%"),
                            Some(Value::Recall(r)) => (r, RECALL_UNIT),
                            None => (0.0, "ms"),
                        };
                        TermValue {
                            term: w.term.clone(),
                            value,
                            unit: unit.to_string(),
                            pass: w.failing_windows == 0,
                            failed_percent: if unit == "ms" {
                                w.failed_share * 100.0
                            } else {
                                0.0
                            },
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        let completed = summary.stop == StopReason::Completed;
        let (pass, mut reason) =
            trial_passes(rate_per_s, summary.achieved_rate_per_s, sla_pass, completed);
        // A client-bound trial is neither a pass nor a fail: it has no verdict; nor has one
        // whose SLA had nothing to judge (a term's operation never sent).
        let mut invalid = summary
            .validity
            .as_ref()
            .filter(|v| !v.is_valid())
            .map(|v| v.reasons.clone());
        if let Some(Judgement::NoVerdict(why)) = verdict.map(|v| v.judgement()) {
            invalid
                .get_or_insert_with(Vec::new)
                .push(format!("no verdict on the SLA: {why}"));
        }
        let pass = pass && invalid.is_none();
        if let Some(v) = verdict {
            if !v.pass {
                let failed: Vec<String> = v
                    .worst
                    .iter()
                    .filter(|w| w.failing_windows > 0)
                    .map(|w| {
                        format!(
                            "{} failed in {} of {} windows",
                            w.term,
                            w.failing_windows,
                            v.windows_of(w)
                        )
                    })
                    .collect();
                if !failed.is_empty() {
                    reason = Some(failed.join("; "));
                }
            }
        }
        let windows = verdict.map(|v| u32::try_from(v.windows).unwrap_or(u32::MAX));
        let carried = completed && summary.achieved_rate_per_s >= ACHIEVED_FRACTION * rate_per_s;
        let failed_windows = verdict.map(|v| {
            let all = u32::try_from(v.windows).unwrap_or(u32::MAX);
            if carried {
                u32::try_from(v.failing.len()).unwrap_or(u32::MAX).min(all)
            } else {
                all
            }
        });
        TrialRecord {
            rate_per_s,
            repeat,
            achieved_per_s: summary.achieved_rate_per_s,
            requests,
            errors,
            sla_pass,
            terms,
            pass,
            reason: if invalid.is_some() { None } else { reason },
            invalid,
            dir,
            wall_s: wall.as_secs_f64(),
            down: None,
            windows,
            failed_windows,
            recall: mean_recall(summary),
            data: summary.validation.as_ref().map(|v| v.brief()),
        }
    }
}

/// What `--validate` found over a search's trials; `None` when none validated.
pub fn data_verdict(records: &[Record]) -> Option<crate::validation::DataVerdict> {
    crate::validation::DataVerdict::of(records.iter().filter_map(|r| match r {
        Record::Trial(t) => t.data.map(|d| (d, Some(t.rate_per_s))),
        _ => None,
    }))
}

/// One line of `capacity.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Record {
    /// The probe of the ceiling.
    Probe(ProbeRecord),
    /// A trial at a fixed rate.
    Trial(TrialRecord),
}

/// A trial's verdict (METHOD.md §4): it passes when the run completed, every window met the
/// SLA (`sla_pass`) and the achieved rate is at least [`ACHIEVED_FRACTION`] of the attempted
/// one. Returns the verdict and, for a failure, the reasons joined by "; ". The SLA reason is
/// generic; a runner that knows which term failed in how many windows may replace it.
pub fn trial_passes(
    rate_per_s: f64,
    achieved_per_s: f64,
    sla_pass: bool,
    completed: bool,
) -> (bool, Option<String>) {
    let mut reasons = Vec::new();
    if !completed {
        reasons.push("the run did not complete".to_string());
    }
    if !sla_pass {
        reasons.push("the SLA failed in at least one window".to_string());
    }
    // Written so that a NaN achieved rate counts as a shortfall.
    let carried = achieved_per_s >= ACHIEVED_FRACTION * rate_per_s;
    if !carried {
        let percent = if rate_per_s > 0.0 {
            // Rounded down, so that a shortfall never reads as "99.0%".
            (1000.0 * achieved_per_s / rate_per_s).floor() / 10.0
        } else {
            0.0
        };
        reasons.push(format!("achieved {percent:.1}% of the attempted rate"));
    }
    if reasons.is_empty() {
        (true, None)
    } else {
        (false, Some(reasons.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_passes_only_when_complete_within_the_sla_and_at_the_rate() {
        assert_eq!(trial_passes(10_000.0, 9_900.0, true, true), (true, None));
        assert_eq!(trial_passes(10_000.0, 10_050.0, true, true), (true, None));
        assert_eq!(
            trial_passes(10_000.0, 9_899.0, true, true),
            (
                false,
                Some("achieved 98.9% of the attempted rate".to_string())
            )
        );
        assert_eq!(
            trial_passes(10_000.0, 9_510.0, true, true),
            (
                false,
                Some("achieved 95.1% of the attempted rate".to_string())
            )
        );
        assert_eq!(
            trial_passes(10_000.0, 10_000.0, false, true),
            (
                false,
                Some("the SLA failed in at least one window".to_string())
            )
        );
        assert_eq!(
            trial_passes(10_000.0, 5_000.0, false, false),
            (
                false,
                Some(
                    "the run did not complete; the SLA failed in at least one window; \
                     achieved 50.0% of the attempted rate"
                        .to_string()
                )
            )
        );
        // A NaN achieved rate is no pass.
        assert!(!trial_passes(10_000.0, f64::NAN, true, true).0);
    }

    #[test]
    fn records_are_tagged_by_kind_and_survive_a_round_trip() {
        let probe = Record::Probe(ProbeRecord {
            concurrency: 256,
            achieved_per_s: 12_345.5,
            seconds: 60.0,
            dir: "probe".to_string(),
            down: None,
        });
        let text = serde_json::to_string(&probe).unwrap();
        assert!(
            text.starts_with(r#"{"kind":"probe","concurrency":256,"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Record>(&text).unwrap(), probe);

        let trial = Record::Trial(TrialRecord {
            rate_per_s: 8_000.0,
            repeat: 2,
            achieved_per_s: 7_999.9,
            requests: 479_994,
            errors: 3,
            sla_pass: false,
            terms: vec![TermValue {
                term: "p99.9<100ms".to_string(),
                value: 123.4,
                unit: "ms".to_string(),
                pass: false,
                failed_percent: 0.0,
            }],
            pass: false,
            reason: Some("p99.9<100ms failed in 2 of 3 windows".to_string()),
            invalid: None,
            dir: "trial-8000-2".to_string(),
            wall_s: 95.25,
            down: None,
            windows: Some(3),
            failed_windows: Some(2),
            recall: None,
            data: None,
        });
        let text = serde_json::to_string(&trial).unwrap();
        assert!(
            text.starts_with(r#"{"kind":"trial","rate_per_s":8000.0,"#),
            "{text}"
        );
        assert!(
            !text.contains("invalid")
                && !text.contains("failed_percent")
                && !text.contains("recall"),
            "a valid trial without failures reads as before: {text}"
        );
        assert_eq!(serde_json::from_str::<Record>(&text).unwrap(), trial);
        // An invalid trial says why.
        let Record::Trial(mut invalid) = trial else {
            unreachable!()
        };
        invalid.invalid = Some(vec!["1500 requests were never sent".to_string()]);
        let text = serde_json::to_string(&Record::Trial(invalid.clone())).unwrap();
        assert!(
            text.contains(r#""invalid":["1500 requests were never sent"]"#),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<Record>(&text).unwrap(),
            Record::Trial(invalid)
        );
    }

    /// A trial's line of capacity.jsonl as headroom wrote it before it measured recall.
    const OLD_TRIAL: &str = r#"{"kind":"trial","rate_per_s":500.0,"repeat":1,"achieved_per_s":500.0,"requests":30000,"errors":0,"sla_pass":true,"terms":[],"pass":true,"reason":null,"dir":"trials/rate-500-repeat-1","wall_s":70.5}"#;

    #[test]
    fn recall_of_a_trial_round_trips_and_old_records_still_read() {
        let Record::Trial(old) = serde_json::from_str::<Record>(OLD_TRIAL).unwrap() else {
            panic!("a trial")
        };
        assert_eq!(old.recall, None);
        assert_eq!(old.requests, 30_000);
        // Without recall, the record writes as before.
        let text = serde_json::to_string(&Record::Trial(old.clone())).unwrap();
        assert_eq!(text, OLD_TRIAL);

        let mut with = old;
        with.recall = Some(0.9725);
        let text = serde_json::to_string(&Record::Trial(with.clone())).unwrap();
        assert!(text.ends_with(r#","recall":0.9725}"#), "{text}");
        assert_eq!(
            serde_json::from_str::<Record>(&text).unwrap(),
            Record::Trial(with)
        );
    }

    #[test]
    fn recall_of_a_trial_weighs_every_request_alike() {
        use crate::metrics::OpHistograms;
        use crate::results::summary::OpSummary;
        let op = |name: &str, recalls: &[f64]| {
            let mut stats = OpHistograms::default();
            for r in recalls {
                stats.record_ok(1_000_000, 1_000_000);
                stats.record_recall(*r);
            }
            OpSummary::of(name, &stats, 1.0)
        };
        let mut summary = RunSummary {
            headroom_version: "test".to_string(),
            workload: "vector".to_string(),
            mode: crate::engine::LoadMode::Closed { concurrency: 1 },
            latency_kind: "service time".to_string(),
            stop: StopReason::Completed,
            started_at: "2025-01-01T00:00:00Z".to_string(),
            warmup_s: 0.0,
            measured_s: 1.0,
            attempted_rate_per_s: None,
            achieved_rate_per_s: 4.0,
            failed_rate_per_s: 0.0,
            max_backlog: 0,
            unsent_requests: 0.0,
            validity: None,
            ops: vec![op("write", &[])],
            warmup: Vec::new(),
            populate: None,
            client: crate::results::summary::ClientCost {
                cpu_s: 0.0,
                cpu_us_per_request: 0.0,
                peak_rss_bytes: 0,
                hiccup_max_ms: 0.0,
                hiccup_p999_ms: 0.0,
            },
            sla: None,
            workers: Vec::new(),
            validation: None,
        };
        assert_eq!(mean_recall(&summary), None, "no op has recall");
        // Three answers at 1.0 in one type, one at 0.6 in another: (3 + 0.6) / 4.
        summary.ops = vec![
            op("write", &[]),
            op("ann", &[1.0, 1.0, 1.0]),
            op("knn", &[0.6]),
        ];
        let mean = mean_recall(&summary).unwrap();
        assert!((mean - 0.9).abs() < 1e-3, "{mean}");
        let record = TrialRecord::from_summary(
            &summary,
            4.0,
            1,
            "trials/rate-4-repeat-1".to_string(),
            Duration::from_secs(1),
        );
        assert_eq!(record.recall, Some(mean));
    }
}
