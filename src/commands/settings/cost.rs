//! The cost flags (`--node-price`, `--nodes`, `--target-load`, `--size-for`) into a
//! comparison's options, for `compare`, a single search's price and a matrix.

use crate::cli::CostArgs;
use crate::compare::cost::NodePrice;
use crate::compare::CompareOptions;
use crate::usage::UsageError;

/// The comparison's options from the cost flags. Errors are the user's (exit code 2).
pub fn compare_options(cost: &CostArgs) -> anyhow::Result<CompareOptions> {
    NodePrice::check_all(&cost.node_price).map_err(UsageError::new)?;
    let prices = cost.node_price.clone();
    let target_per_s = cost.target_load;
    // --target-load and --size-for without --node-price are refused by the table of flag
    // combinations.
    let size_for = cost.size_for.unwrap_or_default();
    Ok(CompareOptions {
        baseline: None,
        prices,
        nodes: cost.nodes,
        target_per_s,
        size_for,
    })
}
