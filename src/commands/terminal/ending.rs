//! How a command that runs load ends on the terminal: Ctrl-C and SIGTERM turned into a stop,
//! and the report written at the end.

use std::path::Path;
use std::sync::Arc;

use crate::stop::StopSignal;

/// Gives `stop` on Ctrl-C or SIGTERM, saying so, from a task of `runtime`.
pub fn stop_on_ctrl_c_or_term(runtime: &tokio::runtime::Runtime, stop: &Arc<StopSignal>) {
    let stop = stop.clone();
    runtime.spawn(async move {
        crate::stop::ctrl_c_or_term().await;
        eprintln!("\nStopping: no new requests; waiting for those in flight...");
        stop.trigger();
    });
}

/// Writes DIR/report.html for a run or search directory; a failure is reported, not fatal:
/// the run's own files are complete without it.
pub fn write_report(dir: &Path) {
    let path = dir.join(crate::catalogue::REPORT_HTML);
    match crate::report::write_report(&[dir.to_path_buf()], &path) {
        Ok(()) => println!("Report: {}", path.display()),
        Err(e) => eprintln!("Warning: could not write {}: {e:#}", path.display()),
    }
}
