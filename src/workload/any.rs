//! One type for every workload format, so that the engine (generic over [`Workload`]) and the
//! commands deal with a single type whichever format the user chose.
//!
//! A new format adds a variant here, a [`Definition`] variant, and its branch in
//! [`resolve`] (from the command line) and [`AnyWorkload::prepare`] (against a session).

use std::path::Path;
use std::sync::Arc;

use scylla::client::session::Session;
use scylla::errors::ExecutionError;

use super::builtin::{documents, Builtin, BUILTIN_NAMES};
use super::common::error::WorkloadError;
use super::common::mix::Operations;
use super::common::send::Requests;
use super::declarative::{self, Declarative};
use super::stress::multi::StressSetWorkload;
use super::stress::{self, StressWorkload};
use super::vector::{self, VectorWorkload};
use super::ycsb::{self, Ycsb};
use super::common::workload::{Parts, Workload};
use super::definition::{Definition, WorkloadConfig};
use crate::client::native::NativeClient;
use crate::validation::Recorder;
use super::common::request::WorkloadRequest;

/// A prepared workload of any format.
// One per run, behind an Arc: the size of its variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyWorkload {
    /// keyvalue or timeseries.
    Builtin(Builtin),
    /// A file in headroom's own format.
    Declarative(Declarative),
    /// A cassandra-stress user profile.
    CassandraStress(StressWorkload),
    /// Several cassandra-stress profiles.
    CassandraStressSet(StressSetWorkload),
    /// YCSB's CoreWorkload.
    Ycsb(Ycsb),
    /// Vector search.
    Vector(VectorWorkload),
}

impl AnyWorkload {
    /// Creates the schema the workload needs and prepares its statements. `native`: the
    /// run's native sender, through which every format sends its measured requests
    /// ([`Requests`]); the driver's session when None.
    pub async fn prepare(
        session: Arc<Session>,
        native: Option<Arc<NativeClient>>,
        config: &WorkloadConfig,
        recorder: Option<Recorder>,
    ) -> Result<AnyWorkload, WorkloadError> {
        let requests = Requests::new(session, native);
        if recorder.is_some() {
            AnyWorkload::check_validation(config).map_err(WorkloadError::Invalid)?;
        }
        match &config.definition {
            Definition::Builtin => Ok(AnyWorkload::Builtin(
                Builtin::prepare(requests, config, recorder).await?,
            )),
            Definition::Declarative { path, text, op_mix } => {
                let checked = declarative::parse(text, path)?;
                Ok(AnyWorkload::Declarative(
                    Declarative::prepare(requests, &checked, config, op_mix.as_deref()).await?,
                ))
            }
            Definition::CassandraStress(d) => Ok(AnyWorkload::CassandraStress(
                StressWorkload::prepare(requests, config, d).await?,
            )),
            Definition::CassandraStressSet(set) => Ok(AnyWorkload::CassandraStressSet(
                StressSetWorkload::prepare(requests, config, set).await?,
            )),
            Definition::Ycsb(y) => Ok(AnyWorkload::Ycsb(
                Ycsb::prepare(requests, config, y, recorder).await?,
            )),
            Definition::Vector(v) => Ok(AnyWorkload::Vector(
                VectorWorkload::prepare(requests, config, v).await?,
            )),
        }
    }

    /// What a vector workload searches and how its truth was found; `None` for another.
    pub fn vector_facts(&self) -> Option<&vector::VectorFacts> {
        match self {
            AnyWorkload::Vector(w) => Some(w.facts()),
            _ => None,
        }
    }

    /// The operation types of `config` judged for recall, with the k of their recall@k,
    /// known before connecting (for checking an SLA's recall terms).
    pub fn recall_ops_of(config: &WorkloadConfig) -> Vec<(String, usize)> {
        match &config.definition {
            Definition::Vector(v) => vec![(vector::ANN_OP.to_string(), v.top_k)],
            _ => Vec::new(),
        }
    }

    /// The operation types `config` will have, known before connecting (for checking an
    /// SLA's `op:` terms).
    pub fn op_names_of(config: &WorkloadConfig) -> Result<Vec<String>, WorkloadError> {
        match &config.definition {
            Definition::Builtin => Ok(super::builtin::OP_NAMES
                .iter()
                .map(|s| s.to_string())
                .collect()),
            Definition::Declarative { path, text, .. } => {
                Ok(declarative::parse(text, path)?.op_names)
            }
            Definition::CassandraStress(d) => Ok(stress::op_names_of(d)),
            Definition::CassandraStressSet(set) => Ok(stress::multi::op_names(&set.members)),
            Definition::Ycsb(_) => Ok(ycsb::OP_NAMES.iter().map(|s| s.to_string()).collect()),
            Definition::Vector(_) => Ok(vector::OP_NAMES.iter().map(|s| s.to_string()).collect()),
        }
    }

    /// The table whose rows the workload writes, for truncating between trials.
    pub fn table_of(config: &WorkloadConfig) -> Result<String, WorkloadError> {
        match &config.definition {
            Definition::Builtin => super::builtin::table_of(&config.name).map(String::from),
            Definition::Ycsb(y) => Ok(y.table.clone()),
            Definition::Vector(_) => Ok(vector::TABLE.to_string()),
            Definition::CassandraStress(d) => d.table(),
            Definition::CassandraStressSet(_) => Err(WorkloadError::Invalid(
                "several profiles write several tables: --fresh truncate and the table figures take one profile".into(),
            )),
            Definition::Declarative { path, text, .. } => declarative::parse(text, path)?
                .table()
                .ok_or_else(|| WorkloadError::Invalid(format!(
                    "{path}: --fresh truncate needs a CREATE TABLE in the file's schema, to know which table to empty"
                ))),
        }
    }

    /// Why `--validate` cannot check a workload of `config`, if it cannot (known before
    /// connecting).
    pub fn check_validation(config: &WorkloadConfig) -> Result<(), String> {
        match &config.definition {
            Definition::Builtin => super::builtin::validated::check_supported(config),
            Definition::Ycsb(y) => {
                super::common::checked::check_no_ttl(config)?;
                ycsb::validated::check_supported(y)
            }
            _ => Err(super::builtin::validated::not_checked(&config.name)),
        }
    }

    /// Where its requests note their outcome under `--validate`, if they do.
    pub fn recorder(&self) -> Option<&Recorder> {
        match self {
            AnyWorkload::Builtin(b) => b.recorder(),
            AnyWorkload::Ycsb(y) => y.recorder(),
            _ => None,
        }
    }

    /// The consistency levels of a workload's writes and reads, as `--validate` judges
    /// whether a read must see every write acknowledged before it: YCSB's properties may
    /// set each; the others use `--consistency` for both.
    pub fn validation_levels(config: &WorkloadConfig) -> (String, String) {
        let default = config.consistency.to_ascii_uppercase();
        match &config.definition {
            Definition::Ycsb(y) => {
                let level = |l: &Option<String>| {
                    l.as_deref()
                        .map_or(default.clone(), str::to_ascii_uppercase)
                };
                (level(&y.write_consistency), level(&y.read_consistency))
            }
            _ => (default.clone(), default),
        }
    }

    /// The final check's reading of the whole table, for a workload `--validate` checks:
    /// the CQL, what its counts are of, and what each row says of its key.
    pub fn final_check(&self, keyspace: &str) -> Option<super::common::checked::FinalRead<'_>> {
        match self {
            AnyWorkload::Builtin(b) => b.final_check(keyspace),
            AnyWorkload::Ycsb(y) => y.final_check(keyspace),
            _ => None,
        }
    }

    /// The measured run's number of requests when neither --duration nor --ops is given,
    /// for a format that has its own (YCSB's operationcount); None for the default duration.
    pub fn default_ops(config: &WorkloadConfig) -> Option<u64> {
        match &config.definition {
            Definition::Ycsb(y) => y.default_ops(),
            _ => None,
        }
    }
}

/// Sets the shared settings a format decides itself, once the definition is resolved: YCSB's
/// populate is recordcount and its keyspace ycsb; a profile names its keyspace (and the run
/// is named after the format); a workload file may name its keyspace and a populate count
/// (`--populate` wins).
pub fn settle(config: &mut WorkloadConfig) -> Result<(), WorkloadError> {
    match config.definition.clone() {
        Definition::Builtin if config.name == "documents" => {
            // The field report's table: TTL'd rows under time-window compaction.
            config.ttl_s.get_or_insert(documents::DEFAULT_TTL_S);
            config
                .compaction
                .get_or_insert_with(|| documents::DEFAULT_COMPACTION.to_string());
            let rows = config
                .rows_per_partition
                .get_or_insert(documents::DEFAULT_ROWS_PER_PARTITION);
            if *rows == 0 {
                return Err(WorkloadError::Invalid(
                    "--rows-per-partition must be at least 1".into(),
                ));
            }
        }
        _ if config.rows_per_partition.is_some() => {
            return Err(WorkloadError::Invalid(format!(
                "--rows-per-partition is for the documents workload, not {}",
                config.name
            )))
        }
        Definition::Builtin => {}
        Definition::Vector(_) if config.delete_ratio > 0.0 => {
            return Err(WorkloadError::Invalid(
                "--delete-ratio: the vector workload deletes nothing (its truth needs every row)"
                    .into(),
            ))
        }
        Definition::Vector(v) => {
            // Every row once, unless --populate says how many requests to spend on it.
            if config.populate == 0 {
                config.populate = v.rows;
            }
        }
        Definition::Ycsb(y) => ycsb::settle(&y, config),
        Definition::CassandraStress(d) => {
            config.name = "cassandra-stress".to_string();
            config.keyspace = d.keyspace.clone();
        }
        Definition::CassandraStressSet(set) => {
            config.name = "cassandra-stress".to_string();
            // The first profile's: each profile uses its own.
            if let Some(first) = set.members.first() {
                config.keyspace = first.definition.keyspace.clone();
            }
        }
        Definition::Declarative { path, text, .. } => {
            let checked = declarative::parse(&text, &path)?;
            if let Some(ks) = &checked.spec.keyspace {
                config.keyspace = ks.clone();
            }
            if config.populate == 0 {
                config.populate = checked.populate.0;
            }
        }
    }
    Ok(())
}

/// Reads the workload the command line names (`name` and the format's own flags in `args`)
/// into its definition, before anything else is done: every error here is the user's input.
pub fn resolve(name: &str, args: &WorkloadRequest) -> Result<Definition, WorkloadError> {
    if name == vector::NAME {
        refuse_foreign_flags(name, args)?;
        return Ok(Definition::Vector(
            vector::model::VectorDefinition::resolve(&args.vector)?,
        ));
    }
    if let Some(flag) = args.vector.first_given() {
        return Err(WorkloadError::Invalid(format!(
            "{flag} is for the vector workload, not {name}"
        )));
    }
    if BUILTIN_NAMES.contains(&name) {
        refuse_foreign_flags(name, args)?;
        return Ok(Definition::Builtin);
    }
    if name == ycsb::NAME {
        return Ok(Definition::Ycsb(Box::new(ycsb::resolve(args)?)));
    }
    if let Some(paths) = stress::multi::profile_paths(name) {
        return Ok(Definition::CassandraStressSet(stress::multi::resolve(
            &paths, args,
        )?));
    }
    if stress::is_profile_path(name) {
        return Ok(Definition::CassandraStress(stress::resolve(name, args)?));
    }
    if is_yaml(name) {
        // A readable YAML file with a top-level `operations`: headroom's own format.
        let text = crate::usage::read_input_file(Path::new(name), "the workload file")
            .map_err(|e| WorkloadError::Invalid(e.to_string()))?;
        let checked = declarative::parse(&text, name)?;
        if let Some(mix) = &args.op_mix {
            declarative::mix_weights(&checked.op_names, mix)?;
        }
        return Ok(Definition::Declarative {
            path: name.to_string(),
            text,
            op_mix: args.op_mix.clone(),
        });
    }
    Err(WorkloadError::Unknown {
        name: name.to_string(),
        builtins: KNOWN_NAMES,
    })
}

/// The built-ins' names, for the message of an unknown one.
const KNOWN_NAMES: &[&str] = &["keyvalue", "timeseries", "documents", "vector"];

/// A workload file, by its name.
fn is_yaml(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".yaml") || lower.ends_with(".yml")
}

/// The flags of the other formats make no sense for a built-in workload: say so rather than
/// ignore them.
fn refuse_foreign_flags(name: &str, args: &WorkloadRequest) -> Result<(), WorkloadError> {
    let ycsb = if !args.property_files.is_empty() {
        Some("-P")
    } else if args.ycsb_workload.is_some() {
        Some("--workload")
    } else if args.p.iter().any(|p| p.contains('=')) {
        Some("-p KEY=VALUE")
    } else {
        None
    };
    if let Some(flag) = ycsb {
        return Err(WorkloadError::Invalid(format!(
            "{flag} is for the ycsb workload, not {name}"
        )));
    }
    if args.op_mix.is_some() {
        return Err(WorkloadError::Invalid(format!(
            "--ops with weights is for cassandra-stress profiles; {name} takes --read-ratio and --delete-ratio"
        )));
    }
    Ok(())
}

impl Workload for AnyWorkload {
    fn operations(&self) -> &Operations {
        match self {
            AnyWorkload::Builtin(w) => w.operations(),
            AnyWorkload::Declarative(w) => w.operations(),
            AnyWorkload::CassandraStress(w) => w.operations(),
            AnyWorkload::CassandraStressSet(w) => w.operations(),
            AnyWorkload::Ycsb(w) => w.operations(),
            AnyWorkload::Vector(w) => w.operations(),
        }
    }

    fn populate_concurrency(&self) -> Option<usize> {
        match self {
            AnyWorkload::Vector(w) => w.populate_concurrency(),
            AnyWorkload::Declarative(w) => w.populate_concurrency(),
            AnyWorkload::CassandraStress(w) => w.populate_concurrency(),
            AnyWorkload::CassandraStressSet(w) => w.populate_concurrency(),
            AnyWorkload::Builtin(_) | AnyWorkload::Ycsb(_) => None,
        }
    }

    async fn execute(&self, op: usize, seq: u64, parts: &mut Parts) -> Result<(), ExecutionError> {
        match self {
            AnyWorkload::Builtin(w) => w.execute(op, seq, parts).await,
            AnyWorkload::Declarative(w) => w.execute(op, seq, parts).await,
            AnyWorkload::CassandraStress(w) => w.execute(op, seq, parts).await,
            AnyWorkload::CassandraStressSet(w) => w.execute(op, seq, parts).await,
            AnyWorkload::Ycsb(w) => w.execute(op, seq, parts).await,
            AnyWorkload::Vector(w) => w.execute(op, seq, parts).await,
        }
    }
}
