//! Recall on the terminal: the mean recall of an interval's answers at the end of an ANN
//! query's part of the live line (`r0.981`), what `r` means in the live header, and the
//! line under such an op in the summary. An op type without recall shows none of these.

use crate::results::summary::Recall;

/// The op types judged for recall with the k of their recall@k, as the workload's
/// definition says (empty for a workload without ANN queries).
pub type RecallOps = [(String, usize)];

/// The k of `op`'s recall@k, when `op` is judged for recall and its k is known.
pub fn k_of(recall_ops: &RecallOps, op: &str) -> Option<usize> {
    recall_ops
        .iter()
        .find(|(name, _)| name == op)
        .map(|(_, k)| *k)
}

/// `recall@10`, or `recall` when k is not known.
pub fn name(k: Option<usize>) -> String {
    match k {
        Some(k) => format!("recall@{k}"),
        None => "recall".to_string(),
    }
}

/// The end of an op's part of the live line: ` r0.981`, the mean recall of the interval's
/// answers (the mean summary.json and the SLA take); empty for an op without recall or
/// without answers judged.
pub fn interval_mark(recall: Option<&Recall>) -> String {
    match recall {
        Some(r) => format!(" r{:.3}", r.mean),
        None => String::new(),
    }
}

/// What the live header adds for ops with recall: `r` after their columns, and its meaning
/// at the end of the line. Empty when no op has recall.
pub fn header_column(recall_ops: &RecallOps, op: &str) -> &'static str {
    if k_of(recall_ops, op).is_some() {
        " r"
    } else {
        ""
    }
}

/// The header's note on `r`, after its unit; empty when no op has recall.
pub fn header_note(recall_ops: &RecallOps) -> String {
    match recall_ops.first() {
        None => String::new(),
        Some((_, k)) => format!(
            "; r: mean {} of the interval's answers, a failed request counting 0",
            name(Some(*k))
        ),
    }
}

/// The summary's line on an op's recall.
pub fn summary_line(recall: &Recall, k: Option<usize>) -> String {
    format!(
        "{}: mean {:.3}, p1 {:.3}, p5 {:.3}, p50 {:.3}, min {:.3} over {} answers (a failed \
         request counts 0)",
        name(k),
        recall.mean,
        recall.p1,
        recall.p5,
        recall.p50,
        recall.min,
        crate::format::group_thousands(recall.requests)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops() -> Vec<(String, usize)> {
        vec![("ann".to_string(), 10)]
    }

    #[test]
    fn recall_interval_mark_is_the_mean_of_the_answers() {
        use crate::metrics::OpHistograms;
        let mut stats = OpHistograms::default();
        let of = |s: &OpHistograms| s.recall.as_ref().and_then(Recall::of);
        assert_eq!(
            interval_mark(of(&stats).as_ref()),
            "",
            "an op without recall shows none"
        );
        for recall in [1.0, 1.0, 0.9, 0.0] {
            stats.record_recall(recall);
        }
        assert_eq!(interval_mark(of(&stats).as_ref()), " r0.725");
    }

    #[test]
    fn recall_header_names_r_only_for_ops_with_recall() {
        assert_eq!(header_column(&ops(), "ann"), " r");
        assert_eq!(header_column(&ops(), "write"), "");
        assert_eq!(
            header_note(&ops()),
            "; r: mean recall@10 of the interval's answers, a failed request counting 0"
        );
        assert_eq!(header_note(&[]), "");
        assert_eq!(k_of(&ops(), "ann"), Some(10));
        assert_eq!(k_of(&ops(), "write"), None);
    }

    #[test]
    fn recall_summary_line_reads_the_figures_and_k() {
        let recall = Recall {
            requests: 1800,
            mean: 0.98067,
            p1: 0.8,
            p5: 0.9,
            p50: 1.0,
            min: 0.0,
        };
        assert_eq!(
            summary_line(&recall, Some(10)),
            "recall@10: mean 0.981, p1 0.800, p5 0.900, p50 1.000, min 0.000 over 1 800 \
             answers (a failed request counts 0)"
        );
        assert!(summary_line(&recall, None).starts_with("recall: mean 0.981, p1 0.800"));
    }
}
