//! YCSB under `--validate`: every field of every key is a register of its own (a *cell*).
//!
//! Each value a write sends carries the mark of its request ([`crate::validation::stamp`]),
//! in place of the head of the text it would have sent anyway. An INSERT writes every field
//! of its key in one write (one request, noted once, kept by each cell); an UPDATE one field
//! or, with `writeallfields`, all; a READ-MODIFY-WRITE reads, then updates. A READ returns
//! the fields it asked for, each judged against its cell's writes, and counts as one read,
//! as bad as its worst field. SCANs are sent as always and not checked.
//!
//! A value read back names its request; the request is drawn again from the seed and its
//! sequence number ([`Plan::written`]: its type from the mix, its key, then its draws in the
//! order [`Ycsb::execute`](super::Ycsb) makes them) and the value compared byte for byte
//! with the key and field it was read from. The final check reads the whole table and judges
//! every field of every row ([`YcsbValues`] as [`JudgeRows`]).

use std::collections::HashMap;

use scylla::errors::ExecutionError;
use scylla::value::CqlValue;

use super::model::{FieldLengthDistribution, YcsbConfig, INSERT, READ, READ_MODIFY_WRITE, UPDATE};
use super::{Plan, Ycsb};
use crate::validation::stamp::{read_stamp, stamped, RunTag, Stamp, STAMP_LEN};
use crate::validation::{Cells, FinalTally, Ledger, Recorder, Seen};
use crate::workload::common::checked::JudgeRows;
use crate::workload::common::generators::request_rng;
use crate::workload::common::workload::Parts;

/// Why `--validate` cannot check a YCSB workload of these properties, if it cannot: a value
/// shorter than the mark cannot carry it.
pub fn check_supported(config: &YcsbConfig) -> Result<(), String> {
    let shortest = match config.fieldlengthdistribution {
        FieldLengthDistribution::Constant => config.fieldlength,
        FieldLengthDistribution::Uniform | FieldLengthDistribution::Zipfian => {
            config.minfieldlength
        }
        FieldLengthDistribution::Histogram => match &config.fieldlengthhistogram {
            Some(histogram) => histogram.lengths().length_of(0),
            None => config.fieldlength,
        },
    };
    if shortest < STAMP_LEN as u64 {
        return Err(format!(
            "--validate with YCSB values as short as {shortest} characters: each value must \
             carry the {STAMP_LEN}-character mark of the request that wrote it; give \
             fieldlength (and minfieldlength) of at least {STAMP_LEN}"
        ));
    }
    Ok(())
}

/// What request `seq` wrote to one field: nothing, the value of that field, or (an INSERT,
/// an UPDATE of every field) the value of each field in order.
enum Written<'a> {
    Nothing,
    One(usize, &'a str),
    All(Vec<&'a str>),
}

impl Plan {
    /// The record's number of field `field` of key number `keynum`.
    fn cell(&self, keynum: u64, field: usize) -> u64 {
        keynum * u64::from(self.config.fieldcount) + field as u64
    }

    /// The type of request `seq`: the load phase's are INSERTs.
    fn op_of(&self, seq: u64) -> usize {
        if seq < self.loaded() {
            INSERT
        } else {
            self.operations.op_for(seq)
        }
    }

    /// What a request of type `op` writes, drawn from `rng` after its key (a
    /// READ-MODIFY-WRITE's read draws first, as its read does).
    fn writes<'a>(&'a self, op: usize, rng: &mut rand::rngs::SmallRng) -> Written<'a> {
        let every = |rng: &mut rand::rngs::SmallRng| {
            (0..self.config.fieldcount)
                .map(|_| self.value(rng))
                .collect::<Vec<_>>()
        };
        match op {
            INSERT => Written::All(every(rng)),
            UPDATE | READ_MODIFY_WRITE => {
                if op == READ_MODIFY_WRITE && !self.config.readallfields {
                    self.field(rng);
                }
                if self.config.writeallfields {
                    Written::All(every(rng))
                } else {
                    let field = self.field(rng);
                    Written::One(field, self.value(rng))
                }
            }
            _ => Written::Nothing,
        }
    }

    /// Request `seq`'s key number and the text (before its mark) it wrote to `field`, if
    /// it wrote that field.
    fn written(&self, seq: u64, field: usize) -> Option<(u64, &str)> {
        let op = self.op_of(seq);
        let mut rng = request_rng(self.seed, seq);
        let keynum = self.keynum(op, seq, &mut rng);
        let text = match self.writes(op, &mut rng) {
            Written::Nothing => None,
            Written::One(f, text) => (f == field).then_some(text),
            Written::All(texts) => texts.get(field).copied(),
        };
        text.map(|t| (keynum, t))
    }
}

/// What a validated YCSB run's values are: enough to write any request's fields again.
pub struct YcsbValues<'a> {
    plan: &'a Plan,
    tag: RunTag,
    /// For the final check: the names of the keys the record holds, to their numbers
    /// (hashed key names cannot be turned back).
    names: HashMap<String, u64>,
}

impl YcsbValues<'_> {
    /// What a value of field `field` of key number `keynum` says: written by which of this
    /// run's requests, or corrupt, or not this run's to check; no value: missing.
    pub fn seen(&self, keynum: u64, field: usize, value: Option<&CqlValue>) -> Seen {
        let value = match value {
            None => return Seen::Missing,
            Some(CqlValue::Text(value)) => value,
            Some(_) => return Seen::Corrupt,
        };
        match read_stamp(value, self.tag) {
            Stamp::Foreign => Seen::Foreign,
            Stamp::Damaged => Seen::Corrupt,
            Stamp::Request(seq) => match self.plan.written(seq, field) {
                Some((its_key, text))
                    if its_key == keynum
                        && value.len() == text.len()
                        && value.as_bytes()[STAMP_LEN..] == text.as_bytes()[STAMP_LEN..] =>
                {
                    Seen::Written(seq)
                }
                _ => Seen::Corrupt,
            },
        }
    }

    /// The key number of a row of the final check: by the record's names, else by a value
    /// of this run that names a request of this key.
    fn keynum_of(&self, name: &str, fields: &[Option<CqlValue>]) -> Option<u64> {
        if let Some(&keynum) = self.names.get(name) {
            return Some(keynum);
        }
        fields.iter().enumerate().find_map(|(field, value)| {
            let Some(CqlValue::Text(value)) = value else {
                return None;
            };
            let Stamp::Request(seq) = read_stamp(value, self.tag) else {
                return None;
            };
            let (keynum, _) = self.plan.written(seq, field)?;
            (self.plan.key(keynum) == name).then_some(keynum)
        })
    }
}

/// A row of the final check is (y_id, field 0, field 1, ...): each field judged in its cell.
impl JudgeRows for YcsbValues<'_> {
    fn prepare(&mut self, ledger: &Ledger) {
        let fields = u64::from(self.plan.config.fieldcount.max(1));
        let keynums: std::collections::HashSet<u64> =
            ledger.written_keys().map(|cell| cell / fields).collect();
        self.names = keynums
            .into_iter()
            .map(|keynum| (self.plan.key(keynum), keynum))
            .collect();
    }

    fn row(&self, columns: Vec<Option<CqlValue>>, tally: &mut FinalTally<'_>) {
        let mut columns = columns.into_iter();
        let name = match columns.next().flatten() {
            Some(CqlValue::Text(name)) => name,
            _ => String::new(),
        };
        let fields: Vec<Option<CqlValue>> = columns.collect();
        let Some(keynum) = self.keynum_of(&name, &fields) else {
            for _ in &fields {
                tally.row(None, Seen::Foreign);
            }
            return;
        };
        for (field, value) in fields.iter().enumerate() {
            let seen = self.seen(keynum, field, value.as_ref());
            tally.row(Some(self.plan.cell(keynum, field)), seen);
        }
    }
}

impl Ycsb {
    /// What this run's values are, for `--validate`, whose run `recorder` notes.
    pub(super) fn values<'a>(&'a self, recorder: &Recorder) -> YcsbValues<'a> {
        YcsbValues {
            plan: &self.plan,
            tag: recorder.tag(),
            names: HashMap::new(),
        }
    }

    /// One request under `--validate`: its writes marked and noted, its reads judged.
    pub(super) async fn execute_validated(
        &self,
        recorder: &Recorder,
        op: usize,
        seq: u64,
        parts: &mut Parts,
    ) -> Result<(), ExecutionError> {
        let plan = &self.plan;
        let mut rng = request_rng(plan.seed, seq);
        let keynum = plan.keynum(op, seq, &mut rng);
        let key = plan.key(keynum);
        match op {
            READ => {
                self.read_checked(recorder, keynum, &key, &mut rng, true)
                    .await
            }
            INSERT | UPDATE => {
                self.write_checked(recorder, op, seq, keynum, &key, &mut rng)
                    .await
            }
            READ_MODIFY_WRITE => {
                let start = std::time::Instant::now();
                // The read's draws, then the update's: as Plan::writes replays them.
                let mut replay = rng.clone();
                if let Err(e) = self
                    .read_checked(recorder, keynum, &key, &mut rng, false)
                    .await
                {
                    parts.push(READ, start.elapsed(), true);
                    return Err(e);
                }
                let between = std::time::Instant::now();
                parts.push(READ, between - start, false);
                let result = self
                    .write_checked(recorder, op, seq, keynum, &key, &mut replay)
                    .await;
                parts.push(UPDATE, between.elapsed(), result.is_err());
                result
            }
            // SCAN: sent as always, not checked.
            _ => self.execute_unchecked(op, seq, parts).await,
        }
    }

    /// A read of `key`: its fields judged, one read.
    async fn read_checked(
        &self,
        recorder: &Recorder,
        keynum: u64,
        key: &str,
        rng: &mut rand::rngs::SmallRng,
        named: bool,
    ) -> Result<(), ExecutionError> {
        let plan = &self.plan;
        let s = &self.statements;
        let (statement, fields): (_, Vec<usize>) = if !plan.config.readallfields {
            let field = plan.field(rng);
            (&s.read_one[field], vec![field])
        } else {
            let all = (0..plan.config.fieldcount as usize).collect();
            match (named, &s.read_named) {
                (true, Some(named)) => (named, all),
                _ => (&s.read_all, all),
            }
        };
        let sent_ns = recorder.now_ns();
        let answer = self.requests.fetch(statement, (key,)).await?;
        let values = self.values(recorder);
        let row = answer.rows.first();
        let cells: Box<[(u64, Seen)]> = fields
            .iter()
            .map(|&field| {
                let seen = match row {
                    None => Seen::Missing,
                    Some(row) => {
                        let at = answer
                            .columns
                            .iter()
                            .position(|c| *c == self.columns[field]);
                        let value = at.and_then(|at| row.get(at)).and_then(Option::as_ref);
                        values.seen(keynum, field, value)
                    }
                };
                (plan.cell(keynum, field), seen)
            })
            .collect();
        recorder.read_cells(cells, sent_ns);
        Ok(())
    }

    /// An INSERT, or an UPDATE (the write of a READ-MODIFY-WRITE: `rng` then draws its read
    /// first), its values marked, noted in the record.
    async fn write_checked(
        &self,
        recorder: &Recorder,
        op: usize,
        seq: u64,
        keynum: u64,
        key: &str,
        rng: &mut rand::rngs::SmallRng,
    ) -> Result<(), ExecutionError> {
        let plan = &self.plan;
        let tag = recorder.tag();
        let s = &self.statements;
        match plan.writes(op, rng) {
            Written::All(texts) => {
                let marked: Vec<String> = texts.iter().map(|t| stamped(tag, seq, t)).collect();
                let cells: Box<[u64]> = (0..texts.len()).map(|f| plan.cell(keynum, f)).collect();
                let pending = recorder.pending_write(Cells::Many(cells), seq);
                let result = if op == INSERT {
                    let mut bound: Vec<&str> = Vec::with_capacity(marked.len() + 1);
                    bound.push(key);
                    bound.extend(marked.iter().map(String::as_str));
                    self.requests.execute(&s.insert, bound).await
                } else {
                    let mut bound: Vec<&str> = marked.iter().map(String::as_str).collect();
                    bound.push(key);
                    self.requests.execute(&s.update_all, bound).await
                };
                pending.answered(result.is_ok());
                result
            }
            Written::One(field, text) => {
                let marked = stamped(tag, seq, text);
                let pending = recorder.pending_write(Cells::One(plan.cell(keynum, field)), seq);
                let result = self
                    .requests
                    .execute(&s.update_one[field], (marked.as_str(), key))
                    .await;
                pending.answered(result.is_ok());
                result
            }
            Written::Nothing => unreachable!("an INSERT or an UPDATE writes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::config;
    use super::*;

    fn values(plan: &Plan) -> YcsbValues<'_> {
        YcsbValues {
            plan,
            tag: RunTag(7),
            names: HashMap::new(),
        }
    }

    /// A value written again from the request its mark names: that request's, for its key
    /// and field; anything else corrupt, another run's unchecked, none missing.
    #[test]
    fn a_value_read_back_names_its_request_key_and_field() {
        let plan = Plan::new(config("a", &[("recordcount", "50")]).unwrap(), 3);
        let values = values(&plan);
        let text = |s: String| Some(CqlValue::Text(s));
        // The load phase's INSERTs write every field.
        for seq in [0, 17, 49] {
            for field in 0..10 {
                let (keynum, written) = plan.written(seq, field).unwrap();
                assert_eq!(keynum, seq, "the load inserts keys in order");
                let value = stamped(values.tag, seq, written);
                let seen = |k, f| values.seen(k, f, text(value.clone()).as_ref());
                assert_eq!(seen(keynum, field), Seen::Written(seq));
                assert_eq!(seen(keynum + 1, field), Seen::Corrupt, "another key's");
                assert_eq!(
                    seen(keynum, (field + 1) % 10),
                    Seen::Corrupt,
                    "another field's"
                );
                let other_run = stamped(RunTag(8), seq, written);
                assert_eq!(
                    values.seen(keynum, field, text(other_run).as_ref()),
                    Seen::Foreign
                );
            }
        }
        assert_eq!(values.seen(3, 0, None), Seen::Missing);
        // Workload a's UPDATEs write one field: a value of it for that field only; its
        // READs write nothing.
        let mut updates = 0;
        let mut reads = 0;
        for seq in 50..250 {
            let fields: Vec<usize> = (0..10)
                .filter(|&f| plan.written(seq, f).is_some())
                .collect();
            match plan.op_of(seq) {
                UPDATE => {
                    updates += 1;
                    assert_eq!(fields.len(), 1, "request {seq}");
                    let (keynum, written) = plan.written(seq, fields[0]).unwrap();
                    assert!(keynum < 50, "an update of a loaded key: {keynum}");
                    let value = stamped(values.tag, seq, written);
                    assert_eq!(
                        values.seen(keynum, fields[0], text(value).as_ref()),
                        Seen::Written(seq)
                    );
                }
                READ => {
                    reads += 1;
                    assert!(fields.is_empty(), "request {seq} reads");
                }
                op => panic!("workload a has no op {op}"),
            }
        }
        assert!(
            updates > 60 && reads > 60,
            "{updates} updates, {reads} reads"
        );
    }

    /// A READ-MODIFY-WRITE that reads one field draws it before its update's, as its read
    /// does; every field written again agrees with itself.
    #[test]
    fn a_read_modify_write_replays_its_reads_draw_first() {
        let one = config("f", &[("recordcount", "20"), ("readallfields", "false")]).unwrap();
        let plan = Plan::new(one, 5);
        let rmw = (20..400)
            .find(|&seq| plan.op_of(seq) == READ_MODIFY_WRITE)
            .expect("workload f has read-modify-writes");
        let mut rng = request_rng(plan.seed, rmw);
        let keynum = plan.keynum(READ_MODIFY_WRITE, rmw, &mut rng);
        plan.field(&mut rng); // the read's
        let field = plan.field(&mut rng);
        let text = plan.value(&mut rng);
        assert_eq!(plan.written(rmw, field), Some((keynum, text)));
    }

    #[test]
    fn values_too_short_for_the_mark_are_refused() {
        let short = config("a", &[("fieldlength", "20")]).unwrap();
        let error = check_supported(&short).unwrap_err();
        assert!(error.contains("as short as 20 characters"), "{error}");
        let uniform = config(
            "a",
            &[
                ("fieldlengthdistribution", "uniform"),
                ("minfieldlength", "5"),
            ],
        )
        .unwrap();
        assert!(check_supported(&uniform).is_err());
        assert!(check_supported(&config("a", &[]).unwrap()).is_ok());
    }
}
