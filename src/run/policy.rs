//! How this process runs a run: its client threads, the threads of its control's runtime,
//! and the sender its measured requests try. These are decisions of the run, made from its
//! settings; config.json ([`RunSettings`]) only describes the run.

use crate::client::native::Sender;
use crate::results::config::RunSettings;

/// Without `--threads`, an open-loop run takes one client thread per this many requests a
/// second: one thread sends 10 000/s at about 7 µs of CPU a request (7% of a core), and
/// every thread added below what the rate needs only adds wake-ups per request
/// (docs/PERFORMANCE.md, "One runtime per thread").
pub const RATE_PER_THREAD: f64 = 20_000.0;

/// Worker threads of the runtime that holds the run's control (the driver's session, the
/// collector, the files): one when the measured requests go through the native sender,
/// whose connections live on the lanes; with the driver's path its connections live there,
/// so it gets `threads`. Idle workers of a larger runtime still woke for the control's few
/// tasks a second and cost the default 10–15% more CPU per request than `--threads 1` at
/// 4000–10 000/s.
pub fn control_threads<M>(settings: &RunSettings<M>) -> usize {
    match effective_sender(settings) {
        Sender::Driver => settings.threads.max(1),
        Sender::Auto | Sender::Native => 1,
    }
}

/// The client threads this run takes: `threads` when given; without `--threads`, one per
/// [`RATE_PER_THREAD`] of the open loop's rate this process sends (a fleet's worker: its
/// share), at least one and at most `threads` (a closed loop takes `threads`).
pub fn run_threads(settings: &RunSettings) -> usize {
    match (settings.threads_from_rate, settings.process_rate()) {
        (true, Some(sent)) => {
            let needed = (sent / RATE_PER_THREAD).ceil();
            (needed.min(settings.threads as f64) as usize).clamp(1, settings.threads.max(1))
        }
        _ => settings.threads.max(1),
    }
}

/// The sender the measured requests will try: the driver for workloads the native sender
/// does not serve, whatever `--sender` asked (`native` is refused for them when the
/// settings are made).
pub fn effective_sender<M>(settings: &RunSettings<M>) -> Sender {
    settings.sender
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::LoadMode;
    use crate::results::config::WorkerSlot;

    /// The recorded run's settings, open loop at `rate_per_s`, up to `threads` threads.
    fn open(rate_per_s: f64, threads: usize, from_rate: bool) -> RunSettings {
        let mut settings = RunSettings::read(&crate::fixtures::run_fixture()).unwrap();
        settings.mode = LoadMode::Open {
            rate_per_s,
            arrivals: crate::engine::ArrivalKind::Fixed,
            max_in_flight: 4096,
        };
        settings.threads = threads;
        settings.threads_from_rate = from_rate;
        settings.worker = None;
        settings
    }

    #[test]
    fn threads_follow_the_rate_this_process_sends_without_threads() {
        // --threads given: exactly those.
        assert_eq!(run_threads(&open(100_000.0, 3, false)), 3);
        // From the rate: one per 20 000/s, at least one, at most the limit.
        assert_eq!(run_threads(&open(1_000.0, 8, true)), 1);
        assert_eq!(run_threads(&open(50_000.0, 8, true)), 3);
        assert_eq!(run_threads(&open(1_000_000.0, 8, true)), 8);
        // A fleet's worker sends a share of the rate: threads for its share.
        let mut worker = open(120_000.0, 8, true);
        worker.worker = Some(WorkerSlot::new(1, 3, std::time::SystemTime::UNIX_EPOCH));
        assert_eq!(run_threads(&worker), 2);
        // A closed loop takes what it was given.
        let mut closed = open(1_000.0, 4, true);
        closed.mode = LoadMode::Closed { concurrency: 16 };
        assert_eq!(run_threads(&closed), 4);
        // Never none.
        assert_eq!(run_threads(&open(1_000.0, 0, false)), 1);
    }

    #[test]
    fn the_control_takes_one_thread_unless_the_driver_sends() {
        let mut settings = open(10_000.0, 6, false);
        for (sender, threads) in [(Sender::Auto, 1), (Sender::Native, 1), (Sender::Driver, 6)] {
            settings.sender = sender;
            assert_eq!(effective_sender(&settings), sender);
            assert_eq!(control_threads(&settings), threads, "{sender:?}");
        }
        settings.sender = Sender::Driver;
        settings.threads = 0;
        assert_eq!(control_threads(&settings), 1);
    }
}
