//! A validated run's data on its page (`--validate`, summary.json's `validation`): the
//! verdict on the data, then the reads, the writes and the final check in one table. A run
//! without `--validate` shows none of it.

use super::page::{table, Page};
use crate::format::group_thousands as n;
use crate::results::summary::RunSummary;

/// The validation part of a run's section, when the run validated.
pub(super) fn validation_part(page: &mut Page, summary: &RunSummary) {
    let Some(v) = &summary.validation else {
        return;
    };
    page.h3("The data (--validate)");
    let incomplete = v.final_check.as_ref().is_some_and(|f| !f.complete);
    let verdict = match v.defects() {
        0 if incomplete => {
            "No verdict on the data: the final check could not read every row.".to_string()
        }
        0 => "Every acknowledged write was kept, and every value read was one that was written."
            .to_string(),
        d => format!(
            "{} defect(s): the cluster lost or damaged data it had acknowledged.",
            n(d)
        ),
    };
    let levels = if v.reads_must_see_writes {
        "The run's consistency levels promise each read every write acknowledged before it \
         was sent (W + R > RF): a stale read is a defect."
    } else {
        "The run's consistency levels let a read miss a recent write (W + R ≤ RF): stale \
         reads are expected, and counted apart."
    };
    page.para(&format!("{verdict} {levels}"));
    let r = &v.reads;
    let mut rows: Vec<(Vec<String>, &str)> = vec![
        row("Reads checked", r.checked, ""),
        row("Corrupt values read", r.corrupt, bad(r.corrupt)),
        row(
            "Stale reads, a defect",
            r.stale_unexpected,
            bad(r.stale_unexpected),
        ),
        row(
            "Stale reads, expected at these levels",
            r.stale_expected,
            "",
        ),
        row("Reads of values this run cannot check", r.unchecked, ""),
        row("Writes acknowledged", v.writes_acknowledged, ""),
        row(
            "Writes failed or timed out (never counted as lost)",
            v.writes_unknown,
            "",
        ),
    ];
    if let Some(f) = &v.final_check {
        rows.extend([
            row(
                &format!("Final check at {}: {}", f.consistency, f.counted.to_find()),
                f.keys,
                "",
            ),
            row("Final check: found", f.found, ""),
            row("Final check: lost", f.lost, bad(f.lost)),
            row("Final check: corrupt", f.corrupt, bad(f.corrupt)),
        ]);
    }
    page.body
        .push_str(&table(&["What", "Count"], &rows, &[false, true]));
    if let Some(f) = &v.final_check {
        page.note(&format!(
            "The final check read the table in {:.1} s after the load, outside the measured \
             run{}. The write record held {:.1} MB.",
            f.seconds,
            match &f.incomplete_because {
                Some(why) => format!("; it is incomplete: {why}"),
                None => String::new(),
            },
            v.record_bytes as f64 / 1e6
        ));
    }
}

fn row(what: &str, count: u64, class: &'static str) -> (Vec<String>, &'static str) {
    (vec![what.to_string(), n(count)], class)
}

/// The row class of a count that is a defect when above 0.
fn bad(count: u64) -> &'static str {
    if count > 0 {
        "fail"
    } else {
        ""
    }
}
