//! The mark a validated run puts at the head of each value it writes, so that a value read
//! back names the request that wrote it: `hr:TTTTTTTT:QQQQQQQQQQQQQQQQ:` (the run's tag and
//! the request's sequence number, in hex), then the rest of the text the request would have
//! written anyway, to the same length.
//!
//! The workload then writes the value again from the named request (its generators are a
//! function of the seed and the sequence number) and compares: equal and of the key that was
//! read, the value is that request's; anything else is corrupt. Values without a mark were
//! written without `--validate`, and values with another tag by another run: this run cannot
//! check them.
//!
//! The tag is drawn anew for each validated run ([`RunTag::new`]), not taken from the seed:
//! two runs of one seed send the same requests, and a row an earlier run left would
//! otherwise pass for this run's write of the same request, hiding a loss.

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

/// The tag of one validated run in its marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunTag(pub u32);

impl RunTag {
    /// A tag for a new run: drawn from the process's random hash keys and the clock, so that
    /// runs of one seed, one after the other or side by side, have different tags.
    pub fn new() -> RunTag {
        use std::hash::BuildHasher;
        let now = std::time::SystemTime::now();
        let bits =
            std::collections::hash_map::RandomState::new().hash_one((now, std::process::id()));
        RunTag((bits ^ (bits >> 32)) as u32)
    }
}

impl Default for RunTag {
    fn default() -> Self {
        RunTag::new()
    }
}

/// `text` with its head replaced by the mark of request `seq` of the run `tag`, to the same
/// length (whole and unmarked when shorter than the mark).
pub fn stamped(tag: RunTag, seq: u64, text: &str) -> String {
    let mut value = String::with_capacity(text.len().max(STAMP_LEN));
    if text.len() < STAMP_LEN || !text.is_char_boundary(STAMP_LEN) {
        value.push_str(text);
        return value;
    }
    let _ = write!(value, "hr:{:08x}:{seq:016x}:", tag.0);
    value.push_str(&text[STAMP_LEN..]);
    value
}

/// Reads the mark at the head of `value` for the run `tag`.
pub fn read_stamp(value: &str, tag: RunTag) -> Stamp {
    let Some(rest) = value.strip_prefix("hr:") else {
        return Stamp::Foreign;
    };
    let its_tag = rest.get(..8).and_then(|t| u32::from_str_radix(t, 16).ok());
    match its_tag {
        Some(found) if found == tag.0 => {}
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
        let (run, other) = (RunTag(42), RunTag(43));
        let value = stamped(run, 123_456_789, &text);
        assert_eq!(value.len(), 150);
        assert!(value.starts_with("hr:0000002a:"), "{value}");
        assert_eq!(read_stamp(&value, run), Stamp::Request(123_456_789));
        assert_eq!(read_stamp(&value, other), Stamp::Foreign);
        assert_eq!(read_stamp(&text, run), Stamp::Foreign);
        let mut damaged = value.clone();
        damaged.replace_range(20..21, "z");
        assert_eq!(read_stamp(&damaged, run), Stamp::Damaged);
        assert_eq!(read_stamp("hr:zz", run), Stamp::Damaged);
        assert_eq!(stamped(run, 2, "short"), "short");
        let last = RunTag(u32::MAX);
        assert_eq!(
            read_stamp(&stamped(last, u64::MAX, &text), last),
            Stamp::Request(u64::MAX)
        );
    }

    /// Two runs of one seed mark their values apart.
    #[test]
    fn each_run_draws_its_own_tag() {
        let tags: std::collections::HashSet<u32> = (0..64).map(|_| RunTag::new().0).collect();
        assert!(tags.len() > 60, "{} distinct tags of 64", tags.len());
    }
}
