//! The open-loop schedule dealt to a process's workers (src/engine/schedule.rs): any rate,
//! arrivals, worker count, slot length, fleet share and end, from the bytes. Every call for
//! a ticket comes back (a schedule no client could keep, such as `--rate 1e99`, pauses its
//! draw instead of skipping for ever), the workers together send each request of their
//! process's share once, in order of intended start, and none another process's.
#![no_main]

use std::collections::BTreeSet;

#[allow(unused_imports)] // named by the doc comment below
use headroom::engine::schedule::{Arrivals, End, Share, WorkerSchedule, SKIP_BUDGET};
use headroom::engine::ArrivalKind;
use libfuzzer_sys::fuzz_target;

/// Calls for a ticket per worker, at most: bounds the target's time, not the schedule's.
const CALLS: usize = 2_000;

/// Pauses in a row after which a worker is left: each pause proves the draw came back, and
/// each costs [`SKIP_BUDGET`] draws of the target's time.
const PAUSES: usize = 3;

fn take<const N: usize>(data: &mut &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = N.min(data.len());
    out[..n].copy_from_slice(&data[..n]);
    *data = &data[n..];
    out
}

fuzz_target!(|data: &[u8]| {
    let mut data = data;
    let rate = f64::from_le_bytes(take::<8>(&mut data));
    let [kind, threads, count, index] = take::<4>(&mut data);
    let slot_ns = u64::from_le_bytes(take::<8>(&mut data)) % 10_000_000_000;
    let duration_ns = u64::from_le_bytes(take::<8>(&mut data)) % 100_000_000_000;
    let warmup_ns = u64::from_le_bytes(take::<8>(&mut data)) % 10_000_000_000;
    let ops = u64::from_le_bytes(take::<8>(&mut data)) % 100_000;
    let seed = u64::from_le_bytes(take::<8>(&mut data));
    // What the flags let through: a finite rate above zero.
    if !(rate.is_finite() && rate > 0.0) {
        return;
    }
    let arrivals = if kind % 2 == 0 {
        ArrivalKind::Fixed
    } else {
        ArrivalKind::Poisson
    };
    let threads = usize::from(threads % 8) + 1;
    let count = u64::from(count % 8) + 1;
    let process = Share {
        index: u64::from(index) % count,
        count,
    };
    let end = End {
        warmup_ns,
        duration_ns: (kind & 2 == 0).then_some(duration_ns),
        ops: (kind & 2 != 0).then_some(ops),
    };
    let mut seen = BTreeSet::new();
    for thread in 0..threads {
        let mut schedule =
            WorkerSchedule::new(Arrivals::new(arrivals, rate, seed), process, thread, threads, end)
                .by_slots(slot_ns);
        let mut last = 0;
        let mut paused = 0;
        for _ in 0..CALLS {
            match schedule.next_ticket() {
                Some(ticket) => {
                    paused = 0;
                    assert_eq!(ticket.seq % count, process.index, "another process's request");
                    assert!(ticket.intended_ns >= last, "out of order");
                    last = ticket.intended_ns;
                    assert!(seen.insert(ticket.seq), "request {} twice", ticket.seq);
                }
                None if schedule.is_over() => break,
                // Paused after SKIP_BUDGET requests of others: asked again, a few times.
                None => {
                    paused += 1;
                    if paused == PAUSES {
                        break;
                    }
                }
            }
        }
        let _ = schedule.last_within(last, slot_ns);
    }
});
