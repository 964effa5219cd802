//! A fleet's worker waits for the fleet's time zero (`--start-at`) before its schedule
//! begins, so that every worker's request i is intended at the same moment, whichever
//! process sends it, and their histogram logs share one time base.
//!
//! The run's clock is set to the agreed moment itself, not to when the wait ended: a worker
//! woken a little late sends its first requests late and measures them so (their response
//! times count from the schedule). One ready more than [`LATE_START_LIMIT`] after the moment
//! refuses to run: its requests would all be late, and the fleet would not have started
//! together.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::engine::clock::RealClock;
use crate::results::config::WorkerSlot;
use crate::stop::StopSignal;

use super::observer::RunObserver;

/// How late after `--start-at` a worker may still begin.
pub const LATE_START_LIMIT: Duration = Duration::from_secs(1);

/// Why a worker cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The worker was ready too late.
    #[error(
        "worker {index} of {count} was ready {late:.1} s after the fleet's start time ({start_at}): \
         more than {limit} s late, its requests would all be late. Give a later --start-at \
         (e.g. +{advice}s), or look at what delayed it (connecting, preparing, the populate)"
    )]
    Late {
        /// K.
        index: u32,
        /// N.
        count: u32,
        /// Seconds late.
        late: f64,
        /// The agreed moment.
        start_at: String,
        /// [`LATE_START_LIMIT`] in seconds.
        limit: u64,
        /// A start time that would have left room.
        advice: u64,
    },
    /// config.json's start time does not read.
    #[error("the worker's start time '{0}' is not an RFC 3339 time")]
    BadTime(String),
}

/// Waits until the fleet's start: the moment and the run's clock (zero at that moment), or
/// `None` when `stop` came first.
pub(super) async fn wait_for(
    slot: &WorkerSlot,
    stop: &Arc<StopSignal>,
    observer: &mut dyn RunObserver,
) -> Result<Option<(SystemTime, RealClock)>, StartError> {
    let start = slot
        .start_time()
        .ok_or_else(|| StartError::BadTime(slot.start_at.clone()))?;
    let (now, now_instant) = (SystemTime::now(), Instant::now());
    match start.duration_since(now) {
        Ok(ahead) => {
            observer.note(&format!(
                "Worker {} of {}: the schedule starts at {} (in {:.1} s).",
                slot.index,
                slot.count,
                slot.start_at,
                ahead.as_secs_f64()
            ));
            let t0 = now_instant + ahead;
            // tokio's timer wakes up to a millisecond late; the engine's own timer is precise.
            let wake = t0
                .checked_sub(Duration::from_millis(2))
                .unwrap_or(now_instant);
            tokio::select! {
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(wake)) => {}
                _ = stop.wait() => return Ok(None),
            }
            Ok(Some((start, RealClock::starting_at(t0))))
        }
        Err(past) => {
            let late = past.duration();
            if late > LATE_START_LIMIT {
                return Err(StartError::Late {
                    index: slot.index,
                    count: slot.count,
                    late: late.as_secs_f64(),
                    start_at: slot.start_at.clone(),
                    limit: LATE_START_LIMIT.as_secs(),
                    advice: (late.as_secs_f64() * 2.0).ceil().max(10.0) as u64,
                });
            }
            observer.note(&format!(
                "Worker {} of {}: started {:.0} ms after the fleet's start time; its first \
                 requests are late, and measured so.",
                slot.index,
                slot.count,
                late.as_secs_f64() * 1e3
            ));
            let t0 = now_instant.checked_sub(late).unwrap_or(now_instant);
            Ok(Some((start, RealClock::starting_at(t0))))
        }
    }
}
