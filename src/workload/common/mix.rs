//! The operation types of a workload and their mix: [`Operations`], the table every format
//! fills (names, shares, which type populates), and [`OpMix`], which deals the types exact over
//! the run and deterministic per request.
//!
//! Type shares are dealt out like Bresenham's line: among the first n requests, type t gets
//! floor(n · share_t) or one more, at every n. Ratios hold exactly at any length of run
//! (no 1% granularity, no drift from random draws), and request i's type depends on i alone.

/// Shares of operation types, dealt out exactly.
#[derive(Debug, Clone)]
pub struct OpMix {
    /// Each type's share of what the types before it left over; the last type takes the rest.
    conditional: Vec<f64>,
}

impl OpMix {
    /// A mix from weights (any non-negative numbers, not all zero), by type index.
    pub fn new(weights: &[f64]) -> OpMix {
        let mut remaining: f64 = weights.iter().sum();
        assert!(remaining > 0.0, "an operation mix needs a positive weight");
        let mut conditional = Vec::with_capacity(weights.len());
        for (t, &w) in weights.iter().enumerate() {
            let last_positive = w > 0.0 && weights[t + 1..].iter().all(|&later| later <= 0.0);
            conditional.push(if last_positive {
                // Exactly 1: what is left after subtracting the earlier weights may differ
                // from w in the last bit, and a share just under 1 would deal the first of
                // the remaining requests to a later type of weight 0.
                1.0
            } else if remaining > 0.0 {
                (w / remaining).min(1.0)
            } else {
                0.0
            });
            remaining -= w;
        }
        OpMix { conditional }
    }

    /// The type of request `seq`.
    pub fn op_for(&self, seq: u64) -> usize {
        let mut index = seq as f64;
        let last = self.conditional.len() - 1;
        for (t, &share) in self.conditional[..last].iter().enumerate() {
            let before = (index * share).floor();
            let through = ((index + 1.0) * share).floor();
            if through > before {
                return t;
            }
            // Request `seq` is not of type t: its position among the requests left for the
            // later types is its position minus the type-t requests before it.
            index -= before;
        }
        last
    }

    /// How many of the first `n` requests are of type 0: exactly floor(n · share₀), so a
    /// workload can tell how many requests of its first type came before any request
    /// without counting them.
    pub fn first_type_count(&self, n: u64) -> u64 {
        (n as f64 * self.conditional[0]).floor() as u64
    }
}

/// A workload's operation types: their names, the mix that deals them, each one's share as
/// the live output shows it, and the type that populates the tables. Every format owns one;
/// the [`Workload`](crate::workload::Workload) trait answers from it.
#[derive(Debug, Clone)]
pub struct Operations {
    names: Vec<String>,
    /// Each type's share as shown; a type with none is left out of the live output.
    shares: Vec<f64>,
    mix: OpMix,
    /// The type of each of the mix's types, when it deals them in another order; empty when
    /// the mix's type t is type t.
    order: Vec<usize>,
    /// The first request the mix deals: the ones before it (a load phase) count from it.
    first: u64,
    populate: usize,
    /// The types whose answers are judged for recall (an ANN query), by index; empty when
    /// none is.
    recall: Vec<bool>,
}

impl Operations {
    /// Types `names` dealt by `shares` (which the live output shows too); `populate` writes
    /// the rows before a run.
    pub fn new(names: Vec<String>, shares: Vec<f64>, populate: usize) -> Operations {
        let mix = OpMix::new(&shares);
        Operations::with_mix(names, shares, mix, populate)
    }

    /// Types `names` dealt by `mix`, shown with `shares` (a type recorded only as a step of
    /// another has a share to show and none in the mix).
    pub fn with_mix(
        names: Vec<String>,
        shares: Vec<f64>,
        mix: OpMix,
        populate: usize,
    ) -> Operations {
        Operations {
            names,
            shares,
            mix,
            order: Vec::new(),
            first: 0,
            populate,
            recall: Vec::new(),
        }
    }

    /// The same, type `op`'s answers judged for recall: every request of it records a
    /// recall, a failed one 0.
    pub fn with_recall(mut self, op: usize) -> Operations {
        self.recall.resize(self.names.len(), false);
        self.recall[op] = true;
        self
    }

    /// Whether type `op` records a recall per request.
    pub fn measures_recall(&self, op: usize) -> bool {
        self.recall.get(op).copied().unwrap_or(false)
    }

    /// The same, the mix dealing its type t as type `order[t]`, from request `first` on (a
    /// request before it is dealt as `first`).
    pub fn dealt_in(mut self, order: Vec<usize>, first: u64) -> Operations {
        self.order = order;
        self.first = first;
        self
    }

    /// The names, by type index.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Each type's share, as shown.
    pub fn shares(&self) -> &[f64] {
        &self.shares
    }

    /// The mix, in its own order of types.
    pub fn mix(&self) -> &OpMix {
        &self.mix
    }

    /// The type of request `seq`.
    pub fn op_for(&self, seq: u64) -> usize {
        let t = self.mix.op_for(seq.saturating_sub(self.first));
        self.order.get(t).copied().unwrap_or(t)
    }

    /// The type that populates the tables.
    pub fn populate(&self) -> usize {
        self.populate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(mix: &OpMix, n: u64, types: usize) -> Vec<u64> {
        let mut c = vec![0; types];
        for i in 0..n {
            c[mix.op_for(i)] += 1;
        }
        c
    }

    #[test]
    fn shares_are_exact_at_every_length() {
        let mix = OpMix::new(&[0.2, 0.05, 0.75]);
        for n in [1, 7, 20, 99, 1000, 12_345, 1_000_000] {
            let c = counts(&mix, n, 3);
            assert_eq!(c.iter().sum::<u64>(), n);
            for (t, share) in [0.2, 0.05, 0.75].iter().enumerate() {
                let expected = share * n as f64;
                assert!(
                    (c[t] as f64 - expected).abs() <= 1.0 + 1e-6,
                    "n={n} type {t}: {} vs {expected}",
                    c[t]
                );
            }
        }
    }

    #[test]
    fn the_first_type_is_counted_without_dealing() {
        for weights in [
            [0.05, 0.95, 0.0],
            [1.0 / 3.0, 0.5, 1.0 / 6.0],
            [0.0, 1.0, 0.0],
        ] {
            let mix = OpMix::new(&weights);
            let mut seen = 0;
            for n in 0..20_000 {
                assert_eq!(mix.first_type_count(n), seen, "{weights:?} n={n}");
                if mix.op_for(n) == 0 {
                    seen += 1;
                }
            }
        }
    }

    #[test]
    fn odd_ratios_hold_too() {
        let mix = OpMix::new(&[1.0 / 3.0, 0.001, 1.0 - 1.0 / 3.0 - 0.001]);
        let c = counts(&mix, 300_000, 3);
        assert_eq!(c[0], 100_000);
        assert!((c[1] as i64 - 300).abs() <= 1, "{c:?}");
    }

    #[test]
    fn zero_weights_never_occur_and_a_single_type_always_does() {
        let mix = OpMix::new(&[0.0, 0.0, 1.0]);
        assert!((0..1000).all(|i| mix.op_for(i) == 2));
        let mix = OpMix::new(&[1.0]);
        assert!((0..1000).all(|i| mix.op_for(i) == 0));
        let mix = OpMix::new(&[1.0, 0.0]);
        assert!((0..1000).all(|i| mix.op_for(i) == 0));
        // 1 - 0.95 is not 0.05 in floating point: the read share must still be exact and
        // the deletes none.
        let mix = OpMix::new(&[0.95, 0.05, 0.0]);
        assert_eq!(counts(&mix, 100_000, 3), vec![95_000, 5_000, 0]);
    }
}
