//! `--rates` and `--resolution`, parsed once into the plan of rates a search tries, and kept
//! in search.json as the text given and the fraction, which read back into the same plan.

use serde::{Deserialize, Serialize};

use crate::units::parse_rate;

/// The most rates a ladder may hold: each is at least one full trial.
pub const MAX_RUNGS: usize = 200;

/// Whether two rates are the same attempted rate. Rates are compared with a relative
/// tolerance far below any rate step, so that a rate read back from JSON matches the one
/// the search computed.
pub(crate) fn same_rate(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// The fractions of the ceiling the automatic ladder climbs, before the steps of 0.1 above 1.0.
pub(crate) const AUTO_FRACTIONS: [f64; 5] = [0.4, 0.6, 0.8, 0.9, 1.0];

/// The automatic ladder stops at this multiple of the ceiling.
pub(crate) const AUTO_TOP: f64 = 2.0;

/// The automatic ladder's rates for a ceiling: the fractions, then 1.1 to 2.0 by 0.1, rounded
/// to nice values, without repeats where rounding makes two equal.
pub(crate) fn auto_ladder(ceiling: f64) -> Vec<f64> {
    let unit = nice_unit(ceiling);
    let top = (AUTO_TOP * 10.0).round() as u32;
    let fractions = AUTO_FRACTIONS
        .into_iter()
        .chain((11..=top).map(|tenths| f64::from(tenths) / 10.0));
    let mut rates: Vec<f64> = Vec::new();
    for fraction in fractions {
        let rate = nice(fraction * ceiling, unit);
        if rates.last() != Some(&rate) {
            rates.push(rate);
        }
    }
    rates
}

/// The grid automatic rates lie on: 10^(⌊log₁₀ C⌋ − 2), at least 1/s.
pub(crate) fn nice_unit(ceiling: f64) -> f64 {
    let exponent = ceiling.log10().floor() as i32 - 2;
    10f64.powi(exponent).max(1.0)
}

/// `rate` rounded to the nearest multiple of `unit`, at least `unit`.
pub(crate) fn nice(rate: f64, unit: f64) -> f64 {
    ((rate / unit).round() * unit).max(unit)
}

/// Which attempted rates to try (`--rates`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RatePlan {
    /// These rates per second, in this order, all of them.
    Ladder(Vec<f64>),
    /// Probe the ceiling, climb by fractions of it, then bisect.
    Auto {
        /// Bisection stops when (F − L) / F is at most this fraction, e.g. 0.02.
        resolution: f64,
    },
}

impl RatePlan {
    /// Reads `--rates`: `auto` (bisecting down to `resolution`, a fraction such as 0.02), a
    /// range `start:stop:step` with the stop included (`20k:120k:10k`), or a list
    /// (`1000,2000,5000`, tried in the order given). Rates take k and M suffixes. The error is
    /// a one-line message naming the input.
    pub fn parse(text: &str, resolution: f64) -> Result<RatePlan, String> {
        let named = RatePlan::named_rates(text)
            .map_err(|why| format!("--rates '{}': {why}", text.trim()))?;
        match named {
            Some(rates) => Ok(RatePlan::Ladder(rates)),
            None if resolution > 0.0 && resolution < 1.0 => Ok(RatePlan::Auto { resolution }),
            None => Err(format!(
                "--rates '{}': the resolution {resolution} must be a fraction between 0 and 1, \
                 e.g. 0.02",
                text.trim()
            )),
        }
    }

    /// The rates `--rates` names (a range or a list), or `None` for `auto`. The error says
    /// what is wrong, without the input.
    fn named_rates(text: &str) -> Result<Option<Vec<f64>>, String> {
        let trimmed = text.trim();
        let err = |why: &str| why.to_string();
        if trimmed.is_empty() {
            return Err("it is empty: write auto, a range like 20k:120k:10k \
                        or a list like 1000,2000,5000"
                .to_string());
        }
        if trimmed.eq_ignore_ascii_case("auto") {
            return Ok(None);
        }
        let rate = |part: &str, what: &str| -> Result<f64, String> {
            if part.trim().is_empty() {
                return Err(err(&format!("the {what} is empty")));
            }
            parse_rate(part).map_err(|e| err(&format!("the {what}: {e}")))
        };
        if trimmed.contains(':') {
            let parts: Vec<&str> = trimmed.split(':').collect();
            let &[start, stop, step] = &parts[..] else {
                return Err(err("a range is start:stop:step, e.g. 20k:120k:10k"));
            };
            let start = rate(start, "start")?;
            let stop = rate(stop, "stop")?;
            if step.trim().is_empty() {
                return Err(err("the step is empty"));
            }
            let step = parse_rate(step)
                .map_err(|_| err("the step must be a rate above zero, e.g. 10k"))?;
            if stop < start {
                return Err(err("the stop is below the start"));
            }
            // The small allowance keeps the stop in despite rounding (0.1k:0.3k:0.1k).
            let count = ((stop - start) / step + 1e-9).floor() + 1.0;
            if count > MAX_RUNGS as f64 {
                return Err(err(&format!(
                    "{count} rates, more than {MAX_RUNGS}: take a larger step"
                )));
            }
            let rates: Vec<f64> = (0..count as usize)
                .map(|i| start + i as f64 * step)
                .collect();
            if rates.windows(2).any(|w| same_rate(w[0], w[1])) {
                return Err(err(
                    "the step is too small for rates this large: two rungs would be the same rate",
                ));
            }
            return Ok(Some(rates));
        }
        let mut rates = Vec::new();
        for part in trimmed.split(',') {
            let value = rate(part, "list item")?;
            if rates.iter().any(|&r| same_rate(r, value)) {
                return Err(err(&format!("{} is listed twice", part.trim())));
            }
            rates.push(value);
        }
        if rates.len() > MAX_RUNGS {
            return Err(err(&format!(
                "{} rates, more than {MAX_RUNGS}",
                rates.len()
            )));
        }
        Ok(Some(rates))
    }
}

/// `--rates` as given on the command line, read on its own (the resolution comes apart):
/// `auto`, or the rates it names. A search's [`Rates`] are made of it and `--resolution`.
#[derive(Debug, Clone, PartialEq)]
pub struct RatesArg {
    text: String,
    names_its_rates: bool,
}

impl RatesArg {
    /// Reads `--rates` (see [`RatePlan::parse`]); the error says what is wrong in one line.
    pub fn parse(text: &str) -> Result<RatesArg, String> {
        Ok(RatesArg {
            names_its_rates: RatePlan::named_rates(text)?.is_some(),
            text: text.to_string(),
        })
    }

    /// Whether it names its rates (a range or a list) rather than `auto`.
    pub fn names_its_rates(&self) -> bool {
        self.names_its_rates
    }

    /// The text as given.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// A search's rates as the user gave them (`--rates`, `--resolution`) and the plan they make.
/// search.json stores the two as they were given (`"rates": "20k:120k:10k", "resolution":
/// 0.02`, beside the other settings), and reading them back parses them again, so a damaged
/// file is refused as the flags would have been.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "StoredRates", into = "StoredRates")]
pub struct Rates {
    text: String,
    resolution: f64,
    plan: RatePlan,
}

impl Rates {
    /// Reads `--rates` with `--resolution` (see [`RatePlan::parse`]).
    pub fn parse(text: &str, resolution: f64) -> Result<Rates, String> {
        Ok(Rates {
            plan: RatePlan::parse(text, resolution)?,
            text: text.to_string(),
            resolution,
        })
    }

    /// The plan of rates.
    pub fn plan(&self) -> &RatePlan {
        &self.plan
    }

    /// `--rates` as given.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// How [`Rates`] lie in search.json: two of the search's settings.
#[derive(Serialize, Deserialize)]
struct StoredRates {
    rates: String,
    resolution: f64,
}

impl TryFrom<StoredRates> for Rates {
    type Error = String;

    fn try_from(stored: StoredRates) -> Result<Rates, String> {
        Rates::parse(&stored.rates, stored.resolution)
    }
}

impl From<Rates> for StoredRates {
    fn from(rates: Rates) -> StoredRates {
        StoredRates {
            rates: rates.text,
            resolution: rates.resolution,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ladder(text: &str) -> Vec<f64> {
        match RatePlan::parse(text, 0.02).unwrap() {
            RatePlan::Ladder(rates) => rates,
            other => panic!("{other:?}"),
        }
    }

    fn parse_error(text: &str) -> String {
        RatePlan::parse(text, 0.02).unwrap_err()
    }

    #[test]
    fn the_rate_plan_reads_auto_ranges_and_lists() {
        assert_eq!(
            RatePlan::parse("auto", 0.02),
            Ok(RatePlan::Auto { resolution: 0.02 })
        );
        assert_eq!(
            RatePlan::parse(" AUTO ", 0.05),
            Ok(RatePlan::Auto { resolution: 0.05 })
        );
        let azul_ladder: Vec<f64> = (2..=12).map(|i| f64::from(i) * 10_000.0).collect();
        assert_eq!(ladder("20k:120k:10k"), azul_ladder);
        // The stop is included only when it lies on the step.
        assert_eq!(ladder("1000:3500:1000"), vec![1000.0, 2000.0, 3000.0]);
        assert_eq!(ladder("0.1k:0.3k:0.1k"), vec![100.0, 200.0, 300.0]);
        assert_eq!(ladder("5k:5k:1k"), vec![5000.0]);
        assert_eq!(ladder("1000,2000,5000"), vec![1000.0, 2000.0, 5000.0]);
        assert_eq!(ladder("5k, 1.5M ,2000/s"), vec![5000.0, 1.5e6, 2000.0]);
        assert_eq!(ladder("1.5M"), vec![1.5e6]);
        assert_eq!(ladder("1:200:1").len(), 200);
    }

    #[test]
    fn a_step_below_the_rates_precision_is_refused() {
        let e = RatePlan::parse("999999990:1000000000:0.5", 0.02).unwrap_err();
        assert!(e.contains("the step is too small"), "{e}");
        let e = RatePlan::parse("10000000000000000:10000000000000100:1", 0.02).unwrap_err();
        assert!(e.contains("at most 1G"), "{e}");
    }

    #[test]
    fn a_bad_rate_plan_gets_a_one_line_reason() {
        let cases = [
            ("", "--rates '': it is empty"),
            (
                "auto-ish",
                "--rates 'auto-ish': the list item: rate 'auto-ish'",
            ),
            ("20k:10k:1k", "the stop is below the start"),
            ("1k:2k:0", "the step must be a rate above zero"),
            ("1k:2k:-5", "the step must be a rate above zero"),
            ("1k:2k", "a range is start:stop:step"),
            ("1k:2k:1k:5", "a range is start:stop:step"),
            ("1k::1k", "the stop is empty"),
            ("1k:2k:", "the step is empty"),
            ("x:2k:1k", "the start: rate 'x' is not valid"),
            ("1:1000:1", "1000 rates, more than 200"),
            ("1k,,2k", "the list item is empty"),
            ("1k,abc", "rate 'abc' is not valid"),
            ("1k,0", "the rate must be above zero"),
            ("1k,2k,1000", "1000 is listed twice"),
        ];
        for (text, expected) in cases {
            let message = parse_error(text);
            assert!(message.contains(expected), "{text:?}: {message}");
            assert!(!message.contains('\n'), "{text:?}: {message}");
        }
        let many: Vec<String> = (1..=201).map(|i| i.to_string()).collect();
        assert!(parse_error(&many.join(",")).contains("201 rates, more than 200"));
        for resolution in [0.0, -0.1, 1.0, f64::NAN] {
            let message = RatePlan::parse("auto", resolution).unwrap_err();
            assert!(
                message.contains("must be a fraction between 0 and 1"),
                "{message}"
            );
        }
    }

    #[test]
    fn rates_are_stored_as_given_and_read_back_into_the_same_plan() {
        #[derive(Serialize, Deserialize)]
        struct Settings {
            before: u32,
            #[serde(flatten)]
            rates: Rates,
            after: u32,
        }
        for (text, resolution) in [("20k:120k:10k", 0.02), (" auto", 0.05), ("5k, 1.5M", 0.02)] {
            let settings = Settings {
                before: 1,
                rates: Rates::parse(text, resolution).unwrap(),
                after: 2,
            };
            let json = serde_json::to_string(&settings).unwrap();
            assert_eq!(
                json,
                format!(
                    r#"{{"before":1,"rates":{},"resolution":{resolution},"after":2}}"#,
                    serde_json::to_string(text).unwrap()
                )
            );
            let back: Settings = serde_json::from_str(&json).unwrap();
            assert_eq!(back.rates, settings.rates);
        }
        // A damaged file is refused as the flag would have been.
        let damaged = r#"{"before":1,"rates":"1k:2k","resolution":0.02,"after":2}"#;
        let error = serde_json::from_str::<Settings>(damaged).err().unwrap();
        assert!(
            error.to_string().contains("a range is start:stop:step"),
            "{error}"
        );
        let damaged = r#"{"before":1,"rates":"auto","resolution":3,"after":2}"#;
        assert!(serde_json::from_str::<Settings>(damaged).is_err());
    }
}
