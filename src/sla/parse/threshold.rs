//! A term's bound and threshold: `<`, `<=` and a latency or a percentage of errors; `>=`,
//! `>` and a recall, a share between 0 and 1 or a percentage. Each threshold is read
//! exactly, on its digits: a latency in nanoseconds, a recall in ten-thousandths.

use super::{Parser, SlaParseError};
use crate::metrics::RECALL_SCALE;
use crate::sla::spec::{shift_point, Bound, Metric, Threshold};

impl Parser<'_> {
    /// The bound after the metric of `subject`: an upper one for latency and `errors`, a
    /// lower one for recall; the other direction is refused with the caret under it.
    pub(super) fn bound(&mut self, subject: &str, metric: Metric) -> Result<Bound, SlaParseError> {
        self.skip_spaces();
        let pos = self.pos;
        let (example, symbols) = if metric.is_recall() {
            (
                self.upcoming_recall().unwrap_or_else(|| "0.9".to_string()),
                ">= or >",
            )
        } else if metric.is_latency() {
            ("10ms".to_string(), "< or <=")
        } else {
            ("0.1%".to_string(), "< or <=")
        };
        let bound = match self.peek() {
            Some('<') => {
                self.pos += 1;
                if self.eat('=') {
                    Bound::AtMost
                } else {
                    Bound::Below
                }
            }
            Some('>') => {
                self.pos += 1;
                if self.eat('=') {
                    Bound::AtLeast
                } else {
                    Bound::Above
                }
            }
            Some('≤') => {
                self.pos += 1;
                Bound::AtMost
            }
            Some('≥') => {
                self.pos += 1;
                Bound::AtLeast
            }
            None | Some(',') => {
                let symbol = if metric.is_recall() { ">=" } else { "<" };
                return Err(self.error(
                    pos,
                    format!("missing threshold: write e.g. {subject}{symbol}{example}"),
                ));
            }
            Some(c) => {
                return Err(self.error(
                    pos,
                    format!("expected {symbols} after '{subject}', found '{c}'"),
                ))
            }
        };
        if metric.is_recall() && !bound.is_lower() {
            return Err(self.error(
                pos,
                format!("a recall term is a lower bound: write {subject}>={example}"),
            ));
        }
        if !metric.is_recall() && bound.is_lower() {
            let kind = if metric.is_latency() {
                "a latency term"
            } else {
                "an errors term"
            };
            return Err(self.error(
                pos,
                format!(
                    "{kind} is an upper bound: write {subject}<{example} or {subject}<={example}"
                ),
            ));
        }
        Ok(bound)
    }

    /// The number (and `%`) after the bound the parser is on, when it is one: the recall
    /// threshold a term of the wrong direction meant, for its message.
    fn upcoming_recall(&self) -> Option<String> {
        let rest = self.chars[self.pos..]
            .iter()
            .skip_while(|c| matches!(c, '<' | '>' | '=' | '≤' | '≥') || c.is_whitespace());
        let number: String = rest
            .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '%'))
            .collect();
        let (digits, unit) = match number.strip_suffix('%') {
            Some(digits) => (digits, "%"),
            None => (number.as_str(), ""),
        };
        let (whole, fraction) = split_decimal(digits)?;
        let recall = recall_threshold(whole, fraction, unit, Bound::AtLeast).ok()?;
        Some(recall.to_string())
    }

    /// The threshold after the bound, of the kind `metric` takes.
    pub(super) fn threshold(
        &mut self,
        metric: Metric,
        bound: Bound,
    ) -> Result<Threshold, SlaParseError> {
        self.skip_spaces();
        let pos = self.pos;
        if self.peek() == Some('-') {
            let message = if metric.is_recall() {
                "a recall threshold lies between 0 and 1, e.g. 0.9 or 90%"
            } else {
                "a threshold must be above zero"
            };
            return Err(self.error(pos, message));
        }
        let number = self.take_while(|c| c.is_ascii_digit() || c == '.');
        if number.is_empty() {
            let message = if self.at_term_end() {
                format!("missing threshold after '{bound}'")
            } else {
                format!("expected a number after '{bound}'")
            };
            return Err(self.error(pos, message));
        }
        let Some((whole, fraction)) = split_decimal(&number) else {
            return Err(self.error(pos, format!("'{number}' is not a number")));
        };
        self.skip_spaces();
        let unit_pos = self.pos;
        let unit = self.take_while(|c| c.is_alphabetic() || c == '%');
        let result = if metric.is_recall() {
            recall_threshold(whole, fraction, &unit, bound)
        } else if metric.is_latency() {
            latency_threshold(whole, fraction, &unit)
        } else {
            error_threshold(&number, &unit, bound)
        };
        result
            .map_err(|(at_unit, message)| self.error(if at_unit { unit_pos } else { pos }, message))
    }
}

/// A plain decimal `123` or `1.25` as its whole and fractional digits; `None` for anything
/// else (`1.`, `.5`, `1.2.3`).
pub(super) fn split_decimal(text: &str) -> Option<(&str, &str)> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let complete = !whole.is_empty() && (!fraction.is_empty() || !text.contains('.'));
    (complete && digits(whole) && digits(fraction)).then_some((whole, fraction))
}

/// A threshold's error: whether it points at the unit (else at the number), and the message.
type ThresholdError = (bool, String);

/// A latency threshold `whole.fraction unit`, exactly in nanoseconds.
fn latency_threshold(whole: &str, fraction: &str, unit: &str) -> Result<Threshold, ThresholdError> {
    let unit_ns = match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "" => {
            let number = if fraction.is_empty() {
                whole.to_string()
            } else {
                format!("{whole}.{fraction}")
            };
            return Err((
                false,
                format!("expected a unit (ns, us, ms, s) after '{number}'"),
            ));
        }
        "%" => {
            return Err((
                true,
                "a latency threshold takes a unit (ns, us, ms, s), not a percentage".to_string(),
            ))
        }
        other => return Err((true, format!("unknown unit '{other}': use ns, us, ms or s"))),
    };
    let ns = scale_decimal(whole, fraction, unit_ns).map_err(|reason| (false, reason))?;
    if ns == 0 {
        return Err((false, "a threshold must be above zero".to_string()));
    }
    Ok(Threshold::LatencyNs(ns))
}

/// `whole.fraction × unit` as a whole number, or why it is none.
fn scale_decimal(whole: &str, fraction: &str, unit: u64) -> Result<u64, String> {
    let too_large = || "the threshold is too large".to_string();
    let fraction = fraction.trim_end_matches('0');
    if fraction.len() > 9 {
        return Err("the threshold is finer than a nanosecond".to_string());
    }
    let whole: u128 = whole.parse().map_err(|_| too_large())?;
    let scale = 10u128.pow(fraction.len() as u32);
    let fraction: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().map_err(|_| too_large())?
    };
    let parts = fraction * u128::from(unit);
    if !parts.is_multiple_of(scale) {
        return Err("the threshold is finer than a nanosecond".to_string());
    }
    whole
        .checked_mul(u128::from(unit))
        .and_then(|w| w.checked_add(parts / scale))
        .and_then(|total| u64::try_from(total).ok())
        .ok_or_else(too_large)
}

/// An `errors` threshold: a percentage of requests, 0 to 100.
fn error_threshold(number: &str, unit: &str, bound: Bound) -> Result<Threshold, ThresholdError> {
    match unit {
        "%" => {}
        "" => {
            return Err((
                false,
                "write the error threshold as a percentage of requests, e.g. errors<0.1%; \
                 a count of failed requests is not supported"
                    .to_string(),
            ))
        }
        other => {
            return Err((
                true,
                format!("errors take a percentage of requests, e.g. errors<0.1%, not '{other}'"),
            ))
        }
    }
    let fraction: f64 = shift_point(number, -2)
        .parse()
        .map_err(|_| (false, format!("'{number}' is not a number")))?;
    if fraction > 1.0 {
        return Err((false, "the error threshold is at most 100%".to_string()));
    }
    if fraction == 0.0 && bound == Bound::Below {
        return Err((
            false,
            "a threshold must be above zero; to allow no failed requests at all, write errors<=0%"
                .to_string(),
        ));
    }
    Ok(Threshold::Fraction(fraction))
}

/// A recall threshold `whole.fraction`, a share between 0 and 1 (`unit` empty) or a
/// percentage (`unit` `%`), exactly in ten-thousandths (the precision recall is recorded in).
fn recall_threshold(
    whole: &str,
    fraction: &str,
    unit: &str,
    bound: Bound,
) -> Result<Threshold, ThresholdError> {
    let number = if fraction.is_empty() {
        whole.to_string()
    } else {
        format!("{whole}.{fraction}")
    };
    // Ten-thousandths per unit of the number written.
    let scale = match unit {
        "" => 10_000,
        "%" => 100,
        "ns" | "us" | "µs" | "μs" | "ms" | "s" => {
            return Err((
                true,
                format!(
                    "a recall threshold is a share of the nearest neighbours, not a time: write \
                     a share such as 0.9 or a percentage such as 90%, not '{unit}'"
                ),
            ))
        }
        other => {
            return Err((
                true,
                format!(
                    "unknown unit '{other}': a recall threshold is a share such as 0.9 or a \
                     percentage such as 90%"
                ),
            ))
        }
    };
    let fraction = fraction.trim_end_matches('0');
    let decimals = if unit == "%" { 2 } else { 4 };
    if fraction.len() > decimals {
        return Err((
            false,
            "recall is recorded in ten-thousandths: a recall threshold takes at most four \
             decimals (two in a percentage)"
                .to_string(),
        ));
    }
    let whole_recall = RECALL_SCALE as u64;
    let Some(ten_thousandths) = scale_decimal(whole, fraction, scale)
        .ok()
        .filter(|t| *t <= whole_recall)
    else {
        let message = match unit {
            "%" => format!("a recall threshold lies between 0% and 100%: {number}% is above 100%"),
            _ if fraction.is_empty() && whole.parse().is_ok_and(|w: u64| w <= 100) => format!(
                "a recall threshold lies between 0 and 1: {number} is above 1 (as a \
                 percentage, write {number}%)"
            ),
            _ => format!("a recall threshold lies between 0 and 1: {number} is above 1"),
        };
        return Err((false, message));
    };
    if ten_thousandths == 0 && bound == Bound::AtLeast {
        return Err((
            false,
            "a recall of at least 0 always holds: give a threshold above 0, e.g. 0.9".to_string(),
        ));
    }
    if ten_thousandths == whole_recall && bound == Bound::Above {
        return Err((
            false,
            "no recall is above 1: write >=1 to ask for every nearest neighbour".to_string(),
        ));
    }
    Ok(Threshold::Recall(ten_thousandths as f64 / RECALL_SCALE))
}
