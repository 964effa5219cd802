//! How numbers read in everything headroom prints or draws: the terminal's tables, the
//! report's cells and chart labels. One place, so that a rate or a latency reads the same in
//! every table.
//!
//! The SLA's own text (`p99.9<100ms`) is not here: it is a grammar that must read back
//! exactly, and lives with its parser in `sla/spec.rs`.

/// `12345678` as `12 345 678`.
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}

/// A rate per second: whole numbers with thousands separated by spaces (`12 000`), a tenth
/// for small fractional rates.
pub fn format_rate(rate: f64) -> String {
    if !rate.is_finite() {
        "-".to_string()
    } else if rate >= 1e15 {
        // Beyond any real rate (`--rate 1e99`): grouping its digits would print u64's
        // ceiling, not the rate.
        format!("{rate:.3e}")
    } else if rate >= 100.0 || rate.fract() == 0.0 {
        group_thousands(rate.round() as u64)
    } else {
        format!("{rate:.1}")
    }
}

/// A value with its unit, to 3 significant digits below 100 and whole above: `16.4 ms`,
/// `5.00 ms`, `0.050%`.
pub fn format_value(value: f64, unit: &str) -> String {
    let number = if !value.is_finite() {
        "-".to_string()
    } else if value == 0.0 {
        "0".to_string()
    } else if value >= 100.0 {
        group_thousands(value.round() as u64)
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else if value >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    };
    match unit {
        "%" => format!("{number}%"),
        "" => number,
        unit => format!("{number} {unit}"),
    }
}

/// A number for labels: up to 3 significant digits below 100 without trailing zeros, whole
/// above, thousands separated by a space.
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return "-".to_string();
    }
    let magnitude = value.abs();
    if magnitude >= 100.0 || value == value.trunc() {
        let rounded = value.round();
        let grouped = group_thousands(rounded.abs() as u64);
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

/// A latency in milliseconds for a column of figures: three significant digits, at least
/// one decimal, no unit.
pub fn format_ms(ms: f64) -> String {
    if !ms.is_finite() {
        "-".to_string()
    } else if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 10.0 {
        format!("{ms:.1}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

/// A percentile's name: `p99.9`, `p99`.
pub fn format_percentile(p: f64) -> String {
    let text = format!("{p:.3}");
    format!("p{}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// A count or rate that may be far beyond what anyone types (an estimate of requests never
/// sent at `--rate 1e99`): whole up to a billion, in scientific notation above (`2.000e99`).
pub fn format_big(n: f64) -> String {
    if n < 1e9 {
        format!("{n:.0}")
    } else {
        format!("{n:.3e}")
    }
}

/// Money: `$1 728` from a thousand, `$1.73` from one, `$0.576` below.
pub fn format_money(value: f64) -> String {
    if value >= 1000.0 {
        format!("${}", format_rate(value))
    } else if value >= 1.0 {
        format!("${value:.2}")
    } else {
        format!("${value:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_readable() {
        assert_eq!(format_rate(12_000.0), "12 000");
        assert_eq!(format_rate(115_865.4), "115 865");
        assert_eq!(format_rate(999.0), "999");
        assert_eq!(format_rate(12.25), "12.2");
        assert_eq!(format_rate(5.0), "5");
        assert_eq!(format_rate(f64::NAN), "-");
        assert_eq!(format_rate(1e99), "1.000e99");
        assert_eq!(format_value(16.44, "ms"), "16.4 ms");
        assert_eq!(format_value(207.0, "ms"), "207 ms");
        assert_eq!(format_value(1_041_760.0, "ms"), "1 041 760 ms");
        assert_eq!(format_value(5.0, "ms"), "5.00 ms");
        assert_eq!(format_value(0.512, "ms"), "0.512 ms");
        assert_eq!(format_value(0.05, "%"), "0.050%");
        assert_eq!(format_value(0.0, "%"), "0%");
        assert_eq!(format_value(3.0, ""), "3.00");
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(123), "123");
        assert_eq!(group_thousands(1234), "1 234");
        assert_eq!(group_thousands(123_456_789), "123 456 789");
    }

    #[test]
    fn labels_drop_trailing_zeros() {
        assert_eq!(format_number(0.365823), "0.366");
        assert_eq!(format_number(21.381), "21.4");
        assert_eq!(format_number(2.445311), "2.45");
        assert_eq!(format_number(1_041_760.0), "1 041 760");
        assert_eq!(format_number(-1_500.0), "-1 500");
        assert_eq!(format_number(5.0), "5");
        assert_eq!(format_number(0.5), "0.5");
        assert_eq!(format_number(0.00123), "0.0012");
    }

    #[test]
    fn columns_percentiles_counts_and_money() {
        assert_eq!(format_ms(123.4), "123");
        assert_eq!(format_ms(12.34), "12.3");
        assert_eq!(format_ms(1.234), "1.23");
        assert_eq!(format_ms(0.0456), "0.046");
        assert_eq!(format_percentile(99.9), "p99.9");
        assert_eq!(format_percentile(99.0), "p99");
        assert_eq!(format_percentile(99.99), "p99.99");
        assert_eq!(format_big(12_345.0), "12345");
        assert_eq!(format_big(2e99), "2.000e99");
        assert_eq!(format_money(1728.4), "$1 728");
        assert_eq!(format_money(1.728), "$1.73");
        assert_eq!(format_money(0.5764), "$0.576");
    }
}
