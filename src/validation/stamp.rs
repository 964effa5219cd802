//! The mark a validated run puts at the head of each value it writes, so that a value read
//! back names the request that wrote it: `hr:SSSSSSSS:QQQQQQQQQQQQQQQQ:` (the seed's tag and
//! the request's sequence number, in hex), then the rest of the text the request would have
//! written anyway, to the same length.
//!
//! The workload then writes the value again from the named request (its generators are a
//! function of the seed and the sequence number) and compares: equal and of the key that was
//! read, the value is that request's; anything else is corrupt. Values without a mark were
//! written without `--validate`, and values with another seed's tag by another run: this
//! run cannot check them.

use std::fmt::Write as _;

/// The mark's length; a value shorter than this is written whole, unmarked.
pub const STAMP_LEN: usize = 3 + 8 + 1 + 16 + 1;

/// What the head of a value says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// Written by request `seq` of this seed (if the rest of the value agrees).
    Request(u64),
    /// A mark of this seed that cannot be read: the value is damaged.
    Damaged,
    /// No mark, or another seed's: not this run's value.
    Foreign,
}

/// The tag of a seed in the mark: its low 32 bits mixed with its high ones.
fn seed_tag(seed: u64) -> u32 {
    (seed ^ (seed >> 32)) as u32
}

/// `text` with its head replaced by the mark of request `seq` of `seed`, to the same length
/// (whole and unmarked when shorter than the mark).
pub fn stamped(seed: u64, seq: u64, text: &str) -> String {
    let mut value = String::with_capacity(text.len().max(STAMP_LEN));
    if text.len() < STAMP_LEN || !text.is_char_boundary(STAMP_LEN) {
        value.push_str(text);
        return value;
    }
    let _ = write!(value, "hr:{:08x}:{seq:016x}:", seed_tag(seed));
    value.push_str(&text[STAMP_LEN..]);
    value
}

/// Reads the mark at the head of `value` for a run of `seed`.
pub fn read_stamp(value: &str, seed: u64) -> Stamp {
    let Some(rest) = value.strip_prefix("hr:") else {
        return Stamp::Foreign;
    };
    let tag = rest.get(..8).and_then(|t| u32::from_str_radix(t, 16).ok());
    match tag {
        Some(tag) if tag == seed_tag(seed) => {}
        Some(_) => return Stamp::Foreign,
        None => return Stamp::Damaged,
    }
    let bytes = rest.as_bytes();
    let framed = bytes.get(8) == Some(&b':') && bytes.get(25) == Some(&b':');
    let seq = rest
        .get(9..25)
        .filter(|_| framed)
        .and_then(|s| u64::from_str_radix(s, 16).ok());
    match seq {
        Some(seq) => Stamp::Request(seq),
        None => Stamp::Damaged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_names_its_request_and_keeps_its_length() {
        let text = "a".repeat(150);
        let value = stamped(42, 123_456_789, &text);
        assert_eq!(value.len(), 150);
        assert!(value.starts_with("hr:"), "{value}");
        assert_eq!(read_stamp(&value, 42), Stamp::Request(123_456_789));
        assert_eq!(read_stamp(&value, 43), Stamp::Foreign);
        assert_eq!(read_stamp(&text, 42), Stamp::Foreign);
        let mut damaged = value.clone();
        damaged.replace_range(20..21, "z");
        assert_eq!(read_stamp(&damaged, 42), Stamp::Damaged);
        assert_eq!(read_stamp("hr:zz", 42), Stamp::Damaged);
        assert_eq!(stamped(1, 2, "short"), "short");
        assert_eq!(
            read_stamp(&stamped(u64::MAX, u64::MAX, &text), u64::MAX),
            Stamp::Request(u64::MAX)
        );
    }
}
