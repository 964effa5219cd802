//! pauses.json and pauses.hlog: the server pauses of a run's nodes (see
//! [`crate::metrics::server_pauses`] for what they hold), written when the run ends.

use std::path::Path;
use std::time::Duration;

use super::hlog::HlogWriter;
use crate::catalogue::{PAUSES_HLOG, PAUSES_JSON};
use crate::metrics::server_pauses::{PausesFile, RunPauses, RunSpan};

/// Writes pauses.hlog and pauses.json into `out`. Never fails: a file that cannot be written
/// becomes a note of the figures returned.
pub fn write(out: &Path, span: &RunSpan, pauses: RunPauses) -> PausesFile {
    let RunPauses {
        mut file,
        per_interval,
    } = pauses;
    if let Err(e) = write_hlog(&out.join(PAUSES_HLOG), span, &per_interval) {
        file.notes
            .push(format!("{PAUSES_HLOG} could not be written: {e}"));
    }
    let path = out.join(PAUSES_JSON);
    if let Err(e) = super::write_json(&path, &file) {
        file.notes.push(format!("{e:#}"));
    }
    file
}

/// pauses.hlog: for each measured interval, one line per node.
fn write_hlog(
    path: &Path,
    span: &RunSpan,
    nodes: &[(String, Vec<hdrhistogram::Histogram<u64>>)],
) -> std::io::Result<()> {
    let mut log = HlogWriter::create(path, span.start)?;
    for (i, (start, length)) in span.measured_intervals().enumerate() {
        for (tag, histograms) in nodes {
            log.write_interval(
                Some(tag),
                Duration::from_nanos(start),
                Duration::from_nanos(length),
                &histograms[i],
            )?;
        }
    }
    log.into_inner().map(|_| ())
}
