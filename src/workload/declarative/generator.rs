//! Bind-variable generators of headroom's workload format: `uniform(1M)`, `text(100..200)`,
//! `timeuuid`, ... Each draws one value per request from the request's own random stream (or
//! its sequence number), then converts it to the CQL type of the variable it is bound to.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::rngs::SmallRng;
use rand::Rng;
use rand_distr::{Distribution, Zipf};
use scylla::frame::response::result::{ColumnType, NativeType};
use scylla::value::{CqlTimestamp, CqlTimeuuid, CqlValue};
use uuid::{Builder, Uuid};

use super::super::distribution::standard_normal;
use super::super::generators::TextPool;
use crate::units;

/// A generator, as written in a workload file. Ranges (`min..=max`) include both ends.
#[derive(Debug, Clone, PartialEq)]
pub enum Generator {
    /// `sequence(N)` or `sequence(A..B)`: the request's sequence number, wrapped into the range.
    Sequence {
        /// First value.
        min: i64,
        /// Last value.
        max: i64,
    },
    /// `uniform(N)` or `uniform(A..B)`: every value of the range equally likely.
    Uniform {
        /// First value.
        min: i64,
        /// Last value.
        max: i64,
    },
    /// `normal(A..B[, SIGMA])`: normal around the middle, clamped to the range.
    Normal {
        /// First value.
        min: i64,
        /// Last value.
        max: i64,
        /// Standard deviation: a sixth of the range unless given.
        sigma: f64,
    },
    /// `zipfian(A..B[, THETA])`: rank k (from A on) drawn with weight 1/k^θ: A is the hottest
    /// value, A+1 the next, ...
    Zipfian {
        /// First (hottest) value.
        min: i64,
        /// Last value.
        max: i64,
        /// The exponent θ: 0.99 unless given.
        theta: f64,
        /// The sampler over ranks 1..=max-min+1.
        zipf: Zipf<f64>,
    },
    /// `text(N)` (exactly N characters) or `text(A..B)`: letters and digits, A to B
    /// characters long.
    Text {
        /// Shortest length.
        min: usize,
        /// Longest length.
        max: usize,
    },
    /// `uuid`: a random (version 4) UUID.
    Uuid,
    /// `timeuuid`: a version 1 UUID of the moment the request is built.
    Timeuuid,
    /// `timestamp` or `timestamp(-60s)`: the moment the request is built, shifted.
    Timestamp {
        /// The shift, in milliseconds.
        offset_ms: i64,
    },
}

/// One drawn value, before conversion to the variable's CQL type.
#[derive(Debug, Clone, PartialEq)]
pub enum Drawn<'a> {
    /// An integer (sequence, uniform, normal, zipfian).
    Int(i64),
    /// Text cut from the pool.
    Text(&'a str),
    /// A UUID, with whether it is time-based.
    Uuid(Uuid, bool),
    /// Milliseconds since the Unix epoch.
    Millis(i64),
}

/// Why a generator's text cannot be read.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorError(pub String);

impl fmt::Display for GeneratorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const FORMS: &str = "sequence(N), uniform(A..B), normal(A..B), zipfian(A..B, 0.99), text(A..B), uuid, timeuuid, timestamp or timestamp(-60s)";

impl Generator {
    /// Reads a generator: `uniform(1..1M)`; `N` alone means `0..N-1`; ranges include both ends.
    pub fn parse(text: &str) -> Result<Generator, GeneratorError> {
        let text = text.trim();
        let (name, args) = match text.split_once('(') {
            Some((name, rest)) => {
                let args = rest.strip_suffix(')').ok_or_else(|| {
                    GeneratorError(format!("'{text}': a generator's arguments end with ')'"))
                })?;
                (name.trim(), Some(args.trim()))
            }
            None => (text, None),
        };
        let name_lc = name.to_ascii_lowercase();
        let mut parts = args.map(|a| a.split(',').map(str::trim).collect::<Vec<_>>());
        let extra = |parts: &Option<Vec<&str>>, at: usize| -> Option<String> {
            parts
                .as_ref()
                .and_then(|p| p.get(at))
                .map(|s| s.to_string())
        };
        let generator = match (name_lc.as_str(), args) {
            ("sequence" | "uniform" | "normal" | "zipfian", Some(_)) => {
                let parts = parts.take().expect("arguments given");
                let (min, max) = int_range(text, parts[0])?;
                let param = |default: f64| -> Result<f64, GeneratorError> {
                    match parts.get(1) {
                        None => Ok(default),
                        Some(p) => p
                            .parse::<f64>()
                            .ok()
                            .filter(|v| v.is_finite() && *v > 0.0)
                            .ok_or_else(|| {
                                GeneratorError(format!("'{text}': '{p}' is not a positive number"))
                            }),
                    }
                };
                if parts.len() > 2
                    || (parts.len() > 1 && matches!(name_lc.as_str(), "sequence" | "uniform"))
                {
                    return Err(GeneratorError(format!("'{text}': too many arguments")));
                }
                match name_lc.as_str() {
                    "sequence" => Generator::Sequence { min, max },
                    "uniform" => Generator::Uniform { min, max },
                    "normal" => Generator::Normal {
                        min,
                        max,
                        sigma: param(span_of(min, max) / 6.0)?,
                    },
                    _ => {
                        let theta = param(0.99)?;
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
            ("text", Some(a)) => {
                // text(N) is exactly N characters; a range gives the shortest and longest.
                let (min, max) = match a.contains("..") {
                    true => int_range(text, a)?,
                    false => int_range(text, &format!("{a}..{a}"))?,
                };
                if min < 0 || max > 1 << 20 {
                    return Err(GeneratorError(format!(
                        "'{text}': text lengths go from 0 to 1M characters"
                    )));
                }
                Generator::Text {
                    min: min as usize,
                    max: max as usize,
                }
            }
            ("uuid", None) => Generator::Uuid,
            ("timeuuid", None) => Generator::Timeuuid,
            ("timestamp", None) => Generator::Timestamp { offset_ms: 0 },
            ("timestamp", Some(a)) => {
                let (sign, magnitude) = match a.strip_prefix('-') {
                    Some(rest) => (-1, rest),
                    None => (1, a.strip_prefix('+').unwrap_or(a)),
                };
                let offset = units::parse_duration(magnitude).map_err(|e| {
                    GeneratorError(format!(
                        "'{text}': the offset is a duration such as -60s: {e}"
                    ))
                })?;
                let offset_ms = i64::try_from(offset.as_millis()).map_err(|_| {
                    GeneratorError(format!(
                        "'{text}': the offset is too large for a timestamp (milliseconds since 1970 in 64 bits)"
                    ))
                })?;
                Generator::Timestamp {
                    offset_ms: sign * offset_ms,
                }
            }
            _ => {
                let _ = extra(&parts, 0);
                return Err(GeneratorError(format!(
                    "'{text}' is not a generator; the generators are {FORMS}"
                )));
            }
        };
        Ok(generator)
    }

    /// Draws request `seq`'s value.
    pub fn draw<'p>(&self, seq: u64, rng: &mut SmallRng, pool: &'p TextPool) -> Drawn<'p> {
        match self {
            Generator::Sequence { min, max } => {
                // 0 when the range is every i64.
                let span = max.abs_diff(*min).wrapping_add(1);
                let offset = if span == 0 { seq } else { seq % span };
                Drawn::Int(min.wrapping_add_unsigned(offset))
            }
            Generator::Uniform { min, max } => Drawn::Int(rng.random_range(*min..=*max)),
            Generator::Normal { min, max, sigma } => {
                let z = standard_normal(rng);
                let mean = (*min as f64 + *max as f64) / 2.0;
                Drawn::Int(((mean + z * sigma).round() as i64).clamp(*min, *max))
            }
            // Ranks from 1; the hottest value is `min`.
            Generator::Zipfian { min, max, zipf, .. } => {
                let rank = zipf.sample(rng) as i128;
                Drawn::Int((i128::from(*min) + rank - 1).min(i128::from(*max)) as i64)
            }
            Generator::Text { min, max } => Drawn::Text(pool.text(rng, *min, *max)),
            Generator::Uuid => {
                Drawn::Uuid(Builder::from_random_bytes(rng.random()).into_uuid(), false)
            }
            Generator::Timeuuid => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or(Duration::ZERO);
                // 100 ns ticks since the Gregorian calendar's start (1582-10-15).
                let ticks = now.as_nanos() as u64 / 100 + 0x01B2_1DD2_1381_4000;
                let node: [u8; 6] = rng.random();
                let uuid =
                    Builder::from_gregorian_timestamp(ticks, rng.random(), &node).into_uuid();
                Drawn::Uuid(uuid, true)
            }
            Generator::Timestamp { offset_ms } => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or(Duration::ZERO);
                Drawn::Millis((now.as_millis() as i64).saturating_add(*offset_ms))
            }
        }
    }

    /// Checks that this generator's values can be bound to a variable of type `typ`.
    pub fn check_binds_to(&self, typ: &ColumnType<'_>) -> bool {
        let probe = match self {
            Generator::Text { .. } => Drawn::Text("x"),
            Generator::Uuid => Drawn::Uuid(Uuid::nil(), false),
            Generator::Timeuuid => Drawn::Uuid(Uuid::nil(), true),
            Generator::Timestamp { .. } => Drawn::Millis(0),
            _ => Drawn::Int(0),
        };
        convert(probe, typ).is_some()
    }
}

/// How many values `min..=max` holds, as a float: the whole i64 range has one more than an
/// i64 can count.
fn span_of(min: i64, max: i64) -> f64 {
    max.abs_diff(min) as f64 + 1.0
}

/// `A..B` (both included) or `N` (0 to N-1), with SI suffixes: `1..1M`, `100k`.
fn int_range(whole: &str, text: &str) -> Result<(i64, i64), GeneratorError> {
    let number = |t: &str| -> Result<i64, GeneratorError> {
        let t = t.trim();
        let (negative, t) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let value = units::parse_count(t)
            .map_err(|e| GeneratorError(format!("'{whole}': '{t}' is not a number: {e}")))?;
        let value = i64::try_from(value)
            .map_err(|_| GeneratorError(format!("'{whole}': '{t}' is too large")))?;
        Ok(if negative { -value } else { value })
    };
    let (min, max) = match text.split_once("..") {
        Some((a, b)) => (number(a)?, number(b)?),
        None => {
            let n = number(text)?;
            if n < 1 {
                return Err(GeneratorError(format!(
                    "'{whole}': the count must be at least 1"
                )));
            }
            (0, n - 1)
        }
    };
    if min > max {
        return Err(GeneratorError(format!(
            "'{whole}': the range {min}..{max} is empty (its start is above its end)"
        )));
    }
    Ok((min, max))
}

/// Converts a drawn value to a variable of CQL type `typ`; `None` when that cannot be done.
pub fn convert(drawn: Drawn<'_>, typ: &ColumnType<'_>) -> Option<CqlValue> {
    let ColumnType::Native(native) = typ else {
        return None;
    };
    Some(match (drawn, native) {
        (Drawn::Int(v), NativeType::BigInt) => CqlValue::BigInt(v),
        (Drawn::Int(v), NativeType::Int) => CqlValue::Int(v as i32),
        (Drawn::Int(v), NativeType::SmallInt) => CqlValue::SmallInt(v as i16),
        (Drawn::Int(v), NativeType::TinyInt) => CqlValue::TinyInt(v as i8),
        (Drawn::Int(v), NativeType::Double) => CqlValue::Double(v as f64),
        (Drawn::Int(v), NativeType::Float) => CqlValue::Float(v as f32),
        (Drawn::Int(v), NativeType::Text) => CqlValue::Text(v.to_string()),
        (Drawn::Int(v), NativeType::Ascii) => CqlValue::Ascii(v.to_string()),
        (Drawn::Int(v), NativeType::Blob) => CqlValue::Blob(v.to_be_bytes().to_vec()),
        (Drawn::Int(v), NativeType::Timestamp) => CqlValue::Timestamp(CqlTimestamp(v)),
        (Drawn::Int(v), NativeType::Boolean) => CqlValue::Boolean(v % 2 != 0),
        (Drawn::Text(t), NativeType::Text) => CqlValue::Text(t.to_string()),
        (Drawn::Text(t), NativeType::Ascii) => CqlValue::Ascii(t.to_string()),
        (Drawn::Text(t), NativeType::Blob) => CqlValue::Blob(t.as_bytes().to_vec()),
        (Drawn::Uuid(u, _), NativeType::Uuid) => CqlValue::Uuid(u),
        (Drawn::Uuid(u, true), NativeType::Timeuuid) => CqlValue::Timeuuid(CqlTimeuuid::from(u)),
        (Drawn::Uuid(u, _), NativeType::Text) => CqlValue::Text(u.to_string()),
        (Drawn::Millis(ms), NativeType::Timestamp) => CqlValue::Timestamp(CqlTimestamp(ms)),
        (Drawn::Millis(ms), NativeType::BigInt) => CqlValue::BigInt(ms),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::generators::request_rng;

    #[test]
    fn forms_are_read_with_inclusive_ranges_and_counts() {
        assert_eq!(
            Generator::parse("uniform(1M)").unwrap(),
            Generator::Uniform {
                min: 0,
                max: 999_999
            }
        );
        assert_eq!(
            Generator::parse(" Sequence(1..10) ").unwrap(),
            Generator::Sequence { min: 1, max: 10 }
        );
        assert_eq!(
            Generator::parse("normal(0..599)").unwrap(),
            Generator::Normal {
                min: 0,
                max: 599,
                sigma: 100.0
            }
        );
        assert_eq!(
            Generator::parse("text(100..200)").unwrap(),
            Generator::Text { min: 100, max: 200 }
        );
        assert_eq!(
            Generator::parse("timestamp(-60s)").unwrap(),
            Generator::Timestamp { offset_ms: -60_000 }
        );
        assert_eq!(Generator::parse("timeuuid").unwrap(), Generator::Timeuuid);
    }

    #[test]
    fn bad_forms_say_what_is_wrong() {
        let err = |t: &str| Generator::parse(t).unwrap_err().0;
        assert!(err("gauss(1..2)").contains("the generators are sequence(N)"));
        assert!(err("uniform(5..1)").contains("empty"));
        assert!(err("uniform(1..x)").contains("'x' is not a number"));
        assert!(err("uniform(1..2").contains("end with ')'"));
        assert!(err("zipfian(1..9, -1)").contains("positive"));
        assert!(err("uniform(1..9, 2)").contains("too many"));
        assert!(err("timestamp(soon)").contains("duration"));
    }

    #[test]
    fn draws_stay_in_range_and_follow_their_shapes() {
        let pool = TextPool::new(1);
        let n = 50_000u64;
        let draw_all = |g: &Generator| -> Vec<i64> {
            (0..n)
                .map(|seq| match g.draw(seq, &mut request_rng(9, seq), &pool) {
                    Drawn::Int(v) => v,
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        let seq = draw_all(&Generator::parse("sequence(5..7)").unwrap());
        assert_eq!(&seq[..5], [5, 6, 7, 5, 6]);
        let uniform = draw_all(&Generator::parse("uniform(1..10)").unwrap());
        assert!(uniform.iter().all(|v| (1..=10).contains(v)));
        assert!(uniform.contains(&1) && uniform.contains(&10));
        let normal = draw_all(&Generator::parse("normal(0..599)").unwrap());
        // ±1σ around the middle holds about 68% of the draws.
        let within = normal.iter().filter(|v| (199..=400).contains(*v)).count() as f64 / n as f64;
        assert!((within - 0.683).abs() < 0.02, "{within}");
        let zipf = draw_all(&Generator::parse("zipfian(100..1099)").unwrap());
        assert!(zipf.iter().all(|v| (100..=1099).contains(v)));
        let first = zipf.iter().filter(|v| **v == 100).count();
        let tenth = zipf.iter().filter(|v| **v == 109).count();
        // Weights 1/k^0.99: rank 1 about 9.8 times as likely as rank 10.
        let ratio = first as f64 / tenth as f64;
        assert!((8.0..12.0).contains(&ratio), "{ratio}");
    }

    #[test]
    fn values_convert_to_the_variable_types_that_can_hold_them() {
        let text = ColumnType::Native(NativeType::Text);
        let int = ColumnType::Native(NativeType::Int);
        let timeuuid = ColumnType::Native(NativeType::Timeuuid);
        assert_eq!(
            convert(Drawn::Int(42), &text),
            Some(CqlValue::Text("42".into()))
        );
        assert_eq!(convert(Drawn::Int(42), &int), Some(CqlValue::Int(42)));
        assert_eq!(convert(Drawn::Text("a"), &int), None);
        assert!(
            !Generator::Uuid.check_binds_to(&timeuuid),
            "a random UUID is no timeuuid"
        );
        assert!(Generator::Timeuuid.check_binds_to(&timeuuid));
        let pool = TextPool::new(1);
        let Drawn::Uuid(u, true) = Generator::Timeuuid.draw(0, &mut request_rng(1, 0), &pool)
        else {
            panic!("not a timeuuid")
        };
        assert_eq!(u.get_version_num(), 1);
        let (secs, _) = u.get_timestamp().expect("a v1 UUID has a time").to_unix();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(now.abs_diff(secs) < 5, "{secs} vs {now}");
        let text = Generator::parse("text(3..5)").unwrap();
        let Drawn::Text(t) = text.draw(0, &mut request_rng(1, 0), &pool) else {
            panic!()
        };
        assert!((3..=5).contains(&t.len()));
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
            let g = Generator::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let (min, max) = match g {
                Generator::Normal { min, max, .. }
                | Generator::Zipfian { min, max, .. }
                | Generator::Sequence { min, max }
                | Generator::Uniform { min, max } => (min, max),
                _ => unreachable!(),
            };
            for seq in [0, 1, u64::MAX / 2, u64::MAX] {
                let Drawn::Int(v) = g.draw(seq, &mut request_rng(3, seq), &pool) else {
                    panic!("{text}")
                };
                assert!((min..=max).contains(&v), "{text}, request {seq}: {v}");
            }
        }
        let Drawn::Int(first) = Generator::parse(&format!("sequence({whole})"))
            .unwrap()
            .draw(5, &mut request_rng(3, 5), &pool)
        else {
            panic!()
        };
        assert_eq!(first, -9223372036854775807 + 5);
    }

    /// An offset of more milliseconds than an i64 holds was cut to a meaningless one.
    #[test]
    fn timestamp_offsets_must_fit_a_timestamp() {
        let e = Generator::parse("timestamp(-300000000000y)").unwrap_err().0;
        assert!(e.contains("the offset is too large"), "{e}");
        // The largest offset that fits: drawn, it stops at the last millisecond.
        let far = Generator::parse("timestamp(9223372036854775s)").unwrap();
        let Drawn::Millis(ms) = far.draw(0, &mut request_rng(1, 0), &TextPool::new(1)) else {
            panic!()
        };
        assert_eq!(ms, i64::MAX);
    }
}
