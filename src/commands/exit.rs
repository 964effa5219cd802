//! The exit codes every command ends with, in one place (the README's table lists them):
//! 0 success, 1 a failure, 2 the user's input (as clap's own errors), 3 an SLA that failed
//! (a search: no rate met it), 4 no verdict (the client limited the load, or there was
//! nothing to judge), 130 interrupted.

use std::process::ExitCode;

use crate::capacity::Status;
use crate::usage::Blame;

/// The user's input cannot work: a flag, a file, a host, credentials.
pub const EXIT_USAGE: u8 = 2;
/// A completed run whose SLA failed; a search that found no rate meeting it.
pub const EXIT_SLA_FAILED: u8 = 3;
/// A run (or search) without a verdict: the client, not the server, limited it, or it had
/// nothing to judge (no whole window, a term with no request).
pub const EXIT_NO_VERDICT: u8 = 4;
/// Ctrl-C or SIGTERM ended the command (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The exit code of a capacity search that ended with `status` and `capacity_per_s`: 0 when
/// it found a capacity, 3 when it completed without one (no rate met the SLA), 4 when it
/// stopped at a trial without a verdict, 130 when interrupted. (A search stopped by an error
/// ends with that error: 1.)
pub fn of_search(status: Status, capacity_per_s: Option<f64>) -> ExitCode {
    match (status, capacity_per_s) {
        (Status::Interrupted, _) => ExitCode::from(EXIT_INTERRUPTED),
        (Status::Invalid, _) => ExitCode::from(EXIT_NO_VERDICT),
        (Status::Failed, _) => ExitCode::from(1),
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let code = |status, capacity| format!("{:?}", of_search(status, capacity));
        let of = |c: u8| format!("{:?}", ExitCode::from(c));
        assert_eq!(code(Status::Complete, Some(1000.0)), of(0));
        assert_eq!(code(Status::Complete, None), of(EXIT_SLA_FAILED));
        assert_eq!(code(Status::Invalid, Some(1000.0)), of(EXIT_NO_VERDICT));
        assert_eq!(code(Status::Interrupted, None), of(EXIT_INTERRUPTED));
        assert_eq!(code(Status::Failed, None), of(1));
    }
}
