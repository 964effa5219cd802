//! Judging a run as it goes: intervals in, judged windows out.
//!
//! A run hands each finished interval (both phases of every op type) to a
//! [`StreamingJudge`], which adds its measured part up into windows aligned to the end of the
//! warmup ([`WindowAccumulator`]), once per window length of the SLA (a term may have its
//! own: `p99.99<200ms@5m`), judges every window it completes ([`judge_window`]) against the
//! terms of its length, keeps
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
    /// One per window length of the SLA, shortest first.
    lanes: Vec<Lane>,
    verdict: RunVerdict,
    warmup_ns: u64,
    /// Length of the measured part, when the run has a duration.
    measured_ns: Option<u64>,
    /// Failing windows the client's own wait decided.
    client_decided: u64,
}

/// The terms of one window length and their windows: each length is judged on the same
/// intervals, in tumbling windows of its own aligned to the end of the warmup.
#[derive(Debug)]
struct Lane {
    /// The terms of this length, as an SLA whose window is this length.
    sla: Sla,
    /// The length in ms, when it is not the SLA's window (written on its verdicts).
    own_ms: Option<u64>,
    windows: WindowAccumulator,
    /// The window that ends the measured part, held until the answers that arrive after the
    /// end are in.
    last: Option<WindowStats>,
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
        let lanes = sla
            .windows()
            .into_iter()
            .map(|window| Lane {
                sla: sla.over(window),
                own_ms: (window != sla.window).then_some(window.as_millis() as u64),
                windows: WindowAccumulator::new(op_names.clone(), window.as_nanos() as u64),
                last: None,
            })
            .collect();
        StreamingJudge {
            lanes,
            verdict: RunVerdict::new(&sla),
            sla,
            warmup_ns,
            measured_ns,
            client_decided: 0,
        }
    }

    /// Adds one interval (start and length in ns since the run's start, and per op type its
    /// statistics of both phases, [`Phase::index`]); returns the windows it completed, judged
    /// (one per window length at most, shortest first).
    pub fn interval(
        &mut self,
        start_ns: u64,
        length_ns: u64,
        ops: &[[OpHistograms; 2]],
    ) -> Vec<Judged> {
        let end_ns = start_ns + length_ns;
        if end_ns <= self.warmup_ns {
            return Vec::new();
        }
        let measured = || ops.iter().map(|phases| &phases[Phase::Measure.index()]);
        let start = start_ns.saturating_sub(self.warmup_ns);
        let length = end_ns - self.warmup_ns.max(start_ns);
        let mut completed = Vec::new();
        for lane in 0..self.lanes.len() {
            let lane_ref = &mut self.lanes[lane];
            let window = match self.measured_ns {
                // After the measured part: the answers to its last requests, which belong to
                // the last window (held back until the run ends), not to a window of their own.
                Some(measured_ns) if start >= measured_ns => match &mut lane_ref.last {
                    Some(last) => {
                        for ((_, into), from) in last.ops.iter_mut().zip(measured()) {
                            into.add(from);
                        }
                        None
                    }
                    // The last window is a partial one, still open: add without time.
                    None => lane_ref
                        .windows
                        .push(measured_ns.saturating_sub(1), 0, measured()),
                },
                measured_ns => match lane_ref.windows.push(start, length, measured()) {
                    Some(window)
                        if measured_ns.is_some_and(|m| window.start_ns + window.length_ns >= m) =>
                    {
                        lane_ref.last = Some(window);
                        None
                    }
                    window => window,
                },
            };
            if let Some(window) = window {
                completed.push(self.judge(lane, window));
            }
        }
        completed
    }

    /// Judges the last windows, once the run has ended (`completed`: it ran its measured
    /// part to the end); none when there is none left to judge. The window that ends the
    /// measured part is whole when the run completed, though its last interval stops at the
    /// last answer rather than at the window's end. A window the run did not reach the end
    /// of (a run bounded by a count, or stopped early) is partial and not judged: the
    /// verdict says how long it was (for the SLA's window), and a term none of whose windows
    /// was whole has no verdict.
    pub fn finish(&mut self, completed: bool) -> Vec<Judged> {
        let mut judged = Vec::new();
        for lane in 0..self.lanes.len() {
            let lane_ref = &mut self.lanes[lane];
            let windows =
                std::mem::replace(&mut lane_ref.windows, WindowAccumulator::new(Vec::new(), 1));
            let window_ns = windows.window_ns();
            let open = windows.finish();
            let window = match (lane_ref.last.take(), open) {
                (Some(last), _) => last,
                (None, Some(open)) => {
                    let whole = completed
                        && self
                            .measured_ns
                            .is_some_and(|m| open.start_ns.saturating_add(window_ns) <= m);
                    if !whole {
                        if open.length_ns > 0 && lane_ref.own_ms.is_none() {
                            self.verdict.partial_window_s = Some(open.length_ns as f64 / 1e9);
                        }
                        continue;
                    }
                    open
                }
                (None, None) => continue,
            };
            judged.push(self.judge(lane, window));
        }
        judged
    }

    /// Failing windows so far that the client's own wait decided.
    pub fn client_decided(&self) -> u64 {
        self.client_decided
    }

    /// The SLA and the verdict on every window judged.
    pub fn into_verdict(self) -> (Sla, RunVerdict) {
        (self.sla, self.verdict)
    }

    fn judge(&mut self, lane: usize, window: WindowStats) -> Judged {
        let lane = &self.lanes[lane];
        let mut verdict = judge_window(&lane.sla, &window);
        verdict.window_ms = lane.own_ms;
        self.verdict.add(&verdict);
        let by_client = !verdict.pass && client_decided(&lane.sla, &window, &verdict);
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
    use crate::sla::Judgement;

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
            judge.interval(0, SECOND, &interval(100, 1, 0)).is_empty(),
            "warmup"
        );
        assert!(judge
            .interval(SECOND, SECOND, &interval(100, 1, 0))
            .is_empty());
        let first = judge
            .interval(2 * SECOND, SECOND, &interval(100, 1, 0))
            .pop()
            .unwrap();
        assert_eq!(first.window.index, 0);
        assert!(first.verdict.pass && !first.by_client);
        assert!(judge
            .interval(3 * SECOND, SECOND, &interval(100, 1, 0))
            .is_empty());
        assert!(judge
            .interval(4 * SECOND, SECOND, &interval(100, 1, 0))
            .is_empty());
        // After the measured part: answers that fail the last window.
        assert!(judge
            .interval(5 * SECOND, SECOND / 10, &interval(0, 1, 50))
            .is_empty());
        let last = judge.finish(true).pop().unwrap();
        assert_eq!(last.window.index, 1);
        assert_eq!(last.window.ops[0].1.total(), 250);
        assert!(!last.verdict.pass);
        assert!(judge.finish(true).is_empty(), "judged once");
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

    /// `ok` answers of 1 ms, `slow` of `slow_ms`, in one measured interval.
    fn with_slow(ok: u64, slow: u64, slow_ms: u64) -> Vec<[OpHistograms; 2]> {
        let mut s = OpHistograms::default();
        for _ in 0..ok {
            s.record_ok(1_000_000, 1_000_000);
        }
        for _ in 0..slow {
            s.record_ok(slow_ms * 1_000_000, slow_ms * 1_000_000);
        }
        vec![[OpHistograms::default(), s]]
    }

    /// One minute of 1 s intervals of 1000 requests, `slow(second)` of them slow, judged
    /// against `p99<20ms@10s, p99.9<50ms@1m`.
    fn minute(slow: impl Fn(u64) -> (u64, u64)) -> (Vec<Judged>, RunVerdict) {
        let sla = Sla::parse("p99<20ms@10s, p99.9<50ms@1m", Duration::from_secs(10)).unwrap();
        assert_eq!(sla.to_string(), "p99<20ms, p99.9<50ms@1m, window=10s");
        let mut judge = StreamingJudge::new(sla, vec!["write".into()], 0, Some(60 * SECOND));
        let mut judged = Vec::new();
        for second in 0..60 {
            let (count, ms) = slow(second);
            judged.extend(judge.interval(
                second * SECOND,
                SECOND,
                &with_slow(1000 - count, count, ms),
            ));
        }
        judged.extend(judge.finish(true));
        (judged, judge.into_verdict().1)
    }

    /// Each term is judged over tumbling windows of its own length, on the same intervals:
    /// a short stall fails a 10 s p99 window and not the minute's p99.9; slow requests
    /// spread thin fail the minute's p99.9 and no 10 s p99 window.
    #[test]
    fn each_term_is_judged_over_its_own_windows() {
        // 150 requests at 30 ms in second 25: 1.5% of its 10 s window, none above 50 ms.
        let (judged, verdict) = minute(|s| if s == 25 { (150, 30) } else { (0, 1) });
        assert_eq!(judged.len(), 7, "six 10 s windows and one of a minute");
        let minute_window = judged
            .iter()
            .find(|j| j.verdict.window_ms.is_some())
            .unwrap();
        assert_eq!(minute_window.verdict.window_ms, Some(60_000));
        assert_eq!(minute_window.window.length_ns, 60 * SECOND);
        assert_eq!(minute_window.verdict.outcomes.len(), 1);
        assert_eq!(minute_window.verdict.outcomes[0].term, "p99.9<50ms@1m");
        assert!(minute_window.verdict.pass);
        assert_eq!(minute_window.verdict.outcomes[0].requests, 60_000);
        let failing: Vec<u64> = verdict.failing.iter().map(|w| w.index).collect();
        assert_eq!(failing, [2], "the third 10 s window");
        assert_eq!(verdict.failing[0].outcomes[0].term, "p99<20ms");
        assert_eq!(verdict.windows, 6);
        assert_eq!(verdict.worst[0].failing_windows, 1);
        assert_eq!(verdict.worst[1].term, "p99.9<50ms@1m");
        assert_eq!(
            (verdict.worst[1].windows, verdict.worst[1].failing_windows),
            (Some(1), 0)
        );
        assert_eq!(verdict.worst[1].window_ms, Some(60_000));
        assert_eq!(verdict.judgement(), Judgement::Fail);

        // 80 requests at 100 ms, spread over the minute: at most 10 in any 10 s window (a
        // p99 allows 100), but 80 of 60 000 is above the minute's 0.1%.
        let (_, verdict) = minute(|s| if s % 6 == 0 { (8, 100) } else { (0, 1) });
        assert_eq!(verdict.failing.len(), 1);
        assert_eq!(verdict.failing[0].window_ms, Some(60_000));
        assert_eq!(verdict.failing[0].outcomes[0].term, "p99.9<50ms@1m");
        assert_eq!(verdict.worst[0].failing_windows, 0);
        assert_eq!(verdict.worst[1].failing_windows, 1);
        assert_eq!(verdict.judgement(), Judgement::Fail);

        // Neither: a pass over both lengths.
        let (_, verdict) = minute(|_| (0, 1));
        assert_eq!(verdict.judgement(), Judgement::Pass);
        assert!(verdict.pass);
    }

    /// A run shorter than a term's window has no verdict for that term, and says so; a
    /// failing shorter window still fails the run.
    #[test]
    fn a_run_shorter_than_a_terms_window_has_no_verdict_for_it() {
        let sla = Sla::parse("p99<20ms, p99.9<50ms@1m", Duration::from_secs(10)).unwrap();
        let run = |slow: u64| {
            // Bounded by a count: 30 s, then it stops.
            let mut judge = StreamingJudge::new(sla.clone(), vec!["write".into()], 0, None);
            for second in 0..30 {
                let n = if second == 5 { slow } else { 0 };
                judge.interval(second * SECOND, SECOND, &with_slow(1000 - n, n, 30));
            }
            judge.finish(true);
            judge.into_verdict().1
        };
        let verdict = run(0);
        assert_eq!(verdict.windows, 3);
        assert_eq!(verdict.worst[1].windows, Some(0));
        let Judgement::NoVerdict(why) = verdict.judgement() else {
            panic!("{:?}", verdict.judgement())
        };
        assert!(
            why.contains("p99.9<50ms@1m had no complete window of 1m to judge"),
            "{why}"
        );
        assert!(!verdict.pass);
        assert_eq!(run(500).judgement(), Judgement::Fail);
    }
}
