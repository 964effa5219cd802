//! `--sla` and `--window` into an [`Sla`]: the terms checked against the workload's
//! operations and recall, the windows against the interval and the run's length, and a
//! `--window` that would do nothing refused.

use std::time::Duration;

use crate::results::config::RunSettings;
use crate::sla::Sla;
use crate::usage::{usage_error, UsageError};
use crate::workload::AnyWorkload;

/// Reads `--sla` (if given) and checks it against the workload and the interval length.
pub fn sla_settings<M>(
    sla: Option<&str>,
    window: Option<Duration>,
    config: &RunSettings<M>,
) -> anyhow::Result<Option<Sla>> {
    // A --window without an SLA is refused by the table of flag combinations.
    let Some(text) = sla else {
        return Ok(None);
    };
    if window.is_some_and(|w| w.is_zero()) {
        return Err(usage_error(
            "--window 0s: the SLA's window must be longer than 0, e.g. 10s",
        ));
    }
    let sla = Sla::parse(text, window.unwrap_or(crate::cli::DEFAULT_WINDOW))?;
    if let Some(given) = window.filter(|w| *w != sla.window) {
        return Err(usage_error(format!(
            "--window {} does nothing here: --sla names its own window, {} (a window=... in \
             it, or an @WINDOW on every term); give the window once",
            humantime::format_duration(given),
            humantime::format_duration(sla.window)
        )));
    }
    let op_names = AnyWorkload::op_names_of(&config.workload)?;
    let op_names: Vec<&str> = op_names.iter().map(String::as_str).collect();
    sla.check_ops(&op_names).map_err(UsageError::new)?;
    let recall_ops = AnyWorkload::recall_ops_of(&config.workload);
    let recall_ops: Vec<(&str, usize)> =
        recall_ops.iter().map(|(op, k)| (op.as_str(), *k)).collect();
    sla.check_recall(&config.workload.name, &recall_ops)
        .map_err(UsageError::new)?;
    if matches!(
        config.workload.definition,
        crate::workload::Definition::Builtin
    ) {
        // A built-in's mix is known before it runs: a term on an operation it never sends
        // would have nothing to judge.
        let w = &config.workload;
        for (op, share, flag) in [
            (
                "write",
                1.0 - w.read_ratio - w.delete_ratio,
                "--read-ratio and --delete-ratio",
            ),
            ("read", w.read_ratio, "--read-ratio"),
            ("delete", w.delete_ratio, "--delete-ratio"),
        ] {
            if let Some(term) = sla
                .terms
                .iter()
                .find(|t| t.op.as_deref() == Some(op) && share <= 0.0)
            {
                return Err(usage_error(format!(
                    "the SLA term '{term}' judges {op} requests, but {flag} leave none in the \
                     mix: it would have nothing to judge"
                )));
            }
        }
    }
    if let crate::workload::Definition::Vector(_) = &config.workload.definition {
        // The vector workload's mix is known too: -r 0 sends no ANN query to judge.
        let w = &config.workload;
        let ann = crate::workload::vector::ANN_OP;
        for (op, share, flag) in [
            ("write", 1.0 - w.read_ratio, "-r 1"),
            (ann, w.read_ratio, "-r 0"),
        ] {
            let judged = |t: &&crate::sla::Term| {
                t.op.as_deref() == Some(op) || (op == ann && t.metric.is_recall())
            };
            if let Some(term) = sla.terms.iter().find(judged).filter(|_| share <= 0.0) {
                return Err(usage_error(format!(
                    "the SLA term '{term}' judges {op} requests, but {flag} leaves none in the \
                     mix: it would have nothing to judge"
                )));
            }
        }
    }
    crate::sla::check_windows(&sla, Duration::from_secs_f64(config.interval_s))
        .map_err(UsageError::new)?;
    if let Some(duration_s) = config.duration_s {
        check_duration_in_windows(Duration::from_secs_f64(duration_s), &sla)?;
    }
    Ok(Some(sla))
}

/// A measured duration must be a whole number of every SLA window (each term's): windows
/// are judged whole, so the part of a last window would never be judged, and a term whose
/// window is longer than the run would have no verdict.
pub fn check_duration_in_windows(duration: Duration, sla: &Sla) -> Result<(), UsageError> {
    for window in sla.windows() {
        let (one, whose) = if window == sla.window {
            ("one SLA window".to_string(), "SLA windows".to_string())
        } else {
            let terms = sla.over(window).to_terms_string();
            (
                format!("one window of {terms}"),
                format!("the windows of {terms}"),
            )
        };
        check_duration_in(duration, window, &one, &whose)?;
    }
    Ok(())
}

fn check_duration_in(
    duration: Duration,
    window: Duration,
    one: &str,
    whose: &str,
) -> Result<(), UsageError> {
    let show = |d: Duration| humantime::format_duration(d).to_string();
    let (d, w) = (duration.as_nanos(), window.as_nanos().max(1));
    if d < w {
        return Err(UsageError::new(format!(
            "--duration {} is shorter than {one} ({}): no such window could be judged; \
             give --duration {} or more, or a shorter window",
            show(duration),
            show(window),
            show(window)
        )));
    }
    if !d.is_multiple_of(w) {
        let below = Duration::from_nanos(((d / w) * w) as u64);
        return Err(UsageError::new(format!(
            "--duration {} is not a whole number of {whose} ({}): its last {} would never \
             be judged; give --duration {} or {}",
            show(duration),
            show(window),
            show(duration - below),
            show(below),
            show(below + window)
        )));
    }
    Ok(())
}
