//! The range parsers on their own, and the walk over every numeric flag of the command line:
//! each states its range in its help, and its parser keeps that range.

use std::ffi::OsStr;

use clap::CommandFactory;

use super::*;

#[test]
fn each_kind_keeps_its_bounds() {
    let connections = count::<usize>("1", "1k");
    assert_eq!(connections("1"), Ok(1));
    assert_eq!(connections("1k"), Ok(1000));
    assert_eq!(
        connections("0"),
        Err("out of range: give 1 to 1k".to_string())
    );
    assert!(connections("1001").is_err());
    assert!(connections("-1").is_err());
    // A count that fits the range but not the type is refused, not wrapped.
    let small = count::<u8>("0", "1k");
    assert!(small("300").is_err());

    let linger = duration("0s", "24h");
    assert_eq!(linger("24h"), Ok(Duration::from_secs(86_400)));
    assert!(linger("25h").unwrap_err().contains("0s to 24h"));

    let ratio = fraction("0.1%", "50%");
    assert_eq!(ratio("2%"), Ok(0.02));
    assert_eq!(ratio("0.02"), Ok(0.02));
    assert!(ratio("0%").is_err());
    assert!(ratio("51%").is_err());
    assert!(ratio("NaN").is_err());
    assert!(ratio("inf%").is_err());

    let load = rate("0.001", "1G");
    assert_eq!(load("20k"), Ok(20_000.0));
    assert!(load("2G").is_err());

    let heap = size("256M", "64G");
    assert_eq!(heap("2G").unwrap().bytes, 2 << 30);
    assert!(heap("128M").is_err());

    let cpu = quantity("1m", "1k");
    assert_eq!(cpu("1500m").as_deref(), Ok("1500m"));
    assert!(cpu("0.5m").is_err());
    assert!(cpu("512MB").is_err());
    assert!(cpu("").is_err());
    assert!(cpu("two").is_err());
    let memory = quantity("1Mi", "1Ti");
    for ok in ["512Mi", "4Gi", "1G", "1.5Gi"] {
        assert_eq!(memory(ok).as_deref(), Ok(ok));
    }
    for bad in ["", "two", "2 cores", "-1", "512MB", "0", ".", "1..5Gi"] {
        assert!(memory(bad).is_err(), "{bad}");
    }
}

/// The value names of the flags that take one number.
const NUMERIC: [&str; 12] = [
    "N", "DURATION", "PERCENT", "FRACTION", "RATE", "SIZE", "BYTES", "QUANTITY", "K", "D", "COUNT",
    "NODE",
];

/// The stated range of a help text: the two bounds of its `[range: LOW to HIGH]`, the
/// second ending at `]` or at a `;` that adds a note.
fn stated_range(help: &str) -> Option<(String, String)> {
    let start = help.find("[range: ")? + "[range: ".len();
    let rest = &help[start..];
    let end = rest.find(']')?;
    let inner = rest[..end].split(';').next()?;
    let (low, high) = inner.split_once(" to ")?;
    Some((low.trim().to_string(), high.trim().to_string()))
}

/// A value just outside a bound: for the low bound one below it (a whole number) or half of it;
/// for the high bound one above it or twice it. The unit is kept.
fn beyond(bound: &str, above: bool) -> String {
    let split = bound
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(bound.len());
    let (number, unit) = bound.split_at(split);
    let beyond = if let Ok(whole) = number.parse::<u128>() {
        if above {
            (whole + 1).to_string()
        } else if whole == 0 {
            "-1".to_string()
        } else {
            (whole - 1).to_string()
        }
    } else {
        let value: f64 = number.parse().expect("a bound is a number");
        (if above { value * 2.0 } else { value / 2.0 }).to_string()
    };
    // One above a bound such as 1k is 2k: the unit scales the step too, so the result lies
    // outside whatever the unit.
    format!("{beyond}{unit}")
}

fn walk(command: &clap::Command, path: &str, checked: &mut usize) {
    for arg in command.get_arguments() {
        let Some(names) = arg.get_value_names() else {
            continue;
        };
        if names.len() != 1 || !NUMERIC.contains(&names[0].as_str()) {
            continue;
        }
        let flag = format!("{path} --{}", arg.get_long().unwrap_or("?"));
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        let (low, high) = stated_range(&help)
            .unwrap_or_else(|| panic!("{flag}: its help states no [range: LOW to HIGH]: {help}"));
        // The flag's parser alone, on a command of its own (the flag's links to others,
        // such as `requires`, have no part in its range).
        let alone = clap::Command::new("alone").no_binary_name(true).arg(
            clap::Arg::new("value")
                .long("value")
                .value_parser(arg.get_value_parser().clone()),
        );
        let parse = |text: &OsStr| {
            let mut given = std::ffi::OsString::from("--value=");
            given.push(text);
            alone.clone().try_get_matches_from([given])
        };
        for inside in [&low, &high] {
            assert!(
                parse(OsStr::new(inside)).is_ok(),
                "{flag}: its bound {inside} is refused"
            );
        }
        for outside in [beyond(&low, false), beyond(&high, true)] {
            assert!(
                parse(OsStr::new(&outside)).is_err(),
                "{flag}: {outside} lies outside its range {low} to {high} but is taken"
            );
        }
        for default in arg.get_default_values() {
            assert!(
                parse(default).is_ok(),
                "{flag}: its default {default:?} lies outside its range"
            );
        }
        *checked += 1;
    }
    for sub in command.get_subcommands() {
        walk(sub, &format!("{path} {}", sub.get_name()), checked);
    }
}

/// Every flag that takes a number says its range in `--help`, and its parser takes both
/// bounds and refuses a value just beyond each.
#[test]
fn every_numeric_flag_states_the_range_it_keeps() {
    let mut checked = 0;
    walk(&crate::cli::Cli::command(), "headroom", &mut checked);
    // The walk itself is checked: it found the flags (over a hundred, counting each
    // subcommand's own).
    assert!(checked > 100, "only {checked} numeric flags found");
}

#[test]
fn a_value_beyond_a_bound_is_outside_it() {
    assert_eq!(beyond("1", false), "0");
    assert_eq!(beyond("0s", false), "-1s");
    assert_eq!(beyond("1k", true), "2k");
    assert_eq!(beyond("0.1%", false), "0.05%");
    assert_eq!(beyond("99.9%", true), "199.8%");
    assert_eq!(beyond("18446744073709551615", true), "18446744073709551616");
    assert_eq!(
        stated_range("Seconds. [range: 1s to 24h; at most --interval] [default: 1s]"),
        Some(("1s".to_string(), "24h".to_string()))
    );
}
