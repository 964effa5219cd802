//! The node a degraded search keeps down ([`super::degraded::Degraded`]), on a local cluster
//! headroom started: stopped before each probe and trial, warmup included, and brought back
//! before the next one with every hint the other nodes kept for it delivered, so that each
//! run starts from the same cluster with the same data (docs/decisions/0015).
//!
//! The order around one run is: [`NodeDown::bring_back`] (the node up again, its hints
//! replayed), the data made fresh and populated with every node up, [`NodeDown::take_down`]
//! (SIGTERM: the node drains and exits), the run, [`NodeDown::after_run`] (was it down all
//! along?). At the end of the search, and on an error or Ctrl-C, the caller brings it back
//! ([`NodeDown::restore`]); the live runner's `Drop` does so too, so no search leaves it
//! down.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::degraded::{check_same_node, Degraded, DownRecord};
use crate::cluster::hints::{self, PendingHints};
use crate::cluster::{probe, LocalCluster};
use crate::run::RunObserver;
use crate::stop::StopSignal;

/// How long the node may take to drain and stop before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(60);
/// How long the node may take to answer CQL again.
const START_TIMEOUT: Duration = Duration::from_secs(180);
/// Cassandra's `hints_flush_period` (10 s) and a second: hints of the last writes of a run
/// are in memory until then, not yet in a file.
const HINTS_FLUSH: Duration = Duration::from_secs(11);
/// How long the other nodes may take to deliver the node's hints. Delivery is throttled
/// (`hinted_handoff_throttle`, 1 MiB/s shared by the nodes that hold hints); a trial that
/// leaves more than this takes to deliver is cut short with an error, never run on a node
/// that lacks writes.
const HINTS_TIMEOUT: Duration = Duration::from_secs(600);
/// How often the hints are looked at while waiting, and a progress line written.
const HINTS_POLL: Duration = Duration::from_millis(500);
const HINTS_SAY: Duration = Duration::from_secs(15);

/// The node kept down, and where it stands.
#[derive(Debug)]
pub struct NodeDown {
    degraded: Degraded,
    stop: Arc<StopSignal>,
    /// The pid stopped before the current run and how long the stop took; `None` while up.
    stopped: Option<(u32, f64)>,
    /// When the last run's load ended: its last hints reach a file up to 10 s later.
    load_ended: Option<Instant>,
    /// Seconds the last [`Self::bring_back`] took, for the next run's record.
    restored_s: Option<f64>,
}

impl NodeDown {
    /// Keeps `degraded`'s node down on `cluster`, which must still have it.
    pub fn new(
        degraded: &Degraded,
        cluster: &LocalCluster,
        stop: Arc<StopSignal>,
    ) -> anyhow::Result<NodeDown> {
        check_same_node(degraded, &cluster.nodes())
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("the local cluster in {}", cluster.dir().display()))?;
        Ok(NodeDown {
            degraded: degraded.clone(),
            stop,
            stopped: None,
            load_ended: None,
            restored_s: None,
        })
    }

    /// What is kept down.
    pub fn degraded(&self) -> &Degraded {
        &self.degraded
    }

    /// Before a run: starts the node again if it is down (stopped for the run before, or left
    /// down by a search that was killed) and, with `wait_hints`, waits until the other nodes
    /// hold no hints. `Ok(false)` when the stop signal came while waiting.
    pub fn bring_back(
        &mut self,
        cluster: &mut LocalCluster,
        wait_hints: bool,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<bool> {
        let started = Instant::now();
        let name = self.degraded.node_name();
        let mut acted = false;
        if cluster.pid(self.degraded.node).is_none() {
            observer.note(&format!("Starting {name} again..."));
            let pid = cluster
                .restart_node(self.degraded.node, START_TIMEOUT)
                .with_context(|| format!("starting {name} again"))?;
            observer.note(&format!(
                "{name} answers CQL after {:.1} s (pid {pid}).",
                started.elapsed().as_secs_f64()
            ));
            acted = true;
        }
        self.stopped = None;
        if wait_hints {
            let waited = self.wait_for_hints(cluster, observer)?;
            if self.stop.is_set() {
                return Ok(false);
            }
            acted |= waited;
        }
        self.restored_s = acted.then(|| started.elapsed().as_secs_f64());
        Ok(true)
    }

    /// Waits until the nodes other than the one kept down hold no hint files, and until the
    /// hints of the last run's final seconds had time to reach a file; whether there was
    /// anything to wait for.
    fn wait_for_hints(
        &mut self,
        cluster: &LocalCluster,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<bool> {
        let started = Instant::now();
        let holders: Vec<_> = cluster
            .nodes()
            .into_iter()
            .filter(|n| n.index != self.degraded.node)
            .collect();
        let pending = || -> anyhow::Result<PendingHints> {
            holders.iter().try_fold(PendingHints::default(), |sum, n| {
                Ok(sum + hints::pending(n)?)
            })
        };
        let flushed_at = self.load_ended.take().map(|at| at + HINTS_FLUSH);
        let first = pending()?;
        if first.is_empty() && flushed_at.is_none_or(|at| Instant::now() >= at) {
            return Ok(false);
        }
        observer.note(&format!(
            "Waiting until the other nodes have delivered the hints they kept for {} \
             ({} file(s), {} now)...",
            self.degraded.node_name(),
            first.files,
            megabytes(first.bytes)
        ));
        let mut said = Instant::now();
        loop {
            if self.stop.is_set() {
                return Ok(true);
            }
            let now = pending()?;
            if now.is_empty() && flushed_at.is_none_or(|at| Instant::now() >= at) {
                observer.note(&format!(
                    "Hints delivered: {} is up to date after {:.1} s.",
                    self.degraded.node_name(),
                    started.elapsed().as_secs_f64()
                ));
                return Ok(true);
            }
            if started.elapsed() > HINTS_TIMEOUT {
                bail!(
                    "the other nodes still hold {} hint file(s) ({}) for {} after {} s: the \
                     next run would start on a node that lacks writes. Let them be delivered \
                     (`headroom cluster nodetool 1 listpendinghints`), then --resume the search",
                    now.files,
                    megabytes(now.bytes),
                    self.degraded.node_name(),
                    HINTS_TIMEOUT.as_secs()
                );
            }
            if said.elapsed() >= HINTS_SAY {
                observer.note(&format!(
                    "  still {} hint file(s), {} after {:.0} s",
                    now.files,
                    megabytes(now.bytes),
                    started.elapsed().as_secs_f64()
                ));
                said = Instant::now();
            }
            std::thread::sleep(HINTS_POLL);
        }
    }

    /// Before a run, once the data is ready: stops the node (it drains, tells its peers and
    /// exits), so that the run connects, warms up and measures with it down.
    pub fn take_down(
        &mut self,
        cluster: &mut LocalCluster,
        observer: &mut dyn RunObserver,
    ) -> anyhow::Result<()> {
        let name = self.degraded.node_name();
        let started = Instant::now();
        let Some(pid) = cluster
            .stop_node(self.degraded.node, STOP_GRACE)
            .with_context(|| format!("stopping {name}"))?
        else {
            bail!("{name} was expected up before the run, and is not running");
        };
        let took = started.elapsed().as_secs_f64();
        observer.note(&format!(
            "{name} stopped (pid {pid}, drained and gone in {took:.1} s): the run connects, \
             warms up and measures with it down."
        ));
        self.stopped = Some((pid, took));
        Ok(())
    }

    /// After a run: the record of the node down, checked to be still down (no process, its
    /// CQL port closed). `None` when the node was not stopped for this run.
    pub fn after_run(&mut self, cluster: &LocalCluster) -> Option<DownRecord> {
        self.load_ended = Some(Instant::now());
        let (pid, stop_s) = self.stopped?;
        let spec = cluster.node(self.degraded.node).ok()?;
        let down_throughout =
            cluster.pid(spec.index).is_none() && !probe::accepts_connections(spec.native_addr());
        Some(DownRecord {
            node: self.degraded.node,
            address: self.degraded.address.clone(),
            pid,
            down_throughout,
            restored_before_s: self.restored_s.take(),
            stop_s,
        })
    }

    /// Whether the node is down now, as far as this search knows (it stopped it and has not
    /// started it since).
    pub fn is_down(&self) -> bool {
        self.stopped.is_some()
    }

    /// At the end of the search: starts the node again if this search left it down, and
    /// with `wait_hints` waits for its hints (a search that ended well leaves the cluster
    /// whole; an interrupted one leaves the delivery to the nodes, and a resumed search
    /// waits for it). Errors are said, not returned: the search's results stand.
    pub fn restore(
        &mut self,
        cluster: &mut LocalCluster,
        wait_hints: bool,
        observer: &mut dyn RunObserver,
    ) {
        if !self.is_down() {
            return;
        }
        // A stop signal would end the wait at once.
        let stop = std::mem::replace(&mut self.stop, StopSignal::new());
        let brought = self.bring_back(cluster, wait_hints, observer);
        self.stop = stop;
        match brought {
            Ok(_) if wait_hints => {}
            Ok(_) => observer.note(&format!(
                "{} is up again; the other nodes deliver its hints in the background (a \
                 resumed search waits for them).",
                self.degraded.node_name()
            )),
            Err(e) => {
                self.stopped = None;
                observer.problem(&format!(
                    "Warning: {} could not be started again: {e:#}. Start it with `headroom \
                     cluster start --dir {}`.",
                    self.degraded.node_name(),
                    cluster.dir().display()
                ));
            }
        }
    }
}

/// A size in megabytes, one decimal: `1.2 MB`.
fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
