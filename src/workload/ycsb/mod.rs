//! YCSB's CoreWorkload on the table YCSB's Cassandra binding uses.
//!
//! The workload comes from YCSB's property format (`-P` files, `-p KEY=VALUE`, or one of the
//! core workloads a to f with `--workload`); see docs/ycsb.md. The load phase inserts
//! `recordcount` records with keys 0..recordcount (headroom's populate); the run phase sends
//! READ, UPDATE, INSERT, SCAN and READ-MODIFY-WRITE in YCSB's proportions, exactly.
//!
//! Request `seq` is a function of the seed and `seq` alone: the run phase's requests are
//! numbered from `recordcount` on (after the load's), and the number of inserts before a
//! request follows from the exact operation mix, so its newest existing key is known without
//! counting acknowledgements as YCSB does.
//!
//! The property files as written are read in `raw.rs`, checked into the settings of
//! `model.rs`; the key, length and value generators are in `values.rs`; this file
//! prepares the statements and sends each request.

pub mod histogram;
mod model;
pub mod raw;
pub mod validated;
pub mod values;

pub use model::{
    resolve, settle, FieldLengthDistribution, InsertOrder, ScanLengthDistribution, YcsbConfig,
};

use std::time::Instant;

use scylla::errors::ExecutionError;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;

use self::model::{INSERT, READ, READ_MODIFY_WRITE, SCAN, UPDATE};
use self::values::{key_name, KeyChooser, KeySettings, LengthChooser};
use super::common::error::WorkloadError;
use super::common::generators::{request_rng, TextPool};
use super::common::mix::{OpMix, Operations};
use super::common::schema::{
    await_agreement, check_table_columns, create_keyspace, drop_keyspace, check_keyspace_flag,
    run_schema, table_options,
};
use super::common::checked::FinalRead;
use super::common::send::Requests;
use super::common::statements::{parse_consistency, prepare};
use super::common::settings::WorkloadSettings;
use super::common::workload::{Parts, Workload};

/// The name `headroom run` accepts for this format.
pub const NAME: &str = "ycsb";


/// The operation types, named as YCSB prints them.
pub const OP_NAMES: &[&str] = &["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"];

/// The order of operation types in the mix: INSERT first, so that the inserts among the
/// first n requests are exactly floor(n × share) (see [`OpMix::first_type_count`]).
const MIX_ORDER: [usize; 5] = [INSERT, READ, UPDATE, SCAN, READ_MODIFY_WRITE];

/// The prepared statements; the per-field ones are empty when every field is read or
/// written.
#[derive(Debug)]
struct Statements {
    insert: PreparedStatement,
    /// SELECT * for one key.
    read_all: PreparedStatement,
    /// SELECT of every column by name, with readallfieldsbyname.
    read_named: Option<PreparedStatement>,
    read_one: Vec<PreparedStatement>,
    scan_all: PreparedStatement,
    scan_one: Vec<PreparedStatement>,
    update_all: PreparedStatement,
    update_one: Vec<PreparedStatement>,
}

/// What each request is, as a function of the seed and its sequence number: the part of
/// the workload that needs no connection.
#[derive(Debug)]
struct Plan {
    config: YcsbConfig,
    /// The five types, the mix dealing INSERT first from the run phase on.
    operations: Operations,
    keys: KeyChooser,
    scan_lengths: LengthChooser,
    field_lengths: LengthChooser,
    text: TextPool,
    seed: u64,
}

/// A YCSB workload, ready to send requests.
#[derive(Debug)]
pub struct Ycsb {
    plan: Plan,
    statements: Statements,
    /// The measured requests' path.
    requests: Requests,
    /// The columns' names, by field.
    columns: Vec<String>,
    /// `--validate`: where writes and reads are noted ([`validated`]).
    recorder: Option<crate::validation::Recorder>,
}

impl Ycsb {
    /// Creates the keyspace and usertable when missing (or anew with `drop`), checks an
    /// existing table's columns, and prepares the statements.
    pub async fn prepare<D: Sync>(
        requests: Requests,
        config: &WorkloadSettings<D>,
        ycsb: &YcsbConfig,
        recorder: Option<crate::validation::Recorder>,
    ) -> Result<Ycsb, WorkloadError> {
        let session = requests.session().clone();
        let ks = &config.keyspace;
        check_keyspace_flag(ks)?;
        let default = parse_consistency(&config.consistency)?;
        let read_cl = match &ycsb.read_consistency {
            Some(cl) => parse_consistency(cl)?,
            None => default,
        };
        let write_cl = match &ycsb.write_consistency {
            Some(cl) => parse_consistency(cl)?,
            None => default,
        };
        let table = &ycsb.table;
        let columns = ycsb.columns();
        // Quoted, so that a fieldnameprefix in capitals names the columns as written.
        let quoted: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
        if config.drop {
            drop_keyspace(&session, ks).await?;
        }
        create_keyspace(&session, ks, &config.replication).await?;
        let mut expected: Vec<(String, String)> = vec![("y_id".into(), "text".into())];
        expected.extend(columns.iter().map(|c| (c.clone(), "text".to_string())));
        check_table_columns(&session, ks, table, &expected, NAME).await?;
        let options = table_options(config.compaction.as_deref(), config.ttl_s);
        let fields: Vec<String> = quoted.iter().map(|c| format!("{c} varchar")).collect();
        run_schema(
            &session,
            format!(
                "CREATE TABLE IF NOT EXISTS {ks}.{table} (y_id varchar PRIMARY KEY, {}){options}",
                fields.join(", ")
            ),
        )
        .await?;
        await_agreement(&session).await?;

        let prepare = |cql: String, consistency: Consistency| {
            let session = session.clone();
            async move { prepare(&session, &cql, consistency, "preparing a statement").await }
        };
        let placeholders = vec!["?"; columns.len()].join(", ");
        let all = quoted.join(", ");
        let set_all: Vec<String> = quoted.iter().map(|c| format!("{c} = ?")).collect();
        let read = |what: &str| format!("SELECT {what} FROM {ks}.{table} WHERE y_id = ? LIMIT 1");
        // As YCSB's Cassandra binding: rows from the start key's token on.
        let scan = |what: &str| {
            format!("SELECT {what} FROM {ks}.{table} WHERE token(y_id) >= token(?) LIMIT ?")
        };
        let mut statements = Statements {
            insert: prepare(
                format!("INSERT INTO {ks}.{table} (y_id, {all}) VALUES (?, {placeholders})"),
                write_cl,
            )
            .await?,
            read_all: prepare(read("*"), read_cl).await?,
            read_named: None,
            read_one: Vec::new(),
            scan_all: prepare(scan("*"), read_cl).await?,
            scan_one: Vec::new(),
            update_all: prepare(
                format!(
                    "UPDATE {ks}.{table} SET {} WHERE y_id = ?",
                    set_all.join(", ")
                ),
                write_cl,
            )
            .await?,
            update_one: Vec::new(),
        };
        if ycsb.readallfields && ycsb.readallfieldsbyname {
            statements.read_named = Some(prepare(read(&all), read_cl).await?);
        }
        if !ycsb.readallfields {
            for c in &quoted {
                statements.read_one.push(prepare(read(c), read_cl).await?);
                statements.scan_one.push(prepare(scan(c), read_cl).await?);
            }
        }
        if !ycsb.writeallfields {
            for c in &quoted {
                statements.update_one.push(
                    prepare(
                        format!("UPDATE {ks}.{table} SET {c} = ? WHERE y_id = ?"),
                        write_cl,
                    )
                    .await?,
                );
            }
        }
        Ok(Ycsb {
            plan: Plan::new(ycsb.clone(), config.seed),
            statements,
            requests,
            columns,
            recorder,
        })
    }
}

/// How a YCSB run's keys are chosen, from its properties (the run and the fuzz target of the
/// properties both build their key chooser from it).
pub fn key_settings(config: &YcsbConfig) -> KeySettings {
    KeySettings {
        distribution: config.requestdistribution,
        start: config.insertstart,
        count: config.insert_count(),
        records: config.recordcount,
        // YCSB sizes the zipfian's key range by operationcount × insertproportion.
        expected_inserts: config.operationcount as f64 * config.insertproportion,
        theta: config.zipfianconstant,
        hotspot_data_fraction: config.hotspotdatafraction,
        hotspot_opn_fraction: config.hotspotopnfraction,
        exponential_percentile: config.exponential_percentile,
        exponential_frac: config.exponential_frac,
    }
}

impl Plan {
    fn new(config: YcsbConfig, seed: u64) -> Plan {
        let weights = config.weights();
        let mix_weights: Vec<f64> = MIX_ORDER.iter().map(|&op| weights[op]).collect();
        let keys = KeyChooser::new(&key_settings(&config));
        let scan_lengths = match config.scanlengthdistribution {
            ScanLengthDistribution::Uniform => {
                LengthChooser::Uniform(config.minscanlength, config.maxscanlength)
            }
            ScanLengthDistribution::Zipfian => {
                LengthChooser::zipfian(config.minscanlength, config.maxscanlength)
            }
        };
        let field_lengths = match config.fieldlengthdistribution {
            FieldLengthDistribution::Constant => LengthChooser::Constant(config.fieldlength),
            FieldLengthDistribution::Uniform => {
                LengthChooser::Uniform(config.minfieldlength, config.fieldlength)
            }
            FieldLengthDistribution::Zipfian => {
                LengthChooser::zipfian(config.minfieldlength, config.fieldlength)
            }
            FieldLengthDistribution::Histogram => match &config.fieldlengthhistogram {
                Some(histogram) => LengthChooser::Histogram(histogram.lengths()),
                // Resolving the workload reads the file; a config.json without its buckets
                // was edited by hand.
                None => LengthChooser::Constant(config.fieldlength),
            },
        };
        // A read-modify-write is recorded under READ and UPDATE too: they show in the live
        // output whenever it does.
        let mut shares = weights;
        shares[READ] += shares[READ_MODIFY_WRITE];
        shares[UPDATE] += shares[READ_MODIFY_WRITE];
        let operations = Operations::with_mix(
            OP_NAMES.iter().map(|s| s.to_string()).collect(),
            shares.to_vec(),
            OpMix::new(&mix_weights),
            INSERT,
        )
        .dealt_in(MIX_ORDER.to_vec(), config.insert_count());
        Plan {
            operations,
            keys,
            scan_lengths,
            field_lengths,
            text: TextPool::new(seed),
            seed,
            config,
        }
    }

    /// The load phase's requests: numbers 0..insertcount; the run phase's follow.
    fn loaded(&self) -> u64 {
        self.config.insert_count()
    }

    /// The key number request `seq` inserts: insertstart + its number in the load phase,
    /// else, in the run phase, the next after those inserted before it from recordcount on
    /// (YCSB's run numbers its inserts from recordcount, whatever range this client loaded).
    fn insert_keynum(&self, seq: u64) -> u64 {
        match seq.checked_sub(self.loaded()) {
            None => self.config.insertstart + seq,
            Some(index) => self.config.recordcount + self.operations.mix().first_type_count(index),
        }
    }

    /// The newest key number that exists when run-phase request `seq` is sent.
    fn newest_keynum(&self, seq: u64) -> u64 {
        let inserted = self
            .operations
            .mix()
            .first_type_count(seq.saturating_sub(self.loaded()));
        (self.config.recordcount + inserted).saturating_sub(1)
    }

    /// The key number request `seq` of type `op` works on.
    fn keynum(&self, op: usize, seq: u64, rng: &mut rand::rngs::SmallRng) -> u64 {
        if op == INSERT {
            self.insert_keynum(seq)
        } else {
            // The run's requests before this one that chose a key: all but its inserts.
            let index = seq.saturating_sub(self.loaded());
            let nth = index - self.operations.mix().first_type_count(index);
            self.keys.choose(self.newest_keynum(seq), nth, rng)
        }
    }

    fn key(&self, keynum: u64) -> String {
        key_name(
            keynum,
            self.config.insertorder == InsertOrder::Hashed,
            self.config.zeropadding as usize,
        )
    }

    /// A value for one field.
    fn value(&self, rng: &mut rand::rngs::SmallRng) -> &str {
        let len = self.field_lengths.choose(rng) as usize;
        self.text.text(rng, len, len)
    }

    /// A random field.
    fn field(&self, rng: &mut rand::rngs::SmallRng) -> usize {
        use rand::Rng;
        rng.random_range(0..self.config.fieldcount as usize)
    }
}

impl Ycsb {
    /// The read of a key: every field, or one at random.
    async fn read(
        &self,
        key: &str,
        rng: &mut rand::rngs::SmallRng,
        named: bool,
    ) -> Result<(), ExecutionError> {
        let s = &self.statements;
        let statement = if !self.plan.config.readallfields {
            &s.read_one[self.plan.field(rng)]
        } else if let (true, Some(named)) = (named, &s.read_named) {
            named
        } else {
            &s.read_all
        };
        self.requests.execute(statement, (key,)).await?;
        Ok(())
    }

    /// The update of a key: every field, or one at random, with new values.
    async fn update(
        &self,
        key: &str,
        rng: &mut rand::rngs::SmallRng,
    ) -> Result<(), ExecutionError> {
        let s = &self.statements;
        if self.plan.config.writeallfields {
            let mut values: Vec<&str> = (0..self.plan.config.fieldcount)
                .map(|_| self.plan.value(rng))
                .collect();
            values.push(key);
            self.requests.execute(&s.update_all, values).await?;
        } else {
            let field = self.plan.field(rng);
            let value = self.plan.value(rng);
            self.requests
                .execute(&s.update_one[field], (value, key))
                .await?;
        }
        Ok(())
    }
}

impl Workload for Ycsb {
    fn operations(&self) -> &Operations {
        &self.plan.operations
    }

    async fn execute(&self, op: usize, seq: u64, parts: &mut Parts) -> Result<(), ExecutionError> {
        match &self.recorder {
            Some(recorder) => self.execute_validated(recorder, op, seq, parts).await,
            None => self.execute_unchecked(op, seq, parts).await,
        }
    }
}

impl Ycsb {
    /// Where its requests note their outcome under `--validate`, if they do.
    pub fn recorder(&self) -> Option<&crate::validation::Recorder> {
        self.recorder.as_ref()
    }

    /// How the final check of `--validate` reads the whole table back: every field of
    /// every key; `None` when the run does not validate.
    pub fn final_check(&self, keyspace: &str) -> Option<FinalRead<'_>> {
        let recorder = self.recorder.as_ref()?;
        let quoted: Vec<String> = self.columns.iter().map(|c| format!("\"{c}\"")).collect();
        Some(FinalRead {
            cql: format!(
                "SELECT y_id, {} FROM {keyspace}.{}",
                quoted.join(", "),
                self.plan.config.table
            ),
            counted: crate::validation::Counted::Fields,
            judge: Box::new(self.values(recorder)),
        })
    }

    /// One request as it is sent without `--validate`.
    async fn execute_unchecked(
        &self,
        op: usize,
        seq: u64,
        parts: &mut Parts,
    ) -> Result<(), ExecutionError> {
        let mut rng = request_rng(self.plan.seed, seq);
        let key = self.plan.key(self.plan.keynum(op, seq, &mut rng));
        if op == INSERT {
            let mut values: Vec<&str> =
                Vec::with_capacity(self.plan.config.fieldcount as usize + 1);
            values.push(&key);
            for _ in 0..self.plan.config.fieldcount {
                values.push(self.plan.value(&mut rng));
            }
            self.requests
                .execute(&self.statements.insert, values)
                .await?;
            return Ok(());
        }
        match op {
            READ => self.read(&key, &mut rng, true).await,
            UPDATE => self.update(&key, &mut rng).await,
            SCAN => {
                let rows = self.plan.scan_lengths.choose(&mut rng) as i32;
                let s = &self.statements;
                let statement = if self.plan.config.readallfields {
                    &s.scan_all
                } else {
                    &s.scan_one[self.plan.field(&mut rng)]
                };
                self.requests
                    .execute(statement, (key.as_str(), rows))
                    .await?;
                Ok(())
            }
            READ_MODIFY_WRITE => {
                let start = Instant::now();
                if let Err(e) = self.read(&key, &mut rng, false).await {
                    parts.push(READ, start.elapsed(), true);
                    return Err(e);
                }
                let between = Instant::now();
                parts.push(READ, between - start, false);
                let result = self.update(&key, &mut rng).await;
                parts.push(UPDATE, between.elapsed(), result.is_err());
                result
            }
            _ => unreachable!("ycsb has five operation types"),
        }
    }
}

#[cfg(test)]
mod tests;
