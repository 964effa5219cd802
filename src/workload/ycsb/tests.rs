//! Tests of the YCSB format without a cluster: properties to settings, the operation mix,
//! and which keys requests use.

use super::raw::{Origin, Properties};
use super::values::RequestDistribution;
use super::*;

pub(super) fn config(core: &str, extra: &[(&str, &str)]) -> Result<YcsbConfig, String> {
    let mut props = Properties::default();
    if !core.is_empty() {
        props.add_core(core).unwrap();
    }
    for (key, value) in extra {
        props.set(key, value, Origin::CommandLine);
    }
    props.check().map_err(|e| e.to_string())?;
    YcsbConfig::from_properties(&props).map_err(|e| e.to_string())
}

#[test]
fn workload_f_with_ycsbs_defaults() {
    let f = config("f", &[]).unwrap();
    assert_eq!(f.recordcount, 1000);
    assert_eq!(f.operationcount, 1000);
    assert_eq!(f.weights(), [0.5, 0.0, 0.0, 0.0, 0.5]);
    assert_eq!(f.requestdistribution, RequestDistribution::Zipfian);
    assert_eq!(f.zipfianconstant, 0.99);
    assert_eq!((f.fieldcount, f.fieldlength), (10, 100));
    assert!(f.readallfields && !f.writeallfields);
    assert_eq!(f.insertorder, InsertOrder::Hashed);
    assert_eq!(f.table, "usertable");
    assert_eq!(f.read_consistency, None);
    let e = config("e", &[]).unwrap();
    assert_eq!((e.minscanlength, e.maxscanlength), (1, 100));
    assert_eq!(e.scanlengthdistribution, ScanLengthDistribution::Uniform);
    // CoreWorkload's own defaults, with no core workload under them.
    let bare = config("", &[("recordcount", "10")]).unwrap();
    assert_eq!(bare.weights(), [0.95, 0.05, 0.0, 0.0, 0.0]);
    assert_eq!(bare.requestdistribution, RequestDistribution::Uniform);
    assert_eq!(bare.maxscanlength, 1000);
}

#[test]
fn bad_values_are_errors_naming_the_key() {
    for (key, value, expected) in [
        (
            "readproportion",
            "half",
            "readproportion=half: not a number",
        ),
        ("updateproportion", "-0.1", "at least 0"),
        (
            "exponential.percentile",
            "100",
            "exponential.percentile=100: must be a number between 0 and 100",
        ),
        (
            "exponential.frac",
            "0",
            "exponential.frac=0: must be a number above 0",
        ),
        (
            "requestdistribution",
            "pareto",
            "uniform, zipfian, latest, hotspot, exponential, sequential",
        ),
        (
            "fieldnameprefix",
            "f-",
            "fieldnameprefix=f-: must be letters, digits or underscores",
        ),
        (
            "insertstart",
            "1001",
            "insertstart=1001: must be at most recordcount",
        ),
        (
            "insertcount",
            "1001",
            "insertcount=1001: insertstart (0) + insertcount must be at most recordcount (1000)",
        ),
        ("insertcount", "0", "insertcount=0: must be at least 1"),
        ("zipfianconstant", "1.2", "between 0 and 1"),
        (
            "fieldcount",
            "0",
            "fieldcount=0: must be between 1 and 1024",
        ),
        ("fieldlength", "10k", "fieldlength=10k: not a whole number"),
        (
            "readallfields",
            "yes",
            "readallfields=yes: must be true or false",
        ),
        (
            "insertorder",
            "random",
            "insertorder=random: headroom knows hashed, ordered",
        ),
        (
            "cassandra.readconsistencylevel",
            "SOMETIMES",
            "not a consistency level",
        ),
        ("table", "user-table", "not a plain CQL table name"),
        (
            "maxscanlength",
            "0",
            "maxscanlength=0: must be at least minscanlength",
        ),
        (
            "fieldlengthdistribution",
            "pareto",
            "constant, uniform, zipfian, histogram",
        ),
        ("recordcount", "0", "recordcount=0: must be at least 1"),
    ] {
        let error = config("a", &[(key, value)]).unwrap_err();
        assert!(error.starts_with("-p: "), "{error}");
        assert!(error.contains(expected), "{key}={value}: {error}");
    }
    let error = config("a", &[("readproportion", "0"), ("updateproportion", "0")]).unwrap_err();
    assert!(error.contains("every proportion"), "{error}");
    // Inserts alone need no loaded records.
    let inserts = config(
        "a",
        &[
            ("recordcount", "0"),
            ("readproportion", "0"),
            ("updateproportion", "0"),
            ("insertproportion", "1"),
        ],
    )
    .unwrap();
    assert_eq!(inserts.recordcount, 0);
    let consistency = config("a", &[("cassandra.writeconsistencylevel", "local_quorum")]).unwrap();
    assert_eq!(
        consistency.write_consistency.as_deref(),
        Some("LOCAL_QUORUM")
    );
}

#[test]
fn the_mix_is_exact_and_rmw_is_half_of_f() {
    let plan = Plan::new(config("f", &[]).unwrap(), 1);
    let mut counts = [0u64; 5];
    for seq in 1000..11_000 {
        counts[plan.operations.op_for(seq)] += 1;
    }
    assert_eq!(counts, [5000, 0, 0, 0, 5000]);
    let plan = Plan::new(config("b", &[]).unwrap(), 1);
    let updates = (1000..21_000)
        .filter(|&s| plan.operations.op_for(s) == UPDATE)
        .count();
    assert!((999..=1001).contains(&updates), "{updates}");
}

#[test]
fn inserts_continue_after_the_loaded_keys_and_reads_find_existing_ones() {
    // Workload D: 5% inserts of new keys, reads skewed to the newest.
    let d = config("d", &[("recordcount", "100")]).unwrap();
    let plan = Plan::new(d, 7);
    // The load phase inserts key numbers 0..recordcount.
    for seq in 0..100 {
        assert_eq!(plan.keynum(INSERT, seq, &mut request_rng(7, seq)), seq);
    }
    let mut inserted = Vec::new();
    let mut newest = 99;
    let mut reads_of_new = 0;
    for seq in 100..10_100 {
        let mut rng = request_rng(7, seq);
        let op = plan.operations.op_for(seq);
        let keynum = plan.keynum(op, seq, &mut rng);
        if op == INSERT {
            assert_eq!(keynum, newest + 1, "the next key number, seq {seq}");
            newest = keynum;
            inserted.push(keynum);
        } else {
            assert!(
                keynum <= newest,
                "seq {seq} reads {keynum}, newest is {newest}"
            );
            if keynum >= 100 {
                reads_of_new += 1;
            }
        }
        assert_eq!(plan.newest_keynum(seq + 1), newest);
    }
    assert_eq!(inserted.len(), 500);
    assert!(
        reads_of_new > 5000,
        "latest favours the inserted keys: {reads_of_new}"
    );
    // The same request always uses the same key.
    let again = |seq| plan.keynum(READ, seq, &mut request_rng(7, seq));
    assert_eq!(again(5000), again(5000));
}

#[test]
fn keys_are_ycsbs_and_values_have_fieldlength() {
    let plan = Plan::new(config("a", &[]).unwrap(), 3);
    assert_eq!(plan.key(42), "user55488592825689361");
    let ordered = Plan::new(
        config("a", &[("insertorder", "ordered"), ("zeropadding", "6")]).unwrap(),
        3,
    );
    assert_eq!(ordered.key(42), "user000042");
    let value = plan.value(&mut request_rng(3, 1)).to_string();
    assert_eq!(value.len(), 100);
    assert!(value.chars().all(|c| c.is_ascii_graphic()));
    let uniform = Plan::new(
        config(
            "a",
            &[
                ("fieldlengthdistribution", "uniform"),
                ("minfieldlength", "5"),
                ("fieldlength", "9"),
            ],
        )
        .unwrap(),
        3,
    );
    for seq in 0..200 {
        let len = uniform.value(&mut request_rng(3, seq)).len();
        assert!((5..=9).contains(&len), "{len}");
    }
}

/// The properties as a `-P` file holds them.
fn from_file_text(text: &str) -> Result<YcsbConfig, String> {
    let mut props = Properties::default();
    for (key, value, line) in super::raw::parse(text) {
        let origin = Origin::File {
            path: "w".into(),
            line,
        };
        props.set(&key, &value, origin);
    }
    props.check().map_err(|e| e.to_string())?;
    YcsbConfig::from_properties(&props).map_err(|e| e.to_string())
}

/// operationcount × insertproportion sizes the zipfian's key range; a huge product
/// overflowed the range's size (a panic when the workload was prepared).
#[test]
fn a_huge_expected_insert_count_keeps_keys_in_range() {
    for text in [
        "recordcount=10\noperationcount=1000\ninsertproportion=1e300\nrequestdistribution=zipfian\n",
        "recordcount=10\noperationcount=18446744073709551615\ninsertproportion=0.5\nrequestdistribution=zipfian\n",
    ] {
        let plan = Plan::new(from_file_text(text).unwrap(), 3);
        for seq in [10, 11, 1000, 1_000_000] {
            let op = plan.operations.op_for(seq);
            let newest = plan.newest_keynum(seq);
            let keynum = plan.keynum(op, seq, &mut request_rng(3, seq));
            assert!(op == INSERT || keynum <= newest, "{text:?} request {seq}");
        }
    }
}

/// Each proportion is finite, but their sum was not checked: 1e308 twice dealt every
/// request to the last of them.
#[test]
fn proportions_must_add_up_to_a_number() {
    let error = from_file_text("recordcount=10\nreadproportion=1e308\nupdateproportion=1e308\n")
        .unwrap_err();
    assert_eq!(
        error,
        "w:2: readproportion=1e308: the proportions are too large to add up; they are shares, \
         e.g. 0.95 and 0.05"
    );
    assert!(from_file_text("recordcount=10\nreadproportion=1e300\nupdateproportion=1\n").is_ok());
}

#[test]
fn insertstart_and_insertcount_load_one_range_and_bound_the_run() {
    let c = config(
        "a",
        &[
            ("recordcount", "1000"),
            ("insertstart", "400"),
            ("insertcount", "300"),
            ("requestdistribution", "uniform"),
            ("insertproportion", "0.1"),
        ],
    )
    .unwrap();
    assert_eq!(c.insert_count(), 300);
    let mut shared = WorkloadSettings {
        name: NAME.into(),
        definition: (),
        keyspace: "headroom".into(),
        partitions: 1,
        partition_generator: crate::workload::common::generators::PartitionGenerator::Random,
        read_ratio: 0.0,
        delete_ratio: 0.0,
        populate: 0,
        replication: String::new(),
        compaction: None,
        ttl_s: None,
        consistency: "LOCAL_ONE".into(),
        drop: false,
        seed: 1,
        rows_per_partition: None,
    };
    settle(&c, &mut shared);
    assert_eq!(
        shared.populate, 300,
        "the load phase inserts insertcount records"
    );
    let plan = Plan::new(c, 5);
    // The load phase: key numbers 400..700.
    let loaded: Vec<u64> = (0..300)
        .map(|seq| plan.keynum(INSERT, seq, &mut request_rng(5, seq)))
        .collect();
    assert_eq!(loaded, (400..700).collect::<Vec<_>>());
    // The run phase (from request 300): inserts from recordcount on, reads and updates in
    // insertstart..insertstart + insertcount.
    let mut inserts = Vec::new();
    for seq in 300..5300 {
        let op = plan.operations.op_for(seq);
        let keynum = plan.keynum(op, seq, &mut request_rng(5, seq));
        if op == INSERT {
            inserts.push(keynum);
        } else {
            assert!((400..700).contains(&keynum), "request {seq}: {keynum}");
        }
    }
    // 0.1 of 1.1 of the 5000 requests.
    assert_eq!(inserts, (1000..1454).collect::<Vec<_>>());
    // Without them, the whole of recordcount.
    let all = config("a", &[("recordcount", "50")]).unwrap();
    assert_eq!((all.insertstart, all.insert_count()), (0, 50));
    let rest = config("a", &[("recordcount", "50"), ("insertstart", "20")]).unwrap();
    assert_eq!(rest.insert_count(), 30, "recordcount - insertstart");
}

#[test]
fn sequential_reads_go_in_key_order_between_the_inserts() {
    let c = config(
        "a",
        &[
            ("recordcount", "100"),
            ("requestdistribution", "sequential"),
            ("insertproportion", "0.2"),
            ("readproportion", "0.8"),
            ("updateproportion", "0"),
        ],
    )
    .unwrap();
    let plan = Plan::new(c, 9);
    let reads: Vec<u64> = (100..400)
        .filter(|&seq| plan.operations.op_for(seq) != INSERT)
        .map(|seq| plan.keynum(READ, seq, &mut request_rng(9, seq)))
        .collect();
    assert_eq!(reads.len(), 240);
    let expected: Vec<u64> = (0..240).map(|n| n % 100).collect();
    assert_eq!(
        reads, expected,
        "0, 1, 2, ... 99, 0, 1...: the loaded records in order"
    );
}

#[test]
fn exponential_favours_the_newest_keys_of_the_run() {
    let c = config(
        "d",
        &[
            ("recordcount", "10000"),
            ("requestdistribution", "exponential"),
            ("exponential.percentile", "90"),
            ("exponential.frac", "0.05"),
        ],
    )
    .unwrap();
    assert_eq!((c.exponential_percentile, c.exponential_frac), (90.0, 0.05));
    let plan = Plan::new(c, 4);
    let (mut near, mut reads) = (0, 0);
    for seq in 10_000..30_000 {
        let op = plan.operations.op_for(seq);
        if op == INSERT {
            continue;
        }
        let newest = plan.newest_keynum(seq);
        let keynum = plan.keynum(op, seq, &mut request_rng(4, seq));
        assert!(keynum <= newest);
        reads += 1;
        // 90% within the newest 5% of recordcount (500 keys).
        if newest - keynum < 500 {
            near += 1;
        }
    }
    let share = near as f64 / reads as f64;
    assert!((share - 0.9).abs() < 0.01, "{share}");
}

#[test]
fn fieldnameprefix_names_the_columns() {
    let c = config("a", &[("fieldnameprefix", "Col_"), ("fieldcount", "3")]).unwrap();
    assert_eq!(c.columns(), ["Col_0", "Col_1", "Col_2"]);
    assert_eq!(config("a", &[]).unwrap().columns()[9], "field9");
}

#[test]
fn histogram_field_lengths_are_read_once_and_kept_in_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lengths.txt");
    // Lengths 8 (bucket 0) and 16 (buckets 1 and 2, as YCSB's walk gives them).
    std::fs::write(&file, "BlockSize\t8\n0\t3\n1\t0\n2\t5\n").unwrap();
    let path = file.to_str().unwrap();
    let c = config(
        "a",
        &[
            ("fieldlengthdistribution", "histogram"),
            ("fieldlengthhistogram", path),
        ],
    )
    .unwrap();
    let histogram = c.fieldlengthhistogram.clone().unwrap();
    assert_eq!(
        (histogram.block_size, &histogram.buckets[..]),
        (8, &[3, 0, 5][..])
    );
    // Stored in config.json and read back without the file.
    let json = serde_json::to_string(&c).unwrap();
    std::fs::remove_file(&file).unwrap();
    let stored: YcsbConfig = serde_json::from_str(&json).unwrap();
    assert_eq!(stored, c);
    let plan = Plan::new(stored, 2);
    let mut counts = std::collections::BTreeMap::new();
    for seq in 0..8000 {
        *counts
            .entry(plan.value(&mut request_rng(2, seq)).len())
            .or_insert(0) += 1;
    }
    assert_eq!(counts.keys().copied().collect::<Vec<_>>(), [8, 16]);
    // n = 0..=3 of 0..8 gives 8: half.
    let eights = counts[&8] as f64 / 8000.0;
    assert!((eights - 0.5).abs() < 0.03, "{counts:?}");

    // The file is gone: resolving again names the key and the file.
    let error = config(
        "a",
        &[
            ("fieldlengthdistribution", "histogram"),
            ("fieldlengthhistogram", path),
        ],
    )
    .unwrap_err();
    assert!(
        error.starts_with(&format!("-p: fieldlengthhistogram={path}: cannot read")),
        "{error}"
    );
    std::fs::write(&file, "BlockSize\t8\n1\t3\n").unwrap();
    let error = config(
        "a",
        &[
            ("fieldlengthdistribution", "histogram"),
            ("fieldlengthhistogram", path),
        ],
    )
    .unwrap_err();
    assert!(
        error.contains("line 2: bucket '1' where bucket 0 comes next"),
        "{error}"
    );
}

/// A config.json written before insertstart and insertcount: the whole of recordcount.
#[test]
fn an_older_config_loads_every_record() {
    let mut json = serde_json::to_value(config("a", &[("recordcount", "70")]).unwrap()).unwrap();
    let map = json.as_object_mut().unwrap();
    for key in [
        "insertstart",
        "insertcount",
        "fieldnameprefix",
        "exponential.percentile",
        "exponential.frac",
    ] {
        map.remove(key).unwrap();
    }
    let old: YcsbConfig = serde_json::from_value(json).unwrap();
    assert_eq!((old.insertstart, old.insert_count()), (0, 70));
    assert_eq!(old.fieldnameprefix, "field");
    assert_eq!(old.exponential_percentile, 95.0);
}
