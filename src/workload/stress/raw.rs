//! A cassandra-stress profile as written: whether a YAML file is one ([`is_stress_profile`]),
//! the serde model of every key cassandra-stress documents (values as plain strings or
//! numbers, unknown keys refused by serde with their line), the text for finding the line of a
//! key serde does not report, and the error that names it. `model.rs` checks this into the
//! typed `Profile`.
//!
//! Apart from the checking because it is only the shape of the file: what each key may hold
//! and the words serde's errors use for it, in the profile's terms rather than these types'.

use std::fmt;

use serde::de::IgnoredAny;
use serde::Deserialize;

/// The file as written: plain strings, checked afterwards so that each error can name its
/// key and line.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a cassandra-stress profile: a mapping of keyspace, table, columnspec, insert and queries"
)]
pub(super) struct RawProfile {
    /// Names a profile among several (its operations are `specname.op`); read by `multi.rs`.
    #[serde(default)]
    #[allow(dead_code)]
    pub(super) specname: Option<String>,
    pub(super) keyspace: String,
    #[serde(default)]
    pub(super) keyspace_definition: Option<String>,
    pub(super) table: String,
    #[serde(default)]
    pub(super) table_definition: Option<String>,
    #[serde(default)]
    pub(super) extra_definitions: Option<Vec<String>>,
    #[serde(default)]
    pub(super) columnspec: Option<Vec<RawColumn>>,
    #[serde(default)]
    pub(super) insert: Option<RawInsert>,
    #[serde(default)]
    pub(super) queries: Option<serde_yaml_ng::Mapping>,
    /// Named reads of whole token ranges: name -> columns and page_size.
    #[serde(default)]
    pub(super) token_range_queries: Option<serde_yaml_ng::Mapping>,
    // A key cassandra-stress no longer reads: refused by Profile::parse with the reason.
    #[serde(default)]
    pub(super) seed: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a columnspec entry: a mapping of name, size, population and cluster"
)]
pub(super) struct RawColumn {
    pub(super) name: String,
    #[serde(default)]
    pub(super) size: Option<Scalar>,
    #[serde(default)]
    pub(super) population: Option<Scalar>,
    #[serde(default)]
    pub(super) cluster: Option<Scalar>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "the insert section: a mapping of partitions, select, batchtype, row-population, visits and condition"
)]
pub(super) struct RawInsert {
    #[serde(default)]
    pub(super) partitions: Option<Scalar>,
    #[serde(default)]
    pub(super) select: Option<Scalar>,
    #[serde(default)]
    pub(super) batchtype: Option<Scalar>,
    #[serde(default, rename = "row-population")]
    pub(super) row_population: Option<Scalar>,
    #[serde(default)]
    pub(super) visits: Option<Scalar>,
    /// A lightweight transaction's condition, `IF ...`, appended to the insert.
    #[serde(default)]
    pub(super) condition: Option<String>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a query: a mapping of cql and fields"
)]
pub(super) struct RawQuery {
    pub(super) cql: String,
    #[serde(default)]
    pub(super) fields: Option<String>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a token range query: a mapping of columns and page_size"
)]
pub(super) struct RawTokenRangeQuery {
    pub(super) columns: String,
    #[serde(default)]
    pub(super) page_size: Option<Scalar>,
}

/// A scalar written as text or a number (`size: 10` as well as `size: fixed(10)`).
pub(super) enum Scalar {
    Text(String),
    Number(u64),
}

/// Read by hand rather than as an untagged enum, whose error is serde's "data did not match
/// any variant of untagged enum Scalar", without the key or its line.
impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a value such as uniform(1..10) or 10")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Number(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Scalar, E> {
                u64::try_from(v)
                    .map(Scalar::Number)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl Scalar {
    pub(super) fn text(&self) -> String {
        match self {
            Scalar::Text(t) => t.clone(),
            Scalar::Number(n) => n.to_string(),
        }
    }
}

/// An error in a profile: where it is and what would be right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileError {
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong, naming the key.
    pub message: String,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Whether a YAML text is a cassandra-stress profile rather than headroom's own format:
/// a mapping at the top, without the `operations` key of headroom's format.
pub fn is_stress_profile(text: &str) -> bool {
    match serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text) {
        // headroom's format has `operations`; a file with keys of headroom's alone (and none
        // of a profile's) is headroom's too, missing them, and its reader says so.
        Ok(serde_yaml_ng::Value::Mapping(m)) => {
            let has = |keys: &[&str]| keys.iter().any(|k| m.contains_key(*k));
            let headrooms = has(&["schema", "generators", "populate", "description"]);
            let profiles = has(&[
                "table",
                "table_definition",
                "keyspace_definition",
                "columnspec",
                "insert",
                "queries",
            ]);
            !has(&["operations"]) && (profiles || !headrooms)
        }
        // Not YAML that reads as a whole (say, an operation named twice): a top-level
        // `operations:` line still marks headroom's format, whose reader says what is wrong.
        Err(_) => !text.lines().any(|line| {
            line.strip_prefix("operations")
                .is_some_and(|r| r.trim_start().starts_with(':'))
        }),
        // Not a mapping: the profile reader says what is wrong.
        _ => true,
    }
}

/// The profile's text, to find the line of a key when serde does not report it.
pub(super) struct Source<'a>(pub(super) &'a str);

impl Source<'_> {
    /// The first line holding `key:` (as a mapping key, possibly a list item's first) with,
    /// when given, `value` after it.
    pub(super) fn line_of(&self, key: &str, value: Option<&str>) -> Option<usize> {
        self.lines_of(key, value).first().copied()
    }

    /// Every such line, in order.
    pub(super) fn lines_of(&self, key: &str, value: Option<&str>) -> Vec<usize> {
        let unquote = |v: &str| v.trim().trim_matches(|c| c == '\'' || c == '"').to_string();
        self.0
            .lines()
            .enumerate()
            .filter_map(|(i, line)| {
                let line = line.trim_start();
                let line = line.strip_prefix("- ").unwrap_or(line).trim_start();
                let line = unquote(line.split(" #").next().unwrap_or(line));
                let rest = line
                    .strip_prefix(key)?
                    .trim_start_matches(['\'', '"'])
                    .trim_start()
                    .strip_prefix(':')?;
                match value {
                    Some(v) if unquote(rest) != v.trim() => None,
                    _ => Some(i + 1),
                }
            })
            .collect()
    }

    pub(super) fn error(&self, key: &str, value: Option<&str>, message: String) -> ProfileError {
        ProfileError {
            line: self.line_of(key, value),
            message,
        }
    }
}
