//! How large a generator's values can get, known from its form before anything is drawn:
//! a collection's count and a value's bytes are bounded so that a workload file such as
//! `list(1000000000, text(5))` is refused by name when it is read, instead of the client
//! trying to build a value of gigabytes for its first request.

pub use super::values::MAX_ELEMENTS;
use super::values::{ArithOp, Generator};

/// The largest value a generator may make: Cassandra refuses a write larger than half its
/// commit log segment (16 MiB with the default 32 MiB segments).
pub const MAX_VALUE_BYTES: u64 = 16 << 20;

/// The largest dimension of a vector type Cassandra accepts, for bounding `vector(GEN)`,
/// whose dimension the table gives.
const MAX_VECTOR_DIMENSION: u64 = 8_192;

/// What an integer or a short value takes as text, at most.
const SHORT_VALUE_BYTES: u64 = 40;

/// Checks that `g` (a variable's or a named generator, with the named generators `named`)
/// draws collections of at most [`MAX_ELEMENTS`] and values of at most
/// [`MAX_VALUE_BYTES`]; the error says which part and how large.
pub fn check(g: &Generator, named: &[Generator]) -> Result<(), String> {
    for count in counts(g) {
        if let Some(smallest) = smallest_int(count, named).filter(|n| *n < 0) {
            return Err(format!(
                "a collection's count can be {smallest}: a count is 0 or more"
            ));
        }
        if let Some(largest) = largest_int(count, named) {
            if largest > MAX_ELEMENTS {
                return Err(format!(
                    "a collection's count goes up to {largest}: at most {MAX_ELEMENTS} \
                     elements, more than any table's collection holds"
                ));
            }
        }
    }
    let bytes = largest_bytes(g, named);
    if bytes > MAX_VALUE_BYTES {
        return Err(format!(
            "its values can be {:.0} MB, more than the {} MB Cassandra takes in one write \
             (a smaller count or shorter text)",
            bytes as f64 / (1u64 << 20) as f64,
            MAX_VALUE_BYTES >> 20
        ));
    }
    Ok(())
}

/// Every collection count in `g`, at any depth.
fn counts(g: &Generator) -> Vec<&Generator> {
    let mut found = Vec::new();
    let mut stack = vec![g];
    while let Some(g) = stack.pop() {
        if let Generator::List { count, .. }
        | Generator::Set { count, .. }
        | Generator::Map { count, .. } = g
        {
            found.push(count.as_ref());
        }
        stack.extend(g.children());
    }
    found
}

/// The largest integer `g` draws, when its form says (a constant, a range, a hash into a
/// range, a remainder); `None` when it does not.
pub fn largest_int(g: &Generator, named: &[Generator]) -> Option<i64> {
    int_range_within(g, named, named.len() + 1).1
}

/// The smallest integer `g` draws, when its form says (a constant, a range, a hash into a
/// range); `None` when it does not.
fn smallest_int(g: &Generator, named: &[Generator]) -> Option<i64> {
    int_range_within(g, named, named.len() + 1).0
}

/// The smallest and the largest integer `g` draws, each when its form says, following at
/// most `depth` named generators (their circles are refused elsewhere; this never loops
/// whatever it is given).
fn int_range_within(
    g: &Generator,
    named: &[Generator],
    depth: usize,
) -> (Option<i64>, Option<i64>) {
    match g {
        Generator::Const(n) => (Some(*n), Some(*n)),
        Generator::Sequence { min, max }
        | Generator::Uniform { min, max }
        | Generator::Normal { min, max, .. }
        | Generator::Zipfian { min, max, .. } => (Some(*min), Some(*max)),
        Generator::Hash {
            range: Some((low, high)),
            ..
        } => (Some(*low), Some(*high)),
        // A remainder keeps its operand's sign: only its top is known.
        Generator::Arith {
            op: ArithOp::Mod,
            by,
            ..
        } if *by > 0 => (None, Some(by - 1)),
        Generator::Named(i) if depth > 0 => named
            .get(*i)
            .map_or((None, None), |g| int_range_within(g, named, depth - 1)),
        _ => (None, None),
    }
}

/// A bound on the bytes of one value `g` draws (its text, or its elements'), saturating.
pub fn largest_bytes(g: &Generator, named: &[Generator]) -> u64 {
    largest_bytes_within(g, named, named.len() + 1)
}

fn largest_bytes_within(g: &Generator, named: &[Generator], depth: usize) -> u64 {
    let of = |g: &Generator| largest_bytes_within(g, named, depth);
    let count = |c: &Generator| {
        int_range_within(c, named, depth)
            .1
            .map_or(MAX_ELEMENTS, |n| n.clamp(0, MAX_ELEMENTS)) as u64
    };
    let sum = |parts: &mut dyn Iterator<Item = &Generator>| {
        parts.fold(0u64, |total, p| {
            total.saturating_add(of(p).saturating_add(4))
        })
    };
    match g {
        Generator::Text { max, .. } => *max as u64,
        Generator::Literal(text) => text.len() as u64,
        Generator::List { count: c, element } | Generator::Set { count: c, element } => {
            count(c).saturating_mul(of(element).saturating_add(4))
        }
        Generator::Map {
            count: c,
            key,
            value,
        } => count(c).saturating_mul(of(key).saturating_add(of(value)).saturating_add(8)),
        Generator::Tuple(items) => sum(&mut items.iter()),
        Generator::Udt(fields) => sum(&mut fields.iter().map(|(_, g)| g)),
        Generator::Concat(parts) => sum(&mut parts.iter()),
        Generator::Vector(element) => MAX_VECTOR_DIMENSION.saturating_mul(of(element)),
        Generator::Prefix { of: inner, chars } => of(inner).min(4 * *chars as u64),
        Generator::Named(i) if depth > 0 => named.get(*i).map_or(SHORT_VALUE_BYTES, |n| {
            largest_bytes_within(n, named, depth - 1)
        }),
        _ => SHORT_VALUE_BYTES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::declarative::grammar::parse;

    fn checked(text: &str, names: &[String], named: &[Generator]) -> Result<(), String> {
        check(&parse(text, names).map_err(|e| e.0)?, named)
    }

    #[test]
    fn collections_and_values_that_no_table_could_hold_are_refused_by_their_form() {
        for fine in [
            "list(3, text(5))",
            "map(1..10, uuid, list(2, uniform(5)))",
            "set(65535, uniform(1..1M))",
            "list(mod(uniform(1..1000000), 10), text(8))",
            "text(1M)",
            "vector(uniform(0.0..1.0))",
        ] {
            checked(fine, &[], &[]).unwrap_or_else(|e| panic!("{fine}: {e}"));
        }
        let e = checked("list(1000000000, text(5))", &[], &[]).unwrap_err();
        assert!(
            e.contains("count goes up to 1000000000: at most 65535"),
            "{e}"
        );
        let e = checked("map(10, uuid, list(1..100000, uniform(3)))", &[], &[]).unwrap_err();
        assert!(e.contains("count goes up to 100000"), "{e}");
        let e = checked("list(60000, text(1000))", &[], &[]).unwrap_err();
        assert!(
            e.contains("its values can be 57 MB, more than the 16 MB"),
            "{e}"
        );
        let e = checked("tuple(text(1M), list(20, text(1M)))", &[], &[]).unwrap_err();
        assert!(e.contains("more than the 16 MB"), "{e}");
        for negative in [
            "list(-3, uniform(10))",
            "set(uniform(-5..-1), text(3))",
            "map(uniform(-2..4), uuid, uuid)",
        ] {
            let e = checked(negative, &[], &[]).unwrap_err();
            assert!(e.contains("a count is 0 or more"), "{negative}: {e}");
        }
    }

    #[test]
    fn named_generators_count_as_what_they_draw() {
        let names = vec!["big".to_string(), "n".to_string()];
        let named = vec![
            parse("text(1M)", &names).unwrap(),
            parse("uniform(1..2000000)", &names).unwrap(),
        ];
        let e = checked("list(20, big)", &names, &named).unwrap_err();
        assert!(e.contains("more than the 16 MB"), "{e}");
        let e = checked("list(n, uuid)", &names, &named).unwrap_err();
        assert!(e.contains("count goes up to 2000000"), "{e}");
        checked("list(5, big)", &names, &named).unwrap();
    }
}
