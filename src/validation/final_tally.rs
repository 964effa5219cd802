//! The final check's bookkeeping: each row the table answered judged against the record,
//! and, once every row is read, the keys it no longer holds counted as lost.
//!
//! Counted by key (keyvalue, [`Counted::Keys`]), a key counts once: **found** when its value
//! is its newest acknowledged write or one that may be newer (a write still unanswered,
//! failed or timed out), **lost** when its value is older than an acknowledged write or its
//! row is gone, **corrupt** when no write of the key could have produced the value. Keys
//! written only by writes without an answer have nothing to be found and count nowhere;
//! rows this run cannot check (another writer's values) are counted apart, and their keys
//! neither found nor lost.
//!
//! Counted by write (timeseries, [`Counted::Writes`]), every acknowledged write is a row of
//! its own: found when a row holds its value, lost when none does; a row of a write without
//! an answer counts nowhere, and a row no write of its key could have produced is corrupt.

use std::collections::HashSet;

use super::findings::{Counted, FinalCheck};
use super::ledger::{Ledger, ReadClass, Seen};

/// The final check as its rows arrive.
#[derive(Debug)]
pub struct FinalTally<'a> {
    ledger: &'a Ledger,
    read_sent_ns: u64,
    /// Counted by key: the keys judged so far.
    judged: HashSet<u64>,
    /// Counted by write: bit `seq`, write `seq`'s row was found.
    found_writes: Vec<u64>,
    check: FinalCheck,
}

impl<'a> FinalTally<'a> {
    /// A check of `ledger`'s keys (or writes, as `counted` says) by reads at `consistency`
    /// sent at `read_sent_ns` (on the record's clock: after every write it holds was
    /// answered).
    pub fn new(
        ledger: &'a Ledger,
        read_sent_ns: u64,
        consistency: &str,
        counted: Counted,
    ) -> FinalTally<'a> {
        // Fields are judged as keys are: each a register of its own.
        let by_key = counted != Counted::Writes;
        FinalTally {
            ledger,
            read_sent_ns,
            judged: HashSet::with_capacity(if by_key {
                ledger.key_count() as usize
            } else {
                0
            }),
            found_writes: Vec::new(),
            check: FinalCheck {
                consistency: consistency.to_string(),
                counted,
                keys: if by_key {
                    ledger.key_count()
                } else {
                    ledger.acknowledged()
                },
                complete: true,
                ..FinalCheck::default()
            },
        }
    }

    /// One row of the table: its key's number (`None`: not a key of headroom's) and what its
    /// value says.
    pub fn row(&mut self, key: Option<u64>, seen: Seen) {
        let Some(key) = key else {
            self.check.unchecked_rows += 1;
            return;
        };
        if self.check.counted == Counted::Writes {
            return self.write_row(seen);
        }
        let check = &mut self.check;
        match self.ledger.read(key, self.read_sent_ns, seen) {
            // Another writer's value (another seed, or no mark): not the cluster's doing,
            // and not this run's to judge.
            ReadClass::Unchecked => {
                check.unchecked_rows += 1;
                self.judged.insert(key);
            }
            // Wherever it is, a value no write could have produced.
            ReadClass::Corrupt => {
                check.corrupt += 1;
                self.judged.insert(key);
            }
            // A key written only by writes without an answer: nothing to find.
            _ if !self.ledger.holds(key) => {}
            ReadClass::Current => {
                check.found += 1;
                self.judged.insert(key);
            }
            ReadClass::Stale => {
                check.lost += 1;
                self.judged.insert(key);
            }
        }
    }

    /// One row of a table with a row per write.
    fn write_row(&mut self, seen: Seen) {
        match seen {
            Seen::Written(seq) if self.ledger.was_acked(seq) => {
                let word = (seq / 64) as usize;
                if word >= self.found_writes.len() {
                    self.found_writes.resize((word + 1).next_power_of_two(), 0);
                }
                let bit = 1 << (seq % 64);
                if self.found_writes[word] & bit == 0 {
                    self.found_writes[word] |= bit;
                    self.check.found += 1;
                }
            }
            // A write without an answer that applied: nothing to find.
            Seen::Written(_) => {}
            Seen::Corrupt => self.check.corrupt += 1,
            Seen::Foreign | Seen::Missing => self.check.unchecked_rows += 1,
        }
    }

    /// How many keys (or writes, or fields) the check must find.
    pub fn to_find(&self) -> u64 {
        self.check.keys
    }

    /// How many keys (or writes) of the record were found so far.
    pub fn found(&self) -> u64 {
        self.check.found
    }

    /// The table could not be read to its end: the keys not reached are not counted as lost.
    pub fn incomplete(&mut self, why: String) {
        self.check.complete = false;
        self.check.incomplete_because = Some(why);
    }

    /// The check, after `seconds`: when it read every row, a key with an acknowledged write
    /// that the table no longer holds lost it.
    pub fn finish(mut self, seconds: f64) -> FinalCheck {
        if self.check.complete {
            self.check.lost += match self.check.counted {
                Counted::Keys | Counted::Fields => self
                    .ledger
                    .written_keys()
                    .filter(|k| !self.judged.contains(k))
                    .count() as u64,
                Counted::Writes => self.check.keys - self.check.found,
            };
        }
        self.check.seconds = seconds;
        self.check
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Keys 1–6 acknowledged, 7 only timed out, 8 written twice in order; the table answers
    /// with what each case leaves.
    fn ledger() -> Ledger {
        let mut ledger = Ledger::new();
        for key in 1..=6 {
            ledger.write(key, key, key * MS, Some(key * MS + MS / 2));
        }
        ledger.write(7, 7, 7 * MS, None);
        ledger.write(8, 80, 10 * MS, Some(11 * MS));
        ledger.write(8, 81, 20 * MS, Some(21 * MS));
        ledger
    }

    #[test]
    fn each_key_is_found_lost_or_corrupt_once() {
        let ledger = ledger();
        let mut tally = FinalTally::new(&ledger, 100 * MS, "ALL", Counted::Keys);
        tally.row(Some(1), Seen::Written(1)); // found
        tally.row(Some(2), Seen::Written(2)); // found
        tally.row(Some(3), Seen::Corrupt); // corrupt
        tally.row(Some(4), Seen::Foreign); // another writer's value: neither found nor lost
        tally.row(Some(7), Seen::Written(7)); // only a timed-out write: counts nowhere
        tally.row(Some(8), Seen::Written(80)); // older than write 81: lost
        tally.row(None, Seen::Foreign); // not headroom's key
        tally.row(Some(9), Seen::Written(90)); // a key the record never held
                                               // Keys 5 and 6: no row.
        let check = tally.finish(1.5);
        assert_eq!(check.keys, 7, "keys 1-6 and 8 have an acknowledged write");
        assert_eq!(check.found, 2);
        assert_eq!(check.corrupt, 1);
        assert_eq!(check.lost, 3, "8 older, and 5 and 6 missing");
        assert_eq!(check.unchecked_rows, 2);
        assert!(check.complete);
        assert_eq!(check.seconds, 1.5);
    }

    /// A check stopped before the end counts only what it read as lost.
    #[test]
    fn an_incomplete_check_counts_no_missing_key_as_lost() {
        let ledger = ledger();
        let mut tally = FinalTally::new(&ledger, 100 * MS, "ALL", Counted::Keys);
        tally.row(Some(8), Seen::Written(80));
        tally.row(Some(1), Seen::Written(1));
        tally.incomplete("stopped".into());
        let check = tally.finish(900.0);
        assert_eq!((check.found, check.lost), (1, 1));
        assert!(!check.complete);
        assert_eq!(check.incomplete_because.as_deref(), Some("stopped"));
    }

    /// Counted by write: each acknowledged write's row is found once, or lost; a row of a
    /// write without an answer counts nowhere.
    #[test]
    fn counted_by_write_every_acknowledged_row_is_found_or_lost() {
        let ledger = ledger(); // 8 acknowledged writes: 1-6, 80, 81; 7 timed out
        let mut tally = FinalTally::new(&ledger, 100 * MS, "ALL", Counted::Writes);
        for seq in [1, 2, 2, 3, 80, 81, 7] {
            tally.row(Some(seq.min(8)), Seen::Written(seq));
        }
        tally.row(Some(4), Seen::Corrupt);
        tally.row(Some(5), Seen::Foreign);
        tally.row(None, Seen::Foreign);
        let check = tally.finish(2.0);
        assert_eq!(check.counted, Counted::Writes);
        assert_eq!(check.keys, 8);
        assert_eq!(check.found, 5, "1, 2 (once), 3, 80 and 81");
        assert_eq!(check.lost, 3, "4, 5 and 6 have no row of theirs");
        assert_eq!(check.corrupt, 1);
        assert_eq!(check.unchecked_rows, 2);

        // Stopped early, nothing unread is lost.
        let mut tally = FinalTally::new(&ledger, 100 * MS, "ALL", Counted::Writes);
        tally.row(Some(1), Seen::Written(1));
        tally.incomplete("stopped".into());
        assert_eq!(tally.finish(1.0).lost, 0);
    }
}
