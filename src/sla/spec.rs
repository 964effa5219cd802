//! The service level as typed values: an [`Sla`] is terms that must all hold, each in every
//! window of its length; each [`Term`] a bound ([`Bound`], [`Threshold`]) on one [`Metric`]
//! of the window, optionally for one op type, optionally over a window of its own
//! (`p99.99<200ms@5m`, the way Azul's Tussle states a service level over several horizons).
//! Latency and `errors` terms are upper bounds (`<`, `<=`); recall terms, on the answers of
//! an ANN query (`recall@10>=0.9`, `p1(recall)>=0.7`), are lower bounds (`>=`, `>`). Each
//! type has a canonical spelling (its `Display`), its name in every output, and the JSON
//! form the result files hold.
//!
//! The text syntax and its parser (`Sla::parse`, `SlaParseError`) are in `parse/`: the
//! judge and the validity checks read these types only, and so do not depend on the parser.
//! Nothing here names the judge or the parser, so the dependencies run one way, towards
//! this module.

use std::fmt;
use std::time::Duration;

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;

/// The window length when the spec sets none.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(10);

/// A percentile strictly between 0 and 100 with at most three decimals (p50, p99.9, p99.999).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Percentile {
    /// The percentile in thousandths of a percent: 99 900 for p99.9.
    thousandths: u32,
}

impl Percentile {
    /// 100 % in thousandths of a percent.
    pub(super) const HUNDRED: u32 = 100_000;

    /// The percentile `thousandths` / 1000 (99 900 for p99.9); `None` unless it lies
    /// strictly between 0 and 100.
    pub fn from_thousandths(thousandths: u32) -> Option<Percentile> {
        (thousandths > 0 && thousandths < Self::HUNDRED).then_some(Percentile { thousandths })
    }

    /// The percentile as a number between 0 and 100, e.g. 99.9.
    pub fn value(self) -> f64 {
        f64::from(self.thousandths) / 1000.0
    }

    /// The fewest requests that resolve this percentile: ceil(1 / (1 − p/100)), e.g. 100 for
    /// p99 and 1000 for p99.9. With fewer, the percentile is the largest value anyway.
    pub fn required_requests(self) -> u64 {
        u64::from(Self::HUNDRED).div_ceil(u64::from(Self::HUNDRED - self.thousandths))
    }

    /// The rank, from 1, of the value that at most this share of `count` values lie below:
    /// floor(p/100 · count) + 1, at most `count` (11 for p1 of 1000 values). A lower bound
    /// on it holds when at most p% of the values miss it, as an upper bound on the
    /// percentile of response times holds when at most (100 − p)% exceed it.
    pub fn rank_from_below(self, count: u64) -> u64 {
        let below = u128::from(self.thousandths) * u128::from(count) / u128::from(Self::HUNDRED);
        (below as u64 + 1).min(count.max(1))
    }
}

impl fmt::Display for Percentile {
    /// `p99`, `p99.9`, `p99.999`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, fraction) = (self.thousandths / 1000, self.thousandths % 1000);
        if fraction == 0 {
            write!(f, "p{whole}")
        } else {
            let digits = format!("{fraction:03}");
            write!(f, "p{whole}.{}", digits.trim_end_matches('0'))
        }
    }
}

/// What a term measures in a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// A percentile of the response time; a failed request counts as slower than any
    /// threshold.
    Percentile(Percentile),
    /// The largest response time; any failed request fails it.
    Max,
    /// The mean response time; any failed request fails it.
    Mean,
    /// Failed requests / all requests.
    Errors,
    /// The mean recall@k of the requests judged for recall (ANN queries): each request's
    /// share of the exact k nearest neighbours in its answer, a failed request's 0. The k
    /// the term names (`recall@10`), or `None` (`recall`): the workload's own.
    Recall(Option<u32>),
    /// A percentile of the recall of those requests (`p1(recall)`: the recall 1% of them fell
    /// below), a failed request's 0.
    RecallPercentile(Percentile),
}

impl Metric {
    /// Whether the metric is a response time (its threshold has a time unit).
    pub fn is_latency(self) -> bool {
        matches!(self, Metric::Percentile(_) | Metric::Max | Metric::Mean)
    }

    /// Whether the metric is a recall (its term a lower bound on a share between 0 and 1).
    pub fn is_recall(self) -> bool {
        matches!(self, Metric::Recall(_) | Metric::RecallPercentile(_))
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Metric::Percentile(p) => p.fmt(f),
            Metric::Max => f.write_str("max"),
            Metric::Mean => f.write_str("mean"),
            Metric::Errors => f.write_str("errors"),
            Metric::Recall(None) => f.write_str("recall"),
            Metric::Recall(Some(k)) => write!(f, "recall@{k}"),
            Metric::RecallPercentile(p) => write!(f, "{p}(recall)"),
        }
    }
}

impl Serialize for Metric {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// How a value compares to its threshold: an upper bound for latency and `errors` terms, a
/// lower bound for recall terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bound {
    /// `<`: strictly below the threshold.
    Below,
    /// `<=`: at most the threshold.
    AtMost,
    /// `>`: strictly above the threshold.
    Above,
    /// `>=`: at least the threshold.
    AtLeast,
}

impl Bound {
    /// `<`, `<=`, `>` or `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            Bound::Below => "<",
            Bound::AtMost => "<=",
            Bound::Above => ">",
            Bound::AtLeast => ">=",
        }
    }

    /// Whether the bound is a lower one (`>`, `>=`): the value must reach the threshold.
    pub fn is_lower(self) -> bool {
        matches!(self, Bound::Above | Bound::AtLeast)
    }

    /// Whether `value` satisfies this bound on `threshold`.
    pub fn holds<T: PartialOrd>(self, value: T, threshold: T) -> bool {
        match self {
            Bound::Below => value < threshold,
            Bound::AtMost => value <= threshold,
            Bound::Above => value > threshold,
            Bound::AtLeast => value >= threshold,
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl Serialize for Bound {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.symbol())
    }
}

/// A term's limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Threshold {
    /// A response time in nanoseconds.
    LatencyNs(u64),
    /// A share of requests between 0 and 1 (0.001 for `0.1%`).
    Fraction(f64),
    /// A recall between 0 and 1, a whole number of ten-thousandths (the precision recall is
    /// recorded with, [`crate::metrics::RECALL_SCALE`]): 0.9 for `0.9` or `90%`.
    Recall(f64),
}

impl fmt::Display for Threshold {
    /// A latency in the largest unit that shows it exactly with at most three decimals
    /// (`100ms`, `2.5ms`, `1.5s`, `250us`); a fraction as a percentage (`0.1%`); a recall as
    /// a plain decimal (`0.9`, `0.95`, `1`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Threshold::LatencyNs(ns) => f.write_str(&format_latency(ns)),
            Threshold::Fraction(fraction) => {
                write!(f, "{}%", shift_point(&fraction.to_string(), 2))
            }
            // The shortest decimal that reads back as the same number: the one written.
            Threshold::Recall(recall) => write!(f, "{recall}"),
        }
    }
}

/// One bound the service level places on every window.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// The op type the term judges; `None`: all op types together.
    pub op: Option<String>,
    /// What is measured.
    pub metric: Metric,
    /// `<` or `<=` for latency and `errors`; `>=` or `>` for recall.
    pub bound: Bound,
    /// The limit; a latency for latency metrics, a fraction for `errors`, a recall for the
    /// recall metrics.
    pub threshold: Threshold,
    /// The term's own window (`@5m`), when it differs from the SLA's; `None`: the SLA's
    /// window ([`Sla::window_of`]). The parser keeps it `None` when it equals the SLA's, so
    /// that one service level has one spelling.
    pub window: Option<Duration>,
}

impl Term {
    /// The term's name in outputs: its canonical spelling, e.g. `read:p99<10ms`,
    /// `ann:recall@10>=0.9`.
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// What the term measures, e.g. `read:p99`.
    pub(super) fn subject(&self) -> String {
        match &self.op {
            Some(op) => format!("{op}:{}", self.metric),
            None => self.metric.to_string(),
        }
    }
}

impl fmt::Display for Term {
    /// `read:p99<10ms`, and `@5m` after a window of its own.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.subject(), self.bound, self.threshold)?;
        if let Some(window) = self.window {
            write!(f, "@{}", humantime::format_duration(window))?;
        }
        Ok(())
    }
}

impl Serialize for Term {
    /// The canonical name plus its parts.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Term", 6)?;
        s.serialize_field("name", &self.name())?;
        s.serialize_field("op", &self.op)?;
        s.serialize_field("metric", &self.metric)?;
        s.serialize_field("bound", &self.bound)?;
        s.serialize_field("threshold", &self.threshold)?;
        if let Some(window) = self.window {
            s.serialize_field("window_ms", &(window.as_millis() as u64))?;
        } else {
            s.skip_field("window_ms")?;
        }
        s.end()
    }
}

/// A service level: terms that must all hold, each in every window of its length.
#[derive(Debug, Clone, PartialEq)]
pub struct Sla {
    /// The terms, in the order given.
    pub terms: Vec<Term>,
    /// Length of a window of the terms without one of their own: > 0 and a whole number of
    /// milliseconds. At least one term uses it (the parser makes it so).
    pub window: Duration,
}

impl Sla {
    /// The window `term` is judged over: its own, or the SLA's.
    pub fn window_of(&self, term: &Term) -> Duration {
        term.window.unwrap_or(self.window)
    }

    /// The terms alone, comma-separated in canonical form, without the SLA's window.
    pub fn to_terms_string(&self) -> String {
        let names: Vec<String> = self.terms.iter().map(Term::name).collect();
        names.join(", ")
    }

    /// Every window length a term is judged over, shortest first, each once.
    pub fn windows(&self) -> Vec<Duration> {
        let mut windows: Vec<Duration> = self.terms.iter().map(|t| self.window_of(t)).collect();
        windows.sort();
        windows.dedup();
        windows
    }

    /// Whether terms are judged over more than one window length.
    pub fn has_own_windows(&self) -> bool {
        self.terms.iter().any(|t| t.window.is_some())
    }

    /// The terms judged over `window`, as an SLA of their own whose window is `window`; the
    /// terms keep their names (their own windows stay written on them).
    pub fn over(&self, window: Duration) -> Sla {
        Sla {
            terms: self
                .terms
                .iter()
                .filter(|t| self.window_of(t) == window)
                .cloned()
                .collect(),
            window,
        }
    }

    /// Checks that every op type a term names is one of the workload's `op_names`.
    pub fn check_ops(&self, op_names: &[&str]) -> Result<(), String> {
        let unknown = self
            .terms
            .iter()
            .find(|t| t.op.as_deref().is_some_and(|op| !op_names.contains(&op)));
        let Some(term) = unknown else {
            return Ok(());
        };
        let valid = if op_names.is_empty() {
            "the workload has none".to_string()
        } else {
            format!("the workload's op types are: {}", op_names.join(", "))
        };
        Err(format!(
            "the SLA term '{term}' names the op type '{}', which the workload does not have; {valid}",
            term.op.as_deref().unwrap_or_default()
        ))
    }

    /// Checks the recall terms against what the workload `workload` measures, before anything
    /// connects: `recall_ops` are its op types judged for recall (its ANN queries), each with
    /// the k of its recall@k. A recall term needs one; a term that names an op type names one
    /// of them; `recall@K` asks the k they return.
    pub fn check_recall(&self, workload: &str, recall_ops: &[(&str, usize)]) -> Result<(), String> {
        let names: Vec<&str> = recall_ops.iter().map(|(name, _)| *name).collect();
        for term in self.terms.iter().filter(|t| t.metric.is_recall()) {
            if recall_ops.is_empty() {
                return Err(format!(
                    "the SLA term '{term}' needs an ANN query, and the workload '{workload}' has \
                     none: recall is measured by the vector workload"
                ));
            }
            let covered: Vec<(&str, usize)> = match term.op.as_deref() {
                None => recall_ops.to_vec(),
                Some(op) => match recall_ops.iter().find(|(name, _)| *name == op) {
                    Some(found) => vec![*found],
                    None => {
                        return Err(format!(
                            "the SLA term '{term}' judges the recall of '{op}', which is not an \
                             ANN query; the workload '{workload}' measures recall on: {}",
                            names.join(", ")
                        ))
                    }
                },
            };
            let Metric::Recall(Some(k)) = term.metric else {
                continue;
            };
            let Some((name, top)) = covered.iter().find(|(_, top)| *top as u64 != u64::from(k))
            else {
                continue;
            };
            let query = if recall_ops.len() == 1 {
                "the ANN query".to_string()
            } else {
                format!("the ANN query '{name}'")
            };
            return Err(format!(
                "the SLA term '{term}' asks recall@{k}, but {query} returns the top {top} \
                 (--top-k {top}): write recall@{top}, or ask for the top {k}"
            ));
        }
        Ok(())
    }
}

impl fmt::Display for Sla {
    /// The canonical terms and the window: `p99.9<100ms, errors<0.1%, window=10s`, a term
    /// with a window of its own followed by it: `p99.99<200ms@5m`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for term in &self.terms {
            write!(f, "{term}, ")?;
        }
        write!(f, "window={}", humantime::format_duration(self.window))
    }
}

impl Serialize for Sla {
    /// The canonical spec, the terms, and the window in milliseconds.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Sla", 3)?;
        s.serialize_field("spec", &self.to_string())?;
        s.serialize_field("terms", &self.terms)?;
        s.serialize_field("window_ms", &(self.window.as_millis() as u64))?;
        s.end()
    }
}

/// Moves the decimal point of a plain decimal number `places` to the right (to the left when
/// negative), exactly, on the digits: `shift_point("0.1", -2)` is `0.001`.
pub(super) fn shift_point(number: &str, places: i32) -> String {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let mut digits = format!("{whole}{fraction}");
    let mut point = whole.len() as i64 + i64::from(places);
    if point < 0 {
        digits.insert_str(0, &"0".repeat(point.unsigned_abs() as usize));
        point = 0;
    }
    let point = point as usize;
    if point > digits.len() {
        digits.push_str(&"0".repeat(point - digits.len()));
    }
    let (whole, fraction) = digits.split_at(point);
    let whole = whole.trim_start_matches('0');
    let whole = if whole.is_empty() { "0" } else { whole };
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{fraction}")
    }
}

/// A latency in the largest unit that shows it exactly with at most three decimals.
fn format_latency(ns: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")];
    for (unit, name) in UNITS {
        if ns >= unit && ns.is_multiple_of(unit / 1000) {
            let places = unit.ilog10() as i32;
            return format!("{}{name}", shift_point(&ns.to_string(), -places));
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(spec: &str) -> Sla {
        Sla::parse(spec, DEFAULT_WINDOW).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn required_requests_resolve_the_percentile() {
        let required = |t| Percentile::from_thousandths(t).unwrap().required_requests();
        assert_eq!(required(50_000), 2);
        assert_eq!(required(75_000), 4);
        assert_eq!(required(90_000), 10);
        assert_eq!(required(99_000), 100);
        assert_eq!(required(99_900), 1000);
        assert_eq!(required(99_990), 10_000);
        assert_eq!(required(99_999), 100_000);
        assert_eq!(required(33_333), 2);
        assert_eq!(Percentile::from_thousandths(99_900).unwrap().value(), 99.9);
        assert!(Percentile::from_thousandths(0).is_none());
        let from_below = |t, n| Percentile::from_thousandths(t).unwrap().rank_from_below(n);
        assert_eq!(from_below(1_000, 1000), 11, "10 of 1000 may lie below p1");
        assert_eq!(
            from_below(1_000, 99),
            1,
            "p1 of fewer than 100 is the lowest"
        );
        assert_eq!(from_below(50_000, 4), 3);
        assert_eq!(from_below(99_999, 10), 10, "never beyond the count");
        assert_eq!(from_below(100, 0), 1);
        assert!(Percentile::from_thousandths(100_000).is_none());
    }

    #[test]
    fn op_types_are_checked_against_the_workload() {
        let sla = parse("read:p99<10ms, p99<20ms");
        assert_eq!(sla.check_ops(&["read", "write"]), Ok(()));
        assert_eq!(parse("p99<1ms").check_ops(&[]), Ok(()));
        assert_eq!(
            sla.check_ops(&["write", "scan"]),
            Err(
                "the SLA term 'read:p99<10ms' names the op type 'read', which the workload \
                 does not have; the workload's op types are: write, scan"
                    .to_string()
            )
        );
    }

    #[test]
    fn serializes_canonical_names_and_parts() {
        let sla = parse("read:p99.9<=2.5ms, errors<0.1%, window=5s");
        let json = serde_json::to_value(&sla).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "spec": "read:p99.9<=2.5ms, errors<0.1%, window=5s",
                "window_ms": 5000,
                "terms": [
                    {
                        "name": "read:p99.9<=2.5ms",
                        "op": "read",
                        "metric": "p99.9",
                        "bound": "<=",
                        "threshold": {"latency_ns": 2_500_000}
                    },
                    {
                        "name": "errors<0.1%",
                        "op": null,
                        "metric": "errors",
                        "bound": "<",
                        "threshold": {"fraction": 0.001}
                    }
                ]
            })
        );
    }

    #[test]
    fn decimal_points_move_exactly() {
        assert_eq!(shift_point("0.1", -2), "0.001");
        assert_eq!(shift_point("0.001", 2), "0.1");
        assert_eq!(shift_point("12.5", -2), "0.125");
        assert_eq!(shift_point("1", 2), "100");
        assert_eq!(shift_point("100", -2), "1");
        assert_eq!(shift_point("0", 2), "0");
        assert_eq!(format_latency(1), "1ns");
        assert_eq!(format_latency(999), "999ns");
        assert_eq!(format_latency(1_000), "1us");
        assert_eq!(format_latency(1_001_000), "1.001ms");
        assert_eq!(format_latency(60_000_000_000), "60s");
    }

    #[test]
    fn recall_terms_are_checked_against_the_ann_queries() {
        let sla = parse("p99<10ms, recall@10>=0.9");
        assert_eq!(sla.check_recall("vector", &[("ann", 10)]), Ok(()));
        assert_eq!(parse("p99<10ms").check_recall("keyvalue", &[]), Ok(()));
        assert_eq!(
            sla.check_recall("keyvalue", &[]),
            Err(
                "the SLA term 'recall@10>=0.9' needs an ANN query, and the workload 'keyvalue' \
                 has none: recall is measured by the vector workload"
                    .to_string()
            )
        );
        assert_eq!(
            parse("recall@5>=0.9").check_recall("vector", &[("ann", 10)]),
            Err(
                "the SLA term 'recall@5>=0.9' asks recall@5, but the ANN query returns the top \
                 10 (--top-k 10): write recall@10, or ask for the top 5"
                    .to_string()
            )
        );
        let two = [("ann", 10), ("ann_wide", 100)];
        let e = parse("recall@10>=0.9")
            .check_recall("vector", &two)
            .unwrap_err();
        assert!(
            e.contains("but the ANN query 'ann_wide' returns the top 100"),
            "{e}"
        );
        assert_eq!(
            parse("ann:recall@10>=0.9").check_recall("vector", &two),
            Ok(())
        );
        // Without k, or a percentile: any k.
        assert_eq!(
            parse("recall>=0.9, p1(recall)>=0.5").check_recall("vector", &two),
            Ok(())
        );
        assert_eq!(
            parse("insert:p1(recall)>=0.5").check_recall("vector", &two),
            Err(
                "the SLA term 'insert:p1(recall)>=0.5' judges the recall of 'insert', which is \
                 not an ANN query; the workload 'vector' measures recall on: ann, ann_wide"
                    .to_string()
            )
        );
        // Latency terms on any op type are check_ops' to judge.
        assert_eq!(parse("insert:p99<1ms").check_recall("vector", &two), Ok(()));
    }

    #[test]
    fn bounds_point_both_ways() {
        assert!(Bound::AtLeast.holds(0.9, 0.9));
        assert!(!Bound::Above.holds(0.9, 0.9));
        assert!(Bound::Above.holds(0.91, 0.9));
        assert!(!Bound::AtLeast.holds(0.89, 0.9));
        assert!(Bound::AtLeast.is_lower() && Bound::Above.is_lower());
        assert!(!Bound::Below.is_lower() && !Bound::AtMost.is_lower());
        assert_eq!(Threshold::Recall(0.9).to_string(), "0.9");
        assert_eq!(Threshold::Recall(1.0).to_string(), "1");
        assert_eq!(Threshold::Recall(0.0001).to_string(), "0.0001");
        assert_eq!(
            crate::metrics::RECALL_SCALE,
            10_000.0,
            "thresholds are ten-thousandths"
        );
    }
}
