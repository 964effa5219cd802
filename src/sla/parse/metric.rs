//! A term's metric: `pNN[.NNN]`, `max`, `mean`, `errors`, and the recall metrics: `recall`,
//! `recall@K` (the mean recall@k) and `pNN[.NNN](recall)` (a percentile of the recall).

use super::{Parser, SlaParseError};
use crate::sla::spec::{Metric, Percentile};

impl Parser<'_> {
    /// The metric whose word `word` started at `start`, with what follows that word in the
    /// recall metrics: `@K` after `recall`, `(recall)` after a percentile.
    pub(super) fn metric(&mut self, start: usize, word: &str) -> Result<Metric, SlaParseError> {
        self.skip_spaces();
        if self.peek() == Some('(') {
            return self.recall_percentile(start, word);
        }
        if !word.eq_ignore_ascii_case("recall") {
            return parse_metric(word).map_err(|message| self.error(start, message));
        }
        if !self.eat('@') {
            return Ok(Metric::Recall(None));
        }
        self.skip_spaces();
        let pos = self.pos;
        let digits = self.take_while(|c| c.is_ascii_digit());
        if digits.is_empty() || self.peek().is_some_and(|c| c.is_alphanumeric() || c == '.') {
            return Err(self.error(
                pos,
                "expected the k of recall@k after '@': a whole number of nearest neighbours, \
                 e.g. recall@10",
            ));
        }
        match digits.parse::<u32>() {
            Ok(0) => Err(self.error(
                pos,
                "recall@0 counts no neighbour: k is at least 1, e.g. recall@10",
            )),
            Ok(k) => Ok(Metric::Recall(Some(k))),
            Err(_) => Err(self.error(pos, format!("recall@{digits}: k is too large"))),
        }
    }

    /// `pNN(recall)`, the parser on its `(`; `word` (the percentile) started at `start`.
    fn recall_percentile(&mut self, start: usize, word: &str) -> Result<Metric, SlaParseError> {
        let lower = word.to_lowercase();
        let percentile = match lower.strip_prefix('p') {
            Some(digits) if digits.starts_with(|c: char| c.is_ascii_digit()) => {
                parse_percentile(word, digits, true)
                    .map_err(|message| self.error(start, message))?
            }
            _ => {
                return Err(self.error(
                    start,
                    format!(
                        "'{word}(…)' is not a metric: write a percentile of the recall such as \
                         p1(recall), or recall>=0.9 for the mean recall"
                    ),
                ))
            }
        };
        self.pos += 1;
        self.skip_spaces();
        let inner_pos = self.pos;
        if !self.word().eq_ignore_ascii_case("recall") {
            return Err(self.error(
                inner_pos,
                format!("expected recall in the parentheses: a percentile of the recall, e.g. {word}(recall)"),
            ));
        }
        self.skip_spaces();
        let close = self.pos;
        if self.peek() == Some('@') {
            return Err(self.error(
                close,
                format!(
                    "a percentile of the recall takes no k: it is the recall@k of the workload's \
                     own k; write {word}(recall)"
                ),
            ));
        }
        if !self.eat(')') {
            return Err(self.error(close, format!("expected ')' to close {word}(recall)")));
        }
        Ok(Metric::RecallPercentile(percentile))
    }
}

/// A metric name: `pNN[.NNN]`, `max`, `mean` or `errors`, in any case (`recall` and the
/// percentiles of recall are read by [`Parser::metric`]).
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
            parse_percentile(word, digits, false).map(Metric::Percentile)
        }
        _ => Err(format!(
            "unknown metric '{word}': use a percentile such as p99 or p99.9, max, mean, errors \
             or recall"
        )),
    }
}

/// The digits after the `p` of a percentile metric; `of_recall`: of `pNN(recall)`.
fn parse_percentile(word: &str, digits: &str, of_recall: bool) -> Result<Percentile, String> {
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
    if thousandths == Some(Percentile::HUNDRED) && !of_recall {
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
