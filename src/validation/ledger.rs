//! The write record of a validated run: for each key, what a read of it may return, and the
//! decision whether what it did return is older than a write the cluster acknowledged.
//!
//! A write `w` lives between its send and its answer, `[w.sent, w.acked]`; the cluster gives
//! it a timestamp inside that span (the coordinator's clock, or the client's when it sends
//! one), and the newest timestamp wins. A read `R` sent at `R.sent` that must see every write
//! acknowledged before it was sent (write CL + read CL > RF) may return any write but one
//! proven older than such a write: `w` is **stale** for `R` when some write `w'` was
//! acknowledged before `R.sent` and was sent after `w` was acknowledged
//! (`w.acked < w'.sent ≤ w'.acked < R.sent`): `w'` then has the newer timestamp. A missing
//! row is stale when any write was acknowledged before `R.sent` (the run refuses deletes).
//!
//! Times are taken before a request is sent and after its answer arrives, so a measured
//! send is never later than the true one and a measured answer never earlier: a read called
//! stale is stale. Where the record cannot prove it, the read counts as current — a verdict
//! the record is not sure of is never given.
//!
//! The record is bounded by the keys, not the requests: per key, the few acknowledged
//! writes that no later one has proven older ([`FRONTIER`]), and the latest answer among
//! those it let go; over the run, one bit per request (acknowledged or not), so that a value
//! of a write the key let go is told from one of a write still in flight.

use std::collections::HashMap;

/// The most acknowledged writes a key keeps that no later write has proven older. More
/// than this many overlapping writes of one key are rare (a key is written about once per
/// `partitions / rate` seconds); the oldest then goes, and reads of it are judged from the
/// latest answer among those let go, which can only call fewer reads stale.
pub const FRONTIER: usize = 3;

/// An acknowledged write a key keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Acked {
    seq: u64,
    sent_ns: u64,
    acked_ns: u64,
}

/// One key's record.
#[derive(Debug, Clone, Default)]
struct KeyRecord {
    kept: [Option<Acked>; FRONTIER],
    /// The latest answer of the acknowledged writes this key let go (0: none).
    let_go_acked_ns: u64,
}

/// What a read returned for one key, as the workload decoded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// No row.
    Missing,
    /// The value written by request `seq` of this run's seed, for this key.
    Written(u64),
    /// A value no write of this key could have produced: another key's, a damaged one.
    Corrupt,
    /// A value this run cannot check: written without `--validate`, or by another seed.
    Foreign,
}

/// What one read says of the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadClass {
    /// A value the read may return.
    Current,
    /// Older than a write acknowledged before the read was sent (or no row at all).
    Stale,
    /// No write of the key could have produced it.
    Corrupt,
    /// Not this run's to check.
    Unchecked,
}

impl ReadClass {
    /// What a read of several cells (a row's fields) says, of two of its cells' classes: the
    /// worse — corrupt, then stale, then current; unchecked only when nothing was checked.
    pub fn worse(self, other: ReadClass) -> ReadClass {
        let rank = |c: ReadClass| match c {
            ReadClass::Unchecked => 0,
            ReadClass::Current => 1,
            ReadClass::Stale => 2,
            ReadClass::Corrupt => 3,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

/// The write record: every key's, and which requests were acknowledged.
#[derive(Debug, Default)]
pub struct Ledger {
    keys: HashMap<u64, KeyRecord>,
    /// Bit `seq`: request `seq` was an acknowledged write.
    acked: Vec<u64>,
    acknowledged: u64,
    unknown: u64,
}

impl Ledger {
    /// An empty record.
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// Notes write `seq` of `key`, sent at `sent_ns`: acknowledged at `acked_ns`, or
    /// (`None`) failed or timed out, which may or may not have applied.
    pub fn write(&mut self, key: u64, seq: u64, sent_ns: u64, acked_ns: Option<u64>) {
        self.write_cells(&[key], seq, sent_ns, acked_ns);
    }

    /// Notes write `seq`, which wrote every one of `cells` (the fields of one row, each
    /// a register of its own), as [`Ledger::write`] does one key: one write, counted once.
    pub fn write_cells(&mut self, cells: &[u64], seq: u64, sent_ns: u64, acked_ns: Option<u64>) {
        let Some(acked_ns) = acked_ns else {
            self.unknown += 1;
            return;
        };
        self.acknowledged += 1;
        let word = (seq / 64) as usize;
        if word >= self.acked.len() {
            self.acked.resize((word + 1).next_power_of_two(), 0);
        }
        self.acked[word] |= 1 << (seq % 64);
        for &cell in cells {
            self.keep(cell, seq, sent_ns, acked_ns);
        }
    }

    /// Keeps acknowledged write `seq` in `key`'s record.
    fn keep(&mut self, key: u64, seq: u64, sent_ns: u64, acked_ns: u64) {
        let record = self.keys.entry(key).or_default();
        let new = Acked {
            seq,
            sent_ns,
            acked_ns,
        };
        // Writes answered before this one was sent are older than it: let them go.
        for slot in record.kept.iter_mut() {
            if slot.is_some_and(|k| k.acked_ns < sent_ns) {
                record.let_go_acked_ns = record.let_go_acked_ns.max(slot.unwrap().acked_ns);
                *slot = None;
            }
        }
        let slot = match record.kept.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                let oldest = (0..FRONTIER)
                    .min_by_key(|&i| record.kept[i].map_or(0, |k| k.acked_ns))
                    .expect("a key keeps at least one write");
                let gone = record.kept[oldest].expect("a full record");
                record.let_go_acked_ns = record.let_go_acked_ns.max(gone.acked_ns);
                oldest
            }
        };
        record.kept[slot] = Some(new);
    }

    /// Judges what a read of `key` sent at `sent_ns` returned.
    pub fn read(&self, key: u64, sent_ns: u64, seen: Seen) -> ReadClass {
        let record = self.keys.get(&key);
        // The latest send among the writes acknowledged before the read was sent.
        let must_see_sent = record.and_then(|r| {
            r.kept
                .iter()
                .flatten()
                .filter(|k| k.acked_ns < sent_ns)
                .map(|k| k.sent_ns)
                .max()
                .or((r.let_go_acked_ns > 0 && r.let_go_acked_ns < sent_ns).then_some(0))
        });
        match seen {
            Seen::Foreign => ReadClass::Unchecked,
            Seen::Corrupt => ReadClass::Corrupt,
            Seen::Missing if must_see_sent.is_some() => ReadClass::Stale,
            Seen::Missing => ReadClass::Current,
            Seen::Written(seq) => {
                let (Some(record), Some(newer_sent)) = (record, must_see_sent) else {
                    return ReadClass::Current;
                };
                let acked_ns = match record.kept.iter().flatten().find(|k| k.seq == seq) {
                    Some(kept) => kept.acked_ns,
                    // Acknowledged and let go: answered at the latest by the latest answer
                    // let go.
                    None if self.was_acked(seq) => record.let_go_acked_ns,
                    // In flight, failed or timed out: it may carry the newest timestamp.
                    None => return ReadClass::Current,
                };
                if acked_ns < newer_sent {
                    ReadClass::Stale
                } else {
                    ReadClass::Current
                }
            }
        }
    }

    /// Whether request `seq` was an acknowledged write.
    pub fn was_acked(&self, seq: u64) -> bool {
        self.acked
            .get((seq / 64) as usize)
            .is_some_and(|w| w & (1 << (seq % 64)) != 0)
    }

    /// Whether `key` has an acknowledged write.
    pub fn holds(&self, key: u64) -> bool {
        self.keys.contains_key(&key)
    }

    /// The keys with at least one acknowledged write: those the final check must find.
    pub fn written_keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.keys.keys().copied()
    }

    /// How many keys have an acknowledged write.
    pub fn key_count(&self) -> u64 {
        self.keys.len() as u64
    }

    /// Writes acknowledged so far.
    pub fn acknowledged(&self) -> u64 {
        self.acknowledged
    }

    /// Writes that failed or timed out: they may or may not have applied.
    pub fn unknown(&self) -> u64 {
        self.unknown
    }

    /// The record's memory, bytes, by the sizes of what it holds (the map's table at its
    /// capacity, the bits at theirs).
    pub fn memory_bytes(&self) -> u64 {
        let per_key = std::mem::size_of::<(u64, KeyRecord)>() + 1;
        (self.keys.capacity() * per_key + self.acked.capacity() * 8) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_read_after_an_acknowledged_write_must_see_it_or_a_newer_one() {
        let mut ledger = Ledger::new();
        ledger.write(7, 1, 10 * MS, Some(12 * MS));
        ledger.write(7, 2, 20 * MS, Some(22 * MS));
        // Sent after write 2's answer: write 1 is older than write 2.
        assert_eq!(
            ledger.read(7, 30 * MS, Seen::Written(2)),
            ReadClass::Current
        );
        assert_eq!(ledger.read(7, 30 * MS, Seen::Written(1)), ReadClass::Stale);
        assert_eq!(ledger.read(7, 30 * MS, Seen::Missing), ReadClass::Stale);
        // Sent while write 2 was in flight: either may be seen, but not nothing.
        assert_eq!(
            ledger.read(7, 21 * MS, Seen::Written(1)),
            ReadClass::Current
        );
        assert_eq!(
            ledger.read(7, 21 * MS, Seen::Written(2)),
            ReadClass::Current
        );
        assert_eq!(ledger.read(7, 21 * MS, Seen::Missing), ReadClass::Stale);
        // Before any answer, a missing row is fine.
        assert_eq!(ledger.read(7, 11 * MS, Seen::Missing), ReadClass::Current);
        assert_eq!(ledger.read(8, 30 * MS, Seen::Missing), ReadClass::Current);
        assert_eq!(ledger.read(7, 30 * MS, Seen::Corrupt), ReadClass::Corrupt);
        assert_eq!(ledger.read(7, 30 * MS, Seen::Foreign), ReadClass::Unchecked);
    }

    /// Two writes of a key in flight together: the cluster may order them either way, so
    /// neither is stale after both answered.
    #[test]
    fn overlapping_writes_are_both_current() {
        let mut ledger = Ledger::new();
        ledger.write(1, 5, 10 * MS, Some(30 * MS));
        ledger.write(1, 6, 20 * MS, Some(25 * MS));
        assert_eq!(
            ledger.read(1, 40 * MS, Seen::Written(5)),
            ReadClass::Current
        );
        assert_eq!(
            ledger.read(1, 40 * MS, Seen::Written(6)),
            ReadClass::Current
        );
    }

    /// A write that failed or timed out may have applied: its value is never stale, and it is
    /// counted apart; one still in flight likewise.
    #[test]
    fn a_write_without_an_answer_may_be_seen_at_any_time() {
        let mut ledger = Ledger::new();
        ledger.write(3, 1, 10 * MS, Some(11 * MS));
        ledger.write(3, 2, 20 * MS, None);
        ledger.write(3, 4, 30 * MS, Some(31 * MS));
        assert_eq!(
            ledger.read(3, 40 * MS, Seen::Written(2)),
            ReadClass::Current
        );
        assert_eq!(
            ledger.read(3, 40 * MS, Seen::Written(3)),
            ReadClass::Current
        );
        assert_eq!(ledger.read(3, 40 * MS, Seen::Written(1)), ReadClass::Stale);
        assert_eq!((ledger.acknowledged(), ledger.unknown()), (2, 1));
        assert!(ledger.was_acked(1) && !ledger.was_acked(2) && ledger.was_acked(4));
    }

    /// A key keeps few writes; one it let go is judged by the latest answer let go, which
    /// still proves a value stale when a write sent later was answered before the read.
    #[test]
    fn a_write_let_go_is_judged_by_the_latest_answer_let_go() {
        let mut ledger = Ledger::new();
        // Four overlapping writes: the first answered is let go.
        for (seq, sent, acked) in [(1, 10, 40), (2, 11, 41), (3, 12, 42), (4, 13, 43)] {
            ledger.write(9, seq, sent * MS, Some(acked * MS));
        }
        assert_eq!(
            ledger.read(9, 50 * MS, Seen::Written(1)),
            ReadClass::Current
        );
        ledger.write(9, 5, 60 * MS, Some(61 * MS));
        for seq in 1..=4 {
            assert_eq!(
                ledger.read(9, 70 * MS, Seen::Written(seq)),
                ReadClass::Stale
            );
        }
        assert_eq!(
            ledger.read(9, 70 * MS, Seen::Written(5)),
            ReadClass::Current
        );
        assert_eq!(ledger.key_count(), 1);
    }

    /// A write of several cells (a row's fields) is one write: counted once, kept by each
    /// cell, each judged on its own.
    #[test]
    fn a_write_of_several_cells_counts_once_and_each_cell_keeps_it() {
        let mut ledger = Ledger::new();
        ledger.write_cells(&[10, 11, 12], 1, 10 * MS, Some(12 * MS));
        ledger.write_cells(&[11], 2, 20 * MS, Some(22 * MS));
        ledger.write_cells(&[10, 11, 12], 3, 30 * MS, None);
        assert_eq!((ledger.acknowledged(), ledger.unknown()), (2, 1));
        assert_eq!(ledger.key_count(), 3);
        assert_eq!(
            ledger.read(10, 25 * MS, Seen::Written(1)),
            ReadClass::Current
        );
        assert_eq!(ledger.read(11, 25 * MS, Seen::Written(1)), ReadClass::Stale);
        assert_eq!(
            ledger.read(11, 25 * MS, Seen::Written(2)),
            ReadClass::Current
        );
        assert_eq!(ledger.read(12, 25 * MS, Seen::Missing), ReadClass::Stale);
    }

    /// The record holds keys, not requests: ten million writes over 100 000 keys take the
    /// keys' records and a bit per request.
    #[test]
    fn ten_million_writes_take_a_bounded_record() {
        let mut ledger = Ledger::new();
        let keys = 100_000u64;
        for seq in 0..10_000_000u64 {
            let t = seq * 100_000;
            ledger.write(seq % keys, seq, t, Some(t + 2 * MS));
        }
        let bytes = ledger.memory_bytes();
        let per_key = std::mem::size_of::<(u64, KeyRecord)>() as u64 + 1;
        // At most the map's doubling over the keys, plus 10 M bits.
        assert!(
            bytes <= 2 * keys * per_key + 10_000_000 / 8 * 2,
            "{bytes} bytes"
        );
        assert_eq!(ledger.acknowledged(), 10_000_000);
        assert_eq!(
            ledger.read(5, u64::MAX, Seen::Written(9_900_005)),
            ReadClass::Current
        );
        assert_eq!(ledger.read(5, u64::MAX, Seen::Written(5)), ReadClass::Stale);
    }
}
