//! The `queries` and `token_range_queries` sections of a cassandra-stress profile, checked:
//! each named query with its CQL and how its values are bound ([`Query`]), each token range
//! query with its columns and page size ([`TokenRangeQuery`]). Names are case-insensitive and
//! unique across both sections and the insert; an UPDATE whose IF condition binds values is
//! told apart here, for it reads the row first.

use super::raw::{ProfileError, RawQuery, RawTokenRangeQuery, Source};

/// The operation every profile has: writing rows of the table. No query may take its name.
pub const INSERT: &str = "insert";

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

/// The `queries` section: each name with its CQL and fields, in the order of the file.
pub(super) fn queries(
    source: &Source,
    raw: serde_yaml_ng::Mapping,
) -> Result<Vec<Query>, ProfileError> {
    let mut queries: Vec<Query> = Vec::new();
    let queries_line = source.line_of("queries", None).unwrap_or(0);
    for (key, value) in raw {
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
        let raw_query: RawQuery = serde_yaml_ng::from_value(value).map_err(|e| ProfileError {
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
    Ok(queries)
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
pub(super) fn token_range_queries(
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
