//! The live view as every command that runs load starts it: the labels of its metrics, the
//! lines that say where to look, and the run's end in words for the page.

use std::path::Path;

use crate::live::{Labels, Live, LiveSettings};
use crate::results::config::RunSettings;
use crate::results::summary::RunSummary;
use crate::sla::Judgement;

/// The labels of a run's metrics: `label`, else the directory's name; the workload; the
/// worker of a fleet.
pub fn live_labels<M>(label: Option<&str>, out: &Path, config: &RunSettings<M>) -> Labels {
    Labels {
        run: label.map(str::to_string).unwrap_or_else(|| {
            out.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| out.display().to_string())
        }),
        workload: config.workload.name.clone(),
        worker: config
            .worker
            .as_ref()
            .map_or_else(|| "single".to_string(), |w| format!("{}/{}", w.index, w.count)),
    }
}

/// Starts what `settings` asks and says where to look.
pub fn start_live(settings: LiveSettings, labels: Labels, search: bool) -> anyhow::Result<Option<Live>> {
    let push = settings.push.as_ref().map(|p| p.describe());
    let live = Live::start(settings, labels, search)?;
    if let Some(live) = &live {
        for line in live.addresses() {
            println!("Watch it live: {line}");
        }
        if let Some(url) = push {
            println!("Pushing the metrics to {url} after every interval and at the end.");
        }
    }
    Ok(live)
}

/// A finished run's verdict in a few words.
pub fn ended_in_words(summary: &RunSummary) -> String {
    let validity = match &summary.validity {
        Some(v) if !v.is_valid() => return "no verdict: the client could not keep its schedule (client-bound)".to_string(),
        _ => "",
    };
    match &summary.sla {
        None => format!("{:.0} requests/s achieved, no SLA{validity}", summary.achieved_rate_per_s),
        Some(sla) => match sla.verdict.judgement() {
            Judgement::Pass => format!("PASS ({})", sla.spec),
            Judgement::Fail => format!("FAIL in {} ({})", sla.verdict.failing_in_words(), sla.spec),
            Judgement::NoVerdict(why) => format!("no verdict: {why}"),
        },
    }
}
