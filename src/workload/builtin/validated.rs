//! keyvalue under `--validate`: each write's value carries the mark of the request that
//! wrote it ([`crate::validation::stamp`]) and is noted with its send and answer times; each
//! read fetches its row and says whether the value is one of this key's writes; the final
//! check reads the whole table back.
//!
//! Which workloads can be checked, and why the others cannot yet, is [`check_supported`].

use scylla::errors::ExecutionError;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;

use crate::validation::stamp::{read_stamp, stamped, Stamp};
use crate::validation::{Recorder, Seen};
use crate::workload::common::generators::{request_rng, PartitionKeys, TextPool};
use crate::workload::common::send::Requests;
use crate::workload::common::settings::WorkloadSettings;

/// Why `--validate` cannot check a workload of these settings, if it cannot.
pub fn check_supported<D>(config: &WorkloadSettings<D>) -> Result<(), String> {
    if config.name != "keyvalue" {
        return Err(not_checked(&config.name));
    }
    if config.delete_ratio > 0.0 {
        return Err(format!(
            "--validate with --delete-ratio {}: a row a delete removed cannot yet be told from \
             a lost one; give --delete-ratio 0",
            config.delete_ratio
        ));
    }
    if config.ttl_s.is_some() {
        return Err(
            "--validate with --ttl: a row that expired cannot be told from a lost one; leave \
             out --ttl"
                .to_string(),
        );
    }
    Ok(())
}

/// Why `--validate` refuses the workload `name`.
pub fn not_checked(name: &str) -> String {
    format!(
        "--validate checks the keyvalue workload, whose every value names the request that \
         wrote it; {} cannot be checked yet",
        if name.is_empty() {
            "this workload".to_string()
        } else {
            format!("'{name}'")
        }
    )
}

/// A keyvalue write of request `seq` to `key` through `requests`, noted in the record.
pub async fn write(
    requests: &Requests,
    recorder: &Recorder,
    statement: &PreparedStatement,
    (seed, seq): (u64, u64),
    (key, key_text): (u64, &str),
    text: &str,
) -> Result<(), ExecutionError> {
    let value = stamped(seed, seq, text);
    let mut pending = Pending {
        recorder,
        key,
        seq,
        sent_ns: recorder.now_ns(),
        answered: false,
    };
    let result = requests
        .execute(statement, (key_text, value.as_str()))
        .await;
    let acked_ns = result.is_ok().then(|| recorder.now_ns());
    recorder.write(key, seq, pending.sent_ns, acked_ns);
    pending.answered = true;
    result
}

/// A write sent and not yet answered. The engine drops a request it times out before the
/// answer comes: the write is then noted as one that may or may not have applied.
struct Pending<'a> {
    recorder: &'a Recorder,
    key: u64,
    seq: u64,
    sent_ns: u64,
    answered: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.recorder.write(self.key, self.seq, self.sent_ns, None);
        }
    }
}

/// A keyvalue read of `key` through `requests`, its answer judged by the record (`values`
/// says what a value is). A read that failed says nothing of the data.
pub async fn read(
    requests: &Requests,
    recorder: &Recorder,
    statement: &PreparedStatement,
    values: &Values<'_>,
    (key, key_text): (u64, &str),
) -> Result<(), ExecutionError> {
    let sent_ns = recorder.now_ns();
    let answer = requests.fetch(statement, (key_text,)).await?;
    let seen = match answer.rows.first() {
        None => Seen::Missing,
        Some(_) => values.seen(key, answer.first("value")),
    };
    recorder.read(key, sent_ns, seen);
    Ok(())
}

/// What draws a keyvalue request's key and value: enough to write any request's value again.
#[derive(Debug, Clone, Copy)]
pub struct Values<'a> {
    /// The run's seed.
    pub seed: u64,
    /// The keys requests are drawn from.
    pub keys: &'a PartitionKeys,
    /// The text values are cut from.
    pub text: &'a TextPool,
}

impl Values<'_> {
    /// What a row's value says of key `key`: written by which of this run's requests, or
    /// corrupt, or not this run's to check.
    pub fn seen(&self, key: u64, value: Option<&CqlValue>) -> Seen {
        let Some(CqlValue::Text(value)) = value else {
            return Seen::Corrupt;
        };
        match read_stamp(value, self.seed) {
            Stamp::Foreign => Seen::Foreign,
            Stamp::Damaged => Seen::Corrupt,
            Stamp::Request(seq) => {
                // Write request `seq` again: its key, then its value, drawn as it drew them.
                let mut rng = request_rng(self.seed, seq);
                let its_key = self.keys.key(seq, &mut rng);
                let text = self.text.text(&mut rng, 100, 200);
                if its_key == key && stamped(self.seed, seq, text) == *value {
                    Seen::Written(seq)
                } else {
                    Seen::Corrupt
                }
            }
        }
    }
}

/// The record's number of a keyvalue key (its decimal text), if it is one of headroom's.
pub fn key_number(key: &CqlValue) -> Option<u64> {
    match key {
        CqlValue::Text(text) => text.parse().ok(),
        _ => None,
    }
}
