//! How the client sends: arrivals, the in-flight limit, send batching, threads, intervals,
//! timeouts, connections and the sender. Shared by `run`, `capacity` and `sweep`.

use std::time::Duration;

use clap::Args;

use super::ranges;
use crate::cpus::CoreChoice;
use crate::engine::ArrivalKind;
use crate::limits;

/// `--max-in-flight` when not given.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 4096;

/// The client's way of sending, shared by `run`, `capacity` and `sweep`.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Client")]
pub struct ClientArgs {
    /// Spacing of intended starts at a fixed rate: evenly, or as a Poisson process. Only at a
    /// fixed rate (a closed loop starts a request when one is answered). [default: fixed]
    #[arg(long, value_enum, value_name = "KIND")]
    pub arrivals: Option<ArrivalKind>,

    /// At a fixed rate, at most this many requests in flight; more wait in the client (and
    /// the wait counts in their response time). Only at a fixed rate: a closed loop keeps
    /// --concurrency in flight. [range: 1 to 10M] [default: 4096]
    #[arg(long, value_name = "N", value_parser = ranges::count::<usize>(limits::MAX_IN_FLIGHT.0, limits::MAX_IN_FLIGHT.1))]
    pub max_in_flight: Option<usize>,

    /// At a fixed rate, requests whose intended starts lie within this span are sent
    /// together, when the last of them is due: fewer wake-ups and system calls per request,
    /// at the price of at most this much extra wait, which is measured and counted in
    /// response time. Rates below 1/DURATION are unaffected. 0 sends every request at its
    /// own moment: the most precise, about twice the client CPU per request at 10k/s.
    /// [range: 0s to 1s; at most --interval]
    #[arg(long, default_value = "1ms", value_name = "DURATION", value_parser = ranges::duration(limits::SEND_RESOLUTION.0, limits::SEND_RESOLUTION.1))]
    pub send_resolution: Duration,

    /// Client threads, each with its own connections to every node: exactly N. [range: 1 to
    /// 256] [default: as many as the rate needs, one per 20 000 requests a second, up to the
    /// number of cores; the number of cores for a closed loop]
    #[arg(long, value_name = "N", value_parser = ranges::count::<usize>(limits::THREADS.0, limits::THREADS.1))]
    pub threads: Option<usize>,

    /// Length of one interval: a live-output line and a histogram-log entry each. [range:
    /// 10ms to 1h]
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = ranges::duration(limits::INTERVAL.0, limits::INTERVAL.1))]
    pub interval: Duration,

    /// Client-side timeout of one request, from its send (a compound operation's steps
    /// together); a request that takes longer counts as a timeout error. Set-up statements
    /// (schema, reads of the server's tables) have the same limit. [range: 1ms to 1h]
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = ranges::duration(limits::TIMEOUT.0, limits::TIMEOUT.1))]
    pub timeout: Duration,

    /// Connections to each node from each client thread (the native sender; the driver's
    /// session opens this many per node in all). [range: 1 to 1k]
    #[arg(long, default_value = "1", value_name = "N", value_parser = ranges::count::<usize>(limits::CONNECTIONS.0, limits::CONNECTIONS.1))]
    pub connections: usize,

    /// What sends the measured requests. `native`: headroom's own CQL connections, about
    /// half the client CPU per request of the driver's path (protocol v4, password
    /// authentication, TLS), for every workload format. `driver`: the scylla driver. `auto`:
    /// native, or the driver when the native connections cannot be opened (said in the
    /// output). Schema, prepare and the ring always go through the driver.
    #[arg(long, value_enum, default_value = "auto", value_name = "SENDER")]
    pub sender: crate::client::native::Sender,

    /// The cores the client's threads run on: a LIST (`0`, `0-1`, `0,2`), or `all` for any
    /// core. A load generator that shares cores with the nodes it loads measures the
    /// scheduler as much as them: its sends wait while a JVM runs. [default: the cores a
    /// local cluster started by headroom left to the client (see `cluster start --cpus`;
    /// from 4 cores it splits the machine); any core otherwise, where the nodes headroom
    /// started run after the client (`cluster start --nice`)]
    #[arg(long, value_name = "LIST|all", value_parser = parse_core_choice)]
    pub client_cpus: Option<CoreChoice>,
}

/// A `--client-cpus` (or `--cpus`) value: a list of cores, or `all`.
pub fn parse_core_choice(text: &str) -> Result<CoreChoice, String> {
    text.parse()
}

impl ClientArgs {
    /// `--arrivals`, or its default.
    pub fn arrivals(&self) -> ArrivalKind {
        self.arrivals.unwrap_or(ArrivalKind::Fixed)
    }

    /// `--max-in-flight`, or its default.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.unwrap_or(DEFAULT_MAX_IN_FLIGHT)
    }
}
