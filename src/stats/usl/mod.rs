//! How capacity scales with cluster size: Gunther's Universal Scalability Law (USL) fitted
//! to capacities measured at several node counts, and what such a fit cannot tell.
//!
//! **Model.** `C(N) = λN / (1 + σ(N−1) + κN(N−1))` operations per second for `N` nodes.
//! `λ > 0` is one node's capacity without coordination cost. `σ ∈ [0, 1]` is contention, the
//! share of work waiting on something shared: below 0 the curve would be superlinear (a
//! caching or measurement artefact), at 1 the work is fully serialised, above 1 it would be
//! more than all of it. `κ ≥ 0` is coherency, the pairwise cost of keeping nodes agreed (a
//! negative κ would grow faster than linearly). With `κ > 0` capacity peaks at
//! `N* = sqrt((1−σ)/κ)`, where adding nodes stops paying; with `κ = 0` it approaches `λ/σ`.
//!
//! **Fit.** Least squares on `C` itself, one point per observation: Levenberg–Marquardt,
//! each step projected onto the bounds, a parameter held on a bound the gradient pushes
//! against, from the linearised `N/C = a + b(N−1) + cN(N−1)` (`a = 1/λ`, `b = σ/λ`, `c = κ/λ`;
//! all terms, without κ, without σ) and from `λ = max C/N`, `σ = κ = 0`. The lowest sum of
//! squares wins; a value on a bound is an answer.
//!
//! **Bootstrap.** Percentile intervals over refits of resampled data, seeded (same seed,
//! data and `rand` version, same result). When every size has repeats, observations are
//! resampled within each size ([`Bootstrap::Stratified`]), deviations from the size's mean
//! scaled by `sqrt(m/(m−1))` to undo the shrinkage of resampling `m` values; otherwise the
//! fit's residuals (centred, scaled by `sqrt(n/(n−3))`) are resampled onto the fitted values
//! ([`Bootstrap::Residual`]). With three repeats per size, simulated coverage of a nominal
//! 95% interval is about 90%: few repeats make narrow intervals.
//!
//! **Statements.** A wrong number is worse than none: where the data cannot answer, a
//! [`Statement`] says so. Refusals ([`Analysis::NoModel`]): fewer than three sizes with a
//! capacity (with the linear per-node figure unless capacity fell); three observations in
//! all, which leave no spread to judge the fit by; capacity that does not grow, when the
//! fitted best over the measured range is under [`MIN_GROWTH`] above the smallest size's or
//! a tail share of bootstrap fits show no growth (σ near 1, or `N*` at or below the smallest
//! size): [`Statement::FallingCapacity`] if the largest size measured below the smallest
//! and the bootstrap agrees, else [`Statement::NoGrowth`]. Caveats ([`Fit::notes`]): a size
//! whose every observation failed, left out of the fit and refused by [`Fit::predict`] (a
//! refusal if fewer than three sizes remain); failed repeats; a peak inside the measured
//! range followed by capacity below the smallest size's; and parameters the data cannot pin
//! down ([`Statement::Unpinned`]: for σ or κ an interval wider than the estimate, for λ one
//! wider than λ or reaching its bound), after which the model gives no prediction, peak or
//! node count outside the measured range.
//!
//! The numerical core, the bounded Levenberg–Marquardt, is [`least_squares`];
//! docs/decisions/0016-a-hand-written-usl-fit.md says why it is written here rather than
//! taken from a crate.

mod analysis;
mod least_squares;
mod model;
#[cfg(test)]
mod tests;

pub use analysis::{analyze, Analysis, Bootstrap, Fit, NodesFor, Peak, Statement};
pub use model::{
    Estimate, Observation, Parameter, Settings, Usl, DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES,
    MIN_GROWTH,
};
