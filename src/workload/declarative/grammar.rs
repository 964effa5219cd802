//! Reading generators as a workload file writes them: `uniform(1..1M)`, `list(1..5, text(8))`,
//! `udt(name = text(5), age = uniform(18..99))`, `concat('user-', key)`, ... A generator is a
//! name, optionally with arguments in parentheses; arguments are numbers, ranges, durations,
//! quoted text or generators in turn. Hand-written: the grammar is a dozen functions with
//! nested arguments, too small for a parser crate.

use std::fmt;
use std::net::IpAddr;
use std::path::Path;

use rand_distr::Zipf;

use super::values::{ArithOp, Generator, Kind};
use super::vector_file::VectorFile;
use crate::units;

/// Why a generator's text cannot be read.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorError(pub String);

impl fmt::Display for GeneratorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const FORMS: &str = "sequence(N), uniform(A..B), normal(A..B), zipfian(A..B, 0.99), text(A..B), uuid, timeuuid, timestamp, timestamp(-60s), timestamp(2025-01-01, 1s), decimal(GEN, SCALE), inet, inet(10.0.0.0/8), duration(1s..1h), list(COUNT, GEN), set(COUNT, GEN), map(COUNT, GEN, GEN), tuple(GEN, ...), udt(FIELD = GEN, ...), vector(GEN), vector_file('FILE'), vector_file('FILE', INDEX), default, row, hash(X), prefix(X, N), concat(X, ...), add/mul/div/mod(X, N), a number or 'text'";

/// Reads a generator; `names` are the named generators, which a bare name refers to (before
/// any generator of the same name).
pub fn parse(text: &str, names: &[String]) -> Result<Generator, GeneratorError> {
    Parser { names, base: None }.generator(text)
}

/// [`parse`] for a workload file in the folder `base`: the files its generators name
/// (`vector_file('q.fvecs')`) are relative to it.
pub fn parse_in(
    text: &str,
    names: &[String],
    base: Option<&Path>,
) -> Result<Generator, GeneratorError> {
    Parser { names, base }.generator(text)
}

struct Parser<'n> {
    names: &'n [String],
    /// The workload file's folder, which relative paths start from (else the current one).
    base: Option<&'n Path>,
}

fn err<T>(text: &str, why: impl fmt::Display) -> Result<T, GeneratorError> {
    Err(GeneratorError(format!("'{text}': {why}")))
}

impl Parser<'_> {
    fn generator(&self, text: &str) -> Result<Generator, GeneratorError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(GeneratorError("an empty generator".into()));
        }
        if let Some(i) = self.names.iter().position(|n| n == text) {
            return Ok(Generator::Named(i));
        }
        if text.starts_with('\'') {
            return literal(text).map(Generator::Literal);
        }
        if text.starts_with(|c: char| c.is_ascii_digit() || c == '-') && !text.contains('(') {
            return Ok(Generator::Const(number(text, text)?));
        }
        let (name, args) = call(text)?;
        let name_lc = name.to_ascii_lowercase();
        let parts: Vec<&str> = match args {
            Some(a) => split_top(text, a)?,
            None => Vec::new(),
        };
        let arity = |min: usize, max: usize| -> Result<(), GeneratorError> {
            if parts.len() < min {
                err(text, format!("{name} takes at least {min} argument(s)"))
            } else if parts.len() > max {
                err(text, "too many arguments")
            } else {
                Ok(())
            }
        };
        let positive = |p: &str| -> Result<f64, GeneratorError> {
            p.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .map_or_else(|| err(text, format!("'{p}' is not a positive number")), Ok)
        };
        let generator = match (name_lc.as_str(), args) {
            ("uniform", Some(_)) if is_real_range(parts[0]) => {
                arity(1, 1)?;
                let (min, max) = real_range(text, parts[0])?;
                Generator::UniformReal { min, max }
            }
            ("sequence" | "uniform" | "normal" | "zipfian", Some(_)) => {
                let two = matches!(name_lc.as_str(), "normal" | "zipfian");
                arity(1, if two { 2 } else { 1 })?;
                let (min, max) = int_range(text, parts[0])?;
                match name_lc.as_str() {
                    "sequence" => Generator::Sequence { min, max },
                    "uniform" => Generator::Uniform { min, max },
                    "normal" => Generator::Normal {
                        min,
                        max,
                        sigma: match parts.get(1) {
                            Some(p) => positive(p)?,
                            None => span_of(min, max) / 6.0,
                        },
                    },
                    _ => {
                        let theta = match parts.get(1) {
                            Some(p) => positive(p)?,
                            None => 0.99,
                        };
                        let zipf = Zipf::new(span_of(min, max), theta)
                            .map_err(|e| GeneratorError(format!("'{text}': {e}")))?;
                        Generator::Zipfian {
                            min,
                            max,
                            theta,
                            zipf,
                        }
                    }
                }
            }
            ("text", Some(_)) => {
                arity(1, 1)?;
                let (min, max) = exact_or_range(text, parts[0])?;
                if min < 0 || max > 1 << 20 {
                    return err(text, "text lengths go from 0 to 1M characters");
                }
                Generator::Text {
                    min: min as usize,
                    max: max as usize,
                }
            }
            ("uuid", None) => Generator::Uuid,
            ("timeuuid", None) => Generator::Timeuuid,
            ("timestamp", None) => Generator::Timestamp { offset_ms: 0 },
            ("timestamp", Some(_)) if parts.len() == 1 => Generator::Timestamp {
                offset_ms: signed_millis(text, parts[0])?,
            },
            ("timestamp", Some(_)) => {
                arity(2, 2)?;
                let start_ms = instant(parts[0]).map_or_else(
                    || {
                        err(
                            text,
                            format!(
                                "'{}' is not a moment: write 2025-01-01, 2025-01-01T12:00:00 (UTC) or milliseconds since 1970",
                                parts[0]
                            ),
                        )
                    },
                    Ok,
                )?;
                Generator::Timeline {
                    start_ms,
                    step_ms: signed_millis(text, parts[1])?,
                }
            }
            ("decimal", Some(_)) => {
                arity(2, 2)?;
                let scale = parts[1]
                    .parse::<u32>()
                    .ok()
                    .filter(|s| *s <= 18)
                    .map_or_else(
                        || {
                            err(
                                text,
                                format!(
                                    "the scale '{}' is not a whole number from 0 to 18",
                                    parts[1]
                                ),
                            )
                        },
                        Ok,
                    )?;
                Generator::Decimal {
                    unscaled: Box::new(self.generator(parts[0])?),
                    scale,
                }
            }
            ("inet", None) => Generator::Inet {
                network: IpAddr::from([0, 0, 0, 0]),
                prefix: 0,
            },
            ("inet", Some(_)) => {
                arity(1, 1)?;
                let (address, prefix) = parts[0].split_once('/').unwrap_or((parts[0], ""));
                let network: IpAddr = address.trim().parse().map_err(|_| {
                    GeneratorError(format!(
                        "'{text}': '{address}' is not an address; write a network such as 10.0.0.0/8 or fd00::/64"
                    ))
                })?;
                let bits = if network.is_ipv4() { 32 } else { 128 };
                let prefix = match prefix.trim() {
                    "" => bits,
                    p => p.parse::<u8>().ok().filter(|p| *p <= bits).map_or_else(
                        || err(text, format!("the prefix length '{p}' is not 0 to {bits}")),
                        Ok,
                    )?,
                };
                Generator::Inet { network, prefix }
            }
            ("duration", Some(_)) => {
                arity(1, 1)?;
                let (a, b) = parts[0].split_once("..").unwrap_or((parts[0], parts[0]));
                let (min_ns, max_ns) = (nanos(text, a)?, nanos(text, b)?);
                if min_ns > max_ns {
                    return err(text, "the range is empty (its start is above its end)");
                }
                Generator::Duration { min_ns, max_ns }
            }
            ("list" | "set", _) => {
                arity(0, 2)?;
                let count = Box::new(self.count(text, parts.first().copied())?);
                let element = Box::new(self.element(parts.get(1).copied())?);
                if name_lc == "list" {
                    Generator::List { count, element }
                } else {
                    Generator::Set { count, element }
                }
            }
            ("map", _) => {
                if parts.len() == 2 {
                    return err(
                        text,
                        "map takes a count, or a count, a key generator and a value generator",
                    );
                }
                arity(0, 3)?;
                Generator::Map {
                    count: Box::new(self.count(text, parts.first().copied())?),
                    key: Box::new(self.element(parts.get(1).copied())?),
                    value: Box::new(self.element(parts.get(2).copied())?),
                }
            }
            ("tuple", _) => Generator::Tuple(
                parts
                    .iter()
                    .map(|p| self.generator(p))
                    .collect::<Result<_, _>>()?,
            ),
            ("udt", _) => {
                let mut fields: Vec<(String, Generator)> = Vec::new();
                for p in &parts {
                    // `=`, not `:`: a colon and a space would start a YAML mapping.
                    let Some((field, g)) = p.split_once('=') else {
                        return err(text, format!("'{p}' is not FIELD = GENERATOR"));
                    };
                    let field = field.trim().to_string();
                    if fields.iter().any(|(f, _)| *f == field) {
                        return err(text, format!("the field '{field}' is given twice"));
                    }
                    fields.push((field, self.generator(g)?));
                }
                Generator::Udt(fields)
            }
            ("vector", _) => {
                arity(0, 1)?;
                Generator::Vector(Box::new(self.element(parts.first().copied())?))
            }
            ("vector_file", Some(_)) => {
                arity(1, 2)?;
                if !parts[0].starts_with('\'') {
                    return err(
                        text,
                        "the file is quoted text: vector_file('queries.fvecs')",
                    );
                }
                let written = literal(parts[0])?;
                let file = VectorFile::open(&written, self.base)
                    .map_err(|e| GeneratorError(format!("'{text}': {e}")))?;
                let index = parts
                    .get(1)
                    .map(|p| self.generator(p).map(Box::new))
                    .transpose()?;
                Generator::VectorFile { file, index }
            }
            ("default", None) => Generator::Default,
            ("row", None) => Generator::Row,
            ("hash", Some(_)) => {
                arity(1, 2)?;
                Generator::Hash {
                    of: Box::new(self.generator(parts[0])?),
                    range: parts.get(1).map(|r| int_range(text, r)).transpose()?,
                }
            }
            ("prefix", Some(_)) => {
                arity(2, 2)?;
                let chars = units::parse_count(parts[1]).map_err(|_| {
                    GeneratorError(format!(
                        "'{text}': the length '{}' is not a whole number",
                        parts[1]
                    ))
                })?;
                Generator::Prefix {
                    of: Box::new(self.generator(parts[0])?),
                    chars: chars as usize,
                }
            }
            ("concat", Some(_)) => {
                arity(1, usize::MAX)?;
                Generator::Concat(
                    parts
                        .iter()
                        .map(|p| self.generator(p))
                        .collect::<Result<_, _>>()?,
                )
            }
            ("add" | "mul" | "div" | "mod", Some(_)) => {
                arity(2, 2)?;
                let op = match name_lc.as_str() {
                    "add" => ArithOp::Add,
                    "mul" => ArithOp::Mul,
                    "div" => ArithOp::Div,
                    _ => ArithOp::Mod,
                };
                let by = number(text, parts[1])?;
                if by == 0 && matches!(op, ArithOp::Div | ArithOp::Mod) {
                    return err(text, "cannot divide by 0");
                }
                Generator::Arith {
                    op,
                    of: Box::new(self.generator(parts[0])?),
                    by,
                }
            }
            _ => {
                return Err(GeneratorError(format!(
                    "'{text}' is not a generator; the generators are {FORMS}"
                )))
            }
        };
        Ok(generator)
    }

    /// A collection's element generator: `default` when left out.
    fn element(&self, text: Option<&str>) -> Result<Generator, GeneratorError> {
        match text {
            None => Ok(Generator::Default),
            Some(t) => self.generator(t),
        }
    }

    /// A count: `N` exactly, `A..B` uniformly, or an integer generator; 1 to 5 when left
    /// out.
    pub fn count(&self, whole: &str, text: Option<&str>) -> Result<Generator, GeneratorError> {
        let Some(text) = text.map(str::trim) else {
            return Ok(Generator::Uniform { min: 1, max: 5 });
        };
        if text.starts_with(|c: char| c.is_ascii_digit()) {
            let (min, max) = exact_or_range(whole, text)?;
            if min < 0 {
                return err(whole, "a count is 0 or more");
            }
            return Ok(if min == max {
                Generator::Const(min)
            } else {
                Generator::Uniform { min, max }
            });
        }
        let g = self.generator(text)?;
        match g.kind(&[]) {
            Some(Kind::Int) | None if !matches!(g, Generator::Default) => Ok(g),
            _ => err(
                whole,
                format!("the count '{text}' is not a number, a range or an integer generator"),
            ),
        }
    }
}

/// A count of rows or elements as a file writes it outside a generator: `5`, `1..20`,
/// `zipfian(1..100)`.
pub fn count(text: &str, names: &[String]) -> Result<Generator, GeneratorError> {
    Parser { names, base: None }.count(text, Some(text))
}

/// `name(args)` or `name`: the name and the text between the outer parentheses.
fn call(text: &str) -> Result<(&str, Option<&str>), GeneratorError> {
    match text.split_once('(') {
        Some((name, rest)) => {
            let args = rest.strip_suffix(')').ok_or_else(|| {
                GeneratorError(format!("'{text}': a generator's arguments end with ')'"))
            })?;
            Ok((name.trim(), Some(args.trim())))
        }
        None => Ok((text, None)),
    }
}

/// Splits arguments at the commas outside parentheses and quotes.
fn split_top<'a>(whole: &str, args: &'a str) -> Result<Vec<&'a str>, GeneratorError> {
    let mut parts = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in args.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth -= 1;
                if depth < 0 {
                    return err(whole, "a ')' closes no '('");
                }
            }
            ',' if !quoted && depth == 0 => {
                parts.push(args[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return err(whole, "a quote is not closed");
    }
    if depth != 0 {
        return err(whole, "a '(' is not closed");
    }
    let last = args[start..].trim();
    if !(parts.is_empty() && last.is_empty()) {
        parts.push(last);
    }
    if parts.iter().any(|p| p.is_empty()) {
        return err(whole, "an argument is empty");
    }
    Ok(parts)
}

/// `'text'`, quotes doubled inside.
fn literal(text: &str) -> Result<String, GeneratorError> {
    let inner = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .filter(|_| text.len() >= 2)
        .ok_or_else(|| GeneratorError(format!("'{text}': text ends with a quote")))?;
    if inner.replace("''", "").contains('\'') {
        return err(text, "a quote inside text is written twice ('')");
    }
    Ok(inner.replace("''", "'"))
}

/// How many values `min..=max` holds, as a float: the whole i64 range has one more than an
/// i64 can count.
fn span_of(min: i64, max: i64) -> f64 {
    max.abs_diff(min) as f64 + 1.0
}

/// An integer, with an optional sign and SI suffix: `-5`, `1M`.
fn number(whole: &str, text: &str) -> Result<i64, GeneratorError> {
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let value = units::parse_count(t)
        .map_err(|e| GeneratorError(format!("'{whole}': '{t}' is not a number: {e}")))?;
    let value = i64::try_from(value)
        .map_err(|_| GeneratorError(format!("'{whole}': '{t}' is too large")))?;
    Ok(if negative { -value } else { value })
}

/// `A..B` (both included) or `N` (0 to N-1), with SI suffixes: `1..1M`, `100k`.
fn int_range(whole: &str, text: &str) -> Result<(i64, i64), GeneratorError> {
    let (min, max) = match text.split_once("..") {
        Some((a, b)) => (number(whole, a)?, number(whole, b)?),
        None => {
            let n = number(whole, text)?;
            if n < 1 {
                return err(whole, "the count must be at least 1");
            }
            (0, n - 1)
        }
    };
    if min > max {
        return err(
            whole,
            format!("the range {min}..{max} is empty (its start is above its end)"),
        );
    }
    Ok((min, max))
}

/// `N` (exactly N) or `A..B`: lengths and counts.
fn exact_or_range(whole: &str, text: &str) -> Result<(i64, i64), GeneratorError> {
    if text.contains("..") {
        int_range(whole, text)
    } else {
        int_range(whole, &format!("{text}..{text}"))
    }
}

fn is_real_range(text: &str) -> bool {
    text.split_once("..")
        .is_some_and(|(a, b)| a.contains('.') || b.contains('.'))
}

/// `0.0..1.5`: a range of real numbers.
fn real_range(whole: &str, text: &str) -> Result<(f64, f64), GeneratorError> {
    let (a, b) = text.split_once("..").unwrap_or((text, text));
    let real = |t: &str| -> Result<f64, GeneratorError> {
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map_or_else(|| err(whole, format!("'{t}' is not a number")), Ok)
    };
    let (min, max) = (real(a)?, real(b)?);
    if min > max {
        return err(whole, "the range is empty (its start is above its end)");
    }
    Ok((min, max))
}

/// A signed duration in milliseconds: `-60s`, `+1h`, `500ms`.
fn signed_millis(whole: &str, text: &str) -> Result<i64, GeneratorError> {
    let (sign, magnitude) = match text.trim().strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.trim().strip_prefix('+').unwrap_or(text.trim())),
    };
    let offset = units::parse_duration(magnitude).map_err(|e| {
        GeneratorError(format!(
            "'{whole}': the offset is a duration such as -60s: {e}"
        ))
    })?;
    let ms = i64::try_from(offset.as_millis()).map_err(|_| {
        GeneratorError(format!(
            "'{whole}': the offset is too large for a timestamp (milliseconds since 1970 in 64 bits)"
        ))
    })?;
    Ok(sign * ms)
}

/// A duration in nanoseconds: `1s`, `250ms`, `0s`.
fn nanos(whole: &str, text: &str) -> Result<i64, GeneratorError> {
    let d = units::parse_duration(text.trim())
        .map_err(|e| GeneratorError(format!("'{whole}': write durations such as 1s..1h: {e}")))?;
    i64::try_from(d.as_nanos()).map_err(|_| {
        GeneratorError(format!(
            "'{whole}': '{text}' is too long (at most 292 years)"
        ))
    })
}

/// A moment in UTC: `2025-01-01`, `2025-01-01T12:30:00` (or with a space, and a final `Z`),
/// or milliseconds since 1970.
fn instant(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Ok(ms) = text.parse::<i64>() {
        return Some(ms);
    }
    let text = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = match text.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let mut ymd = date.splitn(3, '-');
    let year: i64 = ymd.next()?.parse().ok()?;
    let month: u32 = ymd.next()?.parse().ok()?;
    let day: u32 = ymd.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut seconds = 0i64;
    if let Some(t) = time {
        let mut hms = t.split(':');
        let h: i64 = hms.next()?.parse().ok()?;
        let m: i64 = hms.next()?.parse().ok()?;
        let s: i64 = hms.next().map_or(Some(0), |s| s.parse().ok())?;
        if hms.next().is_some() || h > 23 || m > 59 || s > 59 {
            return None;
        }
        seconds = h * 3600 + m * 60 + s;
    }
    Some((days_from_civil(year, month, day) * 86_400 + seconds) * 1000)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (eras of 400 years,
/// years counted from March so that the leap day comes last).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let m = i64::from(month);
    let day_of_year = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::common::generators::{request_rng, TextPool};
    use crate::workload::declarative::values::{Ctx, Drawn};

    fn p(text: &str) -> Generator {
        parse(text, &["key".to_string()]).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn draw_one<'p>(g: &Generator, seq: u64, pool: &'p TextPool) -> Drawn<'p> {
        let mut ctx = Ctx::new(seq, request_rng(9, seq), pool, &[]);
        g.draw(&mut ctx)
    }

    #[test]
    fn forms_are_read_with_inclusive_ranges_and_counts() {
        assert_eq!(
            p("uniform(1M)"),
            Generator::Uniform {
                min: 0,
                max: 999_999
            }
        );
        assert_eq!(
            p(" Sequence(1..10) "),
            Generator::Sequence { min: 1, max: 10 }
        );
        assert_eq!(
            p("normal(0..599)"),
            Generator::Normal {
                min: 0,
                max: 599,
                sigma: 100.0
            }
        );
        assert_eq!(p("text(100..200)"), Generator::Text { min: 100, max: 200 });
        assert_eq!(
            p("timestamp(-60s)"),
            Generator::Timestamp { offset_ms: -60_000 }
        );
        assert_eq!(p("timeuuid"), Generator::Timeuuid);
        assert_eq!(
            p("uniform(-1.0..1)"),
            Generator::UniformReal {
                min: -1.0,
                max: 1.0
            }
        );
        assert_eq!(p("42"), Generator::Const(42));
        assert_eq!(p("'it''s'"), Generator::Literal("it's".into()));
        assert_eq!(p("key"), Generator::Named(0));
    }

    #[test]
    fn collections_take_a_count_and_element_generators() {
        assert_eq!(
            p("list(3, text(5))"),
            Generator::List {
                count: Box::new(Generator::Const(3)),
                element: Box::new(Generator::Text { min: 5, max: 5 })
            }
        );
        assert_eq!(
            p("set(1..4)"),
            Generator::Set {
                count: Box::new(Generator::Uniform { min: 1, max: 4 }),
                element: Box::new(Generator::Default)
            }
        );
        assert_eq!(
            p("list"),
            Generator::List {
                count: Box::new(Generator::Uniform { min: 1, max: 5 }),
                element: Box::new(Generator::Default)
            }
        );
        let Generator::Map { count, key, value } =
            p("map(zipfian(1..10), text(3), list(2, uniform(5)))")
        else {
            panic!()
        };
        assert!(matches!(
            *count,
            Generator::Zipfian {
                min: 1,
                max: 10,
                ..
            }
        ));
        assert_eq!(*key, Generator::Text { min: 3, max: 3 });
        assert!(matches!(*value, Generator::List { .. }));
        assert_eq!(
            p("udt(name = concat('a', key), at = timestamp(2025-01-01T00:00:00, 1s))"),
            Generator::Udt(vec![
                (
                    "name".into(),
                    Generator::Concat(vec![Generator::Literal("a".into()), Generator::Named(0)])
                ),
                (
                    "at".into(),
                    Generator::Timeline {
                        start_ms: 1_735_689_600_000,
                        step_ms: 1000
                    }
                ),
            ])
        );
        assert_eq!(
            p("tuple(1, 'x')"),
            Generator::Tuple(vec![Generator::Const(1), Generator::Literal("x".into())])
        );
    }

    #[test]
    fn bad_forms_say_what_is_wrong() {
        let err = |t: &str| parse(t, &[]).unwrap_err().0;
        assert!(err("gauss(1..2)").contains("the generators are sequence(N)"));
        assert!(err("uniform(5..1)").contains("empty"));
        assert!(err("uniform(1..x)").contains("'x' is not a number"));
        assert!(err("uniform(1..2").contains("end with ')'"));
        assert!(err("zipfian(1..9, -1)").contains("positive"));
        assert!(err("uniform(1..9, 2)").contains("too many"));
        assert!(err("timestamp(soon)").contains("duration"));
        assert!(err("list(3, text(5)").contains("'(' is not closed"));
        assert!(err("list(text(5), 3)").contains("the count 'text(5)' is not a number"));
        assert!(err("map(3, text(5))").contains("a count, a key generator and a value"));
        assert!(err("udt(name text(5))").contains("is not FIELD = GENERATOR"));
        assert!(err("mod(uniform(9), 0)").contains("divide by 0"));
        assert!(err("concat('a)").contains("quote"));
        assert!(err("inet(10.0.0.0/33)").contains("prefix length"));
        assert!(err("timestamp(2025-13-01, 1s)").contains("is not a moment"));
        assert!(err("decimal(uniform(9), 40)").contains("scale"));
    }

    #[test]
    fn draws_stay_in_range_and_follow_their_shapes() {
        let pool = TextPool::new(1);
        let n = 50_000u64;
        let draw_all = |g: &Generator| -> Vec<i64> {
            (0..n)
                .map(|seq| match draw_one(g, seq, &pool) {
                    Drawn::Int(v) => v,
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        let seq = draw_all(&p("sequence(5..7)"));
        assert_eq!(&seq[..5], [5, 6, 7, 5, 6]);
        let uniform = draw_all(&p("uniform(1..10)"));
        assert!(uniform.iter().all(|v| (1..=10).contains(v)));
        assert!(uniform.contains(&1) && uniform.contains(&10));
        let normal = draw_all(&p("normal(0..599)"));
        // ±1σ around the middle holds about 68% of the draws.
        let within = normal.iter().filter(|v| (199..=400).contains(*v)).count() as f64 / n as f64;
        assert!((within - 0.683).abs() < 0.02, "{within}");
        let zipf = draw_all(&p("zipfian(100..1099)"));
        assert!(zipf.iter().all(|v| (100..=1099).contains(v)));
        let first = zipf.iter().filter(|v| **v == 100).count();
        let tenth = zipf.iter().filter(|v| **v == 109).count();
        // Weights 1/k^0.99: rank 1 about 9.8 times as likely as rank 10.
        let ratio = first as f64 / tenth as f64;
        assert!((8.0..12.0).contains(&ratio), "{ratio}");
        let hashed = draw_all(&p("hash(sequence(1M), 10..19)"));
        assert!(hashed.iter().all(|v| (10..=19).contains(v)));
        let tenths = hashed.iter().filter(|v| **v == 10).count() as f64 / n as f64;
        assert!((tenths - 0.1).abs() < 0.01, "{tenths}");
    }

    #[test]
    fn sets_and_maps_have_distinct_elements_and_their_counts() {
        let pool = TextPool::new(1);
        for seq in 0..200 {
            let Drawn::List(items) = draw_one(&p("set(2..6, uniform(1..1000))"), seq, &pool) else {
                panic!()
            };
            assert!((2..=6).contains(&items.len()), "{items:?}");
            let mut distinct = items.clone();
            distinct.dedup();
            assert_eq!(distinct.len(), items.len());
            let Drawn::Map(entries) = draw_one(&p("map(4, uniform(1..1000), text(3))"), seq, &pool)
            else {
                panic!()
            };
            assert_eq!(entries.len(), 4);
        }
        // An element with fewer values than the count: as many as there are.
        let Drawn::List(few) = draw_one(&p("set(10, uniform(1..3))"), 0, &pool) else {
            panic!()
        };
        assert_eq!(few.len(), 3);
    }

    #[test]
    fn derived_values_follow_what_they_derive_from() {
        let pool = TextPool::new(1);
        let named = [p("uniform(1..1000)")];
        let mut ctx = Ctx::new(7, request_rng(3, 7), &pool, &named);
        let Drawn::Int(key) = Generator::Named(0).draw(&mut ctx) else {
            panic!()
        };
        for (text, expected) in [
            (
                "concat('user-', key, '-', row)",
                Drawn::Text(format!("user-{key}-0").into()),
            ),
            ("prefix(concat(key, 'abcdef'), 4)", {
                let full = format!("{key}abcdef");
                Drawn::Text(full[..4].to_string().into())
            }),
            ("add(key, 5)", Drawn::Int(key + 5)),
            ("mod(key, 7)", Drawn::Int(key % 7)),
            ("div(mul(key, 10), 4)", Drawn::Int(key * 10 / 4)),
            ("timestamp(1000, 1s)", Drawn::Millis(1000 + 7 * 1000)),
            ("decimal(12345, 2)", Drawn::Decimal(12345, 2)),
        ] {
            let g = parse(text, &["key".to_string()]).unwrap();
            assert_eq!(g.draw(&mut ctx), expected, "{text}");
        }
        // A hash is a function of the value alone.
        let hash = p("hash(key)");
        let first = hash.draw(&mut ctx);
        let mut other = Ctx::new(99, request_rng(5, 99), &pool, &named);
        other.memo[0] = Some(Drawn::Int(key));
        assert_eq!(hash.draw(&mut other), first);
        assert_eq!(super::super::values::decimal_text(-5, 3), "-0.005");
    }

    #[test]
    fn moments_are_read_in_utc() {
        assert_eq!(instant("1970-01-01"), Some(0));
        assert_eq!(instant("2000-03-01T00:00:01Z"), Some(951_868_801_000));
        assert_eq!(instant("2024-02-29 12:00"), Some(1_709_208_000_000));
        assert_eq!(instant("2024-02-30x"), None);
    }

    /// Ranges as wide as i64 itself: their size does not fit an i64 (these panicked with
    /// an overflow).
    #[test]
    fn the_widest_ranges_parse_and_draw_in_range() {
        let pool = TextPool::new(1);
        let wide = "-9000000000000000000..9000000000000000000";
        let whole = "-9223372036854775807..9223372036854775807";
        for text in [
            format!("normal({wide})"),
            format!("zipfian({wide})"),
            format!("sequence({wide})"),
            format!("sequence({whole})"),
            format!("zipfian({whole}, 0.5)"),
            format!("uniform({whole})"),
        ] {
            let g = p(&text);
            let (min, max) = match g {
                Generator::Normal { min, max, .. }
                | Generator::Zipfian { min, max, .. }
                | Generator::Sequence { min, max }
                | Generator::Uniform { min, max } => (min, max),
                _ => unreachable!(),
            };
            for seq in [0, 1, u64::MAX / 2, u64::MAX] {
                let Drawn::Int(v) = draw_one(&g, seq, &pool) else {
                    panic!("{text}")
                };
                assert!((min..=max).contains(&v), "{text}, request {seq}: {v}");
            }
        }
        let Drawn::Int(first) = draw_one(&p(&format!("sequence({whole})")), 5, &pool) else {
            panic!()
        };
        assert_eq!(first, -9223372036854775807 + 5);
    }

    /// An offset of more milliseconds than an i64 holds was cut to a meaningless one.
    #[test]
    fn timestamp_offsets_must_fit_a_timestamp() {
        let e = parse("timestamp(-300000000000y)", &[]).unwrap_err().0;
        assert!(e.contains("the offset is too large"), "{e}");
        // The largest offset that fits: drawn, it stops at the last millisecond.
        let far = p("timestamp(9223372036854775s)");
        let Drawn::Millis(ms) = draw_one(&far, 0, &TextPool::new(1)) else {
            panic!()
        };
        assert_eq!(ms, i64::MAX);
    }
}
