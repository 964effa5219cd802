//! The keyspace's replication and the table's compaction as people type them (`simple:3`,
//! `nts:dc1=3,dc2=2`, `lcs`), made into the CQL maps the schema is created with, and the
//! replicas a replication keeps of each partition.

use super::cql_map::{CqlMap, MapValue};

/// The replicas a keyspace's replication (a CQL map) keeps of each partition, over all data
/// centres, for SimpleStrategy and NetworkTopologyStrategy; `None` for another class.
pub fn replication_total(map: &str) -> Option<u64> {
    let map = CqlMap::parse(map).ok()?;
    let class = map.get("class")?.as_text();
    if !(class.ends_with("SimpleStrategy") || class.ends_with("NetworkTopologyStrategy")) {
        return None;
    }
    map.0
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("class"))
        .map(|(_, v)| v.as_text().parse::<u64>().ok())
        .sum()
}

/// Turns the `--replication` shorthand into a CQL map: `simple:3`,
/// `nts:datacenter1=3,dc2=2`, or a CQL map given as is (checked: a class, and for the two
/// strategies Cassandra ships, factors that place the data on at least one node).
pub fn replication_map(text: &str) -> Result<String, String> {
    let text = text.trim();
    let bad = |why: String| format!("--replication '{}': {why}", crate::usage::cut(text, 80));
    if text.starts_with('{') {
        let map = CqlMap::parse(text).map_err(bad)?;
        let class = map
            .get("class")
            .map(MapValue::as_text)
            .ok_or_else(|| bad("the map needs a 'class', e.g. 'SimpleStrategy'".into()))?;
        let factors: Vec<(&str, String)> = map
            .0
            .iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case("class"))
            .map(|(k, v)| (k.as_str(), v.as_text()))
            .collect();
        if class.ends_with("SimpleStrategy") || class.ends_with("NetworkTopologyStrategy") {
            let mut total = 0u64;
            for (key, value) in &factors {
                let rf: u32 = value
                    .parse()
                    .map_err(|_| bad(format!("'{key}': '{value}' is not a replication factor")))?;
                total += u64::from(rf);
            }
            if class.ends_with("SimpleStrategy")
                && !factors
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("replication_factor"))
            {
                return Err(bad("SimpleStrategy needs a 'replication_factor'".into()));
            }
            if total == 0 {
                return Err(bad(NO_REPLICA.into()));
            }
        }
        return Ok(map.to_cql());
    }
    if let Some(rf) = text.strip_prefix("simple:") {
        let rf: u32 = rf
            .trim()
            .parse()
            .map_err(|_| bad("the factor must be a whole number, as in simple:3".into()))?;
        if rf == 0 {
            return Err(bad(NO_REPLICA.into()));
        }
        return Ok(format!(
            "{{'class': 'SimpleStrategy', 'replication_factor': {rf}}}"
        ));
    }
    if let Some(dcs) = text.strip_prefix("nts:") {
        let mut parts = vec!["'class': 'NetworkTopologyStrategy'".to_string()];
        let mut total = 0u64;
        for dc in dcs.split(',') {
            let (name, rf) = dc.split_once('=').ok_or_else(|| {
                bad("write each data centre as NAME=FACTOR, as in nts:datacenter1=3".into())
            })?;
            let name = name.trim();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            {
                return Err(bad(format!(
                    "'{}' is not a data centre's name (letters, digits, _ - .)",
                    crate::usage::cut(name, 40)
                )));
            }
            let rf: u32 = rf.trim().parse().map_err(|_| {
                bad(format!(
                    "'{}' is not a factor",
                    crate::usage::cut(rf.trim(), 40)
                ))
            })?;
            total += u64::from(rf);
            parts.push(format!("'{name}': {rf}"));
        }
        if total == 0 {
            return Err(bad(NO_REPLICA.into()));
        }
        return Ok(format!("{{{}}}", parts.join(", ")));
    }
    Err(bad(
        "not understood: use simple:RF, nts:DC=RF[,DC=RF...] or a CQL map".into(),
    ))
}

/// Why a replication factor of 0 is refused.
const NO_REPLICA: &str = "a replication factor of 0 stores the data on no node, so every \
     request would fail as unavailable: give at least 1";

/// Turns the `--compaction` shorthand into a CQL map: stcs, lcs, twcs, ucs, or a CQL map
/// (checked: it names a class).
pub fn compaction_map(text: &str) -> Result<String, String> {
    let text = text.trim();
    let bad = |why: String| format!("--compaction '{}': {why}", crate::usage::cut(text, 80));
    let class = match text.to_ascii_lowercase().as_str() {
        t if t.starts_with('{') => {
            let map = CqlMap::parse(text).map_err(bad)?;
            if map.get("class").is_none() {
                return Err(bad(
                    "the map needs a 'class', e.g. 'LeveledCompactionStrategy'".into(),
                ));
            }
            return Ok(map.to_cql());
        }
        "stcs" => "SizeTieredCompactionStrategy",
        "lcs" => "LeveledCompactionStrategy",
        "twcs" => "TimeWindowCompactionStrategy",
        "ucs" => "UnifiedCompactionStrategy",
        _ => {
            return Err(bad(
                "not understood: use stcs, lcs, twcs, ucs or a CQL map".into()
            ))
        }
    };
    Ok(format!("{{'class': '{class}'}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_shorthands() {
        assert_eq!(
            replication_map("simple:3").unwrap(),
            "{'class': 'SimpleStrategy', 'replication_factor': 3}"
        );
        assert_eq!(
            replication_map("nts:datacenter1=3, dc2=1").unwrap(),
            "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3, 'dc2': 1}"
        );
        assert_eq!(replication_map("{'class': 'X'}").unwrap(), "{'class': 'X'}");
        assert!(replication_map("three").unwrap_err().contains("simple:RF"));
        assert!(replication_map("nts:dc1").is_err());
    }

    #[test]
    fn replication_that_cannot_work_is_refused_before_the_server_sees_it() {
        for (text, expected) in [
            ("simple:0", "stores the data on no node"),
            ("nts:dc1=0,dc2=0", "stores the data on no node"),
            (
                "{'class': 'SimpleStrategy', 'replication_factor': 0}",
                "no node",
            ),
            (
                "{'class': 'SimpleStrategy'}",
                "needs a 'replication_factor'",
            ),
            (
                "{'class': 'SimpleStrategy', 'replication_factor': 'x'}",
                "not a replication factor",
            ),
            (
                "{'class': 'SimpleStrategy', 'replication_factor': 1",
                "not closed",
            ),
            ("{'replication_factor': 1}", "needs a 'class'"),
            ("nts:dc'1=3", "not a data centre's name"),
            ("simple:-1", "whole number"),
        ] {
            let e = replication_map(text).unwrap_err();
            assert!(e.starts_with("--replication '"), "{text}: {e}");
            assert!(e.contains(expected), "{text}: {e}");
        }
        // A data centre may hold no replica when another holds some.
        assert!(replication_map("nts:dc1=3,dc2=0").is_ok());
        // A map is written back in one canonical form.
        assert_eq!(
            replication_map("{ 'class':'NetworkTopologyStrategy','dc1':3 }").unwrap(),
            "{'class': 'NetworkTopologyStrategy', 'dc1': 3}"
        );
        // Long input is quoted cut short.
        let long = format!("simple:{}", "9".repeat(500));
        assert!(replication_map(&long).unwrap_err().len() < 250);
    }

    #[test]
    fn compaction_shorthands() {
        assert_eq!(
            compaction_map("LCS").unwrap(),
            "{'class': 'LeveledCompactionStrategy'}"
        );
        assert!(compaction_map("fast").is_err());
        assert!(compaction_map("{'min_threshold': 4}")
            .unwrap_err()
            .contains("needs a 'class'"));
        assert!(compaction_map("{'class': 'LeveledCompactionStrategy'")
            .unwrap_err()
            .starts_with("--compaction '"));
    }
}
