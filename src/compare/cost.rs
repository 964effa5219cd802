//! What a configuration costs, and what it costs to carry a target load with it (as Azul's capacity
//! and cost article and the Graviton2 instance comparison reckon it): the cluster's price per hour,
//! capacity per dollar-hour, and the nodes and yearly cost for `--target-load`.
//!
//! The arithmetic is simple on purpose and its assumptions are written beside every figure
//! ([`ASSUMPTIONS`]): capacity grows in proportion to the number of nodes, a node costs the
//! same every hour of the year, and nothing but nodes is counted.

use serde::{Deserialize, Serialize};

/// Hours in a year of on-demand use.
pub const HOURS_PER_YEAR: f64 = 8760.0;

/// Hours in a month (a year's twelfth), for prices given per month.
pub const HOURS_PER_MONTH: f64 = HOURS_PER_YEAR / 12.0;

/// The assumptions behind every cost figure, said next to them.
pub const ASSUMPTIONS: &str = "Cost assumes capacity grows in proportion to the number of \
     nodes (each node carries the tested capacity divided by the tested nodes), the given \
     price per node-hour for every hour of the year (8760 h), and counts nothing but nodes \
     (no storage, network, licences or discounts). Nodes that share one machine, as local \
     test nodes do, do not each have that machine's capacity.";

/// The highest price per node-hour taken: ten million, in any currency (the largest cloud
/// instances cost about a hundred dollars an hour).
pub const MAX_PRICE_PER_HOUR: f64 = 1e7;

/// A price per node, as given: `0.576/h`, `$0.576/h`, `420/month` or `5000/year` (a number
/// without its unit is refused: per hour and per month differ 730-fold). Optionally for one
/// configuration: `zgc=0.576/h`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePrice {
    /// The configuration it is for; `None` for every configuration without its own.
    pub label: Option<String>,
    /// Dollars (or any currency) per node-hour.
    pub per_hour: f64,
}

impl NodePrice {
    /// Reads one `--node-price`. The error is one line naming the input and a valid form.
    pub fn parse(text: &str) -> Result<NodePrice, String> {
        let trimmed = text.trim();
        let (label, price) = match trimmed.rsplit_once('=') {
            Some((label, price)) if !label.trim().is_empty() => {
                (Some(label.trim().to_string()), price.trim())
            }
            Some(_) => {
                return Err(
                    "the name before = is empty: write NAME=PRICE, e.g. zgc=0.576/h".to_string(),
                )
            }
            None => (None, trimmed),
        };
        let bad = || {
            "not a price: write a price per node above 0 such as 0.576/h, 420/month or \
             5000/year, optionally for one configuration: zgc=0.576/h"
                .to_string()
        };
        let price = price.trim_start_matches('$').trim();
        let (number, hours) = match price.split_once('/') {
            Some((n, unit)) => {
                let hours = match unit.trim().to_ascii_lowercase().as_str() {
                    "h" | "hr" | "hour" => 1.0,
                    "month" | "mo" => HOURS_PER_MONTH,
                    "year" | "y" | "yr" => HOURS_PER_YEAR,
                    _ => return Err(bad()),
                };
                (n.trim(), hours)
            }
            None => {
                if price.parse::<f64>().is_ok() {
                    return Err(format!(
                        "it has no unit: say per what, e.g. {price}/h, {price}/month or \
                         {price}/year"
                    ));
                }
                return Err(bad());
            }
        };
        let value: f64 = number.parse().map_err(|_| bad())?;
        if !(value.is_finite() && value > 0.0) {
            return Err(bad());
        }
        if value / hours > MAX_PRICE_PER_HOUR {
            return Err(
                "more than ten million per node-hour in any currency: give the price \
                        of one node"
                    .to_string(),
            );
        }
        Ok(NodePrice {
            label,
            per_hour: value / hours,
        })
    }

    /// Checks every `--node-price` together: at most one for every configuration and one per
    /// label.
    pub fn check_all(prices: &[NodePrice]) -> Result<(), String> {
        for (i, price) in prices.iter().enumerate() {
            if prices[..i].iter().any(|p| p.label == price.label) {
                return Err(match &price.label {
                    None => "--node-price is given twice for every configuration: give one \
                             price, and NAME=PRICE for a configuration of its own"
                        .to_string(),
                    Some(label) => format!(
                        "--node-price {label}=... is given twice: give one price per configuration"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The price per node-hour that applies to `label`: its own, else the general one.
    pub fn for_label(prices: &[NodePrice], label: &str) -> Option<f64> {
        prices
            .iter()
            .find(|p| p.label.as_deref() == Some(label))
            .or_else(|| prices.iter().find(|p| p.label.is_none()))
            .map(|p| p.per_hour)
    }
}

/// Which capacity the cost is sized by (`--size-for`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeFor {
    /// Each configuration's own capacity, every node up.
    #[default]
    Healthy,
    /// For each configuration searched with every node up, the capacity of its twin
    /// searched with a node down (the day a node is down).
    Degraded,
}

/// The cost figures of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Nodes in the tested cluster.
    pub nodes: u32,
    /// Price per node-hour.
    pub node_price_per_hour: f64,
    /// The tested cluster's price per hour.
    pub cluster_per_hour: f64,
    /// Capacity (requests/s) per dollar-hour of the tested cluster; `None` without capacity.
    pub capacity_per_dollar_hour: Option<f64>,
    /// For `--target-load`: the load, the nodes it needs and their yearly cost.
    pub target: Option<TargetCost>,
}

/// What carrying a target load at the SLA takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetCost {
    /// The load, requests/s.
    pub load_per_s: f64,
    /// Nodes needed, `None` when the configuration has no capacity.
    pub nodes: Option<u32>,
    /// Their cost per year.
    pub per_year: Option<f64>,
}

/// The cost of a configuration of `nodes` nodes at `per_hour` each whose capacity is
/// `capacity_per_s`, and of carrying `target_per_s` with it.
pub fn cost(
    nodes: u32,
    per_hour: f64,
    capacity_per_s: Option<f64>,
    target_per_s: Option<f64>,
) -> Cost {
    let nodes = nodes.max(1);
    let cluster_per_hour = per_hour * f64::from(nodes);
    let capacity = capacity_per_s.filter(|c| *c > 0.0);
    let target = target_per_s.map(|load| {
        let needed = capacity.map(|c| {
            let per_node = c / f64::from(nodes);
            // A hair of tolerance, so that a load of exactly 2 nodes' capacity needs 2.
            ((load / per_node) - 1e-9).ceil().max(1.0) as u32
        });
        TargetCost {
            load_per_s: load,
            nodes: needed,
            per_year: needed.map(|n| f64::from(n) * per_hour * HOURS_PER_YEAR),
        }
    });
    Cost {
        nodes,
        node_price_per_hour: per_hour,
        cluster_per_hour,
        capacity_per_dollar_hour: capacity.map(|c| c / cluster_per_hour),
        target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_read_per_hour_month_or_year_and_per_configuration() {
        let p = NodePrice::parse("0.576/h").unwrap();
        assert_eq!((p.label, p.per_hour), (None, 0.576));
        assert_eq!(NodePrice::parse("$1.5/h").unwrap().per_hour, 1.5);
        assert!(NodePrice::parse("1.5").unwrap_err().contains("has no unit"));
        assert!(NodePrice::parse("1e99/h")
            .unwrap_err()
            .contains("ten million"));
        assert!(
            NodePrice::parse("9e9/year").is_ok(),
            "about a million per hour"
        );
        let twice = |texts: &[&str]| {
            let prices: Vec<NodePrice> =
                texts.iter().map(|t| NodePrice::parse(t).unwrap()).collect();
            NodePrice::check_all(&prices)
        };
        assert!(twice(&["1/h", "2/h"])
            .unwrap_err()
            .contains("twice for every"));
        assert!(twice(&["zgc=1/h", "zgc=2/h"])
            .unwrap_err()
            .contains("zgc=... is given twice"));
        assert!(twice(&["1/h", "zgc=2/h"]).is_ok());
        assert!((NodePrice::parse("730/month").unwrap().per_hour - 1.0).abs() < 1e-12);
        assert!((NodePrice::parse("8760/year").unwrap().per_hour - 1.0).abs() < 1e-12);
        let own = NodePrice::parse("zgc=0.34/h").unwrap();
        assert_eq!(own.label.as_deref(), Some("zgc"));
        // A label may itself hold '=' (a matrix label such as gc=zgc).
        let matrix = NodePrice::parse("gc=zgc=0.34/h").unwrap();
        assert_eq!(matrix.label.as_deref(), Some("gc=zgc"));
        for bad in ["", "free", "0/h", "-1/h", "1/fortnight", "=1/h", "1/h/h"] {
            let e = NodePrice::parse(bad).unwrap_err();
            assert!(
                e.contains("0.576/h") || e.contains("name before ="),
                "{bad}: {e}"
            );
        }
        let prices = [NodePrice::parse("1/h").unwrap(), own];
        assert_eq!(NodePrice::for_label(&prices, "zgc"), Some(0.34));
        assert_eq!(NodePrice::for_label(&prices, "g1"), Some(1.0));
        assert_eq!(NodePrice::for_label(&prices[1..], "g1"), None);
    }

    /// The arithmetic of Azul's capacity and cost article: at $0.576 per node-hour, 3 nodes cost
    /// $1.728/h; a capacity of 60 000/s is 34 722 requests/s per dollar-hour; 100 000/s needs 5
    /// such nodes (20 000/s each), $25 228.80 a year.
    #[test]
    fn cost_per_hour_price_performance_and_nodes_for_a_target() {
        let c = cost(3, 0.576, Some(60_000.0), Some(100_000.0));
        assert!((c.cluster_per_hour - 1.728).abs() < 1e-12);
        assert!((c.capacity_per_dollar_hour.unwrap() - 34_722.222).abs() < 0.001);
        let t = c.target.unwrap();
        assert_eq!(t.nodes, Some(5));
        assert!((t.per_year.unwrap() - 25_228.8).abs() < 1e-6);
        // Exactly two nodes' worth needs two, a little more needs three.
        assert_eq!(
            cost(1, 1.0, Some(1000.0), Some(2000.0))
                .target
                .unwrap()
                .nodes,
            Some(2)
        );
        assert_eq!(
            cost(1, 1.0, Some(1000.0), Some(2001.0))
                .target
                .unwrap()
                .nodes,
            Some(3)
        );
        // No capacity: no price-performance, no node count.
        let none = cost(1, 1.0, None, Some(10.0));
        assert_eq!(none.capacity_per_dollar_hour, None);
        assert_eq!(none.target.unwrap().nodes, None);
    }
}
