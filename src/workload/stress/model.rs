//! Reading a cassandra-stress user profile (YAML) into a checked [`Profile`].
//!
//! Every key cassandra-stress documents is either understood or refused with its line:
//! an unknown key is serde's "unknown field" error (which carries the line), a key
//! cassandra-stress knows but headroom does not support yet says so, and a value that does
//! not parse names its key and the line it is on. Nothing is silently ignored.
//!
//! The file is first read as written into the raw serde model of `raw.rs` (plain strings,
//! unknown keys refused by serde, and the lines keys are on); this file checks it into the
//! typed [`Profile`].

use std::collections::BTreeSet;

use super::distribution::{Distribution, Ratio};
use super::raw::{ProfileError, RawInsert, RawProfile, RawQuery, RawTokenRangeQuery, Source};
use crate::workload::common::schema::is_plain_name;
use crate::workload::common::statements::BatchKind;

/// The operation every profile has: writing rows of the table.
pub const INSERT: &str = "insert";

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

/// The insert section.
#[derive(Debug, Clone)]
pub struct InsertSpec {
    /// Partitions written by one insert. Default fixed(1).
    pub partitions: Distribution,
    /// The chance of each row of a partition to be written, drawn per partition and insert.
    /// Default fixed(1)/1: all its rows.
    pub select: Ratio,
    /// The batch of an insert of more than one row.
    pub batch: BatchKind,
    /// A lightweight transaction's condition (`IF body = NULL`), appended to each row's
    /// statement as cassandra-stress does.
    pub condition: Option<String>,
    /// The share of a row's non-key columns an insert writes, drawn per partition and
    /// insert: cassandra-stress's `row-population`. Default fixed(1)/1: every column.
    pub row_population: Ratio,
    /// In how many inserts a partition's rows are written, drawn per partition:
    /// cassandra-stress's `visits`. Default fixed(1): each insert draws from all its rows.
    pub visits: Distribution,
}

impl InsertSpec {
    /// The insert section's defaults, cassandra-stress's.
    fn defaults() -> InsertSpec {
        InsertSpec {
            partitions: Distribution::fixed(1),
            select: Ratio::parse("fixed(1)/1").expect("a valid default"),
            batch: BatchKind::Logged,
            row_population: Ratio::parse("fixed(1)/1").expect("a valid default"),
            visits: Distribution::fixed(1),
            condition: None,
        }
    }
}

/// How a query's bind variables are filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fields {
    /// All from one row of a partition.
    SameRow,
    /// Each from a row of the partition chosen on its own. cassandra-stress's default.
    MultiRow,
}

/// A named query.
#[derive(Debug, Clone)]
pub struct Query {
    /// Its name (lower case, as cassandra-stress matches them): the operation's name.
    pub name: String,
    /// Its CQL, with `?` for the values to bind.
    pub cql: String,
    /// Where its values come from.
    pub fields: Fields,
    /// The line of its entry in the profile.
    pub line: usize,
    /// For an UPDATE whose IF condition binds values (`IF body = ? AND url = ?`): how many
    /// `?` the condition has, the last of the statement's variables. Such a query reads the
    /// row's current values first and binds them there, as cassandra-stress does.
    pub condition_variables: usize,
}

/// A named read of whole token ranges (`token_range_queries:`).
#[derive(Debug, Clone)]
pub struct TokenRangeQuery {
    /// Its name (lower case): the operation's name.
    pub name: String,
    /// The columns selected, as written (`*` for all).
    pub columns: String,
    /// Rows per page. Default 5000, as cassandra-stress.
    pub page_size: i32,
    /// The line of its entry in the profile.
    pub line: usize,
}

/// The suffix of the operation that records the read step of a query with a dynamic
/// condition: `updatewithlwt-read`.
pub const READ_STEP: &str = "-read";

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

        let mut queries: Vec<Query> = Vec::new();
        let queries_line = source.line_of("queries", None).unwrap_or(0);
        for (key, value) in raw.queries.unwrap_or_default() {
            let Some(written) = key.as_str() else {
                return Err(source.error(
                    "queries",
                    None,
                    "queries: each query is named by a text key, e.g. `simple1:`".into(),
                ));
            };
            let name = written.to_ascii_lowercase();
            // Its key under `queries:` (a query may be named like a top-level key).
            let line = source
                .lines_of(written, None)
                .into_iter()
                .find(|&l| l > queries_line);
            let raw_query: RawQuery =
                serde_yaml_ng::from_value(value).map_err(|e| ProfileError {
                    line,
                    message: format!("queries, {name}: {e}"),
                })?;
            if name == INSERT || queries.iter().any(|q| q.name == name) {
                return Err(ProfileError {
                    line,
                    message: format!(
                        "queries: the name '{name}' is taken (query names are case-insensitive, and 'insert' is the insert operation)"
                    ),
                });
            }
            let fields = match raw_query
                .fields
                .as_deref()
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                None | Some("multirow") => Fields::MultiRow,
                Some("samerow") => Fields::SameRow,
                Some(other) => {
                    return Err(source.error(
                        "fields",
                        Some(other),
                        format!("queries, {name}, fields: '{other}' is not samerow or multirow"),
                    ))
                }
            };
            let cql = raw_query
                .cql
                .trim()
                .trim_end_matches(';')
                .trim()
                .to_string();
            if cql.is_empty() {
                return Err(ProfileError {
                    line,
                    message: format!("queries, {name}: cql is empty"),
                });
            }
            let condition_variables = dynamic_condition(&cql).map_or(0, bind_markers);
            if condition_variables > 0 && fields != Fields::SameRow {
                return Err(ProfileError {
                    line,
                    message: format!(
                        "queries, {name}: a conditional update that binds its IF values reads the row first, which cassandra-stress (and headroom) do only with fields: samerow"
                    ),
                });
            }
            queries.push(Query {
                name,
                cql,
                fields,
                line: line.unwrap_or(0),
                condition_variables,
            });
        }
        let token_range_queries = token_range_queries(
            &source,
            raw.token_range_queries.unwrap_or_default(),
            &queries,
        )?;

        let definition = |text: Option<String>| {
            text.map(|t| t.trim().trim_end_matches(';').trim().to_string())
                .filter(|t| !t.is_empty())
        };
        Ok(Profile {
            keyspace: raw.keyspace,
            keyspace_definition: definition(raw.keyspace_definition),
            table: raw.table,
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

fn insert_spec(source: &Source, raw: RawInsert) -> Result<InsertSpec, ProfileError> {
    let (row_population, visits) = population_and_visits(source, &raw)?;
    let partitions = match raw.partitions {
        None => Distribution::fixed(1),
        Some(value) => {
            let text = value.text();
            let d = Distribution::parse(&text).map_err(|e| {
                source.error(
                    "partitions",
                    Some(&text),
                    format!("insert, partitions: {e}"),
                )
            })?;
            if d.min() == 0 {
                return Err(source.error(
                    "partitions",
                    Some(&text),
                    format!("insert, partitions: {d} can draw 0: an insert writes at least one partition"),
                ));
            }
            d
        }
    };
    let select = match raw.select {
        None => Ratio::parse("fixed(1)/1").expect("a valid default"),
        Some(value) => {
            let text = value.text();
            Ratio::parse(&text)
                .map_err(|e| source.error("select", Some(&text), format!("insert, select: {e}")))?
        }
    };
    let batch = match raw.batchtype.map(|b| b.text()) {
        None => BatchKind::Logged,
        Some(text) => BatchKind::parse(&text).ok_or_else(|| {
            source.error(
                "batchtype",
                Some(&text),
                format!("insert, batchtype: '{text}' is not LOGGED, UNLOGGED or COUNTER"),
            )
        })?,
    };
    let condition = insert_condition(source, raw.condition)?;
    Ok(InsertSpec {
        partitions,
        select,
        batch,
        condition,
        row_population,
        visits,
    })
}

/// The insert's `condition`, checked to be an IF clause.
fn insert_condition(
    source: &Source,
    condition: Option<String>,
) -> Result<Option<String>, ProfileError> {
    let Some(text) = condition else {
        return Ok(None);
    };
    let text = text.trim().trim_end_matches(';').trim().to_string();
    let starts_with_if = text
        .get(..3)
        .is_some_and(|head| head.eq_ignore_ascii_case("if ") || head.eq_ignore_ascii_case("if\t"));
    if !starts_with_if {
        return Err(source.error(
            "condition",
            None,
            format!("insert, condition: '{text}' is not an IF clause, e.g. IF body = NULL"),
        ));
    }
    Ok(Some(text))
}

/// The IF clause of an UPDATE whose condition binds values (`?`), as cassandra-stress
/// recognises one: the statement starts with UPDATE and a condition holds a bind marker.
pub fn dynamic_condition(cql: &str) -> Option<&str> {
    let trimmed = cql.trim_start();
    if !trimmed
        .get(..6)
        .is_some_and(|w| w.eq_ignore_ascii_case("update"))
    {
        return None;
    }
    // The last ` IF ` outside quotes starts the condition.
    let upper = cql.to_ascii_uppercase();
    let mut at = None;
    let mut quoted = false;
    for (i, c) in upper.char_indices() {
        if c == '\'' {
            quoted = !quoted;
        } else if !quoted && c.is_whitespace() && upper[i + c.len_utf8()..].starts_with("IF") {
            let after = &upper[i + c.len_utf8() + 2..];
            if after.starts_with(char::is_whitespace) {
                at = Some(i + c.len_utf8());
            }
        }
    }
    let condition = &cql[at?..];
    (bind_markers(condition) > 0).then_some(condition)
}

/// The `?` of a CQL text outside its quoted strings.
fn bind_markers(cql: &str) -> usize {
    let mut quoted = false;
    cql.chars()
        .filter(|&c| {
            if c == '\'' {
                quoted = !quoted;
            }
            c == '?' && !quoted
        })
        .count()
}

/// The `token_range_queries` section: each name with its columns and page size.
fn token_range_queries(
    source: &Source,
    raw: serde_yaml_ng::Mapping,
    queries: &[Query],
) -> Result<Vec<TokenRangeQuery>, ProfileError> {
    let section_line = source.line_of("token_range_queries", None).unwrap_or(0);
    let mut out: Vec<TokenRangeQuery> = Vec::new();
    for (key, value) in raw {
        let Some(written) = key.as_str() else {
            return Err(source.error(
                "token_range_queries",
                None,
                "token_range_queries: each query is named by a text key, e.g. `all_columns:`"
                    .into(),
            ));
        };
        let name = written.to_ascii_lowercase();
        let line = source
            .lines_of(written, None)
            .into_iter()
            .find(|&l| l > section_line);
        let raw_query: RawTokenRangeQuery =
            serde_yaml_ng::from_value(value).map_err(|e| ProfileError {
                line,
                message: format!("token_range_queries, {name}: {e}"),
            })?;
        if name == INSERT
            || queries.iter().any(|q| q.name == name)
            || out.iter().any(|q| q.name == name)
        {
            return Err(ProfileError {
                line,
                message: format!(
                    "token_range_queries: the name '{name}' is taken (cassandra-stress refuses a name in both queries and token_range_queries; 'insert' is the insert operation)"
                ),
            });
        }
        let page_size = match raw_query.page_size.map(|p| p.text()) {
            None => 5000,
            Some(text) => match text.parse::<i32>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(ProfileError {
                        line: source.lines_of("page_size", None).into_iter().find(|&l| Some(l) > line),
                        message: format!(
                            "token_range_queries, {name}, page_size: '{text}' is not a whole number of rows above 0"
                        ),
                    })
                }
            },
        };
        let columns = raw_query.columns.trim().to_string();
        if columns.is_empty() {
            return Err(ProfileError {
                line,
                message: format!(
                    "token_range_queries, {name}: columns is empty (write '*' for all)"
                ),
            });
        }
        out.push(TokenRangeQuery {
            name,
            columns,
            page_size,
            line: line.unwrap_or(0),
        });
    }
    Ok(out)
}

/// The insert keys `row-population` (a ratio) and `visits` (a distribution of at least 1).
fn population_and_visits(
    source: &Source,
    raw: &RawInsert,
) -> Result<(Ratio, Distribution), ProfileError> {
    let defaults = InsertSpec::defaults();
    let row_population = match &raw.row_population {
        None => defaults.row_population,
        Some(value) => {
            let text = value.text();
            Ratio::parse(&text).map_err(|e| {
                source.error(
                    "row-population",
                    Some(&text),
                    format!("insert, row-population: {e}"),
                )
            })?
        }
    };
    let visits = match &raw.visits {
        None => defaults.visits,
        Some(value) => {
            let text = value.text();
            let d = Distribution::parse(&text)
                .map_err(|e| source.error("visits", Some(&text), format!("insert, visits: {e}")))?;
            if d.min() == 0 {
                return Err(source.error(
                    "visits",
                    Some(&text),
                    format!("insert, visits: {d} can draw 0: a partition is written in at least one insert"),
                ));
            }
            d
        }
    };
    Ok((row_population, visits))
}

#[cfg(test)]
mod tests {
    use super::super::raw::is_stress_profile;
    use super::*;

    const FULL: &str = "\
specname: blog
keyspace: ks
keyspace_definition: |
  CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
table: posts
table_definition: |
  CREATE TABLE posts (domain text, published timeuuid, body text, PRIMARY KEY (domain, published))
extra_definitions:
  - CREATE INDEX IF NOT EXISTS ON posts (body);
columnspec:
  - name: domain
    size: gaussian(5..100)
    population: uniform(1..10M)
  - name: published
    cluster: fixed(1000)
  - name: body
    size: fixed(100)
insert:
  partitions: uniform(1..5)
  select: fixed(1)/1000
  batchtype: unlogged
queries:
  Latest:
    cql: select * from posts where domain = ? LIMIT 1;
    fields: SAMEROW
  range:
    cql: select * from posts where domain = ? and published >= ?
";

    /// The vector search example: a vector column, its SAI index and an ANN query read as
    /// any other profile's.
    #[test]
    fn the_vector_search_example_reads() {
        let text = include_str!("../../../workloads/vector-search-profile.yaml");
        let p = Profile::parse(text).unwrap();
        assert_eq!(p.queries.len(), 1);
        assert_eq!(p.queries[0].name, "search");
        assert!(p.queries[0].cql.contains("ORDER BY embedding ANN OF ?"));
        assert!(p.extra_definitions[0].contains("StorageAttachedIndex"));
        assert!(p
            .table_definition
            .as_deref()
            .unwrap()
            .contains("vector<float, 64>"));
    }

    #[test]
    fn a_full_profile_reads_with_each_key() {
        let p = Profile::parse(FULL).unwrap();
        assert_eq!(p.keyspace, "ks");
        assert!(p
            .keyspace_definition
            .as_deref()
            .unwrap()
            .ends_with("'replication_factor': 1}"));
        assert_eq!(p.table, "posts");
        assert_eq!(
            p.extra_definitions,
            ["CREATE INDEX IF NOT EXISTS ON posts (body)"]
        );
        assert_eq!(p.columns.len(), 3);
        assert_eq!(p.columns[0].population.max(), 10_000_000);
        assert_eq!(p.columns[0].line, 11);
        assert_eq!(p.column("published").cluster.min(), 1000);
        assert_eq!(p.column("body").size.max(), 100);
        // Unnamed columns take cassandra-stress's defaults.
        let other = p.column("other");
        assert_eq!((other.size.min(), other.size.max()), (4, 8));
        assert_eq!(other.population.max(), 100_000_000_000);
        assert_eq!(other.cluster.max(), 1);
        assert_eq!(p.insert.partitions.max(), 5);
        assert_eq!(p.insert.select.max(), 0.001);
        assert_eq!(p.insert.batch, BatchKind::Unlogged);
        assert_eq!(p.op_names(), ["insert", "latest", "range"]);
        assert_eq!(p.queries[0].fields, Fields::SameRow);
        assert_eq!(
            p.queries[0].cql,
            "select * from posts where domain = ? LIMIT 1"
        );
        assert_eq!(p.queries[0].line, 23);
        assert_eq!(
            p.queries[1].fields,
            Fields::MultiRow,
            "multirow is the default"
        );
    }

    /// The keys of cassandra-stress's shipped profiles beyond the basic ones: token range
    /// queries, COUNTER batches, an insert's condition, conditional updates binding values.
    #[test]
    fn token_ranges_counters_and_conditions_read() {
        let text = replaced("  batchtype: unlogged\n", "  batchtype: Counter\n  condition: IF body = NULL;\n")
            .replace(
                "  range:\n    cql: select * from posts where domain = ? and published >= ?\n",
                "  lwt:\n    cql: update posts set body = ? where domain = ? and published = ? IF body = ? AND domain != 'if ?'\n    fields: samerow\n",
            )
            + "token_range_queries:\n  all_columns:\n    columns: '*'\n    page_size: 100\n  Body_TR:\n    columns: body\n";
        let p = Profile::parse(&text).unwrap();
        assert_eq!(p.insert.batch, BatchKind::Counter);
        assert_eq!(p.insert.condition.as_deref(), Some("IF body = NULL"));
        assert_eq!(
            p.queries[1].condition_variables, 1,
            "the quoted ? is no variable"
        );
        assert_eq!(p.queries[0].condition_variables, 0);
        assert_eq!(
            p.op_names(),
            ["insert", "latest", "lwt", "all_columns", "body_tr"]
        );
        assert_eq!(p.step_names(), ["lwt-read"]);
        let tr = &p.token_range_queries;
        assert_eq!((tr[0].columns.as_str(), tr[0].page_size), ("*", 100));
        assert_eq!((tr[1].columns.as_str(), tr[1].page_size), ("body", 5000));
        assert_eq!(tr[1].line, 34);
    }

    #[test]
    fn a_dynamic_condition_is_an_updates_if_with_a_bind_marker() {
        let cases = [
            (
                "update t set a = ? where k = ? IF b = ? AND c = ?",
                Some("IF b = ? AND c = ?"),
            ),
            (
                "UPDATE t SET a = ? WHERE k = ?\n  if b = ?",
                Some("if b = ?"),
            ),
            ("update t set a = ? where k = ? IF b = null", None),
            ("update t set a = ? where k = ? IF EXISTS", None),
            ("update t set a = 'x IF y' where k = ?", None),
            ("select * from t where k = ? IF b = ?", None),
            ("insert into t (k) values (?) IF NOT EXISTS", None),
        ];
        for (cql, expected) in cases {
            assert_eq!(dynamic_condition(cql), expected, "{cql}");
        }
    }

    #[test]
    fn insert_defaults_are_cassandra_stress_ones() {
        let p = Profile::parse("keyspace: k\ntable: t\n").unwrap();
        assert_eq!(p.insert.partitions.max(), 1);
        assert_eq!(p.insert.select.max(), 1.0);
        assert_eq!(p.insert.batch, BatchKind::Logged);
        assert_eq!(p.insert.row_population.max(), 1.0);
        assert_eq!(p.insert.visits.max(), 1);
        assert_eq!(p.op_names(), ["insert"]);
        assert!(p.keyspace_definition.is_none() && p.table_definition.is_none());
    }

    #[test]
    fn row_population_and_visits_are_read() {
        let p = Profile::parse(&replaced(
            "  batchtype: unlogged\n",
            "  batchtype: unlogged\n  row-population: fixed(1)/2\n  visits: uniform(2..4)\n",
        ))
        .unwrap();
        assert_eq!(p.insert.row_population.max(), 0.5);
        assert_eq!((p.insert.visits.min(), p.insert.visits.max()), (2, 4));
    }

    fn error(text: &str) -> ProfileError {
        Profile::parse(text).unwrap_err()
    }

    fn replaced(from: &str, to: &str) -> String {
        assert!(FULL.contains(from), "{from}");
        FULL.replacen(from, to, 1)
    }

    #[test]
    fn each_error_names_its_key_and_line() {
        let cases: &[(String, usize, &str)] = &[
            (
                replaced("  - name: body\n", "  - name: body\n    sise: 1\n"),
                17,
                "unknown field `sise`",
            ),
            (
                replaced("specname: blog\n", "specname: blog\nseeds: 4\n"),
                2,
                "unknown field `seeds`",
            ),
            (
                replaced(
                    "specname: blog\n",
                    "token_range_queries:\n  range:\n    columns: '*'\n",
                ),
                2,
                "token_range_queries: the name 'range' is taken",
            ),
            (
                replaced(
                    "specname: blog\n",
                    "token_range_queries:\n  all:\n    columns: '*'\n    page_size: 0\n",
                ),
                4,
                "page_size: '0' is not a whole number of rows above 0",
            ),
            (
                replaced(
                    "specname: blog\n",
                    "token_range_queries:\n  all:\n    column: '*'\n",
                ),
                2,
                "token_range_queries, all: unknown field `column`",
            ),
            (
                replaced("specname: blog\n", "seed: x\n"),
                1,
                "seed: the first cassandra-stress releases (2.1) read this key and ignored it, and 4.0 refuses it as unknown",
            ),
            (
                replaced(
                    "  batchtype: unlogged\n",
                    "  batchtype: unlogged\n  condition: body = NULL\n",
                ),
                22,
                "insert, condition: 'body = NULL' is not an IF clause",
            ),
            (
                replaced(
                    "    cql: select * from posts where domain = ? and published >= ?\n",
                    "    cql: update posts set body = ? where domain = ? and published = ? if body = ?\n",
                ),
                26,
                "only with fields: samerow",
            ),
            (
                replaced(
                    "  batchtype: unlogged\n",
                    "  batchtype: unlogged\n  row-population: fixed(1)\n",
                ),
                22,
                "insert, row-population: 'fixed(1)' is not a ratio",
            ),
            (
                replaced(
                    "  batchtype: unlogged\n",
                    "  batchtype: unlogged\n  visits: uniform(0..3)\n",
                ),
                22,
                "insert, visits: uniform(0..3) can draw 0",
            ),
            (
                replaced(
                    "  batchtype: unlogged\n",
                    "  batchtype: unlogged\n  visits: often\n",
                ),
                22,
                "insert, visits: 'often'",
            ),
            (
                replaced("  batchtype: unlogged\n", "  batchtype: counted\n"),
                21,
                "'counted' is not LOGGED, UNLOGGED or COUNTER",
            ),
            (
                replaced(
                    "  batchtype: unlogged\n",
                    "  batchtype: unlogged\n  partition: fixed(1)\n",
                ),
                22,
                "unknown field `partition`",
            ),
            (
                replaced("size: gaussian(5..100)", "size: gaussian(5..)"),
                12,
                "columnspec 'domain', size: 'gaussian(5..)'",
            ),
            (
                replaced("population: uniform(1..10M)", "population: zipf(1..10M)"),
                13,
                "unknown distribution 'zipf'",
            ),
            (
                replaced("size: fixed(100)", "size: 100"),
                17,
                "columnspec 'body', size: '100' is not a distribution",
            ),
            (
                replaced("cluster: fixed(1000)", "cluster: uniform(0..10)"),
                15,
                "cluster: uniform(0..10) can draw 0",
            ),
            (
                replaced("partitions: uniform(1..5)", "partitions: uniform(1..five)"),
                19,
                "insert, partitions: 'uniform(1..five)'",
            ),
            (
                replaced("partitions: uniform(1..5)", "partitions: fixed(0)"),
                19,
                "can draw 0",
            ),
            (
                replaced("select: fixed(1)/1000", "select: fixed(1)"),
                20,
                "insert, select: 'fixed(1)' is not a ratio",
            ),
            (
                replaced("fields: SAMEROW", "fields: somerow"),
                25,
                "fields: 'somerow' is not samerow or multirow",
            ),
            (
                replaced("    fields: SAMEROW\n", "    field: samerow\n"),
                23,
                "queries, latest: unknown field `field`",
            ),
            (
                replaced("  range:\n", "  LATEST:\n"),
                26,
                "the name 'latest' is taken",
            ),
            (
                replaced("  range:\n", "  insert:\n"),
                26,
                "the name 'insert' is taken",
            ),
            (
                replaced("  - name: body\n", "  - name: domain\n"),
                16,
                "names column 'domain' twice",
            ),
            (
                replaced("table: posts\n", "table: my-posts\n"),
                5,
                "table 'my-posts' is not a plain CQL name",
            ),
            (replaced("table: posts\n", ""), 1, "missing field `table`"),
        ];
        for (text, line, message) in cases {
            let e = error(text);
            assert!(e.message.contains(message), "expected '{message}' in: {e}");
            assert_eq!(e.line, Some(*line), "line of '{message}': {e}");
            assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
        }
    }

    #[test]
    fn headroom_format_is_told_apart_by_its_operations_key() {
        assert!(is_stress_profile(FULL));
        assert!(!is_stress_profile("name: x\noperations:\n  - read\n"));
        // headroom's keys without its operations: headroom's, whose reader says what is
        // missing.
        assert!(!is_stress_profile(
            "schema: []\ngenerators:\n  k: uniform(9)\n"
        ));
        assert!(is_stress_profile("table: t\nschema: x\n"));
        assert!(is_stress_profile("- a list\n"));
    }

    /// A profile of the wrong shape is described in cassandra-stress's terms, not by serde's
    /// names for the types that read it ("expected struct RawProfile", "untagged enum").
    #[test]
    fn the_wrong_shape_is_named_in_the_profiles_terms() {
        for (text, expected) in [
            (
                "r".to_string(),
                "expected a cassandra-stress profile: a mapping of keyspace",
            ),
            ("- a\n".to_string(), "expected a cassandra-stress profile"),
            (
                replaced("  - name: body\n    size: fixed(100)\n", "  - body\n"),
                "expected a columnspec entry: a mapping of name",
            ),
            (
                replaced("  partitions: uniform(1..5)\n", "  partitions: [1, 5]\n"),
                "line 19: insert.partitions: invalid type: sequence, expected a value such as uniform(1..10) or 10",
            ),
            (
                replaced("  batchtype: unlogged\n", "  batchtype: -1\n"),
                "line 21: insert.batchtype: invalid value: integer `-1`, expected a value such as uniform(1..10) or 10",
            ),
        ] {
            let e = error(&text).to_string();
            assert!(e.contains(expected), "{text:?}: {e}");
            for internal in ["untagged", "struct", "Raw", "Scalar"] {
                assert!(!e.contains(internal), "{text:?}: {e}");
            }
        }
        let insert = error("keyspace: ks\ntable: t\ninsert: 1\n").to_string();
        assert!(insert.contains("expected the insert section"), "{insert}");
        let query = error("keyspace: ks\ntable: t\nqueries:\n  q: 1\n").to_string();
        assert!(
            query.contains("expected a query: a mapping of cql"),
            "{query}"
        );
    }
}
