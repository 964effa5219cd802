//! The cassandra-stress profiles Apache Cassandra ships, run unmodified against local nodes.
//!
//! The profiles come from Cassandra's binary tarball on Maven Central (4.0-alpha2 is the only
//! release whose tarball is published there), fetched with Maven into the local repository
//! (~/.m2), so a second run needs no network: tools/cqlstress-*.yaml and the two examples of
//! its documentation. Each runs with its insert and every query it defines, at a fixed rate
//! for a few seconds; every operation must answer, and what the inserts wrote is read back
//! and held against the profile's columnspec (sizes, populations, clustering fan-out, counter
//! sums).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use headroom::cluster::{jars, LocalCluster};
use headroom::workload::stress::{token_range, TOKEN_RANGES};
use scylla::value::CqlValue;
use serde_json::Value;

use crate::support::{self, headroom, read_json, stderr, stdout};

/// The tarball, as Maven names it.
const TARBALL: &str = "org.apache.cassandra:apache-cassandra:4.0-alpha2:tar.gz:bin";
/// The plugin that copies it out of the local repository, pinned as src/cluster/jars.rs pins it.
const DEPENDENCY_PLUGIN: &str = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1";
/// The profiles, by file name; the tarball holds each once.
const PROFILES: [&str; 6] = [
    "cqlstress-example.yaml",
    "cqlstress-counter-example.yaml",
    "cqlstress-insanity-example.yaml",
    "cqlstress-lwt-example.yaml",
    "stress-example.yaml",
    "stress-lwt-example.yaml",
];

/// Fetches the tarball with Maven (into ~/.m2 once, then from there) and writes the six
/// profiles into `dir`, by file name.
fn shipped_profiles(dir: &Path) -> BTreeMap<&'static str, PathBuf> {
    let mvn = jars::find_maven().expect("Maven (mvn), to fetch Cassandra's tarball");
    let output = Command::new(&mvn)
        .current_dir(dir)
        .args(["--batch-mode", "-q", "-Dstyle.color=never"])
        .arg(format!("{DEPENDENCY_PLUGIN}:copy"))
        .arg(format!("-Dartifact={TARBALL}"))
        .arg(format!("-DoutputDirectory={}", dir.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let tarball = dir.join("apache-cassandra-4.0-alpha2-bin.tar.gz");
    assert!(
        output.status.success() && tarball.is_file(),
        "{} could not fetch {TARBALL}:\n{}{}",
        mvn.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let file = std::fs::File::open(&tarball).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut found = BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().into_owned();
        let Some(name) = PROFILES
            .iter()
            .find(|n| path.file_name().is_some_and(|f| f == **n))
        else {
            continue;
        };
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        let out = dir.join(name);
        std::fs::write(&out, text).unwrap();
        assert!(
            found.insert(*name, out).is_none(),
            "{name} twice in the tarball"
        );
    }
    assert_eq!(found.len(), PROFILES.len(), "profiles found: {found:?}");
    std::fs::remove_file(&tarball).unwrap();
    found
}

/// Runs `profile` with `ops` at `rate` for 3 s after `populate` inserts, and checks that
/// every operation of `expected` sent its share of the requests and that they all answered.
/// Returns the summary; prints the achieved rate.
fn run(
    profile: &Path,
    ops: &str,
    expected: &[&str],
    rate: u32,
    populate: u32,
    out: &Path,
) -> Value {
    let hosts = support::hosts();
    let (rate, populate_text, seconds) = (rate.to_string(), populate.to_string(), 3u32);
    let duration = format!("{seconds}s");
    let mut args = vec![
        "run",
        profile.to_str().unwrap(),
        "--ops",
        ops,
        "--rate",
        &rate,
        "--duration",
        &duration,
        "--drop",
        "--hosts",
        &hosts,
        "--out",
        out.to_str().unwrap(),
    ];
    if populate > 0 {
        args.extend(["--populate", &populate_text]);
    }
    let run = headroom(&args);
    let text = stdout(&run);
    // Exit 4: the client could not keep its schedule (its threads ran late on two cores
    // shared with the nodes and other builds), so the run's latencies say nothing of the
    // server; its requests and what they wrote are still checked below.
    assert!(
        run.status.success() || (run.status.code() == Some(4) && text.contains("client-bound")),
        "{text}\n{}",
        stderr(&run)
    );
    if populate > 0 {
        assert!(
            text.contains(&format!("Populated {populate} rows")),
            "{text}"
        );
    }
    let summary = read_json(&out.join("summary.json"));
    let weights: u32 = ops.split(',').count() as u32;
    let share = rate.parse::<u32>().unwrap() * seconds / weights;
    for name in expected {
        let op = support::op(&summary, name);
        let requests = op["requests"].as_u64().unwrap();
        assert!(
            requests as u32 >= share * 9 / 10 && requests as u32 <= share * 11 / 10 + 1,
            "{}: {name}: {requests} requests, {share} expected",
            profile.display()
        );
        assert_answered(op);
    }
    eprintln!(
        "{}: --ops {ops} --rate {rate}: achieved {} requests/s",
        profile.file_name().unwrap().to_string_lossy(),
        summary["achieved_rate_per_s"]
    );
    summary
}

/// As `support::assert_succeeded`, for ops of 15 to 50 requests, where 1% is less than one:
/// a single timeout by the server's own limit (a 500 KB batch, a Paxos round on two busy
/// cores) is the machine's doing, so one is allowed, or 1% where that is more. Any other
/// error fails.
fn assert_answered(op: &Value) {
    let requests = op["requests"].as_u64().unwrap();
    let ok = op["ok"].as_u64().unwrap();
    let errors = op["errors"].as_object().unwrap();
    let timeouts = errors.get("timeout").map_or(0, |n| n.as_u64().unwrap());
    assert!(
        errors.keys().all(|class| class == "timeout")
            && ok + timeouts == requests
            && timeouts <= (requests / 100).max(1),
        "failed requests: {op}"
    );
}

/// The rows of `cql` on the first node (unpaged: the tables here hold a few thousand rows).
fn select(cql: &str) -> Vec<Vec<Option<CqlValue>>> {
    select_each(&[cql.to_string()]).remove(0)
}

/// The rows of each statement of `cqls`, through one session.
fn select_each(cqls: &[String]) -> Vec<Vec<Vec<Option<CqlValue>>>> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let session = headroom::client::connect(&headroom::client::ClientConfig {
            hosts: vec![support::hosts()],
            request_timeout: std::time::Duration::from_secs(60),
            connections: 1,
            credentials: None,
            local_dc: None,
            tls: None,
        })
        .await
        .unwrap();
        let mut out = Vec::with_capacity(cqls.len());
        for cql in cqls {
            // ONE: stress-example.yaml's keyspace has three replicas on one node.
            let mut statement = scylla::statement::Statement::new(cql.as_str());
            statement.set_consistency(scylla::statement::Consistency::One);
            let result = session.query_unpaged(statement, ()).await.unwrap();
            let rows = result.into_rows_result().unwrap();
            out.push(
                rows.rows::<scylla::value::Row>()
                    .unwrap()
                    .map(|r| r.unwrap().columns)
                    .collect(),
            );
        }
        out
    })
}

fn text(value: &Option<CqlValue>) -> &str {
    match value {
        Some(CqlValue::Text(t)) | Some(CqlValue::Ascii(t)) => t,
        other => panic!("not text: {other:?}"),
    }
}

fn length(value: &Option<CqlValue>) -> usize {
    match value {
        Some(CqlValue::Blob(b)) => b.len(),
        other => text(other).chars().count(),
    }
}

fn int(value: &Option<CqlValue>) -> i64 {
    match value {
        Some(CqlValue::BigInt(n)) | Some(CqlValue::Counter(scylla::value::Counter(n))) => *n,
        Some(CqlValue::Int(n)) => i64::from(*n),
        other => panic!("not an integer: {other:?}"),
    }
}

/// Asserts that every value lies in `range`; `what` names the column.
fn all_within(
    values: impl IntoIterator<Item = usize>,
    range: std::ops::RangeInclusive<usize>,
    what: &str,
) {
    let mut seen = 0;
    for v in values {
        assert!(range.contains(&v), "{what}: {v} is outside {range:?}");
        seen += 1;
    }
    assert!(seen > 0, "{what}: no values read back");
}

/// Rows per partition (by the first `key` columns), read back.
fn rows_per_partition(rows: &[Vec<Option<CqlValue>>], key: usize) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for row in rows {
        *counts.entry(format!("{:?}", &row[..key])).or_insert(0) += 1;
    }
    counts
}

/// The "done when": each of the six shipped profiles runs unmodified with its insert
/// and every query (stress-example.yaml is refused as cassandra-stress refuses it, then runs
/// with its misspelt key put right), and what the inserts wrote follows the profile.
#[test]
fn cassandras_shipped_profiles_run_unmodified() {
    let _machine = support::exclusive();
    let files = tempfile::tempdir().unwrap();
    let profiles = shipped_profiles(files.path());
    let runs = tempfile::tempdir().unwrap();
    let dir = support::cluster_dir("shipped-profiles");
    let mut config = support::small_cluster(1);
    // cqlstress-example.yaml writes LOGGED batches of up to 50 partitions × 160 rows (some
    // 500 KB), which Cassandra refuses past its default batch_size_fail_threshold of 50 KiB,
    // under cassandra-stress as under headroom.
    config
        .yaml
        .push(("batch_size_fail_threshold".into(), "2MiB".into()));
    let cluster = LocalCluster::start(&dir, config, &support::start_options()).unwrap();

    // Token range queries beside the insert and the two queries. Values: `name` of 1 to 10
    // characters from 10 values, `date` 20 to 40 under each partition, `lval` 1 to 4 under
    // each date, drawn from 1..1000, `value` a blob of the default 4 to 8 bytes.
    run(
        &profiles["cqlstress-example.yaml"],
        "insert=1,simple1=1,range1=1,all_columns_tr_query=1,value_tr_query=1",
        &[
            "insert",
            "simple1",
            "range1",
            "all_columns_tr_query",
            "value_tr_query",
        ],
        25,
        // Its inserts write some 1,000 rows each: the populate's 128 at once would time out
        // on a small machine; the measured run's inserts are read back below.
        0,
        &runs.path().join("example"),
    );
    let rows = select("SELECT name, choice, date, lval, value FROM stresscql.typestest");
    let names: BTreeSet<&str> = rows.iter().map(|r| text(&r[0])).collect();
    assert!(names.len() <= 10, "{} names", names.len());
    all_within(names.iter().map(|n| n.chars().count()), 1..=10, "name");
    all_within(rows.iter().map(|r| length(&r[4])), 4..=8, "value");
    all_within(rows.iter().map(|r| int(&r[3]) as usize), 1..=1000, "lval");
    // With ten names and two choices, many of headroom's partitions share a key (as
    // cassandra-stress's seeds do), each with dates of its own; under one date, `lval` has
    // its 1 to 4 values (the other clustering columns one each).
    let mut per_date: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for row in &rows {
        per_date
            .entry(format!("{:?}", &row[..3]))
            .or_default()
            .insert(int(&row[3]));
    }
    all_within(
        per_date.values().map(BTreeSet::len),
        1..=4,
        "lval values per date",
    );
    all_within(
        rows_per_partition(&rows, 3).into_values(),
        1..=4,
        "rows per date",
    );

    // The token range queries' split of the ring holds every row once.
    let ranges: Vec<String> = (0..TOKEN_RANGES)
        .map(|i| {
            let (start, end) = token_range(i);
            format!("SELECT name FROM stresscql.typestest WHERE token(name, choice) > {start} AND token(name, choice) <= {end}")
        })
        .collect();
    let by_range: usize = select_each(&ranges).iter().map(Vec::len).sum();
    assert_eq!(by_range, rows.len(), "rows over the {TOKEN_RANGES} ranges");

    // Counters: each insert adds the increment drawn from `population: fixed(1)` to one
    // partition's counter, so the counters add up to the inserts that were applied.
    let counter = run(
        &profiles["cqlstress-counter-example.yaml"],
        "insert=1,simple1=1",
        &["insert", "simple1"],
        50,
        100,
        &runs.path().join("counter"),
    );
    let insert = support::op(&counter, "insert");
    let (ok, sent) = (
        insert["ok"].as_u64().unwrap() + 100,
        insert["requests"].as_u64().unwrap() + 100,
    );
    let rows = select("SELECT name, count FROM stresscql.counttest");
    let total: i64 = rows.iter().map(|r| int(&r[1])).sum();
    assert!(
        (ok as i64..=sent as i64).contains(&total),
        "the counters add up to {total}, the inserts that answered to {ok}"
    );
    all_within(rows.iter().map(|r| length(&r[0])), 1..=4, "name");

    // Many types; `date` gaussian(1..20) rows per partition; `lval` drawn from fixed(1).
    run(
        &profiles["cqlstress-insanity-example.yaml"],
        "insert=1,simple1=1",
        &["insert", "simple1"],
        50,
        100,
        &runs.path().join("insanity"),
    );
    let rows = select("SELECT name, choice, date, lval FROM stresscql.insanitytest");
    assert!(rows.iter().all(|r| int(&r[3]) == 1), "lval is fixed(1)");
    all_within(
        rows_per_partition(&rows, 2).into_values(),
        1..=20,
        "rows per partition",
    );

    // The documentation's LWT example: a plain update and a conditional one that reads the
    // row's body and url first (recorded as updatewithlwt-read).
    let lwt = run(
        &profiles["stress-lwt-example.yaml"],
        "insert=1,singlepost=1,regularupdate=1,updatewithlwt=1",
        &[
            "insert",
            "singlepost",
            "regularupdate",
            "updatewithlwt",
            "updatewithlwt-read",
        ],
        40,
        50,
        &runs.path().join("doc-lwt"),
    );
    assert_eq!(
        support::op(&lwt, "updatewithlwt-read")["requests"],
        support::op(&lwt, "updatewithlwt")["requests"],
        "one read for each conditional update"
    );
    let rows = select("SELECT domain, url, title, author, body FROM stresscql.blogposts");
    all_within(rows.iter().map(|r| length(&r[0])), 5..=100, "domain");
    all_within(rows.iter().map(|r| length(&r[3])), 5..=20, "author");
    // The updates write rows of their own with only the author; the inserts' rows have all.
    let full: Vec<_> = rows.iter().filter(|r| r[4].is_some()).collect();
    all_within(full.iter().map(|r| length(&r[1])), 30..=300, "url");
    all_within(full.iter().map(|r| length(&r[2])), 10..=200, "title");
    all_within(full.iter().map(|r| length(&r[4])), 100..=5000, "body");
    all_within(
        rows_per_partition(&rows, 1).into_values(),
        1..=1000,
        "rows per partition",
    );

    // The documentation's first example misspells `specname` as `spacenam` on its first
    // line; cassandra-stress stops on it ("Unable to find property 'spacenam'"), and so does
    // headroom, with the line.
    let example = &profiles["stress-example.yaml"];
    let refused = headroom(&[
        "run",
        example.to_str().unwrap(),
        "--ops",
        "insert=1",
        "--hosts",
        &support::hosts(),
        "--out",
        runs.path().join("refused").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("line 1: unknown field `spacenam`"),
        "{}",
        stderr(&refused)
    );
    let written = std::fs::read_to_string(example).unwrap();
    assert!(written.starts_with("spacenam: "), "{written}");
    let corrected = files.path().join("stress-example-specname.yaml");
    std::fs::write(&corrected, written.replacen("spacenam: ", "specname: ", 1)).unwrap();
    run(
        &corrected,
        "insert=1,events=1,latest_event=1",
        &["insert", "events", "latest_event"],
        30,
        50,
        &runs.path().join("doc-example"),
    );
    let rows = select("SELECT name, when, what FROM example.staff_activities");
    let names: BTreeSet<&str> = rows.iter().map(|r| text(&r[0])).collect();
    assert!(names.len() <= 10, "{} names", names.len());
    all_within(names.iter().map(|n| n.chars().count()), 5..=10, "name");
    all_within(rows.iter().map(|r| length(&r[2])), 10..=100, "what");
    // Ten names, each shared by many of headroom's partitions: the fan-out is not one
    // partition's, but each `when` is one row.
    all_within(
        rows_per_partition(&rows, 2).into_values(),
        1..=1,
        "rows per name and when",
    );
    drop(cluster);

    // The LWT profile's keyspace has replication_factor 3: a serial write needs a quorum of
    // its three replicas, so it runs on three nodes.
    let dir3 = support::cluster_dir("shipped-profiles-3");
    let _cluster3 =
        LocalCluster::start(&dir3, support::small_cluster(3), &support::start_options()).unwrap();
    run(
        &profiles["cqlstress-lwt-example.yaml"],
        "insert=1,singlepost=1,timeline=1",
        &["insert", "singlepost", "timeline"],
        30,
        50,
        &runs.path().join("lwt"),
    );
    let rows =
        select("SELECT domain, url, title, author, body FROM cqlstress_lwt_example.blogposts");
    all_within(rows.iter().map(|r| length(&r[1])), 30..=300, "url");
    all_within(rows.iter().map(|r| length(&r[2])), 10..=200, "title");
    all_within(rows.iter().map(|r| length(&r[3])), 5..=20, "author");
    all_within(rows.iter().map(|r| length(&r[4])), 100..=5000, "body");
    // select fixed(1)/1000 of 1000 posts: one row per insert, each at most once.
    assert!(rows.len() <= 50 + 30, "{} rows", rows.len());
}
