//! Simulated systems for the capacity search: a deterministic one for the search's tests,
//! whose p99.9 and achieved rate are known functions of the attempted rate, so that the
//! capacity a search should find is known too; and [`stochastic`], whose windows fail at
//! random, for judging a search method over many searches (`bench/search-method.py`).

pub mod stochastic;

use super::rates::same_rate;
use super::record::{trial_passes, ProbeRecord, Record, TermValue, TrialRecord};
use super::search::{next_step, SearchPlan, Step};
use super::{TrialAsk, TrialRunner};

/// The SLA term the simulated system is judged by.
pub const TERM: &str = "p99.9<100ms";

/// A system whose p99.9 is 5 ms up to the knee and at least 150 ms above it, and which
/// achieves min(rate, ceiling).
#[derive(Debug, Clone)]
pub struct Simulated {
    /// The highest rate the system achieves.
    pub ceiling: f64,
    /// What the probe reports (the ceiling unless changed).
    pub probe_achieved: f64,
    /// The highest rate within the SLA.
    pub knee: f64,
    /// (rate, repeat) pairs that fail the SLA whatever the rate.
    pub noisy: Vec<(f64, u32)>,
    /// Above this rate the client cannot keep its schedule: trials are client-bound.
    pub client_limit: f64,
    /// Runs after which every further run is interrupted (returns `None`).
    pub interrupt_after: Option<usize>,
    /// Probes run.
    pub probes: usize,
    /// Trials run, in order.
    pub trials: Vec<(f64, u32)>,
    /// The mean recall every trial records (an ANN workload), `None` for none.
    pub recall: Option<f64>,
}

impl Simulated {
    /// A system with this ceiling and knee, never interrupted.
    pub fn new(ceiling: f64, knee: f64) -> Self {
        Simulated {
            ceiling,
            probe_achieved: ceiling,
            knee,
            noisy: Vec::new(),
            client_limit: f64::INFINITY,
            interrupt_after: None,
            probes: 0,
            trials: Vec::new(),
            recall: None,
        }
    }

    /// The record of a trial at `rate`, without counting it as run.
    pub fn record(&self, rate: f64, repeat: u32) -> Record {
        let noisy = self
            .noisy
            .iter()
            .any(|&(r, n)| same_rate(r, rate) && n == repeat);
        let p999 = if noisy {
            250.0
        } else if rate <= self.knee {
            5.0
        } else {
            150.0 + (rate - self.knee)
        };
        let sla_pass = p999 < 100.0;
        let achieved = rate.min(self.ceiling);
        let (pass, reason) = trial_passes(rate, achieved, sla_pass, true);
        let invalid = (rate > self.client_limit)
            .then(|| vec![format!("the client sends at most {}/s", self.client_limit)]);
        Record::Trial(TrialRecord {
            rate_per_s: rate,
            repeat,
            achieved_per_s: achieved,
            requests: (achieved * 60.0) as u64,
            errors: 0,
            sla_pass,
            terms: vec![TermValue {
                term: TERM.to_string(),
                value: p999,
                unit: "ms".to_string(),
                pass: sla_pass,
                failed_percent: 0.0,
            }],
            pass: pass && invalid.is_none(),
            reason: if invalid.is_some() { None } else { reason },
            invalid,
            dir: format!("trial-{rate}-{repeat}"),
            wall_s: 75.0,
            down: None,
            windows: None,
            failed_windows: None,
            recall: self.recall,
            data: None,
        })
    }

    /// Whether the next run is interrupted.
    fn interrupted(&self) -> bool {
        self.interrupt_after
            .is_some_and(|after| self.probes + self.trials.len() >= after)
    }
}

impl TrialRunner for Simulated {
    fn probe(&mut self) -> anyhow::Result<Option<ProbeRecord>> {
        if self.interrupted() {
            return Ok(None);
        }
        self.probes += 1;
        Ok(Some(ProbeRecord {
            concurrency: 64,
            achieved_per_s: self.probe_achieved,
            seconds: 30.0,
            dir: crate::catalogue::PROBE.to_string(),
            down: None,
        }))
    }

    fn trial(&mut self, ask: &TrialAsk) -> anyhow::Result<Option<TrialRecord>> {
        if self.interrupted() {
            return Ok(None);
        }
        self.trials.push((ask.rate_per_s, ask.repeat));
        match self.record(ask.rate_per_s, ask.repeat) {
            Record::Trial(trial) => Ok(Some(trial)),
            Record::Probe(_) => unreachable!("record makes trials"),
        }
    }
}

/// Runs a whole search against the system, keeping the records in memory.
pub fn run_in_memory(settings: &SearchPlan, sim: &mut Simulated) -> Vec<Record> {
    let mut records = Vec::new();
    for _ in 0..1000 {
        let record = match next_step(settings, &records) {
            Step::Done => return records,
            Step::Probe => Record::Probe(sim.probe().unwrap().expect("not interrupted")),
            Step::Trial { rate_per_s, repeat } => Record::Trial(
                sim.trial(&TrialAsk::full(rate_per_s, repeat))
                    .unwrap()
                    .expect("not interrupted"),
            ),
        };
        records.push(record);
    }
    panic!("the search did not end in 1000 steps: {:?}", sim.trials);
}
