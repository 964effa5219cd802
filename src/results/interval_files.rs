//! One engine interval written into a run directory's interval files: each operation type's
//! histograms of each phase into histograms.hlog (`<op>.rt`, `<op>.st`, `<op>.wt` when asked,
//! `<op>.recall` for an operation judged for recall, `warmup.` before each for the warmup),
//! its row into intervals.csv, then the client's hiccups. The run writes its files through
//! here, and the tests that read files back write them the same way.

use std::io::Write;
use std::time::Duration;

use super::hlog::{HlogWriter, HICCUP_TAG};
use super::intervals_csv::IntervalsCsv;
use crate::engine::Interval;
use crate::metrics::Phase;

/// Writes `interval` (its operation types named by `op_names`, in order) and flushes
/// intervals.csv, so that a crash keeps every finished interval. `wait_tags` also logs each
/// request's wait before its send (`<op>.wt`), which a fleet's merge needs.
pub fn write_interval<W: Write>(
    hlog: &mut HlogWriter<W>,
    csv: &mut IntervalsCsv,
    op_names: &[String],
    interval: &Interval,
    wait_tags: bool,
) -> anyhow::Result<()> {
    let offset = Duration::from_nanos(interval.start_ns);
    let length = Duration::from_nanos(interval.length_ns);
    for (i, name) in op_names.iter().enumerate() {
        for phase in Phase::ALL {
            let stats = &interval.ops[i][phase.index()];
            if stats.total() == 0 {
                continue;
            }
            let prefix = if phase == Phase::Warmup {
                "warmup."
            } else {
                ""
            };
            let mut log = |kind: &str, histogram| {
                let tag = format!("{prefix}{name}.{kind}");
                hlog.write_interval(Some(&tag), offset, length, histogram)
            };
            log("rt", &stats.response_ns)?;
            log("st", &stats.service_ns)?;
            if wait_tags {
                log("wt", &stats.wait_ns)?;
            }
            if let Some(recall) = &stats.recall {
                log("recall", recall)?;
            }
            csv.row(interval, phase, name, stats)?;
        }
    }
    if let Some(h) = &interval.hiccups {
        hlog.write_interval(Some(HICCUP_TAG), offset, length, h)?;
    }
    csv.flush()?;
    Ok(())
}
