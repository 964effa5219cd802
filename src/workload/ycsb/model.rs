//! The settings of a YCSB workload, read from its properties: what YCSB's CoreWorkload reads
//! (counts, proportions, distributions, field lengths, the insert order), checked and with
//! YCSB's defaults, before anything connects.

use serde::{Deserialize, Serialize};

use super::histogram::LengthHistogram;
use super::raw::{Origin, Properties, Property};
use super::values::RequestDistribution;
use crate::workload::common::error::WorkloadError;
use crate::workload::common::request::WorkloadRequest;
use crate::workload::common::settings::WorkloadSettings;
use crate::workload::common::statements::parse_consistency;

/// The keyspace when `--keyspace` is left at headroom's default: YCSB's binding's.
pub const KEYSPACE: &str = "ycsb";

/// Operation type indexes.
pub(super) const READ: usize = 0;
pub(super) const UPDATE: usize = 1;
pub(super) const INSERT: usize = 2;
pub(super) const SCAN: usize = 3;
pub(super) const READ_MODIFY_WRITE: usize = 4;

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
    /// By the buckets of the fieldlengthhistogram file.
    Histogram,
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
    /// All the records: the run's inserts take key numbers from recordcount on.
    pub recordcount: u64,
    /// The first key number this load phase inserts, and the first the run chooses from.
    #[serde(default)]
    pub insertstart: u64,
    /// The records this load phase inserts, from insertstart on, and the range the run's
    /// uniform, sequential, hotspot and zipfian keys are chosen from (recordcount -
    /// insertstart when not set: [`YcsbConfig::insert_count`]).
    #[serde(default)]
    pub insertcount: Option<u64>,
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
    /// exponential: the percentile of requests that go to the newest exponential.frac of the
    /// records.
    #[serde(rename = "exponential.percentile", default = "default_percentile")]
    pub exponential_percentile: f64,
    /// exponential: see exponential.percentile.
    #[serde(rename = "exponential.frac", default = "default_frac")]
    pub exponential_frac: f64,
    /// Columns {fieldnameprefix}0..{fieldnameprefix}{fieldcount-1}.
    pub fieldcount: u32,
    /// The columns' names before their number.
    #[serde(default = "default_prefix")]
    pub fieldnameprefix: String,
    /// Length of a field's value (the longest, when not constant).
    pub fieldlength: u64,
    /// The shortest field value, when not constant.
    pub minfieldlength: u64,
    /// How field lengths are chosen.
    pub fieldlengthdistribution: FieldLengthDistribution,
    /// The histogram file's buckets, read when the workload was resolved (histogram field
    /// lengths only): a run repeated from config.json needs no file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fieldlengthhistogram: Option<LengthHistogram>,
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

fn default_percentile() -> f64 {
    95.0
}

fn default_frac() -> f64 {
    0.8571428571
}

fn default_prefix() -> String {
    "field".into()
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

/// Sets the shared settings YCSB's properties decide: the load is insertcount records (all
/// of recordcount unless insertstart or insertcount say otherwise), the keyspace YCSB's own unless --keyspace names another.
pub fn settle<D>(ycsb: &YcsbConfig, config: &mut WorkloadSettings<D>) {
    config.populate = ycsb.insert_count();
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
        let mut config = YcsbConfig {
            recordcount: r.number("recordcount", 0)?,
            insertstart: r.number("insertstart", 0)?,
            insertcount: None,
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
                    "exponential" => Ok(RequestDistribution::Exponential),
                    "sequential" => Ok(RequestDistribution::Sequential),
                    _ => Err("YCSB knows uniform, zipfian, latest, hotspot, exponential, sequential".into()),
                }
            })?,
            zipfianconstant: r.value("zipfianconstant", 0.99, |v| match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
                _ => Err("must be a number between 0 and 1, both excluded (YCSB's zipfian generator is defined there)".into()),
            })?,
            hotspotdatafraction: r.fraction("hotspotdatafraction", 0.2)?,
            hotspotopnfraction: r.fraction("hotspotopnfraction", 0.8)?,
            exponential_percentile: r.value("exponential.percentile", default_percentile(), |v| match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x < 100.0 => Ok(x),
                _ => Err("must be a number between 0 and 100, both excluded (a percentile of the requests)".into()),
            })?,
            exponential_frac: r.value("exponential.frac", default_frac(), |v| match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
                _ => Err("must be a number above 0 (a fraction of recordcount)".into()),
            })?,
            fieldcount: r.number("fieldcount", 10)?,
            fieldnameprefix: r.value("fieldnameprefix", default_prefix(), |v| {
                if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    Ok(v.to_string())
                } else {
                    Err("must be letters, digits or underscores (the columns are named by it)".into())
                }
            })?,
            fieldlength: r.number("fieldlength", 100)?,
            minfieldlength: r.number("minfieldlength", 1)?,
            fieldlengthdistribution: r.value("fieldlengthdistribution", FieldLengthDistribution::Constant, |v| match v {
                "constant" => Ok(FieldLengthDistribution::Constant),
                "uniform" => Ok(FieldLengthDistribution::Uniform),
                "zipfian" => Ok(FieldLengthDistribution::Zipfian),
                "histogram" => Ok(FieldLengthDistribution::Histogram),
                _ => Err("YCSB knows constant, uniform, zipfian, histogram".into()),
            })?,
            fieldlengthhistogram: None,
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
        if config.insertstart > config.recordcount {
            return Err(r.error("insertstart", "must be at most recordcount"));
        }
        config.insertcount =
            Some(r.number("insertcount", config.recordcount - config.insertstart)?);
        if config.fieldlengthdistribution == FieldLengthDistribution::Histogram {
            config.fieldlengthhistogram = Some(read_histogram(props)?);
        }
        config.check(&r)?;
        Ok(config)
    }

    /// Checks the settings against each other.
    fn check(&self, r: &Reader) -> Result<(), WorkloadError> {
        if self
            .insertstart
            .checked_add(self.insert_count())
            .is_none_or(|end| end > self.recordcount)
        {
            return Err(r.error(
                "insertcount",
                &format!(
                    "insertstart ({}) + insertcount must be at most recordcount ({}), as YCSB requires",
                    self.insertstart, self.recordcount
                ),
            ));
        }
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
        let from_the_loaded_range = !matches!(
            self.requestdistribution,
            RequestDistribution::Latest | RequestDistribution::Exponential
        );
        if needs_keys && from_the_loaded_range && self.insert_count() == 0 {
            return Err(r.error(
                "insertcount",
                "must be at least 1: reads, updates and scans choose among insertstart..insertstart + insertcount",
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
        if matches!(
            self.fieldlengthdistribution,
            FieldLengthDistribution::Uniform | FieldLengthDistribution::Zipfian
        ) && !(1..=self.fieldlength).contains(&self.minfieldlength)
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

    /// The records the load phase inserts, from insertstart on: insertcount, else the
    /// records from insertstart to recordcount.
    pub fn insert_count(&self) -> u64 {
        self.insertcount
            .unwrap_or(self.recordcount.saturating_sub(self.insertstart))
    }

    /// The run phase's length when neither --duration nor --ops is given.
    pub fn default_ops(&self) -> Option<u64> {
        (self.operationcount > 0).then_some(self.operationcount)
    }

    /// The table's value columns: field0, field1, ... (or another fieldnameprefix).
    pub(super) fn columns(&self) -> Vec<String> {
        (0..self.fieldcount)
            .map(|i| format!("{}{i}", self.fieldnameprefix))
            .collect()
    }
}

/// The histogram of fieldlengthhistogram (YCSB's default: hist.txt, in the current
/// directory), read now: config.json keeps its buckets.
fn read_histogram(props: &Properties) -> Result<LengthHistogram, WorkloadError> {
    let key = "fieldlengthhistogram";
    let (file, at) = match props.get(key) {
        Some(Property { value, origin }) => (value.clone(), format!("{origin}: {key}={value}")),
        None => (
            "hist.txt".to_string(),
            format!(
                "{key} (YCSB's default, hist.txt, as fieldlengthdistribution=histogram needs one)"
            ),
        ),
    };
    let text = crate::usage::read_input_file(std::path::Path::new(&file), "the histogram file")
        .map_err(|e| WorkloadError::Invalid(format!("{at}: {e}")))?;
    LengthHistogram::parse(&file, &text)
        .map_err(|why| WorkloadError::Invalid(format!("{at}: {file}: {why}")))
}
