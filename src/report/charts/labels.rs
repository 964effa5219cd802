//! Words and numbers as the charts and the page write them: numbers for labels, an SLA
//! and its terms as a sentence and a legend say them, windows, and chart file names.

use std::time::Duration;

use crate::format::format_number;
use crate::sla::{Sla, Term, Threshold};

/// Letters, digits, dots and dashes only; at most 60 characters.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(60).collect();
    if out.is_empty() {
        "chart".to_string()
    } else {
        out
    }
}

/// An SLA as a sentence says it: "p99.9<100ms, max<1s in every 10 s window".
pub fn sla_words(sla: &Sla) -> String {
    let terms: Vec<String> = sla.terms.iter().map(|t| t.name()).collect();
    format!(
        "{} in every {} s window",
        terms.join(", "),
        format_number(sla.window.as_secs_f64())
    )
}

/// A latency term's threshold in ms.
pub(super) fn threshold_ms(term: &Term) -> Option<f64> {
    match term.threshold {
        Threshold::LatencyNs(ns) => Some(ns as f64 / 1e6),
        Threshold::Fraction(_) | Threshold::Recall(_) => None,
    }
}

/// "p99.9 < 100 ms": a term as a legend says it.
pub(super) fn term_words(term: &Term) -> String {
    let subject = match &term.op {
        Some(op) => format!("{op} {}", term.metric),
        None => term.metric.to_string(),
    };
    let threshold = threshold_ms(term)
        .map(|ms| format!("{} ms", format_number(ms)))
        .unwrap_or_default();
    format!("{subject} {} {threshold}", term.bound)
}

pub(super) fn format_window(window: Duration) -> String {
    format!("{} s", format_number(window.as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_slugs() {
        assert_eq!(
            slug("Latency: <c2> at 5 200/s #1"),
            "latency-c2-at-5-200-s-1"
        );
        assert_eq!(slug("¿?"), "chart");
        assert_eq!(
            sla_words(&Sla::parse("p99<20ms, window=5s", Duration::from_secs(1)).unwrap()),
            "p99<20ms in every 5 s window"
        );
    }
}
