//! Judging a run against its SLA, window by window.
//!
//! [`WindowAccumulator`] adds fixed-length intervals up into windows aligned to the start of
//! the measured period; [`judge_window`] measures each term of the [`Sla`] in one window;
//! [`super::verdict`] adds the windows up into a run's verdict. Percentiles are never
//! averaged: each comes from the window's own (merged) histogram, the recall's too.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::spec::{Bound, Metric, Sla, Term, Threshold};
use crate::format::group_thousands;
use crate::metrics::{OpHistograms, RECALL_SCALE};
use crate::stats::{new_histogram, percentile_rank, value_at_percentile, value_at_rank};

/// What every op type did in one window.
#[derive(Debug, Clone)]
pub struct WindowStats {
    /// 0 for the first window of the measured period.
    pub index: u64,
    /// Start, ns since the start of the measured period.
    pub start_ns: u64,
    /// Time the window's intervals cover, ns: the window length, or less for the last window.
    pub length_ns: u64,
    /// The statistics of each op type, by name.
    pub ops: Vec<(String, OpHistograms)>,
}

/// A measured value of a term: a latency, a share of requests or a recall. Values of one
/// term always have the same kind and compare exactly. A higher latency or share is worse,
/// a higher recall better ([`Value::is_worse_than`]).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    /// A response time in nanoseconds.
    LatencyNs(u64),
    /// A share of requests between 0 and 1.
    Fraction(f64),
    /// A recall between 0 and 1, a whole number of ten-thousandths (rounded down from a
    /// mean: a lower bound is judged on what is surely reached).
    Recall(f64),
}

impl Value {
    /// Whether the value satisfies `bound` on `threshold`; a value of another kind than the
    /// threshold (a term built by hand with a mismatched threshold) never does.
    pub fn satisfies(self, bound: Bound, threshold: Threshold) -> bool {
        match (self, threshold) {
            (Value::LatencyNs(v), Threshold::LatencyNs(t)) => bound.holds(v, t),
            (Value::Fraction(v), Threshold::Fraction(t)) => bound.holds(v, t),
            (Value::Recall(v), Threshold::Recall(t)) => bound.holds(v, t),
            _ => false,
        }
    }

    /// Whether this value is worse than `other`, of the same term: higher, or for a recall
    /// lower.
    pub fn is_worse_than(self, other: Value) -> bool {
        match (self, other) {
            (Value::Recall(v), Value::Recall(o)) => v < o,
            _ => self > other,
        }
    }
}

impl fmt::Display for Value {
    /// A latency in milliseconds, a fraction as a percentage, a recall with three decimals,
    /// four when the fourth is not 0: `12.345ms`, `0.120%`, `0.842`, `0.8996`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::LatencyNs(ns) => write!(f, "{:.3}ms", ns as f64 / 1e6),
            Value::Fraction(fraction) => write!(f, "{:.3}%", fraction * 100.0),
            Value::Recall(recall) => {
                let four = format!("{recall:.4}");
                f.write_str(four.strip_suffix('0').unwrap_or(&four))
            }
        }
    }
}

/// How one term fared in one window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TermOutcome {
    /// The term's canonical name, e.g. `p99.9<100ms`.
    pub term: String,
    /// The measured value: for a latency term, that of the answered requests alone (0 when
    /// none was answered); for `errors`, the failed share of all requests; for a recall
    /// term, the recall of the requests judged for it, a failed one's 0 (0 when there were
    /// none).
    pub value: Value,
    /// Whether the window meets the term. A failed request counts as slower than any
    /// threshold (METHOD.md §3): see [`judge_window`].
    pub pass: bool,
    /// A percentile judged on the window's max: the window had too few requests to resolve
    /// it (fewer than 1000 for p99.9).
    pub judged_on_max: bool,
    /// The requests the term covers in the window, answered or failed (for a recall term,
    /// those that recorded a recall).
    pub requests: u64,
    /// How many of them failed.
    #[serde(default)]
    pub failed: u64,
    /// The term failed although the answered requests alone meet it: failed requests,
    /// counted as slower than the threshold, decided it.
    #[serde(default)]
    pub failures_decided: bool,
}

impl TermOutcome {
    /// The failed share of the requests the term covers, between 0 and 1.
    pub fn failed_share(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.failed as f64 / self.requests as f64
        }
    }

    /// The outcome in words, e.g. `p99.9<100ms was 231.400ms`, `p99<10ms was 4.100ms with
    /// 2.000% failed (the failures decided it)`, `max<1s: all 500 requests failed`,
    /// `recall@10>=0.9: 0.842 over 4 980 requests`.
    pub fn describe(&self) -> String {
        describe(
            &self.term,
            self.value,
            self.requests,
            self.failed,
            self.failures_decided,
        )
    }
}

/// A term's value in words, with the failed share beside a latency when there is one, and
/// the requests a recall is of.
fn describe(term: &str, value: Value, requests: u64, failed: u64, decided: bool) -> String {
    if matches!(value, Value::Recall(_)) {
        return match (requests, failed) {
            (0, _) => format!("{term}: no request in the window recorded a recall"),
            (_, 0) => format!(
                "{term}: {value} over {} requests",
                group_thousands(requests)
            ),
            _ => format!(
                "{term}: {value} over {} requests, {} of them failed (recall 0)",
                group_thousands(requests),
                group_thousands(failed)
            ),
        };
    }
    if matches!(value, Value::LatencyNs(_)) && failed > 0 {
        if failed == requests {
            return format!("{term}: all {failed} requests failed");
        }
        let share = Value::Fraction(failed as f64 / requests as f64);
        let decided = if decided {
            " (the failures decided it)"
        } else {
            ""
        };
        return format!("{term} was {value} with {share} failed{decided}");
    }
    format!("{term} was {value}")
}

/// How one window fared: each term's outcome, in the SLA's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowVerdict {
    /// The window's index.
    pub index: u64,
    /// Start, ns since the start of the measured period.
    pub start_ns: u64,
    /// Length, ns.
    pub length_ns: u64,
    /// The window length its terms are judged over, ms, when it is not the SLA's own (the
    /// terms have windows of their own: `p99.99<200ms@5m`); its index counts windows of
    /// that length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ms: Option<u64>,
    /// Whether every term passed.
    pub pass: bool,
    /// One per term judged over this window's length, in the SLA's order.
    pub outcomes: Vec<TermOutcome>,
}

impl WindowVerdict {
    /// The failing terms and their values, e.g. `p99.9<100ms was 231.400ms`.
    pub fn failures(&self) -> String {
        let failed: Vec<String> = self
            .outcomes
            .iter()
            .filter(|o| !o.pass)
            .map(TermOutcome::describe)
            .collect();
        failed.join(", ")
    }
}

/// Judges one window against every term of `sla` (whatever their windows: the caller hands
/// each window to the terms of its length, [`Sla::over`]).
///
/// A failed request never helps a window pass (METHOD.md §3): it counts as slower than any
/// threshold. So `pQ<T` passes only if the requests slower than T or failed are at most
/// 1 − Q of all the window's requests (the value at the percentile's rank among all
/// requests, failures ranked last, meets T); `max<T` and `mean<T` fail on any failed
/// request; a window whose requests all failed fails every latency term. The value shown is
/// that of the answered requests, and the outcome carries the failed count beside it. A
/// window too small to resolve a percentile (fewer requests, failed ones included, than
/// [`crate::sla::Percentile::required_requests`]) is judged on its max. A window without
/// requests passes with the value 0. A term naming an op type the window lacks covers
/// nothing; [`Sla::check_ops`] rules that out up front.
///
/// A recall term merges the recall histograms of the op types it covers that have one (the
/// ANN queries), a failed request having recorded 0: `recall@K>=X` holds when their mean
/// recall (each histogram bucket at its lowest value, rounded down to the ten-thousandth)
/// meets X; `pN(recall)>=X` when at most N% of the requests fell below X: the value at rank
/// floor(N% · requests) + 1, as the lowest value of its histogram bucket, meets X (the
/// mirror of `pQ<T`, which allows (100 − Q)% above T). With fewer than 100/N requests that
/// is the lowest recall. A window in which no request recorded a recall passes with the
/// value 0, and says so ([`TermOutcome::describe`]); [`Sla::check_recall`] rules out a term
/// with nothing to measure up front.
pub fn judge_window(sla: &Sla, window: &WindowStats) -> WindowVerdict {
    let outcomes: Vec<TermOutcome> = sla
        .terms
        .iter()
        .map(|term| judge_term(term, window))
        .collect();
    WindowVerdict {
        index: window.index,
        start_ns: window.start_ns,
        length_ns: window.length_ns,
        window_ms: None,
        pass: outcomes.iter().all(|o| o.pass),
        outcomes,
    }
}

fn judge_term(term: &Term, window: &WindowStats) -> TermOutcome {
    let covered = || {
        window
            .ops
            .iter()
            .filter(|(name, _)| term.op.as_deref().is_none_or(|op| op == name))
            .map(|(_, stats)| stats)
    };
    if term.metric.is_recall() {
        return judge_recall(term, covered());
    }
    let failed: u64 = covered().map(OpHistograms::error_count).sum();
    let holds = |value: Value| value.satisfies(term.bound, term.threshold);
    if term.metric == Metric::Errors {
        let (value, requests) = error_share(covered());
        return TermOutcome {
            term: term.name(),
            value,
            pass: requests == 0 || holds(value),
            judged_on_max: false,
            requests,
            failed,
            failures_decided: false,
        };
    }
    let mut answered = new_histogram();
    for s in covered() {
        answered
            .add(&s.response_ns)
            .expect("auto-resizing histograms always add");
    }
    let requests = answered.len() + failed;
    // The value shown (answered requests only), and the value judged: failures ranked after
    // every answer, `None` when the judged rank falls among them.
    let (shown_ns, judged_ns, judged_on_max) = if answered.is_empty() {
        (0, None, false)
    } else {
        let max = answered.max();
        match term.metric {
            Metric::Percentile(p) if requests < p.required_requests() => {
                (max, (failed == 0).then_some(max), true)
            }
            Metric::Percentile(p) => {
                let rank = percentile_rank(p.value(), requests);
                let judged = (rank <= answered.len()).then(|| value_at_rank(&answered, rank));
                (value_at_percentile(&answered, p.value()), judged, false)
            }
            Metric::Max => (max, (failed == 0).then_some(max), false),
            // Rounded to the nearest nanosecond; the verdict is on the value reported.
            Metric::Mean => {
                let mean = answered.mean().round() as u64;
                (mean, (failed == 0).then_some(mean), false)
            }
            Metric::Errors | Metric::Recall(_) | Metric::RecallPercentile(_) => {
                unreachable!("judged above")
            }
        }
    };
    let value = Value::LatencyNs(shown_ns);
    let pass = requests == 0 || judged_ns.is_some_and(|ns| holds(Value::LatencyNs(ns)));
    TermOutcome {
        term: term.name(),
        value,
        pass,
        judged_on_max,
        requests,
        failed,
        failures_decided: !pass && (answered.is_empty() || holds(value)),
    }
}

/// A recall term's outcome over the op types `covered` (see [`judge_window`]).
fn judge_recall<'a>(term: &Term, covered: impl Iterator<Item = &'a OpHistograms>) -> TermOutcome {
    let mut recall = new_histogram();
    let mut failed = 0;
    for stats in covered {
        if let Some(h) = &stats.recall {
            recall.add(h).expect("auto-resizing histograms always add");
            failed += stats.error_count();
        }
    }
    let ten_thousandths = match term.metric {
        _ if recall.is_empty() => 0,
        Metric::RecallPercentile(p) => {
            recall.lowest_equivalent(value_at_rank(&recall, p.rank_from_below(recall.len())))
        }
        _ => crate::metrics::op_histograms::recall_mean(&recall),
    };
    let value = Value::Recall(ten_thousandths as f64 / RECALL_SCALE);
    TermOutcome {
        term: term.name(),
        value,
        pass: recall.is_empty() || value.satisfies(term.bound, term.threshold),
        judged_on_max: false,
        requests: recall.len(),
        failed,
        failures_decided: false,
    }
}

/// Failed / all requests, 0 without requests; the share and the number of requests.
fn error_share<'a>(stats: impl Iterator<Item = &'a OpHistograms>) -> (Value, u64) {
    let (ok, failed) = stats.fold((0, 0), |(ok, failed), s| {
        (ok + s.ok, failed + s.error_count())
    });
    let requests = ok + failed;
    let share = if requests == 0 {
        0.0
    } else {
        failed as f64 / requests as f64
    };
    (Value::Fraction(share), requests)
}

/// Checks that a window is a whole multiple of the interval, so that intervals add up to
/// windows exactly.
pub fn check_window(window: Duration, interval: Duration) -> Result<(), String> {
    check_window_of(
        window,
        interval,
        "the SLA window",
        "--window, or window= in --sla",
    )
}

/// [`check_window`] for every window length of `sla`, naming the terms of a window of their
/// own.
pub fn check_windows(sla: &Sla, interval: Duration) -> Result<(), String> {
    for window in sla.windows() {
        if window == sla.window {
            check_window(window, interval)?;
        } else {
            let terms = sla.over(window).to_terms_string();
            check_window_of(
                window,
                interval,
                &format!("the window of {terms}"),
                "after the term's @",
            )?;
        }
    }
    Ok(())
}

fn check_window_of(
    window: Duration,
    interval: Duration,
    what: &str,
    where_given: &str,
) -> Result<(), String> {
    let (w, i) = (window.as_nanos(), interval.as_nanos());
    if i == 0 {
        return Err("the interval must be longer than zero".to_string());
    }
    if w >= i && w.is_multiple_of(i) {
        return Ok(());
    }
    let show = |ns: u128| humantime::format_duration(Duration::from_nanos(ns as u64)).to_string();
    let below = (w / i) * i;
    let suggestion = if below == 0 {
        show(i)
    } else {
        format!("{} or {}", show(below), show(below + i))
    };
    Err(format!(
        "{what} ({}) must be a whole multiple of the --interval ({}): give a window of \
         {suggestion} ({where_given}), or another --interval",
        show(w),
        show(i)
    ))
}

/// Adds consecutive intervals up into windows of a fixed length, aligned to the start of the
/// measured period: window k covers [k·W, (k+1)·W).
///
/// Intervals are pushed in order, each starting where the previous one ended and lying
/// within one window (the window is a whole multiple of the interval: see [`check_window`]);
/// only the last interval of a run may be shorter. Should an interval start in another window
/// than the open one, the open window ends there (as if it were the last, see
/// [`WindowAccumulator::finish`]).
#[derive(Debug)]
pub struct WindowAccumulator {
    op_names: Vec<String>,
    window_ns: u64,
    open: Option<OpenWindow>,
}

/// A window still receiving intervals.
#[derive(Debug)]
struct OpenWindow {
    index: u64,
    covered_ns: u64,
    ops: Vec<OpHistograms>,
}

impl WindowAccumulator {
    /// An accumulator for op types `op_names` (in the order of the statistics pushed) and
    /// windows of `window_ns` (> 0).
    pub fn new(op_names: Vec<String>, window_ns: u64) -> Self {
        WindowAccumulator {
            op_names,
            window_ns: window_ns.max(1),
            open: None,
        }
    }

    /// Adds one interval: its start, ns since the start of the measured period, its length,
    /// and the statistics of each op type. Returns the window this interval completes.
    pub fn push<'a>(
        &mut self,
        interval_start_ns: u64,
        interval_length_ns: u64,
        per_op: impl IntoIterator<Item = &'a OpHistograms>,
    ) -> Option<WindowStats> {
        let index = interval_start_ns / self.window_ns;
        let ended = self.open.take_if(|w| w.index != index);
        let n_ops = self.op_names.len();
        let open = self.open.get_or_insert_with(|| OpenWindow {
            index,
            covered_ns: 0,
            ops: vec![OpHistograms::default(); n_ops],
        });
        open.covered_ns += interval_length_ns;
        let mut given = 0;
        for (into, from) in open.ops.iter_mut().zip(per_op) {
            into.add(from);
            given += 1;
        }
        debug_assert_eq!(given, n_ops, "one OpHistograms per op type");
        if let Some(ended) = ended {
            // Out of order: the open window ended early; this interval's window stays open.
            return self.partial(ended);
        }
        if open.covered_ns >= self.window_ns {
            return self.open.take().map(|w| self.stats(w));
        }
        None
    }

    /// Ends the run's windows: the window still open, if any, with the time its intervals
    /// cover as its length. It did not fill up (a whole one is handed out by
    /// [`WindowAccumulator::push`]); whether it is whole all the same (the run's schedule
    /// ended with it, and its last interval only stopped at the last answer) is the caller's
    /// to say: see [`super::StreamingJudge::finish`].
    pub fn finish(mut self) -> Option<WindowStats> {
        let open = self.open.take()?;
        Some(self.stats(open))
    }

    /// The length of every window, ns.
    pub fn window_ns(&self) -> u64 {
        self.window_ns
    }

    /// A window that ended before it was complete, if it covers at least half a window.
    fn partial(&self, window: OpenWindow) -> Option<WindowStats> {
        (window.covered_ns.saturating_mul(2) >= self.window_ns).then(|| self.stats(window))
    }

    fn stats(&self, window: OpenWindow) -> WindowStats {
        WindowStats {
            index: window.index,
            start_ns: window.index * self.window_ns,
            length_ns: window.covered_ns,
            ops: self.op_names.iter().cloned().zip(window.ops).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::ErrorClass;
    use crate::sla::spec::DEFAULT_WINDOW;

    const MS: u64 = 1_000_000;
    const SECOND: u64 = 1_000_000_000;
    /// What a histogram reports for 1 ms: its bucket's highest equivalent value.
    const MS_BUCKET: u64 = 1_000_447;

    fn sla(spec: &str) -> Sla {
        Sla::parse(spec, DEFAULT_WINDOW).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `n` successful requests taking `ns` each, added to `stats`.
    fn record(stats: &mut OpHistograms, n: u64, ns: u64) {
        for _ in 0..n {
            stats.record_ok(ns, ns);
        }
    }

    fn failures(stats: &mut OpHistograms, n: u64) {
        for _ in 0..n {
            stats.record_error(ErrorClass::Timeout, || "timed out".into());
        }
    }

    fn window(ops: Vec<(&str, OpHistograms)>) -> WindowStats {
        WindowStats {
            index: 0,
            start_ns: 0,
            length_ns: 10 * SECOND,
            ops: ops.into_iter().map(|(n, s)| (n.to_string(), s)).collect(),
        }
    }

    fn one_op(stats: OpHistograms) -> WindowStats {
        window(vec![("write", stats)])
    }

    fn outcome(spec: &str, w: &WindowStats) -> TermOutcome {
        let verdict = judge_window(&sla(spec), w);
        assert_eq!(verdict.outcomes.len(), 1);
        verdict.outcomes[0].clone()
    }

    /// 999 requests at 1 ms and `slow` at 50 ms.
    fn mostly_fast(slow: u64) -> OpHistograms {
        let mut s = OpHistograms::default();
        record(&mut s, 999, MS);
        record(&mut s, slow, 50 * MS);
        s
    }

    #[test]
    fn percentile_boundary_is_exact() {
        let w = one_op(mostly_fast(1));
        let h = &w.ops[0].1.response_ns;
        let p999 = value_at_percentile(h, 99.9);
        assert_eq!(p999, h.highest_equivalent(MS), "the 999th of 1000 values");
        let below = outcome(&format!("p99.9<{p999}ns"), &w);
        assert_eq!(below.value, Value::LatencyNs(p999));
        assert!(!below.pass, "not strictly below itself");
        assert!(!below.judged_on_max);
        assert_eq!(below.requests, 1000);
        assert!(outcome(&format!("p99.9<={p999}ns"), &w).pass);
        assert!(outcome(&format!("p99.9<{}ns", p999 + 1), &w).pass);
        assert!(!outcome(&format!("p99.9<={}ns", p999 - 1), &w).pass);
    }

    #[test]
    fn too_few_requests_are_judged_on_the_max() {
        // 998 fast and one slow: 999 requests cannot resolve p99.9.
        let mut s = OpHistograms::default();
        record(&mut s, 998, MS);
        record(&mut s, 1, 50 * MS);
        let few = outcome("p99.9<10ms", &one_op(s.clone()));
        assert!(few.judged_on_max);
        assert_eq!(few.value, Value::LatencyNs(s.response_ns.max()));
        assert!(few.value > Value::LatencyNs(50 * MS - 1));
        assert!(!few.pass);
        assert_eq!(few.requests, 999);

        // One more fast request: the 999th of 1000 is fast.
        record(&mut s, 1, MS);
        let enough = outcome("p99.9<10ms", &one_op(s.clone()));
        assert!(!enough.judged_on_max);
        assert_eq!(
            enough.value,
            Value::LatencyNs(s.response_ns.highest_equivalent(MS))
        );
        assert!(enough.pass);
        assert_eq!(enough.requests, 1000);

        // p99 needs only 100.
        assert!(!outcome("p99<10ms", &one_op(mostly_fast(0))).judged_on_max);
    }

    #[test]
    fn max_and_mean() {
        let mut s = OpHistograms::default();
        record(&mut s, 3, MS);
        record(&mut s, 1, 5 * MS);
        let w = one_op(s.clone());
        let max = outcome("max<5ms", &w);
        assert_eq!(
            max.value,
            Value::LatencyNs(s.response_ns.highest_equivalent(5 * MS))
        );
        assert!(!max.pass, "the max bucket reaches above 5 ms");
        assert!(outcome("max<5.01ms", &w).pass);
        let mean = outcome("mean<2ms", &w);
        assert_eq!(
            mean.value,
            Value::LatencyNs(s.response_ns.mean().round() as u64)
        );
        let Value::LatencyNs(mean_ns) = mean.value else {
            panic!("a latency")
        };
        assert!((1_990_000..2_010_000).contains(&mean_ns), "{mean_ns}");
        assert_eq!(mean.requests, 4);
    }

    #[test]
    fn errors_are_the_failed_share_of_all_requests() {
        let mut s = OpHistograms::default();
        record(&mut s, 998, MS);
        failures(&mut s, 2);
        let w = one_op(s);
        let below = outcome("errors<0.2%", &w);
        assert_eq!(below.value, Value::Fraction(0.002));
        assert_eq!(below.requests, 1000);
        assert!(!below.pass);
        assert!(outcome("errors<=0.2%", &w).pass);
        assert!(outcome("errors<0.3%", &w).pass);
        assert!(!outcome("errors<=0%", &w).pass);
    }

    #[test]
    fn a_window_without_requests_passes_with_zero() {
        let w = window(vec![
            ("read", OpHistograms::default()),
            ("write", OpHistograms::default()),
        ]);
        let verdict = judge_window(&sla("p99.9<1ms, max<1ms, errors<=0%"), &w);
        assert!(verdict.pass);
        for o in &verdict.outcomes {
            assert_eq!(o.requests, 0, "{}", o.term);
            assert!(!o.judged_on_max);
        }
        assert_eq!(verdict.outcomes[0].value, Value::LatencyNs(0));
        assert_eq!(verdict.outcomes[2].value, Value::Fraction(0.0));

        // Every request failed: every term fails, the latency terms on the failures alone.
        let mut s = OpHistograms::default();
        failures(&mut s, 5);
        let verdict = judge_window(
            &sla("p99<1ms, max<1s, mean<1s, p50<100s, errors<50%"),
            &one_op(s),
        );
        assert!(!verdict.pass);
        for o in &verdict.outcomes[..4] {
            assert!(!o.pass, "{}", o.term);
            assert!(o.failures_decided, "{}", o.term);
            assert_eq!((o.requests, o.failed), (5, 5), "{}", o.term);
            assert_eq!(o.value, Value::LatencyNs(0), "{}", o.term);
        }
        assert_eq!(verdict.outcomes[4].value, Value::Fraction(1.0));
        assert!(!verdict.outcomes[4].failures_decided);
        assert_eq!(
            verdict.outcomes[0].describe(),
            "p99<1ms: all 5 requests failed"
        );
        assert!(verdict
            .failures()
            .starts_with("p99<1ms: all 5 requests failed, max<1s"));
    }

    /// `fast` requests at 1 ms, `slow` at 50 ms and `failed` failures.
    fn mixed(fast: u64, slow: u64, failed: u64) -> WindowStats {
        let mut s = OpHistograms::default();
        record(&mut s, fast, MS);
        record(&mut s, slow, 50 * MS);
        failures(&mut s, failed);
        one_op(s)
    }

    #[test]
    fn a_failed_request_counts_as_slower_than_any_threshold() {
        // p99 allows 1% of the window's requests to be slow or failed: 10 of 1000.
        let at_limit = outcome("p99<10ms", &mixed(990, 0, 10));
        assert!(at_limit.pass);
        assert_eq!((at_limit.requests, at_limit.failed), (1000, 10));
        assert_eq!(at_limit.value, Value::LatencyNs(MS_BUCKET));
        let over = outcome("p99<10ms", &mixed(989, 0, 11));
        assert!(!over.pass);
        assert!(over.failures_decided, "the answered requests alone pass");
        assert_eq!(over.value, Value::LatencyNs(MS_BUCKET));
        assert_eq!(
            over.describe(),
            "p99<10ms was 1.000ms with 1.100% failed (the failures decided it)"
        );
        // Slow and failed together: 6 + 5 > 10, though neither alone is.
        let both = outcome("p99<10ms", &mixed(989, 6, 5));
        assert!(!both.pass);
        assert!(both.failures_decided);
        assert!(outcome("p99<10ms", &mixed(990, 6, 4)).pass);
        // Slow enough on their own: the failures did not decide it.
        let slow = outcome("p99<10ms", &mixed(980, 15, 5));
        assert!(!slow.pass);
        assert!(!slow.failures_decided);
        assert!(slow.value > Value::LatencyNs(10 * MS));
        // A failure-free window is judged as before.
        assert!(outcome("p99<10ms", &mixed(990, 10, 0)).pass);
        assert!(!outcome("p99<10ms", &mixed(989, 11, 0)).pass);
    }

    #[test]
    fn max_and_mean_fail_on_any_failed_request() {
        for spec in ["max<1s", "mean<1s"] {
            let one = outcome(spec, &mixed(10_000, 0, 1));
            assert!(!one.pass, "{spec}");
            assert!(one.failures_decided, "{spec}");
            assert!(outcome(spec, &mixed(10_000, 0, 0)).pass, "{spec}");
        }
        // Too few requests for p99.9 (failed ones count): judged on the max, which a
        // failure fails.
        let few = outcome("p99.9<1s", &mixed(998, 0, 1));
        assert!(few.judged_on_max);
        assert!(!few.pass);
        assert!(few.failures_decided);
        let enough = outcome("p99.9<1s", &mixed(999, 0, 1));
        assert!(!enough.judged_on_max);
        assert!(enough.pass, "one failure in 1000 is the 0.1% p99.9 allows");
        // errors<P% is an explicit budget of its own.
        let errors = outcome("errors<1%", &mixed(990, 0, 10));
        assert!(!errors.pass);
        assert!(!errors.failures_decided);
        assert_eq!(errors.failed, 10);
    }

    #[test]
    fn an_op_qualifier_judges_only_that_op_type() {
        let mut read = OpHistograms::default();
        record(&mut read, 200, MS);
        let mut write = OpHistograms::default();
        record(&mut write, 200, 30 * MS);
        failures(&mut write, 100);
        let w = window(vec![("read", read.clone()), ("write", write)]);
        let verdict = judge_window(
            &sla("read:p99<10ms, p99<10ms, read:errors<=0%, errors<25%"),
            &w,
        );
        let [read_p99, all_p99, read_errors, all_errors] = &verdict.outcomes[..] else {
            panic!("four terms")
        };
        assert_eq!(read_p99.term, "read:p99<10ms");
        assert_eq!(
            read_p99.value,
            Value::LatencyNs(read.response_ns.highest_equivalent(MS))
        );
        assert!(read_p99.pass);
        assert_eq!(read_p99.requests, 200);
        assert!(!all_p99.pass, "the writes are slow");
        assert_eq!((all_p99.requests, all_p99.failed), (500, 100));
        assert_eq!(read_errors.value, Value::Fraction(0.0));
        assert!(read_errors.pass);
        assert_eq!(all_errors.value, Value::Fraction(0.2));
        assert_eq!(all_errors.requests, 500);
        assert!(all_errors.pass);
        assert!(!verdict.pass);
    }

    /// One interval's statistics: one read at `ms` milliseconds and two failed writes.
    fn interval(ms: u64) -> Vec<OpHistograms> {
        let mut read = OpHistograms::default();
        record(&mut read, 1, ms * MS);
        let mut write = OpHistograms::default();
        failures(&mut write, 2);
        vec![read, write]
    }

    fn accumulator() -> WindowAccumulator {
        WindowAccumulator::new(vec!["read".into(), "write".into()], 10 * SECOND)
    }

    #[test]
    fn one_second_intervals_make_ten_second_windows() {
        let mut acc = accumulator();
        let mut done = Vec::new();
        for i in 0..25 {
            if let Some(w) = acc.push(i * SECOND, SECOND, &interval(i + 1)) {
                done.push((i, w));
            }
        }
        let completed_at: Vec<u64> = done.iter().map(|(i, _)| *i).collect();
        assert_eq!(
            completed_at,
            [9, 19],
            "pushed interval completes the window"
        );
        let (_, second) = &done[1];
        assert_eq!(second.index, 1);
        assert_eq!(second.start_ns, 10 * SECOND);
        assert_eq!(second.length_ns, 10 * SECOND);
        assert_eq!(second.ops[0].0, "read");
        assert_eq!(second.ops[0].1.ok, 10);
        assert_eq!(second.ops[1].0, "write");
        assert_eq!(second.ops[1].1.error_count(), 20);
        // Reads of 11 to 20 ms.
        let h = &second.ops[0].1.response_ns;
        assert_eq!(h.max(), h.highest_equivalent(20 * MS));
        assert_eq!(h.min(), h.lowest_equivalent(11 * MS));

        // 5 s of the third window, left open.
        let open = acc.finish().unwrap();
        assert_eq!((open.index, open.length_ns), (2, 5 * SECOND));
    }

    #[test]
    fn a_partial_last_window_is_not_judged() {
        let mut acc = accumulator();
        for i in 0..14 {
            acc.push(i * SECOND, SECOND, &interval(1));
        }
        // A last interval shorter than the others: 4.5 s of the second window.
        assert!(acc.push(14 * SECOND, SECOND / 2, &interval(1)).is_none());
        let open = acc.finish().unwrap();
        assert_eq!((open.index, open.length_ns), (1, 4 * SECOND + SECOND / 2));
        assert!(accumulator().finish().is_none());
        // Exactly whole: handed out by push, nothing left.
        let mut acc = accumulator();
        let whole: Vec<_> = (0..20)
            .filter_map(|i| acc.push(i * SECOND, SECOND, &interval(1)))
            .collect();
        assert_eq!(whole.len(), 2);
        assert!(acc.finish().is_none());
    }

    #[test]
    fn an_interval_in_a_later_window_ends_the_open_one() {
        let mut acc = accumulator();
        for i in 0..6 {
            assert!(acc.push(i * SECOND, SECOND, &interval(1)).is_none());
        }
        // Intervals 6 to 9 are missing: window 0 ends with 6 s, more than half.
        let ended = acc
            .push(10 * SECOND, SECOND, &interval(1))
            .expect("window 0");
        assert_eq!((ended.index, ended.length_ns), (0, 6 * SECOND));
        assert_eq!(ended.ops[0].1.ok, 6);
        for i in 11..20 {
            let w = acc.push(i * SECOND, SECOND, &interval(1));
            assert_eq!(w.is_some(), i == 19);
        }
    }

    #[test]
    fn windows_must_be_multiples_of_the_interval() {
        let s = Duration::from_secs;
        assert_eq!(check_window(s(10), s(1)), Ok(()));
        assert_eq!(check_window(s(10), s(10)), Ok(()));
        assert_eq!(check_window(s(10), Duration::from_millis(250)), Ok(()));
        assert_eq!(
            check_window(s(10), s(3)),
            Err(
                "the SLA window (10s) must be a whole multiple of the --interval (3s): give a \
                 window of 9s or 12s (--window, or window= in --sla), or another --interval"
                    .to_string()
            )
        );
        let e = check_window(Duration::from_millis(500), s(1)).unwrap_err();
        assert!(e.contains("give a window of 1s (--window"), "{e}");
        assert!(check_window(s(10), Duration::ZERO).is_err());
    }

    /// An ANN query's statistics: `n` answered requests of recall `recall` each (1 ms) and
    /// `failed` failed ones, each recording recall 0.
    fn ann(n: u64, recall: f64, failed: u64) -> OpHistograms {
        let mut s = OpHistograms::default();
        for _ in 0..n {
            s.record_ok(MS, MS);
            s.record_recall(recall);
        }
        for _ in 0..failed {
            s.record_error(ErrorClass::Timeout, || "timed out".into());
            s.record_recall(0.0);
        }
        s
    }

    /// `stats` with `n` more answered requests of recall `recall`.
    fn with(mut stats: OpHistograms, n: u64, recall: f64) -> OpHistograms {
        stats.add(&ann(n, recall, 0));
        stats
    }

    #[test]
    fn the_mean_recall_term_holds_at_its_threshold() {
        // 4 980 answers, half of recall 0.8 and half of 1: a mean of 0.9.
        let w = one_op(with(ann(2490, 0.8, 0), 2490, 1.0));
        let at = outcome("recall@10>=0.9", &w);
        assert_eq!(at.value, Value::Recall(0.9));
        assert!(at.pass);
        assert_eq!((at.requests, at.failed), (4980, 0));
        assert!(!at.judged_on_max && !at.failures_decided);
        assert_eq!(at.describe(), "recall@10>=0.9: 0.900 over 4 980 requests");
        assert!(!outcome("recall>0.9", &w).pass, "not strictly above itself");
        assert!(outcome("recall>0.8999", &w).pass);
        assert!(!outcome("recall>=0.9001", &w).pass);
        // Lower: a failure names the term and the value.
        let low = one_op(with(ann(4000, 0.8, 0), 980, 1.0));
        let verdict = judge_window(&sla("p99<10ms, recall@10>=0.9"), &low);
        assert!(!verdict.pass);
        assert!(verdict.outcomes[0].pass);
        assert_eq!(verdict.outcomes[1].value, Value::Recall(0.8393));
        assert_eq!(
            verdict.failures(),
            "recall@10>=0.9: 0.8393 over 4 980 requests"
        );
    }

    #[test]
    fn failed_requests_drag_the_mean_recall_down() {
        // 990 perfect answers and 10 failures: a mean of 0.99.
        let w = one_op(ann(990, 1.0, 10));
        let o = outcome("recall>=0.995", &w);
        assert!(!o.pass);
        assert_eq!(o.value, Value::Recall(0.99));
        assert_eq!((o.requests, o.failed), (1000, 10));
        assert!(!o.failures_decided);
        assert_eq!(
            o.describe(),
            "recall>=0.995: 0.990 over 1 000 requests, 10 of them failed (recall 0)"
        );
        assert!(outcome("recall>=0.99", &w).pass);
        // Every request failed: recall 0.
        let all = outcome("recall>0", &one_op(ann(0, 1.0, 5)));
        assert!(!all.pass);
        assert_eq!(all.value, Value::Recall(0.0));
    }

    #[test]
    fn a_recall_percentile_is_the_lowest_value_of_its_bucket() {
        // 980 answers of recall 0.9, 20 of 0.5: 2% below 0.9.
        let w = one_op(with(ann(980, 0.9, 0), 20, 0.5));
        let p1 = outcome("p1(recall)>=0.7", &w);
        assert_eq!(p1.value, Value::Recall(0.5));
        assert!(!p1.pass);
        assert_eq!(p1.requests, 1000);
        let p5 = outcome("p5(recall)>=0.9", &w);
        assert_eq!(p5.value, Value::Recall(0.9));
        assert!(p5.pass);
        // The bucket of 0.9999 starts below it: judged on what is surely reached.
        let fine = one_op(ann(100, 0.9999, 0));
        let h = fine.ops[0].1.recall.as_ref().unwrap();
        let lowest = h.lowest_equivalent(9999);
        assert!(lowest < 9999, "{lowest}");
        let p50 = outcome("p50(recall)>=0.9999", &fine);
        assert_eq!(p50.value, Value::Recall(lowest as f64 / RECALL_SCALE));
        assert!(!p50.pass);
        // So is the mean: each bucket at its lowest value.
        let mean = outcome("recall>=0.9999", &fine);
        assert_eq!(mean.value, p50.value);
        assert!(!mean.pass);
        // With 1 000 failures in 100 000 requests, p1 is 0.
        let failing = one_op(ann(99_000, 1.0, 1_000));
        assert!(outcome("p1(recall)>0", &failing).pass, "exactly 1% at 0");
        let failing = one_op(ann(99_000, 1.0, 1_001));
        assert_eq!(outcome("p1(recall)>0", &failing).value, Value::Recall(0.0));
    }

    #[test]
    fn a_window_without_recall_passes_and_says_so() {
        // No request at all, and requests of an op type not judged for recall.
        for w in [
            one_op(OpHistograms::default()),
            window(vec![("read", mostly_fast(0))]),
        ] {
            let verdict = judge_window(&sla("recall@10>=0.9, p1(recall)>=0.7"), &w);
            assert!(verdict.pass);
            for o in &verdict.outcomes {
                assert_eq!(o.requests, 0, "{}", o.term);
                assert_eq!(o.value, Value::Recall(0.0));
            }
            assert_eq!(
                verdict.outcomes[0].describe(),
                "recall@10>=0.9: no request in the window recorded a recall"
            );
        }
    }

    #[test]
    fn a_recall_term_merges_the_op_types_it_covers() {
        let mut read = mostly_fast(0);
        failures(&mut read, 5);
        let w = window(vec![
            ("ann", ann(1000, 1.0, 0)),
            ("ann2", ann(1000, 0.8, 0)),
            ("read", read),
        ]);
        let verdict = judge_window(
            &sla("recall>=0.85, ann:recall>=0.95, ann2:recall>=0.85, ann2:p50(recall)>=0.8"),
            &w,
        );
        let [all, ann_, ann2, ann2_p50] = &verdict.outcomes[..] else {
            panic!("four terms")
        };
        // The reads record no recall: neither their requests nor their failures count.
        assert_eq!(all.value, Value::Recall(0.9));
        assert_eq!((all.requests, all.failed), (2000, 0));
        assert!(all.pass);
        assert_eq!(ann_.value, Value::Recall(1.0));
        assert!(ann_.pass);
        assert_eq!(ann2.value, Value::Recall(0.8));
        assert!(!ann2.pass);
        assert_eq!(ann2.requests, 1000);
        assert!(ann2_p50.pass);
        assert_eq!(
            verdict.failures(),
            "ann2:recall>=0.85: 0.800 over 1 000 requests"
        );
    }

    #[test]
    fn recall_values_show_their_ten_thousandths() {
        assert_eq!(Value::Recall(0.842).to_string(), "0.842");
        assert_eq!(Value::Recall(0.8996).to_string(), "0.8996");
        assert_eq!(Value::Recall(1.0).to_string(), "1.000");
        assert_eq!(Value::Recall(0.0).to_string(), "0.000");
        assert!(Value::Recall(0.8).is_worse_than(Value::Recall(0.9)));
        assert!(!Value::Recall(0.9).is_worse_than(Value::Recall(0.8)));
        assert!(Value::LatencyNs(2).is_worse_than(Value::LatencyNs(1)));
        assert_eq!(
            serde_json::to_value(Value::Recall(0.9)).unwrap(),
            serde_json::json!({"recall": 0.9})
        );
    }
}
