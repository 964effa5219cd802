//! YCSB property files: `raw::parse`, then what `-P FILE` does with the entries
//! (`Properties::set`, `check`) and what the run path builds from them without a connection
//! (`YcsbConfig::from_properties`, then the operation mix, key and length choosers the
//! workload's plan is made of, each drawn from a few times).
#![no_main]

use std::path::PathBuf;

use headroom::workload::common::generators::request_rng;
use headroom::workload::ycsb::values::{KeyChooser, LengthChooser};
use headroom::workload::ycsb::raw::{self, Origin, Properties};
use headroom::workload::ycsb::{self, FieldLengthDistribution, ScanLengthDistribution, YcsbConfig};
use headroom::workload::OpMix;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut props = Properties::default();
    for (key, value, line) in raw::parse(text) {
        let origin = Origin::File {
            path: PathBuf::from("fuzz.properties"),
            line,
        };
        props.set(&key, &value, origin);
    }
    if let Err(e) = props.check() {
        let _ = e.to_string();
    }
    let config = match YcsbConfig::from_properties(&props) {
        Ok(config) => config,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    // As the workload's plan (src/workload/ycsb/mod.rs, `Plan::new`): inserts first.
    let w = config.weights();
    // The mix divides each proportion by their sum.
    let total: f64 = w.iter().sum();
    assert!(
        total.is_finite() && total > 0.0,
        "{text:?}: the proportions add up to {total}"
    );
    let mix = OpMix::new(&[w[2], w[0], w[1], w[3], w[4]]);
    let keys = KeyChooser::new(&ycsb::key_settings(&config));
    let scan_lengths = match config.scanlengthdistribution {
        ScanLengthDistribution::Uniform => {
            LengthChooser::Uniform(config.minscanlength, config.maxscanlength)
        }
        ScanLengthDistribution::Zipfian => {
            LengthChooser::zipfian(config.minscanlength, config.maxscanlength)
        }
    };
    let field_lengths = match config.fieldlengthdistribution {
        FieldLengthDistribution::Constant => LengthChooser::Constant(config.fieldlength),
        FieldLengthDistribution::Uniform => {
            LengthChooser::Uniform(config.minfieldlength, config.fieldlength)
        }
        FieldLengthDistribution::Zipfian => {
            LengthChooser::zipfian(config.minfieldlength, config.fieldlength)
        }
        // Its lengths come from a file (`fieldlengthhistogram`), which a fuzzed text names
        // but does not hold.
        FieldLengthDistribution::Histogram => return,
    };
    for seq in [1, config.recordcount.saturating_add(7)] {
        let mut rng = request_rng(1, seq);
        let _ = mix.op_for(seq);
        let newest = config
            .recordcount
            .saturating_add(mix.first_type_count(seq))
            .saturating_sub(1);
        let _ = keys.choose(newest, seq, &mut rng);
        let _ = scan_lengths.choose(&mut rng);
        let _ = field_lengths.choose(&mut rng);
    }
});
