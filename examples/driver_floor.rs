//! The floor under headroom's CPU per request: the scylla driver and the kernel alone, sending
//! the benchmark's keyvalue writes the way headroom's engine does (a burst every millisecond
//! from a timerfd, one connection, one runtime thread, no driver timeout or retry), and
//! recording nothing — no time stamps, no histograms, no files.
//!
//!     cargo run --release --example driver_floor -- [RATE] [SECONDS] [KEYSPACE]
//!
//! Against a node on 127.0.0.1 whose KEYSPACE (default `bench_headroom`) has headroom's
//! `keyvalue` table. Prints the requests sent and answered and the process's CPU time per
//! request. docs/PERFORMANCE.md compares it with headroom and latte on the same node: the
//! difference between this and headroom is all that headroom's own code can still save.

use std::sync::Arc;
mod floor;

use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use headroom::engine::clock::{Clock, RealClock, Timer};
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::policies::retry::FallthroughRetryPolicy;

fn main() {
    let (rate, seconds, keyspace) = floor::args();
    let runtime = floor::runtime();
    runtime.block_on(async move {
        let profile = ExecutionProfile::builder()
            .request_timeout(None)
            .retry_policy(Arc::new(FallthroughRetryPolicy))
            .build();
        let session = SessionBuilder::new()
            .known_node("127.0.0.1:9042")
            .default_execution_profile_handle(profile.into_handle())
            .write_coalescing(false)
            .pool_size(PoolSize::PerHost(1.try_into().unwrap()))
            .build()
            .await
            .expect("connect to 127.0.0.1:9042");
        let insert = session
            .prepare(format!(
                "INSERT INTO {keyspace}.keyvalue (key, value) VALUES (?, ?)"
            ))
            .await
            .expect("prepare (does the keyspace have headroom's keyvalue table?)");
        let mut rng = floor::Rng(0x9E37_79B9_7F4A_7C15);
        let pool = String::from_utf8(rng.pool()).expect("ASCII");
        // Driven on the runtime's worker thread, as headroom's engine is.
        let sent = tokio::spawn(async move {
            let clock = RealClock::start_now();
            let mut timer = clock.timer().expect("timerfd");
            let total = rate * seconds;
            let per_ms = rate as f64 / 1000.0;
            let cpu_before = floor::cpu_seconds();
            let mut in_flight = FuturesUnordered::new();
            let (mut sent, mut answered, mut failed) = (0u64, 0u64, 0u64);
            let mut tick = 1u64;
            while answered < total {
                let wake = tick * 1_000_000;
                tokio::select! {
                    biased;
                    Some(result) = in_flight.next(), if !in_flight.is_empty() => {
                        answered += 1;
                        let result: Result<_, _> = result;
                        failed += u64::from(result.is_err());
                    }
                    _ = timer.sleep_until_ns(wake), if sent < total => {
                        let due = ((tick as f64 * per_ms) as u64).min(total);
                        while sent < due {
                            let key = rng.next() % 1_000_000;
                            let start = (rng.next() % (pool.len() as u64 - 150)) as usize;
                            let value = &pool[start..start + 150];
                            let session = &session;
                            let insert = &insert;
                            // Boxed, as headroom boxes its requests: a pointer joins the set.
                            in_flight.push(Box::pin(async move {
                                let mut text = itoa::Buffer::new();
                                let key = text.format(key);
                                session.execute_unpaged(insert, (key, value)).await
                            }));
                            sent += 1;
                        }
                        tick += 1;
                    }
                }
            }
            let cpu = floor::cpu_seconds() - cpu_before;
            (sent, answered, failed, cpu)
        });
        let (sent, answered, failed, cpu) = sent.await.expect("the sender");
        floor::report(sent, answered, failed, cpu);
        tokio::time::sleep(Duration::from_millis(10)).await;
    });
}
