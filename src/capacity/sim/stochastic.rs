//! A stochastic simulated cluster for judging search methods: each 10-second window fails the
//! goal with a probability that rises with the rate around a known knee, windows of one trial
//! are correlated, some fail at every rate (GC-like), the knee may drift during a search and
//! the client may be unable to keep rates above a limit. The search's own code drives it
//! (the [`TrialRunner`] trait), so `bench/search-method.py` measures the method as shipped.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use serde::Serialize;

use crate::capacity::interval::{self, IntervalGoal, IntervalStep};
use crate::capacity::record::{trial_passes, ProbeRecord, Record, TermValue, TrialRecord};
use crate::capacity::search::{self, SearchPlan, Step};
use crate::capacity::{TrialAsk, TrialRunner};

/// Seconds of one window.
pub const WINDOW_S: f64 = 10.0;
/// Warmup seconds before each trial's windows.
pub const WARMUP_S: f64 = 10.0;
/// Seconds of the closed-loop probe, its warmup included.
pub const PROBE_S: f64 = 25.0;
/// Trials over which a drifting knee reaches its full drift.
pub const DRIFT_TRIALS: f64 = 20.0;

/// How the simulated cluster behaves.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scenario {
    /// Its name in the table.
    pub name: &'static str,
    /// Relative width of the knee: the failing probability rises from 12 % to 88 % of its
    /// range between knee·(1 − 2·spread) and knee·(1 + 2·spread).
    pub spread: f64,
    /// Windows failing at every rate (GC pauses, a compaction), as a share.
    pub random_failing: f64,
    /// The chance that a window repeats the previous window's outcome (correlation).
    pub persistence: f64,
    /// Each trial's knee moved by a normal factor of this relative spread (the node's state).
    pub trial_jitter: f64,
    /// The knee's drift over [`DRIFT_TRIALS`] trials, relative (its sign drawn per search).
    pub drift: f64,
    /// Above this multiple of the true capacity the client cannot keep its schedule.
    pub client_limit: Option<f64>,
}

/// The scenarios `bench/search-method.py` runs.
pub const SCENARIOS: [Scenario; 5] = [
    Scenario {
        name: "sharp knee",
        spread: 0.01,
        random_failing: 0.01,
        persistence: 0.3,
        trial_jitter: 0.02,
        drift: 0.0,
        client_limit: None,
    },
    Scenario {
        name: "gradual knee",
        spread: 0.08,
        random_failing: 0.01,
        persistence: 0.3,
        trial_jitter: 0.02,
        drift: 0.0,
        client_limit: None,
    },
    Scenario {
        name: "5% random failing windows",
        spread: 0.02,
        random_failing: 0.05,
        persistence: 0.3,
        trial_jitter: 0.02,
        drift: 0.0,
        client_limit: None,
    },
    Scenario {
        name: "drift ±10%",
        spread: 0.02,
        random_failing: 0.01,
        persistence: 0.3,
        trial_jitter: 0.02,
        drift: 0.1,
        client_limit: None,
    },
    Scenario {
        name: "client limit 5% above",
        spread: 0.02,
        random_failing: 0.01,
        persistence: 0.3,
        trial_jitter: 0.02,
        drift: 0.0,
        client_limit: Some(1.05),
    },
];

/// One simulated cluster, for one search.
#[derive(Debug, Clone)]
pub struct Stochastic {
    /// How it behaves.
    pub scenario: Scenario,
    /// The knee at the search's start, per second.
    pub knee: f64,
    /// +1 or −1: which way the knee drifts.
    drift_sign: f64,
    rng: SmallRng,
    /// Trials run so far.
    pub trials: usize,
    /// Seconds of load so far (probe, warmups and windows).
    pub load_s: f64,
    /// The exceed ratio the true capacity is computed for.
    exceed_ratio: f64,
}

impl Stochastic {
    /// A cluster of this scenario with its knee drawn from `seed` (log-uniform 2 000–20 000/s).
    pub fn new(scenario: Scenario, seed: u64, exceed_ratio: f64) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        let knee = 2000.0 * 10f64.powf(rng.random::<f64>());
        let drift_sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
        Stochastic {
            scenario,
            knee,
            drift_sign,
            rng,
            trials: 0,
            load_s: 0.0,
            exceed_ratio,
        }
    }

    /// The knee now (after the drift of the trials run so far).
    fn knee_now(&self) -> f64 {
        let progress = (self.trials as f64 / DRIFT_TRIALS).min(1.0);
        self.knee * (1.0 + self.drift_sign * self.scenario.drift * progress)
    }

    /// A window's failing probability at `rate` for a trial whose knee is `knee`.
    fn p_fail(&self, rate: f64, knee: f64) -> f64 {
        let g = self.scenario.random_failing;
        let x = (rate / knee - 1.0) / self.scenario.spread;
        g + (1.0 - g) / (1.0 + (-x).exp())
    }

    /// The long-run failing share of windows at `rate` now, over the trials' jitter.
    pub fn long_run_failing(&self, rate: f64) -> f64 {
        let knee = self.knee_now();
        let sigma = self.scenario.trial_jitter;
        if sigma == 0.0 {
            return self.p_fail(rate, knee);
        }
        // A normal's expectation by the midpoint rule over ±4 sigma.
        let steps = 161;
        let (mut sum, mut weights) = (0.0, 0.0);
        for i in 0..steps {
            let z = -4.0 + 8.0 * (i as f64 + 0.5) / steps as f64;
            let w = (-z * z / 2.0).exp();
            sum += w * self.p_fail(rate, knee * (1.0 + sigma * z));
            weights += w;
        }
        sum / weights
    }

    /// The true capacity now: the highest rate whose long-run failing share is at most the
    /// exceed ratio (0 when the random failures alone exceed it).
    pub fn capacity(&self) -> f64 {
        let e = self.exceed_ratio;
        if self.long_run_failing(0.0) > e {
            return 0.0;
        }
        let (mut lo, mut hi) = (0.0, self.knee_now() * 4.0);
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if self.long_run_failing(mid) <= e {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The highest rate the cluster achieves: a quarter above the knee.
    fn ceiling(&self) -> f64 {
        self.knee_now() * 1.25
    }

    /// A trial's record: `windows` windows (fewer when `stop_after` failing ones came first).
    fn record(&mut self, ask: &TrialAsk, full_windows: u32) -> TrialRecord {
        let rate = ask.rate_per_s;
        let windows = ask.windows.unwrap_or(full_windows).max(1);
        let capacity = self.capacity();
        let client_bound = self
            .scenario
            .client_limit
            .is_some_and(|limit| rate > limit * capacity);
        let jitter = Normal::new(1.0, self.scenario.trial_jitter.max(1e-12)).expect("positive");
        let knee = self.knee_now() * jitter.sample(&mut self.rng);
        let p = self.p_fail(rate, knee);
        let carried = rate <= self.ceiling();
        let (mut judged, mut failed) = (0u32, 0u32);
        let mut last = None;
        for _ in 0..windows {
            let fails = match last {
                Some(previous) if self.rng.random::<f64>() < self.scenario.persistence => previous,
                _ => self.rng.random::<f64>() < p,
            } || !carried;
            last = Some(fails);
            judged += 1;
            failed += u32::from(fails);
            if ask.stop_after.is_some_and(|k| failed >= k) {
                break;
            }
        }
        self.trials += 1;
        self.load_s += WARMUP_S + WINDOW_S * f64::from(judged);
        let achieved = if carried { rate } else { self.ceiling() };
        let sla_pass = failed == 0;
        let (pass, reason) = trial_passes(rate, achieved, sla_pass, true);
        let invalid = client_bound.then(|| vec!["the client could not keep its schedule".into()]);
        TrialRecord {
            rate_per_s: rate,
            repeat: ask.repeat,
            achieved_per_s: achieved,
            requests: (achieved * WINDOW_S * f64::from(judged)) as u64,
            errors: 0,
            sla_pass,
            terms: vec![TermValue {
                term: super::TERM.to_string(),
                value: if sla_pass { 5.0 } else { 150.0 },
                unit: "ms".to_string(),
                pass: sla_pass,
                failed_percent: 0.0,
            }],
            pass: pass && invalid.is_none(),
            reason: if invalid.is_some() { None } else { reason },
            invalid,
            dir: format!("trial-{rate}-{}", ask.repeat),
            wall_s: WARMUP_S + WINDOW_S * f64::from(judged),
            down: None,
            windows: Some(judged),
            failed_windows: Some(failed),
            recall: None,
            data: None,
        }
    }
}

/// The simulated cluster as a search's runner, full trials being `full_windows` long.
pub struct StochasticRunner<'a> {
    /// The cluster.
    pub sim: &'a mut Stochastic,
    /// Windows of a full trial.
    pub full_windows: u32,
}

impl TrialRunner for StochasticRunner<'_> {
    fn probe(&mut self) -> anyhow::Result<Option<ProbeRecord>> {
        self.sim.load_s += PROBE_S;
        let noise = 0.9 + 0.2 * self.sim.rng.random::<f64>();
        Ok(Some(ProbeRecord {
            concurrency: 256,
            achieved_per_s: self.sim.ceiling() * noise,
            seconds: PROBE_S,
            dir: crate::catalogue::PROBE.to_string(),
            down: None,
        }))
    }

    fn trial(&mut self, ask: &TrialAsk) -> anyhow::Result<Option<TrialRecord>> {
        Ok(Some(self.sim.record(ask, self.full_windows)))
    }
}

/// Which method a simulated search uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Method {
    /// The interval search.
    Interval(IntervalGoal),
    /// Today's bisection with every window of every repeat passing, at this resolution.
    Ladder {
        /// Trials per rate.
        repeats: u32,
        /// (F − L) / F at which the bisection stops.
        resolution: f64,
    },
}

impl Method {
    /// Its name in the table: `interval`, `ladder-1`, `ladder-3`.
    pub fn name(&self) -> String {
        match self {
            Method::Interval(_) => "interval".to_string(),
            Method::Ladder { repeats, .. } => format!("ladder-{repeats}"),
        }
    }
}

/// What one simulated search found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Found {
    /// The true capacity when the search ended.
    pub capacity: f64,
    /// The stated lower bound (0 when none).
    pub lower: f64,
    /// The stated upper bound (infinity when none).
    pub upper: f64,
    /// Seconds of load the search spent.
    pub load_s: f64,
    /// Trials run.
    pub trials: usize,
}

impl Found {
    /// Whether the bounds hold the true capacity.
    pub fn covers(&self) -> bool {
        self.lower <= self.capacity && self.capacity <= self.upper
    }

    /// (U − L) / U, infinite without an upper bound.
    pub fn width(&self) -> f64 {
        if self.upper.is_finite() {
            (self.upper - self.lower) / self.upper
        } else {
            f64::INFINITY
        }
    }
}

/// Runs one search of `method` against a fresh cluster of `scenario` drawn from `seed`.
pub fn search(method: &Method, scenario: Scenario, seed: u64, exceed_ratio: f64) -> Found {
    search_with_records(method, scenario, seed, exceed_ratio).0
}

/// [`search`], with the records it made.
pub fn search_with_records(
    method: &Method,
    scenario: Scenario,
    seed: u64,
    exceed_ratio: f64,
) -> (Found, Vec<Record>) {
    let mut sim = Stochastic::new(scenario, seed, exceed_ratio);
    let full_windows = match method {
        Method::Interval(goal) => goal.windows_per_trial,
        Method::Ladder { .. } => 6,
    };
    let mut runner = StochasticRunner {
        sim: &mut sim,
        full_windows,
    };
    let mut records: Vec<Record> = Vec::new();
    let (lower, upper) = match method {
        Method::Interval(goal) => {
            for _ in 0..1000 {
                let record = match interval::next_step(goal, None, &records) {
                    IntervalStep::Done => break,
                    IntervalStep::Probe => Record::Probe(runner.probe().unwrap().unwrap()),
                    IntervalStep::Trial {
                        rate_per_s,
                        repeat,
                        windows,
                        stop_after,
                    } => {
                        let ask = TrialAsk {
                            rate_per_s,
                            repeat,
                            windows: Some(windows),
                            stop_after,
                            retry: false,
                        };
                        Record::Trial(runner.trial(&ask).unwrap().unwrap())
                    }
                };
                records.push(record);
            }
            let found = interval::interval(&records, goal);
            (
                found.lower.map_or(0.0, |l| l.rate_per_s),
                found.upper.map_or(f64::INFINITY, |u| u.rate_per_s),
            )
        }
        Method::Ladder {
            repeats,
            resolution,
        } => {
            let plan = SearchPlan {
                plan: search::RatePlan::Auto {
                    resolution: *resolution,
                },
                repeats: *repeats,
                ladder_base_per_s: None,
                interval: None,
            };
            for _ in 0..1000 {
                let record = match search::next_step(&plan, &records) {
                    Step::Done => break,
                    Step::Probe => Record::Probe(runner.probe().unwrap().unwrap()),
                    Step::Trial { rate_per_s, repeat } => {
                        let ask = TrialAsk::full(rate_per_s, repeat);
                        Record::Trial(runner.trial(&ask).unwrap().unwrap())
                    }
                };
                records.push(record);
            }
            let (capacity, lowest_fail) = search::outcome(&records, *repeats).bracket();
            (
                capacity.unwrap_or(0.0),
                lowest_fail.unwrap_or(f64::INFINITY),
            )
        }
    };
    let found = Found {
        capacity: sim.capacity(),
        lower,
        upper,
        load_s: sim.load_s,
        trials: sim.trials,
    };
    (found, records)
}

/// A scenario's figures for one method over many searches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The scenario's name.
    pub scenario: &'static str,
    /// `interval`, `ladder-1` or `ladder-3`.
    pub method: String,
    /// The confidence the method states (`None` for the ladders, which state none).
    pub confidence: Option<f64>,
    /// The share of searches whose bounds held the true capacity.
    pub coverage: f64,
    /// The median (U − L) / U (infinite when most searches had no upper bound).
    pub width: f64,
    /// The median seconds of load.
    pub load_time_s: f64,
    /// The median number of trials.
    pub trials: f64,
    /// Searches run.
    pub searches: usize,
}

/// `searches` searches of `method` in `scenario`, seeds 1 to `searches`.
pub fn evaluate(method: &Method, scenario: Scenario, searches: usize, exceed_ratio: f64) -> Row {
    let found: Vec<Found> = (1..=searches as u64)
        .map(|seed| search(method, scenario, seed, exceed_ratio))
        .collect();
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
    };
    Row {
        scenario: scenario.name,
        method: method.name(),
        confidence: match method {
            Method::Interval(goal) => Some(goal.confidence),
            Method::Ladder { .. } => None,
        },
        coverage: found.iter().filter(|f| f.covers()).count() as f64 / found.len().max(1) as f64,
        width: median(found.iter().map(Found::width).collect()),
        load_time_s: median(found.iter().map(|f| f.load_s).collect()),
        trials: median(found.iter().map(|f| f.trials as f64).collect()),
        searches: found.len(),
    }
}
