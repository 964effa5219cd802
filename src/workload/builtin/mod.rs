//! The built-in workloads, with the semantics of tlp-stress's KeyValue and BasicTimeSeries.
//!
//! - `keyvalue`: table `keyvalue (key text PRIMARY KEY, value text)`. Write inserts a value of
//!   100–200 characters; read selects one key; delete deletes one key.
//! - `timeseries`: table `sensor_data (sensor_id text, timestamp timeuuid, data text,
//!   PRIMARY KEY (sensor_id, timestamp))`, newest first. Write inserts a new row (`now()`)
//!   with 100–200 characters of data; read fetches the latest 500 rows of a partition; delete
//!   removes the rows of a partition older than [`TIMESERIES_DELETE_DEPTH_S`].
//! - `documents`: JSON documents with a TTL in wide time-ordered partitions; see
//!   [`documents`].

pub mod documents;
pub mod validated;

use std::time::{SystemTime, UNIX_EPOCH};

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::serialize::row::SerializeRow;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlTimestamp;

use self::documents::Layout;
use super::common::error::WorkloadError;
use super::common::generators::{request_rng, PartitionKeys, TextPool};
use super::common::mix::Operations;
use super::common::schema::{
    await_agreement, check_table_columns, create_keyspace, drop_keyspace, check_keyspace_flag,
    run_schema, table_options,
};
use super::common::checked::FinalRead;
use super::common::send::Requests;
use super::common::statements::{parse_consistency, prepare};
use super::common::settings::WorkloadSettings;
use super::common::workload::{Parts, Workload};

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

/// A built-in workload, ready to send requests.
#[derive(Debug)]
pub struct Builtin {
    kind: Kind,
    /// write, read and delete, with their shares.
    operations: Operations,
    keys: PartitionKeys,
    text: TextPool,
    seed: u64,
    statements: [PreparedStatement; 3],
    /// The measured requests' path.
    requests: Requests,
    /// Where documents' requests go (documents only).
    layout: Layout,
    /// `--validate`: where writes and reads are noted (keyvalue only).
    recorder: Option<crate::validation::Recorder>,
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
            other => Err(WorkloadError::Unknown {
                name: other.to_string(),
                builtins: BUILTIN_NAMES,
            }),
        }
    }

    fn table(self) -> &'static str {
        match self {
            Kind::KeyValue => "keyvalue",
            Kind::TimeSeries => "sensor_data",
            Kind::Documents => "documents",
        }
    }

    /// The column a validated read checks the values of.
    fn value_column(self) -> &'static str {
        match self {
            Kind::TimeSeries => "data",
            _ => "value",
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
    pub async fn prepare<D: Sync>(
        requests: Requests,
        config: &WorkloadSettings<D>,
        recorder: Option<crate::validation::Recorder>,
    ) -> Result<Builtin, WorkloadError> {
        let session = requests.session().clone();
        let kind = Kind::of(&config.name)?;
        config.check(true).map_err(WorkloadError::Invalid)?;
        let consistency = parse_consistency(&config.consistency)?;
        let ks = &config.keyspace;
        check_keyspace_flag(ks)?;
        if config.drop {
            drop_keyspace(&session, ks).await?;
        }
        create_keyspace(&session, ks, &config.replication).await?;
        check_columns(&session, ks, kind, &config.name).await?;
        let options = table_options(config.compaction.as_deref(), config.ttl_s);
        run_schema(&session, kind.create_table(ks, &options)).await?;
        await_agreement(&session).await?;

        let texts = kind.statements(ks);
        let mut prepared = Vec::with_capacity(3);
        for cql in texts {
            prepared.push(prepare(&session, &cql, consistency, "preparing a statement").await?);
        }
        let statements: [PreparedStatement; 3] = prepared.try_into().expect("three statements");
        let weights = [
            1.0 - config.read_ratio - config.delete_ratio,
            config.read_ratio,
            config.delete_ratio,
        ];
        Ok(Builtin {
            kind,
            operations: Operations::new(
                OP_NAMES.iter().map(|s| s.to_string()).collect(),
                weights.to_vec(),
                WRITE,
            ),
            keys: PartitionKeys::new(config.partitions, config.partition_generator),
            text: TextPool::new(config.seed),
            seed: config.seed,
            statements,
            requests,
            layout: Layout {
                rows_per_partition: config
                    .rows_per_partition
                    .unwrap_or(documents::DEFAULT_ROWS_PER_PARTITION),
            },
            recorder,
        })
    }
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

impl Workload for Builtin {
    fn operations(&self) -> &Operations {
        &self.operations
    }

    async fn execute(&self, op: usize, seq: u64, _parts: &mut Parts) -> Result<(), ExecutionError> {
        if self.kind == Kind::Documents {
            return self.execute_document(op, seq).await;
        }
        let mut rng = request_rng(self.seed, seq);
        // The key's decimal text, formatted on the stack: no allocation per request.
        let mut key_text = itoa::Buffer::new();
        let key_number = self.keys.key(seq, &mut rng);
        let key = key_text.format(key_number);
        let statement = &self.statements[op];
        if let Some(recorder) = &self.recorder {
            let values = self.values(recorder);
            return match op {
                WRITE => validated::write(&self.requests, recorder, statement, &values, seq).await,
                _ => {
                    let column = self.kind.value_column();
                    let key = (key_number, key);
                    validated::read(&self.requests, recorder, statement, &values, key, column)
                        .await
                }
            };
        }
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
    /// What draws this workload's keys and values, for `--validate`, whose run `recorder`
    /// notes.
    pub fn values(&self, recorder: &crate::validation::Recorder) -> validated::Values<'_> {
        validated::Values {
            seed: self.seed,
            tag: recorder.tag(),
            keys: &self.keys,
            text: &self.text,
        }
    }

    /// Where its requests note their outcome under `--validate`, if they do.
    pub fn recorder(&self) -> Option<&crate::validation::Recorder> {
        self.recorder.as_ref()
    }

    /// How the final check of `--validate` reads the whole table back; `None` for a
    /// workload it does not check.
    pub fn final_check(&self, keyspace: &str) -> Option<FinalRead<'_>> {
        let recorder = self.recorder.as_ref()?;
        let (cql, counted) = match self.kind {
            Kind::KeyValue => (
                format!("SELECT key, value FROM {keyspace}.keyvalue"),
                crate::validation::Counted::Keys,
            ),
            Kind::TimeSeries => (
                format!("SELECT sensor_id, data FROM {keyspace}.sensor_data"),
                crate::validation::Counted::Writes,
            ),
            Kind::Documents => return None,
        };
        Some(FinalRead {
            cql,
            counted,
            judge: Box::new(self.values(recorder)),
        })
    }

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
        let writes = documents::writes_before(self.operations.mix(), seq);
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
