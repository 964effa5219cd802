//! `--sla`: `Sla::parse`, and the canonical spelling of whatever parses must read back as
//! the same SLA (it names the terms in every output and in config.json); every term bounds
//! its metric in the metric's direction with a threshold of its kind (a latency or errors
//! term from above, a recall term from below with a recall between 0 and 1).
#![no_main]

use std::time::Duration;

use headroom::sla::{Metric, Sla, Threshold};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sla = match Sla::parse(text, Duration::from_secs(10)) {
        Ok(sla) => sla,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    for term in &sla.terms {
        let fits = match term.threshold {
            Threshold::LatencyNs(ns) => term.metric.is_latency() && ns > 0,
            Threshold::Fraction(f) => term.metric == Metric::Errors && (0.0..=1.0).contains(&f),
            Threshold::Recall(r) => term.metric.is_recall() && (0.0..=1.0).contains(&r),
        };
        assert!(
            fits,
            "{term} of {text:?}: the threshold does not fit the metric"
        );
        assert_eq!(
            term.bound.is_lower(),
            term.metric.is_recall(),
            "{term} of {text:?}: bounded in the wrong direction"
        );
    }
    let canonical = sla.to_string();
    let again = Sla::parse(&canonical, Duration::from_secs(10)).unwrap_or_else(|e| {
        panic!("the canonical form {canonical:?} of {text:?} does not parse: {e}")
    });
    assert_eq!(
        again, sla,
        "the canonical form {canonical:?} of {text:?} reads back as another SLA"
    );
});
