//! Recall@k: the share of the true k nearest neighbours an answer found, the measure of an
//! approximate (ANN) search's quality beside its latency.

/// The recall of `answer` (the ids a query returned, closest first) against `truth` (the
/// exact nearest ids, closest first) for a query with `LIMIT k`: |answer ∩ truth| / k, both
/// cut to their first `k`. An answer shorter than `k` counts what it lacks as misses; an id
/// repeated in it counts once. When the base holds fewer than `k` vectors, the truth is
/// shorter than `k` and the share is of the truth's length. With nothing to find (k = 0 or
/// an empty truth), recall is 1.
pub fn recall_at_k(answer: &[u32], truth: &[u32], k: usize) -> f64 {
    let truth = &truth[..truth.len().min(k)];
    if truth.is_empty() {
        return 1.0;
    }
    let answer = &answer[..answer.len().min(k)];
    let mut found: Vec<u32> = answer
        .iter()
        .copied()
        .filter(|id| truth.contains(id))
        .collect();
    found.sort_unstable();
    found.dedup();
    found.len() as f64 / truth.len() as f64
}

/// The recall of a request that may have failed: a failed request found nothing, so its
/// recall is 0 (leaving it out would flatter an index that fails its hard queries).
pub fn recall_of(answer: Option<&[u32]>, truth: &[u32], k: usize) -> f64 {
    match answer {
        Some(answer) => recall_at_k(answer, truth, k),
        None if truth[..truth.len().min(k)].is_empty() => 1.0,
        None => 0.0,
    }
}

/// The mean recall of many queries, added one at a time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeanRecall {
    sum: f64,
    count: u64,
}

impl MeanRecall {
    /// Adds one query's recall.
    pub fn add(&mut self, recall: f64) {
        self.sum += recall;
        self.count += 1;
    }

    /// How many queries were added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The mean, or `None` before any query.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_recall_counts_the_truth_found() {
        let truth = [5, 3, 9, 1];
        assert_eq!(recall_at_k(&[5, 3, 9, 1], &truth, 4), 1.0);
        assert_eq!(
            recall_at_k(&[1, 9, 3, 5], &truth, 4),
            1.0,
            "order does not matter"
        );
        assert_eq!(recall_at_k(&[5, 7, 8, 1], &truth, 4), 0.5);
        assert_eq!(
            recall_at_k(&[5, 3], &truth, 4),
            0.5,
            "a short answer misses the rest"
        );
        assert_eq!(
            recall_at_k(&[5, 5, 5, 5], &truth, 4),
            0.25,
            "a repeated id counts once"
        );
        assert_eq!(recall_at_k(&[], &truth, 4), 0.0);
        // Only the first k of each count.
        assert_eq!(recall_at_k(&[7, 5, 3], &truth, 2), 0.5);
        assert_eq!(recall_at_k(&[9, 1], &truth, 2), 0.0);
        // A base smaller than k: the truth holds all of it.
        assert_eq!(recall_at_k(&[0, 1], &[1, 0], 10), 1.0);
        assert_eq!(recall_at_k(&[], &[], 10), 1.0);
        assert_eq!(recall_at_k(&[], &truth, 0), 1.0);
    }

    #[test]
    fn vectors_recall_of_a_failed_request_is_zero() {
        assert_eq!(recall_of(None, &[1, 2], 2), 0.0);
        assert_eq!(recall_of(Some(&[2]), &[1, 2], 2), 0.5);
        let mut mean = MeanRecall::default();
        assert_eq!(mean.mean(), None);
        for r in [
            recall_of(None, &[1, 2], 2),
            recall_of(Some(&[1, 2]), &[1, 2], 2),
        ] {
            mean.add(r);
        }
        assert_eq!((mean.count(), mean.mean()), (2, Some(0.5)));
    }
}
