//! Tests of the YCSB format without a cluster: properties to settings, the operation mix,
//! and which keys requests use.

use super::generators::RequestDistribution;
use super::properties::{Origin, Properties};
use super::*;

fn config(core: &str, extra: &[(&str, &str)]) -> Result<YcsbConfig, String> {
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
            "requestdistribution",
            "exponential",
            "does not implement YCSB's exponential",
        ),
        (
            "requestdistribution",
            "pareto",
            "uniform, zipfian, latest, hotspot",
        ),
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
        ("fieldlengthdistribution", "histogram", "histogram"),
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
        counts[plan.op_for(seq)] += 1;
    }
    assert_eq!(counts, [5000, 0, 0, 0, 5000]);
    let plan = Plan::new(config("b", &[]).unwrap(), 1);
    let updates = (1000..21_000).filter(|&s| plan.op_for(s) == UPDATE).count();
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
        let op = plan.op_for(seq);
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
    for (key, value, line) in super::properties::parse(text) {
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
            let op = plan.op_for(seq);
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
