//! A term's metric: `pNN[.NNN]`, `max`, `mean` or `errors`.

use super::{Parser, SlaParseError};
use crate::sla::spec::{Metric, Percentile};

impl Parser<'_> {
    /// The metric whose word `word` started at `start`.
    pub(super) fn metric(&mut self, start: usize, word: &str) -> Result<Metric, SlaParseError> {
        parse_metric(word).map_err(|message| self.error(start, message))
    }
}

/// A metric name: `pNN[.NNN]`, `max`, `mean` or `errors`, in any case.
fn parse_metric(word: &str) -> Result<Metric, String> {
    let lower = word.to_lowercase();
    match lower.as_str() {
        "max" => return Ok(Metric::Max),
        "mean" => return Ok(Metric::Mean),
        "errors" => return Ok(Metric::Errors),
        "avg" | "average" => return Err(format!("unknown metric '{word}': write mean")),
        "error" | "err" | "failures" | "failed" => {
            return Err(format!(
                "unknown metric '{word}': write errors, e.g. errors<0.1%"
            ))
        }
        _ => {}
    }
    match lower.strip_prefix('p') {
        Some(digits) if digits.starts_with(|c: char| c.is_ascii_digit()) => {
            parse_percentile(word, digits).map(Metric::Percentile)
        }
        _ => Err(format!(
            "unknown metric '{word}': use a percentile such as p99 or p99.9, max, mean or errors"
        )),
    }
}

/// The digits after the `p` of a percentile metric.
fn parse_percentile(word: &str, digits: &str) -> Result<Percentile, String> {
    let Some((whole, fraction)) = super::threshold::split_decimal(digits) else {
        return Err(format!(
            "'{word}' is not a percentile: write e.g. p99 or p99.9"
        ));
    };
    if fraction.len() > 3 {
        return Err("a percentile takes at most three decimals, e.g. p99.999".to_string());
    }
    let thousandths = whole
        .parse::<u32>()
        .ok()
        .and_then(|w| w.checked_mul(1000))
        .and_then(|w| w.checked_add(format!("{fraction:0<3}").parse::<u32>().ok()?));
    if let Some(p) = thousandths.and_then(Percentile::from_thousandths) {
        return Ok(p);
    }
    if thousandths == Some(Percentile::HUNDRED) {
        return Err(format!("'{word}' is the largest response time: write max"));
    }
    if fraction.is_empty() && whole.len() >= 3 && whole.starts_with('9') {
        return Err(format!(
            "'{word}' is not a percentile: write p{}.{}",
            &whole[..2],
            &whole[2..]
        ));
    }
    Err(format!(
        "'{word}' is not a percentile: it must lie above 0 and below 100"
    ))
}
