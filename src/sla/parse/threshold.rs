//! A term's bound and threshold: `<` or `<=`, and a latency or a percentage of errors, each
//! read exactly, on its digits (a latency in nanoseconds).

use super::{Parser, SlaParseError};
use crate::sla::spec::{shift_point, Bound, Metric, Threshold};

impl Parser<'_> {
    /// The bound after the metric of `subject`: `<` or `<=`.
    pub(super) fn bound(&mut self, subject: &str, metric: Metric) -> Result<Bound, SlaParseError> {
        self.skip_spaces();
        let pos = self.pos;
        let example = if metric.is_latency() { "10ms" } else { "0.1%" };
        let bound = match self.peek() {
            Some('<') => {
                self.pos += 1;
                if self.eat('=') {
                    Bound::AtMost
                } else {
                    Bound::Below
                }
            }
            Some('≤') => {
                self.pos += 1;
                Bound::AtMost
            }
            Some('>' | '≥') => {
                return Err(self.error(
                    pos,
                    format!(
                    "an SLA states upper bounds: write {subject}<{example} or {subject}<={example}"
                ),
                ))
            }
            None | Some(',') => {
                return Err(self.error(
                    pos,
                    format!("missing threshold: write e.g. {subject}<{example}"),
                ))
            }
            Some(c) => {
                return Err(self.error(
                    pos,
                    format!("expected < or <= after '{subject}', found '{c}'"),
                ))
            }
        };
        Ok(bound)
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
            return Err(self.error(pos, "a threshold must be above zero"));
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
        let result = if metric.is_latency() {
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
