//! The insert section of a cassandra-stress profile, checked into an [`InsertSpec`]: how an
//! insert chooses its partitions and rows (`partitions`, `select`, `row-population`,
//! `visits`), the batch it sends them in (`batchtype`) and a lightweight transaction's
//! `condition`. Each key takes cassandra-stress's default when absent, and a value that does
//! not parse or cannot work names its key and line.

use super::distribution::{Distribution, Ratio};
use super::raw::{ProfileError, RawInsert, Source};
use crate::workload::common::statements::BatchKind;

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
    pub(super) fn defaults() -> InsertSpec {
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

/// The insert section, checked: each key read, or its default.
pub(super) fn insert_spec(source: &Source, raw: RawInsert) -> Result<InsertSpec, ProfileError> {
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
