//! Bind-variable generators of headroom's workload format: `uniform(1M)`, `text(100..200)`,
//! `list(1..5, uuid)`, `concat('user-', key)`, ... (read by [`super::grammar`]). Each draws one
//! value per use from the request's own random stream, its sequence number, its row in a batch
//! or the named generators already drawn for it; [`super::bind`](mod@super::bind) converts the value to the CQL
//! type of the variable it is bound to.
//!
//! **Why one file of about 700 lines.** [`Generator`] has a variant per
//! generator of the format and [`Generator::draw`] an arm per variant, and the two are read
//! together; the stable hash of a drawn value, which `hash(...)` and sets use, is beside them.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::rngs::SmallRng;
use rand::Rng;
use rand_distr::{Distribution, Zipf};
use uuid::{Builder, Uuid};

use super::vector_file::VectorFile;
use crate::workload::common::generators::{clamped_normal, TextPool};
use crate::workload::common::hash::{splitmix_finalise, Fnv1a};

/// A generator, as read from a workload file. Ranges (`min..=max`) include both ends.
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
    /// `uniform(0.0..1.0)`: a real number, uniform in the range.
    UniformReal {
        /// Lowest value.
        min: f64,
        /// Highest value.
        max: f64,
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
    /// `42`: always that integer.
    Const(i64),
    /// `'text'`: always that text.
    Literal(String),
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
    /// `timestamp(2025-01-01, 1s)`: START + sequence number × STEP, the same in every run.
    Timeline {
        /// The moment of request 0, in milliseconds since 1970.
        start_ms: i64,
        /// Milliseconds between consecutive requests.
        step_ms: i64,
    },
    /// `decimal(GEN, SCALE)`: GEN's integer divided by 10^SCALE.
    Decimal {
        /// The integer (unscaled value).
        unscaled: Box<Generator>,
        /// Digits after the decimal point.
        scale: u32,
    },
    /// `inet` or `inet(10.0.0.0/8)`: a random address of the network.
    Inet {
        /// The network's address.
        network: IpAddr,
        /// Its prefix length: the bits of `network` every address keeps.
        prefix: u8,
    },
    /// `duration(1s..1h)`: a duration uniform in the range, in nanoseconds.
    Duration {
        /// Shortest, in nanoseconds.
        min_ns: i64,
        /// Longest, in nanoseconds.
        max_ns: i64,
    },
    /// `list(COUNT, ELEMENT)`: COUNT elements, each drawn from ELEMENT.
    List {
        /// How many elements (an integer generator).
        count: Box<Generator>,
        /// Each element's generator.
        element: Box<Generator>,
    },
    /// `set(COUNT, ELEMENT)`: COUNT distinct elements (fewer if ELEMENT has fewer values).
    Set {
        /// How many elements (an integer generator).
        count: Box<Generator>,
        /// Each element's generator.
        element: Box<Generator>,
    },
    /// `map(COUNT, KEY, VALUE)`: COUNT entries of distinct keys.
    Map {
        /// How many entries (an integer generator).
        count: Box<Generator>,
        /// Each key's generator.
        key: Box<Generator>,
        /// Each value's generator.
        value: Box<Generator>,
    },
    /// `tuple(A, B, ...)`: one generator per component; `tuple` alone: each component's
    /// default (an empty list here until bound).
    Tuple(Vec<Generator>),
    /// `udt(field = GEN, ...)`: named fields; the others take their type's default.
    Udt(Vec<(String, Generator)>),
    /// `vector(ELEMENT)`: as many elements as the vector type's dimension.
    Vector(Box<Generator>),
    /// `vector_file('FILE')` or `vector_file('FILE', INDEX)`: a vector of a file, drawn
    /// uniformly or number INDEX (wrapped into the file).
    VectorFile {
        /// The file's vectors.
        file: VectorFile,
        /// The vector's number, an integer generator; drawn uniformly when absent.
        index: Option<Box<Generator>>,
    },
    /// `default`, or an element left out: the default generator of the variable's type,
    /// chosen when the statement is prepared.
    Default,
    /// A named generator, drawn once per request (or per batch row): by its index.
    Named(usize),
    /// `row`: the row's number in its batch, from 0 (0 outside batches).
    Row,
    /// `hash(X)` or `hash(X, RANGE)`: a stable 64-bit hash of X's value (not negative), or
    /// that hash mapped into the range.
    Hash {
        /// The value hashed.
        of: Box<Generator>,
        /// The range to map into, both ends included.
        range: Option<(i64, i64)>,
    },
    /// `prefix(X, N)`: the first N characters of X's value as text.
    Prefix {
        /// The value cut.
        of: Box<Generator>,
        /// Characters kept.
        chars: usize,
    },
    /// `concat(A, B, ...)`: the values as text, joined.
    Concat(Vec<Generator>),
    /// `add(X, N)`, `mul(X, N)`, `div(X, N)`, `mod(X, N)`: integer arithmetic on X.
    Arith {
        /// The operation.
        op: ArithOp,
        /// The integer operated on.
        of: Box<Generator>,
        /// The constant.
        by: i64,
    },
}

/// The operations of [`Generator::Arith`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    /// X + N (wrapping).
    Add,
    /// X × N (wrapping).
    Mul,
    /// X / N, rounded towards minus infinity.
    Div,
    /// X mod N, from 0 to N-1 for a positive N.
    Mod,
}

/// One drawn value, before conversion to the variable's CQL type.
#[derive(Debug, Clone, PartialEq)]
pub enum Drawn<'a> {
    /// An integer (sequence, uniform, normal, zipfian, constants, derived integers).
    Int(i64),
    /// A real number.
    Real(f64),
    /// Text cut from the pool, or made.
    Text(Cow<'a, str>),
    /// A UUID, with whether it is time-based.
    Uuid(Uuid, bool),
    /// Milliseconds since the Unix epoch.
    Millis(i64),
    /// An unscaled integer and its scale: value × 10^-scale.
    Decimal(i64, u32),
    /// An address.
    Inet(IpAddr),
    /// Nanoseconds.
    Duration(i64),
    /// A list's, set's or vector's elements.
    List(Vec<Drawn<'a>>),
    /// A map's entries.
    Map(Vec<(Drawn<'a>, Drawn<'a>)>),
    /// A tuple's components or a user type's fields, in the type's order.
    Tuple(Vec<Drawn<'a>>),
}

/// What kind of value a generator draws, where that does not depend on the variable's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Integers.
    Int,
    /// Real numbers.
    Real,
    /// Text.
    Text,
    /// UUIDs; time-based or not.
    Uuid(bool),
    /// Moments (milliseconds since 1970).
    Millis,
    /// Decimals.
    Decimal,
    /// Addresses.
    Inet,
    /// Durations.
    Duration,
    /// A collection, tuple, user type or vector: shaped by the variable's type.
    Composite,
}

impl Kind {
    /// The kind's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Int => "an integer",
            Kind::Real => "a real number",
            Kind::Text => "a text",
            Kind::Uuid(false) => "a random UUID",
            Kind::Uuid(true) => "a time UUID",
            Kind::Millis => "a timestamp",
            Kind::Decimal => "a decimal",
            Kind::Inet => "an address",
            Kind::Duration => "a duration",
            Kind::Composite => "a collection, tuple or user type",
        }
    }

    /// A value of this kind, to try conversions with.
    pub fn probe(self) -> Option<Drawn<'static>> {
        Some(match self {
            Kind::Int => Drawn::Int(0),
            Kind::Real => Drawn::Real(0.0),
            Kind::Text => Drawn::Text(Cow::Borrowed("x")),
            Kind::Uuid(time) => Drawn::Uuid(Uuid::nil(), time),
            Kind::Millis => Drawn::Millis(0),
            Kind::Decimal => Drawn::Decimal(0, 0),
            Kind::Inet => Drawn::Inet(IpAddr::from([0, 0, 0, 0])),
            Kind::Duration => Drawn::Duration(0),
            Kind::Composite => return None,
        })
    }
}

/// What a request's values are drawn from: its sequence number, its row in a batch, its
/// random stream, the text pool, and the named generators, each drawn at most once per
/// request (or per row, for the batch's `per_row` ones).
pub struct Ctx<'p> {
    /// The request's sequence number.
    pub seq: u64,
    /// The row of the batch being drawn (0 outside batches).
    pub row: u64,
    /// The request's random stream.
    pub rng: SmallRng,
    /// Text is cut from here.
    pub pool: &'p TextPool,
    /// The named generators, by index.
    pub named: &'p [Generator],
    /// The named generators drawn so far.
    pub memo: Vec<Option<Drawn<'p>>>,
}

impl<'p> Ctx<'p> {
    /// A request's context.
    pub fn new(seq: u64, rng: SmallRng, pool: &'p TextPool, named: &'p [Generator]) -> Self {
        Ctx {
            seq,
            row: 0,
            rng,
            pool,
            named,
            memo: vec![None; named.len()],
        }
    }
}

/// Tries to make a set's elements (a map's keys) distinct: draws stop after this many times
/// the count, for an element generator with fewer values than the count.
const DISTINCT_ATTEMPTS: usize = 4;

impl Generator {
    /// Draws this generator's value in `ctx`.
    pub fn draw<'p>(&self, ctx: &mut Ctx<'p>) -> Drawn<'p> {
        match self {
            Generator::Sequence { min, max } => {
                // 0 when the range is every i64.
                let span = max.abs_diff(*min).wrapping_add(1);
                let offset = if span == 0 { ctx.seq } else { ctx.seq % span };
                Drawn::Int(min.wrapping_add_unsigned(offset))
            }
            Generator::Uniform { min, max } => Drawn::Int(ctx.rng.random_range(*min..=*max)),
            Generator::UniformReal { min, max } => {
                Drawn::Real(min + (max - min) * ctx.rng.random::<f64>())
            }
            Generator::Normal { min, max, sigma } => {
                let mean = (*min as f64 + *max as f64) / 2.0;
                Drawn::Int(clamped_normal(
                    &mut ctx.rng,
                    mean,
                    |z| z * sigma,
                    |x| x.round() as i64,
                    (*min, *max),
                ))
            }
            // Ranks from 1; the hottest value is `min`.
            Generator::Zipfian { min, max, zipf, .. } => {
                let rank = zipf.sample(&mut ctx.rng) as i128;
                Drawn::Int((i128::from(*min) + rank - 1).min(i128::from(*max)) as i64)
            }
            Generator::Const(v) => Drawn::Int(*v),
            Generator::Literal(t) => Drawn::Text(Cow::Owned(t.clone())),
            Generator::Text { min, max } => {
                Drawn::Text(Cow::Borrowed(ctx.pool.text(&mut ctx.rng, *min, *max)))
            }
            Generator::Uuid => Drawn::Uuid(
                Builder::from_random_bytes(ctx.rng.random()).into_uuid(),
                false,
            ),
            Generator::Timeuuid => {
                // 100 ns ticks since the Gregorian calendar's start (1582-10-15).
                let ticks = now().as_nanos() as u64 / 100 + 0x01B2_1DD2_1381_4000;
                let node: [u8; 6] = ctx.rng.random();
                let uuid =
                    Builder::from_gregorian_timestamp(ticks, ctx.rng.random(), &node).into_uuid();
                Drawn::Uuid(uuid, true)
            }
            Generator::Timestamp { offset_ms } => {
                Drawn::Millis((now().as_millis() as i64).saturating_add(*offset_ms))
            }
            Generator::Timeline { start_ms, step_ms } => {
                Drawn::Millis(start_ms.saturating_add((ctx.seq as i64).saturating_mul(*step_ms)))
            }
            Generator::Decimal { unscaled, scale } => match unscaled.draw(ctx) {
                Drawn::Int(v) => Drawn::Decimal(v, *scale),
                other => other,
            },
            Generator::Inet { network, prefix } => {
                let random: u128 = ctx.rng.random();
                Drawn::Inet(within(*network, *prefix, random))
            }
            Generator::Duration { min_ns, max_ns } => {
                Drawn::Duration(ctx.rng.random_range(*min_ns..=*max_ns))
            }
            Generator::List { count, element } => {
                let n = count_of(count, ctx);
                Drawn::List((0..n).map(|_| element.draw(ctx)).collect())
            }
            Generator::Set { count, element } => {
                let n = count_of(count, ctx);
                let mut seen = std::collections::HashSet::with_capacity(n);
                let mut items = Vec::with_capacity(n);
                for _ in 0..n.saturating_mul(DISTINCT_ATTEMPTS) {
                    if items.len() == n {
                        break;
                    }
                    let item = element.draw(ctx);
                    if seen.insert(stable_hash(&item)) {
                        items.push(item);
                    }
                }
                Drawn::List(items)
            }
            Generator::Map { count, key, value } => {
                let n = count_of(count, ctx);
                let mut seen = std::collections::HashSet::with_capacity(n);
                let mut entries = Vec::with_capacity(n);
                for _ in 0..n.saturating_mul(DISTINCT_ATTEMPTS) {
                    if entries.len() == n {
                        break;
                    }
                    let k = key.draw(ctx);
                    if seen.insert(stable_hash(&k)) {
                        let v = value.draw(ctx);
                        entries.push((k, v));
                    }
                }
                Drawn::Map(entries)
            }
            Generator::Tuple(items) => Drawn::Tuple(items.iter().map(|g| g.draw(ctx)).collect()),
            Generator::Udt(fields) => {
                Drawn::Tuple(fields.iter().map(|(_, g)| g.draw(ctx)).collect())
            }
            // Bound generators hold no vector (it becomes a list of the dimension's length)
            // and no default (it becomes the type's generator): see `bind`.
            Generator::Vector(element) => Drawn::List(vec![element.draw(ctx)]),
            Generator::VectorFile { file, index } => {
                let index = match index.as_deref().map(|i| i.draw(ctx)) {
                    Some(Drawn::Int(i)) => Some(i),
                    // Checked when the file is read: the index is an integer.
                    _ => None,
                };
                let vector = file.pick(index, &mut ctx.rng);
                Drawn::List(vector.iter().map(|x| Drawn::Real(f64::from(*x))).collect())
            }
            Generator::Default => Drawn::Int(0),
            Generator::Named(k) => {
                if let Some(v) = &ctx.memo[*k] {
                    return v.clone();
                }
                let named = ctx.named;
                let v = named[*k].draw(ctx);
                ctx.memo[*k] = Some(v.clone());
                v
            }
            Generator::Row => Drawn::Int(ctx.row as i64),
            Generator::Hash { of, range } => {
                let h = (stable_hash(&of.draw(ctx)) >> 1) as i64;
                Drawn::Int(match range {
                    None => h,
                    Some((min, max)) => {
                        let span = max.abs_diff(*min).wrapping_add(1);
                        let offset = if span == 0 { h as u64 } else { h as u64 % span };
                        min.wrapping_add_unsigned(offset)
                    }
                })
            }
            Generator::Prefix { of, chars } => {
                let text = as_text(of.draw(ctx));
                Drawn::Text(match text.char_indices().nth(*chars) {
                    None => text,
                    Some((end, _)) => match text {
                        Cow::Borrowed(t) => Cow::Borrowed(&t[..end]),
                        Cow::Owned(t) => Cow::Owned(t[..end].to_string()),
                    },
                })
            }
            Generator::Concat(parts) => {
                let mut out = String::new();
                for p in parts {
                    out.push_str(&as_text(p.draw(ctx)));
                }
                Drawn::Text(Cow::Owned(out))
            }
            Generator::Arith { op, of, by } => {
                let Drawn::Int(x) = of.draw(ctx) else {
                    // Checked when the file is read: arithmetic takes integers.
                    return Drawn::Int(0);
                };
                Drawn::Int(match op {
                    ArithOp::Add => x.wrapping_add(*by),
                    ArithOp::Mul => x.wrapping_mul(*by),
                    ArithOp::Div => x.div_euclid(*by),
                    ArithOp::Mod => x.rem_euclid(*by),
                })
            }
        }
    }

    /// The kind of value drawn, where it does not depend on the variable's type (`None` for
    /// `default`, whose kind the type decides).
    pub fn kind(&self, named: &[Generator]) -> Option<Kind> {
        Some(match self {
            Generator::Sequence { .. }
            | Generator::Uniform { .. }
            | Generator::Normal { .. }
            | Generator::Zipfian { .. }
            | Generator::Const(_)
            | Generator::Row
            | Generator::Hash { .. }
            | Generator::Arith { .. } => Kind::Int,
            Generator::UniformReal { .. } => Kind::Real,
            Generator::Literal(_)
            | Generator::Text { .. }
            | Generator::Prefix { .. }
            | Generator::Concat(_) => Kind::Text,
            Generator::Uuid => Kind::Uuid(false),
            Generator::Timeuuid => Kind::Uuid(true),
            Generator::Timestamp { .. } | Generator::Timeline { .. } => Kind::Millis,
            Generator::Decimal { .. } => Kind::Decimal,
            Generator::Inet { .. } => Kind::Inet,
            Generator::Duration { .. } => Kind::Duration,
            Generator::List { .. }
            | Generator::Set { .. }
            | Generator::Map { .. }
            | Generator::Tuple(_)
            | Generator::Udt(_)
            | Generator::Vector(_)
            | Generator::VectorFile { .. } => Kind::Composite,
            Generator::Default => return None,
            Generator::Named(k) => return named.get(*k)?.kind(named),
        })
    }

    /// The generators this one draws from directly (its arguments and elements).
    pub fn children(&self) -> Vec<&Generator> {
        match self {
            Generator::Decimal { unscaled: g, .. }
            | Generator::Vector(g)
            | Generator::Hash { of: g, .. }
            | Generator::Prefix { of: g, .. }
            | Generator::Arith { of: g, .. } => vec![g],
            Generator::List { count, element } | Generator::Set { count, element } => {
                vec![count, element]
            }
            Generator::Map { count, key, value } => vec![count, key, value],
            Generator::Tuple(items) | Generator::Concat(items) => items.iter().collect(),
            Generator::Udt(fields) => fields.iter().map(|(_, g)| g).collect(),
            Generator::VectorFile {
                index: Some(index), ..
            } => vec![index],
            _ => Vec::new(),
        }
    }

    /// The largest value an integer generator draws, when it has one (counts of rows and
    /// elements are checked against limits with it).
    pub fn max_int(&self) -> Option<i64> {
        match self {
            Generator::Const(v) => Some(*v),
            Generator::Sequence { max, .. }
            | Generator::Uniform { max, .. }
            | Generator::Normal { max, .. }
            | Generator::Zipfian { max, .. } => Some(*max),
            Generator::Hash {
                range: Some((_, max)),
                ..
            } => Some(*max),
            _ => None,
        }
    }
}

/// A count drawn by an integer generator: negative counts are 0.
/// The most elements a collection's count may give: far more than any table's collection
/// holds, and a draw stays quick. A count derived from another value (`mod(key, N)`,
/// `hash(X)`) whose range the form does not show is capped at it when drawn; the others
/// are checked when the file is read ([`super::bounds`]).
pub const MAX_ELEMENTS: i64 = 65_535;

/// A collection's number of elements: the count's draw, from 0 to [`MAX_ELEMENTS`].
fn count_of(count: &Generator, ctx: &mut Ctx<'_>) -> usize {
    match count.draw(ctx) {
        Drawn::Int(n) => n.clamp(0, MAX_ELEMENTS) as usize,
        _ => 0,
    }
}

fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
}

/// The address of `network/prefix` whose host bits are the low bits of `random`.
fn within(network: IpAddr, prefix: u8, random: u128) -> IpAddr {
    match network {
        IpAddr::V4(v4) => {
            let host_bits = 32 - u32::from(prefix.min(32));
            let mask = if host_bits == 32 {
                u32::MAX
            } else {
                (1u32 << host_bits) - 1
            };
            IpAddr::V4(Ipv4Addr::from(
                (u32::from(v4) & !mask) | (random as u32 & mask),
            ))
        }
        IpAddr::V6(v6) => {
            let host_bits = 128 - u32::from(prefix.min(128));
            let mask = if host_bits == 128 {
                u128::MAX
            } else {
                (1u128 << host_bits) - 1
            };
            IpAddr::V6(Ipv6Addr::from((u128::from(v6) & !mask) | (random & mask)))
        }
    }
}

/// A value as text, for `concat` and `prefix`: numbers in decimal, UUIDs hyphenated,
/// timestamps as milliseconds since 1970, durations in nanoseconds.
pub fn as_text(drawn: Drawn<'_>) -> Cow<'_, str> {
    match drawn {
        Drawn::Text(t) => t,
        Drawn::Int(v) | Drawn::Millis(v) | Drawn::Duration(v) => Cow::Owned(v.to_string()),
        Drawn::Real(v) => Cow::Owned(v.to_string()),
        Drawn::Uuid(u, _) => Cow::Owned(u.to_string()),
        Drawn::Decimal(v, scale) => Cow::Owned(decimal_text(v, scale)),
        Drawn::Inet(ip) => Cow::Owned(ip.to_string()),
        // Checked when the file is read: concat and prefix take single values.
        Drawn::List(_) | Drawn::Map(_) | Drawn::Tuple(_) => Cow::Borrowed(""),
    }
}

/// `unscaled × 10^-scale` in decimal notation: (12345, 2) is "123.45".
pub fn decimal_text(unscaled: i64, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

/// A 64-bit hash of a value that every build and platform computes alike (FNV-1a over a
/// tagged encoding, then SplitMix64's finaliser so that nearby inputs spread): `hash(...)`'s
/// values and a set's distinct elements.
pub fn stable_hash(drawn: &Drawn<'_>) -> u64 {
    let mut h = Fnv1a::default();
    write_value(&mut h, drawn);
    splitmix_finalise(h.finish())
}

/// Writes a tagged encoding of `drawn` into `h`: the tag of its kind, then its bytes (a
/// length before text and collections, so that different values never write alike).
fn write_value(h: &mut Fnv1a, drawn: &Drawn<'_>) {
    match drawn {
        Drawn::Int(v) => {
            h.write(&[1]);
            h.write(&v.to_le_bytes());
        }
        Drawn::Real(v) => {
            h.write(&[2]);
            h.write(&v.to_bits().to_le_bytes());
        }
        Drawn::Text(t) => {
            h.write(&[3]);
            h.write(&(t.len() as u64).to_le_bytes());
            h.write(t.as_bytes());
        }
        Drawn::Uuid(u, _) => {
            h.write(&[4]);
            h.write(u.as_bytes());
        }
        Drawn::Millis(v) => {
            h.write(&[5]);
            h.write(&v.to_le_bytes());
        }
        Drawn::Decimal(v, s) => {
            h.write(&[6]);
            h.write(&v.to_le_bytes());
            h.write(&s.to_le_bytes());
        }
        Drawn::Inet(ip) => {
            h.write(&[7]);
            match ip {
                IpAddr::V4(a) => h.write(&a.octets()),
                IpAddr::V6(a) => h.write(&a.octets()),
            }
        }
        Drawn::Duration(v) => {
            h.write(&[8]);
            h.write(&v.to_le_bytes());
        }
        Drawn::List(items) | Drawn::Tuple(items) => {
            h.write(&[9]);
            h.write(&(items.len() as u64).to_le_bytes());
            for i in items {
                write_value(h, i);
            }
        }
        Drawn::Map(entries) => {
            h.write(&[10]);
            h.write(&(entries.len() as u64).to_le_bytes());
            for (k, v) in entries {
                write_value(h, k);
                write_value(h, v);
            }
        }
    }
}
