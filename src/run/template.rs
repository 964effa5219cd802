//! A run's settings before a capacity search or a sweep gives each of its runs its load.
//!
//! A [`RunTemplate`] holds every setting of a run but four: the load (a rate or a
//! concurrency), the warmup, the measured length and the SLA. Each probe and trial of a
//! search, and each step of a sweep, is made from it by [`RunTemplate::run`], the one place
//! those four are set. The template is stored in search.json and sweep.json as the run
//! settings it holds (the same bytes as before it had a type), with its open-loop options
//! (arrivals, in-flight limit) in the load mode and, for the file's sake, the one rate a
//! template's settings ever hold, [`STORED_RATE_PER_S`], which no run uses.

use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Serialize};

use crate::engine::{ArrivalKind, LoadMode};
use crate::results::config::RunSettings;
use crate::sla::Sla;

/// The in-flight limit of an open-loop run made from a template that has none (a sweep's,
/// which is closed-loop): `--max-in-flight`'s default.
const DEFAULT_MAX_IN_FLIGHT: usize = 4096;

/// The rate an open-loop template's settings hold, and search.json with them: no run's. A
/// template has no rate (each run is given its own by [`RunTemplate::run`]), but its
/// settings are a [`RunSettings`], whose mode always has one, and search.json has always
/// stored this.
pub const STORED_RATE_PER_S: f64 = 1.0;

/// A run's settings without its load, warmup, length and SLA: those of every run of one
/// search or sweep. It reads as the [`RunSettings`] it holds for the settings the runs share;
/// the four a run sets are made by [`RunTemplate::run`] and never read from the template.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunTemplate(RunSettings);

/// The load of one run made from a template.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Open loop at this rate per second, with the template's arrivals and in-flight limit.
    Rate(f64),
    /// Closed loop with this many requests in flight.
    Concurrency(usize),
}

impl RunTemplate {
    /// The load mode to make the settings of an open-loop template with: its runs'
    /// arrivals and in-flight limit, and no rate of theirs ([`STORED_RATE_PER_S`]).
    pub fn open_loop(arrivals: ArrivalKind, max_in_flight: usize) -> LoadMode {
        LoadMode::Open {
            rate_per_s: STORED_RATE_PER_S,
            arrivals,
            max_in_flight,
        }
    }

    /// The template of `settings`; their mode keeps the open-loop options (arrivals,
    /// in-flight limit) when it is open-loop, and their load, warmup, length and SLA are
    /// cleared: each run sets its own.
    pub fn new(mut settings: RunSettings) -> RunTemplate {
        settings.sla = None;
        if let LoadMode::Open {
            arrivals,
            max_in_flight,
            ..
        } = settings.mode
        {
            settings.mode = RunTemplate::open_loop(arrivals, max_in_flight);
        }
        RunTemplate(settings)
    }

    /// One run's settings: the template's, with this load, warmup, measured length and SLA.
    pub fn run(&self, load: Load, warmup_s: f64, duration_s: f64, sla: Option<Sla>) -> RunSettings {
        let mut settings = self.0.clone();
        settings.mode = match load {
            Load::Rate(rate_per_s) => {
                let (arrivals, max_in_flight) = match self.0.mode {
                    LoadMode::Open {
                        arrivals,
                        max_in_flight,
                        ..
                    } => (arrivals, max_in_flight),
                    LoadMode::Closed { .. } => (ArrivalKind::Fixed, DEFAULT_MAX_IN_FLIGHT),
                };
                LoadMode::Open {
                    rate_per_s,
                    arrivals,
                    max_in_flight,
                }
            }
            Load::Concurrency(concurrency) => LoadMode::Closed { concurrency },
        };
        settings.warmup_s = warmup_s;
        settings.duration_s = Some(duration_s);
        settings.sla = sla;
        settings
    }
}

impl Deref for RunTemplate {
    type Target = RunSettings;

    fn deref(&self) -> &RunSettings {
        &self.0
    }
}

impl DerefMut for RunTemplate {
    /// For settings every run shares (the hosts of a matrix's cluster, its TLS files).
    fn deref_mut(&mut self) -> &mut RunSettings {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_run_gets_its_own_load_length_and_sla_and_the_rest_is_the_templates() {
        let mut settings = crate::fixtures::search_settings().run.0;
        settings.mode = LoadMode::Open {
            rate_per_s: 5000.0,
            arrivals: ArrivalKind::Poisson,
            max_in_flight: 64,
        };
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
