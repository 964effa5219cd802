//! A run's settings before a capacity search or a sweep gives each of its runs its load.
//!
//! A [`RunTemplate`] holds every setting of a run but four: the load (a rate or a
//! concurrency), the warmup, the measured length and the SLA. Each probe and trial of a
//! search, and each step of a sweep, is made from it by [`RunTemplate::run`], the one place
//! those four are set. Its load is a [`TemplateLoad`]: how its runs are loaded (open-loop
//! with these arrivals and in-flight limit, or closed-loop), with no rate, so nothing can
//! read a template's rate or this process's share of it. The template is stored in
//! search.json and sweep.json as the run settings it holds, in the bytes those files have
//! always had (an open-loop template's mode with the rate [`STORED_RATE_PER_S`], which
//! exists only in the file).

use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Serialize};

use crate::engine::{ArrivalKind, LoadMode};
use crate::results::config::RunSettings;
use crate::sla::Sla;

/// The in-flight limit of an open-loop run made from a template that has none (a sweep's,
/// which is closed-loop): `--max-in-flight`'s default.
const DEFAULT_MAX_IN_FLIGHT: usize = 4096;

/// The rate search.json and sweep.json write in an open-loop template's mode, where the
/// files' form (a run's settings) has a rate: no run's, and never read back.
pub const STORED_RATE_PER_S: f64 = 1.0;

/// How the runs of a template are loaded; each run is given its own rate or concurrency
/// ([`Load`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "LoadMode", into = "LoadMode")]
pub enum TemplateLoad {
    /// Open loop: each run at its own rate, with these arrivals and in-flight limit.
    Open {
        /// How requests are spread in time.
        arrivals: ArrivalKind,
        /// `--max-in-flight`.
        max_in_flight: usize,
    },
    /// Closed loop: each run at its own concurrency. `first_concurrency` is the first run's
    /// (a sweep's first step), which sweep.json has always stored with the template; no run
    /// is made from it.
    Closed {
        /// The first run's concurrency.
        first_concurrency: usize,
    },
}

impl From<LoadMode> for TemplateLoad {
    /// How runs like this one are loaded; an open loop's rate is dropped.
    fn from(mode: LoadMode) -> TemplateLoad {
        match mode {
            LoadMode::Open {
                arrivals,
                max_in_flight,
                ..
            } => TemplateLoad::Open {
                arrivals,
                max_in_flight,
            },
            LoadMode::Closed { concurrency } => TemplateLoad::Closed {
                first_concurrency: concurrency,
            },
        }
    }
}

impl From<TemplateLoad> for LoadMode {
    /// The mode search.json and sweep.json store for a template: an open loop's with
    /// [`STORED_RATE_PER_S`].
    fn from(load: TemplateLoad) -> LoadMode {
        match load {
            TemplateLoad::Open {
                arrivals,
                max_in_flight,
            } => LoadMode::Open {
                rate_per_s: STORED_RATE_PER_S,
                arrivals,
                max_in_flight,
            },
            TemplateLoad::Closed { first_concurrency } => LoadMode::Closed {
                concurrency: first_concurrency,
            },
        }
    }
}

/// A run's settings without its load, warmup, length and SLA: those of every run of one
/// search or sweep. It reads as the settings it holds for those the runs share; the four a
/// run sets are made by [`RunTemplate::run`] and never read from the template.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunTemplate(RunSettings<TemplateLoad>);

/// The load of one run made from a template.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Open loop at this rate per second, with the template's arrivals and in-flight limit.
    Rate(f64),
    /// Closed loop with this many requests in flight.
    Concurrency(usize),
}

impl RunTemplate {
    /// The template of `settings`, whose runs are loaded as they say; their SLA is cleared
    /// (each run sets its own, with its load, warmup and length).
    pub fn new<M: Into<TemplateLoad> + Copy>(settings: RunSettings<M>) -> RunTemplate {
        let load = settings.mode.into();
        let mut settings = settings.with_mode(load);
        settings.sla = None;
        RunTemplate(settings)
    }

    /// One run's settings: the template's, with this load, warmup, measured length and SLA.
    pub fn run(&self, load: Load, warmup_s: f64, duration_s: f64, sla: Option<Sla>) -> RunSettings {
        let mode = match load {
            Load::Rate(rate_per_s) => {
                let (arrivals, max_in_flight) = match self.0.mode {
                    TemplateLoad::Open {
                        arrivals,
                        max_in_flight,
                    } => (arrivals, max_in_flight),
                    TemplateLoad::Closed { .. } => (ArrivalKind::Fixed, DEFAULT_MAX_IN_FLIGHT),
                };
                LoadMode::Open {
                    rate_per_s,
                    arrivals,
                    max_in_flight,
                }
            }
            Load::Concurrency(concurrency) => LoadMode::Closed { concurrency },
        };
        let mut settings = self.0.clone().with_mode(mode);
        settings.warmup_s = warmup_s;
        settings.duration_s = Some(duration_s);
        settings.sla = sla;
        settings
    }
}

impl Deref for RunTemplate {
    type Target = RunSettings<TemplateLoad>;

    fn deref(&self) -> &RunSettings<TemplateLoad> {
        &self.0
    }
}

impl DerefMut for RunTemplate {
    /// For settings every run shares (the hosts of a matrix's cluster, its TLS files).
    fn deref_mut(&mut self) -> &mut RunSettings<TemplateLoad> {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_run_gets_its_own_load_length_and_sla_and_the_rest_is_the_templates() {
        let mut settings = crate::fixtures::search_settings()
            .run
            .0
            .with_mode(LoadMode::Open {
                rate_per_s: 5000.0,
                arrivals: ArrivalKind::Poisson,
                max_in_flight: 64,
            });
        settings.sla = Some(Sla::parse("p99<1s", std::time::Duration::from_secs(2)).unwrap());
        let template = RunTemplate::new(settings.clone());
        let sla = Sla::parse("p99<10ms", std::time::Duration::from_secs(5)).unwrap();
        let trial = template.run(Load::Rate(700.0), 3.0, 20.0, Some(sla.clone()));
        assert_eq!(
            trial.mode,
            LoadMode::Open {
                rate_per_s: 700.0,
                arrivals: ArrivalKind::Poisson,
                max_in_flight: 64
            }
        );
        assert_eq!((trial.warmup_s, trial.duration_s), (3.0, Some(20.0)));
        assert_eq!(trial.sla, Some(sla));
        assert_eq!(trial.hosts, settings.hosts);
        assert_eq!(trial.workload.name, settings.workload.name);
        let probe = template.run(Load::Concurrency(32), 1.0, 4.0, None);
        assert_eq!(probe.mode, LoadMode::Closed { concurrency: 32 });
        assert_eq!(probe.sla, None);
        // Stored as the settings it holds, and read back the same.
        let json = serde_json::to_string(&template).unwrap();
        let back: RunTemplate = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        assert!(json.contains(r#""rate_per_s":1.0"#), "{json}");
        assert_eq!(
            template.mode,
            TemplateLoad::Open {
                arrivals: ArrivalKind::Poisson,
                max_in_flight: 64
            }
        );
    }

    /// A sweep's template is closed-loop: its runs are given their concurrency (and an
    /// open-loop run made from it the default arrivals and in-flight limit), and its file
    /// keeps the first step's, as sweep.json always has.
    #[test]
    fn a_closed_loop_template_stores_its_first_concurrency() {
        let first = crate::fixtures::search_settings()
            .run
            .0
            .with_mode(LoadMode::Closed { concurrency: 8 });
        let template = RunTemplate::new(first);
        assert_eq!(
            template.run(Load::Concurrency(64), 0.0, 10.0, None).mode,
            LoadMode::Closed { concurrency: 64 }
        );
        assert_eq!(
            template.run(Load::Rate(300.0), 0.0, 10.0, None).mode,
            LoadMode::Open {
                rate_per_s: 300.0,
                arrivals: ArrivalKind::Fixed,
                max_in_flight: DEFAULT_MAX_IN_FLIGHT
            }
        );
        let json = serde_json::to_value(&template).unwrap();
        assert_eq!(
            json["mode"],
            serde_json::json!({"loop": "closed", "concurrency": 8})
        );
        let back: RunTemplate = serde_json::from_value(json).unwrap();
        assert_eq!(
            back.mode,
            TemplateLoad::Closed {
                first_concurrency: 8
            }
        );
    }

    /// A recorded search.json's template (an older version's, without the settings added
    /// since) keeps its mode, stored rate included, and a template made again from one of
    /// its runs is written the same.
    #[test]
    fn a_stored_template_keeps_its_form() {
        let path = crate::fixtures::capacity_fixture().join("search.json");
        let search: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let stored = &search["run"];
        assert_eq!(stored["mode"]["rate_per_s"], STORED_RATE_PER_S);
        let template: RunTemplate = serde_json::from_value(stored.clone()).unwrap();
        let written = serde_json::to_value(&template).unwrap();
        assert_eq!(written["mode"], stored["mode"]);
        let (warmup_s, duration_s) = (template.warmup_s, template.duration_s.unwrap());
        let trial = template.run(Load::Rate(900.0), warmup_s, duration_s, None);
        assert_eq!(trial.whole_rate(), Some(900.0));
        let again = RunTemplate::new(trial);
        assert_eq!(serde_json::to_value(&again).unwrap(), written);
    }
}
