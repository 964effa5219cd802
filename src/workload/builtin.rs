//! The built-in workloads, with the semantics of tlp-stress's KeyValue and BasicTimeSeries.
//!
//! - `keyvalue`: table `keyvalue (key text PRIMARY KEY, value text)`. Write inserts a value of
//!   100–200 characters; read selects one key; delete deletes one key.
//! - `timeseries`: table `sensor_data (sensor_id text, timestamp timeuuid, data text,
//!   PRIMARY KEY (sensor_id, timestamp))`, newest first. Write inserts a new row (`now()`)
//!   with 100–200 characters of data; read fetches the latest 500 rows of a partition; delete
//!   removes the rows of a partition older than [`TIMESERIES_DELETE_DEPTH_S`].
//! - `documents`: JSON documents with a TTL in wide time-ordered partitions; see
//!   [`super::documents`].

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::serialize::row::SerializeRow;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use scylla::value::CqlTimestamp;

use super::documents::{self, Layout};
use super::generators::{request_rng, PartitionKeys, TextPool};
use super::send::Requests;
use super::{OpMix, Parts, Workload, WorkloadConfig};

/// The names `headroom run` accepts.
pub const BUILTIN_NAMES: &[&str] = &["keyvalue", "timeseries", "documents"];

/// Operation type indexes shared by the built-ins.
const WRITE: usize = 0;
const READ: usize = 1;
const DELETE: usize = 2;
/// The operation types of the built-in workloads, by index.
pub const OP_NAMES: &[&str] = &["write", "read", "delete"];

/// Rows the timeseries read fetches, newest first.
pub const TIMESERIES_READ_ROWS: u32 = 500;
/// A timeseries delete removes a partition's rows older than this many seconds.
pub const TIMESERIES_DELETE_DEPTH_S: i64 = 60;

/// Why a workload could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The workload's name is not a built-in.
    #[error("unknown workload '{0}': give a built-in ({names}), ycsb, or a workload file (.yaml: headroom's own format or a cassandra-stress profile)", names = BUILTIN_NAMES.join(", "))]
    Unknown(String),
    /// A setting that cannot work.
    #[error("{0}")]
    Invalid(String),
    /// The table exists with other columns than the workload needs.
    #[error("table {table} exists with columns {found}, but the {workload} workload needs {expected}. Use another --keyspace, or --drop to recreate it (this deletes its data)")]
    Incompatible {
        /// keyspace.table
        table: String,
        /// The workload.
        workload: String,
        /// The columns found, `name type`.
        found: String,
        /// The columns needed.
        expected: String,
    },
    /// The server refused a statement made from the user's flags or files as invalid (a
    /// syntax error, an invalid request, a configuration error, no permission).
    #[error("the server refused {action}: {reason}\n  CQL: {cql}\n  (made from the workload and its flags: check --replication, --compaction, --keyspace, the workload file)")]
    Refused {
        /// What headroom was doing.
        action: String,
        /// The statement.
        cql: String,
        /// The server's message.
        reason: String,
    },
    /// A schema statement or a prepare failed.
    #[error("{action} failed: {reason}\n  CQL: {cql}")]
    Cql {
        /// What headroom was doing.
        action: String,
        /// The statement.
        cql: String,
        /// The server's or driver's message.
        reason: String,
    },
}

impl WorkloadError {
    /// Wraps a driver error with what was being done and the statement.
    pub(crate) fn cql<E: std::fmt::Display + 'static>(
        action: impl Into<String>,
        cql: &str,
    ) -> impl FnOnce(E) -> WorkloadError {
        let cql = cql.to_string();
        let action = action.into();
        move |e| {
            let reason = e.to_string();
            if refused_by_server(&e) {
                WorkloadError::Refused {
                    action,
                    cql,
                    reason,
                }
            } else {
                WorkloadError::Cql {
                    action,
                    cql,
                    reason,
                }
            }
        }
    }
}

/// Whether a driver error is the server refusing the statement itself (its syntax, its
/// meaning, its options, or the user's permissions), rather than failing to run it.
fn refused_by_server<E: 'static>(error: &E) -> bool {
    use scylla::errors::{DbError, ExecutionError, PrepareError, RequestAttemptError};
    let refused = |attempt: &RequestAttemptError| {
        matches!(
            attempt,
            RequestAttemptError::DbError(
                DbError::SyntaxError
                    | DbError::Invalid
                    | DbError::ConfigError
                    | DbError::Unauthorized,
                _
            )
        )
    };
    let any = error as &dyn std::any::Any;
    if let Some(ExecutionError::LastAttemptError(attempt)) = any.downcast_ref::<ExecutionError>() {
        return refused(attempt);
    }
    if let Some(PrepareError::AllAttemptsFailed { first_attempt }) =
        any.downcast_ref::<PrepareError>()
    {
        return refused(first_attempt);
    }
    false
}

/// Parses a consistency level name such as LOCAL_ONE or quorum.
pub fn parse_consistency(name: &str) -> Result<Consistency, WorkloadError> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "ANY" => Consistency::Any,
        "ONE" => Consistency::One,
        "TWO" => Consistency::Two,
        "THREE" => Consistency::Three,
        "QUORUM" => Consistency::Quorum,
        "ALL" => Consistency::All,
        "LOCAL_QUORUM" => Consistency::LocalQuorum,
        "EACH_QUORUM" => Consistency::EachQuorum,
        "LOCAL_ONE" => Consistency::LocalOne,
        _ => {
            return Err(WorkloadError::Invalid(format!(
                "--consistency {name} is not a consistency level: use ONE, TWO, THREE, QUORUM, ALL, LOCAL_ONE, LOCAL_QUORUM, EACH_QUORUM or ANY"
            )))
        }
    })
}

/// A built-in workload, ready to send requests.
#[derive(Debug)]
pub struct Builtin {
    kind: Kind,
    mix: OpMix,
    /// Shares of write, read and delete.
    weights: [f64; 3],
    keys: PartitionKeys,
    text: TextPool,
    seed: u64,
    statements: [PreparedStatement; 3],
    /// The measured requests' path.
    requests: Requests,
    op_names: Vec<String>,
    /// Where documents' requests go (documents only).
    layout: Layout,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    KeyValue,
    TimeSeries,
    Documents,
}

/// The CQL of the built-in workload `name` in keyspace `ks`: its table (without options),
/// then its write, read and delete statements.
pub fn cql_of(name: &str, ks: &str) -> Result<(String, [String; 3]), WorkloadError> {
    let kind = Kind::of(name)?;
    Ok((kind.create_table(ks, ""), kind.statements(ks)))
}

/// The table of the built-in workload `name`.
pub fn table_of(name: &str) -> Result<&'static str, WorkloadError> {
    Kind::of(name).map(Kind::table)
}

impl Kind {
    fn of(name: &str) -> Result<Kind, WorkloadError> {
        match name {
            "keyvalue" => Ok(Kind::KeyValue),
            "timeseries" => Ok(Kind::TimeSeries),
            "documents" => Ok(Kind::Documents),
            other => Err(WorkloadError::Unknown(other.to_string())),
        }
    }

    fn table(self) -> &'static str {
        match self {
            Kind::KeyValue => "keyvalue",
            Kind::TimeSeries => "sensor_data",
            Kind::Documents => "documents",
        }
    }

    /// The columns the table must have, as system_schema.columns reports them.
    fn columns(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Kind::KeyValue => &[("key", "text"), ("value", "text")],
            Kind::TimeSeries => &[
                ("data", "text"),
                ("sensor_id", "text"),
                ("timestamp", "timeuuid"),
            ],
            Kind::Documents => documents::COLUMNS,
        }
    }

    fn create_table(self, ks: &str, options: &str) -> String {
        match self {
            Kind::KeyValue => format!(
                "CREATE TABLE IF NOT EXISTS {ks}.keyvalue (key text PRIMARY KEY, value text){options}"
            ),
            Kind::TimeSeries => format!(
                "CREATE TABLE IF NOT EXISTS {ks}.sensor_data (sensor_id text, timestamp timeuuid, data text, \
                 PRIMARY KEY (sensor_id, timestamp)) WITH CLUSTERING ORDER BY (timestamp DESC){}",
                options.replacen(" WITH ", " AND ", 1)
            ),
            Kind::Documents => documents::create_table(ks, options),
        }
    }

    fn statements(self, ks: &str) -> [String; 3] {
        match self {
            Kind::KeyValue => [
                format!("INSERT INTO {ks}.keyvalue (key, value) VALUES (?, ?)"),
                format!("SELECT key, value FROM {ks}.keyvalue WHERE key = ?"),
                format!("DELETE FROM {ks}.keyvalue WHERE key = ?"),
            ],
            Kind::TimeSeries => [
                format!("INSERT INTO {ks}.sensor_data (sensor_id, timestamp, data) VALUES (?, now(), ?)"),
                format!(
                    "SELECT sensor_id, timestamp, data FROM {ks}.sensor_data WHERE sensor_id = ? LIMIT {TIMESERIES_READ_ROWS}"
                ),
                format!("DELETE FROM {ks}.sensor_data WHERE sensor_id = ? AND timestamp < maxTimeuuid(?)"),
            ],
            Kind::Documents => documents::statements(ks),
        }
    }
}

impl Builtin {
    /// Creates the keyspace and table when missing (or anew with `drop`), checks an existing
    /// table's columns, and prepares the statements.
    pub async fn prepare(
        requests: Requests,
        config: &WorkloadConfig,
    ) -> Result<Builtin, WorkloadError> {
        let session = requests.session().clone();
        let session_ref = &session;
        let kind = Kind::of(&config.name)?;
        config.validate().map_err(WorkloadError::Invalid)?;
        let consistency = parse_consistency(&config.consistency)?;
        let ks = &config.keyspace;
        if !ks.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || ks.is_empty() {
            return Err(WorkloadError::Invalid(format!(
                "--keyspace '{ks}' is not a plain CQL name (letters, digits, underscores)"
            )));
        }
        if config.drop {
            run_schema(session_ref, format!("DROP KEYSPACE IF EXISTS {ks}")).await?;
        }
        run_schema(
            session_ref,
            format!(
                "CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {}",
                config.replication
            ),
        )
        .await?;
        check_columns(session_ref, ks, kind, &config.name).await?;
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
        run_schema(session_ref, kind.create_table(ks, &options)).await?;
        session
            .await_schema_agreement()
            .await
            .map_err(WorkloadError::cql("waiting for schema agreement", ""))?;

        let texts = kind.statements(ks);
        let mut prepared = Vec::with_capacity(3);
        for cql in texts {
            let mut statement = session
                .prepare(cql.as_str())
                .await
                .map_err(WorkloadError::cql("preparing a statement", &cql))?;
            statement.set_consistency(consistency);
            // No retries and no driver timeout: the engine times its requests out.
            crate::client::for_the_engine(&session, &mut statement);
            prepared.push(statement);
        }
        let statements: [PreparedStatement; 3] = prepared.try_into().expect("three statements");
        let weights = [
            1.0 - config.read_ratio - config.delete_ratio,
            config.read_ratio,
            config.delete_ratio,
        ];
        Ok(Builtin {
            kind,
            mix: OpMix::new(&weights),
            weights,
            keys: PartitionKeys::new(config.partitions, config.partition_generator),
            text: TextPool::new(config.seed),
            seed: config.seed,
            statements,
            requests,
            op_names: OP_NAMES.iter().map(|s| s.to_string()).collect(),
            layout: Layout {
                rows_per_partition: config
                    .rows_per_partition
                    .unwrap_or(documents::DEFAULT_ROWS_PER_PARTITION),
            },
        })
    }
}

/// Runs one schema statement (CREATE, DROP).
pub(crate) async fn run_schema(session: &Session, cql: String) -> Result<(), WorkloadError> {
    session
        .query_unpaged(cql.as_str(), &[])
        .await
        .map(|_| ())
        .map_err(|e| WorkloadError::cql("a schema change", &cql)(e))
}

/// Fails when the workload's table exists with other columns.
async fn check_columns(
    session: &Session,
    ks: &str,
    kind: Kind,
    workload: &str,
) -> Result<(), WorkloadError> {
    let expected: Vec<(String, String)> = kind
        .columns()
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    check_table_columns(session, ks, kind.table(), &expected, workload).await
}

/// Fails when `ks.table` exists with other columns than `expected` (name, type as
/// system_schema.columns reports it, e.g. `text` for varchar).
pub(crate) async fn check_table_columns(
    session: &Session,
    ks: &str,
    table: &str,
    expected: &[(String, String)],
    workload: &str,
) -> Result<(), WorkloadError> {
    let cql = "SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?";
    let result = session
        .query_unpaged(cql, (ks, table))
        .await
        .map_err(WorkloadError::cql("reading the schema", cql))?;
    let rows = result
        .into_rows_result()
        .map_err(WorkloadError::cql("reading the schema", cql))?;
    let mut found = BTreeMap::new();
    for row in rows
        .rows::<(String, String)>()
        .map_err(WorkloadError::cql("reading the schema", cql))?
    {
        let (name, ty) = row.map_err(WorkloadError::cql("reading the schema", cql))?;
        found.insert(name, ty);
    }
    if found.is_empty() {
        return Ok(());
    }
    let expected: BTreeMap<String, String> = expected.iter().cloned().collect();
    if found != expected {
        let describe = |m: &BTreeMap<String, String>| {
            m.iter()
                .map(|(n, t)| format!("{n} {t}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(WorkloadError::Incompatible {
            table: format!("{ks}.{table}"),
            workload: workload.to_string(),
            found: describe(&found),
            expected: describe(&expected),
        });
    }
    Ok(())
}

impl Workload for Builtin {
    fn op_names(&self) -> &[String] {
        &self.op_names
    }

    fn op_for(&self, seq: u64) -> usize {
        self.mix.op_for(seq)
    }

    fn op_weights(&self) -> Vec<f64> {
        self.weights.to_vec()
    }

    fn populate_op(&self) -> usize {
        WRITE
    }

    async fn execute(&self, op: usize, seq: u64, _parts: &mut Parts) -> Result<(), ExecutionError> {
        if self.kind == Kind::Documents {
            return self.execute_document(op, seq).await;
        }
        let mut rng = request_rng(self.seed, seq);
        // The key's decimal text, formatted on the stack: no allocation per request.
        let mut key_text = itoa::Buffer::new();
        let key = key_text.format(self.keys.key(seq, &mut rng));
        let statement = &self.statements[op];
        match (self.kind, op) {
            (_, WRITE) => {
                let value = self.text.text(&mut rng, 100, 200);
                self.send(statement, (key, value)).await?;
            }
            (_, READ) => {
                self.send(statement, (key,)).await?;
            }
            (Kind::KeyValue, DELETE) => {
                self.send(statement, (key,)).await?;
            }
            (Kind::TimeSeries, DELETE) => {
                let now_ms = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64);
                let before = CqlTimestamp(now_ms - TIMESERIES_DELETE_DEPTH_S * 1000);
                self.send(statement, (key, before)).await?;
            }
            _ => unreachable!("the built-ins have three operation types"),
        }
        Ok(())
    }
}

impl Builtin {
    /// Sends one measured request through the native sender if the run has one, else
    /// through the driver.
    async fn send(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow,
    ) -> Result<(), ExecutionError> {
        self.requests.execute(statement, values).await
    }

    /// One request of the documents workload.
    async fn execute_document(&self, op: usize, seq: u64) -> Result<(), ExecutionError> {
        let mut rng = request_rng(self.seed, seq);
        let writes = documents::writes_before(&self.mix, seq);
        let statement = &self.statements[op];
        match op {
            WRITE => {
                let p = self.layout.write(writes);
                let doc = documents::document(seq, p.source, &mut rng, &self.text);
                let now_ms = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64);
                let values = (p.source, p.bucket, CqlTimestamp(now_ms), seq as i64, doc);
                self.send(statement, values).await?;
            }
            READ | DELETE => {
                let p = if op == READ {
                    self.layout.read(writes, &mut rng)
                } else {
                    self.layout.delete(writes, &mut rng)
                };
                self.send(statement, (p.source, p.bucket)).await?;
            }
            _ => unreachable!("the built-ins have three operation types"),
        }
        Ok(())
    }
}

impl crate::usage::Blame for WorkloadError {
    fn is_usage_error(&self) -> bool {
        matches!(
            self,
            WorkloadError::Unknown(_)
                | WorkloadError::Invalid(_)
                | WorkloadError::Incompatible { .. }
                | WorkloadError::Refused { .. }
        )
    }
}
