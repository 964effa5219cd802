//! Judging a run as it goes: intervals in, judged windows out.
//!
//! A run hands each finished interval (both phases of every op type) to a
//! [`StreamingJudge`], which adds its measured part up into windows aligned to the end of the
//! warmup ([`WindowAccumulator`]), judges every window it completes ([`judge_window`]), keeps
//! the run's verdict ([`RunVerdict`]) and tells whether the client's own wait decided a
//! failing window ([`client_decided`]). The window that ends the measured part is held until
//! the run ends, so that the answers arriving after the schedule's end (to requests intended
//! before it) count in it rather than in a window of their own.

use super::judge::{judge_window, WindowAccumulator, WindowStats, WindowVerdict};
use super::spec::Sla;
use super::validity::client_decided;
use super::verdict::RunVerdict;
use crate::metrics::{OpHistograms, Phase};

/// A window, judged.
#[derive(Debug, Clone)]
pub struct Judged {
    /// What the window held.
    pub window: WindowStats,
    /// How it fared.
    pub verdict: WindowVerdict,
    /// Whether it failed on the client's own wait (see [`client_decided`]).
    pub by_client: bool,
}

/// The SLA of a run and what it has judged so far.
#[derive(Debug)]
pub struct StreamingJudge {
    sla: Sla,
    windows: WindowAccumulator,
    verdict: RunVerdict,
    warmup_ns: u64,
    /// Length of the measured part, when the run has a duration.
    measured_ns: Option<u64>,
    /// The window that ends the measured part, held until the answers that arrive after the
    /// end are in.
    last: Option<WindowStats>,
    /// Failing windows the client's own wait decided.
    client_decided: u64,
}

impl StreamingJudge {
    /// A judge of `sla` for a run of op types `op_names` whose warmup lasts `warmup_ns` and
    /// whose measured part lasts `measured_ns` (`None` for a run bounded by a count).
    pub fn new(
        sla: Sla,
        op_names: Vec<String>,
        warmup_ns: u64,
        measured_ns: Option<u64>,
    ) -> StreamingJudge {
        StreamingJudge {
            windows: WindowAccumulator::new(op_names, sla.window.as_nanos() as u64),
            verdict: RunVerdict::new(&sla),
            sla,
            warmup_ns,
            measured_ns,
            last: None,
            client_decided: 0,
        }
    }

    /// Adds one interval (start and length in ns since the run's start, and per op type its
    /// statistics of both phases, [`Phase::index`]); returns the window it completed, judged.
    pub fn interval(
        &mut self,
        start_ns: u64,
        length_ns: u64,
        ops: &[[OpHistograms; 2]],
    ) -> Option<Judged> {
        let end_ns = start_ns + length_ns;
        if end_ns <= self.warmup_ns {
            return None;
        }
        let measured = || ops.iter().map(|phases| &phases[Phase::Measure.index()]);
        let start = start_ns.saturating_sub(self.warmup_ns);
        let length = end_ns - self.warmup_ns.max(start_ns);
        match self.measured_ns {
            // After the measured part: the answers to its last requests, which belong to the
            // last window (held back until the run ends), not to a window of their own.
            Some(measured_ns) if start >= measured_ns => match &mut self.last {
                Some(last) => {
                    for ((_, into), from) in last.ops.iter_mut().zip(measured()) {
                        into.add(from);
                    }
                    None
                }
                None => {
                    // The last window is a partial one, still open: add without time.
                    let inside = measured_ns.saturating_sub(1);
                    let window = self.windows.push(inside, 0, measured())?;
                    Some(self.judge(window))
                }
            },
            measured_ns => {
                let window = self.windows.push(start, length, measured())?;
                let is_last = measured_ns.is_some_and(|m| window.start_ns + window.length_ns >= m);
                if is_last {
                    self.last = Some(window);
                    None
                } else {
                    Some(self.judge(window))
                }
            }
        }
    }

    /// Judges the last window, once the run has ended (`completed`: it ran its measured
    /// part to the end); `None` when there is none left to judge. The window that ends the
    /// measured part is whole when the run completed, though its last interval stops at the
    /// last answer rather than at the window's end. A window the run did not reach the end
    /// of (a run bounded by a count, or stopped early) is partial and not judged: the
    /// verdict says how long it was.
    pub fn finish(&mut self, completed: bool) -> Option<Judged> {
        let windows = std::mem::replace(&mut self.windows, WindowAccumulator::new(Vec::new(), 1));
        let window_ns = windows.window_ns();
        let open = windows.finish();
        let window = match (self.last.take(), open) {
            (Some(last), _) => last,
            (None, Some(open)) => {
                let whole = completed
                    && self
                        .measured_ns
                        .is_some_and(|m| open.start_ns.saturating_add(window_ns) <= m);
                if !whole {
                    if open.length_ns > 0 {
                        self.verdict.partial_window_s = Some(open.length_ns as f64 / 1e9);
                    }
                    return None;
                }
                open
            }
            (None, None) => return None,
        };
        Some(self.judge(window))
    }

    /// Failing windows so far that the client's own wait decided.
    pub fn client_decided(&self) -> u64 {
        self.client_decided
    }

    /// The SLA and the verdict on every window judged.
    pub fn into_verdict(self) -> (Sla, RunVerdict) {
        (self.sla, self.verdict)
    }

    fn judge(&mut self, window: WindowStats) -> Judged {
        let verdict = judge_window(&self.sla, &window);
        self.verdict.add(&verdict);
        let by_client = !verdict.pass && client_decided(&self.sla, &window, &verdict);
        self.client_decided += u64::from(by_client);
        Judged {
            window,
            verdict,
            by_client,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::ErrorClass;

    const SECOND: u64 = 1_000_000_000;

    /// One interval of `ok` answers taking `ms` and `failed` failures, measured.
    fn interval(ok: u64, ms: u64, failed: u64) -> Vec<[OpHistograms; 2]> {
        let mut s = OpHistograms::default();
        for _ in 0..ok {
            s.record_ok(ms * 1_000_000, ms * 1_000_000);
        }
        for _ in 0..failed {
            s.record_error(ErrorClass::Timeout, || "slow".into());
        }
        vec![[OpHistograms::default(), s]]
    }

    #[test]
    fn windows_after_the_warmup_are_judged_and_the_last_waits_for_the_late_answers() {
        let sla = Sla::parse("p99<100ms", Duration::from_secs(2)).unwrap();
        // 1 s of warmup, 4 s measured: two 2 s windows, the last held until the run ends.
        let mut judge = StreamingJudge::new(sla, vec!["write".into()], SECOND, Some(4 * SECOND));
        assert!(
            judge.interval(0, SECOND, &interval(100, 1, 0)).is_none(),
            "warmup"
        );
        assert!(judge
            .interval(SECOND, SECOND, &interval(100, 1, 0))
            .is_none());
        let first = judge
            .interval(2 * SECOND, SECOND, &interval(100, 1, 0))
            .unwrap();
        assert_eq!(first.window.index, 0);
        assert!(first.verdict.pass && !first.by_client);
        assert!(judge
            .interval(3 * SECOND, SECOND, &interval(100, 1, 0))
            .is_none());
        assert!(judge
            .interval(4 * SECOND, SECOND, &interval(100, 1, 0))
            .is_none());
        // After the measured part: answers that fail the last window.
        assert!(judge
            .interval(5 * SECOND, SECOND / 10, &interval(0, 1, 50))
            .is_none());
        let last = judge.finish(true).unwrap();
        assert_eq!(last.window.index, 1);
        assert_eq!(last.window.ops[0].1.total(), 250);
        assert!(!last.verdict.pass);
        assert!(judge.finish(true).is_none(), "judged once");
        let (sla, verdict) = judge.into_verdict();
        assert_eq!(sla.to_string(), "p99<100ms, window=2s");
        assert_eq!((verdict.windows, verdict.failing.len()), (2, 1));
    }

    /// The last interval of a run ends with its last answer, not at its window's end: the
    /// window that ends the measured part is whole when the run completed, partial (not
    /// judged) when it stopped early.
    #[test]
    fn the_last_window_is_whole_only_when_the_run_completed() {
        let sla = Sla::parse("p99<100ms", Duration::from_secs(2)).unwrap();
        let run = |completed: bool, stopped_at_s: u64| {
            let mut judge =
                StreamingJudge::new(sla.clone(), vec!["write".into()], 0, Some(4 * SECOND));
            for s in 0..stopped_at_s {
                // The last interval stops 20 ms short, at the last answer.
                let length = if s + 1 == stopped_at_s {
                    SECOND - SECOND / 50
                } else {
                    SECOND
                };
                judge.interval(s * SECOND, length, &interval(100, 1, 0));
            }
            judge.finish(completed);
            judge.into_verdict().1
        };
        let whole = run(true, 4);
        assert_eq!(whole.windows, 2);
        assert_eq!(whole.partial_window_s, None);
        // Stopped in the second window: only the first is judged.
        let stopped = run(false, 3);
        assert_eq!(stopped.windows, 1);
        assert_eq!(stopped.partial_window_s, Some(0.98));
        // Stopped with the schedule's last second to go: still not whole.
        let late = run(false, 4);
        assert_eq!(late.windows, 1);
        assert!(late.partial_window_s.is_some());
    }
}
