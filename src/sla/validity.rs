//! Whether a run measured the server at all: a verdict needs a valid measurement (METHOD.md
//! §3). When the client, not the server, set the pace (it could not send on schedule), the
//! run is `invalid: client-bound`: neither a pass nor a fail, and a capacity search stops
//! instead of reporting a capacity.
//!
//! The decision uses figures every run already has. Its premise: an open-loop client sends
//! each request at its intended start, so a request that left late waited either for a free
//! in-flight slot (the server had not answered earlier requests: the server's doing) or for
//! the client itself (busy, descheduled, too slow for the rate); the engine tells the two
//! apart request by request. A run is client-bound when any of these holds:
//!
//! 1. requests of the measured schedule were never sent (the client was still behind it
//!    [`crate::engine::SEND_GRACE`] after its end), and the in-flight slots were not all
//!    taken when it stopped sending (had they been, the server held those requests back);
//! 2. more than 1% of the measured requests left later than the lag limit (100 ms, or ten
//!    times `--send-resolution` when that is larger) after their intended start without
//!    having waited for a slot;
//! 3. no request waited for a slot, and a window failed its SLA on a latency term whose
//!    threshold the answered requests' own service time met, while their wait before the
//!    send at the term's percentile was at least half the threshold: the client's delay, not
//!    the server, decided that window ([`client_decided`]).
//!
//! And a run of either loop is not valid when its schedule's counts overflowed: a count or
//! time went beyond what 64 bits hold and saturated (the backlog at a rate no client keeps,
//! an end beyond 584 years; see [`crate::engine::Outcome::overflowed`]), so its figures are
//! not the run's.
//!
//! The client's CPU against its threads and its hiccups are reported beside the verdict as
//! the likely causes; they do not decide it (a busy client that sends on time measures well).
//! A closed loop has no schedule to fall behind: its runs are valid unless their counts
//! overflowed, and the figures say how busy the client was.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::judge::{WindowStats, WindowVerdict};
use super::spec::{Metric, Sla, Threshold};
use crate::metrics::OpHistograms;
use crate::stats::{new_histogram, value_at_percentile};

/// The least lag limit: sends later than this (by the client's doing) for more than 1% of the
/// requests make a run client-bound. Well above the few tens of milliseconds a client's
/// threads wait when a node on the same cores takes them (seen at every rate of a
/// quickstart on a 2-core machine, with the node's GC pauses), which delay a few requests
/// without the client falling behind; a client that cannot keep its rate falls behind by
/// seconds. Shorter stalls that decide a window are rule 3's.
pub const LAG_LIMIT_FLOOR: Duration = Duration::from_millis(100);

/// The share of the measured requests that may leave late by the client's doing.
pub const MAX_LATE_SHARE: f64 = 0.01;

/// The lag limit's multiple of `--send-resolution` (a client that batches its sends waits up
/// to one resolution by design).
const LAG_LIMIT_RESOLUTIONS: u32 = 10;

/// The lag limit for a send resolution: [`LAG_LIMIT_FLOOR`] or ten resolutions.
pub fn lag_limit(send_resolution: Duration) -> Duration {
    LAG_LIMIT_FLOOR.max(send_resolution * LAG_LIMIT_RESOLUTIONS)
}

/// Whether a run's measurement stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValidityVerdict {
    /// The server set the pace: the run's verdict stands.
    Valid,
    /// The client could not keep its schedule: no verdict.
    ClientBound,
}

impl fmt::Display for ValidityVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValidityVerdict::Valid => "valid",
            ValidityVerdict::ClientBound => "invalid: client-bound",
        })
    }
}

/// The client's figures a validity verdict rests on, over the measured part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientFigures {
    /// Client threads.
    pub threads: usize,
    /// The client's CPU time over its wall time and threads: 1 is every thread busy all the
    /// time.
    pub cpu_share_of_threads: f64,
    /// Wait before the send, 99th percentile, ms.
    pub wait_p99_ms: f64,
    /// Wait before the send, 99.9th percentile, ms.
    pub wait_p999_ms: f64,
    /// Longest wait before the send, ms.
    pub wait_max_ms: f64,
    /// The lag limit the wait's p99 is held to, ms.
    pub lag_limit_ms: f64,
    /// Client hiccups (late wake-ups of its workers), 99.9th percentile, ms.
    pub hiccup_p999_ms: f64,
    /// Longest client hiccup, ms.
    pub hiccup_max_ms: f64,
    /// The largest number of requests due but not sent, at an interval end.
    pub max_backlog: u64,
    /// Requests of the measured schedule never sent.
    pub unsent: f64,
    /// Whether every in-flight slot was taken when sending stopped with requests left (the
    /// server held them back).
    pub unsent_held: bool,
    /// Measured requests that waited for a free in-flight slot (the server's doing).
    pub limit_waits: u64,
    /// Measured requests that left later than the lag limit without waiting for a slot.
    pub late_sends: u64,
    /// Measured requests, sent or not.
    pub measured_requests: u64,
    /// Failing windows the client's own wait decided (rule 3 of the module's doc).
    pub client_decided_windows: u64,
    /// Whether a count or time of the schedule overflowed and saturated (see
    /// [`crate::engine::Outcome::overflowed`]). False in summaries written before headroom
    /// noted it.
    #[serde(default)]
    pub overflowed: bool,
}

/// A run's validity: the verdict, why, what to do, and the figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validity {
    /// Valid, or client-bound.
    pub verdict: ValidityVerdict,
    /// What showed that the client limited the run, one sentence each; empty when valid.
    pub reasons: Vec<String>,
    /// What to do about it; `None` when valid.
    pub advice: Option<String>,
    /// The figures the verdict rests on.
    pub figures: ClientFigures,
}

impl Validity {
    /// Whether the run's verdict stands.
    pub fn is_valid(&self) -> bool {
        self.verdict == ValidityVerdict::Valid
    }

    /// The share of the measured requests late by the client's doing.
    pub fn late_share(figures: &ClientFigures) -> f64 {
        if figures.measured_requests == 0 {
            0.0
        } else {
            figures.late_sends as f64 / figures.measured_requests as f64
        }
    }

    /// Decides on `figures` of an open-loop run (`open`) or a closed-loop one.
    pub fn decide(figures: ClientFigures, open: bool) -> Validity {
        let mut reasons = Vec::new();
        if figures.overflowed {
            reasons.push(
                "the schedule's counts overflowed: a backlog, request count or time went beyond \
                 what 64 bits hold and stopped at 18446744073709551615, so the run's figures \
                 are not its own"
                    .to_string(),
            );
        }
        if open {
            if figures.unsent > 0.0 && !figures.unsent_held {
                reasons.push(format!(
                    "{} requests of the measured schedule were never sent: the client was still \
                     behind its schedule {} s after the end, with in-flight slots to spare",
                    crate::format::format_big(figures.unsent),
                    crate::engine::SEND_GRACE.as_secs()
                ));
            }
            let late = Validity::late_share(&figures);
            if late > MAX_LATE_SHARE {
                reasons.push(format!(
                    "{:.1}% of the measured requests left more than {:.0} ms after their \
                     intended start without waiting for an in-flight slot (wait before the \
                     send: p99 {:.1} ms, max {:.1} ms)",
                    late * 100.0,
                    figures.lag_limit_ms,
                    figures.wait_p99_ms,
                    figures.wait_max_ms
                ));
            }
            if figures.client_decided_windows > 0 && figures.limit_waits == 0 {
                reasons.push(format!(
                    "in {} failing window(s) the client's own wait before the send was at least \
                     half the SLA's threshold while the server's service time met it",
                    figures.client_decided_windows
                ));
            }
        }
        if reasons.is_empty() {
            return Validity {
                verdict: ValidityVerdict::Valid,
                reasons,
                advice: None,
                figures,
            };
        }
        let mut causes = vec![format!(
            "client CPU {:.0}% of its {} thread(s)",
            figures.cpu_share_of_threads * 100.0,
            figures.threads
        )];
        if figures.hiccup_max_ms >= figures.lag_limit_ms {
            causes.push(format!(
                "client hiccups up to {:.1} ms (p99.9 {:.1} ms): its threads were not run on time",
                figures.hiccup_max_ms, figures.hiccup_p999_ms
            ));
        }
        reasons.push(format!("figures: {}", causes.join("; ")));
        let advice = if figures.overflowed {
            "ask for a lower rate, a shorter --duration or fewer --ops: a schedule whose counts \
             overflow is one no client can keep, so this run says nothing about the server"
        } else {
            "give the client more --threads (and cores), run it on a machine of its own, \
             or ask for a lower rate; the server was not the limit, so this run says nothing \
             about it"
        };
        Validity {
            verdict: ValidityVerdict::ClientBound,
            reasons,
            advice: Some(advice.to_string()),
            figures,
        }
    }
}

/// Whether the client's own wait decided a failing window (rule 3 of the module's doc): some
/// latency term failed, not on failed requests, while the service time of the answered
/// requests met its threshold and their wait before the send, at the term's percentile (the
/// max for `max`, the mean for `mean`), was at least half the threshold. The client's wait
/// decides no `errors` or recall term: a late send does not change an answer.
pub fn client_decided(sla: &Sla, window: &WindowStats, verdict: &WindowVerdict) -> bool {
    sla.terms
        .iter()
        .zip(&verdict.outcomes)
        .filter(|(_, outcome)| !outcome.pass && !outcome.failures_decided)
        .any(|(term, _)| {
            let Threshold::LatencyNs(threshold_ns) = term.threshold else {
                return false;
            };
            let (mut wait, mut service) = (new_histogram(), new_histogram());
            for stats in window
                .ops
                .iter()
                .filter(|(name, _)| term.op.as_deref().is_none_or(|op| op == name))
                .map(|(_, stats): &(String, OpHistograms)| stats)
            {
                let _ = wait.add(&stats.wait_ns);
                let _ = service.add(&stats.service_ns);
            }
            if wait.is_empty() || service.is_empty() {
                return false;
            }
            let measure = |h: &hdrhistogram::Histogram<u64>| match term.metric {
                Metric::Percentile(p) => value_at_percentile(h, p.value()),
                Metric::Max => h.max(),
                Metric::Mean => h.mean().round() as u64,
                // Not latencies: their thresholds are no time (see above).
                Metric::Errors | Metric::Recall(_) | Metric::RecallPercentile(_) => 0,
            };
            let server_met = term.bound.holds(measure(&service), threshold_ns);
            server_met && measure(&wait).saturating_mul(2) >= threshold_ns
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sla::judge_window;

    const MS: u64 = 1_000_000;

    fn figures() -> ClientFigures {
        ClientFigures {
            threads: 2,
            cpu_share_of_threads: 0.3,
            wait_p99_ms: 2.0,
            wait_p999_ms: 6.0,
            wait_max_ms: 12.0,
            lag_limit_ms: 10.0,
            hiccup_p999_ms: 3.0,
            hiccup_max_ms: 8.0,
            max_backlog: 5,
            unsent: 0.0,
            unsent_held: false,
            limit_waits: 0,
            late_sends: 10,
            measured_requests: 10_000,
            client_decided_windows: 0,
            overflowed: false,
        }
    }

    #[test]
    fn a_client_that_keeps_its_schedule_is_valid() {
        let v = Validity::decide(figures(), true);
        assert!(v.is_valid());
        assert!(v.reasons.is_empty() && v.advice.is_none());
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["verdict"], "valid");
        assert_eq!(json["figures"]["lag_limit_ms"], 10.0);
    }

    #[test]
    fn unsent_requests_late_sends_or_decided_windows_make_a_run_client_bound() {
        let unsent = Validity::decide(
            ClientFigures {
                unsent: 1500.0,
                ..figures()
            },
            true,
        );
        assert_eq!(unsent.verdict, ValidityVerdict::ClientBound);
        assert!(
            unsent.reasons[0].starts_with("1500 requests of the measured schedule were never sent")
        );
        assert!(unsent
            .reasons
            .last()
            .unwrap()
            .contains("client CPU 30% of its 2 thread(s)"));
        assert!(unsent.advice.as_deref().unwrap().contains("--threads"));
        assert_eq!(unsent.verdict.to_string(), "invalid: client-bound");
        assert_eq!(
            serde_json::to_value(&unsent).unwrap()["verdict"],
            "client-bound"
        );

        let late = Validity::decide(
            ClientFigures {
                wait_p99_ms: 25.0,
                late_sends: 101,
                hiccup_max_ms: 240.0,
                ..figures()
            },
            true,
        );
        assert!(!late.is_valid());
        assert!(
            late.reasons[0].starts_with("1.0% of the measured requests left more than 10 ms"),
            "{:?}",
            late.reasons
        );
        assert!(late.reasons[1].contains("hiccups up to 240.0 ms"));
        // 1% exactly is allowed.
        let at_limit = Validity::decide(
            ClientFigures {
                late_sends: 100,
                ..figures()
            },
            true,
        );
        assert!(at_limit.is_valid());

        let decided = Validity::decide(
            ClientFigures {
                client_decided_windows: 2,
                ..figures()
            },
            true,
        );
        assert!(!decided.is_valid());
        assert!(decided.reasons[0].starts_with("in 2 failing window(s)"));

        // A huge estimate reads in scientific notation.
        let impossible = Validity::decide(
            ClientFigures {
                unsent: 2e99,
                ..figures()
            },
            true,
        );
        assert!(impossible.reasons[0].starts_with("2.000e99 requests"));
    }

    #[test]
    fn requests_that_waited_for_a_slot_put_the_lag_on_the_server() {
        // Late sends that waited for a slot are not counted as late; unsent requests held
        // by full slots are the server's.
        let v = Validity::decide(
            ClientFigures {
                unsent: 1500.0,
                unsent_held: true,
                wait_p99_ms: 900.0,
                limit_waits: 3000,
                late_sends: 0,
                client_decided_windows: 1,
                ..figures()
            },
            true,
        );
        assert!(v.is_valid(), "{:?}", v.reasons);
        // A closed loop has no schedule to fall behind.
        let closed = Validity::decide(
            ClientFigures {
                unsent: 1.0,
                late_sends: 5000,
                ..figures()
            },
            false,
        );
        assert!(closed.is_valid());
    }

    /// A schedule whose counts overflowed measured nothing, in an open loop or a closed one,
    /// even when its unsent requests were the server's (every slot taken): `--rate 1e99` was
    /// once judged valid with a backlog of 1.845e19.
    #[test]
    fn a_run_whose_counts_overflowed_is_not_valid() {
        let impossible = ClientFigures {
            max_backlog: u64::MAX,
            unsent: 2e99,
            unsent_held: true,
            limit_waits: 3000,
            late_sends: 0,
            overflowed: true,
            ..figures()
        };
        for open in [true, false] {
            let v = Validity::decide(impossible.clone(), open);
            assert_eq!(v.verdict, ValidityVerdict::ClientBound, "open: {open}");
            assert!(
                v.reasons[0].starts_with("the schedule's counts overflowed"),
                "{:?}",
                v.reasons
            );
            assert!(v.advice.as_deref().unwrap().contains("lower rate"));
        }
        // The same figures without the overflow: the server held the requests back.
        let held = ClientFigures {
            overflowed: false,
            ..impossible
        };
        assert!(Validity::decide(held, true).is_valid());
        // A summary written before the overflow was noted reads as not overflowed.
        let mut json = serde_json::to_value(figures()).unwrap();
        json.as_object_mut().unwrap().remove("overflowed");
        let old: ClientFigures = serde_json::from_value(json).unwrap();
        assert!(!old.overflowed);
    }

    #[test]
    fn the_lag_limit_grows_with_the_send_resolution() {
        assert_eq!(lag_limit(Duration::ZERO), LAG_LIMIT_FLOOR);
        assert_eq!(lag_limit(Duration::from_millis(1)), LAG_LIMIT_FLOOR);
        assert_eq!(
            lag_limit(Duration::from_millis(50)),
            Duration::from_millis(500)
        );
    }

    /// A window of 2000 requests: `waited` of them waited `wait_ms` before a send and took
    /// `service_ms` at the server; the others left on time and took 1 ms.
    fn window(waited: u64, wait_ms: u64, service_ms: u64) -> WindowStats {
        let mut s = OpHistograms::default();
        for i in 0..2000 {
            let (wait, service) = if i < waited {
                (wait_ms * MS, service_ms * MS)
            } else {
                (1, MS)
            };
            s.record_wait(wait);
            s.record_ok(wait + service, service);
        }
        WindowStats {
            index: 0,
            start_ns: 0,
            length_ns: 10_000 * MS,
            ops: vec![("write".to_string(), s)],
        }
    }

    fn decided(spec: &str, w: &WindowStats) -> bool {
        let sla = Sla::parse(spec, Duration::from_secs(10)).unwrap();
        let verdict = judge_window(&sla, w);
        assert!(!verdict.pass, "the window must fail to be decided");
        client_decided(&sla, w, &verdict)
    }

    #[test]
    fn a_window_is_client_decided_when_the_wait_fails_it_and_the_server_met_it() {
        // 10 requests waited 80 ms and took 30 ms: p99.9 of 110 ms; the server's 30 ms met
        // 100 ms, the client's 80 ms is more than half of it.
        assert!(decided("p99.9<100ms", &window(10, 80, 30)));
        // The server's own time failed it too: the verdict stands.
        assert!(!decided("p99.9<100ms", &window(10, 80, 120)));
        // The wait is below half the threshold: the server's 60 ms decided it as much.
        assert!(!decided("p99.9<100ms", &window(10, 45, 60)));
        // max and mean follow the same rule.
        assert!(decided("max<100ms", &window(1, 80, 30)));
        // A window that passes is never client-decided.
        let w = window(1, 80, 30);
        let sla = Sla::parse("p99<100ms", Duration::from_secs(10)).unwrap();
        let verdict = judge_window(&sla, &w);
        assert!(verdict.pass);
        assert!(!client_decided(&sla, &w, &verdict));
    }

    #[test]
    fn a_recall_term_is_never_client_decided() {
        // The client's wait decides the latency term; a failing recall term beside it is the
        // answers' own doing.
        let mut w = window(10, 80, 30);
        for _ in 0..2000 {
            w.ops[0].1.record_recall(0.5);
        }
        assert!(decided("p99.9<100ms, recall>=0.9", &w));
        assert!(!decided("recall>=0.9", &w));
        assert!(!decided("p1(recall)>=0.9", &w));
    }
}
