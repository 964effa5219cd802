//! Judging a run against its SLA, window by window.
//!
//! [`WindowAccumulator`] adds fixed-length intervals up into windows aligned to the start of
//! the measured period; [`judge_window`] measures each term of the [`Sla`] in one window; a
//! [`RunVerdict`] keeps every failing window and the worst value of each term. Percentiles
//! are never averaged: each comes from the window's own (merged) histogram.

use std::fmt;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::spec::{Bound, Metric, Sla, Term, Threshold};
use crate::metrics::{new_histogram, value_at_percentile, OpStats};

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
    pub ops: Vec<(String, OpStats)>,
}

/// A measured value of a term: a latency or a share of requests. Values of one term always
/// have the same kind and compare exactly.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    /// A response time in nanoseconds.
    LatencyNs(u64),
    /// A share of requests between 0 and 1.
    Fraction(f64),
}

impl Value {
    /// Whether the value satisfies `bound` on `threshold`; a value of another kind than the
    /// threshold (a term built by hand with a mismatched threshold) never does.
    pub fn satisfies(self, bound: Bound, threshold: Threshold) -> bool {
        match (self, threshold) {
            (Value::LatencyNs(v), Threshold::LatencyNs(t)) => bound.holds(v, t),
            (Value::Fraction(v), Threshold::Fraction(t)) => bound.holds(v, t),
            _ => false,
        }
    }
}

impl fmt::Display for Value {
    /// A latency in milliseconds, a fraction as a percentage: `12.345ms`, `0.120%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::LatencyNs(ns) => write!(f, "{:.3}ms", ns as f64 / 1e6),
            Value::Fraction(fraction) => write!(f, "{:.3}%", fraction * 100.0),
        }
    }
}

/// How one term fared in one window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TermOutcome {
    /// The term's canonical name, e.g. `p99.9<100ms`.
    pub term: String,
    /// The measured value.
    pub value: Value,
    /// Whether the value satisfies the term.
    pub pass: bool,
    /// A percentile judged on the window's max: the window had too few successful requests
    /// to resolve it (fewer than 1000 for p99.9).
    pub judged_on_max: bool,
    /// The requests the value stands on: successful ones for latency terms, all for `errors`.
    pub requests: u64,
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
    /// Whether every term passed.
    pub pass: bool,
    /// One per term of the SLA.
    pub outcomes: Vec<TermOutcome>,
}

impl WindowVerdict {
    /// The failing terms and their values, e.g. `p99.9<100ms was 231.4ms`.
    pub fn failures(&self) -> String {
        let failed: Vec<String> = self
            .outcomes
            .iter()
            .filter(|o| !o.pass)
            .map(|o| format!("{} was {}", o.term, o.value))
            .collect();
        failed.join(", ")
    }
}

/// Judges one window against every term of `sla`.
///
/// A latency term covering no successful requests in the window (an idle window, or one where
/// every request failed) has the value 0 and passes, with `requests` = 0; failed requests are
/// the business of an `errors` term. An `errors` term over no requests at all is 0 too. A term
/// naming an op type the window lacks covers nothing; [`Sla::check_ops`] rules that out up front.
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
        pass: outcomes.iter().all(|o| o.pass),
        outcomes,
    }
}

fn judge_term(term: &Term, window: &WindowStats) -> TermOutcome {
    let covered = window
        .ops
        .iter()
        .filter(|(name, _)| term.op.as_deref().is_none_or(|op| op == name))
        .map(|(_, stats)| stats);
    let (value, judged_on_max, requests) = match term.metric {
        Metric::Errors => error_share(covered),
        Metric::Percentile(p) => latency(covered, |h| {
            if h.len() < p.required_requests() {
                (h.max(), true)
            } else {
                (value_at_percentile(h, p.value()), false)
            }
        }),
        Metric::Max => latency(covered, |h| (h.max(), false)),
        // Rounded to the nearest nanosecond; the verdict is on the value reported.
        Metric::Mean => latency(covered, |h| (h.mean().round() as u64, false)),
    };
    TermOutcome {
        term: term.name(),
        value,
        pass: requests == 0 || value.satisfies(term.bound, term.threshold),
        judged_on_max,
        requests,
    }
}

/// Failed / all requests, 0 without requests; the value, false (not judged on a max), and the
/// number of requests.
fn error_share<'a>(stats: impl Iterator<Item = &'a OpStats>) -> (Value, bool, u64) {
    let (ok, failed) = stats.fold((0, 0), |(ok, failed), s| {
        (ok + s.ok, failed + s.error_count())
    });
    let requests = ok + failed;
    let share = if requests == 0 {
        0.0
    } else {
        failed as f64 / requests as f64
    };
    (Value::Fraction(share), false, requests)
}

/// `measure` (a latency, and whether it is the max standing in for a percentile) of the
/// response times of every op type in `stats` together; the value, that flag, and the number
/// of successful requests. 0 without successful requests.
fn latency<'a>(
    stats: impl Iterator<Item = &'a OpStats>,
    measure: impl FnOnce(&Histogram<u64>) -> (u64, bool),
) -> (Value, bool, u64) {
    let mut merged = new_histogram();
    for s in stats {
        merged
            .add(&s.response_ns)
            .expect("auto-resizing histograms always add");
    }
    if merged.is_empty() {
        return (Value::LatencyNs(0), false, 0);
    }
    let (ns, judged_on_max) = measure(&merged);
    (Value::LatencyNs(ns), judged_on_max, merged.len())
}

/// The worst window of one term over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorstTerm {
    /// The term's canonical name.
    pub term: String,
    /// The highest value over all windows; `None` before the first window.
    pub value: Option<Value>,
    /// The first window with that value.
    pub window_index: Option<u64>,
    /// Whether that window's value was judged on its max.
    pub judged_on_max: bool,
    /// Windows in which this term was judged on the max.
    pub judged_on_max_windows: u64,
    /// Windows in which this term failed.
    pub failing_windows: u64,
}

/// The verdict on a whole run, built window by window with [`RunVerdict::add`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunVerdict {
    /// Every judged window passed, and there was at least one.
    pub pass: bool,
    /// Windows judged.
    pub windows: u64,
    /// Every failing window, in order.
    pub failing: Vec<WindowVerdict>,
    /// Per term, in the SLA's order: its worst window.
    pub worst: Vec<WorstTerm>,
}

impl RunVerdict {
    /// A verdict with no windows yet (which does not pass).
    pub fn new(sla: &Sla) -> RunVerdict {
        let worst = sla
            .terms
            .iter()
            .map(|term| WorstTerm {
                term: term.name(),
                value: None,
                window_index: None,
                judged_on_max: false,
                judged_on_max_windows: 0,
                failing_windows: 0,
            })
            .collect();
        RunVerdict {
            pass: false,
            windows: 0,
            failing: Vec::new(),
            worst,
        }
    }

    /// Adds one window's verdict, judged against the same SLA.
    pub fn add(&mut self, window: &WindowVerdict) {
        debug_assert_eq!(window.outcomes.len(), self.worst.len(), "another SLA");
        self.windows += 1;
        if !window.pass {
            self.failing.push(window.clone());
        }
        self.pass = self.failing.is_empty();
        for (worst, outcome) in self.worst.iter_mut().zip(&window.outcomes) {
            debug_assert_eq!(worst.term, outcome.term, "another SLA");
            if worst.value.is_none_or(|v| outcome.value > v) {
                worst.value = Some(outcome.value);
                worst.window_index = Some(window.index);
                worst.judged_on_max = outcome.judged_on_max;
            }
            worst.judged_on_max_windows += u64::from(outcome.judged_on_max);
            worst.failing_windows += u64::from(!outcome.pass);
        }
    }
}

/// Checks that a window is a whole multiple of the interval, so that intervals add up to
/// windows exactly.
pub fn check_window(window: Duration, interval: Duration) -> Result<(), String> {
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
        format!("window={}", show(i))
    } else {
        format!("window={} or window={}", show(below), show(below + i))
    };
    Err(format!(
        "the SLA window ({}) must be a whole multiple of the interval ({}): write e.g. {suggestion}",
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
    ops: Vec<OpStats>,
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
        per_op: impl IntoIterator<Item = &'a OpStats>,
    ) -> Option<WindowStats> {
        let index = interval_start_ns / self.window_ns;
        let ended = self.open.take_if(|w| w.index != index);
        let n_ops = self.op_names.len();
        let open = self.open.get_or_insert_with(|| OpenWindow {
            index,
            covered_ns: 0,
            ops: vec![OpStats::default(); n_ops],
        });
        open.covered_ns += interval_length_ns;
        let mut given = 0;
        for (into, from) in open.ops.iter_mut().zip(per_op) {
            into.add(from);
            given += 1;
        }
        debug_assert_eq!(given, n_ops, "one OpStats per op type");
        if let Some(ended) = ended {
            // Out of order: the open window ended early; this interval's window stays open.
            return self.partial(ended);
        }
        if open.covered_ns >= self.window_ns {
            return self.open.take().map(|w| self.stats(w));
        }
        None
    }

    /// The last window, if it covers at least half a window: a shorter tail (the end of a
    /// run that stopped just after a window began) is dropped, as too short to judge.
    pub fn finish(mut self) -> Option<WindowStats> {
        let open = self.open.take()?;
        self.partial(open)
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

    fn sla(spec: &str) -> Sla {
        Sla::parse(spec, DEFAULT_WINDOW).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `n` successful requests taking `ns` each, added to `stats`.
    fn record(stats: &mut OpStats, n: u64, ns: u64) {
        for _ in 0..n {
            stats.record_ok(ns, ns);
        }
    }

    fn failures(stats: &mut OpStats, n: u64) {
        for _ in 0..n {
            stats.record_error(ErrorClass::Timeout, || "timed out".into());
        }
    }

    fn window(ops: Vec<(&str, OpStats)>) -> WindowStats {
        WindowStats {
            index: 0,
            start_ns: 0,
            length_ns: 10 * SECOND,
            ops: ops.into_iter().map(|(n, s)| (n.to_string(), s)).collect(),
        }
    }

    fn one_op(stats: OpStats) -> WindowStats {
        window(vec![("write", stats)])
    }

    fn outcome(spec: &str, w: &WindowStats) -> TermOutcome {
        let verdict = judge_window(&sla(spec), w);
        assert_eq!(verdict.outcomes.len(), 1);
        verdict.outcomes[0].clone()
    }

    /// 999 requests at 1 ms and `slow` at 50 ms.
    fn mostly_fast(slow: u64) -> OpStats {
        let mut s = OpStats::default();
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
        let mut s = OpStats::default();
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
        let mut s = OpStats::default();
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
        let mut s = OpStats::default();
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
            ("read", OpStats::default()),
            ("write", OpStats::default()),
        ]);
        let verdict = judge_window(&sla("p99.9<1ms, max<1ms, errors<=0%"), &w);
        assert!(verdict.pass);
        for o in &verdict.outcomes {
            assert_eq!(o.requests, 0, "{}", o.term);
            assert!(!o.judged_on_max);
        }
        assert_eq!(verdict.outcomes[0].value, Value::LatencyNs(0));
        assert_eq!(verdict.outcomes[2].value, Value::Fraction(0.0));

        // Every request failed: the latency terms pass on nothing, errors fails.
        let mut s = OpStats::default();
        failures(&mut s, 5);
        let verdict = judge_window(&sla("p99<1ms, errors<50%"), &one_op(s));
        assert!(verdict.outcomes[0].pass);
        assert_eq!(verdict.outcomes[1].value, Value::Fraction(1.0));
        assert!(!verdict.pass);
    }

    #[test]
    fn an_op_qualifier_judges_only_that_op_type() {
        let mut read = OpStats::default();
        record(&mut read, 200, MS);
        let mut write = OpStats::default();
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
        assert_eq!(all_p99.requests, 400);
        assert_eq!(read_errors.value, Value::Fraction(0.0));
        assert!(read_errors.pass);
        assert_eq!(all_errors.value, Value::Fraction(0.2));
        assert_eq!(all_errors.requests, 500);
        assert!(all_errors.pass);
        assert!(!verdict.pass);
    }

    /// A window with `n` requests at `ms` milliseconds.
    fn window_at(index: u64, n: u64, ms: u64) -> WindowStats {
        let mut s = OpStats::default();
        record(&mut s, n, ms * MS);
        WindowStats {
            index,
            start_ns: index * 10 * SECOND,
            length_ns: 10 * SECOND,
            ops: vec![("write".to_string(), s)],
        }
    }

    #[test]
    fn a_run_keeps_failing_windows_and_the_worst_value_of_each_term() {
        let sla = sla("p99<20ms, max<40ms");
        let mut run = RunVerdict::new(&sla);
        assert!(!run.pass, "no window judged");
        assert_eq!(run.worst[0].value, None);
        let mut one_slow = window_at(4, 199, 5);
        record(&mut one_slow.ops[0].1, 1, 45 * MS);
        let windows = [
            window_at(0, 200, 5),
            window_at(1, 200, 30), // fails p99
            window_at(2, 50, 35),  // p99 judged on max: fails p99
            window_at(3, 200, 10),
            one_slow, // p99 is 5 ms; fails max
        ];
        for w in &windows {
            run.add(&judge_window(&sla, w));
        }
        assert!(!run.pass);
        assert_eq!(run.windows, 5);
        let failing: Vec<u64> = run.failing.iter().map(|w| w.index).collect();
        assert_eq!(failing, [1, 2, 4]);
        assert!(run.failing[1].outcomes[0].judged_on_max);
        assert!(!run.failing[2].outcomes[0].judged_on_max);
        assert!(run.failing[2].outcomes[0].pass);
        assert!(!run.failing[2].outcomes[1].pass);

        let slowest_p99 = windows[2].ops[0].1.response_ns.max();
        let worst_p99 = &run.worst[0];
        assert_eq!(worst_p99.term, "p99<20ms");
        assert_eq!(worst_p99.value, Some(Value::LatencyNs(slowest_p99)));
        assert_eq!(worst_p99.window_index, Some(2));
        assert!(worst_p99.judged_on_max);
        assert_eq!(worst_p99.judged_on_max_windows, 1);
        assert_eq!(worst_p99.failing_windows, 2);

        let slowest = windows[4].ops[0].1.response_ns.max();
        let worst_max = &run.worst[1];
        assert_eq!(worst_max.term, "max<40ms");
        assert_eq!(worst_max.value, Some(Value::LatencyNs(slowest)));
        assert_eq!(worst_max.window_index, Some(4));
        assert!(!worst_max.judged_on_max);
        assert_eq!(worst_max.judged_on_max_windows, 0);
        assert_eq!(worst_max.failing_windows, 1);

        let json = serde_json::to_value(&run).unwrap();
        assert_eq!(json["pass"], false);
        assert_eq!(json["windows"], 5);
        assert_eq!(json["failing"][0]["index"], 1);
        assert_eq!(json["failing"][0]["outcomes"][0]["term"], "p99<20ms");
        assert_eq!(json["worst"][0]["term"], "p99<20ms");
        assert_eq!(json["worst"][0]["value"]["latency_ns"], slowest_p99);
        assert_eq!(json["worst"][1]["window_index"], 4);
    }

    #[test]
    fn a_run_passes_when_every_window_passes() {
        let sla = sla("p99<20ms");
        let mut run = RunVerdict::new(&sla);
        run.add(&judge_window(&sla, &window_at(0, 200, 5)));
        run.add(&judge_window(&sla, &window_at(1, 200, 5)));
        assert!(run.pass);
        assert!(run.failing.is_empty());
        // Ties keep the first window.
        assert_eq!(run.worst[0].window_index, Some(0));
    }

    /// One interval's statistics: one read at `ms` milliseconds and two failed writes.
    fn interval(ms: u64) -> Vec<OpStats> {
        let mut read = OpStats::default();
        record(&mut read, 1, ms * MS);
        let mut write = OpStats::default();
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

        // 5 s of the third window: half a window is kept.
        let last = acc.finish().expect("half a window");
        assert_eq!(last.index, 2);
        assert_eq!(last.start_ns, 20 * SECOND);
        assert_eq!(last.length_ns, 5 * SECOND);
        assert_eq!(last.ops[0].1.ok, 5);
    }

    #[test]
    fn a_short_tail_is_dropped() {
        let mut acc = accumulator();
        for i in 0..14 {
            acc.push(i * SECOND, SECOND, &interval(1));
        }
        // A last interval shorter than the others: 4.5 s of the second window.
        assert!(acc.push(14 * SECOND, SECOND / 2, &interval(1)).is_none());
        assert!(acc.finish().is_none());
        assert!(accumulator().finish().is_none());
    }

    #[test]
    fn a_last_short_interval_can_complete_half_a_window() {
        let mut acc = accumulator();
        for i in 0..14 {
            acc.push(i * SECOND, SECOND, &interval(1));
        }
        acc.push(14 * SECOND, SECOND / 2, &interval(1));
        acc.push(14 * SECOND + SECOND / 2, SECOND / 2, &interval(1));
        let last = acc.finish().expect("exactly half a window");
        assert_eq!(last.length_ns, 5 * SECOND);
        assert_eq!(last.ops[0].1.ok, 6);
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
                "the SLA window (10s) must be a whole multiple of the interval (3s): \
                 write e.g. window=9s or window=12s"
                    .to_string()
            )
        );
        let e = check_window(Duration::from_millis(500), s(1)).unwrap_err();
        assert!(e.ends_with("write e.g. window=1s"), "{e}");
        assert!(check_window(s(10), Duration::ZERO).is_err());
    }
}
