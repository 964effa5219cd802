//! What a validated run found, as summary.json's `validation` holds it: the reads judged
//! ([`Reads`], from the checker's [`ReadCounts`]), the writes, and the final check.

use serde::{Deserialize, Serialize};

use super::ledger::ReadClass;

/// The reads the checker judged, by their class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadCounts {
    /// Values the read may return.
    pub current: u64,
    /// Values no write of the key could have produced.
    pub corrupt: u64,
    /// Older than an acknowledged write.
    pub stale: u64,
    /// Not this run's to check.
    pub unchecked: u64,
}

impl ReadCounts {
    /// Counts one judged read.
    pub fn count(&mut self, class: ReadClass) {
        match class {
            ReadClass::Current => self.current += 1,
            ReadClass::Corrupt => self.corrupt += 1,
            ReadClass::Stale => self.stale += 1,
            ReadClass::Unchecked => self.unchecked += 1,
        }
    }
}

/// The reads a validated run judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reads {
    /// Reads whose answer was judged (all but the unchecked).
    pub checked: u64,
    /// Values no write of the key could have produced.
    pub corrupt: u64,
    /// Older than an acknowledged write where the levels promise otherwise: a defect.
    pub stale_unexpected: u64,
    /// Older than an acknowledged write where the levels allow it.
    pub stale_expected: u64,
    /// Values this run cannot check (written without `--validate` or by another seed).
    pub unchecked: u64,
}

impl Reads {
    /// The reads of `counts`, their stale ones a defect when `strong` (the levels promise a
    /// read sees every write acknowledged before it), expected otherwise.
    pub fn of(counts: ReadCounts, strong: bool) -> Reads {
        let (stale_unexpected, stale_expected) = if strong {
            (counts.stale, 0)
        } else {
            (0, counts.stale)
        };
        Reads {
            checked: counts.current + counts.corrupt + counts.stale,
            corrupt: counts.corrupt,
            stale_unexpected,
            stale_expected,
            unchecked: counts.unchecked,
        }
    }
}

/// What the final check's counts are of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Counted {
    /// Keys: a key holds one value, its newest write's (keyvalue); a key whose newest
    /// acknowledged write is gone counts one lost write.
    #[default]
    Keys,
    /// Acknowledged writes, each a row of its own (timeseries): every one must be found.
    Writes,
    /// Fields: each field of each key holds one value, its newest write's (YCSB); counted as
    /// keys are.
    Fields,
}

impl Counted {
    /// The word for what is counted, plural.
    pub fn noun(self) -> &'static str {
        match self {
            Counted::Keys => "keys",
            Counted::Writes => "writes",
            Counted::Fields => "fields",
        }
    }

    /// What the final check must find, as a sentence names it.
    pub fn to_find(self) -> &'static str {
        match self {
            Counted::Keys => "key(s) with an acknowledged write",
            Counted::Writes => "acknowledged write(s), a row each",
            Counted::Fields => "field(s) with an acknowledged write",
        }
    }
}

/// The final check: every key with an acknowledged write (or every acknowledged write, when
/// each is a row of its own) read back after the load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalCheck {
    /// The consistency level of its reads.
    pub consistency: String,
    /// What `keys`, `found`, `lost` and `corrupt` count: keys (absent in files written
    /// before timeseries was checked) or writes.
    #[serde(default)]
    pub counted: Counted,
    /// Keys with an acknowledged write (or acknowledged writes): those it must find.
    pub keys: u64,
    /// Keys whose value is an acknowledged write's, or a newer one's (or writes whose row is
    /// there).
    pub found: u64,
    /// Keys whose acknowledged write is gone: no row, or an older value (or writes whose row
    /// is gone).
    pub lost: u64,
    /// Keys (or rows) whose value no write could have produced.
    pub corrupt: u64,
    /// Rows the table holds that this run cannot check (another writer's values); their
    /// keys are neither found nor lost.
    pub unchecked_rows: u64,
    /// Whether it read the whole table; when not, `lost` counts only what it read.
    pub complete: bool,
    /// Why it is not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_because: Option<String>,
    /// How long it took, seconds (not part of the measured run).
    pub seconds: f64,
}

/// summary.json's `validation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// The run's consistency levels promise that a read sees every write acknowledged
    /// before it was sent (W + R > RF).
    pub reads_must_see_writes: bool,
    /// The reads of the measured run.
    pub reads: Reads,
    /// Writes acknowledged (populate and measured run).
    pub writes_acknowledged: u64,
    /// Writes that failed or timed out: they may or may not have applied, and are never
    /// counted as lost.
    pub writes_unknown: u64,
    /// The write record's memory at the end, bytes.
    pub record_bytes: u64,
    /// The final check, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_check: Option<FinalCheck>,
}

impl Validation {
    /// The defects found: lost writes, corrupt values, stale reads the levels forbid.
    pub fn defects(&self) -> u64 {
        let final_check = self.final_check.as_ref();
        self.reads.corrupt
            + self.reads.stale_unexpected
            + final_check.map_or(0, |f| f.lost + f.corrupt)
    }

    /// What the run found, in brief: what a capacity trial's record and a comparison keep.
    pub fn brief(&self) -> DataCheck {
        DataCheck {
            defects: self.defects(),
            lost: self.final_check.as_ref().map_or(0, |f| f.lost),
            complete: self.final_check.as_ref().is_some_and(|f| f.complete),
        }
    }
}

/// A validated run's findings in brief (a capacity trial's `data` in capacity.jsonl).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataCheck {
    /// Defects: acknowledged writes lost, corrupt values, stale reads the levels forbid.
    pub defects: u64,
    /// Of them, acknowledged writes lost.
    pub lost: u64,
    /// Whether the final check read the whole table: when not, what it did not read has no
    /// verdict.
    pub complete: bool,
}

/// The findings of several validated runs (a search's trials), summed: what capacity.json's
/// `data` and a comparison's configuration say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DataVerdict {
    /// Validated runs.
    pub runs_checked: u32,
    /// Defects over all of them.
    pub defects: u64,
    /// Of them, acknowledged writes lost.
    pub lost: u64,
    /// Runs whose final check could not read the whole table.
    pub incomplete_runs: u32,
    /// The attempted rates (per second) of the runs with a defect, ascending, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defect_rates_per_s: Vec<f64>,
}

impl DataVerdict {
    /// The sum of `checks`, each with its run's attempted rate (`None` for a run without
    /// one); `None` when no run was validated.
    pub fn of(checks: impl IntoIterator<Item = (DataCheck, Option<f64>)>) -> Option<DataVerdict> {
        let mut verdict = DataVerdict::default();
        for (check, rate) in checks {
            verdict.runs_checked += 1;
            verdict.defects += check.defects;
            verdict.lost += check.lost;
            verdict.incomplete_runs += u32::from(!check.complete);
            if let Some(rate) = rate.filter(|_| check.defects > 0) {
                if !verdict.defect_rates_per_s.contains(&rate) {
                    verdict.defect_rates_per_s.push(rate);
                }
            }
        }
        verdict.defect_rates_per_s.sort_by(f64::total_cmp);
        (verdict.runs_checked > 0).then_some(verdict)
    }

    /// One sentence: what the checked runs found.
    pub fn describe(&self) -> String {
        let runs = format!(
            "{} validated run{}",
            self.runs_checked,
            if self.runs_checked == 1 { "" } else { "s" }
        );
        if self.defects > 0 {
            let at = if self.defect_rates_per_s.is_empty() {
                String::new()
            } else {
                let rates: Vec<String> = self
                    .defect_rates_per_s
                    .iter()
                    .map(|r| format!("{}/s", crate::format::format_rate(*r)))
                    .collect();
                format!(" at {}", rates.join(", "))
            };
            format!(
                "the cluster did not keep its data: {} defect(s) ({} acknowledged write(s) \
                 lost){at}, in {runs}",
                self.defects, self.lost
            )
        } else if self.incomplete_runs > 0 {
            format!(
                "no verdict on the data: the final check of {} of {runs} could not read the \
                 whole table",
                self.incomplete_runs
            )
        } else {
            format!("every acknowledged write kept, every value one that was written, in {runs}")
        }
    }
}
