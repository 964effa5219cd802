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

pub mod generators;
pub mod properties;

use std::sync::Arc;
use std::time::Instant;

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use serde::{Deserialize, Serialize};

use self::generators::{key_name, KeyChooser, LengthChooser, RequestDistribution};
use self::properties::{Origin, Properties, Property};
use super::builtin::{check_table_columns, parse_consistency, run_schema, WorkloadError};
use super::generators::{request_rng, TextPool};
use super::{OpMix, Parts, Workload, WorkloadConfig};
use crate::workload::WorkloadRequest;

/// The name `headroom run` accepts for this format.
pub const NAME: &str = "ycsb";

/// The keyspace when `--keyspace` is left at headroom's default: YCSB's binding's.
pub const KEYSPACE: &str = "ycsb";

/// Operation type indexes.
const READ: usize = 0;
const UPDATE: usize = 1;
const INSERT: usize = 2;
const SCAN: usize = 3;
const READ_MODIFY_WRITE: usize = 4;

/// The operation types, named as YCSB prints them.
pub const OP_NAMES: &[&str] = &["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"];

/// How the lengths of field values are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldLengthDistribution {
    /// Always fieldlength.
    Constant,
    /// Uniformly from minfieldlength to fieldlength.
    Uniform,
    /// Zipfian from minfieldlength (most frequent) to fieldlength.
    Zipfian,
}

/// How scan lengths are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScanLengthDistribution {
    /// Uniformly from minscanlength to maxscanlength.
    Uniform,
    /// Zipfian from minscanlength (most frequent) to maxscanlength.
    Zipfian,
}

/// Whether key numbers are hashed before they become keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InsertOrder {
    /// user + FNV-64 hash of the key number: inserts scattered over the key space.
    Hashed,
    /// user + the key number.
    Ordered,
}

/// A YCSB workload, resolved from its properties, as stored in config.json (the names are
/// YCSB's keys).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct YcsbConfig {
    /// Records inserted by the load phase, key numbers 0..recordcount.
    pub recordcount: u64,
    /// Requests of the run phase when neither --duration nor --ops is given.
    pub operationcount: u64,
    /// Share of reads.
    pub readproportion: f64,
    /// Share of updates.
    pub updateproportion: f64,
    /// Share of inserts (of new keys, from recordcount on).
    pub insertproportion: f64,
    /// Share of scans.
    pub scanproportion: f64,
    /// Share of read-modify-writes.
    pub readmodifywriteproportion: f64,
    /// How keys are chosen.
    pub requestdistribution: RequestDistribution,
    /// The exponent of the zipfian and latest distributions.
    pub zipfianconstant: f64,
    /// hotspot: the share of the keys in the hot set.
    pub hotspotdatafraction: f64,
    /// hotspot: the share of requests to the hot set.
    pub hotspotopnfraction: f64,
    /// Columns field0..field{fieldcount-1}.
    pub fieldcount: u32,
    /// Length of a field's value (the longest, when not constant).
    pub fieldlength: u64,
    /// The shortest field value, when not constant.
    pub minfieldlength: u64,
    /// How field lengths are chosen.
    pub fieldlengthdistribution: FieldLengthDistribution,
    /// Reads and scans fetch every field (else one, chosen at random).
    pub readallfields: bool,
    /// Reads of every field name the columns instead of `*`.
    pub readallfieldsbyname: bool,
    /// Updates write every field (else one, chosen at random).
    pub writeallfields: bool,
    /// Whether key numbers are hashed into keys.
    pub insertorder: InsertOrder,
    /// Key numbers are left-padded with zeros to this many digits.
    pub zeropadding: u32,
    /// The shortest scan, in rows.
    pub minscanlength: u64,
    /// The longest scan, in rows.
    pub maxscanlength: u64,
    /// How scan lengths are chosen.
    pub scanlengthdistribution: ScanLengthDistribution,
    /// The table, in the run's keyspace.
    pub table: String,
    /// Consistency of reads and scans, when the properties set it (else --consistency).
    #[serde(rename = "cassandra.readconsistencylevel")]
    pub read_consistency: Option<String>,
    /// Consistency of inserts and updates, when the properties set it (else --consistency).
    #[serde(rename = "cassandra.writeconsistencylevel")]
    pub write_consistency: Option<String>,
}

/// Reads the YCSB workload the command line gives (`--workload`, `-P`, `-p`).
pub fn resolve(args: &WorkloadRequest) -> Result<YcsbConfig, WorkloadError> {
    for (given, flag, instead) in [
        (
            args.read_ratio.is_some_and(|r| r != 0.0),
            "--read-ratio",
            "-p readproportion=...",
        ),
        (
            args.delete_ratio != 0.0,
            "--delete-ratio",
            "nothing: YCSB has no deletes",
        ),
        (
            args.populate != 0,
            "--populate",
            "-p recordcount=N (the load phase)",
        ),
        (
            args.op_mix.is_some(),
            "--ops with weights",
            "the proportions, e.g. -p readproportion=0.9",
        ),
    ] {
        if given {
            return Err(WorkloadError::Invalid(format!(
                "{flag} is not for the ycsb workload; use {instead}"
            )));
        }
    }
    YcsbConfig::from_properties(&Properties::from_args(args)?)
}

/// Sets the shared settings YCSB's properties decide: the load is recordcount records, the
/// keyspace YCSB's own unless --keyspace names another.
pub fn settle(ycsb: &YcsbConfig, config: &mut WorkloadConfig) {
    config.populate = ycsb.recordcount;
    config.partitions = ycsb.recordcount.max(1);
    // --keyspace's default, "headroom", means none was named.
    if config.keyspace == "headroom" {
        config.keyspace = KEYSPACE.to_string();
    }
}

/// A property's value turned into a setting; errors name the key, its value and origin.
struct Reader<'a> {
    props: &'a Properties,
}

impl Reader<'_> {
    fn value<T>(
        &self,
        key: &str,
        default: T,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, WorkloadError> {
        match self.props.get(key) {
            None => Ok(default),
            Some(Property { value, origin }) => {
                parse(value).map_err(|why| invalid(origin, key, value, &why))
            }
        }
    }

    fn number<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, WorkloadError> {
        self.value(key, default, |v| {
            v.parse()
                .map_err(|_| "not a whole number (YCSB reads it as a plain integer)".to_string())
        })
    }

    fn fraction(&self, key: &str, default: f64) -> Result<f64, WorkloadError> {
        self.value(key, default, |v| match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
            Ok(_) => Err("must be a number of at least 0".into()),
            Err(_) => Err("not a number".into()),
        })
    }

    fn flag(&self, key: &str, default: bool) -> Result<bool, WorkloadError> {
        self.value(key, default, |v| match v.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err("must be true or false".into()),
        })
    }

    fn choice<T: Copy>(
        &self,
        key: &str,
        default: T,
        choices: &[(&str, T)],
    ) -> Result<T, WorkloadError> {
        self.value(key, default, |v| {
            choices
                .iter()
                .find(|(name, _)| *name == v)
                .map(|(_, c)| *c)
                .ok_or_else(|| {
                    let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
                    format!("headroom knows {}", names.join(", "))
                })
        })
    }

    fn consistency(&self, key: &str) -> Result<Option<String>, WorkloadError> {
        self.value(key, None, |v| {
            parse_consistency(v)
                .map(|_| Some(v.to_ascii_uppercase()))
                .map_err(|_| "not a consistency level: use ONE, TWO, THREE, QUORUM, ALL, LOCAL_ONE, LOCAL_QUORUM, EACH_QUORUM or ANY".into())
        })
    }

    /// An error about `key`, wherever it was set (or the defaults).
    fn error(&self, key: &str, why: &str) -> WorkloadError {
        match self.props.get(key) {
            Some(Property { value, origin }) => invalid(origin, key, value, why),
            None => WorkloadError::Invalid(format!("{key} (YCSB's default): {why}")),
        }
    }
}

fn invalid(origin: &Origin, key: &str, value: &str, why: &str) -> WorkloadError {
    WorkloadError::Invalid(format!("{origin}: {key}={value}: {why}"))
}

impl YcsbConfig {
    /// The workload the properties describe, with YCSB's defaults for keys not set.
    pub fn from_properties(props: &Properties) -> Result<YcsbConfig, WorkloadError> {
        let r = Reader { props };
        let config = YcsbConfig {
            recordcount: r.number("recordcount", 0)?,
            operationcount: r.number("operationcount", 0)?,
            readproportion: r.fraction("readproportion", 0.95)?,
            updateproportion: r.fraction("updateproportion", 0.05)?,
            insertproportion: r.fraction("insertproportion", 0.0)?,
            scanproportion: r.fraction("scanproportion", 0.0)?,
            readmodifywriteproportion: r.fraction("readmodifywriteproportion", 0.0)?,
            requestdistribution: r.value("requestdistribution", RequestDistribution::Uniform, |v| {
                match v {
                    "uniform" => Ok(RequestDistribution::Uniform),
                    "zipfian" => Ok(RequestDistribution::Zipfian),
                    "latest" => Ok(RequestDistribution::Latest),
                    "hotspot" => Ok(RequestDistribution::Hotspot),
                    "exponential" | "sequential" => Err(format!(
                        "headroom does not implement YCSB's {v} distribution yet; it knows uniform, zipfian, latest, hotspot"
                    )),
                    _ => Err("headroom knows uniform, zipfian, latest, hotspot".into()),
                }
            })?,
            zipfianconstant: r.value("zipfianconstant", 0.99, |v| match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
                _ => Err("must be a number between 0 and 1, both excluded (YCSB's zipfian generator is defined there)".into()),
            })?,
            hotspotdatafraction: r.fraction("hotspotdatafraction", 0.2)?,
            hotspotopnfraction: r.fraction("hotspotopnfraction", 0.8)?,
            fieldcount: r.number("fieldcount", 10)?,
            fieldlength: r.number("fieldlength", 100)?,
            minfieldlength: r.number("minfieldlength", 1)?,
            fieldlengthdistribution: r.value("fieldlengthdistribution", FieldLengthDistribution::Constant, |v| match v {
                "constant" => Ok(FieldLengthDistribution::Constant),
                "uniform" => Ok(FieldLengthDistribution::Uniform),
                "zipfian" => Ok(FieldLengthDistribution::Zipfian),
                "histogram" => Err("headroom does not implement YCSB's histogram field lengths yet; it knows constant, uniform, zipfian".into()),
                _ => Err("headroom knows constant, uniform, zipfian".into()),
            })?,
            readallfields: r.flag("readallfields", true)?,
            readallfieldsbyname: r.flag("readallfieldsbyname", false)?,
            writeallfields: r.flag("writeallfields", false)?,
            insertorder: r.choice("insertorder", InsertOrder::Hashed, &[("hashed", InsertOrder::Hashed), ("ordered", InsertOrder::Ordered)])?,
            zeropadding: r.number("zeropadding", 1)?,
            minscanlength: r.number("minscanlength", 1)?,
            maxscanlength: r.number("maxscanlength", 1000)?,
            scanlengthdistribution: r.choice("scanlengthdistribution", ScanLengthDistribution::Uniform, &[("uniform", ScanLengthDistribution::Uniform), ("zipfian", ScanLengthDistribution::Zipfian)])?,
            table: r.value("table", "usertable".to_string(), |v| {
                if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    Ok(v.to_string())
                } else {
                    Err("not a plain CQL table name (letters, digits, underscores)".into())
                }
            })?,
            read_consistency: r.consistency("cassandra.readconsistencylevel")?,
            write_consistency: r.consistency("cassandra.writeconsistencylevel")?,
        };
        config.check(&r)?;
        Ok(config)
    }

    /// Checks the settings against each other.
    fn check(&self, r: &Reader) -> Result<(), WorkloadError> {
        let weights = self.weights();
        if weights.iter().sum::<f64>() <= 0.0 {
            return Err(r.error(
                "readproportion",
                "every proportion (read, update, insert, scan, readmodifywrite) is 0: nothing to send",
            ));
        }
        // The mix divides each proportion by their sum: an infinite sum leaves every share 0.
        if !weights.iter().sum::<f64>().is_finite() {
            // The first of the largest, in the order of `weights`.
            let (largest, _) = [
                "readproportion",
                "updateproportion",
                "insertproportion",
                "scanproportion",
                "readmodifywriteproportion",
            ]
            .into_iter()
            .zip(weights)
            .fold(("readproportion", 0.0), |best, (key, w)| {
                if w > best.1 {
                    (key, w)
                } else {
                    best
                }
            });
            return Err(r.error(
                largest,
                "the proportions are too large to add up; they are shares, e.g. 0.95 and 0.05",
            ));
        }
        let needs_keys =
            weights[READ] + weights[UPDATE] + weights[SCAN] + weights[READ_MODIFY_WRITE] > 0.0;
        if needs_keys && self.recordcount == 0 {
            return Err(r.error(
                "recordcount",
                "must be at least 1: reads, updates and scans choose among the loaded records",
            ));
        }
        if self.recordcount > i64::MAX as u64 / 2 {
            return Err(r.error("recordcount", "too large"));
        }
        for (key, value) in [
            ("hotspotdatafraction", self.hotspotdatafraction),
            ("hotspotopnfraction", self.hotspotopnfraction),
        ] {
            if value > 1.0 {
                return Err(r.error(key, "must be between 0 and 1"));
            }
        }
        if !(1..=1024).contains(&self.fieldcount) {
            return Err(r.error("fieldcount", "must be between 1 and 1024"));
        }
        if !(1..=1 << 20).contains(&self.fieldlength) {
            return Err(r.error("fieldlength", "must be between 1 and 1048576"));
        }
        if self.fieldlengthdistribution != FieldLengthDistribution::Constant
            && !(1..=self.fieldlength).contains(&self.minfieldlength)
        {
            return Err(r.error("minfieldlength", "must be between 1 and fieldlength"));
        }
        if self.minscanlength < 1 {
            return Err(r.error("minscanlength", "must be at least 1"));
        }
        if self.maxscanlength < self.minscanlength || self.maxscanlength > i32::MAX as u64 {
            return Err(r.error(
                "maxscanlength",
                "must be at least minscanlength (and fit a CQL int)",
            ));
        }
        if self.zeropadding > 64 {
            return Err(r.error("zeropadding", "must be at most 64"));
        }
        Ok(())
    }

    /// The proportions, by operation type index.
    pub fn weights(&self) -> [f64; 5] {
        let mut w = [0.0; 5];
        w[READ] = self.readproportion;
        w[UPDATE] = self.updateproportion;
        w[INSERT] = self.insertproportion;
        w[SCAN] = self.scanproportion;
        w[READ_MODIFY_WRITE] = self.readmodifywriteproportion;
        w
    }

    /// The run phase's length when neither --duration nor --ops is given.
    pub fn default_ops(&self) -> Option<u64> {
        (self.operationcount > 0).then_some(self.operationcount)
    }

    fn columns(&self) -> Vec<String> {
        (0..self.fieldcount).map(|i| format!("field{i}")).collect()
    }
}

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
    mix: OpMix,
    weights: [f64; 5],
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
    session: Arc<Session>,
    op_names: Vec<String>,
}

impl Ycsb {
    /// Creates the keyspace and usertable when missing (or anew with `drop`), checks an
    /// existing table's columns, and prepares the statements.
    pub async fn prepare(
        session: Arc<Session>,
        config: &WorkloadConfig,
        ycsb: &YcsbConfig,
    ) -> Result<Ycsb, WorkloadError> {
        let ks = &config.keyspace;
        if !ks.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || ks.is_empty() {
            return Err(WorkloadError::Invalid(format!(
                "--keyspace '{ks}' is not a plain CQL name (letters, digits, underscores)"
            )));
        }
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
        if config.drop {
            run_schema(&session, format!("DROP KEYSPACE IF EXISTS {ks}")).await?;
        }
        run_schema(
            &session,
            format!(
                "CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {}",
                config.replication
            ),
        )
        .await?;
        let mut expected: Vec<(String, String)> = vec![("y_id".into(), "text".into())];
        expected.extend(columns.iter().map(|c| (c.clone(), "text".to_string())));
        check_table_columns(&session, ks, table, &expected, NAME).await?;
        let mut options = Vec::new();
        if let Some(compaction) = &config.compaction {
            options.push(format!("compaction = {compaction}"));
        }
        if let Some(ttl) = config.ttl_s {
            options.push(format!("default_time_to_live = {ttl}"));
        }
        let options = if options.is_empty() {
            String::new()
        } else {
            format!(" WITH {}", options.join(" AND "))
        };
        let fields: Vec<String> = columns.iter().map(|c| format!("{c} varchar")).collect();
        run_schema(
            &session,
            format!(
                "CREATE TABLE IF NOT EXISTS {ks}.{table} (y_id varchar PRIMARY KEY, {}){options}",
                fields.join(", ")
            ),
        )
        .await?;
        session
            .await_schema_agreement()
            .await
            .map_err(|e| WorkloadError::Cql {
                action: "waiting for schema agreement".into(),
                cql: String::new(),
                reason: e.to_string(),
            })?;

        let prepare = |cql: String, consistency: Consistency| {
            let session = session.clone();
            async move {
                let mut statement = session
                    .prepare(cql.as_str())
                    .await
                    .map_err(WorkloadError::cql("preparing a statement", &cql))?;
                statement.set_consistency(consistency);
                // No retries and no driver timeout: the engine times its requests out.
                crate::client::for_the_engine(&session, &mut statement);
                Ok::<_, WorkloadError>(statement)
            }
        };
        let placeholders = vec!["?"; columns.len()].join(", ");
        let all = columns.join(", ");
        let set_all: Vec<String> = columns.iter().map(|c| format!("{c} = ?")).collect();
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
            for c in &columns {
                statements.read_one.push(prepare(read(c), read_cl).await?);
                statements.scan_one.push(prepare(scan(c), read_cl).await?);
            }
        }
        if !ycsb.writeallfields {
            for c in &columns {
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
            session,
            op_names: OP_NAMES.iter().map(|s| s.to_string()).collect(),
        })
    }
}

impl Plan {
    fn new(config: YcsbConfig, seed: u64) -> Plan {
        let weights = config.weights();
        let mix_weights: Vec<f64> = MIX_ORDER.iter().map(|&op| weights[op]).collect();
        let keys = KeyChooser::new(
            config.requestdistribution,
            config.recordcount,
            // YCSB sizes the zipfian's key range by operationcount × insertproportion.
            config.operationcount as f64 * config.insertproportion,
            config.zipfianconstant,
            config.hotspotdatafraction,
            config.hotspotopnfraction,
        );
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
        };
        Plan {
            mix: OpMix::new(&mix_weights),
            weights,
            keys,
            scan_lengths,
            field_lengths,
            text: TextPool::new(seed),
            seed,
            config,
        }
    }

    /// The operation type of request `seq` (the run phase's requests start at recordcount).
    fn op_for(&self, seq: u64) -> usize {
        MIX_ORDER[self.mix.op_for(seq.saturating_sub(self.config.recordcount))]
    }

    /// The key number request `seq` inserts: its own number in the load phase (requests
    /// 0..recordcount), else the next after those inserted before it in the run phase.
    fn insert_keynum(&self, seq: u64) -> u64 {
        let records = self.config.recordcount;
        match seq.checked_sub(records) {
            None => seq,
            Some(index) => records + self.mix.first_type_count(index),
        }
    }

    /// The newest key number that exists when run-phase request `seq` is sent.
    fn newest_keynum(&self, seq: u64) -> u64 {
        let records = self.config.recordcount;
        let inserted = self.mix.first_type_count(seq.saturating_sub(records));
        (records + inserted).saturating_sub(1)
    }

    /// The key number request `seq` of type `op` works on.
    fn keynum(&self, op: usize, seq: u64, rng: &mut rand::rngs::SmallRng) -> u64 {
        if op == INSERT {
            self.insert_keynum(seq)
        } else {
            self.keys.choose(self.newest_keynum(seq), rng)
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
        self.session.execute_unpaged(statement, (key,)).await?;
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
            self.session.execute_unpaged(&s.update_all, values).await?;
        } else {
            let field = self.plan.field(rng);
            let value = self.plan.value(rng);
            self.session
                .execute_unpaged(&s.update_one[field], (value, key))
                .await?;
        }
        Ok(())
    }
}

impl Workload for Ycsb {
    fn op_names(&self) -> &[String] {
        &self.op_names
    }

    fn op_for(&self, seq: u64) -> usize {
        self.plan.op_for(seq)
    }

    fn op_weights(&self) -> Vec<f64> {
        // A read-modify-write is recorded under READ and UPDATE too: they show in the live
        // output whenever it does.
        let mut weights = self.plan.weights;
        weights[READ] += weights[READ_MODIFY_WRITE];
        weights[UPDATE] += weights[READ_MODIFY_WRITE];
        weights.to_vec()
    }

    fn populate_op(&self) -> usize {
        INSERT
    }

    async fn execute(&self, op: usize, seq: u64, parts: &mut Parts) -> Result<(), ExecutionError> {
        let mut rng = request_rng(self.plan.seed, seq);
        let key = self.plan.key(self.plan.keynum(op, seq, &mut rng));
        if op == INSERT {
            let mut values: Vec<&str> =
                Vec::with_capacity(self.plan.config.fieldcount as usize + 1);
            values.push(&key);
            for _ in 0..self.plan.config.fieldcount {
                values.push(self.plan.value(&mut rng));
            }
            self.session
                .execute_unpaged(&self.statements.insert, values)
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
                self.session
                    .execute_unpaged(statement, (key.as_str(), rows))
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
