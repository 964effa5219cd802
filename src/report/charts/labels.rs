//! Words and numbers as the charts and the page write them: numbers for labels, an SLA
//! and its terms as a sentence and a legend say them, windows, and chart file names.

use std::time::Duration;

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
        Threshold::Fraction(_) => None,
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

/// A number for labels: up to 3 significant digits below 100, whole above, thousands
/// separated by a space.
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return "-".to_string();
    }
    let magnitude = value.abs();
    if magnitude >= 100.0 || value == value.trunc() {
        let rounded = value.round();
        let grouped = crate::capacity::table::group_thousands(rounded.abs() as u64);
        if rounded < 0.0 {
            format!("-{grouped}")
        } else {
            grouped
        }
    } else if magnitude >= 10.0 {
        trim_zeros(format!("{value:.1}"))
    } else if magnitude >= 1.0 {
        trim_zeros(format!("{value:.2}"))
    } else if magnitude >= 0.01 {
        trim_zeros(format!("{value:.3}"))
    } else {
        trim_zeros(format!("{value:.4}"))
    }
}

fn trim_zeros(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

pub(super) fn format_window(window: Duration) -> String {
    format!("{} s", format_number(window.as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_slugs() {
        assert_eq!(format_number(0.365823), "0.366");
        assert_eq!(format_number(21.381), "21.4");
        assert_eq!(format_number(2.445311), "2.45");
        assert_eq!(format_number(1_041_760.0), "1 041 760");
        assert_eq!(format_number(5.0), "5");
        assert_eq!(format_number(0.5), "0.5");
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
