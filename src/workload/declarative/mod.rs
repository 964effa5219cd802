//! headroom's own workload format: a YAML file of schema statements, named operations (CQL,
//! weight, consistency, bind-variable generators) and a populate count. See docs/workloads.md.
//!
//! ```yaml
//! schema:
//!   - CREATE TABLE IF NOT EXISTS {keyspace}.keyvalue (key text PRIMARY KEY, value text)
//! generators:
//!   key: uniform(1M)
//! operations:
//!   write:
//!     cql: INSERT INTO {keyspace}.keyvalue (key, value) VALUES (?, ?)
//!     args: [key, text(100..200)]
//!   read:
//!     cql: SELECT key, value FROM {keyspace}.keyvalue WHERE key = ?
//!     args: [key]
//!     weight: 0.2
//! populate: 100k
//! ```

pub mod generator;

use std::collections::BTreeMap;
use std::path::Path;

use scylla::errors::ExecutionError;
use scylla::statement::prepared::PreparedStatement;
use serde::Deserialize;

use super::builtin::{parse_consistency, run_schema, WorkloadError};
use super::generators::{request_rng, TextPool};
use super::send::Requests;
use super::{OpMix, Parts, Workload, WorkloadConfig};
use generator::{convert, Generator};

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

/// One operation.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an operation: a mapping of cql, args, weight and consistency"
)]
pub struct OpSpec {
    /// The CQL, with a `?` per bind variable.
    pub cql: String,
    /// One generator (or a named generator's name) per bind variable, in order.
    #[serde(default)]
    pub args: Vec<String>,
    /// The operation's share of requests, relative to the others (default 1).
    #[serde(default = "one")]
    pub weight: f64,
    /// Its consistency level; `--consistency` when not given.
    #[serde(default)]
    pub consistency: Option<String>,
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
    fn value(&self) -> Result<u64, String> {
        match self {
            CountText::Number(n) => Ok(*n),
            CountText::Text(t) => {
                crate::units::parse_count(t).map_err(|e| format!("populate: {e}"))
            }
        }
    }
}

/// A file read and checked, before any connection: op names, generators, populate.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The file as written.
    pub spec: Spec,
    /// The operation names, in file order.
    pub op_names: Vec<String>,
    /// Each operation's arguments, as generators (named ones resolved to an index).
    pub args: Vec<Vec<Arg>>,
    /// The named generators, in name order.
    pub named: Vec<(String, Generator)>,
    /// The populate count and operation index.
    pub populate: (u64, usize),
}

/// One bind variable's source.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A generator of its own.
    Inline(Generator),
    /// A named generator (index into `Checked::named`), drawn once per request.
    Named(usize),
}

/// Reads a workload file's text; errors name the file's line where serde can.
pub fn parse(text: &str, origin: &str) -> Result<Checked, WorkloadError> {
    let spec: Spec = serde_yaml_ng::from_str(text).map_err(|e| {
        WorkloadError::Invalid(format!(
            "{origin}: {}",
            crate::workload::yaml_error::describe(&e)
        ))
    })?;
    check(spec, origin)
}

/// Reads a workload file.
pub fn load(path: &Path) -> Result<(String, Checked), WorkloadError> {
    let text = crate::usage::read_input_file(path, "the workload file")
        .map_err(|e| WorkloadError::Invalid(e.to_string()))?;
    let checked = parse(&text, &path.display().to_string())?;
    Ok((text, checked))
}

fn check(spec: Spec, origin: &str) -> Result<Checked, WorkloadError> {
    let bad = |m: String| WorkloadError::Invalid(format!("{origin}: {m}"));
    if spec.operations.0.is_empty() {
        return Err(bad("`operations` lists no operation".into()));
    }
    let mut named = Vec::new();
    for (name, text) in &spec.generators {
        let g = Generator::parse(text).map_err(|e| bad(format!("generator {name}: {e}")))?;
        named.push((name.clone(), g));
    }
    let mut args = Vec::new();
    for (op, op_spec) in &spec.operations.0 {
        if !(op_spec.weight.is_finite() && op_spec.weight >= 0.0) {
            return Err(bad(format!("operation {op}: the weight must be 0 or more")));
        }
        if let Some(c) = &op_spec.consistency {
            parse_consistency(c).map_err(|e| bad(format!("operation {op}: {e}")))?;
        }
        let markers = op_spec.cql.matches('?').count();
        if markers != op_spec.args.len() {
            return Err(bad(format!(
                "operation {op}: the CQL has {markers} bind marker(s) (?) but `args` lists {}",
                op_spec.args.len()
            )));
        }
        let mut op_args = Vec::new();
        for a in &op_spec.args {
            let arg = match named.iter().position(|(n, _)| n == a.trim()) {
                Some(i) => Arg::Named(i),
                None => Arg::Inline(Generator::parse(a).map_err(|e| {
                    bad(format!(
                        "operation {op}: {e} (nor is it one of the named generators)"
                    ))
                })?),
            };
            op_args.push(arg);
        }
        args.push(op_args);
    }
    if spec.operations.0.iter().all(|(_, o)| o.weight == 0.0) {
        return Err(bad("every operation has weight 0".into()));
    }
    // The mix divides each weight by their sum: an infinite sum leaves every share 0.
    let total: f64 = spec.operations.0.iter().map(|(_, o)| o.weight).sum();
    if !total.is_finite() {
        return Err(bad(
            "the operations' weights are too large to add up; weights are relative, e.g. 0.8 and 0.2"
                .into(),
        ));
    }
    let op_names: Vec<String> = spec.operations.0.iter().map(|(n, _)| n.clone()).collect();
    let populate = match &spec.populate {
        None => (0, 0),
        Some(Populate::Count(c)) => (c.value().map_err(bad)?, 0),
        Some(Populate::Full { count, operation }) => {
            let index = match operation {
                None => 0,
                Some(op) => op_names.iter().position(|n| n == op).ok_or_else(|| {
                    bad(format!(
                        "populate: no operation is named '{op}'; the operations are {}",
                        op_names.join(", ")
                    ))
                })?,
            };
            (count.value().map_err(bad)?, index)
        }
    };
    Ok(Checked {
        spec,
        op_names,
        args,
        named,
        populate,
    })
}

impl Checked {
    /// The table the first `CREATE TABLE` of the schema creates (what `--fresh truncate`
    /// empties), without its keyspace.
    pub fn table(&self) -> Option<String> {
        self.spec.schema.iter().find_map(|statement| {
            let words: Vec<&str> = statement.split_whitespace().collect();
            let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
            if upper.first().map(String::as_str) != Some("CREATE")
                || upper.get(1).map(String::as_str) != Some("TABLE")
            {
                return None;
            }
            let at = if upper.get(2).map(String::as_str) == Some("IF") {
                5
            } else {
                2
            };
            let name = words.get(at)?.split('(').next()?;
            Some(name.rsplit('.').next()?.to_string())
        })
    }
}

/// A workload file, prepared against a session.
pub struct Declarative {
    /// The measured requests' path.
    requests: Requests,
    op_names: Vec<String>,
    weights: Vec<f64>,
    mix: OpMix,
    statements: Vec<PreparedStatement>,
    args: Vec<Vec<Arg>>,
    named: Vec<Generator>,
    populate_op: usize,
    text: TextPool,
    seed: u64,
}

impl Declarative {
    /// Runs the schema, prepares every operation and checks each argument's generator
    /// against its variable's CQL type.
    pub async fn prepare(
        requests: Requests,
        checked: &Checked,
        config: &WorkloadConfig,
        op_mix: Option<&[(String, f64)]>,
    ) -> Result<Declarative, WorkloadError> {
        // The file's keyspace, else --keyspace (settled into the config).
        let session = requests.session().clone();
        let ks = config.keyspace.as_str();
        if !ks.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || ks.is_empty() {
            return Err(WorkloadError::Invalid(format!(
                "keyspace '{ks}' is not a plain CQL name (letters, digits, underscores)"
            )));
        }
        let fill = |cql: &str| cql.replace("{keyspace}", ks);
        if config.drop {
            run_schema(&session, format!("DROP KEYSPACE IF EXISTS {ks}")).await?;
        }
        let creates_keyspace = checked.spec.schema.iter().any(|s| {
            s.trim_start()
                .to_ascii_uppercase()
                .starts_with("CREATE KEYSPACE")
        });
        if !creates_keyspace {
            run_schema(
                &session,
                format!(
                    "CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {}",
                    config.replication
                ),
            )
            .await?;
        }
        for statement in &checked.spec.schema {
            run_schema(&session, fill(statement)).await?;
        }
        session
            .await_schema_agreement()
            .await
            .map_err(WorkloadError::cql("waiting for schema agreement", ""))?;

        let default_consistency = parse_consistency(&config.consistency)?;
        let named: Vec<Generator> = checked.named.iter().map(|(_, g)| g.clone()).collect();
        let mut statements = Vec::new();
        for ((name, op), args) in checked.spec.operations.0.iter().zip(&checked.args) {
            let cql = fill(&op.cql);
            let mut statement = session
                .prepare(cql.as_str())
                .await
                .map_err(WorkloadError::cql(
                    &format!("preparing operation {name}"),
                    &cql,
                ))?;
            let consistency = match &op.consistency {
                Some(c) => parse_consistency(c)?,
                None => default_consistency,
            };
            statement.set_consistency(consistency);
            // No retries and no driver timeout: the engine times its requests out.
            crate::client::for_the_engine(&session, &mut statement);
            for (i, (spec, arg)) in statement
                .get_variable_col_specs()
                .iter()
                .zip(args)
                .enumerate()
            {
                let generator = match arg {
                    Arg::Inline(g) => g,
                    Arg::Named(k) => &named[*k],
                };
                if !generator.check_binds_to(spec.typ()) {
                    return Err(WorkloadError::Invalid(format!(
                        "operation {name}, argument {} ({}): cannot bind to {} of type {:?}",
                        i + 1,
                        op.args[i].trim(),
                        spec.name(),
                        spec.typ()
                    )));
                }
            }
            statements.push(statement);
        }
        let mut weights: Vec<f64> = checked
            .spec
            .operations
            .0
            .iter()
            .map(|(_, o)| o.weight)
            .collect();
        if let Some(mix) = op_mix {
            weights = mix_weights(&checked.op_names, mix)?;
        }
        Ok(Declarative {
            requests,
            op_names: checked.op_names.clone(),
            mix: OpMix::new(&normalise(&weights)),
            weights,
            statements,
            args: checked.args.clone(),
            named,
            populate_op: checked.populate.1,
            text: TextPool::new(config.seed),
            seed: config.seed,
        })
    }
}

/// Weights from `--ops name=w,...`: every name must be an operation; the others get 0.
pub fn mix_weights(names: &[String], mix: &[(String, f64)]) -> Result<Vec<f64>, WorkloadError> {
    let mut weights = vec![0.0; names.len()];
    for (name, w) in mix {
        let i = names.iter().position(|n| n == name).ok_or_else(|| {
            WorkloadError::Invalid(format!(
                "--ops names '{name}', which the workload does not have; its operations are {}",
                names.join(", ")
            ))
        })?;
        weights[i] = *w;
    }
    Ok(weights)
}

fn normalise(weights: &[f64]) -> Vec<f64> {
    let total: f64 = weights.iter().sum();
    weights.iter().map(|w| w / total).collect()
}

impl Workload for Declarative {
    fn op_names(&self) -> &[String] {
        &self.op_names
    }

    fn op_for(&self, seq: u64) -> usize {
        self.mix.op_for(seq)
    }

    fn op_weights(&self) -> Vec<f64> {
        self.weights.clone()
    }

    fn populate_op(&self) -> usize {
        self.populate_op
    }

    async fn execute(&self, op: usize, seq: u64, _parts: &mut Parts) -> Result<(), ExecutionError> {
        let statement = &self.statements[op];
        let specs = statement.get_variable_col_specs();
        let mut rng = request_rng(self.seed, seq);
        // Named generators are drawn once per request, on first use.
        let mut drawn_named = vec![None; self.named.len()];
        let mut values = Vec::with_capacity(self.args[op].len());
        for (arg, spec) in self.args[op].iter().zip(specs.iter()) {
            let value = match arg {
                Arg::Inline(g) => convert(g.draw(seq, &mut rng, &self.text), spec.typ()),
                Arg::Named(k) => {
                    let drawn = drawn_named[*k]
                        .get_or_insert_with(|| self.named[*k].draw(seq, &mut rng, &self.text));
                    convert(drawn.clone(), spec.typ())
                }
            };
            // Checked at prepare time: every generator converts to its variable's type.
            values.push(value.expect("generator checked against the variable's type"));
        }
        self.requests.execute(statement, values).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
