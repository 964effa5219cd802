//! Healthy searches and their degraded twins, for `--size-for degraded`: the cost of a
//! configuration sized by the capacity it keeps with a node down.
//!
//! Two searches are twins when they ran the same workload (every setting of it), under the
//! same SLA, on the same cluster (as recorded: a matrix's configuration, or none for
//! searches against `--hosts`) of the same number of nodes, one with every node up and one
//! with a node down (`--degraded 1`, a matrix's `degraded=1`). The rates tried, the repeats
//! and the labels may differ.

use crate::capacity::dir::SearchData;
use crate::capacity::settings::SearchSettings;

/// What makes two searches twins, but for the node down.
fn key(settings: &SearchSettings) -> (String, String, Option<String>, Option<u32>) {
    (
        serde_json::to_string(&settings.run.workload).unwrap_or_default(),
        settings.sla.to_string(),
        settings.cluster.clone(),
        settings.nodes,
    )
}

/// For each search, the index of its degraded twin when it is a healthy search that has
/// one; `None` for degraded searches and healthy ones without a twin. An error when a
/// healthy search has several twins (the comparison cannot tell which to size it by).
pub fn degraded_twins(searches: &[SearchData]) -> Result<Vec<Option<usize>>, String> {
    let keys: Vec<Option<_>> = searches
        .iter()
        .map(|s| s.settings.as_ref().map(key))
        .collect();
    let degraded = |i: usize| {
        searches[i]
            .settings
            .as_ref()
            .is_some_and(|s| s.degraded.is_some())
    };
    let mut twins = Vec::with_capacity(searches.len());
    for (i, search) in searches.iter().enumerate() {
        if keys[i].is_none() || degraded(i) {
            twins.push(None);
            continue;
        }
        let found: Vec<usize> = (0..searches.len())
            .filter(|&j| degraded(j) && keys[j] == keys[i])
            .collect();
        match found.as_slice() {
            [] => twins.push(None),
            [j] => twins.push(Some(*j)),
            several => {
                let labels: Vec<&str> = several
                    .iter()
                    .map(|&j| searches[j].label.as_str())
                    .collect();
                return Err(format!(
                    "--size-for degraded: {} has several twins searched with a node down ({}); \
                     compare it with one of them",
                    search.label,
                    labels.join(", ")
                ));
            }
        }
    }
    Ok(twins)
}

/// `--size-for degraded`: each healthy search's degraded twin. Refused when a healthy
/// search has none (or several): its cost could not be sized as asked.
pub fn sized_by_twins(searches: &[SearchData]) -> anyhow::Result<Vec<Option<usize>>> {
    let twins = degraded_twins(searches).map_err(anyhow::Error::msg)?;
    let healthy: Vec<usize> = (0..searches.len())
        .filter(|&i| {
            searches[i]
                .settings
                .as_ref()
                .is_some_and(|s| s.degraded.is_none())
        })
        .collect();
    let alone: Vec<&str> = healthy
        .iter()
        .filter(|&&i| twins[i].is_none())
        .map(|&i| searches[i].label.as_str())
        .collect();
    if healthy.len() == alone.len() {
        anyhow::bail!(
            "--size-for degraded prices each configuration by its capacity with a node down, \
             and none of these searches has a twin searched so (the same workload, SLA and \
             cluster with --degraded 1, or --matrix degraded=0,1)"
        );
    }
    if !alone.is_empty() {
        anyhow::bail!(
            "--size-for degraded: {} has no twin searched with a node down (the same \
             workload, SLA and cluster with --degraded 1): add one, or leave it out of the \
             comparison",
            alone.join(", ")
        );
    }
    Ok(twins)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::degraded::Degraded;

    fn search(label: &str, cluster: Option<&str>, down: bool) -> SearchData {
        let mut data = SearchData::load(&crate::fixtures::capacity_fixture()).unwrap();
        data.label = label.to_string();
        let settings = data.settings.as_mut().unwrap();
        settings.cluster = cluster.map(String::from);
        settings.degraded = down.then(|| Degraded {
            nodes_down: 1,
            node: 3,
            address: "127.0.0.3".into(),
            chosen: "the last node".into(),
        });
        data
    }

    #[test]
    fn each_healthy_search_finds_the_degraded_one_of_its_cluster() {
        let searches = [
            search("g1", Some("3 nodes g1"), false),
            search("g1 down", Some("3 nodes g1"), true),
            search("zgc", Some("3 nodes zgc"), false),
            search("zgc down", Some("3 nodes zgc"), true),
        ];
        assert_eq!(
            degraded_twins(&searches).unwrap(),
            [Some(1), None, Some(3), None]
        );
        // A healthy search of another cluster has none.
        let lonely = [
            search("g1", Some("3 nodes g1"), false),
            search("zgc down", Some("3 nodes zgc"), true),
        ];
        assert_eq!(degraded_twins(&lonely).unwrap(), [None, None]);
        // Another workload is no twin either.
        let mut other = search("other", Some("3 nodes g1"), true);
        other.settings.as_mut().unwrap().run.workload.seed += 1;
        let searches = [search("g1", Some("3 nodes g1"), false), other];
        assert_eq!(degraded_twins(&searches).unwrap(), [None, None]);
    }

    #[test]
    fn two_twins_are_one_too_many() {
        let searches = [
            search("a", None, false),
            search("b", None, true),
            search("c", None, true),
        ];
        let e = degraded_twins(&searches).unwrap_err();
        assert!(e.contains("a has several twins"), "{e}");
        assert!(e.contains("(b, c)"), "{e}");
    }
}
