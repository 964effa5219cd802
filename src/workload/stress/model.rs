//! Reading a cassandra-stress user profile (YAML) into a checked [`Profile`].
//!
//! Every key cassandra-stress documents is either understood or refused with its line:
//! an unknown key is serde's "unknown field" error (which carries the line), a key
//! cassandra-stress knows but headroom does not support yet says so, and a value that does
//! not parse names its key and the line it is on. Nothing is silently ignored.
//!
//! The file is first read as written into the raw serde model of `raw.rs` (plain strings,
//! unknown keys refused by serde, and the lines keys are on); this file checks it into the
//! typed [`Profile`]: its names, definitions and columnspec here, its insert section in
//! `insert.rs` and its queries in `queries.rs`, whose types it re-exports.

use std::collections::BTreeSet;

use super::distribution::Distribution;
use super::insert::insert_spec;
use super::queries::{queries, token_range_queries};
use super::raw::{ProfileError, RawProfile, Source};
use crate::workload::common::cql_names::{created_table, stored_name};
use crate::workload::common::schema::is_plain_name;

pub use super::insert::InsertSpec;
pub use super::queries::{dynamic_condition, Fields, Query, TokenRangeQuery, INSERT, READ_STEP};

/// A profile, checked.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The keyspace of the table.
    pub keyspace: String,
    /// CQL creating the keyspace, when it is missing.
    pub keyspace_definition: Option<String>,
    /// The table written and read.
    pub table: String,
    /// CQL creating the table, when it is missing.
    pub table_definition: Option<String>,
    /// More CQL run after the table is created (indexes, views...).
    pub extra_definitions: Vec<String>,
    /// How the values of named columns are generated; other columns take the defaults.
    pub columns: Vec<ColumnSpec>,
    /// How an insert chooses its partitions and rows.
    pub insert: InsertSpec,
    /// The named queries, in the order of the file.
    pub queries: Vec<Query>,
    /// The named token range queries, in the order of the file.
    pub token_range_queries: Vec<TokenRangeQuery>,
}

/// The generation of one column's values.
#[derive(Debug, Clone)]
pub struct ColumnSpec {
    /// The column.
    pub name: String,
    /// Text and blob lengths. Default uniform(4..8).
    pub size: Distribution,
    /// The distinct values the column draws from. Default uniform(1..100B).
    pub population: Distribution,
    /// For a clustering column: how many values it has under each value of the columns
    /// before it. Default fixed(1).
    pub cluster: Distribution,
    /// The line of its entry in the profile.
    pub line: usize,
}

impl ColumnSpec {
    /// The defaults cassandra-stress gives a column the profile does not name.
    pub fn default_for(name: &str) -> ColumnSpec {
        ColumnSpec {
            name: name.to_string(),
            size: Distribution::parse(DEFAULT_SIZE).expect("a valid default"),
            population: Distribution::parse(DEFAULT_POPULATION).expect("a valid default"),
            cluster: Distribution::fixed(1),
            line: 0,
        }
    }
}

const DEFAULT_SIZE: &str = "uniform(4..8)";
const DEFAULT_POPULATION: &str = "uniform(1..100B)";

impl Profile {
    /// Parses and checks a profile's text.
    pub fn parse(text: &str) -> Result<Profile, ProfileError> {
        let source = Source(text);
        let raw: RawProfile = serde_yaml_ng::from_str(text).map_err(|e| {
            let line = e.location().map(|l| l.line());
            let mut message = crate::workload::common::yaml_error::describe(&e);
            // The line leads the message already.
            if let Some(at) = message.rfind(" at line ") {
                message.truncate(at);
            }
            ProfileError { line, message }
        })?;
        if raw.seed.is_some() {
            return Err(source.error(
                "seed",
                None,
                "seed: the first cassandra-stress releases (2.1) read this key and ignored it, and 4.0 refuses it as unknown; headroom derives every value from --seed: remove the key and give --seed N".into(),
            ));
        }
        for (key, value) in [("keyspace", &raw.keyspace), ("table", &raw.table)] {
            if !is_plain_name(value) {
                return Err(source.error(
                    key,
                    Some(value),
                    format!(
                        "{key} '{value}' is not a plain CQL name (letters, digits, underscores)"
                    ),
                ));
            }
        }
        check_definition_names(&source, &raw)?;

        let mut columns = Vec::new();
        let mut seen = BTreeSet::new();
        for raw_column in raw.columnspec.unwrap_or_default() {
            let name = raw_column.name.clone();
            let lines = source.lines_of("name", Some(&name));
            let line = lines.first().copied();
            if !seen.insert(name.clone()) {
                return Err(ProfileError {
                    line: lines.get(1).copied(),
                    message: format!("columnspec names column '{name}' twice"),
                });
            }
            let mut spec = ColumnSpec::default_for(&name);
            spec.line = line.unwrap_or(0);
            for (key, value, slot) in [
                ("size", &raw_column.size, &mut spec.size),
                ("population", &raw_column.population, &mut spec.population),
                ("cluster", &raw_column.cluster, &mut spec.cluster),
            ] {
                if let Some(value) = value {
                    let text = value.text();
                    *slot = Distribution::parse(&text).map_err(|e| {
                        source.error(key, Some(&text), format!("columnspec '{name}', {key}: {e}"))
                    })?;
                }
            }
            if spec.cluster.min() == 0 {
                return Err(source.error(
                    "cluster",
                    Some(&spec.cluster.to_string()),
                    format!("columnspec '{name}', cluster: {} can draw 0: a clustering column has at least one value per parent", spec.cluster),
                ));
            }
            columns.push(spec);
        }

        let insert = match raw.insert {
            None => InsertSpec::defaults(),
            Some(raw_insert) => insert_spec(&source, raw_insert)?,
        };

        let queries = queries(&source, raw.queries.unwrap_or_default())?;
        let token_range_queries = token_range_queries(
            &source,
            raw.token_range_queries.unwrap_or_default(),
            &queries,
        )?;

        let definition = |text: Option<String>| {
            text.map(|t| t.trim().trim_end_matches(';').trim().to_string())
                .filter(|t| !t.is_empty())
        };
        // Plain names, which Cassandra keeps lower-cased: system_schema is read with them.
        Ok(Profile {
            keyspace: stored_name(&raw.keyspace),
            keyspace_definition: definition(raw.keyspace_definition),
            table: stored_name(&raw.table),
            table_definition: definition(raw.table_definition),
            extra_definitions: raw
                .extra_definitions
                .unwrap_or_default()
                .into_iter()
                .filter_map(|t| definition(Some(t)))
                .collect(),
            columns,
            insert,
            queries,
            token_range_queries,
        })
    }

    /// The operation names a mix can weigh: `insert`, then the queries and the token range
    /// queries in the order of the file.
    pub fn op_names(&self) -> Vec<String> {
        std::iter::once(INSERT.to_string())
            .chain(self.queries.iter().map(|q| q.name.clone()))
            .chain(self.token_range_queries.iter().map(|q| q.name.clone()))
            .collect()
    }

    /// The operations that only record a step of another: the read of each query with a
    /// dynamic condition (`updatewithlwt-read`), after [`Profile::op_names`].
    pub fn step_names(&self) -> Vec<String> {
        self.queries
            .iter()
            .filter(|q| q.condition_variables > 0)
            .map(|q| format!("{}{READ_STEP}", q.name))
            .collect()
    }

    /// The generation of column `name`: its columnspec entry or the defaults.
    pub fn column(&self, name: &str) -> ColumnSpec {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .cloned()
            .unwrap_or_else(|| ColumnSpec::default_for(name))
    }
}

/// Refuses a `table_definition` that creates another table than `table:` names, or in
/// another keyspace than `keyspace:`: the run would create one table and look for another,
/// and fail against the server. Names compare as CQL reads them ([`stored_name`]); a
/// definition that is not a CREATE TABLE is the server's to judge.
fn check_definition_names(source: &Source, raw: &RawProfile) -> Result<(), ProfileError> {
    let Some(created) = raw.table_definition.as_deref().and_then(created_table) else {
        return Ok(());
    };
    if stored_name(&raw.table) != stored_name(created.table) {
        return Err(source.error(
            "table",
            Some(&raw.table),
            format!(
                "table: says '{}' but table_definition creates '{}'{}; make them the same",
                raw.table,
                created.table,
                case_note(&raw.table, created.table)
            ),
        ));
    }
    match created.keyspace {
        Some(keyspace) if stored_name(&raw.keyspace) != stored_name(keyspace) => {
            Err(source.error(
                "keyspace",
                Some(&raw.keyspace),
                format!(
                    "keyspace: says '{}' but table_definition creates its table in '{keyspace}'{}; make them the same",
                    raw.keyspace,
                    case_note(&raw.keyspace, keyspace)
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// Why two names that differ only in case are two names.
fn case_note(said: &str, written: &str) -> &'static str {
    if said.eq_ignore_ascii_case(written.trim_matches('"')) {
        " (a double-quoted name keeps its case; CQL lower-cases any other)"
    } else {
        ""
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
