//! Quantities typed by people on the command line: byte sizes and durations.
//!
//! Byte sizes follow the JVM's own reading of `-Xmx` values (`512m`, `2G`: binary
//! multiples, no fractions), because the heap flag is handed to a JVM and users know that
//! notation from `jvm.options`; a general-purpose size crate would read `2G` as 10⁹ bytes.

use std::fmt;
use std::time::Duration;

/// A value on the command line that could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{what} '{input}' is not valid: {reason}")]
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
        if self.bytes % Self::GIB == 0 {
            format!("{}G", self.bytes / Self::GIB)
        } else if self.bytes % Self::MIB == 0 {
            format!("{}M", self.bytes / Self::MIB)
        } else if self.bytes % 1024 == 0 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
