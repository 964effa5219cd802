//! keyvalue and timeseries under `--validate`: each write's value carries the mark of the
//! request that wrote it ([`crate::validation::stamp`]) and is noted with its send and answer
//! times; each read fetches its rows and says whether their values are this key's writes;
//! the final check reads the whole table back.
//!
//! The two share their requests' shape: a write binds (key, text) and a read (key). A
//! keyvalue key holds one value, the newest write's; a timeseries partition holds a row per
//! write, newest first, so the newest row a read returns plays the part of keyvalue's value
//! (proven older than a write acknowledged before the read was sent, that write's row is
//! missing: stale), and every row is checked for corruption. A row missing beneath a newer
//! one is left to the final check, which counts every acknowledged write's row.
//!
//! Which workloads can be checked, and why the others cannot yet, is [`check_supported`].

use scylla::errors::ExecutionError;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;

use crate::validation::stamp::{read_stamp, stamped, RunTag, Stamp, STAMP_LEN};
use crate::validation::{Cells, FinalTally, Recorder, Seen};
use crate::workload::common::checked::JudgeRows;
use crate::workload::common::generators::{request_rng, PartitionKeys, TextPool};
use crate::workload::common::send::Requests;
use crate::workload::common::settings::WorkloadSettings;

/// Why `--validate` cannot check a workload of these settings, if it cannot.
pub fn check_supported<D>(config: &WorkloadSettings<D>) -> Result<(), String> {
    if !CHECKED.contains(&config.name.as_str()) {
        return Err(not_checked(&config.name));
    }
    if config.delete_ratio > 0.0 {
        return Err(format!(
            "--validate with --delete-ratio {}: a row a delete removed cannot yet be told from \
             a lost one; give --delete-ratio 0",
            config.delete_ratio
        ));
    }
    crate::workload::common::checked::check_no_ttl(config)
}

/// The built-in workloads `--validate` checks.
pub const CHECKED: &[&str] = &["keyvalue", "timeseries"];

/// Why `--validate` refuses the workload `name`.
pub fn not_checked(name: &str) -> String {
    format!(
        "--validate checks keyvalue, timeseries and YCSB, whose every value names the request \
         that wrote it; {} cannot be checked yet",
        if name.is_empty() {
            "this workload".to_string()
        } else {
            format!("'{name}'")
        }
    )
}

/// Write request `seq` through `requests` (its key and text drawn by `values`), noted in the
/// record.
pub async fn write(
    requests: &Requests,
    recorder: &Recorder,
    statement: &PreparedStatement,
    values: &Values<'_>,
    seq: u64,
) -> Result<(), ExecutionError> {
    let (key, text) = values.request(seq);
    let mut key_text = itoa::Buffer::new();
    let key_text = key_text.format(key);
    let value = stamped(values.tag, seq, text);
    let pending = recorder.pending_write(Cells::One(key), seq);
    let result = requests
        .execute(statement, (key_text, value.as_str()))
        .await;
    pending.answered(result.is_ok());
    result
}

/// A read of `key` through `requests`, the values of its `column` judged by the record
/// (`values` says what a value is): the newest row's, and every row's for corruption. A
/// read that failed says nothing of the data.
pub async fn read(
    requests: &Requests,
    recorder: &Recorder,
    statement: &PreparedStatement,
    values: &Values<'_>,
    (key, key_text): (u64, &str),
    column: &str,
) -> Result<(), ExecutionError> {
    let sent_ns = recorder.now_ns();
    let answer = requests.fetch(statement, (key_text,)).await?;
    let at = answer.columns.iter().position(|c| c == column);
    let mut seen = Seen::Missing;
    for (i, row) in answer.rows.iter().enumerate() {
        let value = at.and_then(|at| row.get(at)).and_then(Option::as_ref);
        match values.seen(key, value) {
            Seen::Corrupt => {
                seen = Seen::Corrupt;
                break;
            }
            newest if i == 0 => seen = newest,
            _ => {}
        }
    }
    recorder.read(key, sent_ns, seen);
    Ok(())
}

/// What draws a request's key and value: enough to write any request's value again.
#[derive(Debug, Clone, Copy)]
pub struct Values<'a> {
    /// The run's seed.
    pub seed: u64,
    /// The run's tag, at the head of its values.
    pub tag: RunTag,
    /// The keys requests are drawn from.
    pub keys: &'a PartitionKeys,
    /// The text values are cut from.
    pub text: &'a TextPool,
}

impl<'a> Values<'a> {
    /// Request `seq`'s key and text (before its mark), drawn in the order every built-in
    /// write draws them: the one place a validated write and the check of its value agree on.
    pub fn request(&self, seq: u64) -> (u64, &'a str) {
        let mut rng = request_rng(self.seed, seq);
        let key = self.keys.key(seq, &mut rng);
        (key, self.text.text(&mut rng, 100, 200))
    }

    /// What a row's value says of key `key`: written by which of this run's requests, or
    /// corrupt, or not this run's to check.
    pub fn seen(&self, key: u64, value: Option<&CqlValue>) -> Seen {
        let Some(CqlValue::Text(value)) = value else {
            return Seen::Corrupt;
        };
        match read_stamp(value, self.tag) {
            Stamp::Foreign => Seen::Foreign,
            Stamp::Damaged => Seen::Corrupt,
            Stamp::Request(seq) => {
                // Write request `seq` again and compare past the mark, which read_stamp read.
                let (its_key, text) = self.request(seq);
                let same = value.len() == text.len()
                    && value.as_bytes()[STAMP_LEN..] == text.as_bytes()[STAMP_LEN..];
                if its_key == key && same {
                    Seen::Written(seq)
                } else {
                    Seen::Corrupt
                }
            }
        }
    }
}

/// The record's number of a key (its decimal text), if it is one of headroom's.
pub fn key_number(key: &CqlValue) -> Option<u64> {
    match key {
        CqlValue::Text(text) => text.parse().ok(),
        _ => None,
    }
}

/// keyvalue's and timeseries' rows are (key, value): the key's number and what its value
/// says.
impl JudgeRows for Values<'_> {
    fn row(&self, columns: Vec<Option<CqlValue>>, tally: &mut FinalTally<'_>) {
        let mut columns = columns.into_iter();
        let key = columns.next().flatten();
        let value = columns.next().flatten();
        let key = key.as_ref().and_then(key_number);
        let seen = match key {
            Some(key) => self.seen(key, value.as_ref()),
            None => Seen::Foreign,
        };
        tally.row(key, seen);
    }
}
