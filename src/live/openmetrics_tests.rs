//! Tests of [`super`]: the live state encoded as OpenMetrics and parsed back.

use std::collections::HashMap;

use openmetrics_parser::{OpenMetricsType, OpenMetricsValue};

use super::*;
use crate::engine::{Interval, LoadMode};
use crate::live::state::{quantiles_s, Labels};
use crate::metrics::{ErrorClass, OpHistograms, Phase};
use crate::results::config::RunSettings;

fn settings() -> RunSettings {
    let mut settings = RunSettings::read(&crate::fixtures::run_fixture()).unwrap();
    settings.mode = LoadMode::Open {
        rate_per_s: 1000.0,
        arrivals: crate::engine::ArrivalKind::Fixed,
        max_in_flight: 4096,
    };
    settings.warmup_s = 1.0;
    settings.worker = None;
    settings.sla =
        Some(crate::sla::Sla::parse("p99<20ms", std::time::Duration::from_secs(2)).unwrap());
    settings
}

/// Interval `index` of 1 s: `n` reads answered in `base`..`base`+n ms, one timeout.
fn interval(index: u64, n: u64, base_ms: u64, phase: Phase) -> Interval {
    let mut read = OpHistograms::default();
    for i in 0..n {
        let ns = (base_ms + i) * 1_000_000;
        read.record_ok(ns, ns / 2);
        read.record_wait(1_000 * i);
    }
    read.record_error(ErrorClass::Timeout, || "timed out".to_string());
    let mut both = [OpHistograms::default(), OpHistograms::default()];
    both[phase.index()] = read;
    Interval {
        index,
        start_ns: index * 1_000_000_000,
        length_ns: 1_000_000_000,
        ops: vec![both, [OpHistograms::default(), OpHistograms::default()]],
        hiccups: None,
        backlog: 3,
        in_flight: 7,
    }
}

fn live_state() -> Arc<Mutex<State>> {
    let mut state = State::new(
        Labels {
            run: "a \"quoted\" run".to_string(),
            workload: "keyvalue".to_string(),
            worker: "1/2".to_string(),
        },
        false,
    );
    state.prepared("/tmp/x".into());
    state.measuring(&settings(), &["read".to_string(), "write".to_string()], 0.0);
    Arc::new(Mutex::new(state))
}

type Parsed = HashMap<String, (OpenMetricsType, Vec<(HashMap<String, String>, f64)>)>;

/// The text as a real OpenMetrics parser reads it: family → type and samples.
fn parse(text: &str) -> Parsed {
    let exposition = openmetrics_parser::openmetrics::parse_openmetrics(text)
        .unwrap_or_else(|e| panic!("not OpenMetrics: {e:?}\n{text}"));
    exposition
        .families
        .into_iter()
        .map(|(name, family)| {
            let kind = family.family_type;
            let samples = family
                .iter_samples()
                .map(|s| {
                    let labels = s
                        .get_labelset()
                        .expect("a sample's labels")
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    let value = match &s.value {
                        OpenMetricsValue::Gauge(n) | OpenMetricsValue::Unknown(n) => n.as_f64(),
                        OpenMetricsValue::Counter(c) => c.value.as_f64(),
                        other => panic!("unexpected {other:?}"),
                    };
                    (labels, value)
                })
                .collect();
            (name, (kind, samples))
        })
        .collect()
}

fn value(parsed: &Parsed, family: &str, want: &[(&str, &str)]) -> Option<f64> {
    parsed[family]
        .1
        .iter()
        .find(|(labels, _)| {
            want.iter()
                .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, v)| *v)
}

#[test]
fn the_endpoint_text_is_openmetrics_with_every_family() {
    let state = live_state();
    let text = Families(state.clone()).openmetrics();
    let parsed = parse(&text);
    // Before any interval: the phase and the pending validity, no request yet.
    assert_eq!(
        value(&parsed, "headroom_phase", &[("phase", "warmup")]),
        Some(1.0)
    );
    assert_eq!(
        value(&parsed, "headroom_validity", &[("verdict", "pending")]),
        Some(1.0)
    );
    // A family with no sample yet is left out, not written empty.
    assert!(!parsed.contains_key("headroom_requests"));
    // The labels survive quoting.
    assert_eq!(
        parsed["headroom_phase"].1[0]
            .0
            .get("run")
            .map(String::as_str),
        Some("a \"quoted\" run")
    );
    state
        .lock()
        .unwrap()
        .interval(&interval(0, 50, 1, Phase::Warmup), 0.5, 1 << 20);
    state
        .lock()
        .unwrap()
        .interval(&interval(1, 80, 3, Phase::Measure), 0.7, 1 << 20);
    let parsed = parse(&Families(state.clone()).openmetrics());
    for (family, kind) in [
        ("headroom_requests", OpenMetricsType::Counter),
        ("headroom_errors", OpenMetricsType::Counter),
        ("headroom_response_time_seconds", OpenMetricsType::Gauge),
        (
            "headroom_window_response_time_seconds",
            OpenMetricsType::Gauge,
        ),
        ("headroom_send_lag_seconds", OpenMetricsType::Gauge),
        ("headroom_client_cpu_seconds", OpenMetricsType::Counter),
        ("headroom_validity", OpenMetricsType::Gauge),
        ("headroom_phase", OpenMetricsType::Gauge),
    ] {
        assert_eq!(parsed.get(family).map(|f| &f.0), Some(&kind), "{family}");
    }
    let requests = |phase| {
        value(
            &parsed,
            "headroom_requests",
            &[("op", "read"), ("phase", phase), ("worker", "1/2")],
        )
    };
    assert_eq!(
        (requests("warmup"), requests("measure")),
        (Some(51.0), Some(81.0))
    );
    assert_eq!(
        value(
            &parsed,
            "headroom_errors",
            &[("op", "read"), ("phase", "measure"), ("class", "timeout")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&parsed, "headroom_in_flight_requests", &[]),
        Some(7.0)
    );
    assert_eq!(
        value(&parsed, "headroom_attempted_requests_per_second", &[]),
        Some(1000.0)
    );
    assert_eq!(
        value(&parsed, "headroom_achieved_requests_per_second", &[]),
        Some(80.0)
    );
    assert_eq!(
        value(&parsed, "headroom_client_cpu_seconds", &[]),
        Some(0.7)
    );
    assert_eq!(
        value(&parsed, "headroom_phase", &[("phase", "measure")]),
        Some(1.0)
    );
}

#[test]
fn an_interval_search_shows_its_bounds_and_their_confidence() {
    let state = State::new(
        Labels {
            run: "bounds".to_string(),
            workload: "keyvalue".to_string(),
            worker: "single".to_string(),
        },
        true,
    );
    let state = Arc::new(Mutex::new(state));
    let outcome = crate::capacity::dir::SearchData::load(&crate::fixtures::capacity_fixture())
        .unwrap()
        .summary
        .outcome;
    state.lock().unwrap().search_outcome(&outcome);
    let family = "headroom_capacity_bracket_requests_per_second";
    // A strict search: the ladder's bracket, no confidence.
    let strict = parse(&Families(state.clone()).openmetrics());
    assert_eq!(value(&strict, family, &[("bound", "high")]), Some(5500.0));
    assert!(!strict.contains_key("headroom_capacity_confidence"));
    // An interval search: only what is confirmed, at its confidence.
    state
        .lock()
        .unwrap()
        .search_bounds(crate::live::state::Bounds {
            lower_per_s: Some(4100.0),
            upper_per_s: None,
            confidence: 0.9,
        });
    let interval = parse(&Families(state.clone()).openmetrics());
    assert_eq!(value(&interval, family, &[("bound", "low")]), Some(4100.0));
    assert_eq!(value(&interval, family, &[("bound", "high")]), None);
    assert_eq!(
        value(&interval, "headroom_capacity_confidence", &[]),
        Some(0.9)
    );
}

#[test]
fn counters_never_go_down_between_scrapes() {
    let state = live_state();
    let mut last: HashMap<String, f64> = HashMap::new();
    for i in 0..12 {
        let phase = if i == 0 {
            Phase::Warmup
        } else {
            Phase::Measure
        };
        state
            .lock()
            .unwrap()
            .interval(&interval(i, 10 + i * 7, 1, phase), i as f64 * 0.1, 1);
        if i == 6 {
            // A search's next run: new run, the counters go on from where they were.
            let mut s = state.lock().unwrap();
            s.prepared("/tmp/y".into());
            s.measuring(&settings(), &["read".to_string(), "write".to_string()], 0.0);
        }
        let parsed = parse(&Families(state.clone()).openmetrics());
        for (family, (kind, samples)) in &parsed {
            if *kind != OpenMetricsType::Counter {
                continue;
            }
            for (labels, v) in samples {
                let mut key: Vec<_> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                key.sort();
                let key = format!("{family}{key:?}");
                let before = last.insert(key.clone(), *v).unwrap_or(0.0);
                assert!(*v >= before, "{key} went from {before} to {v}");
            }
        }
    }
    assert!(last.len() >= 4);
}

#[test]
fn quantile_gauges_equal_the_intervals_histogram() {
    let state = live_state();
    let measured = interval(3, 997, 2, Phase::Measure);
    state.lock().unwrap().interval(&measured, 0.0, 1);
    let parsed = parse(&Families(state.clone()).openmetrics());
    let read = &measured.ops[0][Phase::Measure.index()];
    let response = quantiles_s(&read.response_ns).unwrap();
    let service = quantiles_s(&read.service_ns).unwrap();
    let lag = quantiles_s(&read.wait_ns).unwrap();
    for (i, (q, p)) in QUANTILES.iter().enumerate() {
        let expect_ns = if *p >= 100.0 {
            read.response_ns.max()
        } else {
            crate::stats::histogram::value_at_percentile(&read.response_ns, *p)
        };
        assert_eq!(response[i], expect_ns as f64 / 1e9);
        let got = |family| value(&parsed, family, &[("op", "read"), ("quantile", q)]).unwrap();
        assert_eq!(got("headroom_response_time_seconds"), response[i], "{q}");
        assert_eq!(got("headroom_service_time_seconds"), service[i], "{q}");
        // The interval is the window's first: the window so far is the interval.
        assert_eq!(
            got("headroom_window_response_time_seconds"),
            response[i],
            "{q}"
        );
        assert_eq!(
            value(&parsed, "headroom_send_lag_seconds", &[("quantile", q)]).unwrap(),
            lag[i]
        );
    }
    // Over two intervals of one window the window's gauges are of both together.
    let second = interval(4, 500, 400, Phase::Measure);
    state.lock().unwrap().interval(&second, 0.0, 1);
    let parsed = parse(&Families(state.clone()).openmetrics());
    let mut both = read.response_ns.clone();
    both.add(&second.ops[0][Phase::Measure.index()].response_ns)
        .unwrap();
    let window = quantiles_s(&both).unwrap();
    for (i, (q, _)) in QUANTILES.iter().enumerate() {
        assert_eq!(
            value(
                &parsed,
                "headroom_window_response_time_seconds",
                &[("op", "read"), ("quantile", q)]
            ),
            Some(window[i])
        );
    }
    // The next window starts again.
    let third = interval(5, 20, 900, Phase::Measure);
    state.lock().unwrap().interval(&third, 0.0, 1);
    let parsed = parse(&Families(state.clone()).openmetrics());
    let alone = quantiles_s(&third.ops[0][Phase::Measure.index()].response_ns).unwrap();
    assert_eq!(
        value(
            &parsed,
            "headroom_window_response_time_seconds",
            &[("op", "read"), ("quantile", "0.5")]
        ),
        Some(alone[0])
    );
}

#[test]
fn the_push_text_is_the_prometheus_format() {
    let state = live_state();
    state
        .lock()
        .unwrap()
        .interval(&interval(2, 30, 1, Phase::Measure), 0.2, 1);
    let text = Families(state).prometheus_text();
    let parsed = openmetrics_parser::prometheus::parse_prometheus(&text)
        .unwrap_or_else(|e| panic!("not the Prometheus format: {e:?}\n{text}"));
    assert!(
        parsed.families.contains_key("headroom_requests_total"),
        "{text}"
    );
    assert!(!text.contains("# EOF"));
}

/// Interval `index` of 1 s in the measured part: one ANN query answered per recall given.
fn ann_interval(index: u64, recalls: &[f64]) -> Interval {
    let mut ann = OpHistograms::default();
    for r in recalls {
        ann.record_ok(2_000_000, 1_000_000);
        ann.record_recall(*r);
    }
    let mut write = OpHistograms::default();
    write.record_ok(1_000_000, 1_000_000);
    Interval {
        index,
        start_ns: index * 1_000_000_000,
        length_ns: 1_000_000_000,
        ops: vec![
            [OpHistograms::default(), write],
            [OpHistograms::default(), ann],
        ],
        hiccups: None,
        backlog: 0,
        in_flight: 0,
    }
}

#[test]
fn recall_families_show_only_for_an_op_with_recall() {
    let recall_families = [
        "headroom_recall",
        "headroom_recall_mean",
        "headroom_window_recall",
        "headroom_window_recall_mean",
    ];
    // A run without recall has none of the families.
    let state = live_state();
    state
        .lock()
        .unwrap()
        .interval(&interval(1, 80, 3, Phase::Measure), 0.7, 1 << 20);
    let text = Families(state.clone()).openmetrics();
    assert!(
        !text.contains("headroom_recall") && !text.contains("headroom_window_recall"),
        "{text}"
    );

    let mut s = State::new(
        Labels {
            run: "v".to_string(),
            workload: "vector".to_string(),
            worker: "single".to_string(),
        },
        false,
    );
    s.prepared("/tmp/v".into());
    s.measuring(&settings(), &["write".to_string(), "ann".to_string()], 0.0);
    let state = Arc::new(Mutex::new(s));
    // Intervals 1 and 2 are one 2 s window (after the 1 s warmup).
    let first: Vec<f64> = std::iter::repeat_n(1.0, 95)
        .chain(std::iter::repeat_n(0.5, 5))
        .collect();
    state
        .lock()
        .unwrap()
        .interval(&ann_interval(1, &first), 0.1, 1);
    let parsed = parse(&Families(state.clone()).openmetrics());
    for family in recall_families {
        assert_eq!(
            parsed.get(family).map(|f| &f.0),
            Some(&OpenMetricsType::Gauge),
            "{family}"
        );
    }
    let ann = |family, q: Option<&str>| {
        let mut want = vec![("op", "ann")];
        want.extend(q.map(|q| ("quantile", q)));
        value(&parsed, family, &want)
    };
    // A histogram's mean is of its buckets' middles: within a thousandth.
    let near = |got: Option<f64>, want: f64| got.is_some_and(|v| (v - want).abs() < 1e-3);
    assert!(
        near(ann("headroom_recall_mean", None), 0.975),
        "{:?}",
        ann("headroom_recall_mean", None)
    );
    assert_eq!(ann("headroom_recall", Some("0.01")), Some(0.5));
    // Exactly 5 % fell below 1: p5 is 1, as the SLA's judge takes it.
    assert_eq!(ann("headroom_recall", Some("0.05")), Some(1.0));
    assert_eq!(ann("headroom_recall", Some("0.5")), Some(1.0));
    assert_eq!(
        ann("headroom_window_recall_mean", None),
        ann("headroom_recall_mean", None)
    );
    // Only the op judged for recall: the writes have none.
    assert_eq!(
        value(&parsed, "headroom_recall_mean", &[("op", "write")]),
        None
    );
    assert_eq!(parsed["headroom_recall"].1.len(), 3);

    // The window holds both intervals; the latest interval only its own.
    state
        .lock()
        .unwrap()
        .interval(&ann_interval(2, &[0.0; 100]), 0.2, 1);
    let parsed = parse(&Families(state.clone()).openmetrics());
    assert_eq!(
        value(&parsed, "headroom_recall_mean", &[("op", "ann")]),
        Some(0.0)
    );
    let window = value(&parsed, "headroom_window_recall_mean", &[("op", "ann")]);
    assert!(
        window.is_some_and(|v| (v - 0.4875).abs() < 1e-3),
        "{window:?}"
    );
    // 100 zeros, 5 halves and 95 ones: exactly half fell below 0.5, the median.
    assert_eq!(
        value(
            &parsed,
            "headroom_window_recall",
            &[("op", "ann"), ("quantile", "0.5")]
        ),
        Some(0.5)
    );
    // The next window starts again.
    state
        .lock()
        .unwrap()
        .interval(&ann_interval(3, &[0.8]), 0.3, 1);
    let parsed = parse(&Families(state).openmetrics());
    let window = value(&parsed, "headroom_window_recall_mean", &[("op", "ann")]);
    assert!(window.is_some_and(|v| (v - 0.8).abs() < 1e-3), "{window:?}");
}

/// Under --validate the checker's counts show as counters over every run of the process
/// (a search's trials add up), and a finished run's defects and lost writes as gauges;
/// without it none of the families is there.
#[test]
fn validation_families_add_up_over_runs_and_show_only_when_validating() {
    use crate::validation::{FinalCheck, Reads, SoFar, Validation};
    let families = [
        "headroom_validation_reads",
        "headroom_validation_writes",
        "headroom_validation_defects",
        "headroom_validation_lost_writes",
    ];
    let state = live_state();
    let text = Families(state.clone()).openmetrics();
    for family in families {
        assert!(
            !text.contains(family),
            "{family} without --validate:\n{text}"
        );
    }

    let so_far = |current, stale, acknowledged| {
        let mut s = SoFar::default();
        (s.reads.current, s.reads.stale, s.writes_acknowledged) = (current, stale, acknowledged);
        s
    };
    state.lock().unwrap().validation(so_far(100, 0, 50));
    state.lock().unwrap().validation(so_far(300, 1, 120));
    let parsed = parse(&Families(state.clone()).openmetrics());
    let reads = |p: &Parsed, class| value(p, "headroom_validation_reads", &[("class", class)]);
    assert_eq!(
        parsed["headroom_validation_reads"].0,
        OpenMetricsType::Counter
    );
    assert_eq!(reads(&parsed, "current"), Some(300.0));
    assert_eq!(reads(&parsed, "stale"), Some(1.0));
    assert_eq!(
        value(
            &parsed,
            "headroom_validation_writes",
            &[("outcome", "acknowledged")]
        ),
        Some(120.0)
    );
    // No run has finished: no defects to show yet.
    assert!(!parsed.contains_key("headroom_validation_defects"));

    // The run ends: its summary's counts replace the last snapshot, and its final check
    // shows; the next run's counts add to them.
    let mut summary: crate::results::summary::RunSummary = serde_json::from_str(
        &std::fs::read_to_string(crate::fixtures::run_fixture().join("summary.json")).unwrap(),
    )
    .unwrap();
    summary.validation = Some(Validation {
        reads_must_see_writes: true,
        reads: Reads {
            checked: 310,
            corrupt: 0,
            stale_unexpected: 2,
            stale_expected: 0,
            unchecked: 0,
        },
        writes_acknowledged: 130,
        writes_unknown: 1,
        record_bytes: 0,
        final_check: Some(FinalCheck {
            lost: 3,
            complete: true,
            ..FinalCheck::default()
        }),
    });
    state.lock().unwrap().finished(&summary);
    state.lock().unwrap().prepared("/tmp/y".into());
    state.lock().unwrap().validation(so_far(10, 0, 5));
    let parsed = parse(&Families(state).openmetrics());
    assert_eq!(reads(&parsed, "current"), Some(308.0 + 10.0));
    assert_eq!(reads(&parsed, "stale"), Some(2.0));
    assert_eq!(
        value(
            &parsed,
            "headroom_validation_writes",
            &[("outcome", "acknowledged")]
        ),
        Some(135.0)
    );
    assert_eq!(
        value(
            &parsed,
            "headroom_validation_writes",
            &[("outcome", "unknown")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&parsed, "headroom_validation_defects", &[]),
        Some(5.0)
    );
    assert_eq!(
        value(&parsed, "headroom_validation_lost_writes", &[]),
        Some(3.0)
    );
}
