//! The small value parsers of the command line, all on the same text: rates, durations,
//! counts, heap sizes (`units`), `--during` (maintenance), `--rates` (capacity) and the
//! `--replication` / `--compaction` shorthands.
#![no_main]

use headroom::capacity::RatePlan;
use headroom::{maintenance, units, workload};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(rate) = units::parse_rate(text) {
        assert!(
            rate.is_finite() && rate > 0.0,
            "{text:?} gave the rate {rate}"
        );
    }
    if let Ok(duration) = units::parse_duration(text) {
        let _ = duration.as_secs_f64();
    }
    if let Ok(count) = units::parse_count(text) {
        // A plain whole number is read exactly.
        let digits = text.trim();
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            let significant = digits.trim_start_matches('0');
            let expected = if significant.is_empty() {
                "0"
            } else {
                significant
            };
            assert_eq!(count.to_string(), expected, "{text:?}");
        }
    }
    if let Ok(heap) = units::parse_heap(text) {
        let _ = (heap.to_jvm(), heap.to_string());
    }
    match maintenance::parse_during(text) {
        // Each offset becomes a timer of the run.
        Ok(plan) => plan.0.iter().for_each(|planned| {
            let _ = planned.at();
        }),
        Err(e) => {
            let _ = e.to_string();
        }
    }
    if let Ok(RatePlan::Ladder(rates)) = RatePlan::parse(text, 0.02) {
        for rate in rates {
            assert!(
                rate.is_finite() && rate > 0.0,
                "{text:?} gave the rate {rate}"
            );
        }
    }
    let _ = workload::replication_map(text);
    let _ = workload::compaction_map(text);
});
