//! The exit codes every command ends with, in one place (the README's table lists them):
//! 0 success, 1 a failure, 2 the user's input (as clap's own errors), 3 an SLA that failed
//! (a search: no rate met it), 4 no verdict (the client limited the load, or there was
//! nothing to judge), 5 the cluster lost or damaged data (`--validate`), 130 interrupted.

use std::process::ExitCode;

use crate::capacity::Status;
use crate::engine::StopReason;
use crate::results::summary::RunSummary;
use crate::sla::Judgement;
use crate::usage::Blame;

/// The user's input cannot work: a flag, a file, a host, credentials.
pub const EXIT_USAGE: u8 = 2;
/// A completed run whose SLA failed; a search that found no rate meeting it.
pub const EXIT_SLA_FAILED: u8 = 3;
/// A run (or search) without a verdict: the client, not the server, limited it, or it had
/// nothing to judge (no whole window, a term with no request).
pub const EXIT_NO_VERDICT: u8 = 4;
/// `--validate` found a defect in the data: an acknowledged write lost, a corrupt value, or
/// a read older than an acknowledged write where the consistency levels forbid it.
pub const EXIT_DATA_DEFECT: u8 = 5;
/// Ctrl-C or SIGTERM ended the command (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The exit code of a capacity search that ended with `status` and `capacity_per_s`: 0 when
/// it found a capacity, 3 when it completed without one (no rate met the SLA), 4 when it
/// stopped at a trial without a verdict, 130 when interrupted. (A search stopped by an error
/// ends with that error: 1.) Under `--validate` (`data`), a defect in any trial's data ends
/// it with 5 whatever its capacity, and a trial whose final check could not read the whole
/// table with 4.
pub fn of_search(
    status: Status,
    capacity_per_s: Option<f64>,
    data: Option<&crate::validation::DataVerdict>,
) -> ExitCode {
    match (status, capacity_per_s) {
        (Status::Interrupted, _) => ExitCode::from(EXIT_INTERRUPTED),
        (Status::Failed, _) => ExitCode::from(1),
        _ if data.is_some_and(|d| d.defects > 0) => ExitCode::from(EXIT_DATA_DEFECT),
        _ if data.is_some_and(|d| d.incomplete_runs > 0) => ExitCode::from(EXIT_NO_VERDICT),
        (Status::Invalid, _) => ExitCode::from(EXIT_NO_VERDICT),
        (_, Some(_)) => ExitCode::SUCCESS,
        (_, None) => ExitCode::from(EXIT_SLA_FAILED),
    }
}

/// The exit code for an error that ended a command: [`EXIT_USAGE`] when any cause in its
/// chain is the user's to mend ([`Blame`]), 1 for everything else.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    if err.chain().any(is_usage_error) {
        EXIT_USAGE
    } else {
        1
    }
}

/// Whether one cause is the user's: asked of every error type that can answer [`Blame`].
fn is_usage_error(cause: &(dyn std::error::Error + 'static)) -> bool {
    fn blamed<E: Blame + std::error::Error + 'static>(
        cause: &(dyn std::error::Error + 'static),
    ) -> bool {
        cause.downcast_ref::<E>().is_some_and(Blame::is_usage_error)
    }
    const ANSWERS: [fn(&(dyn std::error::Error + 'static)) -> bool; 8] = [
        blamed::<crate::usage::UsageError>,
        blamed::<crate::units::ParseError>,
        blamed::<crate::sla::SlaParseError>,
        blamed::<crate::cluster::ClusterError>,
        blamed::<crate::maintenance::PlanError>,
        blamed::<crate::workload::common::error::WorkloadError>,
        blamed::<crate::client::ConnectError>,
        blamed::<crate::fleet::kube::pack::PackError>,
    ];
    ANSWERS.iter().any(|answer| answer(cause))
}

/// The exit code for a run that ended this way.
pub fn exit_code(stop: StopReason) -> ExitCode {
    match stop {
        StopReason::Completed => ExitCode::SUCCESS,
        StopReason::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
        StopReason::AllRequestsFailing => ExitCode::from(1),
    }
}

/// The exit code of a finished run: [`EXIT_DATA_DEFECT`] when `--validate` found a defect
/// (whatever else happened but an interruption); otherwise [`exit_code`] of how it stopped;
/// for a completed run, [`EXIT_NO_VERDICT`] without a valid measurement, without anything
/// to judge its SLA by, or with a final check that could not read every row,
/// [`EXIT_SLA_FAILED`] when its SLA failed, 0 otherwise.
pub fn exit_code_of(summary: &RunSummary) -> ExitCode {
    let validation = summary.validation.as_ref();
    if summary.stop != StopReason::Interrupted && validation.is_some_and(|v| v.defects() > 0) {
        return ExitCode::from(EXIT_DATA_DEFECT);
    }
    if summary.stop != StopReason::Completed {
        return exit_code(summary.stop);
    }
    let incomplete = validation
        .and_then(|v| v.final_check.as_ref())
        .is_some_and(|f| !f.complete);
    if incomplete {
        return ExitCode::from(EXIT_NO_VERDICT);
    }
    if !summary.is_valid() {
        return ExitCode::from(EXIT_NO_VERDICT);
    }
    match summary.sla.as_ref().map(|s| s.verdict.judgement()) {
        Some(Judgement::Fail) => ExitCode::from(EXIT_SLA_FAILED),
        Some(Judgement::NoVerdict(_)) => ExitCode::from(EXIT_NO_VERDICT),
        Some(Judgement::Pass) | None => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sla::{ClientFigures, Validity};

    #[test]
    fn the_users_errors_end_with_2_and_failures_with_1() {
        let usage = anyhow::Error::from(crate::usage::UsageError::new("--rate -1"));
        assert_eq!(exit_code_for(&usage), EXIT_USAGE);
        // Behind context, the cause still decides.
        assert_eq!(
            exit_code_for(&usage.context("resolving the flags")),
            EXIT_USAGE
        );
        let sla = crate::sla::Sla::parse("p99<", std::time::Duration::from_secs(10)).unwrap_err();
        assert_eq!(exit_code_for(&sla.into()), EXIT_USAGE);
        // A cluster error is the user's only for its configuration.
        let invalid = crate::cluster::ClusterError::InvalidConfig("--nodes 0".into());
        assert_eq!(exit_code_for(&invalid.into()), EXIT_USAGE);
        let io = crate::cluster::ClusterError::io("starting node1")(std::io::Error::other("no"));
        assert_eq!(exit_code_for(&io.into()), 1);
        assert_eq!(exit_code_for(&anyhow::anyhow!("the server went away")), 1);
    }

    #[test]
    fn a_search_without_a_capacity_ends_as_a_failed_sla() {
        let code = |status, capacity| format!("{:?}", of_search(status, capacity, None));
        let of = |c: u8| format!("{:?}", ExitCode::from(c));
        assert_eq!(code(Status::Complete, Some(1000.0)), of(0));
        assert_eq!(code(Status::Complete, None), of(EXIT_SLA_FAILED));
        assert_eq!(code(Status::Invalid, Some(1000.0)), of(EXIT_NO_VERDICT));
        assert_eq!(code(Status::Interrupted, None), of(EXIT_INTERRUPTED));
        assert_eq!(code(Status::Failed, None), of(1));
    }

    /// Under --validate, a defect in any trial's data ends a search with its own code,
    /// whatever its capacity; a trial without a verdict on its data, with no verdict.
    #[test]
    fn a_search_whose_data_has_a_defect_ends_with_its_own_code() {
        use crate::validation::{DataCheck, DataVerdict};
        let of = |c: u8| format!("{:?}", ExitCode::from(c));
        let verdict = |defects, complete| {
            DataVerdict::of([
                (
                    DataCheck {
                        defects: 0,
                        lost: 0,
                        complete: true,
                    },
                    Some(1000.0),
                ),
                (
                    DataCheck {
                        defects,
                        lost: defects,
                        complete,
                    },
                    Some(2000.0),
                ),
            ])
        };
        let code = |status, capacity, data: &Option<DataVerdict>| {
            format!("{:?}", of_search(status, capacity, data.as_ref()))
        };
        let clean = verdict(0, true);
        assert_eq!(code(Status::Complete, Some(1000.0), &clean), of(0));
        assert_eq!(code(Status::Complete, None, &clean), of(EXIT_SLA_FAILED));
        let lost = verdict(3, true);
        assert_eq!(lost.as_ref().unwrap().defect_rates_per_s, [2000.0]);
        assert_eq!(
            code(Status::Complete, Some(1000.0), &lost),
            of(EXIT_DATA_DEFECT)
        );
        assert_eq!(code(Status::Invalid, None, &lost), of(EXIT_DATA_DEFECT));
        assert_eq!(code(Status::Interrupted, None, &lost), of(EXIT_INTERRUPTED));
        let unread = verdict(0, false);
        assert_eq!(
            code(Status::Complete, Some(1000.0), &unread),
            of(EXIT_NO_VERDICT)
        );
    }

    #[test]
    fn the_exit_code_says_pass_fail_or_no_verdict() {
        let text =
            std::fs::read_to_string(crate::fixtures::run_fixture().join("summary.json")).unwrap();
        let mut summary: RunSummary = serde_json::from_str(&text).unwrap();
        let code = |s: &RunSummary| format!("{:?}", exit_code_of(s));
        assert!(summary.sla.is_some(), "the fixture has an SLA");
        let verdict = &mut summary.sla.as_mut().unwrap().verdict;
        verdict.failing.clear();
        verdict.windows = verdict.windows.max(1);
        summary.validity = None;
        assert_eq!(code(&summary), format!("{:?}", ExitCode::SUCCESS));
        // A term that covered no request: nothing to judge it by.
        let verdict = &mut summary.sla.as_mut().unwrap().verdict;
        verdict.worst[0].requests = Some(0);
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_NO_VERDICT))
        );
        let verdict = &mut summary.sla.as_mut().unwrap().verdict;
        verdict.worst[0].requests = None;
        verdict.failing.push(crate::sla::WindowVerdict {
            index: 0,
            start_ns: 0,
            length_ns: 1_000_000_000,
            window_ms: None,
            pass: false,
            outcomes: Vec::new(),
        });
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_SLA_FAILED))
        );
        let figures = ClientFigures {
            threads: 1,
            cpu_share_of_threads: 1.0,
            wait_p99_ms: 900.0,
            wait_p999_ms: 900.0,
            wait_max_ms: 900.0,
            lag_limit_ms: 10.0,
            hiccup_p999_ms: 0.0,
            hiccup_max_ms: 0.0,
            max_backlog: 0,
            unsent: 10.0,
            unsent_held: false,
            limit_waits: 0,
            late_sends: 0,
            measured_requests: 100,
            client_decided_windows: 0,
            overflowed: false,
        };
        summary.validity = Some(Validity::decide(figures, true));
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_NO_VERDICT))
        );
        summary.stop = StopReason::Interrupted;
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_INTERRUPTED))
        );
    }

    /// A defect in the data outweighs the SLA's verdict and a run's failure; a final check
    /// that could not read every row gives no verdict; an interruption stays one.
    #[test]
    fn a_defect_in_the_data_ends_with_its_own_code() {
        use crate::validation::{FinalCheck, Validation};
        let text =
            std::fs::read_to_string(crate::fixtures::run_fixture().join("summary.json")).unwrap();
        let mut summary: RunSummary = serde_json::from_str(&text).unwrap();
        let code = |s: &RunSummary| format!("{:?}", exit_code_of(s));
        let of = |c: u8| format!("{:?}", ExitCode::from(c));
        summary.sla = None;
        summary.validity = None;
        let kept = Validation {
            final_check: Some(FinalCheck {
                complete: true,
                ..FinalCheck::default()
            }),
            ..Validation::default()
        };
        summary.validation = Some(kept.clone());
        assert_eq!(code(&summary), format!("{:?}", ExitCode::SUCCESS));
        for defect in [
            |v: &mut Validation| v.final_check.as_mut().unwrap().lost = 1,
            |v: &mut Validation| v.final_check.as_mut().unwrap().corrupt = 1,
            |v: &mut Validation| v.reads.corrupt = 1,
            |v: &mut Validation| v.reads.stale_unexpected = 1,
        ] {
            let mut v = kept.clone();
            defect(&mut v);
            summary.validation = Some(v);
            summary.stop = StopReason::Completed;
            assert_eq!(code(&summary), of(EXIT_DATA_DEFECT));
            summary.stop = StopReason::AllRequestsFailing;
            assert_eq!(code(&summary), of(EXIT_DATA_DEFECT));
            summary.stop = StopReason::Interrupted;
            assert_eq!(code(&summary), of(EXIT_INTERRUPTED));
        }
        // Stale reads the levels allow are no defect.
        let mut v = kept.clone();
        v.reads.stale_expected = 5;
        summary.validation = Some(v);
        summary.stop = StopReason::Completed;
        assert_eq!(code(&summary), format!("{:?}", ExitCode::SUCCESS));
        let mut v = kept;
        v.final_check.as_mut().unwrap().complete = false;
        summary.validation = Some(v);
        assert_eq!(code(&summary), of(EXIT_NO_VERDICT));
    }
}
