//! config.json: a run's settings, resolved, so that it can be repeated. The run reads them
//! ([`crate::run::execute`]), writes them first into its directory, and the report, the
//! comparisons and `--resume` read them back.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::catalogue::CONFIG_JSON;
use crate::client::native::Sender;
use crate::client::tls::TlsSettings;
use crate::engine::schedule::{ns_from_s, End, Share};
use crate::engine::LoadMode;
use crate::maintenance::MaintenanceConfig;
use crate::sla::Sla;
use crate::workload::WorkloadConfig;

/// The phases of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunPhase {
    /// The populate (load) alone.
    Load,
    /// The measured run alone.
    Run,
    /// The populate, then the measured run.
    #[default]
    Both,
}

/// config.json: everything that decides what a run does, resolved, so it can be repeated.
///
/// `M` is how the run is loaded: a run's [`LoadMode`] (its rate or concurrency), or, for
/// the settings every run of a search or sweep shares, how their runs will be loaded
/// ([`crate::run::template::TemplateLoad`]), which has no rate of its own. What the load
/// decides (the rate, this process's share of it) is read from a run's settings only.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSettings<M = LoadMode> {
    /// headroom's version.
    pub headroom_version: String,
    /// Contact points.
    pub hosts: Vec<String>,
    /// `--local-dc`: the data centre requests go to; the contact points' when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_dc: Option<String>,
    /// The workload and its settings.
    pub workload: WorkloadConfig,
    /// Open or closed loop.
    pub mode: M,
    /// Warmup, seconds.
    pub warmup_s: f64,
    /// Measured duration, seconds, when bounded by time.
    pub duration_s: Option<f64>,
    /// Measured requests, when bounded by count.
    pub ops: Option<u64>,
    /// Interval length, seconds.
    pub interval_s: f64,
    /// Client threads: exactly these when `--threads` gave them; without it
    /// (`threads_from_rate`), the most a run takes (how many it does take is the run's
    /// decision, `run::policy::run_threads`).
    pub threads: usize,
    /// No `--threads` was given: an open-loop run takes as many threads as its rate needs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub threads_from_rate: bool,
    /// Request timeout, seconds.
    pub request_timeout_s: f64,
    /// Connections per node (the native sender: per node and client thread).
    pub connections: usize,
    /// What sends the measured requests.
    #[serde(default)]
    pub sender: Sender,
    /// Requests due within this many seconds of each other are sent together.
    pub send_resolution_s: f64,
    /// The service level judged per window, if any (stored as its canonical terms and its
    /// window in seconds).
    #[serde(with = "crate::sla::stored::optional")]
    pub sla: Option<Sla>,
    /// The phases run: the populate (load), the measured run, or both.
    #[serde(default)]
    pub phase: RunPhase,
    /// The command line, as typed.
    pub command_line: Vec<String>,
    /// Operations and faults run during the load (`--during`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance: Option<MaintenanceConfig>,
    /// Whether Cassandra's own histograms of a local cluster's nodes are also read through
    /// nodetool (a JVM start per command, seconds before and after the run); CQL's are
    /// always read. Off for capacity trials and sweep steps, which are many and short.
    #[serde(default = "yes")]
    pub nodetool_figures: bool,
    /// `--server-stats-every`: Cassandra's own figures are also read at this period, seconds,
    /// while the load runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats_every_s: Option<f64>,
    /// TLS on the connections to the nodes (`--tls` and the flags after it, or the local
    /// cluster's own): paths and flags, never the contents of a key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSettings>,
    /// `--worker K/N`: this run is worker K of a fleet of N that send one schedule together
    /// (`--start-at`); its directory is merged with the others' by `headroom merge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<WorkerSlot>,
    /// A run merged from a fleet's workers (`headroom merge`): how many, and when they
    /// started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetOrigin>,
    /// The cores the client's threads were bound to (`--client-cpus`, or those a local
    /// cluster's placement left it); any core when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpus: Option<crate::cpus::Cores>,
    /// `--validate`: writes are recorded and reads checked against them, and every row is
    /// read back after the load (summary.json's `validation`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub validate: bool,
}

/// Which share of a fleet's schedule a run sends, and when the fleet starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerSlot {
    /// K, from 1: the worker sends the requests i ≡ K − 1 (mod N) of the schedule.
    pub index: u32,
    /// N, the fleet's size.
    pub count: u32,
    /// When the schedule starts (its time zero), RFC 3339 in UTC, nanoseconds.
    pub start_at: String,
}

impl WorkerSlot {
    /// Worker `index` (from 1) of `count`, the schedule starting at `start_at`.
    pub fn new(index: u32, count: u32, start_at: SystemTime) -> WorkerSlot {
        WorkerSlot {
            index,
            count,
            start_at: rfc3339(start_at),
        }
    }

    /// When the schedule starts; `None` when the time does not read (a hand-edited file).
    pub fn start_time(&self) -> Option<SystemTime> {
        parse_rfc3339(&self.start_at).ok()
    }
}

/// A moment as RFC 3339 in UTC with nanoseconds, as config.json keeps it.
pub fn rfc3339(time: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

/// Reads an RFC 3339 moment (any offset); an error says why it does not read.
pub fn parse_rfc3339(text: &str) -> Result<SystemTime, String> {
    let time = chrono::DateTime::parse_from_rfc3339(text.trim()).map_err(|e| e.to_string())?;
    let ns = time
        .timestamp_nanos_opt()
        .filter(|ns| *ns >= 0)
        .ok_or("out of range (before 1970 or after 2262)")?;
    Ok(SystemTime::UNIX_EPOCH + Duration::from_nanos(ns as u64))
}

/// Where a merged run came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetOrigin {
    /// How many workers were merged.
    pub workers: u32,
    /// The time zero the workers agreed on, RFC 3339.
    pub start_at: String,
    /// The workers' run directories, as given to `headroom merge`, in worker order.
    pub dirs: Vec<String>,
}

impl<M> RunSettings<M> {
    /// These settings with `mode` for their load: a template's for a run of it, or a run's
    /// for a template ([`crate::run::template::RunTemplate`]); every other setting is kept.
    pub fn with_mode<N>(self, mode: N) -> RunSettings<N> {
        RunSettings {
            headroom_version: self.headroom_version,
            hosts: self.hosts,
            local_dc: self.local_dc,
            workload: self.workload,
            mode,
            warmup_s: self.warmup_s,
            duration_s: self.duration_s,
            ops: self.ops,
            interval_s: self.interval_s,
            threads: self.threads,
            threads_from_rate: self.threads_from_rate,
            request_timeout_s: self.request_timeout_s,
            connections: self.connections,
            sender: self.sender,
            send_resolution_s: self.send_resolution_s,
            sla: self.sla,
            phase: self.phase,
            command_line: self.command_line,
            maintenance: self.maintenance,
            nodetool_figures: self.nodetool_figures,
            server_stats_every_s: self.server_stats_every_s,
            tls: self.tls,
            worker: self.worker,
            fleet: self.fleet,
            client_cpus: self.client_cpus,
            validate: self.validate,
        }
    }

    /// When the engine ends the run: the warmup, then the duration or the request count.
    pub fn end(&self) -> End {
        End {
            warmup_ns: ns_from_s(self.warmup_s),
            duration_ns: self.duration_s.map(ns_from_s),
            ops: self.ops,
        }
    }

    /// Checks each number but the load's against the range its flag keeps
    /// ([`crate::limits`]); [`RunSettings::check_domain`] checks a run's load too.
    pub fn check_shared_domain(&self) -> Result<(), String> {
        use crate::limits::{self, check_count, check_seconds};
        check_seconds("warmup_s", self.warmup_s, limits::RUN_WARMUP)?;
        if let Some(d) = self.duration_s {
            check_seconds("duration_s", d, limits::RUN_DURATION)?;
        }
        if self.ops == Some(0) {
            return Err("ops is 0: a run measures at least one request".to_string());
        }
        let interval = check_seconds("interval_s", self.interval_s, limits::INTERVAL)?;
        check_seconds("request_timeout_s", self.request_timeout_s, limits::TIMEOUT)?;
        let resolution = check_seconds(
            "send_resolution_s",
            self.send_resolution_s,
            limits::SEND_RESOLUTION,
        )?;
        if resolution > interval {
            return Err(format!(
                "send_resolution_s {} is longer than interval_s {}",
                self.send_resolution_s, self.interval_s
            ));
        }
        if let Some(every) = self.server_stats_every_s {
            check_seconds("server_stats_every_s", every, limits::SERVER_STATS_EVERY)?;
        }
        check_count("threads", self.threads as u64, limits::THREADS)?;
        check_count("connections", self.connections as u64, limits::CONNECTIONS)?;
        self.workload.validate()
    }

    /// The share of the schedule this process sends: its residue when it is a fleet's
    /// worker, every request otherwise.
    pub fn share(&self) -> Share {
        match &self.worker {
            Some(w) => Share {
                index: u64::from(w.index.saturating_sub(1)),
                count: u64::from(w.count.max(1)),
            },
            None => Share::WHOLE,
        }
    }

    /// The SLA's window, when the run has an SLA.
    pub fn sla_window(&self) -> Option<Duration> {
        self.sla.as_ref().map(|s| s.window)
    }
}

impl RunSettings {
    /// Checks each number against the range its flag keeps ([`crate::limits`]): settings
    /// read from a file the run did not write (`run --config`) are refused as the flags
    /// would have been, before a negative or endless number reaches the engine.
    pub fn check_domain(&self) -> Result<(), String> {
        use crate::limits::{self, check_count, check_rate};
        self.check_shared_domain()?;
        match self.mode {
            LoadMode::Open {
                rate_per_s,
                max_in_flight,
                ..
            } => {
                check_rate("rate_per_s", rate_per_s, limits::RATE)?;
                check_count("max_in_flight", max_in_flight as u64, limits::MAX_IN_FLIGHT)
            }
            LoadMode::Closed { concurrency } => {
                check_count("concurrency", concurrency as u64, limits::CONCURRENCY)
            }
        }
    }

    /// Reads a run directory's config.json.
    pub fn read(dir: &Path) -> anyhow::Result<RunSettings> {
        super::read_json(&dir.join(CONFIG_JSON))
    }

    /// Writes config.json into `dir`.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        super::write_json(&dir.join(CONFIG_JSON), self)
    }

    /// The open loop's rate of the whole schedule, per second: a fleet's, all its workers
    /// together, as `--rate` gave it; `None` for a closed loop.
    pub fn whole_rate(&self) -> Option<f64> {
        match self.mode {
            LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
            LoadMode::Closed { .. } => None,
        }
    }

    /// The open loop's rate this process sends, per second: a fleet's worker its share of
    /// [`RunSettings::whole_rate`] ([`Share::of`]), a single process the whole; `None` for a
    /// closed loop. What summary.json records as the attempted rate.
    pub fn process_rate(&self) -> Option<f64> {
        self.whole_rate().map(|rate| self.share().of(rate))
    }
}

fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's own settings keep every range; one number outside is named.
    #[test]
    fn settings_keep_the_ranges_of_their_flags() {
        let mut settings = RunSettings::read(&crate::fixtures::run_fixture()).unwrap();
        settings.check_domain().unwrap();
        settings.send_resolution_s = 2.0;
        assert!(settings
            .check_domain()
            .unwrap_err()
            .contains("send_resolution_s"));
        settings.send_resolution_s = 0.001;
        settings.duration_s = Some(f64::NAN);
        assert!(settings.check_domain().unwrap_err().contains("duration_s"));
        settings.duration_s = Some(10.0);
        settings.mode = LoadMode::Closed { concurrency: 0 };
        assert!(settings
            .check_domain()
            .unwrap_err()
            .contains("concurrency is 0"));
    }

    /// The whole rate is the schedule's; worker 2 of 4 sends a quarter of it; a closed loop
    /// has neither.
    #[test]
    fn a_workers_rate_is_its_share_of_the_whole() {
        let mut settings = RunSettings::read(&crate::fixtures::run_fixture()).unwrap();
        settings.mode = LoadMode::Open {
            rate_per_s: 8000.0,
            arrivals: crate::engine::ArrivalKind::Fixed,
            max_in_flight: 64,
        };
        settings.worker = None;
        assert_eq!(settings.whole_rate(), Some(8000.0));
        assert_eq!(settings.process_rate(), Some(8000.0));
        settings.worker = Some(WorkerSlot::new(2, 4, SystemTime::UNIX_EPOCH));
        assert_eq!(settings.whole_rate(), Some(8000.0));
        assert_eq!(settings.process_rate(), Some(2000.0));
        settings.mode = LoadMode::Closed { concurrency: 8 };
        assert_eq!(
            (settings.whole_rate(), settings.process_rate()),
            (None, None)
        );
    }
}
