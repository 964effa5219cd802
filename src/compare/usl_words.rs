//! The USL analysis's statements (`stats::usl::Statement`: what the data cannot say, as
//! figures) in the words the comparison prints.

use std::fmt;

use crate::stats::usl::Statement;

fn list<T: fmt::Display>(items: &[T]) -> String {
    let items: Vec<String> = items.iter().map(ToString::to_string).collect();
    if items.is_empty() {
        return "none".into();
    }
    items.join(", ")
}

/// A statement in words, lower-case first, without a full stop.
pub fn words(statement: &Statement) -> String {
    Words(statement).to_string()
}

struct Words<'a>(&'a Statement);

impl fmt::Display for Words<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Statement::*;
        match self.0 {
            TooFewSizes {
                nodes,
                per_node_capacity_per_s: per_node,
            } => {
                if nodes.is_empty() {
                    return f.write_str("no size has a capacity: nothing to fit");
                }
                let (count, at) = (nodes.len(), list(nodes));
                let noun = if count == 1 { "size" } else { "sizes" };
                write!(f, "{count} {noun} cannot fit three parameters (λ, σ, κ): ")?;
                write!(f, "measure at least three cluster sizes (N={at})")?;
                let Some(per_node) = per_node else {
                    return Ok(());
                };
                write!(f, "; linear rule only: {per_node:.1}/s per node")
            }
            FailedSize { nodes, labels } => {
                let labels = list(labels);
                write!(f, "N={nodes} found no capacity in any observation ")?;
                write!(f, "({labels}: every rate failed, or no verdict); left out")
            }
            PartlyFailedSize { nodes, failed } => {
                write!(f, "N={nodes}: {failed} failed repeat(s) left out")
            }
            NoGrowth { measured_nodes: m } => {
                let [a, b] = m;
                write!(f, "capacity does not grow with nodes over N={a}..{b}")
            }
            FallingCapacity {
                measured_nodes: m,
                capacity_per_s: c,
            } => {
                let ([a, b], [ca, cb]) = (m, c);
                f.write_str("adding nodes lowered capacity over the measured range: ")?;
                write!(f, "{ca:.0}/s at N={a}, {cb:.0}/s at N={b}")
            }
            NoSpread { observations: n } => {
                write!(f, "{n} observations fit three parameters exactly, leaving ")?;
                f.write_str("no spread to judge the fit by: repeat each size or add one")
            }
            Unpinned {
                parameters,
                measured_nodes: m,
            } => {
                let ([a, b], parameters) = (m, list(parameters));
                write!(f, "the data cannot pin down {parameters} (intervals ")?;
                f.write_str("wider than the estimates): no prediction outside ")?;
                write!(f, "the measured range N={a}..{b}")
            }
            TargetUnreachable {
                target_per_s: t,
                ceiling_per_s: c,
            } => {
                write!(f, "no cluster size reaches the target {t:.0}/s")?;
                let Some(c) = c else { return Ok(()) };
                write!(f, ": the model's capacity never exceeds {c:.0}/s")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::usl::Parameter;

    #[test]
    fn each_statement_reads_with_its_figures() {
        let cases = [
            (
                Statement::TooFewSizes { nodes: vec![3], per_node_capacity_per_s: Some(775.0) },
                "1 size cannot fit three parameters (λ, σ, κ): measure at least three cluster \
                 sizes (N=3); linear rule only: 775.0/s per node",
            ),
            (
                Statement::TooFewSizes { nodes: vec![2, 4], per_node_capacity_per_s: None },
                "2 sizes cannot fit three parameters (λ, σ, κ): measure at least three cluster \
                 sizes (N=2, 4)",
            ),
            (
                Statement::TooFewSizes { nodes: vec![], per_node_capacity_per_s: None },
                "no size has a capacity: nothing to fit",
            ),
            (
                Statement::FailedSize { nodes: 4, labels: vec!["four-0".into(), "four-1".into()] },
                "N=4 found no capacity in any observation (four-0, four-1: every rate failed, \
                 or no verdict); left out",
            ),
            (
                Statement::PartlyFailedSize { nodes: 5, failed: 2 },
                "N=5: 2 failed repeat(s) left out",
            ),
            (
                Statement::NoGrowth { measured_nodes: [1, 6] },
                "capacity does not grow with nodes over N=1..6",
            ),
            (
                Statement::FallingCapacity { measured_nodes: [3, 6], capacity_per_s: [5050.0, 3475.0] },
                "adding nodes lowered capacity over the measured range: 5050/s at N=3, 3475/s at N=6",
            ),
            (
                Statement::NoSpread { observations: 3 },
                "3 observations fit three parameters exactly, leaving no spread to judge the fit \
                 by: repeat each size or add one",
            ),
            (
                Statement::Unpinned {
                    parameters: vec![Parameter::Sigma, Parameter::Kappa],
                    measured_nodes: [2, 4],
                },
                "the data cannot pin down σ, κ (intervals wider than the estimates): no \
                 prediction outside the measured range N=2..4",
            ),
            (
                Statement::TargetUnreachable { target_per_s: 50_000.0, ceiling_per_s: Some(20_000.0) },
                "no cluster size reaches the target 50000/s: the model's capacity never exceeds \
                 20000/s",
            ),
            (
                Statement::TargetUnreachable { target_per_s: 50_000.0, ceiling_per_s: None },
                "no cluster size reaches the target 50000/s",
            ),
        ];
        for (statement, expected) in cases {
            assert_eq!(words(&statement), expected, "{statement:?}");
        }
    }
}
