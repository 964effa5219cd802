//! The capacity search's methods on the stochastic simulated cluster
//! (`headroom::capacity::sim::stochastic`): for each scenario, the interval search and
//! today's bisection with 1 and 3 repeats, each over many searches, with how often the stated
//! bounds held the true capacity, their median width and the median load-time.
//!
//!     cargo run --release --example search_method -- \
//!         [SEARCHES] [EXCEED_RATIO] [CONFIDENCE] [WIDTH] [CORRELATION]
//!
//! Prints one JSON object per scenario and method, one per line. `bench/search-method.py`
//! runs it and prints the table docs/capacity.md keeps.

use headroom::capacity::interval::{IntervalGoal, MAX_TRIALS, WINDOW_CORRELATION};
use headroom::capacity::sim::stochastic::{evaluate, Method, SCENARIOS};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Ok(trace) = std::env::var("SEARCH_TRACE") {
        // SEARCH_TRACE=SCENARIO,SEED: one interval search's trials, for reading.
        let (scenario, seed) = trace.split_once(',').expect("SCENARIO,SEED");
        let scenario = SCENARIOS[scenario.parse::<usize>().expect("a scenario index")];
        let e = args.first().map_or(0.1, |a| a.parse().expect("a number"));
        let goal = IntervalGoal {
            exceed_ratio: e,
            confidence: 0.9,
            width: 0.1,
            windows_per_trial: 6,
            window_correlation: WINDOW_CORRELATION,
            max_trials: MAX_TRIALS,
        };
        let (found, records) = headroom::capacity::sim::stochastic::search_with_records(
            &Method::Interval(goal),
            scenario,
            seed.parse().expect("a seed"),
            e,
        );
        for record in &records {
            if let headroom::capacity::record::Record::Trial(t) = record {
                println!(
                    "{:>8.0} #{} {:?}/{:?}{}",
                    t.rate_per_s,
                    t.repeat,
                    t.failed_windows,
                    t.windows,
                    if t.invalid.is_some() {
                        " client-bound"
                    } else {
                        ""
                    }
                );
            }
        }
        println!("{found:?}");
        println!(
            "{:?}",
            headroom::capacity::interval::interval(&records, &goal)
        );
        return;
    }
    let number = |i: usize, default: f64| -> f64 {
        args.get(i).map_or(default, |a| {
            a.parse()
                .unwrap_or_else(|_| panic!("argument {}: '{a}' is not a number", i + 1))
        })
    };
    let searches = number(0, 1000.0) as usize;
    let exceed_ratio = number(1, 0.1);
    let goal = IntervalGoal {
        exceed_ratio,
        confidence: number(2, 0.9),
        width: number(3, 0.1),
        windows_per_trial: 6,
        window_correlation: number(4, WINDOW_CORRELATION),
        max_trials: MAX_TRIALS,
    };
    let methods = [
        Method::Interval(goal),
        Method::Ladder {
            repeats: 1,
            resolution: goal.width,
        },
        Method::Ladder {
            repeats: 3,
            resolution: goal.width,
        },
    ];
    for scenario in SCENARIOS {
        for method in &methods {
            let row = evaluate(method, scenario, searches, exceed_ratio);
            println!("{}", serde_json::to_string(&row).expect("serialisable"));
        }
    }
}
