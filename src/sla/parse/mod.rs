//! The service level as typed by people: comma-separated terms, each a bound on one metric
//! of every window, e.g. `p99.9<100ms, max<1s, errors<0.1%, recall@10>=0.9, window=10s`.
//!
//! A term is `[op:]metric bound threshold`:
//! - metric: a percentile `pNN[.NNN]` (p50, p99, p99.9, p99.999), `max` or `mean` of the
//!   response time, a failed request counting as slower than any threshold (see
//!   [`crate::sla::judge_window`]); `errors` (failed / all requests); or a recall of the
//!   answers of an ANN query, a failed request's recall being 0: `recall@K` (K ≥ 1, the k of
//!   recall@k) or `recall` (the workload's own k) for the mean recall, `pNN[.NNN](recall)`
//!   (`p1(recall)`, `p0.1(recall)`) for the recall that share of the requests fell below;
//! - bound: `<` or `<=` (also `≤`) for latency and `errors`, upper bounds; `>=` or `>` (also
//!   `≥`) for recall, lower bounds. The other direction is refused;
//! - threshold: a latency with a unit (`ns`, `us`, `µs`, `ms`, `s`; decimals allowed, `2.5ms`);
//!   for `errors` a percentage (`0.1%`); for recall a share between 0 and 1 (`0.9`) or a
//!   percentage (`90%`), to the ten-thousandth recall is recorded in;
//! - an optional op type qualifier (`read:p99<10ms`, `ann:recall@10>=0.9`) judges only that
//!   op type; without one a term judges every op type together (a recall term, every op type
//!   judged for recall).
//!
//! A term may be judged over a window of its own, written after it with `@`:
//! `p99<20ms@10s, p99.9<50ms@1m, p99.99<200ms@5m` (Tussle's several horizons), and
//! `recall@10>=0.9@1m` (the first `@` names k, the one after the threshold the window).
//! `window=10s` (or `window 10s`) sets the window of the terms without one; when every term
//! has its own, the first term's is the SLA's window (and a `window=` would judge nothing).
//! Spaces are allowed between tokens. Each term has a canonical spelling ([`Term`]'s
//! `Display`), its name in every output: `recall@10>=90%` is `recall@10>=0.9`, `P1 (Recall)
//! ≥ 0.70` is `p1(recall)>=0.7`.
//!
//! The parser is apart from the types it builds (`spec.rs`) so that the code that only reads
//! an [`Sla`] (the judge, the validity checks) does not depend on it. This file reads the
//! structure of a spec (items, terms, windows); `metric.rs` a term's metric, recall's
//! included; `threshold.rs` its bound and threshold.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::units::parse_duration;

use super::spec::{Metric, Sla, Term, DEFAULT_WINDOW};

mod metric;
mod threshold;

/// A service level spec that could not be read: what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlaParseError {
    /// The spec as given.
    pub input: String,
    /// Character offset of the offending token in `input`.
    pub position: usize,
    /// What is wrong and what would be accepted.
    pub message: String,
}

impl fmt::Display for SlaParseError {
    /// The message, then the input with a caret under the offending token; a long input is
    /// shown around the token only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const AROUND: usize = 40;
        let chars: Vec<char> = self.input.chars().collect();
        if chars.len() <= 2 * AROUND + 20 {
            writeln!(f, "SLA '{}' is not valid: {}", self.input, self.message)?;
            writeln!(f, "  {}", self.input)?;
            return write!(f, "  {}^", " ".repeat(self.position));
        }
        let from = self.position.saturating_sub(AROUND).min(chars.len());
        let to = (self.position + AROUND).min(chars.len());
        let (head, tail) = (
            if from > 0 { "…" } else { "" },
            if to < chars.len() { "…" } else { "" },
        );
        let shown: String = chars[from..to].iter().collect();
        writeln!(
            f,
            "SLA of {} characters is not valid: {}",
            chars.len(),
            self.message
        )?;
        writeln!(f, "  {head}{shown}{tail}")?;
        write!(
            f,
            "  {}^",
            " ".repeat(self.position - from + head.chars().count())
        )
    }
}

impl std::error::Error for SlaParseError {}

impl Sla {
    /// Reads a spec such as `p99.9<100ms, errors<0.1%, window=10s`; `default_window` applies
    /// when the spec sets no window.
    pub fn parse(spec: &str, default_window: Duration) -> Result<Sla, SlaParseError> {
        Parser::new(spec).sla(default_window)
    }
}

impl FromStr for Sla {
    type Err = SlaParseError;

    /// [`Sla::parse`] with the [`DEFAULT_WINDOW`].
    fn from_str(spec: &str) -> Result<Sla, SlaParseError> {
        Sla::parse(spec, DEFAULT_WINDOW)
    }
}

/// One comma-separated part of a spec.
enum Item {
    Term(Term),
    Window(Duration),
}

/// Reads a spec left to right; positions are character offsets.
struct Parser<'a> {
    input: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        Parser {
            input,
            chars: input.chars().collect(),
            pos: 0,
        }
    }

    fn error(&self, position: usize, message: impl Into<String>) -> SlaParseError {
        SlaParseError {
            input: self.input.to_string(),
            position,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_spaces(&mut self) {
        self.take_while(char::is_whitespace);
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.pos += 1;
        }
        found
    }

    /// The characters from the current position on that satisfy `keep`.
    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let start = self.pos;
        while self.peek().is_some_and(&keep) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// A name: an op type, a metric or `window`.
    fn word(&mut self) -> String {
        self.take_while(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))
    }

    fn at_term_end(&self) -> bool {
        matches!(self.peek(), None | Some(','))
    }

    fn sla(mut self, default_window: Duration) -> Result<Sla, SlaParseError> {
        self.skip_spaces();
        if self.peek().is_none() {
            return Err(self.error(
                0,
                "the SLA is empty; write terms such as p99.9<100ms, errors<0.1%",
            ));
        }
        // Each term with where it starts, for the duplicates' caret.
        let mut terms: Vec<(usize, Term)> = Vec::new();
        let mut window = None;
        loop {
            self.skip_spaces();
            let start = self.pos;
            match self.item()? {
                Item::Window(_) if window.is_some() => {
                    return Err(self.error(start, "the window is given twice"));
                }
                Item::Window(length) => window = Some(length),
                Item::Term(term) => terms.push((start, term)),
            }
            self.skip_spaces();
            if self.peek().is_none() {
                break;
            }
            if !self.eat(',') {
                return Err(self.unexpected());
            }
        }
        if terms.is_empty() {
            return Err(self.error(
                0,
                "the SLA has no terms to judge; add one such as p99.9<100ms",
            ));
        }
        let window = match window {
            // Every term has its own window: the first one's is the SLA's (a window= no term
            // uses would judge nothing).
            _ if terms.iter().all(|(_, t)| t.window.is_some()) => {
                terms[0].1.window.expect("checked")
            }
            Some(length) => length,
            None => check_window_length(default_window).map_err(|reason| {
                self.error(0, format!("the default window is not valid: {reason}"))
            })?,
        };
        let mut seen: Vec<(String, Duration)> = Vec::new();
        for (start, term) in &mut terms {
            // One spelling per service level: a term's own window equal to the SLA's is none.
            term.window = term.window.filter(|w| *w != window);
            // recall@K and recall are the same measure: the workload's op has one k.
            let subject = match term.metric {
                Metric::Recall(Some(_)) => Term {
                    metric: Metric::Recall(None),
                    ..term.clone()
                }
                .subject(),
                _ => term.subject(),
            };
            let key = (subject, term.window.unwrap_or(window));
            if seen.contains(&key) {
                return Err(self.error(
                    *start,
                    format!(
                        "'{}' is given twice over {} windows; state each metric once per op \
                         type and window",
                        key.0,
                        humantime::format_duration(key.1)
                    ),
                ));
            }
            seen.push(key);
        }
        Ok(Sla {
            terms: terms.into_iter().map(|(_, t)| t).collect(),
            window,
        })
    }

    /// Text where a comma or the end was expected.
    fn unexpected(&mut self) -> SlaParseError {
        let start = self.pos;
        let rest = self.take_while(|c| c != ',');
        self.error(
            start,
            format!(
                "unexpected '{}'; separate terms with commas",
                rest.trim_end()
            ),
        )
    }

    fn item(&mut self) -> Result<Item, SlaParseError> {
        let start = self.pos;
        let word = self.word();
        if word.is_empty() {
            return Err(self.no_term());
        }
        self.skip_spaces();
        if word.eq_ignore_ascii_case("window") {
            return self.window().map(Item::Window);
        }
        if !self.eat(':') {
            return self.term(None, start, &word).map(Item::Term);
        }
        self.skip_spaces();
        let metric_start = self.pos;
        let metric = self.word();
        if metric.is_empty() {
            return Err(self.error(
                metric_start,
                format!("expected a metric after '{word}:', e.g. {word}:p99<10ms"),
            ));
        }
        if metric.eq_ignore_ascii_case("window") {
            return Err(self.error(
                metric_start,
                format!(
                    "window= applies to the whole SLA; give one term a window of its own with \
                     @, e.g. {word}:p99<10ms@1m"
                ),
            ));
        }
        self.term(Some(word), metric_start, &metric).map(Item::Term)
    }

    /// The error where a term should start but none does.
    fn no_term(&self) -> SlaParseError {
        let message = match self.peek() {
            None => "expected a term such as p99<10ms after ','".to_string(),
            Some(',') => "expected a term such as p99<10ms before ','".to_string(),
            Some(c) => format!("expected a metric (pNN, max, mean, errors or recall), found '{c}'"),
        };
        self.error(self.pos, message)
    }

    /// The rest of a term whose metric word `word` started at `start`.
    fn term(
        &mut self,
        op: Option<String>,
        start: usize,
        word: &str,
    ) -> Result<Term, SlaParseError> {
        let metric = self.metric(start, word)?;
        let subject = match &op {
            Some(op) => format!("{op}:{metric}"),
            None => metric.to_string(),
        };
        let bound = self.bound(&subject, metric)?;
        let threshold = self.threshold(metric, bound)?;
        self.skip_spaces();
        let window = if self.eat('@') {
            Some(self.window_length("a term's window, e.g. p99<10ms@1m")?)
        } else {
            None
        };
        Ok(Term {
            op,
            metric,
            bound,
            threshold,
            window,
        })
    }

    /// The window length after the word `window`.
    fn window(&mut self) -> Result<Duration, SlaParseError> {
        if !self.eat('=') {
            self.eat(':');
        }
        self.window_length("window length, e.g. window=10s")
    }

    /// A window's length, up to the next comma; `what` names it when it is missing.
    fn window_length(&mut self, what: &str) -> Result<Duration, SlaParseError> {
        self.skip_spaces();
        let pos = self.pos;
        let text = self.take_while(|c| c != ',');
        let text = text.trim_end();
        if text.is_empty() {
            return Err(self.error(pos, format!("missing {what}")));
        }
        if text.contains('@') {
            return Err(self.error(
                pos + text.find('@').map_or(0, |i| text[..i].chars().count()),
                "a term has one window: write its '@' once",
            ));
        }
        let length = parse_duration(text).map_err(|e| {
            self.error(
                pos,
                format!("the window '{text}' is not a duration: {}", e.reason),
            )
        })?;
        check_window_length(length).map_err(|reason| self.error(pos, reason))
    }
}

/// Checks a window length: above zero and a whole number of milliseconds.
fn check_window_length(window: Duration) -> Result<Duration, String> {
    if window.is_zero() {
        return Err("the window must be longer than zero".to_string());
    }
    if !window.subsec_nanos().is_multiple_of(1_000_000) {
        return Err("the window must be a whole number of milliseconds".to_string());
    }
    Ok(window)
}

impl crate::usage::Blame for SlaParseError {
    fn is_usage_error(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sla::spec::{Bound, Percentile, Threshold};

    fn parse(spec: &str) -> Sla {
        Sla::parse(spec, DEFAULT_WINDOW).unwrap_or_else(|e| panic!("{e}"))
    }

    fn only_term(spec: &str) -> Term {
        let sla = parse(spec);
        assert_eq!(sla.terms.len(), 1, "{spec}");
        sla.terms[0].clone()
    }

    fn percentile(thousandths: u32) -> Metric {
        Metric::Percentile(Percentile::from_thousandths(thousandths).unwrap())
    }

    /// The error for `spec`, checked to point at `position`.
    fn error(spec: &str, position: usize) -> SlaParseError {
        let e = Sla::parse(spec, DEFAULT_WINDOW).expect_err(spec);
        assert_eq!(e.position, position, "{spec}: {e}");
        assert_eq!(e.input, spec);
        e
    }

    fn assert_error(spec: &str, position: usize, message: &str) {
        let e = error(spec, position);
        assert!(
            e.message.contains(message),
            "{spec}: '{}' lacks '{message}'",
            e.message
        );
    }
    #[test]
    fn a_long_spec_is_shown_around_its_mistake() {
        let terms: Vec<String> = (10..70).map(|p| format!("p{p}<1s")).collect();
        let spec = format!("{}, p99>1s", terms.join(", "));
        let e = Sla::parse(&spec, DEFAULT_WINDOW).unwrap_err();
        let text = e.to_string();
        assert!(text.len() < 300, "{text}");
        assert!(
            text.starts_with("SLA of 486 characters is not valid"),
            "{text}"
        );
        let lines: Vec<&str> = text.lines().collect();
        // The caret stands under the offending '>'.
        let caret = lines[2].find('^').unwrap();
        assert_eq!(lines[1].chars().nth(caret), Some('>'), "{text}");
    }

    #[test]
    fn a_single_percentile_term() {
        let sla = parse("p99.9<100ms");
        assert_eq!(
            sla.terms,
            vec![Term {
                op: None,
                metric: percentile(99_900),
                bound: Bound::Below,
                threshold: Threshold::LatencyNs(100_000_000),
                window: None,
            }]
        );
        assert_eq!(sla.window, Duration::from_secs(10));
        assert_eq!(sla.terms[0].name(), "p99.9<100ms");
        assert_eq!(sla.to_string(), "p99.9<100ms, window=10s");
    }

    #[test]
    fn several_terms_with_spaces() {
        let sla = parse("  p99 < 10ms ,max<1s,errors < 0.1 %  ");
        let names: Vec<String> = sla.terms.iter().map(Term::name).collect();
        assert_eq!(names, ["p99<10ms", "max<1s", "errors<0.1%"]);
        assert_eq!(sla.terms[0].metric, percentile(99_000));
        assert_eq!(sla.terms[1].metric, Metric::Max);
        assert_eq!(sla.terms[1].threshold, Threshold::LatencyNs(1_000_000_000));
        assert_eq!(sla.terms[2].metric, Metric::Errors);
        assert_eq!(sla.terms[2].threshold, Threshold::Fraction(0.001));
        assert_eq!(sla.to_string(), "p99<10ms, max<1s, errors<0.1%, window=10s");
    }

    #[test]
    fn at_most_mean_and_decimals() {
        let t = only_term("p50<=2ms");
        assert_eq!(t.metric, percentile(50_000));
        assert_eq!(t.bound, Bound::AtMost);
        assert_eq!(t.threshold, Threshold::LatencyNs(2_000_000));
        assert_eq!(t.name(), "p50<=2ms");

        let t = only_term("mean < 5ms");
        assert_eq!(t.metric, Metric::Mean);
        assert_eq!(t.name(), "mean<5ms");

        let t = only_term("p99.99<2.5ms");
        assert_eq!(t.metric, percentile(99_990));
        assert_eq!(t.threshold, Threshold::LatencyNs(2_500_000));
        assert_eq!(t.name(), "p99.99<2.5ms");

        assert_eq!(only_term("P99.9 ≤ 0.25 s").name(), "p99.9<=250ms");
        assert_eq!(only_term("p99.999<1500ms").name(), "p99.999<1.5s");
        assert_eq!(only_term("p75<1234567ns").name(), "p75<1234.567us");
        assert_eq!(only_term("p75<0.5us").name(), "p75<500ns");
        assert_eq!(only_term("max<1.0005s").name(), "max<1000.5ms");
    }

    #[test]
    fn microseconds_in_every_spelling() {
        for spec in ["p99<250us", "p99<250µs", "p99<250μs", "p99 < 250 us"] {
            let t = only_term(spec);
            assert_eq!(t.threshold, Threshold::LatencyNs(250_000), "{spec}");
            assert_eq!(t.name(), "p99<250us");
        }
    }

    #[test]
    fn op_qualifiers() {
        let sla = parse("read:p99<10ms, write : p99.9 <= 1.5 s, p99<20ms, read:errors<1%");
        assert_eq!(sla.terms[0].op.as_deref(), Some("read"));
        assert_eq!(sla.terms[1].op.as_deref(), Some("write"));
        assert_eq!(sla.terms[2].op, None);
        let names: Vec<String> = sla.terms.iter().map(Term::name).collect();
        assert_eq!(
            names,
            [
                "read:p99<10ms",
                "write:p99.9<=1.5s",
                "p99<20ms",
                "read:errors<1%"
            ]
        );
        assert_eq!(sla.terms[3].threshold, Threshold::Fraction(0.01));
    }

    #[test]
    fn window_terms() {
        assert_eq!(
            parse("p99<10ms, window=30s").window,
            Duration::from_secs(30)
        );
        assert_eq!(
            parse("window = 1m, p99<10ms").window,
            Duration::from_secs(60)
        );
        assert_eq!(parse("p99<1ms, window 5s").window, Duration::from_secs(5));
        assert_eq!(
            parse("p99<1ms,window=2500ms").window,
            Duration::from_millis(2500)
        );
        let sla = Sla::parse("p99<1ms", Duration::from_secs(3)).unwrap();
        assert_eq!(sla.window, Duration::from_secs(3));
        assert_eq!(sla.to_string(), "p99<1ms, window=3s");
        assert_eq!(
            parse("p99<1ms, window=1m30s").to_string(),
            "p99<1ms, window=1m 30s"
        );
    }

    #[test]
    fn error_thresholds_are_exact_percentages() {
        assert_eq!(
            only_term("errors<0.0001%").threshold,
            Threshold::Fraction(1e-6)
        );
        assert_eq!(only_term("errors<0.0001%").name(), "errors<0.0001%");
        assert_eq!(only_term("errors<=0%").threshold, Threshold::Fraction(0.0));
        assert_eq!(only_term("errors<=0%").name(), "errors<=0%");
        assert_eq!(only_term("errors<100%").threshold, Threshold::Fraction(1.0));
        assert_eq!(only_term("errors<12.5%").name(), "errors<12.5%");
        assert_eq!(
            only_term("errors<0.07%").threshold,
            Threshold::Fraction(0.0007)
        );
        assert_eq!(only_term("errors<0.07%").name(), "errors<0.07%");
    }

    #[test]
    fn canonical_spelling_reads_back_as_the_same_sla() {
        for spec in [
            "p99.9<100ms",
            " P99 < 10 ms , max<1.5s, errors<=0.25%, mean < 900us",
            "read:p50<=0.5ms, write:errors<1%, window=1m30s",
            "p99.999<1234567ns, window=2500ms",
        ] {
            let sla = parse(spec);
            assert_eq!(parse(&sla.to_string()), sla, "{spec} → {sla}");
            let from_str: Sla = spec.parse().unwrap();
            assert_eq!(from_str.terms, sla.terms);
        }
    }

    #[test]
    fn the_error_shows_a_caret_under_the_bad_token() {
        let e = error("p99.9<100ms, p99<1 0ms", 17);
        assert_eq!(e.message, "expected a unit (ns, us, ms, s) after '1'");
        let expected = format!(
            "SLA 'p99.9<100ms, p99<1 0ms' is not valid: expected a unit (ns, us, ms, s) after '1'\n  \
             p99.9<100ms, p99<1 0ms\n  {}^",
            " ".repeat(17)
        );
        assert_eq!(e.to_string(), expected);
        let caret_line = e.to_string().lines().last().unwrap().to_string();
        let input_line = e.to_string().lines().nth(1).unwrap().to_string();
        let column = caret_line.find('^').unwrap();
        assert_eq!(&input_line[column..], "1 0ms");
    }

    #[test]
    fn positions_count_characters_not_bytes() {
        assert_error("p99<5µs, p99<1ms", 9, "'p99' is given twice");
    }

    #[test]
    fn empty_and_incomplete_specs() {
        assert_error("", 0, "the SLA is empty");
        assert_error("   ", 0, "the SLA is empty");
        assert_error("p99<10ms,", 9, "expected a term such as p99<10ms after ','");
        assert_error("p99<10ms, , max<1s", 10, "before ','");
        assert_error("p99", 3, "missing threshold: write e.g. p99<10ms");
        assert_error(
            "errors, p99<1ms",
            6,
            "missing threshold: write e.g. errors<0.1%",
        );
        assert_error("p99<", 4, "missing threshold after '<'");
        assert_error("p99<=, max<1s", 5, "missing threshold after '<='");
        assert_error("p99<ms", 4, "expected a number after '<'");
        assert_error("window=10s", 0, "no terms to judge");
        assert_error("read:", 5, "expected a metric after 'read:'");
        assert_error(
            "<10ms",
            0,
            "expected a metric (pNN, max, mean, errors or recall), found '<'",
        );
    }

    #[test]
    fn unknown_metrics_suggest_valid_ones() {
        assert_error(
            "latency<10ms",
            0,
            "unknown metric 'latency': use a percentile such as p99 or p99.9, max, mean, errors \
             or recall",
        );
        assert_error("p99<1ms, avg<1ms", 9, "write mean");
        assert_error("error<1%", 0, "write errors");
        assert_error("p<1ms", 0, "unknown metric 'p'");
        assert_error("read:lat<1ms", 5, "unknown metric 'lat'");
    }

    #[test]
    fn bad_percentiles() {
        assert_error("p999<10ms", 0, "'p999' is not a percentile: write p99.9");
        assert_error("p9999<10ms", 0, "write p99.99");
        assert_error("p100<1s", 0, "write max");
        assert_error("p0<1s", 0, "above 0 and below 100");
        assert_error("p150<1s", 0, "above 0 and below 100");
        assert_error("p99.9999<1s", 0, "at most three decimals");
        assert_error("p99.<1s", 0, "'p99.' is not a percentile");
        assert_error("p99.9.9<1s", 0, "'p99.9.9' is not a percentile");
    }

    #[test]
    fn latency_and_errors_terms_are_upper_bounds() {
        assert_error(
            "p99>10ms",
            3,
            "a latency term is an upper bound: write p99<10ms or p99<=10ms",
        );
        assert_error("read:p99 >= 10ms", 9, "write read:p99<10ms");
        assert_error("max ≥ 1s", 4, "a latency term is an upper bound");
        assert_error(
            "errors>=1%",
            6,
            "an errors term is an upper bound: write errors<0.1% or errors<=0.1%",
        );
        assert_error("p99=10ms", 3, "expected < or <= after 'p99', found '='");
    }

    #[test]
    fn bad_latency_thresholds() {
        assert_error("p99<0ms", 4, "a threshold must be above zero");
        assert_error("p99<=0.000s", 5, "a threshold must be above zero");
        assert_error("p99<-1ms", 4, "a threshold must be above zero");
        assert_error("p99<10", 4, "expected a unit (ns, us, ms, s) after '10'");
        assert_error(
            "p99<10 minutes",
            7,
            "unknown unit 'minutes': use ns, us, ms or s",
        );
        assert_error(
            "p99<10%",
            6,
            "takes a unit (ns, us, ms, s), not a percentage",
        );
        assert_error("p99<0.1ns", 4, "finer than a nanosecond");
        assert_error("p99<1.0000000001s", 4, "finer than a nanosecond");
        assert_error("p99<99999999999999s", 4, "too large");
        assert_error("p99<1.2.3ms", 4, "'1.2.3' is not a number");
        assert_error("p99<.5ms", 4, "'.5' is not a number");
    }

    #[test]
    fn bad_error_thresholds() {
        assert_error(
            "errors<5",
            7,
            "as a percentage of requests, e.g. errors<0.1%",
        );
        assert_error("errors<5ms", 8, "errors take a percentage");
        assert_error("errors<101%", 7, "at most 100%");
        assert_error("errors<0%", 7, "write errors<=0%");
    }

    #[test]
    fn duplicates_and_trailing_garbage() {
        assert_error("p99<10ms, p99<=20ms", 10, "'p99' is given twice");
        assert_error(
            "read:p99<1ms, read : p99<2ms",
            14,
            "'read:p99' is given twice",
        );
        assert_error(
            "p99<1ms, window=10s, window=20s",
            21,
            "the window is given twice",
        );
        assert_error(
            "p99<10ms foo",
            9,
            "unexpected 'foo'; separate terms with commas",
        );
        assert_error("p99<10ms max<1s", 9, "unexpected 'max<1s'");
        assert_error("errors<1%%", 8, "not '%%'");
        // Different op types are different terms.
        assert_eq!(parse("read:p99<1ms, p99<2ms").terms.len(), 2);
    }

    #[test]
    fn bad_windows() {
        assert_error("p99<1ms, window=0s", 16, "longer than zero");
        assert_error("p99<1ms, window=1500us", 16, "whole number of milliseconds");
        assert_error(
            "p99<1ms, window=soon",
            16,
            "the window 'soon' is not a duration",
        );
        assert_error("p99<1ms, window=", 16, "missing window length");
        assert_error("read:window=10s", 5, "applies to the whole SLA");
        let e = Sla::parse("p99<1ms", Duration::ZERO).unwrap_err();
        assert!(e.message.contains("default window"), "{e}");
    }

    #[test]
    fn terms_with_windows_of_their_own() {
        let tussle = parse("p99<20ms@10s, p99.9<50ms@60s, p99.99<200ms@5m, errors<0.1%@10s");
        assert_eq!(tussle.window, Duration::from_secs(10), "the default window");
        assert_eq!(
            tussle.terms[0].window, None,
            "the SLA's own window is written once"
        );
        assert_eq!(tussle.terms[1].window, Some(Duration::from_secs(60)));
        assert_eq!(tussle.terms[2].window, Some(Duration::from_secs(300)));
        assert_eq!(tussle.terms[2].name(), "p99.99<200ms@5m");
        assert_eq!(
            tussle.to_string(),
            "p99<20ms, p99.9<50ms@1m, p99.99<200ms@5m, errors<0.1%, window=10s"
        );
        assert_eq!(
            tussle.windows(),
            [10, 60, 300].map(Duration::from_secs).to_vec()
        );
        assert_eq!(
            tussle.over(Duration::from_secs(10)).to_terms_string(),
            "p99<20ms, errors<0.1%"
        );
        assert!(tussle.has_own_windows());
        // Every canonical form reads back as the same SLA.
        for spec in [
            "p99<20ms@10s, p99.9<50ms@60s, p99.99<200ms@5m",
            "p99.9<50ms@1m, p99<20ms@10s",
            "read:p99 < 5ms @ 1m, p99<10ms, window=5s",
            "p99<20ms@10s, p99<50ms@1m",
            "p99<1ms@10s, window=10s",
            "p99<1ms@1500ms, window=1s",
            "max<1s @ 2m 30s, errors<1%",
        ] {
            let sla = parse(spec);
            let again = parse(&sla.to_string());
            assert_eq!(again, sla, "{spec} -> {sla}");
            assert!(
                sla.terms.iter().any(|t| t.window.is_none()),
                "{spec}: one uses window="
            );
        }
        // Every term with its own window: the first one's is the SLA's.
        let all_own = parse("p99.9<50ms@1m, p99<20ms@10s");
        assert_eq!(all_own.window, Duration::from_secs(60));
        assert_eq!(all_own.to_string(), "p99.9<50ms, p99<20ms@10s, window=1m");
        // The same metric over two horizons is two rules.
        assert_eq!(parse("p99<20ms@10s, p99<50ms@1m").terms.len(), 2);
        // An own window equal to the SLA's is the SLA's.
        assert_eq!(
            parse("p99<1ms@10s, window=10s").to_string(),
            "p99<1ms, window=10s"
        );
        let json = serde_json::to_value(&tussle).unwrap();
        assert_eq!(json["terms"][2]["window_ms"], 300_000);
        assert!(json["terms"][0].get("window_ms").is_none());
    }

    #[test]
    fn bad_term_windows_point_at_the_window() {
        for (spec, at, message) in [
            ("p99<10ms@", 9, "missing a term's window"),
            ("p99<10ms@soon", 9, "the window 'soon' is not a duration"),
            ("p99<10ms@0s", 9, "the window must be longer than zero"),
            ("p99<10ms@1m@2m", 11, "'@' once"),
            ("p99<10ms@1.5ms", 9, "whole number of milliseconds"),
            (
                "p99<10ms@1m, p99<20ms@60s",
                13,
                "'p99' is given twice over 1m windows",
            ),
            (
                "read:window@1m",
                5,
                "give one term a window of its own with @",
            ),
        ] {
            let e = Sla::parse(spec, DEFAULT_WINDOW).unwrap_err();
            assert!(e.message.contains(message), "{spec}: {}", e.message);
            assert_eq!(e.position, at, "{spec}: {e}");
        }
    }

    #[test]
    fn recall_terms_and_their_canonical_spelling() {
        let t = only_term("recall@10>=0.9");
        assert_eq!(t.metric, Metric::Recall(Some(10)));
        assert_eq!(t.bound, Bound::AtLeast);
        assert_eq!(t.threshold, Threshold::Recall(0.9));
        assert_eq!(t.name(), "recall@10>=0.9");
        assert_eq!(only_term("recall>=0.9").metric, Metric::Recall(None));
        assert_eq!(only_term("recall>=0.9").name(), "recall>=0.9");
        let t = only_term("p1(recall)>=0.7");
        assert_eq!(
            t.metric,
            Metric::RecallPercentile(Percentile::from_thousandths(1_000).unwrap())
        );
        assert_eq!(t.name(), "p1(recall)>=0.7");
        assert!(t.metric.is_recall() && !t.metric.is_latency());
        for (spec, canonical) in [
            ("recall@10>=90%", "recall@10>=0.9"),
            ("recall@10 ≥ 0.90", "recall@10>=0.9"),
            ("RECALL @ 010 >= 0.9500", "recall@10>=0.95"),
            ("recall>0", "recall>0"),
            ("recall>=1", "recall>=1"),
            ("recall>=100%", "recall>=1"),
            ("recall>=0.0001", "recall>=0.0001"),
            ("recall>=99.99%", "recall>=0.9999"),
            ("recall>=12.5%", "recall>=0.125"),
            ("P1 (Recall) ≥ 0.70", "p1(recall)>=0.7"),
            ("p0.1( recall )>0.5", "p0.1(recall)>0.5"),
            ("p5(recall)>=0.8", "p5(recall)>=0.8"),
            ("p50(recall)>=95%", "p50(recall)>=0.95"),
            ("p99.999(recall)>=0.1", "p99.999(recall)>=0.1"),
            ("ann:recall@10>=0.9", "ann:recall@10>=0.9"),
            ("ann : p1(recall) >= 0.7", "ann:p1(recall)>=0.7"),
        ] {
            assert_eq!(only_term(spec).name(), canonical, "{spec}");
            assert_eq!(only_term(canonical), only_term(spec), "{spec}");
        }
        assert_eq!(
            only_term("recall>=12.5%").threshold,
            Threshold::Recall(0.125)
        );
        assert_eq!(only_term("recall>0").bound, Bound::Above);
    }

    #[test]
    fn recall_terms_read_back_beside_the_others() {
        for spec in [
            "p99<10ms, recall@10>=0.9, p1(recall)>=0.7, errors<0.1%",
            "ann:recall@10>=0.9@1m, ann:p0.1(recall)>0.5, read:p99<5ms, window=10s",
            "recall>=0.8@10s, recall>=0.9@1m",
            "recall@100>=0.99, p50(recall)>=95%, window=30s",
            // The fuzz target's seed.
            "ann:recall@10>=0.9@1m, p1(recall)>=70%, recall > 0.5 @ 30s, p99<10ms, \
             P0.1 ( Recall ) ≥ 0.0001, window=10s",
        ] {
            let sla = parse(spec);
            assert_eq!(parse(&sla.to_string()), sla, "{spec} -> {sla}");
        }
        let sla = parse("ann:recall@10>=0.9@1m, p99<10ms");
        assert_eq!(
            sla.to_string(),
            "ann:recall@10>=0.9@1m, p99<10ms, window=10s"
        );
        assert_eq!(sla.terms[0].op.as_deref(), Some("ann"));
        assert_eq!(sla.terms[0].window, Some(Duration::from_secs(60)));
        assert_eq!(
            parse("ann : p1(recall) >= 0.7 @ 30s, p99<1ms").to_terms_string(),
            "ann:p1(recall)>=0.7@30s, p99<1ms"
        );
        // An op type called recall is an op type.
        assert_eq!(
            parse("recall:p99<1ms").terms[0].op.as_deref(),
            Some("recall")
        );
    }

    #[test]
    fn a_recall_term_is_a_lower_bound() {
        assert_error(
            "recall@10<0.9",
            9,
            "a recall term is a lower bound: write recall@10>=0.9",
        );
        assert_error("recall <= 95%", 7, "write recall>=0.95");
        assert_error("ann:p1(recall)≤0.7", 14, "write ann:p1(recall)>=0.7");
        assert_error("recall@10<bad", 9, "write recall@10>=0.9");
        assert_error(
            "recall@10=0.9",
            9,
            "expected >= or > after 'recall@10', found '='",
        );
        assert_error(
            "recall@10",
            9,
            "missing threshold: write e.g. recall@10>=0.9",
        );
        assert_error("recall>=", 8, "missing threshold after '>='");
    }

    #[test]
    fn recall_thresholds_lie_between_0_and_1() {
        assert_error(
            "recall@10>=1.5",
            11,
            "a recall threshold lies between 0 and 1: 1.5 is above 1",
        );
        assert_error(
            "recall>=90",
            8,
            "90 is above 1 (as a percentage, write 90%)",
        );
        assert_error("recall>=101%", 8, "between 0% and 100%: 101% is above 100%");
        assert_error("recall>=99999999999999999999999", 8, "is above 1");
        assert_error("recall>=-0.1", 8, "a recall threshold lies between 0 and 1");
        assert_error("recall>=0", 8, "at least 0 always holds");
        assert_error("recall>=0%", 8, "at least 0 always holds");
        assert_error("recall>1", 7, "no recall is above 1: write >=1");
        assert_error(
            "p1(recall)>=70ms",
            14,
            "a recall threshold is a share of the nearest neighbours, not a time",
        );
        assert_error("recall>=0.9 s", 12, "not a time");
        assert_error("recall>=0.9x", 11, "unknown unit 'x'");
        assert_error("recall>=0.90001", 8, "at most four decimals");
        assert_error("recall>=90.001%", 8, "two in a percentage");
        assert_error("recall>=.9", 8, "'.9' is not a number");
    }

    #[test]
    fn bad_recall_metrics() {
        assert_error(
            "recall@0>=0.9",
            7,
            "recall@0 counts no neighbour: k is at least 1",
        );
        assert_error("recall@>=0.9", 7, "expected the k of recall@k after '@'");
        assert_error("recall@10s>=0.9", 7, "a whole number of nearest neighbours");
        assert_error("recall@1.5>=0.9", 7, "a whole number of nearest neighbours");
        assert_error("recall@99999999999>=0.9", 7, "k is too large");
        assert_error("mean(recall)>=0.9", 0, "'mean(…)' is not a metric");
        assert_error("p1(latency)>=0.9", 3, "expected recall in the parentheses");
        assert_error(
            "p1(recall@10)>=0.9",
            9,
            "a percentile of the recall takes no k",
        );
        assert_error("p1(recall>=0.9", 9, "expected ')' to close p1(recall)");
        assert_error(
            "p100(recall)>=0.9",
            0,
            "'p100' is not a percentile: it must lie above 0",
        );
        assert_error("p0(recall)>=0.9", 0, "above 0 and below 100");
        assert_error("ann:p1.2345(recall)>=0.9", 4, "at most three decimals");
        // The same measure twice, with or without k.
        assert_error("recall@10>=0.9, recall>=0.8", 16, "'recall' is given twice");
        assert_error(
            "ann:p1(recall)>=0.7, ann:p1(recall)>=0.6",
            21,
            "given twice",
        );
        assert_eq!(parse("recall>=0.9, ann:recall>=0.8").terms.len(), 2);
        assert_eq!(parse("recall>=0.9, recall>=0.8@1m").terms.len(), 2);
    }

    #[test]
    fn recall_terms_serialize_their_parts() {
        let sla = parse("ann:recall@10>=0.9, p1(recall)>0.7@1m");
        assert_eq!(
            serde_json::to_value(&sla).unwrap()["terms"],
            serde_json::json!([
                {
                    "name": "ann:recall@10>=0.9",
                    "op": "ann",
                    "metric": "recall@10",
                    "bound": ">=",
                    "threshold": {"recall": 0.9}
                },
                {
                    "name": "p1(recall)>0.7@1m",
                    "op": null,
                    "metric": "p1(recall)",
                    "bound": ">",
                    "threshold": {"recall": 0.7},
                    "window_ms": 60_000
                }
            ])
        );
    }
}
