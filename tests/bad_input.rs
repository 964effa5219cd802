//! The bad-input corpus: careless or wrong inputs a user can give, each refused with exit
//! code 2, one short message that names the cause, and nothing written. Table-driven: a new
//! case is one entry of `CASES`. No case needs a node: every input is checked before
//! anything connects (the contact point, where one is needed, is a port nothing listens on).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A file a case needs, under the case's own directory.
enum Content {
    /// Text.
    Text(&'static str),
    /// Bytes.
    Bytes(&'static [u8]),
    /// This many bytes of '#': a file too large to read.
    Large(usize),
    /// A copy of a file of tests/fixtures.
    Fixture(&'static str),
    /// A FIFO that nobody writes to: opening it to read would block for ever.
    Fifo,
}

use Content::*;

/// One bad input: the command line (`{dir}` is the case's directory, also its working
/// directory), the files it needs, and what the message must say.
struct Case {
    args: &'static [&'static str],
    files: &'static [(&'static str, Content)],
    says: &'static [&'static str],
}

const fn case(args: &'static [&'static str], says: &'static [&'static str]) -> Case {
    Case {
        args,
        files: &[],
        says,
    }
}

const fn with(
    args: &'static [&'static str],
    files: &'static [(&'static str, Content)],
    says: &'static [&'static str],
) -> Case {
    Case { args, files, says }
}

/// A contact point nothing listens on: a case that got as far as connecting would fail
/// there, with another message than the one expected.
const NOWHERE: &str = "127.0.0.1:1";

const YCSB_BAD_NUMBER: &str = "readproportion=abc\n";
const PROFILE_BAD_TOKEN_RANGES: &str = "keyspace: ks\ntable: t\n\
    table_definition: CREATE TABLE t (k int PRIMARY KEY)\ntoken_range_queries: x\n";
const PROFILE_SEED: &str = "keyspace: ks\ntable: t\n\
    table_definition: CREATE TABLE t (k int PRIMARY KEY)\nseed: 1\n";
const PROFILE_BAD_NAME: &str =
    "keyspace: bad-ks\ntable: t\ntable_definition: CREATE TABLE t (k int PRIMARY KEY)\n";
const PROFILE_BAD_DISTRIBUTION: &str = "keyspace: ks\ntable: t\n\
    table_definition: CREATE TABLE t (k int PRIMARY KEY, v text)\n\
    columnspec:\n  - name: v\n    size: gaussian(5..)\n";
/// `table:` names one table and `table_definition` creates another: the run would create
/// one and look for the other.
const PROFILE_OTHER_TABLE: &str =
    "keyspace: ks\ntable: other\ntable_definition: CREATE TABLE t (k int PRIMARY KEY)\n";
/// The same name in another case: a double-quoted name keeps its case.
const PROFILE_QUOTED_TABLE: &str =
    "keyspace: ks\ntable: posts\ntable_definition: CREATE TABLE \"Posts\" (k int PRIMARY KEY)\n";
/// `table_definition` creates its table in another keyspace than `keyspace:`.
const PROFILE_OTHER_KEYSPACE: &str =
    "keyspace: ks\ntable: t\ntable_definition: CREATE TABLE other_ks.t (k int PRIMARY KEY)\n";
const OPS_TWICE: &str = "schema: []\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k) VALUES (?)\n    args: [uniform(10)]\n  write:\n    cql: SELECT k FROM {keyspace}.t\n";
const POPULATE_LOTS: &str = "schema: []\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k) VALUES (?)\n    args: [uniform(10)]\npopulate: lots\n";
const OPERATIONS_NUMBER: &str = "operations: 5\n";
const OPERATIONS_EMPTY: &str = "schema: []\noperations: {}\n";
const UNKNOWN_KEY: &str = "schema: []\nsurprise: 1\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k) VALUES (?)\n    args: [uniform(10)]\n";
const VECTOR_FILE_OF_ANOTHER_DIMENSION: &str = "schema:\n  - CREATE TABLE IF NOT EXISTS {keyspace}.t (id int PRIMARY KEY, v vector<float, 8>)\noperations:\n  search:\n    cql: SELECT id FROM {keyspace}.t ORDER BY v ANN OF ? LIMIT 10\n    args: [\"vector_file('base.fvecs')\"]\n";
const BAD_GENERATOR: &str = "schema: []\ngenerators:\n  key: lognormal(1)\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k) VALUES (?)\n    args: [key]\n";

const CONFIG_NEGATIVE_WARMUP: &str = r#"{"headroom_version":"0.1.0","hosts":["127.0.0.1:9042"],"workload":{"name":"timeseries","keyspace":"headroom","partitions":1000000,"partition_generator":"random","read_ratio":0.2,"delete_ratio":0.0,"populate":0,"replication":"{'class': 'SimpleStrategy', 'replication_factor': 1}","compaction":null,"ttl_s":null,"consistency":"LOCAL_ONE","drop":false,"seed":1},"mode":{"loop":"open","rate_per_s":1000.0,"arrivals":"fixed","max_in_flight":4096},"warmup_s":-1.0,"duration_s":20.0,"ops":null,"interval_s":1.0,"threads":2,"request_timeout_s":10.0,"connections":1,"send_resolution_s":0.0005,"sla":{"terms":"p99.9<100ms, max<50ms, read:p99<5ms, window=5s","window_s":5.0},"command_line":["./target/debug/headroom","run","timeseries","-r","0.2","--rate","1000","--duration","20s","--warmup","5s","--sla","p99.9<100ms, max<50ms,read:p99<5ms","--window","5s","--out","/tmp/r1"]}"#;
const CONFIG_ENDLESS_RATE: &str = r#"{"headroom_version":"0.1.0","hosts":["127.0.0.1:9042"],"workload":{"name":"timeseries","keyspace":"headroom","partitions":1000000,"partition_generator":"random","read_ratio":0.2,"delete_ratio":0.0,"populate":0,"replication":"{'class': 'SimpleStrategy', 'replication_factor': 1}","compaction":null,"ttl_s":null,"consistency":"LOCAL_ONE","drop":false,"seed":1},"mode":{"loop":"open","rate_per_s":1e+99,"arrivals":"fixed","max_in_flight":4096},"warmup_s":5.0,"duration_s":20.0,"ops":null,"interval_s":1.0,"threads":2,"request_timeout_s":10.0,"connections":1,"send_resolution_s":0.0005,"sla":{"terms":"p99.9<100ms, max<50ms, read:p99<5ms, window=5s","window_s":5.0},"command_line":["./target/debug/headroom","run","timeseries","-r","0.2","--rate","1000","--duration","20s","--warmup","5s","--sla","p99.9<100ms, max<50ms,read:p99<5ms","--window","5s","--out","/tmp/r1"]}"#;
const CONFIG_MANY_THREADS: &str = r#"{"headroom_version":"0.1.0","hosts":["127.0.0.1:9042"],"workload":{"name":"timeseries","keyspace":"headroom","partitions":1000000,"partition_generator":"random","read_ratio":0.2,"delete_ratio":0.0,"populate":0,"replication":"{'class': 'SimpleStrategy', 'replication_factor': 1}","compaction":null,"ttl_s":null,"consistency":"LOCAL_ONE","drop":false,"seed":1},"mode":{"loop":"open","rate_per_s":1000.0,"arrivals":"fixed","max_in_flight":4096},"warmup_s":5.0,"duration_s":20.0,"ops":null,"interval_s":1.0,"threads":100000,"request_timeout_s":10.0,"connections":1,"send_resolution_s":0.0005,"sla":{"terms":"p99.9<100ms, max<50ms, read:p99<5ms, window=5s","window_s":5.0},"command_line":["./target/debug/headroom","run","timeseries","-r","0.2","--rate","1000","--duration","20s","--warmup","5s","--sla","p99.9<100ms, max<50ms,read:p99<5ms","--window","5s","--out","/tmp/r1"]}"#;

const WORKLOAD_BAD_KEYSPACE: &str = "keyspace: bad-ks\nschema: []\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k) VALUES (?)\n    args: [uniform(10)]\n";
const WORKLOAD_LONG_KEYSPACE: &str = "keyspace: kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\nschema: []\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k) VALUES (?)\n    args: [uniform(10)]\n";

/// A self-signed certificate (PEM), where a case needs one that reads.
const CERTIFICATE: &str = "-----BEGIN CERTIFICATE-----\n\
MIIBfjCCASWgAwIBAgIUTHFuH5vdWj2fkrq177T1Z/ZPFuQwCgYIKoZIzj0EAwIw\n\
FDESMBAGA1UEAwwJYmFkLWlucHV0MCAXDTI2MTEyNjEzMzI0NloYDzIxMjYxMTAy\n\
MTMzMjQ2WjAUMRIwEAYDVQQDDAliYWQtaW5wdXQwWTATBgcqhkjOPQIBBggqhkjO\n\
PQMBBwNCAATkxmYeEHKYjkMwfySxYOE+fkYoaH0yiOdpbAbyZb3LM7t+7GE97HiC\n\
1x5I8W2BEpwP9SaJJWAm5SoOlhs0ZG3qo1MwUTAdBgNVHQ4EFgQUtjyHFO/zZ2xF\n\
3DCQK3VnegrElu8wHwYDVR0jBBgwFoAUtjyHFO/zZ2xF3DCQK3VnegrElu8wDwYD\n\
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiBG4ZUt3fFjNVmIjV9t+2Ay\n\
YjR4fW9vwGOga5YJP832GQIgZRGZqLmAHIwWVDl1kVaRySOtFrSOETmlAFwn/ouA\n\
78s=\n\
-----END CERTIFICATE-----\n\
";

/// An SLA too long to echo whole: the message shows the part around the mistake.
const LONG_SLA: &str = "p50<1s, p51<1s, p52<1s, p53<1s, p54<1s, p55<1s, p56<1s, p57<1s, p58<1s, p59<1s, p60<1s, p61<1s, p62<1s, p63<1s, p64<1s, p65<1s, p66<1s, p67<1s, p68<1s, p69<1s, p70<1s, p71<1s, p72<1s, p73<1s, p74<1s, p75<1s, p76<1s, p77<1s, p78<1s, p79<1s, p80<1s, p81<1s, p82<1s, p83<1s, p84<1s, p85<1s, p86<1s, p87<1s, p88<1s, p89<1s, p90<1s, p91<1s, p92<1s, p93<1s, p94<1s, p95<1s, p96<1s, p97<1s, p98<1s, bad";

/// A value of 3000 characters, as a paste gone wrong gives: quoted cut short.
const LONG_VALUE: &str = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

/// A local cluster's record, as `cluster start` writes it, of a cluster nobody runs now.
const A_CLUSTER: &str = r#"{"config": {"nodes": 1, "cassandra_version": "5.0.9", "heap": 1073741824, "gc": "g1", "jvm_opts": [], "first_address": "127.0.0.1", "yaml": [], "auth": false, "tls": "off"}, "pids": [null], "java": "17.0.15 (/usr/bin/java)"}"#;

/// A trial's line of capacity.jsonl, of the run in trials/rate-1000-repeat-1.
const A_TRIAL: &str = r#"{"kind":"trial","rate_per_s":1000.0,"repeat":1,"achieved_per_s":1000.0,"requests":10000,"errors":0,"sla_pass":true,"terms":[],"pass":true,"reason":null,"dir":"trials/rate-1000-repeat-1","wall_s":12.0}
"#;

/// The same trial twice: it would count twice in the capacity table.
const A_TRIAL_TWICE: &str = concat!(
    r#"{"kind":"trial","rate_per_s":1000.0,"repeat":1,"achieved_per_s":1000.0,"requests":10000,"errors":0,"sla_pass":true,"terms":[],"pass":true,"reason":null,"dir":"trials/rate-1000-repeat-1","wall_s":12.0}"#,
    "\n",
    r#"{"kind":"trial","rate_per_s":1000.0,"repeat":1,"achieved_per_s":1000.0,"requests":10000,"errors":0,"sla_pass":true,"terms":[],"pass":true,"reason":null,"dir":"trials/rate-1000-repeat-1","wall_s":12.0}"#,
    "\n"
);

/// A packed block announcing more than any log block may hold.
const HUGE_BLOCK: &str =
    "=== headroom run directory begin worker=1 exit=0 bytes=999999999999 ===\nAAAA\n";

/// A collection no table could hold, and values too large for one write.
const HUGE_LIST: &str = "schema: []\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k, l) VALUES (?, ?)\n    args: [uniform(10), \"list(1000000000, text(5))\"]\n";
const NEGATIVE_LIST: &str = "schema: []\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k, l) VALUES (?, ?)\n    args: [uniform(10), \"list(-3, uniform(10))\"]\n";
const NEGATIVE_RANGE_LIST: &str = "schema: []\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k, l) VALUES (?, ?)\n    args: [uniform(10), \"list(uniform(-5..-1), text(4))\"]\n";
const LARGE_VALUES: &str = "schema: []\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k, l) VALUES (?, ?)\n    args: [uniform(10), \"list(60000, text(1000))\"]\n";
const HUGE_SET_COUNT: &str = "schema: []\ngenerators:\n  n: uniform(1..10000000)\noperations:\n  write:\n    cql: INSERT INTO {keyspace}.t (k, s) VALUES (?, ?)\n    args: [uniform(10), \"set(n, uuid)\"]\n";
/// headroom's keys without its operations: not a cassandra-stress profile.
const NO_OPERATIONS: &str = "schema:\n  - CREATE TABLE {keyspace}.t (k int PRIMARY KEY)\ngenerators:\n  key: uniform(100)\n";

/// Every case: a flag, a value, a file, a directory that cannot work.
const CASES: &[Case] = &[
    // The workload and the load's flags.
    case(
        &["run", "nosuchworkload"],
        &["unknown workload 'nosuchworkload'"],
    ),
    case(
        &["run", "keyvalue", "--rate", "lots"],
        &["--rate", "write operations per second like 2000, 20k or 1.5M"],
    ),
    case(
        &["run", "keyvalue", "--rate", "inf"],
        &["--rate", "the rate must be a number of requests per second, like 2000, 20k or 1.5M"],
    ),
    case(
        &["run", "keyvalue", "--rate", "NaN"],
        &["--rate", "the rate must be a number of requests per second, like 2000, 20k or 1.5M"],
    ),
    case(
        &["run", "keyvalue", "--rate", "0"],
        &["--rate", "the rate must be above zero"],
    ),
    case(
        &["run", "keyvalue", "--rate=-5"],
        &["--rate", "the rate must be above zero"],
    ),
    case(
        &["run", "keyvalue", "--duration", "1 fortnight"],
        &["--duration", "unknown time unit \"fortnight\"", "write it like 30s"],
    ),
    case(
        &["run", "keyvalue", "--duration", "0s"],
        &["--duration", "out of range: give 10ms to 30d"],
    ),
    case(
        &["run", "keyvalue", "--ops", "0"],
        &["--ops 0 measures nothing"],
    ),
    case(
        &["run", "keyvalue", "--duration", "5s", "--ops", "100"],
        &["--duration or --ops N, not both"],
    ),
    case(
        &["run", "keyvalue", "--connections", "0"],
        &["--connections", "out of range: give 1 to 1k"],
    ),
    case(&["run", "keyvalue", "--timeout", "0s"], &["--timeout", "out of range: give 1ms to 1h"]),
    // Credentials: both or neither, one password, a file that holds one.
    case(
        &["run", "keyvalue", "--username", "app"],
        &["--username app needs a password", "--password-file"],
    ),
    with(
        &["run", "keyvalue", "--password-file", "{dir}/pw"],
        &[("pw", Text("s3cret\n"))],
        &["without --username"],
    ),
    case(
        &["run", "keyvalue", "--username", "app", "--password-file", "{dir}/none"],
        &["cannot read --password-file"],
    ),
    with(
        &["capacity", "keyvalue", "--username", "app", "--password-file", "{dir}/pw"],
        &[("pw", Text("\nsecond line\n"))],
        &["its first line is empty"],
    ),
    with(
        &[
            "sweep", "keyvalue", "--username", "app", "--password", "x", "--password-file",
            "{dir}/pw",
        ],
        &[("pw", Text("s3cret\n"))],
        &["--password-file and --password both give a password"],
    ),
    // TLS: a certificate with its key, files that hold what the flag says, flags that fit.
    with(
        &["run", "keyvalue", "--tls-cert", "{dir}/client.pem"],
        &[("client.pem", Text(CERTIFICATE))],
        &["--tls-cert needs --tls-key", "give --tls-cert FILE --tls-key FILE"],
    ),
    with(
        &["sweep", "keyvalue", "--tls-key", "{dir}/key.pem"],
        &[("key.pem", Text("-----BEGIN PRIVATE KEY-----\n"))],
        &["--tls-key needs --tls-cert"],
    ),
    case(
        &["run", "keyvalue", "--tls-ca", "{dir}/none.pem"],
        &["cannot read --tls-ca", "none.pem"],
    ),
    with(
        &["capacity", "keyvalue", "--tls-ca", "{dir}/ca.pem"],
        &[("ca.pem", Text("not a certificate\n"))],
        &["--tls-ca", "holds no certificate", "BEGIN CERTIFICATE"],
    ),
    with(
        &[
            "run", "keyvalue", "--tls-ca", "{dir}/ca.pem", "--tls-cert", "{dir}/ca.pem",
            "--tls-key", "{dir}/ca.pem",
        ],
        &[("ca.pem", Text(CERTIFICATE))],
        &["--tls-key", "holds no private key"],
    ),
    with(
        &["run", "keyvalue", "--tls-no-verify", "--tls-ca", "{dir}/ca.pem"],
        &[("ca.pem", Text(CERTIFICATE))],
        &["--tls-no-verify checks no certificate, so --tls-ca would do nothing"],
    ),
    case(
        &["run", "keyvalue", "--tls-server-name", "not a name"],
        &["--tls-server-name 'not a name' is not a DNS name or an IP address"],
    ),
    case(
        &["cluster", "start", "--tls", "--cassandra-version", "4.0.17"],
        &["--tls needs Cassandra 4.1 or later", "--cassandra-version"],
    ),
    case(
        &["run", "keyvalue", "--threads", "0"],
        &["--threads", "out of range: give 1 to 256"],
    ),
    case(
        &["run", "keyvalue", "--threads", "100000"],
        &["--threads", "out of range: give 1 to 256"],
    ),
    case(
        &["run", "keyvalue", "--concurrency", "0"],
        &["--concurrency", "out of range: give 1 to 1M"],
    ),
    case(
        &["run", "keyvalue", "--rate", "10", "--max-in-flight", "0"],
        &["--max-in-flight", "out of range: give 1 to 10M"],
    ),
    case(
        &["run", "keyvalue", "--interval", "1ms"],
        &["--interval", "out of range: give 10ms to 1h"],
    ),
    case(
        &["run", "keyvalue", "-r", "1.5"],
        &["--read-ratio", "out of range: give 0 to 1"],
    ),
    case(
        &["run", "keyvalue", "-r", "0.6", "--delete-ratio", "0.6"],
        &["is more than 1"],
    ),
    case(
        &["run", "keyvalue", "--partitions", "0"],
        &["--partitions", "out of range: give 1 to 1000G"],
    ),
    case(
        &["run", "keyvalue", "--consistency", "SOMETIMES"],
        &["--consistency SOMETIMES is not a consistency level"],
    ),
    case(
        &["run", "keyvalue", "--keyspace", "my-ks"],
        &["--keyspace 'my-ks' is not a CQL keyspace name"],
    ),
    case(
        &["run", "keyvalue", "--replication", "simple:0"],
        &["--replication 'simple:0'", "stores the data on no node"],
    ),
    case(
        &["run", "keyvalue", "--replication", "nts:dc1=0"],
        &["stores the data on no node"],
    ),
    case(
        &[
            "run",
            "keyvalue",
            "--replication",
            "{'class': 'SimpleStrategy', 'replication_factor': 3",
        ],
        &["--replication", "not closed"],
    ),
    case(
        &[
            "run",
            "keyvalue",
            "--replication",
            "{'class': 'SimpleStrategy'}",
        ],
        &["needs a 'replication_factor'"],
    ),
    case(
        &["run", "keyvalue", "--replication", "three"],
        &["--replication 'three'", "simple:RF"],
    ),
    case(
        &["run", "keyvalue", "--compaction", "fast"],
        &["--compaction 'fast'", "stcs, lcs, twcs, ucs"],
    ),
    case(
        &["run", "keyvalue", "--compaction", "{'class': LCS}"],
        &["--compaction", "'LCS' at 10 is not a value"],
    ),
    case(
        &[
            "run",
            "keyvalue",
            "--compaction",
            "{'class': 'LCS'} AND gc_grace_seconds = 0",
        ],
        &["--compaction", "after the map's closing"],
    ),
    case(
        &["run", "keyvalue", "--server-stats-every", "100ms"],
        &["--server-stats-every", "out of range: give 1s to 1h"],
    ),
    case(
        &[
            "run",
            "keyvalue",
            "--duration",
            "1m",
            "--during",
            "compact@10m",
        ],
        &["compact@10m"],
    ),
    case(
        &["run", "keyvalue", "--during", "explode@1m"],
        &["'explode' is not an operation"],
    ),
    case(
        &["run", "keyvalue", "--during", "kill@20s"],
        &["kill acts on one node: name it, as in kill:2@20s"],
    ),
    case(
        &["run", "keyvalue", "--during", "restart:zero@20s"],
        &["'zero' is not a node number"],
    ),
    case(
        &["run", "keyvalue", "--local-dc", "dc 1"],
        &["--local-dc 'dc 1' is not a data centre name"],
    ),
    case(&["cluster", "start", "--dcs", "0"], &["--dcs", "out of range: give 1 to 254"]),
    case(
        &["run", "ycsb", "--workload", "a", "--sender", "nativ"],
        &["invalid value 'nativ' for '--sender <SENDER>'"],
    ),
    case(
        &["run", "keyvalue", "--ops", "insert=1"],
        &["--ops with weights is for cassandra-stress profiles"],
    ),
    // SLA strings.
    case(
        &["run", "keyvalue", "--sla", "p99<10ms, p99.9<1O0ms"],
        &["SLA 'p99<10ms, p99.9<1O0ms' is not valid"],
    ),
    case(&["run", "keyvalue", "--sla", "scan:p99<10ms"], &["scan"]),
    case(
        &["run", "keyvalue", "--sla", "p100<1s"],
        &["'p100' is the largest response time: write max"],
    ),
    case(
        &["run", "keyvalue", "--sla", "p99>1s"],
        &["a latency term is an upper bound: write p99<10ms or p99<=10ms", "  p99>1s\n     ^"],
    ),
    // Recall terms: lower bounds on a share between 0 and 1.
    case(&["run", "keyvalue", "--sla", "recall@10<0.9"], &["a recall term is a lower bound: write recall@10>=0.9", "  recall@10<0.9\n           ^"]),
    case(&["run", "keyvalue", "--sla", "recall@10>=1.5"], &["a recall threshold lies between 0 and 1: 1.5 is above 1", "  recall@10>=1.5\n             ^"]),
    case(&["run", "keyvalue", "--sla", "p1(recall)>=70ms"], &["a recall threshold is a share of the nearest neighbours, not a time", "  p1(recall)>=70ms\n                ^"]),
    case(&["run", "keyvalue", "--sla", "recall@0>=0.9"], &["k is at least 1", "  recall@0>=0.9\n         ^"]),
    case(
        &["run", "keyvalue", "--sla", "errors<200%"],
        &["at most 100%"],
    ),
    case(
        &["run", "keyvalue", "--sla", "p99<1h"],
        &["unknown unit 'h'"],
    ),
    case(&["run", "keyvalue", "--sla", ""], &["the SLA is empty"]),
    case(
        &["run", "keyvalue", "--sla", "p99<10ms, p99<20ms"],
        &["'p99' is given twice"],
    ),
    case(
        &["run", "keyvalue", "--sla", "max<"],
        &["missing threshold after '<'"],
    ),
    // A term's own window, after '@': the caret under what is wrong.
    case(&["run", "keyvalue", "--sla", "p99<10ms@"], &["missing a term's window", "  p99<10ms@\n           ^"]),
    case(&["run", "keyvalue", "--sla", "p99<10ms@soon"], &["the window 'soon' is not a duration", "  p99<10ms@soon\n           ^"]),
    case(&["run", "keyvalue", "--sla", "p99<10ms@0s"], &["the window must be longer than zero", "\n           ^"]),
    case(&["run", "keyvalue", "--sla", "p99<10ms@1m@2m"], &["write its '@' once", "\n             ^"]),
    case(&["run", "keyvalue", "--sla", "p99<10ms@1m, p99<20ms@60s"], &["'p99' is given twice over 1m windows", "\n               ^"]),
    case(&["run", "keyvalue", "--sla", "read:window@1m"], &["give one term a window of its own with @"]),
    case(&["run", "keyvalue", "--sla", "p99<10ms@1500us"], &["whole number of milliseconds"]),
    case(&["run", "keyvalue", "--rate", "100", "--duration", "30s", "--sla", "p99<1s, p99.9<1s@1m"], &["--duration 30s is shorter than one window of p99.9<1s@1m (1m)"]),
    case(&["run", "keyvalue", "--rate", "100", "--duration", "90s", "--sla", "p99<1s, p99.9<1s@1m"], &["--duration 1m 30s is not a whole number of the windows of p99.9<1s@1m (1m)", "1m or 2m"]),
    case(&["run", "keyvalue", "--rate", "100", "--duration", "60s", "--interval", "7s", "--sla", "p99<1s@14s, p99.9<1s@1m"], &["the window of p99.9<1s@1m (1m) must be a whole multiple of the --interval (7s)", "after the term's @"]),
    case(&["capacity", "keyvalue", "--duration", "30s", "--sla", "p99<1s, p99.99<1s@5m"], &["shorter than one window of p99.99<1s@5m (5m)"]),
    // --validate: where it cannot check, one line that says why.
    case(&["run", "documents", "--rate", "100", "--validate"], &["--validate checks keyvalue, timeseries and YCSB", "'documents' cannot be checked yet"]),
    case(&["run", "ycsb", "--workload", "a", "-p", "fieldlength=10", "--rate", "100", "--validate"], &["--validate with YCSB values as short as 10 characters", "at least 29"]),
    case(&["run", "ycsb", "--workload", "a", "--ttl", "1h", "--rate", "100", "--validate"], &["--validate with --ttl"]),
    case(&["run", "timeseries", "--rate", "100", "--delete-ratio", "0.2", "--validate"], &["--validate with --delete-ratio 0.2"]),
    case(&["run", "keyvalue", "--validate"], &["--validate needs an open loop (--rate)"]),
    case(&["run", "keyvalue", "--concurrency", "8", "--validate"], &["--validate needs an open loop (--rate)"]),
    case(&["run", "keyvalue", "--rate", "100", "--ops", "0", "--validate"], &["--ops 0 measures nothing"]),
    case(&["run", "keyvalue", "--rate", "100", "--delete-ratio", "0.1", "--validate"], &["--validate with --delete-ratio 0.1", "give --delete-ratio 0"]),
    case(&["run", "keyvalue", "--rate", "100", "--ttl", "1h", "--validate"], &["--validate with --ttl"]),
    case(&["run", "keyvalue", "--rate", "100", "--phase", "load", "--validate"], &["--validate with --phase load"]),
    case(&["capacity", "keyvalue", "--validate"], &["--validate with --fresh none", "give --fresh truncate"]),
    case(&["capacity", "keyvalue", "--fresh", "truncate", "--workers", "2", "--validate"], &["--validate with --workers"]),
    case(&["capacity", "keyvalue", "--fresh", "truncate", "--degraded", "1", "--validate"], &["--validate with --degraded"]),
    case(&["capacity", "documents", "--fresh", "truncate", "--validate"], &["'documents' cannot be checked yet"]),
    case(
        &["run", "keyvalue", "--sla", "p99<1s", "--window", "0s"],
        &["--window", "out of range: give 10ms to 24h"],
    ),
    case(
        &[
            "run",
            "keyvalue",
            "--sla",
            "p99<1s",
            "--window",
            "3s",
            "--interval",
            "2s",
        ],
        &["whole multiple of the --interval"],
    ),
    case(&["run", "keyvalue", "--sla", LONG_SLA], &["SLA of 395 characters is not valid", "unknown metric 'bad'"]),
    case(&["run", "keyvalue", "--rate", "1e-300"], &["at least 0.001 per second"]),
    case(&["run", "keyvalue", "--duration", LONG_VALUE], &["invalid value 'xxx", " characters)"]),
    case(&["run", "keyvalue", "--keyspace", LONG_VALUE], &["--keyspace 'xxx", "(3000 characters)"]),
    // Contact points.
    case(
        &["run", "keyvalue", "--hosts", "::1"],
        &["--hosts '::1'", "in brackets, as in [::1]"],
    ),
    case(
        &["run", "keyvalue", "--hosts", "a b"],
        &["--hosts 'a b'", "a name or an address"],
    ),
    case(
        &["run", "keyvalue", "--hosts", "db:70000"],
        &["--hosts 'db:70000'", "from 1 to 65535"],
    ),
    case(
        &["run", "keyvalue", "--hosts", "127.0.0.1,,127.0.0.2"],
        &["an entry is empty"],
    ),
    case(
        &["run", "keyvalue", "--hosts", "[::1"],
        &["']' after the IPv6 address is missing"],
    ),
    // YCSB property files.
    case(
        &["run", "ycsb", "-P", "{dir}/missing"],
        &["cannot read -P", "missing"],
    ),
    case(
        &["run", "ycsb", "-P", "/dev/zero"],
        &["-P /dev/zero is not a regular file"],
    ),
    with(
        &["run", "ycsb", "-P", "{dir}/empty"],
        &[("empty", Text("# nothing\n\n"))],
        &["no property in it"],
    ),
    with(
        &["run", "ycsb", "-P", "{dir}/big"],
        &[("big", Large(11 << 20))],
        &["more than the 10 MB"],
    ),
    with(
        &["run", "ycsb", "-P", "{dir}/w"],
        &[("w", Text(YCSB_BAD_NUMBER))],
        &["readproportion=abc: not a number"],
    ),
    with(
        &["run", "ycsb", "-P", "{dir}/w"],
        &[("w", Text("requestdistribution=pareto\n"))],
        &["requestdistribution=pareto"],
    ),
    case(
        &["run", "ycsb", "--workload", "z"],
        &["--workload z: YCSB's core workloads are a, b, c, d, e and f"],
    ),
    case(
        &["run", "ycsb", "--workload", "a", "-p", "100"],
        &["-p 100", "KEY=VALUE"],
    ),
    case(&["run", "ycsb"], &["ycsb needs a workload"]),
    // cassandra-stress profiles.
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Text("- a\n- b\n"))],
        &["expected a cassandra-stress profile"],
    ),
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Text("keyspace: [1]\n"))],
        &["keyspace: invalid type"],
    ),
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Text(PROFILE_BAD_TOKEN_RANGES))],
        &["line 4: token_range_queries: invalid type: string \"x\", expected a YAML mapping"],
    ),
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Text(PROFILE_SEED))],
        &["line 4: seed: the first cassandra-stress releases (2.1) read this key and ignored it"],
    ),
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Text(PROFILE_BAD_NAME))],
        &["keyspace 'bad-ks' is not a plain CQL name"],
    ),
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Text(PROFILE_BAD_DISTRIBUTION))],
        &["gaussian(5..)"],
    ),
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Text(PROFILE_OTHER_TABLE))],
        &["p.yaml: line 2: table: says 'other' but table_definition creates 't'; make them the same"],
    ),
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Text(PROFILE_QUOTED_TABLE))],
        &["p.yaml: line 2: table: says 'posts' but table_definition creates '\"Posts\"' (a double-quoted name keeps its case"],
    ),
    with(
        &["capacity", "{dir}/p.yaml"],
        &[("p.yaml", Text(PROFILE_OTHER_KEYSPACE))],
        &["p.yaml: line 1: keyspace: says 'ks' but table_definition creates its table in 'other_ks'; make them the same"],
    ),
    with(
        &["run", "{dir}/blogposts.yaml"],
        &[("blogposts.yaml", Fixture("profiles/blogposts.yaml"))],
        &["give their mix with --ops"],
    ),
    with(
        &["run", "{dir}/blogposts.yaml", "--ops", "insert=1,nosuch=2"],
        &[("blogposts.yaml", Fixture("profiles/blogposts.yaml"))],
        &["nosuch"],
    ),
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Large(11 << 20))],
        &["the profile", "more than the 10 MB"],
    ),
    with(
        &["run", "{dir}/p.yaml"],
        &[("p.yaml", Bytes(b"keyspace: \xff\xfe\n"))],
        &["is not text (UTF-8)"],
    ),
    // headroom's own workload files.
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(OPS_TWICE))],
        &["operation 'write' is defined twice"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(POPULATE_LOTS))],
        &["populate: count 'lots' is not valid"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(OPERATIONS_NUMBER))],
        &["expected a map of operation names"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(OPERATIONS_EMPTY))],
        &["lists no operation"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(UNKNOWN_KEY))],
        &["unknown field `surprise`"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(BAD_GENERATOR))],
        &["generator key"],
    ),
    with(
        &["run", "{dir}/kv.yaml", "--ops", "nosuch=1"],
        &[("kv.yaml", Fixture("../../workloads/keyvalue.yaml"))],
        &["--ops names 'nosuch'"],
    ),
    case(&["run", "{dir}/missing.yaml"], &["missing.yaml"]),
    // A query's vectors from a file of 4-dimensional vectors, for a vector of 8.
    with(
        &["run", "{dir}/w.yaml"],
        &[
            ("w.yaml", Text(VECTOR_FILE_OF_ANOTHER_DIMENSION)),
            ("base.fvecs", Fixture("vectors/base.fvecs")),
        ],
        &["vector_file('base.fvecs')): the file holds vectors of dimension 4, but v is a vector of 8"],
    ),
    // Found by fuzzing (fuzz/regressions/): contact points no driver can connect to, counts
    // and offsets beyond their types, proportions and weights that do not add up, serde's
    // type names (now words).
    // A fleet's workers and their merge.
    case(&["run", "keyvalue", "--rate", "10", "--worker", "3/2", "--start-at", "+5s"], &["K must be from 1 to N (2)"]),
    case(&["run", "keyvalue", "--rate", "10", "--worker", "0/2", "--start-at", "+5s"], &["K must be from 1 to N"]),
    case(&["run", "keyvalue", "--rate", "10", "--worker", "1/2"], &["--start-at"]),
    case(&["run", "keyvalue", "--rate", "10", "--worker", "two", "--start-at", "+5s"], &["not K/N"]),
    case(&["run", "keyvalue", "--rate", "10", "--worker", "1/2", "--start-at", "noon"], &["not an RFC 3339 time"]),
    case(&["run", "keyvalue", "--rate", "10", "--worker", "1/2", "--start-at", "+5s", "--during", "flush@1s"], &["--worker with --during"]),
    with(&["run", "--config", "{dir}/config.json"], &[("config.json", Text("{\"hosts\": 1}"))], &["--config", "not a run's config.json"]),
    with(&["run", "--config", "{dir}/config.json", "--rate", "5"], &[("config.json", Text("{}"))], &["--rate cannot come with it"]),
    case(&["run", "--config", "{dir}/missing"], &["missing"]),
    with(&["merge", "{dir}/w", "--out", "{dir}/m"], &[("w/notes.txt", Text("x"))], &["not a run directory (no config.json)"]),
    case(&["capacity", "keyvalue", "--workers", "0"], &["--workers", "out of range: give 1 to 1024"]),
    case(&["capacity", "keyvalue", "--launcher", "local"], &["--workers"]),
    case(&["capacity", "keyvalue", "--workers", "2", "--launcher", "kubernetes"], &["--image"]),
    case(&["capacity", "keyvalue", "--workers", "2", "--launcher", "kubernetes", "--image", "r/h:1"], &["loopback, which a pod cannot reach"]),
    case(&["run", "keyvalue", "--hosts", "a:b:9042"], &["--hosts 'a:b:9042'"]),
    case(&["run", "keyvalue", "--hosts", "db:0"], &["from 1 to 65535"]),
    case(&["run", "keyvalue", "--hosts", "db:+9042"], &["from 1 to 65535"]),
    case(&["run", "keyvalue", "--hosts", "[fe80::1%]"], &["the interface after '%'"]),
    case(&["run", "keyvalue", "--hosts", "[::%\n]"], &["the interface after '%'"]),
    case(&["run", "keyvalue", "--populate", "18446744073709551616"], &["--populate", "it is too large (at most 18446744073709551615)"]),
    case(&["run", "keyvalue", "--during", "compact@18446744073709551615s"], &["more than 100 years"]),
    with(&["run", "ycsb", "-P", "{dir}/w"], &[("w", Text("recordcount=10\nreadproportion=1e308\nupdateproportion=1e308\n"))], &["too large to add up"]),
    with(&["run", "{dir}/p.yaml"], &[("p.yaml", Text("r"))], &["expected a cassandra-stress profile"]),
    with(&["run", "{dir}/w.yaml"], &[("w.yaml", Text("operations:\n  a:\n    cql: \"?\"\n    args: [\"timestamp(-300000000000y)\"]\n"))], &["the offset is too large for a timestamp"]),
    with(&["run", "{dir}/w.yaml"], &[("w.yaml", Text("operations:\n  a:\n    cql: x\n    weight: 1e308\n  b:\n    cql: y\n    weight: 1e308\n"))], &["too large to add up"]),
    // Output directories.
    with(
        &["run", "keyvalue", "--out", "{dir}/old"],
        &[
            ("old/summary.json", Text("{}")),
            ("old/pauses.json", Text("{}")),
        ],
        &["already holds the files of an earlier run", "--force"],
    ),
    with(
        &["run", "keyvalue", "--out", "{dir}/mine", "--force"],
        &[("mine/notes.txt", Text("mine"))],
        &["headroom did not write"],
    ),
    with(
        &["run", "keyvalue", "--out", "{dir}/file"],
        &[("file", Text("x"))],
        &["is a file"],
    ),
    with(
        &["capacity", "keyvalue", "--out", "{dir}/search"],
        &[
            ("search/search.json", Text("{}")),
            ("search/capacity.jsonl", Text("")),
        ],
        &["already holds", "headroom capacity --resume"],
    ),
    // Capacity searches and sweeps.
    case(&["capacity", "keyvalue", "--rates", "999999990:1000000000:0.5"], &["the step is too small"]),
    case(
        &["capacity", "keyvalue", "--rates", "5k:1k:1k"],
        &["--rates", "the stop is below the start"],
    ),
    case(
        &["capacity", "keyvalue", "--repeats", "0"],
        &["--repeats", "out of range: give 1 to 100"],
    ),
    case(
        &["capacity", "keyvalue", "--resolution", "0%"],
        &["--resolution", "out of range: give 0.1% to 50%"],
    ),
    case(
        &["capacity", "keyvalue", "--goal", "interval", "--exceed-ratio", "0%"],
        &["--exceed-ratio", "out of range: give 0.1% to 50%"],
    ),
    case(
        &["capacity", "keyvalue", "--goal", "interval", "--confidence", "100%"],
        &["--confidence", "out of range: give 50% to 99.9%"],
    ),
    case(
        &["capacity", "keyvalue", "--goal", "interval", "--rates", "1k,2k"],
        &["--goal interval chooses its own rates"],
    ),
    case(
        &["capacity", "keyvalue", "--goal", "interval", "--repeats", "3"],
        &["--goal interval repeats a rate where a bound needs it"],
    ),
    case(
        &["capacity", "keyvalue", "--repeats", "3", "--exceed-ratio", "5%"],
        &[
            "--exceed-ratio applies to --goal interval",
            "(the strict goal, for --repeats)",
        ],
    ),
    case(
        &["capacity", "keyvalue", "--rates", "1k,2k", "--confidence", "80%"],
        &["--confidence applies to --goal interval", "for a list or range of --rates"],
    ),
    case(
        &["capacity", "keyvalue", "--goal", "strict", "--exceed-ratio", "5%"],
        &["--exceed-ratio applies to --goal interval; the strict goal judges every window"],
    ),
    case(
        &["capacity", "keyvalue", "--goal", "loose"],
        &["invalid value 'loose' for '--goal <GOAL>'"],
    ),
    case(
        &["capacity", "keyvalue", "--duration", "5s"],
        &["shorter than one SLA window"],
    ),
    case(
        &["capacity", "keyvalue", "--probe-duration", "0s"],
        &["--probe-duration", "out of range: give 1s to 1h"],
    ),
    case(
        &[
            "capacity", "keyvalue", "--hosts", NOWHERE, "--fresh", "restart",
        ],
        &["--fresh restart restarts a local cluster"],
    ),
    case(
        &["capacity", "keyvalue", "--matrix", "gc=nope"],
        &["--matrix gc=nope"],
    ),
    case(
        &["capacity", "keyvalue", "--sla", "p99.9<100"],
        &["SLA 'p99.9<100' is not valid"],
    ),
    case(
        &["capacity", "--resume", "{dir}/none"],
        &["--resume", "holds no capacity search to resume"],
    ),
    with(
        &["capacity", "--resume", "{dir}/s"],
        &[("s/search.json", Text("{corrupt"))],
        &["--resume", "search.json"],
    ),
    with(
        &["capacity", "--resume", "{dir}/s"],
        &[
            ("s/search.json", Text("{\"rates\": 5}")),
            ("s/capacity.jsonl", Text("")),
        ],
        &["--resume", "settings", "cannot be read"],
    ),
    case(
        &["capacity", "--resume", "{dir}/s", "--hosts", "10.0.0.1"],
        &["--resume", "cannot be used with"],
    ),
    case(
        &["sweep", "keyvalue", "--concurrency", "0"],
        &["--concurrency", "at least 1"],
    ),
    case(
        &[
            "sweep",
            "keyvalue",
            "--step-min",
            "60s",
            "--step-max",
            "30s",
        ],
        &["--step-min 1m is longer than --step-max 30s"],
    ),
    // Reports and comparisons of directories.
    case(
        &["report", "{dir}/nowhere"],
        &["nowhere is not a directory"],
    ),
    with(
        &["report", "{dir}/empty"],
        &[("empty/.keep", Text(""))],
        &["is neither a run directory"],
    ),
    with(
        &["report", "{dir}/junk"],
        &[
            ("junk/summary.json", Bytes(b"\x00\xff\xfe")),
            ("junk/config.json", Text("{not json")),
            ("junk/intervals.csv", Bytes(b"\xfe\xff")),
            ("junk/histograms.hlog", Text("#[x]\nnonsense\n")),
        ],
        &[
            "holds nothing headroom can read as a run",
            "config.json could not be read",
        ],
    ),
    with(
        &["report", "{dir}/run", "--svg", "{dir}/a-file"],
        &[
            ("run/summary.json", Fixture("report/run/summary.json")),
            ("run/config.json", Fixture("report/run/config.json")),
            ("run/intervals.csv", Fixture("report/run/intervals.csv")),
            ("run/histograms.hlog", Fixture("report/run/histograms.hlog")),
            ("a-file", Text("x")),
        ],
        &["--svg", "is a file"],
    ),
    with(
        &["report", "{dir}/run", "-o", "{dir}/run"],
        &[
            ("run/summary.json", Fixture("report/run/summary.json")),
            ("run/config.json", Fixture("report/run/config.json")),
        ],
        &["is a directory"],
    ),
    with(
        &["compare", "{dir}/run"],
        &[
            ("run/summary.json", Fixture("report/run/summary.json")),
            ("run/config.json", Fixture("report/run/config.json")),
        ],
        &["compare takes two or more"],
    ),
    with(
        &["compare", "{dir}/run", "{dir}/nowhere"],
        &[("run/config.json", Fixture("report/run/config.json"))],
        &["nowhere is not a directory"],
    ),
    // Never delete or overwrite what headroom did not write, never an input.
    with(
        &["quickstart", "--cluster-dir", "{dir}/c"],
        &[("c/cluster.json", Text(A_CLUSTER)), ("c/node1/data/keep.db", Text("data"))],
        &["--cluster-dir", "holds a cluster the quickstart did not start", "cluster destroy"],
    ),
    with(
        &["quickstart", "--cluster-dir", "{dir}/c"],
        &[("c/notes.txt", Text("mine"))],
        &["--cluster-dir", "holds other files"],
    ),
    with(
        &["quickstart", "--cluster-dir", "{dir}/c"],
        &[("c", Text("a file"))],
        &["--cluster-dir", "is not a directory"],
    ),
    with(
        &["report", "{dir}/run", "-o", "{dir}/run/config.json"],
        &[
            ("run/summary.json", Fixture("report/run/summary.json")),
            ("run/config.json", Fixture("report/run/config.json")),
        ],
        &["-o", "config.json exists and is not a report headroom wrote"],
    ),
    with(
        &["report", "{dir}/run", "-o", "{dir}/run/summary.json"],
        &[
            ("run/summary.json", Fixture("report/run/summary.json")),
            ("run/config.json", Fixture("report/run/config.json")),
        ],
        &["summary.json exists and is not a report headroom wrote"],
    ),
    with(
        &["report", "{dir}/run", "-o", "{dir}/notes.html"],
        &[
            ("run/summary.json", Fixture("report/run/summary.json")),
            ("run/config.json", Fixture("report/run/config.json")),
            ("notes.html", Text("<html>my notes</html>")),
        ],
        &["notes.html exists and is not a report headroom wrote"],
    ),
    with(
        &["report", "{dir}/run", "-o", "{dir}/fifo"],
        &[
            ("run/summary.json", Fixture("report/run/summary.json")),
            ("run/config.json", Fixture("report/run/config.json")),
            ("fifo", Fifo),
        ],
        &["exists and is not a report headroom wrote"],
    ),
    with(
        &["merge", "{dir}/a", "{dir}/b", "--out", "{dir}/a", "--force"],
        &[("a/config.json", Text("{}")), ("b/config.json", Text("{}"))],
        &["--out", "/a is the input", "never writes over what it reads"],
    ),
    with(
        &["merge", "{dir}/a", "{dir}/b", "--out", "{dir}"],
        &[("a/config.json", Text("{}")), ("b/config.json", Text("{}"))],
        &["holds the input"],
    ),
    with(
        &["merge", "{dir}/a", "{dir}/b", "--out", "{dir}/b/merged"],
        &[("a/config.json", Text("{}")), ("b/config.json", Text("{}"))],
        &["is inside the input"],
    ),
    with(
        &["compare", "{dir}/a", "{dir}/b", "--out", "{dir}/cmp"],
        &[
            ("a/capacity.json", Fixture("report/capacity/capacity.json")),
            ("a/search.json", Fixture("report/capacity/search.json")),
            ("b/capacity.json", Fixture("report/capacity/capacity.json")),
            ("b/search.json", Fixture("report/capacity/search.json")),
            ("cmp/compare.json", Text("{}")),
            ("cmp/report.html", Text("<html>")),
        ],
        &["--out", "already holds the files of an earlier run", "--force"],
    ),
    with(
        &["compare", "{dir}/a", "{dir}/b", "--out", "{dir}/b"],
        &[
            ("a/capacity.json", Fixture("report/capacity/capacity.json")),
            ("a/search.json", Fixture("report/capacity/search.json")),
            ("b/capacity.json", Fixture("report/capacity/capacity.json")),
            ("b/search.json", Fixture("report/capacity/search.json")),
        ],
        &["/b is the input"],
    ),
    with(
        &["capacity", "--resume", "{dir}/s"],
        &[
            ("s/search.json", Text("{}")),
            ("s/capacity.jsonl", Text(A_TRIAL_TWICE)),
            ("s/trials/rate-1000-repeat-1/summary.json", Fixture("report/run/summary.json")),
        ],
        &["--resume", "lines 1 and 2 record the same run (trials/rate-1000-repeat-1)"],
    ),
    with(
        &["capacity", "--resume", "{dir}/s"],
        &[
            ("s/search.json", Text("{}")),
            ("s/capacity.jsonl", Text("")),
            ("s/trials/rate-1000-repeat-1/summary.json", Fixture("report/run/summary.json")),
        ],
        &["holds finished runs (trials/rate-1000-repeat-1)", "will not run them again"],
    ),
    with(
        &["capacity", "--resume", "{dir}/s"],
        &[
            ("s/search.json", Text("{}")),
            ("s/trials/rate-1000-repeat-1/summary.json", Fixture("report/run/summary.json")),
        ],
        &["capacity.jsonl is missing", "will not run them again"],
    ),
    with(
        &["capacity", "--resume", "{dir}/s"],
        &[
            ("s/search.json", Text("{}")),
            ("s/capacity.jsonl", Text("{\"kind\":\"trial\",\"rate_per_s\":10")),
            ("s/trials/rate-1000-repeat-1/summary.json", Fixture("report/run/summary.json")),
        ],
        &["holds finished runs", "cut short, emptied or edited"],
    ),
    with(
        &["capacity", "--resume", "{dir}/s"],
        &[
            ("s/search.json", Text("{}")),
            ("s/capacity.jsonl", Text(A_TRIAL)),
            ("s/probe/summary.json", Fixture("report/run/summary.json")),
        ],
        &["holds finished runs (probe)"],
    ),
    with(
        &["kube", "unpack", "{dir}/worker.log", "--out", "{dir}/o"],
        &[
            ("worker.log", Fixture("../../fuzz/seeds/kube_unpack/one-worker.log")),
            ("o/worker-2/summary.json", Text("{}")),
        ],
        &["worker-2 holds files already"],
    ),
    with(
        &["kube", "unpack", "{dir}/worker.log", "--out", "{dir}/o"],
        &[
            ("worker.log", Fixture("../../fuzz/seeds/kube_unpack/one-worker.log")),
            ("o", Text("a file")),
        ],
        &["--out", "is a file"],
    ),
    // The worker image: never over a file headroom did not write, never a bad name.
    with(
        &["kube", "image", "--out", "{dir}/notes.txt"],
        &[("notes.txt", Text("notes"))],
        &["is not an image archive headroom wrote"],
    ),
    case(
        &["kube", "image", "--out", "{dir}/x.tar", "--name", "Not A Name"],
        &["is not an image reference"],
    ),
    case(
        &["kube", "image", "--out", "{dir}"],
        &["is a directory: give the file to write"],
    ),
    case(
        &["kube", "image", "--out", "{dir}/missing/img.tar"],
        &["/missing is not a directory; make it first"],
    ),
    with(
        &["cluster", "status", "--dir", "{dir}/notes.txt"],
        &[("notes.txt", Text("notes"))],
        &["--dir", "notes.txt is a file, not a cluster's directory"],
    ),
    with(
        &["cluster", "start", "--dir", "{dir}/notes.txt"],
        &[("notes.txt", Text("notes"))],
        &["notes.txt is a file, not a cluster's directory"],
    ),
    // An output directory where none can be made is refused before anything connects.
    case(
        &["run", "keyvalue", "--rate", "100", "-o", "/proc/headroom-out"],
        &["--out /proc/headroom-out: the directory cannot be made there"],
    ),
    with(
        &["capacity", "keyvalue", "--out", "{dir}/notes.txt/search"],
        &[("notes.txt", Text("notes"))],
        &["notes.txt is a file, not a directory"],
    ),
    with(
        &["sweep", "keyvalue", "--out", "{dir}/notes.txt/deeper/sweep"],
        &[("notes.txt", Text("notes"))],
        &["notes.txt is a file, not a directory"],
    ),
    // Nothing hung, nothing exhausted: inputs that are not files, or too large to make.
    case(
        &["kube", "unpack", "/dev/zero", "--out", "{dir}/o"],
        &["the log /dev/zero is not a regular file"],
    ),
    with(
        &["kube", "unpack", "{dir}/fifo", "--out", "{dir}/o"],
        &[("fifo", Fifo)],
        &["is not a regular file (a FIFO"],
    ),
    with(
        &["kube", "unpack", "{dir}/log", "--out", "{dir}/o"],
        &[("log", Text("Error: no route to host\n"))],
        &["no packed run directory in"],
    ),
    with(
        &["kube", "unpack", "{dir}/log", "--out", "{dir}/o"],
        &[("log", Text(HUGE_BLOCK))],
        &["worker 1's packed run directory is damaged", "more than the 256 MiB"],
    ),
    with(
        &["kube", "unpack", "{dir}/log", "--out", "{dir}/o"],
        &[("log", Bytes(b"=== headroom run directory begin worker=1 exit=0 bytes=8 ===\n@@@@\n"))],
        &["damaged", "the log ends"],
    ),
    with(
        &["run", "keyvalue", "--username", "app", "--password-file", "{dir}/pw"],
        &[("pw", Fifo)],
        &["--password-file", "is not a regular file (a FIFO"],
    ),
    with(
        &["run", "ycsb", "-P", "{dir}/w"],
        &[("w", Fifo)],
        &["-P", "is not a regular file (a FIFO"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Fifo)],
        &["w.yaml is not a regular file (a FIFO"],
    ),
    with(
        &["run", "--config", "{dir}/config.json"],
        &[("config.json", Fifo)],
        &["is not a regular file (a FIFO"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "h:1"],
        &[("config.json", Fifo)],
        &["--config", "is not a regular file (a FIFO"],
    ),
    with(
        &["run", "keyvalue", "--tls-ca", "{dir}/ca.pem"],
        &[("ca.pem", Fifo)],
        &["--tls-ca", "is not a regular file (a FIFO"],
    ),
    with(
        &["run", "{dir}/p.yaml", "--ops", "insert=1"],
        &[("p.yaml", Fifo)],
        &["is not a regular file (a FIFO"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(HUGE_LIST))],
        &["count goes up to 1000000000: at most 65535"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(NEGATIVE_LIST))],
        &["a collection's count can be -3: a count is 0 or more"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(NEGATIVE_RANGE_LIST))],
        &["a collection's count can be -5"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(LARGE_VALUES))],
        &["more than the 16 MB Cassandra takes in one write"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(HUGE_SET_COUNT))],
        &["count goes up to 10000000"],
    ),
    case(
        &["run", "keyvalue", "--rate", "10", "--worker", "1/2", "--start-at", "2099-01-01T00:00:00Z"],
        &["--start-at", "more than a day ahead"],
    ),
    case(
        &["run", "keyvalue", "--rate", "10", "--worker", "1/2", "--start-at", "2020-01-01T00:00:00Z"],
        &["--start-at", "in the past"],
    ),
    case(
        &["run", "keyvalue", "--rate", "10", "--worker", "1/2", "--start-at", "+48h"],
        &["more than a day ahead"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "h:1", "--start-at", "2020-01-01T00:00:00Z"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["--start-at", "in the past"],
    ),
    // Verdicts: nothing to judge is no verdict, refused up front where it can be seen.
    case(
        &["run", "keyvalue", "-r", "0", "--sla", "read:p99<1us"],
        &["the SLA term 'read:p99<1us' judges read requests", "--read-ratio"],
    ),
    case(
        &["run", "keyvalue", "-r", "1", "--sla", "write:p99<1s"],
        &["judges write requests"],
    ),
    case(
        &["run", "keyvalue", "--sla", "delete:p99<1s"],
        &["judges delete requests", "--delete-ratio"],
    ),
    case(
        &["capacity", "keyvalue", "-r", "0", "--sla", "read:p99<10ms"],
        &["judges read requests"],
    ),
    case(
        &["capacity", "keyvalue", "--duration", "15s"],
        &["--duration 15s is not a whole number of SLA windows (10s)", "last 5s would never be judged", "10s or 20s"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--duration", "10s", "--window", "20s", "--sla", "p99<1s"],
        &["--duration 10s is shorter than one SLA window (20s)"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--duration", "25s", "--sla", "p99<1s"],
        &["not a whole number of SLA windows"],
    ),
    case(
        &["capacity", "keyvalue", "--duration", "30s", "--sla", "p99<1s, window=20s"],
        &["not a whole number of SLA windows (20s)"],
    ),
    case(
        &["run", "keyvalue", "--concurrency", "4000000000"],
        &["--concurrency", "out of range: give 1 to 1M"],
    ),
    case(
        &["run", "keyvalue", "--concurrency", "100000", "--threads", "1", "--connections", "1"],
        &["--concurrency 100000 is more than 1 client thread(s) × 1 connection(s)", "--connections 4"],
    ),
    case(
        &["run", "keyvalue", "--concurrency", "40000", "--sender", "driver", "--connections", "1"],
        &["the driver's 1 connection(s)"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--max-in-flight", "20000000"],
        &["--max-in-flight", "out of range: give 1 to 10M"],
    ),
    case(
        &["sweep", "keyvalue", "--concurrency", "4,8,4000000000"],
        &["4000000000"],
    ),
    // What a single search prices, and its name.
    case(&["capacity", "keyvalue", "--node-price", "abc"], &["--node-price", "not a price: write a price per node above 0 such as 0.576/h, 420/month or 5000/year, optio"]),
    case(&["capacity", "keyvalue", "--nodes", "0"], &["--nodes", "out of range: give 1 to 10k"]),
    case(&["capacity", "keyvalue", "--label", ""], &["--label is empty"]),
    case(&["capacity", "keyvalue", "--label", "  "], &["--label is empty"]),
    case(&["capacity", "keyvalue", "--node-price", "zgc=1/h"], &["prices one configuration of a --matrix", "a single search takes one price"]),
    case(&["capacity", "keyvalue", "--node-price", "1/h", "--node-price", "2/h"], &["--node-price is given twice"]),
    case(&["capacity", "keyvalue", "--target-load", "10k"], &["--target-load 10k needs --node-price"]),
    case(&["capacity", "keyvalue", "--node-price", "1/h", "--target-load", "lots"], &["--target-load", "write operations per second like 2000, 20k or 1.5M"]),
    // A node down: how many, on which cluster, with which replicas, and the cost sized by it.
    case(&["capacity", "keyvalue", "--degraded", "2"], &["--degraded", "out of range: give 0 to 1"]),
    case(&["capacity", "keyvalue", "--degraded", "x"], &["invalid value 'x' for '--degraded"]),
    case(&["capacity", "keyvalue", "--degraded", "1"], &["--degraded 1: with 1 replica(s)", "--replication simple:3"]),
    case(&["capacity", "keyvalue", "--degraded", "1", "--replication", "simple:3", "--consistency", "ALL"], &["--consistency ALL needs 3"]),
    case(
        &["capacity", "keyvalue", "--degraded", "1", "--replication", "simple:3"],
        &["stops a node of a local cluster headroom started", "none runs in", "nodetool drain", "--hosts without it", "--label"],
    ),
    case(
        &["capacity", "keyvalue", "--degraded", "1", "--replication", "simple:3", "--hosts", "10.0.0.1"],
        &["stops a node of a local cluster headroom started", "nodetool status", "--label"],
    ),
    case(&["capacity", "keyvalue", "--degraded", "1", "--matrix", "nodes=3"], &["make it an axis of the matrix", "--matrix degraded=0,1"]),
    case(&["capacity", "keyvalue", "--degraded", "1", "--workers", "2"], &["--degraded with --workers"]),
    case(&["capacity", "keyvalue", "--matrix", "degraded=2"], &["--matrix degraded=2: headroom takes one node down"]),
    case(&["capacity", "keyvalue", "--matrix", "degraded=0,one"], &["--matrix degraded=one", "0 (every node up) or 1"]),
    case(
        &["capacity", "keyvalue", "--matrix", "degraded=1", "--matrix", "nodes=1", "--replication", "simple:3", "--heap", "1G"],
        &["--matrix configuration", "no other node to stop"],
    ),
    case(
        &["capacity", "keyvalue", "--matrix", "degraded=0,1", "--matrix", "nodes=3", "--heap", "1G"],
        &["--matrix configuration 1 node down", "--replication simple:3"],
    ),
    case(&["capacity", "keyvalue", "--size-for", "degraded"], &["--size-for degraded needs --node-price", "--node-price"]),
    case(&["capacity", "keyvalue", "--size-for", "worst"], &["invalid value 'worst' for '--size-for"]),
    case(&["capacity", "keyvalue", "--node-price", "1/h", "--size-for", "degraded"], &["a single search has none", "--matrix degraded=0,1"]),
    case(
        &["capacity", "keyvalue", "--matrix", "gc=g1,zgc", "--node-price", "1/h", "--size-for", "degraded"],
        &["add the axis --matrix degraded=0,1"],
    ),
    case(&["capacity", "--resume", "{dir}/s", "--degraded", "1"], &["--resume", "cannot be used with"]),
    // The pods of a fleet: what Kubernetes would refuse.
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "99999", "--image", "h:1"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["--workers", "out of range: give 1 to 1024"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "0", "--image", "h:1"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["--workers", "out of range: give 1 to 1024"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "h:1", "--namespace", "Load_Tests"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["--namespace 'Load_Tests' is not a Kubernetes name"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "Registry/Headroom:1"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["--image 'Registry/Headroom:1' is not an image reference"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "h:1", "--cpu", "2", "--cpu-limit", "1"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["the CPU request (2) is above its limit (1)"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "h:1", "--memory", "2Gi", "--memory-limit", "1Gi"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["the memory request (2Gi) is above its limit (1Gi)"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "h:1", "--tls-secret", "TLS"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["--tls-secret 'TLS' is not a Kubernetes name"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "h:1", "--service-account", "load tests"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["--service-account 'load tests'"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "h:1", "--image-pull-secret=-reg"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["--image-pull-secret '-reg'"],
    ),
    with(
        &["kube", "manifest", "--config", "{dir}/config.json", "--workers", "2", "--image", "h:1", "--username", "u", "--password-secret", "login", "--password-secret-key", "a/b"],
        &[("config.json", Fixture("report/run/config.json"))],
        &["--password-secret-key 'a/b' is not a key of a Secret"],
    ),
    case(
        &["capacity", "keyvalue", "--workers", "2", "--launcher", "kubernetes", "--image", "UPPER:1"],
        &["--image 'UPPER:1' is not an image reference"],
    ),
    case(
        &["capacity", "keyvalue", "--workers", "2000"],
        &["--workers", "out of range: give 1 to 1024"],
    ),
    // Consistency a keyspace can never meet.
    case(
        &["run", "keyvalue", "--consistency", "THREE"],
        &["--consistency THREE needs 3 replicas", "keeps 1", "--replication simple:3"],
    ),
    case(
        &["run", "keyvalue", "--consistency", "two", "--replication", "simple:1"],
        &["--consistency TWO needs 2 replicas"],
    ),
    case(
        &["run", "keyvalue", "--consistency", "THREE", "--replication", "nts:dc1=1,dc2=1"],
        &["keeps 2"],
    ),
    case(
        &["capacity", "timeseries", "--consistency", "THREE"],
        &["needs 3 replicas"],
    ),
    case(
        &["run", "ycsb", "--workload", "a", "--consistency", "THREE"],
        &["needs 3 replicas"],
    ),
    // Messages that name the real cause.
    case(
        &["run", "keyvalue", "--connections", "1000000", "--threads", "2"],
        &["--connections", "out of range: give 1 to 1k"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--during", "kill:1@5s"],
        &["kill acts on the process of a node of a local cluster headroom started", "cluster start"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--during", "stop:1@5s,cont:1@6s"],
        &["stop acts on the process of a node"],
    ),
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(NO_OPERATIONS))],
        &["no operations: a workload file names its operations"],
    ),
    case(&["run", "keyvalue", "--rate", "-5"], &["--rate", "the rate must be above zero"]),
    case(&["run", "keyvalue", "--concurrency", "-3"], &["invalid value '-3' for '--concurrency"]),
    case(&["capacity", "keyvalue", "--repeats", "-1"], &["invalid value '-1' for '--repeats"]),
    case(&["run", "keyvalue", "--threads", "-2"], &["invalid value '-2' for '--threads"]),
    case(
        &["run", "keyvalue", "--window", "3s", "--interval", "2s", "--sla", "p99<1s"],
        &["whole multiple of the --interval (2s)", "--window"],
    ),
    case(
        &["cluster", "start", "--dcs", "50", "--heap", "4G"],
        &["50 node(s) of --heap 4G need about", "this machine has"],
    ),
    case(
        &["cluster", "start", "--heap", "900G"],
        &["--heap 900G need about", "a smaller --heap"],
    ),
    // More of every command: the quickstart, comparisons, packs, sweeps.
    case(&["quickstart", "--repeats", "0"], &["--repeats", "out of range: give 1 to 100"]),
    // The quickstart's interval goal and its flags.
    case(&["quickstart", "--goal", "loose"], &["invalid value 'loose' for '--goal <GOAL>'"]),
    case(&["quickstart", "--confidence", "150%"], &["--confidence", "out of range: give 50% to 99.9%"]),
    case(&["quickstart", "--repeats", "3"], &["--goal interval repeats a rate", "leave out --repeats"]),
    case(&["quickstart", "--goal", "strict", "--exceed-ratio", "10%"], &["--exceed-ratio applies to --goal interval"]),
    case(&["quickstart", "--duration", "15s"], &["--duration 15s is not a whole number of SLA windows"]),
    case(&["quickstart", "--sla", "p99.9<"], &["SLA 'p99.9<' is not valid"]),
    with(
        &["quickstart", "--out", "{dir}/q"],
        &[("q/summary.json", Text("{}"))],
        &["--out", "already holds the files of an earlier run"],
    ),
    with(
        &["compare", "{dir}/a", "{dir}/a"],
        &[
            ("a/capacity.json", Fixture("report/capacity/capacity.json")),
            ("a/search.json", Fixture("report/capacity/search.json")),
        ],
        &["/a is given twice"],
    ),
    with(
        &["compare", "{dir}/a", "{dir}/b", "--node-price", "free"],
        &[
            ("a/capacity.json", Fixture("report/capacity/capacity.json")),
            ("a/search.json", Fixture("report/capacity/search.json")),
            ("b/capacity.json", Fixture("report/capacity/capacity.json")),
            ("b/search.json", Fixture("report/capacity/search.json")),
        ],
        &["--node-price", "not a price: write a price per node above 0 such as 0.576/h, 420/month or 5000/year, optio"],
    ),
    with(
        &["compare", "{dir}/a", "{dir}/b", "--node-price", "0.5/h", "--node-price", "0.6/h"],
        &[
            ("a/capacity.json", Fixture("report/capacity/capacity.json")),
            ("a/search.json", Fixture("report/capacity/search.json")),
            ("b/capacity.json", Fixture("report/capacity/capacity.json")),
            ("b/search.json", Fixture("report/capacity/search.json")),
        ],
        &["--node-price is given twice for every configuration"],
    ),
    with(
        &["compare", "{dir}/a", "{dir}/b", "--node-price", "zgc=1/h", "--node-price", "zgc=2/h"],
        &[
            ("a/capacity.json", Fixture("report/capacity/capacity.json")),
            ("a/search.json", Fixture("report/capacity/search.json")),
            ("b/capacity.json", Fixture("report/capacity/capacity.json")),
            ("b/search.json", Fixture("report/capacity/search.json")),
        ],
        &["--node-price zgc=... is given twice"],
    ),
    with(
        &["compare", "{dir}/a", "{dir}/b", "--node-price", "1/h", "--size-for", "degraded"],
        &[
            ("a/capacity.json", Fixture("report/capacity/capacity.json")),
            ("a/search.json", Fixture("report/capacity/search.json")),
            ("b/capacity.json", Fixture("report/capacity/capacity.json")),
            ("b/search.json", Fixture("report/capacity/search.json")),
        ],
        &["--size-for degraded", "none of these searches has a twin", "--degraded 1"],
    ),
    with(
        &["compare", "{dir}/a", "{dir}/b", "--size-for", "degraded"],
        &[
            ("a/capacity.json", Fixture("report/capacity/capacity.json")),
            ("a/search.json", Fixture("report/capacity/search.json")),
            ("b/capacity.json", Fixture("report/capacity/capacity.json")),
            ("b/search.json", Fixture("report/capacity/search.json")),
        ],
        &["--size-for degraded needs --node-price", "there is no cost without a price"],
    ),
    with(
        &["compare", "{dir}/r1", "{dir}/r2", "--node-price", "1/h"],
        &[
            ("r1/summary.json", Fixture("report/run/summary.json")),
            ("r1/config.json", Fixture("report/run/config.json")),
            ("r2/summary.json", Fixture("report/run/summary.json")),
            ("r2/config.json", Fixture("report/run/config.json")),
        ],
        &["runs have no capacity to price"],
    ),
    case(&["kube", "pack", "{dir}/nowhere", "--worker", "1"], &["is not a directory"]),
    with(
        &["kube", "pack", "{dir}/run", "--worker", "0"],
        &[("run/config.json", Fixture("report/run/config.json"))],
        &["invalid value '0' for '--worker"],
    ),
    with(
        &["kube", "pack", "{dir}/run", "--worker", "1", "--max-bytes", "10"],
        &[("run/config.json", Fixture("report/run/config.json"))],
        &["--max-bytes", "out of range: give 1K to 256M"],
    ),
    with(
        &["kube", "pack", "{dir}/run", "--worker", "1", "--max-bytes", "1K"],
        &[
            ("run/config.json", Fixture("report/run/config.json")),
            ("run/histograms.hlog", Fixture("report/run/histograms.hlog")),
        ],
        &["over the 1024 allowed"],
    ),
    case(&["sweep", "keyvalue", "--concurrency", "0"], &["must be at least 1, not 0"]),
    case(&["sweep", "keyvalue", "--step-duration", "0s"], &["--step-duration", "out of range: give 1s to 24h"]),
    case(
        &["run", "keyvalue", "--rate", "10", "--send-resolution", "1h"],
        &["--send-resolution", "out of range: give 0s to 1s"],
    ),
    case(
        &["cluster", "start", "--nodes", "10", "--first-address", "127.0.0.250"],
        &["do not fit in the last octet"],
    ),
    // Cores.
    case(&["cluster", "start", "--cpus", "3-1"], &["'3-1' in '3-1' runs backwards"]),
    case(&["cluster", "start", "--cpus", ""], &["an empty list of cores"]),
    case(&["cluster", "start", "--cpus", "1,,2"], &["'1,,2' is not a list of cores"]),
    case(&["cluster", "start", "--cpus", "1000"], &["--cpus 1000 names core 1000 that this process may not use"]),
    case(&["cluster", "start", "--cpus", "2=0"], &["--cpus 2=0 names node 2, and the cluster has 1 node"]),
    case(&["cluster", "start", "--nodes", "2", "--cpus", "1=0"], &["node 2 has no cores"]),
    case(&["cluster", "start", "--cpus", "0=1"], &["'0=1' does not start with a node number"]),
    case(&["cluster", "start", "--nodes", "2", "--cpus", "1=0", "--cpus", "1=0"], &["--cpus names node 1 twice"]),
    case(&["cluster", "start", "--cpus", "0", "--cpus", "all"], &["--cpus is given for every node twice"]),
    case(&["cluster", "start", "--cpus", "1=all"], &["'all' is not a list of cores"]),
    case(&["cluster", "start", "--nice", "20"], &["--nice <0-19>", "20 is not in 0..=19"]),
    case(&["cluster", "start", "--nice", "-1"], &["--nice <0-19>", "-1 is not in 0..=19"]),
    case(&["cluster", "start", "--nice", "low"], &["--nice <0-19>", "'low'"]),
    case(&["run", "keyvalue", "--rate", "10", "--client-cpus", "1000"], &["--client-cpus 1000 names core 1000"]),
    case(&["run", "keyvalue", "--rate", "10", "--client-cpus", "x"], &["'x' is not a list of cores"]),
    case(&["capacity", "keyvalue", "--client-cpus", "5-2"], &["runs backwards"]),
    case(&["sweep", "keyvalue", "--client-cpus", "1024"], &["core 1024 in '1024' is beyond the highest core"]),
    case(&["quickstart", "--cluster-dir", "{dir}/c", "--client-cpus", "1000"], &["--client-cpus 1000 names core 1000"]),
    case(&["quickstart", "--cluster-dir", "{dir}/c", "--cpus", "1000"], &["--cpus 1000 names core 1000"]),
    case(&["quickstart", "--cluster-dir", "{dir}/c", "--cpus", "0", "--client-cpus", "0"], &["--client-cpus 0 shares core 0 with the local nodes"]),
    // Local clusters.
    case(
        &["cluster", "start", "--nodes", "0"],
        &["--nodes", "out of range: give 1 to 254"],
    ),
    case(
        &["cluster", "start", "--nodes", "300"],
        &["--nodes", "out of range: give 1 to 254"],
    ),
    case(
        &["cluster", "start", "--heap", "128M"],
        &["--heap", "out of range: give 512M to 1T"],
    ),
    case(
        &["cluster", "start", "--first-address", "10.0.0.1"],
        &["not a loopback address"],
    ),
    case(
        &["cluster", "start", "--gc", "nope"],
        &["invalid value 'nope' for '--gc"],
    ),
    case(
        &["cluster", "start", "--yaml", "novalue"],
        &["--yaml 'novalue' is not KEY=VALUE"],
    ),
    case(
        &["cluster", "status", "--dir", "{dir}/c"],
        &["there is no cluster in"],
    ),
    case(
        &["cluster", "nodetool", "1", "status", "--dir", "{dir}/c"],
        &["there is no cluster in", "/c:"],
    ),
    case(
        &["cluster", "logs", "1", "--dir", "{dir}/c"],
        &["there is no cluster in"],
    ),
    case(
        &["cluster", "stop", "--dir", "{dir}/c"],
        &["there is no cluster in"],
    ),
    // Watching a run: addresses and URLs are checked, and listened on, before anything
    // connects.
    case(
        &["run", "keyvalue", "--metrics-listen", "localhost"],
        &["--metrics-listen localhost: no port"],
    ),
    case(
        &["run", "keyvalue", "--metrics-listen", "127.0.0.1:99999"],
        &["--metrics-listen 127.0.0.1:99999", "is not a port"],
    ),
    case(
        &["capacity", "keyvalue", "--live", "no such host:80"],
        &["--live no such host:80: not an address"],
    ),
    case(
        &["sweep", "keyvalue", "--live", "10.255.255.254:9464"],
        &["--live 10.255.255.254:9464: no interface of this machine has that address"],
    ),
    case(
        &["run", "keyvalue", "--metrics-push", "127.0.0.1:9091"],
        &["--metrics-push 127.0.0.1:9091: not a URL", "http://127.0.0.1:9091"],
    ),
    case(
        &["run", "keyvalue", "--metrics-push", "https://127.0.0.1:9091"],
        &["https is not supported"],
    ),
    case(
        &["capacity", "keyvalue", "--metrics-push", "http://gw:port"],
        &["port \"port\" is not a port"],
    ),
    case(
        &["run", "keyvalue", "--linger", "a while"],
        &["'a while'"],
    ),
    // Every number has a domain; a flag that would do nothing is refused, naming what it
    // needs.
    case(
        &["run", "keyvalue", "--rate", "100", "--linger", "10s"],
        &["--linger 10s needs --live or --metrics-listen"],
    ),
    case(
        &["sweep", "keyvalue", "--linger", "1m", "--metrics-push", "http://127.0.0.1:1"],
        &["--linger 1m needs --live or --metrics-listen"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--live", "127.0.0.1:0", "--linger", "100000000h"],
        &["--linger", "out of range: give 0s to 24h"],
    ),
    case(
        &["run", "keyvalue", "--metrics-listen", ":19505"],
        &["--metrics-listen :19505: no host before the port", "0.0.0.0:19505"],
    ),
    case(
        &["run", "keyvalue", "--metrics-listen", "::1"],
        &["--metrics-listen ::1: an IPv6 address without a port", "[::1]:9464"],
    ),
    case(
        &["run", "keyvalue", "--metrics-push", "http://gate way:9091"],
        &["--metrics-push http://gate way:9091: a space has no place in a URL"],
    ),
    case(
        &["run", "keyvalue", "--rate", "1e99"],
        &["'1e99'", "at most 1G (a billion) per second"],
    ),
    case(
        &["capacity", "keyvalue", "--rates", "1k,1e99"],
        &["at most 1G (a billion) per second"],
    ),
    case(
        &["capacity", "keyvalue", "--node-price", "1/h", "--target-load", "2G"],
        &["--target-load", "the rate must be at most 1G (a billion) per second, beyond any cluster's"],
    ),
    case(
        &["capacity", "keyvalue", "--node-price", "1e99/h"],
        &["--node-price", "more than ten million per node-hour in any currency: give the price of one node"],
    ),
    case(
        &["capacity", "keyvalue", "--node-price", "0.5"],
        &["--node-price", "it has no unit: say per what, e.g. 0.5/h, 0.5/month or 0.5/year"],
    ),
    case(
        &["run", "keyvalue", "--duration", "1ns"],
        &["--duration", "out of range: give 10ms to 30d"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--duration", "50ms", "--interval", "100ms"],
        &["--duration 50ms is shorter than one --interval (100ms)"],
    ),
    case(
        &["run", "keyvalue", "--concurrency", "8", "--arrivals", "poisson"],
        &["--arrivals poisson needs --rate"],
    ),
    case(
        &["run", "keyvalue", "--max-in-flight", "0"],
        &["--max-in-flight", "out of range: give 1 to 10M"],
    ),
    case(
        &["sweep", "keyvalue", "--max-in-flight", "0"],
        &["--max-in-flight", "out of range: give 1 to 10M"],
    ),
    case(
        &["sweep", "keyvalue", "--arrivals", "poisson"],
        &["--arrivals poisson does nothing in `sweep`", "a sweep's steps are closed loops"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--window", "0s"],
        &["--window", "out of range: give 10ms to 24h"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--window", "5s"],
        &["--window 5s needs --sla", "e.g. --sla 'p99<10ms'"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--sla", "p99<10ms, window=5s", "--window", "10s"],
        &["--window 10s does nothing here: --sla names its own window, 5s"],
    ),
    case(
        &["capacity", "keyvalue", "--sla", "p99<10ms@20s", "--window", "10s"],
        &["--window 10s does nothing here", "an @WINDOW on every term"],
    ),
    case(
        &["run", "vector", "--rows", "5", "--top-k", "10"],
        &["--rows 5 --top-k 10: a query would ask for more neighbours than the table holds"],
    ),
    case(
        &["run", "vector", "--rows", "1e12"],
        &["--rows", "out of range: give 1 to 100M"],
    ),
    with(
        &["run", "vector", "--vectors", "{dir}/base.fvecs", "--queries", "1"],
        &[("base.fvecs", Fixture("vectors/base.fvecs"))],
        &["base.fvecs holds 2 vectors, fewer than --top-k 10"],
    ),
    case(
        &["run", "keyvalue", "--username", ""],
        &["--username (or HEADROOM_USERNAME) is empty"],
    ),
    case(
        &["capacity", "keyvalue", "--username", " "],
        &["--username (or HEADROOM_USERNAME) is empty"],
    ),
    // The vector workload: its numbers, and vector files truncated, of another dimension,
    // empty, or no vector file at all.
    case(&["run", "vector", "--dimensions", "0"], &["--dimensions", "out of range: give 1 to 8192"]),
    case(&["run", "vector", "--top-k", "0"], &["--top-k", "out of range: give 1 to 1000"]),
    case(&["run", "vector", "--rows", "0"], &["--rows", "out of range: give 1 to 100M"]),
    case(&["run", "vector", "--similarity", "manhattan"], &["unknown similarity", "cosine, dot_product or euclidean"]),
    case(&["run", "vector", "--delete-ratio", "0.1"], &["the vector workload deletes nothing"]),
    case(&["run", "keyvalue", "--dimensions", "64"], &["--dimensions is for the vector workload, not keyvalue"]),
    case(&["run", "vector", "--neighbours", "gt.ivecs"], &["--neighbours goes with --vectors"]),
    with(
        &["run", "vector", "--vectors", "{dir}/base.fvecs", "--queries", "1"],
        &[("base.fvecs", Bytes(b"\x04\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40"))],
        &["--vectors", "base.fvecs", "truncated"],
    ),
    with(
        &["run", "vector", "--vectors", "{dir}/base.fvecs", "--dimensions", "8", "--queries", "1"],
        &[("base.fvecs", Fixture("vectors/base.fvecs"))],
        &["vectors of dimension 4, where 8 was expected"],
    ),
    with(
        &["run", "vector", "--vectors", "{dir}/base.fvecs", "--query-vectors", "{dir}/q.npy"],
        &[("base.fvecs", Fixture("vectors/base.fvecs")), ("q.npy", Fixture("vectors/one_d.npy"))],
        &["--query-vectors", "q.npy"],
    ),
    with(
        &["run", "vector", "--vectors", "{dir}/empty.fvecs"],
        &[("empty.fvecs", Bytes(b""))],
        &["--vectors", "empty"],
    ),
    with(
        &["run", "vector", "--vectors", "{dir}/notes.fvecs"],
        &[("notes.fvecs", Text("these are notes, not vectors\n"))],
        &["--vectors", "notes.fvecs", "dimension"],
    ),
    with(
        &["run", "vector", "--vectors", "{dir}/points.csv"],
        &[("points.csv", Text("1,2,3\n"))],
        &["unknown format: give a .fvecs, .bvecs, .ivecs or .npy file"],
    ),
    case(
        &["run", "keyvalue", "--sla", "p99<10ms, recall@10>=0.9"],
        &["the SLA term 'recall@10>=0.9' needs an ANN query, and the workload 'keyvalue' has none"],
    ),
    case(
        &["capacity", "vector", "--sla", "p99<10ms, recall@5>=0.9"],
        &["asks recall@5, but the ANN query returns the top 10 (--top-k 10)"],
    ),
    case(
        &["run", "vector", "-r", "0", "--sla", "p1(recall)>=0.7"],
        &["judges ann requests, but -r 0 leaves none in the mix"],
    ),
    with(
        &["capacity", "vector", "--vectors", "{dir}/base.fvecs", "--queries", "3"],
        &[("base.fvecs", Fixture("vectors/base.fvecs"))],
        &["leaving none to search"],
    ),
    // Checks between flags, behind the ranges: each value lies in its own range, the
    // combination does not.
    case(
        &["run", "keyvalue", "--connections", "1000", "--threads", "256"],
        &["--connections 1000 needs about", "ulimit -n"],
    ),
    case(
        &["run", "keyvalue", "--rate", "10", "--interval", "500ms", "--send-resolution", "800ms"],
        &["--send-resolution 800ms is longer than an --interval (500ms)"],
    ),
    case(
        &["cluster", "start", "--nodes", "200", "--first-address", "127.0.0.100"],
        &["do not fit in the last octet"],
    ),
    case(
        &["run", "keyvalue", "--duration", "500ms"],
        &["--duration 500ms is shorter than one --interval (1s)"],
    ),
    case(
        &["run", "keyvalue", "--max-in-flight", "100"],
        &["--max-in-flight 100 needs --rate", "without --rate the run is a closed loop"],
    ),
    case(
        &["sweep", "keyvalue", "--max-in-flight", "100"],
        &["--max-in-flight 100 does nothing in `sweep`", "a sweep's steps are closed loops"],
    ),
    case(
        &["run", "keyvalue", "--rate", "100", "--window", "5s"],
        &["--window 5s needs --sla"],
    ),
    // Every number has a range, stated in its --help and kept where it is parsed.
    case(
        &["run", "keyvalue", "--ttl", "7301d"],
        &["--ttl", "out of range: give 1s to 7300d"],
    ),
    case(
        &["run", "keyvalue", "--connections", "2000"],
        &["--connections", "out of range: give 1 to 1k"],
    ),
    case(
        &["run", "keyvalue", "--timeout", "2h"],
        &["--timeout", "out of range: give 1ms to 1h"],
    ),
    case(
        &["run", "keyvalue", "--interval", "2h"],
        &["--interval", "out of range: give 10ms to 1h"],
    ),
    case(
        &["run", "keyvalue", "--warmup", "25h"],
        &["--warmup", "out of range: give 0s to 24h"],
    ),
    case(
        &["run", "keyvalue", "--duration", "31d"],
        &["--duration", "out of range: give 10ms to 30d"],
    ),
    case(
        &["run", "keyvalue", "--seed", "18446744073709551616"],
        &["--seed", "too large"],
    ),
    case(
        &["run", "documents", "--rows-per-partition", "0"],
        &["--rows-per-partition", "out of range: give 1 to 1G"],
    ),
    case(
        &["run", "vector", "--queries", "200k"],
        &["--queries", "out of range: give 1 to 100k"],
    ),
    case(
        &["run", "keyvalue", "--partitions", "2000G"],
        &["--partitions", "out of range: give 1 to 1000G"],
    ),
    case(
        &["run", "keyvalue", "--populate", "2000G"],
        &["--populate", "out of range: give 0 to 1000G"],
    ),
    case(
        &["run", "keyvalue", "--delete-ratio", "2"],
        &["--delete-ratio", "out of range: give 0 to 1"],
    ),
    case(
        &["run", "keyvalue", "--rate", "10", "--send-resolution", "2s"],
        &["--send-resolution", "out of range: give 0s to 1s"],
    ),
    case(
        &["run", "keyvalue", "--during-timeout", "0s"],
        &["--during-timeout", "out of range: give 1s to 24h"],
    ),
    case(
        &["capacity", "keyvalue", "--probe-concurrency", "2M"],
        &["--probe-concurrency", "out of range: give 1 to 1M"],
    ),
    case(
        &["capacity", "keyvalue", "--repeats", "101"],
        &["--repeats", "out of range: give 1 to 100"],
    ),
    case(
        &["capacity", "keyvalue", "--warmup", "2h"],
        &["--warmup", "out of range: give 0s to 1h"],
    ),
    case(
        &["capacity", "keyvalue", "--duration", "25h"],
        &["--duration", "out of range: give 1s to 24h"],
    ),
    case(
        &["capacity", "keyvalue", "--resolution", "60%"],
        &["--resolution", "out of range: give 0.1% to 50%"],
    ),
    case(
        &["capacity", "keyvalue", "--confidence", "40%"],
        &["--confidence", "out of range: give 50% to 99.9%"],
    ),
    case(
        &["capacity", "keyvalue", "--node-price", "1/h", "--nodes", "20k"],
        &["--nodes", "out of range: give 1 to 10k"],
    ),
    case(
        &["capacity", "keyvalue", "--workers", "2", "--launcher", "kubernetes", "--cpu", "0.5m"],
        &["--cpu", "out of range: give 1m to 1k"],
    ),
    case(
        &["capacity", "keyvalue", "--workers", "2", "--launcher", "kubernetes", "--memory", "2Ti"],
        &["--memory", "out of range: give 1Mi to 1Ti"],
    ),
    case(
        &["capacity", "keyvalue", "--workers", "2", "--launcher", "kubernetes", "--job-ttl", "31d"],
        &["--job-ttl", "out of range: give 0s to 30d"],
    ),
    case(
        &["capacity", "keyvalue", "--workers", "2", "--launcher", "kubernetes", "--max-log-bytes", "10"],
        &["--max-log-bytes", "out of range: give 1M to 2G"],
    ),
    case(
        &["sweep", "keyvalue", "--stable-error", "60%"],
        &["--stable-error", "out of range: give 0.1% to 50%"],
    ),
    case(
        &["sweep", "keyvalue", "--step-min", "0s"],
        &["--step-min", "out of range: give 1s to 24h"],
    ),
    case(
        &["quickstart", "--resolution", "0.01%"],
        &["--resolution", "out of range: give 0.1% to 50%"],
    ),
    case(
        &["quickstart", "--heap", "2T"],
        &["--heap", "out of range: give 512M to 1T"],
    ),
    case(
        &["cluster", "start", "--start-timeout", "0s"],
        &["--start-timeout", "out of range: give 1s to 24h"],
    ),
    case(
        &["cluster", "stop", "--timeout", "2h"],
        &["--timeout", "out of range: give 0s to 1h"],
    ),
    case(
        &["cluster", "logs", "0"],
        &["<NODE>", "out of range: give 1 to 254"],
    ),
    case(
        &["cluster", "nodetool", "300", "status"],
        &["<NODE>", "out of range: give 1 to 254"],
    ),
    // A config.json edited by hand: its numbers keep the flags' ranges.
    with(
        &["run", "--config", "{dir}/config.json"],
        &[("config.json", Text(CONFIG_NEGATIVE_WARMUP))],
        &["warmup_s is -1 s, outside 0s to 24h"],
    ),
    with(
        &["run", "--config", "{dir}/config.json"],
        &[("config.json", Text(CONFIG_ENDLESS_RATE))],
        &["rate_per_s is", "outside 0.001 to 1G"],
    ),
    with(
        &["run", "--config", "{dir}/config.json"],
        &[("config.json", Text(CONFIG_MANY_THREADS))],
        &["threads is 100000, outside 1 to 256"],
    ),
    // No silent flag: each flag that needs another is refused without it (one table,
    // cli/combinations.rs).
    case(
        &["capacity", "keyvalue", "--image", "registry/headroom:1"],
        &["--image registry/headroom:1 needs --launcher kubernetes"],
    ),
    case(
        &["capacity", "keyvalue", "--workers", "2", "--cpu", "2"],
        &["--cpu 2 needs --launcher kubernetes", "--launcher local"],
    ),
    case(
        &["capacity", "keyvalue", "--host-network"],
        &["--host-network needs --launcher kubernetes"],
    ),
    case(
        &["capacity", "keyvalue", "--namespace", "load"],
        &["--namespace load needs --launcher kubernetes"],
    ),
    case(
        &["capacity", "keyvalue", "--size-for", "healthy"],
        &["--size-for healthy needs --node-price"],
    ),
    case(
        &["compare", "{dir}/a", "{dir}/b", "--target-load", "10k"],
        &["--target-load 10k needs --node-price"],
    ),
    case(
        &["capacity", "keyvalue", "--launcher", "local"],
        &["--launcher local needs --workers"],
    ),
    // A workload file's keyspace is checked as --keyspace is, before anything connects.
    with(
        &["run", "{dir}/w.yaml"],
        &[("w.yaml", Text(WORKLOAD_BAD_KEYSPACE))],
        &["w.yaml: keyspace: 'bad-ks' is not a CQL keyspace name"],
    ),
    with(
        &["capacity", "{dir}/w.yaml"],
        &[("w.yaml", Text(WORKLOAD_LONG_KEYSPACE))],
        &["keyspace:", "up to 48 letters"],
    ),
];

/// Every path under `dir`, files and directories.
fn listing(dir: &Path) -> BTreeSet<PathBuf> {
    let mut all = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            all.insert(path);
        }
    }
    all
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn bad_input_is_refused_with_one_line_exit_code_2_and_nothing_written() {
    assert!(CASES.len() >= 250, "{} cases", CASES.len());
    // Short, but it spawns a hundred processes: not beside a load test.
    let _machine = crate::support::exclusive();
    let root = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (n, case) in CASES.iter().enumerate() {
        let dir = root.path().join(format!("case-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, content) in case.files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            match content {
                Text(t) => std::fs::write(&path, t).unwrap(),
                Bytes(b) => std::fs::write(&path, b).unwrap(),
                Large(n) => std::fs::write(&path, vec![b'#'; *n]).unwrap(),
                Fixture(f) => {
                    std::fs::copy(fixture(f), &path).unwrap();
                }
                Fifo => nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap(),
            }
        }
        let before = listing(&dir);
        let dir_text = dir.to_str().unwrap();
        let args: Vec<String> = case
            .args
            .iter()
            .map(|a| a.replace("{dir}", dir_text))
            .collect();
        // Contact points that connect nowhere, and a cluster directory and cache of the
        // case's own, so that nothing outside it could be touched.
        let mut command = Command::new(env!("CARGO_BIN_EXE_headroom"));
        command
            .args(&args)
            .current_dir(&dir)
            .env("HEADROOM_CLUSTER_DIR", dir.join("no-cluster"))
            .env("HEADROOM_CACHE_DIR", dir.join("no-cache"))
            .env_remove("HEADROOM_USERNAME")
            .env_remove("HEADROOM_PASSWORD");
        if matches!(
            args.first().map(String::as_str),
            Some("run" | "capacity" | "sweep")
        ) && !args
            .iter()
            .any(|a| a == "--hosts" || a == "--resume" || a == "--matrix" || a == "--config")
        {
            command.args(["--hosts", NOWHERE]);
        }
        let started = std::time::Instant::now();
        let output = command.output().expect("the headroom binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let mut wrong = Vec::new();
        if output.status.code() != Some(2) {
            wrong.push(format!("exit code {:?}, not 2", output.status.code()));
        }
        for says in case.says {
            if !stderr.contains(says) {
                wrong.push(format!("the message does not say '{says}'"));
            }
        }
        if stderr.len() > 1500 {
            wrong.push(format!("a message of {} bytes", stderr.len()));
        }
        if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
            wrong.push("a panic".to_string());
        }
        let after = listing(&dir);
        if after != before {
            let new: Vec<_> = after.difference(&before).collect();
            let gone: Vec<_> = before.difference(&after).collect();
            wrong.push(format!("files changed: new {new:?}, gone {gone:?}"));
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            wrong.push(format!("took {:?}", started.elapsed()));
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "case {n}: headroom {}\n  {}\n  stderr: {}\n  stdout: {}",
                crate::support::cut(&args.join(" "), 300),
                wrong.join("; "),
                stderr.trim(),
                crate::support::cut(&stdout, 300)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// An address another program listens on is refused before anything connects or is
/// written, in one line, for every command that watches.
#[test]
fn an_address_in_use_is_refused_before_anything_connects() {
    let root = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    for (command, flag) in [
        ("run", "--metrics-listen"),
        ("capacity", "--live"),
        ("sweep", "--metrics-listen"),
    ] {
        let out = root.path().join(command);
        let output = Command::new(env!("CARGO_BIN_EXE_headroom"))
            .args([
                command, "keyvalue", "--hosts", NOWHERE, flag, &address, "--out",
            ])
            .arg(&out)
            .env("HEADROOM_CLUSTER_DIR", root.path().join("no-cluster"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(
            stderr.contains(&format!("{flag} {address}: the address is in use")),
            "{command}: {stderr}"
        );
        assert_eq!(stderr.trim().lines().count(), 1, "{command}: {stderr}");
        assert!(!out.exists(), "{command} wrote {}", out.display());
    }
}

/// A sweep refused while connecting (its first step could not start) leaves only its note:
/// the same command again is not refused for the files of the first attempt.
#[test]
fn a_refused_sweep_or_search_leaves_its_out_free_for_the_next_attempt() {
    let root = tempfile::tempdir().unwrap();
    for command in ["sweep", "capacity"] {
        let out = root.path().join(command);
        let attempt = || {
            Command::new(env!("CARGO_BIN_EXE_headroom"))
                .args([command, "keyvalue", "--hosts", NOWHERE, "--out"])
                .arg(&out)
                .env("HEADROOM_CLUSTER_DIR", root.path().join("no-cluster"))
                .output()
                .unwrap()
        };
        for n in 1..=2 {
            let output = attempt();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{command}, attempt {n}: {stderr}"
            );
            assert!(
                stderr.contains("cannot connect"),
                "{command}, attempt {n}: {stderr}"
            );
            let names: Vec<_> = std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["error.txt"], "{command}, attempt {n}");
        }
    }
}
