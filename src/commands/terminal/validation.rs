//! What `--validate` found, in the lines a run's summary ends with.

use crate::format::group_thousands as n;
use crate::validation::Validation;

/// The lines of a validated run's summary: the reads, the writes, the final check, and the
/// verdict on the data.
pub fn describe(v: &Validation) -> Vec<String> {
    let mut lines = Vec::new();
    let r = &v.reads;
    let levels = if v.reads_must_see_writes {
        "the levels promise each read every write acknowledged before it (W + R > RF)"
    } else {
        "the levels let a read miss a recent write (W + R ≤ RF): stale reads are expected"
    };
    lines.push(format!(
        "reads checked: {}, corrupt {}, stale {} ({} a defect, {} expected); {levels}",
        n(r.checked),
        n(r.corrupt),
        n(r.stale_unexpected + r.stale_expected),
        n(r.stale_unexpected),
        n(r.stale_expected),
    ));
    if r.unchecked > 0 {
        lines.push(format!(
            "{} read(s) returned values this run cannot check (written without --validate or \
             with another --seed)",
            n(r.unchecked)
        ));
    }
    lines.push(format!(
        "writes acknowledged: {}; failed or timed out (may or may not have applied, never \
         counted as lost): {}; record {:.1} MB",
        n(v.writes_acknowledged),
        n(v.writes_unknown),
        v.record_bytes as f64 / 1e6
    ));
    if let Some(f) = &v.final_check {
        lines.push(format!(
            "final check at {}: {} {}, {} found, {} lost, {} corrupt, in {:.1} s (not part of \
             the measured run){}",
            f.consistency,
            n(f.keys),
            f.counted.to_find(),
            n(f.found),
            n(f.lost),
            n(f.corrupt),
            f.seconds,
            match &f.incomplete_because {
                Some(why) => format!("; incomplete: {why}"),
                None => String::new(),
            }
        ));
    }
    let defects = v.defects();
    lines.push(match (defects, &v.final_check) {
        (0, Some(f)) if !f.complete => {
            "no verdict on the data: the final check could not read every row".to_string()
        }
        (0, _) => {
            "the data: every acknowledged write kept, every value one that was written".to_string()
        }
        (d, _) => format!(
            "the data: {} defect(s) — the cluster lost or damaged what it acknowledged",
            n(d)
        ),
    });
    lines
}
