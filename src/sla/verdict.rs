//! The verdict on a whole run: every failing window, the worst window of each term, and
//! whether the windows amount to a pass, a fail or no verdict ([`Judgement`]). Built window
//! by window from [`super::judge`]'s verdicts; stored in summary.json.

use serde::{Deserialize, Serialize};

use super::judge::{TermOutcome, Value, WindowVerdict};
use super::spec::Sla;

/// The worst window of one term over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorstTerm {
    /// The term's canonical name.
    pub term: String,
    /// That window's value (for a latency term, of its answered requests); `None` before the
    /// first window.
    pub value: Option<Value>,
    /// The first window with that value.
    pub window_index: Option<u64>,
    /// Whether that window's value was judged on its max.
    pub judged_on_max: bool,
    /// The failed share of that window's requests, between 0 and 1.
    #[serde(default)]
    pub failed_share: f64,
    /// Whether failed requests decided that window's failure.
    #[serde(default)]
    pub failures_decided: bool,
    /// Windows in which this term was judged on the max.
    pub judged_on_max_windows: u64,
    /// Windows in which this term failed.
    pub failing_windows: u64,
    /// Requests the term covered over every window judged, answered or failed; `None` in
    /// files written before headroom counted them. A term that covered none has no
    /// verdict ([`RunVerdict::judgement`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// The term's own window, ms, when it differs from the SLA's (`p99.99<200ms@5m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ms: Option<u64>,
    /// Windows of its own length judged for a term with a window of its own; `None`: the
    /// run's [`RunVerdict::windows`] ([`RunVerdict::windows_of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<u64>,
    /// How bad the worst window is, to compare the next ones with.
    #[serde(skip)]
    badness: Kept,
}

/// The worst window's [`Badness`], kept while a run is judged; not part of the verdict's
/// value (two verdicts with the same fields are equal, whether judged here or read back).
#[derive(Debug, Clone, Copy, Default)]
struct Kept(Option<Badness>);

impl PartialEq for Kept {
    fn eq(&self, _: &Kept) -> bool {
        true
    }
}

impl WorstTerm {
    /// The worst window's value in words, with its failed share (see
    /// [`TermOutcome::describe`]); `None` before the first window.
    pub fn describe(&self) -> Option<String> {
        let value = self.value?;
        if !matches!(value, Value::LatencyNs(_)) || self.failed_share == 0.0 {
            return Some(format!("{value}"));
        }
        if self.failed_share >= 1.0 {
            return Some("every request failed".to_string());
        }
        let decided = if self.failures_decided {
            " (the failures decided it)"
        } else {
            ""
        };
        Some(format!(
            "{value} with {} failed{decided}",
            Value::Fraction(self.failed_share)
        ))
    }
}

/// How bad one window is for one term: a window that fails is worse than any that passes;
/// among failing windows, one whose failures decided it is worse than one that failed on its
/// value (a failure counts as slower than any value), and more failures are worse; a window
/// that measured something is worse than one without requests; otherwise the worse value
/// ([`Value::is_worse_than`]: the higher, a recall the lower) is worse.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
struct Badness {
    fails: bool,
    by_failures: bool,
    failed_share: f64,
    measured: bool,
    value: Worse,
}

/// A value ordered from best to worst.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Worse(Value);

impl PartialOrd for Worse {
    fn partial_cmp(&self, other: &Worse) -> Option<std::cmp::Ordering> {
        match (self.0, other.0) {
            (Value::Recall(a), Value::Recall(b)) => b.partial_cmp(&a),
            (a, b) => a.partial_cmp(&b),
        }
    }
}

impl Badness {
    fn of(outcome: &TermOutcome) -> Badness {
        Badness {
            fails: !outcome.pass,
            by_failures: outcome.failures_decided,
            failed_share: if outcome.failures_decided {
                outcome.failed_share()
            } else {
                0.0
            },
            measured: outcome.requests > 0,
            value: Worse(outcome.value),
        }
    }
}

/// The verdict on a whole run, built window by window with [`RunVerdict::add`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunVerdict {
    /// Every judged window passed, and there was at least one.
    pub pass: bool,
    /// Windows of the SLA's window length judged (a term with a window of its own counts its
    /// own: [`WorstTerm::windows`]).
    pub windows: u64,
    /// Every failing window, of every length, in the order they were judged.
    pub failing: Vec<WindowVerdict>,
    /// Per term, in the SLA's order: its worst window.
    pub worst: Vec<WorstTerm>,
    /// Failing windows whose failure the failed requests decided (every failing term met
    /// by the answered requests alone).
    #[serde(default)]
    pub failing_by_failures: u64,
    /// The length, in seconds, of a last window that was not judged because it was partial
    /// (a run bounded by a request count, or stopped early): an SLA holds for whole
    /// windows only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_window_s: Option<f64>,
}

/// What a run's windows amount to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// Every window met every term, and every term had requests to judge.
    Pass,
    /// At least one window failed a term.
    Fail,
    /// Nothing to judge it by: no complete window, or a term that covered no request in
    /// any window (an operation the run never sent); says which.
    NoVerdict(String),
}

impl RunVerdict {
    /// A verdict with no windows yet (which does not pass).
    pub fn new(sla: &Sla) -> RunVerdict {
        let worst = sla
            .terms
            .iter()
            .map(|term| WorstTerm {
                window_ms: term.window.map(|w| w.as_millis() as u64),
                windows: term.window.map(|_| 0),
                term: term.name(),
                value: None,
                window_index: None,
                judged_on_max: false,
                failed_share: 0.0,
                failures_decided: false,
                judged_on_max_windows: 0,
                failing_windows: 0,
                requests: Some(0),
                badness: Kept(None),
            })
            .collect();
        RunVerdict {
            pass: false,
            windows: 0,
            failing: Vec::new(),
            worst,
            failing_by_failures: 0,
            partial_window_s: None,
        }
    }

    /// Pass, fail, or no verdict and why. A failing window decides a fail whatever else
    /// is missing; a pass needs at least one whole window and a request of every term.
    pub fn judgement(&self) -> Judgement {
        if !self.failing.is_empty() {
            return Judgement::Fail;
        }
        if self.windows == 0 {
            return Judgement::NoVerdict(match self.partial_window_s {
                Some(s) => format!(
                    "no complete window to judge (the run measured {s:.1} s): make it at \
                     least one window long"
                ),
                None => {
                    "no complete window to judge: make the run at least one window long".to_string()
                }
            });
        }
        let short: Vec<String> = self
            .worst
            .iter()
            .filter(|w| w.windows == Some(0))
            .map(|w| {
                let window = std::time::Duration::from_millis(w.window_ms.unwrap_or(0));
                format!(
                    "{} had no complete window of {} to judge",
                    w.term,
                    humantime::format_duration(window)
                )
            })
            .collect();
        if !short.is_empty() {
            return Judgement::NoVerdict(format!(
                "{}: make the run at least as long as each term's window",
                short.join(", ")
            ));
        }
        let unjudged: Vec<&str> = self
            .worst
            .iter()
            .filter(|w| w.requests == Some(0))
            .map(|w| w.term.as_str())
            .collect();
        if !unjudged.is_empty() {
            return Judgement::NoVerdict(format!(
                "{} covered no request in any window, so {} cannot be judged: did the run \
                 send that operation?",
                unjudged.join(", "),
                if unjudged.len() == 1 { "it" } else { "they" }
            ));
        }
        Judgement::Pass
    }

    /// The failing windows out of those judged, in words: `3 of 6 windows`, and with terms
    /// over windows of their own, each length apart: `3 of 6 windows, 1 of 1 windows of 1m`.
    pub fn failing_in_words(&self) -> String {
        let mut words = vec![format!(
            "{} of {} windows",
            self.failing
                .iter()
                .filter(|w| w.window_ms.is_none())
                .count(),
            self.windows
        )];
        let mut seen = Vec::new();
        for term in &self.worst {
            let Some(ms) = term.window_ms.filter(|ms| !seen.contains(ms)) else {
                continue;
            };
            seen.push(ms);
            words.push(format!(
                "{} of {} windows of {}",
                self.failing
                    .iter()
                    .filter(|w| w.window_ms == Some(ms))
                    .count(),
                self.windows_of(term),
                humantime::format_duration(std::time::Duration::from_millis(ms))
            ));
        }
        words.join(", ")
    }

    /// Windows judged for `term`: its own count when it has a window of its own.
    pub fn windows_of(&self, term: &WorstTerm) -> u64 {
        term.windows.unwrap_or(self.windows)
    }

    /// Adds one window's verdict, judged against terms of the same SLA (those of its
    /// length).
    pub fn add(&mut self, window: &WindowVerdict) {
        if window.window_ms.is_none() {
            self.windows += 1;
        }
        if !window.pass {
            self.failing.push(window.clone());
            let by_failures = window
                .outcomes
                .iter()
                .filter(|o| !o.pass)
                .all(|o| o.failures_decided);
            self.failing_by_failures += u64::from(by_failures);
        }
        for outcome in &window.outcomes {
            let Some(worst) = self.worst.iter_mut().find(|w| w.term == outcome.term) else {
                debug_assert!(false, "{} is not a term of this SLA", outcome.term);
                continue;
            };
            if let Some(requests) = &mut worst.requests {
                *requests += outcome.requests;
            }
            if let Some(windows) = &mut worst.windows {
                *windows += 1;
            }
            let badness = Badness::of(outcome);
            let is_worse = match (worst.badness.0, worst.value) {
                (Some(so_far), _) => badness > so_far,
                // Read back from a file: only the value is known.
                (None, Some(value)) => outcome.requests > 0 && outcome.value.is_worse_than(value),
                (None, None) => true,
            };
            if is_worse {
                worst.value = Some(outcome.value);
                worst.window_index = Some(window.index);
                worst.judged_on_max = outcome.judged_on_max;
                worst.failed_share = outcome.failed_share();
                worst.failures_decided = outcome.failures_decided;
                worst.badness = Kept(Some(badness));
            }
            worst.judged_on_max_windows += u64::from(outcome.judged_on_max);
            worst.failing_windows += u64::from(!outcome.pass);
        }
        self.pass = self.judgement() == Judgement::Pass;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{ErrorClass, OpHistograms};
    use crate::sla::judge::{judge_window, WindowStats};
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

    /// A window with `n` requests at `ms` milliseconds.
    fn window_at(index: u64, n: u64, ms: u64) -> WindowStats {
        let mut s = OpHistograms::default();
        record(&mut s, n, ms * MS);
        WindowStats {
            index,
            start_ns: index * 10 * SECOND,
            length_ns: 10 * SECOND,
            ops: vec![("write".to_string(), s)],
        }
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
    fn the_worst_window_of_a_term_counts_its_failures() {
        let sla = sla("p99<10ms");
        let mut run = RunVerdict::new(&sla);
        let mut windows = vec![mixed(1000, 0, 0), mixed(980, 20, 0), mixed(980, 0, 20)];
        for (i, w) in windows.iter_mut().enumerate() {
            w.index = i as u64;
        }
        for w in &windows {
            run.add(&judge_window(&sla, w));
        }
        assert!(!run.pass);
        assert_eq!(run.failing.len(), 2);
        assert_eq!(run.failing_by_failures, 1);
        let worst = &run.worst[0];
        // The window with failures is worse than the one with slow answers, although the
        // value of its answered requests is lower.
        assert_eq!(worst.window_index, Some(2));
        assert!(worst.failures_decided);
        assert!((worst.failed_share - 0.02).abs() < 1e-12);
        assert_eq!(worst.value, Some(Value::LatencyNs(MS_BUCKET)));
        assert_eq!(worst.failing_windows, 2);
        assert_eq!(
            worst.describe().unwrap(),
            "1.000ms with 2.000% failed (the failures decided it)"
        );
        // Read back from JSON, the verdict is equal and its new fields are there.
        let json = serde_json::to_string(&run).unwrap();
        let back: RunVerdict = serde_json::from_str(&json).unwrap();
        assert_eq!(back, run);
        assert!(json.contains("\"failing_by_failures\":1"), "{json}");
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

    #[test]
    fn a_term_without_any_request_has_no_verdict() {
        // Reads at 0%: the read term covers nothing in any window.
        let spec = sla("read:p99<1us, write:p99<1s");
        let mut run = RunVerdict::new(&spec);
        let mut writes = OpHistograms::default();
        record(&mut writes, 100, MS);
        for index in 0..3 {
            let mut w = window(vec![
                ("write", writes.clone()),
                ("read", OpHistograms::default()),
            ]);
            w.index = index;
            run.add(&judge_window(&spec, &w));
        }
        assert!(!run.pass);
        let Judgement::NoVerdict(why) = run.judgement() else {
            panic!("{:?}", run.judgement())
        };
        assert!(
            why.starts_with("read:p99<1us covered no request in any window"),
            "{why}"
        );
        assert_eq!(run.worst[0].requests, Some(0));
        assert_eq!(run.worst[1].requests, Some(300));

        // A failing window is a fail all the same.
        let mut slow = OpHistograms::default();
        record(&mut slow, 100, 2_000 * MS);
        run.add(&judge_window(
            &spec,
            &window(vec![("write", slow), ("read", OpHistograms::default())]),
        ));
        assert_eq!(run.judgement(), Judgement::Fail);

        // No window at all: no verdict; one passing window of each term's requests: a pass.
        assert!(matches!(
            RunVerdict::new(&spec).judgement(),
            Judgement::NoVerdict(why) if why.starts_with("no complete window")
        ));
        let mut reads = OpHistograms::default();
        record(&mut reads, 100, 500);
        let mut both = RunVerdict::new(&spec);
        both.add(&judge_window(
            &spec,
            &window(vec![("write", writes), ("read", reads)]),
        ));
        assert_eq!(both.judgement(), Judgement::Pass);
        assert!(both.pass);

        // Read back from a file written before requests were counted: judged as before.
        let mut old: serde_json::Value = serde_json::to_value(&both).unwrap();
        for term in old["worst"].as_array_mut().unwrap() {
            term.as_object_mut().unwrap().remove("requests");
        }
        let old: RunVerdict = serde_json::from_value(old).unwrap();
        assert_eq!(old.judgement(), Judgement::Pass);
    }

    #[test]
    fn the_worst_window_of_a_recall_term_is_its_lowest() {
        let ann = |n: u64, recall: f64, index: u64| {
            let mut s = OpHistograms::default();
            for _ in 0..n {
                s.record_ok(MS, MS);
                s.record_recall(recall);
            }
            let mut w = one_op(s);
            w.index = index;
            w
        };
        let sla = sla("recall@10>=0.9");
        let mut run = RunVerdict::new(&sla);
        // An empty window, then 0.96, 0.84 (fails), 0.92, and another empty one.
        // (Recalls of even hundredths above 0.82 are the lowest values of their buckets.)
        let mut empty = one_op(OpHistograms::default());
        run.add(&judge_window(&sla, &empty));
        for (i, recall) in [(1, 0.96), (2, 0.84), (3, 0.92)] {
            run.add(&judge_window(&sla, &ann(100, recall, i)));
        }
        empty.index = 4;
        run.add(&judge_window(&sla, &empty));
        assert!(!run.pass);
        assert_eq!(run.judgement(), Judgement::Fail);
        let worst = &run.worst[0];
        assert_eq!(worst.window_index, Some(2));
        assert_eq!(worst.value, Some(Value::Recall(0.84)));
        assert_eq!(worst.failing_windows, 1);
        assert_eq!(worst.requests, Some(300));
        assert_eq!(worst.describe().unwrap(), "0.840");
        assert_eq!(
            run.failing[0].failures(),
            "recall@10>=0.9: 0.840 over 100 requests"
        );
        assert_eq!(run.failing_by_failures, 0);

        // Passing windows: the lowest is the worst, an empty one is not.
        let mut run = RunVerdict::new(&sla);
        run.add(&judge_window(&sla, &one_op(OpHistograms::default())));
        run.add(&judge_window(&sla, &ann(100, 0.98, 1)));
        run.add(&judge_window(&sla, &ann(100, 0.94, 2)));
        run.add(&judge_window(&sla, &ann(100, 1.0, 3)));
        assert_eq!(run.judgement(), Judgement::Pass);
        assert_eq!(run.worst[0].window_index, Some(2));
        assert_eq!(run.worst[0].value, Some(Value::Recall(0.94)));
        // Read back from JSON, the next window compares with the value alone.
        let json = serde_json::to_string(&run).unwrap();
        let mut back: RunVerdict = serde_json::from_str(&json).unwrap();
        assert_eq!(back, run);
        back.add(&judge_window(&sla, &one_op(OpHistograms::default())));
        back.add(&judge_window(&sla, &ann(100, 0.96, 5)));
        assert_eq!(back.worst[0].window_index, Some(2));
        back.add(&judge_window(&sla, &ann(100, 0.92, 6)));
        assert_eq!(back.worst[0].window_index, Some(6));

        // No recall in any window: no verdict.
        let mut none = RunVerdict::new(&sla);
        none.add(&judge_window(&sla, &window_at(0, 100, 1)));
        assert!(
            matches!(none.judgement(), Judgement::NoVerdict(why) if why.contains("recall@10>=0.9 covered no request"))
        );
    }
}
