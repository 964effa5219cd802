//! The domain of every number on the command line. A numeric flag's value parser is made
//! here from the two bounds its `--help` states as `[range: LOW to HIGH]`, written the same
//! way in both places (`ranges::count::<usize>("1", "1k")`): the value is read into its type
//! and refused outside the range, at the command line, before anything connects or is
//! written. A test walks every flag of every subcommand and checks that the range its help
//! states is the one its parser keeps.
//!
//! Checks between flags (a `--duration` that is a whole number of `--window`s) stay with the
//! settings in `commands/`; what lies here is each number on its own.

use std::time::Duration;

use crate::units;

/// The message of a value outside its range.
fn outside(low: &str, high: &str) -> String {
    format!("out of range: give {low} to {high}")
}

/// A bound as written in a flag's definition, read by the same parser as the value. A bound
/// that does not parse is a defect of the definition, found by the test that walks them.
fn bound<T>(text: &str, parse: impl Fn(&str) -> Result<T, String>) -> T {
    parse(text).unwrap_or_else(|e| panic!("the range bound '{text}' does not read: {e}"))
}

/// Values that `read` reads, from `low` to `high` (both read by it too): the one check every
/// parser below makes.
fn within<T: PartialOrd + 'static>(
    low: &'static str,
    high: &'static str,
    read: fn(&str) -> Result<T, String>,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |text| {
        let value = read(text)?;
        if value < bound(low, read) || value > bound(high, read) {
            return Err(outside(low, high));
        }
        Ok(value)
    }
}

/// Whole numbers from `low` to `high` (with k, M or G: `1000`, `20k`, `1e6`), read into `T`.
pub fn count<T>(
    low: &'static str,
    high: &'static str,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    let read = within(low, high, |t| {
        units::parse_count(t).map_err(|e| e.to_string())
    });
    move |text| T::try_from(read(text)?).map_err(|_| outside(low, high))
}

/// Durations from `low` to `high` (`500ms`, `30s`, `2m`, `1h30m`).
pub fn duration(
    low: &'static str,
    high: &'static str,
) -> impl Fn(&str) -> Result<Duration, String> + Clone + Send + Sync + 'static {
    within(low, high, |t| {
        units::parse_duration(t).map_err(|e| e.to_string())
    })
}

/// Rates per second from `low` to `high` (`2000`, `20k`, `1.5M`), within what a schedule
/// takes at all ([`units::parse_rate`]).
pub fn rate(
    low: &'static str,
    high: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    within(low, high, |t| {
        units::parse_rate(t).map_err(|e| e.to_string())
    })
}

/// Reads a fraction written as a percentage (`2%`) or as a number (`0.02`).
pub fn read_fraction(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match value {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err("write a percentage such as 2%, or a fraction such as 0.02".to_string()),
    }
}

/// Fractions from `low` to `high`, written as percentages (`2%`) or numbers (`0.02`).
pub fn fraction(
    low: &'static str,
    high: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    within(low, high, read_fraction)
}

/// Byte sizes from `low` to `high` in the JVM's notation (`512M`, `2G`; see
/// [`units::ByteSize`]).
pub fn size(
    low: &'static str,
    high: &'static str,
) -> impl Fn(&str) -> Result<units::ByteSize, String> + Clone + Send + Sync + 'static {
    within(low, high, |t| {
        units::ByteSize::parse("size", t).map_err(|e| e.to_string())
    })
}

/// Byte counts from `low` to `high`, read as [`size`] and kept as a number of bytes.
pub fn bytes(
    low: &'static str,
    high: &'static str,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    let size = size(low, high);
    move |text| size(text).map(|s| s.bytes)
}

/// Reads a Kubernetes quantity (digits, an optional fraction, an optional suffix: m, k, M, G,
/// T, Ki, Mi, Gi, Ti) into its value in base units (cores, bytes).
pub fn read_quantity(text: &str) -> Result<f64, String> {
    crate::fleet::kube::names::quantity(text).ok_or_else(|| {
        "not a Kubernetes quantity; write it like 2, 1500m, 512Mi or 4Gi".to_string()
    })
}

/// Kubernetes quantities from `low` to `high`, kept as written (the manifest takes them so).
pub fn quantity(
    low: &'static str,
    high: &'static str,
) -> impl Fn(&str) -> Result<String, String> + Clone + Send + Sync + 'static {
    let read = within(low, high, read_quantity);
    move |text| read(text).map(|_| text.to_string())
}

#[cfg(test)]
#[path = "ranges_tests.rs"]
mod tests;
