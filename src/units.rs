//! Quantities typed by people on the command line: byte sizes and durations.
//!
//! Byte sizes follow the JVM's own reading of `-Xmx` values (`512m`, `2G`: binary
//! multiples, no fractions), because the heap flag is handed to a JVM and users know that
//! notation from `jvm.options`; a general-purpose size crate would read `2G` as 10⁹ bytes.

use std::fmt;
use std::time::Duration;

/// A value on the command line that could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{what} '{}' is not valid: {reason}", crate::usage::cut(input, 60))]
pub struct ParseError {
    /// What kind of value was expected, e.g. "heap size".
    pub what: &'static str,
    /// The text as given.
    pub input: String,
    /// Why it was rejected and what would be accepted.
    pub reason: String,
}

/// A size in bytes, written and read in the JVM's notation (`512M`, `2G`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ByteSize {
    /// The size in bytes.
    pub bytes: u64,
}

impl ByteSize {
    /// One mebibyte.
    pub const MIB: u64 = 1 << 20;
    /// One gibibyte.
    pub const GIB: u64 = 1 << 30;

    /// A size of `n` mebibytes.
    pub const fn mib(n: u64) -> Self {
        ByteSize {
            bytes: n * Self::MIB,
        }
    }

    /// The size as a JVM option value: the largest unit that divides it exactly.
    pub fn to_jvm(self) -> String {
        if self.bytes.is_multiple_of(Self::GIB) {
            format!("{}G", self.bytes / Self::GIB)
        } else if self.bytes.is_multiple_of(Self::MIB) {
            format!("{}M", self.bytes / Self::MIB)
        } else if self.bytes.is_multiple_of(1024) {
            format!("{}K", self.bytes / 1024)
        } else {
            self.bytes.to_string()
        }
    }

    /// Reads a size such as `2G`, `512m`, `768M`, `1048576` (bytes).
    pub fn parse(what: &'static str, input: &str) -> Result<Self, ParseError> {
        let err = |reason: &str| ParseError {
            what,
            input: input.to_string(),
            reason: reason.to_string(),
        };
        let text = input.trim();
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (digits, unit) = text.split_at(split);
        if digits.is_empty() {
            return Err(err(
                "expected a whole number with an optional unit K, M or G, e.g. 2G or 512M",
            ));
        }
        let number: u64 = digits.parse().map_err(|_| err("the number is too large"))?;
        let multiplier = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" | "kib" => 1 << 10,
            "m" | "mb" | "mib" => 1 << 20,
            "g" | "gb" | "gib" => 1 << 30,
            "t" | "tb" | "tib" => 1 << 40,
            _ => {
                return Err(err(
                    "the unit must be K, M, G or T (binary multiples, as the JVM reads -Xmx)",
                ))
            }
        };
        let bytes = number
            .checked_mul(multiplier)
            .ok_or_else(|| err("the size is too large"))?;
        Ok(ByteSize { bytes })
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.bytes as f64;
        if self.bytes >= Self::GIB {
            write!(f, "{:.1} GiB", b / Self::GIB as f64)
        } else if self.bytes >= Self::MIB {
            write!(f, "{:.0} MiB", b / Self::MIB as f64)
        } else {
            write!(f, "{} B", self.bytes)
        }
    }
}

/// clap value parser for heap sizes.
pub fn parse_heap(input: &str) -> Result<ByteSize, ParseError> {
    ByteSize::parse("heap size", input)
}

/// clap value parser for durations such as `30s`, `2m`, `1h 30m`, `500ms`.
pub fn parse_duration(input: &str) -> Result<Duration, ParseError> {
    humantime::parse_duration(input.trim()).map_err(|e| ParseError {
        what: "duration",
        input: input.to_string(),
        reason: format!("{e}; write it like 30s, 2m, 1h30m or 500ms"),
    })
}

/// The lowest rate a schedule takes: below it the first interval would wait for hours.
pub const MIN_RATE_PER_S: f64 = 0.001;

/// The highest rate a schedule takes: a billion requests a second, a request a nanosecond (the
/// schedule's unit), far beyond one client (about a million) or any cluster; above it a
/// request's period rounds to nothing and counts of requests overflow.
pub const MAX_RATE_PER_S: f64 = 1e9;

/// clap value parser for rates in operations per second: `2000`, `20k`, `1.5M`, `500/s`.
pub fn parse_rate(input: &str) -> Result<f64, ParseError> {
    let err = |reason: &str| ParseError {
        what: "rate",
        input: input.to_string(),
        reason: reason.to_string(),
    };
    let text = input.trim().trim_end_matches("/s");
    let value =
        parse_si(text).ok_or_else(|| err("write operations per second like 2000, 20k or 1.5M"))?;
    if !value.is_finite() {
        return Err(err(
            "the rate must be a number of requests per second, like 2000, 20k or 1.5M",
        ));
    }
    if value <= 0.0 {
        return Err(err("the rate must be above zero"));
    }
    if value < MIN_RATE_PER_S {
        return Err(err(
            "the rate must be at least 0.001 per second (one request in about 17 minutes)",
        ));
    }
    if value > MAX_RATE_PER_S {
        return Err(err(
            "the rate must be at most 1G (a billion) per second, beyond any cluster's",
        ));
    }
    Ok(value)
}

/// clap value parser for counts: `1000`, `200k`, `100M`, `1e6`.
pub fn parse_count(input: &str) -> Result<u64, ParseError> {
    let err = |reason: &str| ParseError {
        what: "count",
        input: input.to_string(),
        reason: reason.to_string(),
    };
    // A plain whole number exactly: a float holds integers exactly only up to 2^53.
    if let Ok(count) = input.trim().parse::<u64>() {
        return Ok(count);
    }
    let value = parse_si(input.trim())
        .ok_or_else(|| err("write a whole number like 1000, 200k or 100M"))?;
    if value < 0.0 || value.fract() != 0.0 {
        return Err(err("it must be a whole number, zero or more"));
    }
    // `u64::MAX as f64` is 2^64 itself, which `as u64` would quietly turn into 2^64 - 1.
    if value >= u64::MAX as f64 {
        return Err(err("it is too large (at most 18446744073709551615)"));
    }
    Ok(value as u64)
}

/// A decimal number with an optional k/M/G (thousand, million, billion) suffix.
fn parse_si(text: &str) -> Option<f64> {
    let (number, multiplier) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 1e3),
        'm' | 'M' => (&text[..text.len() - 1], 1e6),
        'g' | 'G' | 'b' | 'B' => (&text[..text.len() - 1], 1e9),
        _ => (text, 1.0),
    };
    let value: f64 = number.trim().parse().ok()?;
    Some(value * multiplier)
}

impl crate::usage::Blame for ParseError {
    fn is_usage_error(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_counts_take_si_suffixes() {
        assert_eq!(parse_rate("20k").unwrap(), 20_000.0);
        assert_eq!(parse_rate("1.5M").unwrap(), 1_500_000.0);
        assert_eq!(parse_rate("250/s").unwrap(), 250.0);
        assert_eq!(parse_rate("0.5").unwrap(), 0.5);
        assert!(parse_rate("fast").unwrap_err().reason.contains("20k"));
        assert!(parse_rate("0").unwrap_err().reason.contains("above zero"));
        assert!(parse_rate("1e-300")
            .unwrap_err()
            .reason
            .contains("at least 0.001"));
        assert_eq!(parse_rate("0.001").unwrap(), 0.001);
        assert_eq!(parse_rate("1G").unwrap(), 1e9);
        for beyond in ["1e99", "1.1G", "2000000000"] {
            let e = parse_rate(beyond).unwrap_err();
            assert!(e.reason.contains("at most 1G"), "{beyond}: {e}");
        }
        // Long input is quoted cut short.
        let long = "9".repeat(500) + "x";
        assert!(parse_rate(&long).unwrap_err().to_string().len() < 200);
        assert!(parse_rate("-5k").is_err());
        for endless in ["inf", "-inf", "NaN", "infinity", "1e400"] {
            let e = parse_rate(endless).unwrap_err();
            assert!(
                e.reason.contains("a number of requests per second"),
                "{endless}: {e}"
            );
        }
        assert_eq!(parse_count("100M").unwrap(), 100_000_000);
        assert_eq!(parse_count("200k").unwrap(), 200_000);
        assert_eq!(parse_count("1e6").unwrap(), 1_000_000);
        assert!(parse_count("1.5").is_err());
    }

    /// Counts went through a float: 2^64 was read as 2^64 - 1, and large counts were
    /// rounded to the nearest float.
    #[test]
    fn counts_are_exact_or_refused() {
        assert_eq!(
            parse_count("9007199254740993").unwrap(),
            9_007_199_254_740_993
        );
        assert_eq!(parse_count("18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(parse_count(" 42 ").unwrap(), 42);
        for too_large in [
            "18446744073709551616",
            "18446744073709551617",
            "1e20",
            "20000000000G",
        ] {
            let e = parse_count(too_large).unwrap_err();
            assert!(e.reason.contains("too large"), "{too_large}: {e}");
        }
        assert!(parse_count("-1").is_err());
        assert!(parse_count("inf").is_err());
        assert!(parse_count("NaN").is_err());
    }

    #[test]
    fn byte_sizes_use_binary_multiples_like_the_jvm() {
        assert_eq!(parse_heap("2G").unwrap().bytes, 2 << 30);
        assert_eq!(parse_heap("512m").unwrap().bytes, 512 << 20);
        assert_eq!(parse_heap("1536M").unwrap().to_jvm(), "1536M");
        assert_eq!(parse_heap("4096m").unwrap().to_jvm(), "4G");
        assert_eq!(parse_heap("1024").unwrap().to_jvm(), "1K");
        assert_eq!(parse_heap(" 3gib ").unwrap().bytes, 3 << 30);
    }

    #[test]
    fn bad_byte_sizes_say_what_is_accepted() {
        let e = parse_heap("2.5G").unwrap_err();
        assert!(e.reason.contains("unit must be K, M, G or T"), "{e}");
        let e = parse_heap("G").unwrap_err();
        assert!(
            e.to_string().starts_with("heap size 'G' is not valid"),
            "{e}"
        );
        assert!(parse_heap("99999999999T").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("soon").unwrap_err().reason.contains("30s"));
    }

    #[test]
    fn display_is_readable() {
        assert_eq!(ByteSize::mib(1536).to_string(), "1.5 GiB");
        assert_eq!(ByteSize::mib(512).to_string(), "512 MiB");
    }
}
