//! Whether a read must see every write acknowledged before it was sent: the replicas a write
//! waits for plus those a read asks, more than the replicas there are (W + R > RF).
//!
//! Only then is a stale read a defect; at weaker levels a stale read is what the levels
//! allow, and is counted as expected. Where the replication does not say how many replicas
//! a level means (a data centre the keyspace does not name), the read is not held to it.

use std::collections::BTreeMap;

/// How many replicas answer at `level` (a CQL consistency level, upper case), given the
/// replication factor of the whole keyspace and of the local data centre; `None` for a
/// level that names no count (SERIAL, ANY for a read).
fn replicas(level: &str, total_rf: u32, local_rf: Option<u32>) -> Option<u32> {
    let quorum = |rf: u32| rf / 2 + 1;
    match level {
        "ANY" => Some(0),
        "ONE" | "LOCAL_ONE" => Some(1),
        "TWO" => Some(2),
        "THREE" => Some(3),
        "QUORUM" => Some(quorum(total_rf)),
        "ALL" => Some(total_rf),
        "LOCAL_QUORUM" => local_rf.map(quorum),
        "EACH_QUORUM" => local_rf.map(quorum),
        _ => None,
    }
}

/// The replication factors of a keyspace's replication map (`class` and a factor per data
/// centre, or `replication_factor`): the whole keyspace's, and the local data centre's when
/// it can be told (`local_dc`, or the only one named).
pub fn replication_factors(
    replication: &BTreeMap<String, String>,
    local_dc: Option<&str>,
) -> Option<(u32, Option<u32>)> {
    if let Some(rf) = replication.get("replication_factor") {
        let rf: u32 = rf.parse().ok()?;
        return Some((rf, Some(rf)));
    }
    let dcs: BTreeMap<&str, u32> = replication
        .iter()
        .filter(|(k, _)| k.as_str() != "class")
        .filter_map(|(k, v)| Some((k.as_str(), v.parse().ok()?)))
        .collect();
    if dcs.is_empty() {
        return None;
    }
    let total = dcs.values().sum();
    let local = match local_dc {
        Some(dc) => dcs.get(dc).copied(),
        None if dcs.len() == 1 => dcs.values().next().copied(),
        None => None,
    };
    Some((total, local))
}

/// Whether a read at `read` must see every write acknowledged at `write` before it was sent:
/// W + R > RF, in the data centre the levels count in.
pub fn read_must_see_writes(write: &str, read: &str, total_rf: u32, local_rf: Option<u32>) -> bool {
    let local = write.starts_with("LOCAL_") || read.starts_with("LOCAL_");
    let rf = if local {
        // A local level counts in the local data centre; with another level it is only
        // sure when there is one data centre.
        match local_rf {
            Some(l)
                if l == total_rf || (write.starts_with("LOCAL_") && read.starts_with("LOCAL_")) =>
            {
                l
            }
            _ => return false,
        }
    } else {
        total_rf
    };
    match (
        replicas(write, total_rf, local_rf),
        replicas(read, total_rf, local_rf),
    ) {
        (Some(w), Some(r)) => rf > 0 && w + r > rf,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn each_pair_of_levels_at_rf_3() {
        let strong = [
            ("QUORUM", "QUORUM"),
            ("ALL", "ONE"),
            ("ONE", "ALL"),
            ("TWO", "TWO"),
            ("LOCAL_QUORUM", "LOCAL_QUORUM"),
            ("THREE", "ONE"),
            ("QUORUM", "ALL"),
        ];
        let weak = [
            ("ONE", "ONE"),
            ("ONE", "QUORUM"),
            ("QUORUM", "ONE"),
            ("LOCAL_ONE", "LOCAL_QUORUM"),
            ("ANY", "QUORUM"),
            ("ONE", "TWO"),
            ("QUORUM", "SERIAL"),
        ];
        for (w, r) in strong {
            assert!(read_must_see_writes(w, r, 3, Some(3)), "{w}/{r}");
        }
        for (w, r) in weak {
            assert!(!read_must_see_writes(w, r, 3, Some(3)), "{w}/{r}");
        }
    }

    #[test]
    fn at_rf_1_every_level_sees_every_write() {
        for (w, r) in [
            ("ONE", "ONE"),
            ("QUORUM", "ONE"),
            ("LOCAL_ONE", "LOCAL_ONE"),
        ] {
            assert!(read_must_see_writes(w, r, 1, Some(1)), "{w}/{r}");
        }
        assert!(!read_must_see_writes("ANY", "ONE", 1, Some(1)));
    }

    /// Two data centres of 3: QUORUM counts 4 of 6, LOCAL_QUORUM 2 of the local 3.
    #[test]
    fn levels_count_in_their_data_centre() {
        let (total, local) = replication_factors(
            &map(&[
                ("class", "NetworkTopologyStrategy"),
                ("dc1", "3"),
                ("dc2", "3"),
            ]),
            Some("dc1"),
        )
        .unwrap();
        assert_eq!((total, local), (6, Some(3)));
        assert!(read_must_see_writes("QUORUM", "QUORUM", total, local));
        assert!(!read_must_see_writes(
            "QUORUM",
            "LOCAL_QUORUM",
            total,
            local
        ));
        assert!(read_must_see_writes(
            "LOCAL_QUORUM",
            "LOCAL_QUORUM",
            total,
            local
        ));
        assert!(!read_must_see_writes(
            "LOCAL_ONE",
            "LOCAL_QUORUM",
            total,
            local
        ));
        // Without --local-dc, two data centres: a local level is not held to it.
        let (total, local) = replication_factors(
            &map(&[
                ("class", "NetworkTopologyStrategy"),
                ("dc1", "3"),
                ("dc2", "3"),
            ]),
            None,
        )
        .unwrap();
        assert!(!read_must_see_writes(
            "LOCAL_QUORUM",
            "LOCAL_QUORUM",
            total,
            local
        ));
        assert_eq!(
            replication_factors(
                &map(&[("class", "SimpleStrategy"), ("replication_factor", "2")]),
                None
            ),
            Some((2, Some(2)))
        );
    }
}
