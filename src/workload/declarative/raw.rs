//! A workload file as written: the serde model of headroom's YAML format (schema,
//! generators, operations, populate), unknown keys refused by serde with their line.
//! `model.rs` checks it into what a run uses.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A workload file, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a workload: a mapping of description, keyspace, schema, generators, operations and populate"
)]
pub struct Spec {
    /// What the workload is, for people.
    #[serde(default)]
    pub description: Option<String>,
    /// The keyspace; `--keyspace` when not given. `{keyspace}` in CQL text stands for it.
    #[serde(default)]
    pub keyspace: Option<String>,
    /// Statements run in order before the run (make them idempotent: IF NOT EXISTS). The
    /// keyspace is created first with `--replication` unless a statement creates it.
    #[serde(default)]
    pub schema: Vec<String>,
    /// Named generators: each is drawn once per request, however often its name is used.
    #[serde(default)]
    pub generators: BTreeMap<String, String>,
    /// The operations, by name, in the order written.
    pub operations: OrderedOps,
    /// Requests of the populate operation sent before the run (`--populate` overrides).
    #[serde(default)]
    pub populate: Option<Populate>,
}

/// The operations in the order the file lists them (the first is the populate default).
#[derive(Debug, Clone)]
pub struct OrderedOps(pub Vec<(String, OpSpec)>);

impl<'de> Deserialize<'de> for OrderedOps {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = OrderedOps;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of operation names to operations")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<OrderedOps, A::Error> {
                let mut ops: Vec<(String, OpSpec)> = Vec::new();
                while let Some((name, op)) = map.next_entry::<String, OpSpec>()? {
                    if ops.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!(
                            "operation '{name}' is defined twice"
                        )));
                    }
                    ops.push((name, op));
                }
                Ok(OrderedOps(ops))
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// One operation: a statement (`cql` and `args`), or a batch of statements.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an operation: a mapping of cql, args, weight and consistency (a batch: batch, rows, per_row, statements, weight and consistency)"
)]
pub struct OpSpec {
    /// The CQL, with a `?` per bind variable (or `statements`, in a batch).
    #[serde(default)]
    pub cql: Option<String>,
    /// One generator (or a named generator's name) per bind variable, in order.
    #[serde(default)]
    pub args: Vec<String>,
    /// Sends the statements as one BATCH of this type: logged, unlogged or counter.
    #[serde(default)]
    pub batch: Option<String>,
    /// Rows per batch: a count (`5`), a range (`1..20`) or an integer generator; 1 unless
    /// given. Each row is one statement (or one of each of `statements`).
    #[serde(default)]
    pub rows: Option<RowsText>,
    /// Named generators drawn again for each row of a batch (the others once per batch).
    #[serde(default)]
    pub per_row: Vec<String>,
    /// A batch's statements, each with its `cql` and `args`, written in this order per row.
    #[serde(default)]
    pub statements: Vec<StatementSpec>,
    /// The operation's share of requests, relative to the others (default 1).
    #[serde(default = "one")]
    pub weight: f64,
    /// Its consistency level; `--consistency` when not given.
    #[serde(default)]
    pub consistency: Option<String>,
}

/// One statement of a batch.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a statement of a batch: a mapping of cql and args"
)]
pub struct StatementSpec {
    /// The CQL, with a `?` per bind variable.
    pub cql: String,
    /// One generator per bind variable, in order.
    #[serde(default)]
    pub args: Vec<String>,
}

/// `rows: 5` or `rows: 1..20` or `rows: zipfian(1..50)`.
#[derive(Debug, Clone, Deserialize)]
// For an untagged enum, `expecting` is the whole message.
#[serde(
    untagged,
    expecting = "rows takes a count such as 10, a range such as 1..20 or an integer generator"
)]
pub enum RowsText {
    /// 10
    Number(u64),
    /// "1..20"
    Text(String),
}

fn one() -> f64 {
    1.0
}

/// `populate: 100k`, or `populate: {count: 100k, operation: write}`.
#[derive(Debug, Clone, Deserialize)]
// For an untagged enum, `expecting` is the whole message (in place of serde's
// "data did not match any variant of untagged enum ...").
#[serde(
    untagged,
    expecting = "populate takes a count such as 100k, or a mapping of count and operation"
)]
pub enum Populate {
    /// A count of requests of the first operation.
    Count(CountText),
    /// A count and the operation to send.
    Full {
        /// Requests to send.
        count: CountText,
        /// The operation (default: the first).
        #[serde(default)]
        operation: Option<String>,
    },
}

/// A count written as a number or with an SI suffix (`100k`).
#[derive(Debug, Clone, Deserialize)]
// For an untagged enum, `expecting` is the whole message (in place of serde's
// "data did not match any variant of untagged enum ...").
#[serde(untagged, expecting = "populate takes a count such as 100000 or 100k")]
pub enum CountText {
    /// 100000
    Number(u64),
    /// "100k"
    Text(String),
}

impl CountText {
    /// The count, or why it is none.
    pub(super) fn value(&self) -> Result<u64, String> {
        match self {
            CountText::Number(n) => Ok(*n),
            CountText::Text(t) => {
                crate::units::parse_count(t).map_err(|e| format!("populate: {e}"))
            }
        }
    }
}
