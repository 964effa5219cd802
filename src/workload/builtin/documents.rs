//! The `documents` built-in: JSON documents appended with a TTL to wide, time-ordered
//! partitions, modelled on a field report of time-series inserts (documents stored as JSON,
//! 1000 rows per partition, TTL 8640 s, TWCS) during which nodetool repair, compact and
//! garbagecollect were timed.
//!
//! Table `documents (source int, bucket bigint, ts timestamp, seq bigint, doc text,
//! PRIMARY KEY ((source, bucket), ts, seq))`, newest first. Writes go to [`SOURCES`] sources
//! in turn; each source fills one partition (`bucket`) with `rows_per_partition` rows, then
//! moves to the next, so every partition ends up exactly that wide. Write `w` (the w-th write
//! of the run, counted from the request's sequence number alone) goes to source `w % SOURCES`,
//! bucket `(w / SOURCES) / rows_per_partition`. `ts` is the client's clock at the send, `seq`
//! breaks ties. A read fetches the newest [`READ_ROWS`] rows of a recent partition: the
//! bucket a random source is filling, or the one before it. A delete drops a whole
//! partition two buckets back (none by default: the TTL expires the rows).

use rand::rngs::SmallRng;
use rand::Rng;

use crate::workload::common::generators::TextPool;
use crate::workload::common::mix::OpMix;

/// Sources written in turn: that many partitions fill at the same time, spread over the
/// ring rather than one hot partition.
pub const SOURCES: u64 = 8;
/// Rows a read fetches, newest first.
pub const READ_ROWS: u32 = 100;
/// Rows per partition unless `--rows-per-partition` says otherwise.
pub const DEFAULT_ROWS_PER_PARTITION: u64 = 1000;
/// Table TTL unless `--ttl` says otherwise, seconds: the field report's.
pub const DEFAULT_TTL_S: u32 = 8640;
/// Read share unless `-r` says otherwise: a few reads beside the inserts.
pub const DEFAULT_READ_RATIO: f64 = 0.05;
/// Compaction unless `--compaction` says otherwise: time windows, about fifteen per TTL at
/// the default TTL, as TWCS is meant to be used with TTL'd time series.
pub const DEFAULT_COMPACTION: &str = "{'class': 'TimeWindowCompactionStrategy', \
     'compaction_window_unit': 'MINUTES', 'compaction_window_size': 10}";

const SEVERITIES: [&str; 5] = ["debug", "info", "notice", "warning", "error"];
const KINDS: [&str; 6] = ["auth", "dns", "firewall", "http", "mail", "vpn"];
const TAGS: [&str; 8] = [
    "internal", "external", "blocked", "allowed", "retry", "tls", "ipv6", "batch",
];

/// The CQL of the table, then write, read and delete, in keyspace `ks`.
pub fn create_table(ks: &str, options: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {ks}.documents (source int, bucket bigint, ts timestamp, \
         seq bigint, doc text, PRIMARY KEY ((source, bucket), ts, seq)) \
         WITH CLUSTERING ORDER BY (ts DESC, seq DESC){}",
        options.replacen(" WITH ", " AND ", 1)
    )
}

/// Write, read and delete statements in keyspace `ks`.
pub fn statements(ks: &str) -> [String; 3] {
    [
        format!("INSERT INTO {ks}.documents (source, bucket, ts, seq, doc) VALUES (?, ?, ?, ?, ?)"),
        format!(
            "SELECT ts, seq, doc FROM {ks}.documents WHERE source = ? AND bucket = ? LIMIT {READ_ROWS}"
        ),
        format!("DELETE FROM {ks}.documents WHERE source = ? AND bucket = ?"),
    ]
}

/// The columns, as system_schema.columns reports them.
pub const COLUMNS: &[(&str, &str)] = &[
    ("bucket", "bigint"),
    ("doc", "text"),
    ("seq", "bigint"),
    ("source", "int"),
    ("ts", "timestamp"),
];

/// A partition of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Partition {
    /// Which source.
    pub source: i32,
    /// Which of its partitions, in the order it fills them.
    pub bucket: i64,
}

/// Where each request of a documents run goes.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Rows each partition receives.
    pub rows_per_partition: u64,
}

impl Layout {
    /// The partition of the `w`-th write.
    pub fn write(&self, w: u64) -> Partition {
        Partition {
            source: (w % SOURCES) as i32,
            bucket: ((w / SOURCES) / self.rows_per_partition) as i64,
        }
    }

    /// The partition a read fetches when `writes` writes came before it: the one a random
    /// source fills now, or the one it filled before (when there is one).
    pub fn read(&self, writes: u64, rng: &mut SmallRng) -> Partition {
        let source = rng.random_range(0..SOURCES);
        // The source's next write is its row `rows`; its latest, `rows - 1`.
        let rows = writes / SOURCES + u64::from(writes % SOURCES > source);
        let current = rows.saturating_sub(1) / self.rows_per_partition;
        let bucket = if current > 0 && rng.random_bool(0.5) {
            current - 1
        } else {
            current
        };
        Partition {
            source: source as i32,
            bucket: bucket as i64,
        }
    }

    /// The partition a delete drops: a random source's, two buckets behind its current one.
    pub fn delete(&self, writes: u64, rng: &mut SmallRng) -> Partition {
        let mut p = self.read(writes, rng);
        p.bucket = (p.bucket - 2).max(0);
        p
    }
}

/// How many writes came before request `seq`: writes are the mix's first type.
pub fn writes_before(mix: &OpMix, seq: u64) -> u64 {
    mix.first_type_count(seq)
}

/// The JSON document of request `seq` (a few hundred bytes): a function of the run's seed
/// (through `rng` and `text`) and `seq` alone.
pub fn document(seq: u64, source: i32, rng: &mut SmallRng, text: &TextPool) -> String {
    let severity = SEVERITIES[rng.random_range(0..SEVERITIES.len())];
    let kind = KINDS[rng.random_range(0..KINDS.len())];
    let tag_a = TAGS[rng.random_range(0..TAGS.len())];
    let tag_b = TAGS[rng.random_range(0..TAGS.len())];
    let host = rng.random_range(0..500u32);
    let src = [
        10,
        rng.random_range(0..=255u8),
        rng.random_range(0..=255u8),
        rng.random_range(1..=254u8),
    ];
    let port = rng.random_range(1024..=65535u32);
    let bytes = rng.random_range(40..=1_500_000u32);
    let score = rng.random_range(0..1000u32);
    // The pool's text is letters and digits: nothing to escape.
    let message = text.text(rng, 150, 250);
    format!(
        "{{\"id\":{seq},\"source\":{source},\"kind\":\"{kind}\",\"severity\":\"{severity}\",\
         \"host\":\"host-{host:03}\",\"src_ip\":\"{}.{}.{}.{}\",\"src_port\":{port},\
         \"bytes\":{bytes},\"score\":{}.{:03},\"tags\":[\"{tag_a}\",\"{tag_b}\"],\
         \"message\":\"{message}\"}}",
        src[0],
        src[1],
        src[2],
        src[3],
        score / 1000,
        score % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::common::generators::request_rng;
    use std::collections::BTreeMap;

    #[test]
    fn documents_are_json_of_a_few_hundred_bytes_and_repeat_with_the_seed() {
        let text = TextPool::new(3);
        let doc = |seed, seq| document(seq, 2, &mut request_rng(seed, seq), &text);
        assert_eq!(doc(1, 42), doc(1, 42));
        assert_ne!(doc(1, 42), doc(1, 43));
        assert_ne!(doc(1, 42), doc(2, 42));
        for seq in 0..200 {
            let d = doc(1, seq);
            assert!((250..=600).contains(&d.len()), "{} bytes: {d}", d.len());
            let v: serde_json::Value = serde_json::from_str(&d).unwrap();
            assert_eq!(v["id"], seq);
            assert_eq!(v["source"], 2);
            assert!(v["message"].as_str().unwrap().len() >= 150);
            assert_eq!(v.as_object().unwrap().len(), 11);
        }
    }

    #[test]
    fn every_partition_gets_exactly_rows_per_partition_writes() {
        let layout = Layout {
            rows_per_partition: 1000,
        };
        let mix = OpMix::new(&[0.9, 0.1, 0.0]);
        let mut rows: BTreeMap<Partition, u64> = BTreeMap::new();
        let n = 200_000;
        for seq in 0..n {
            if mix.op_for(seq) == 0 {
                *rows
                    .entry(layout.write(writes_before(&mix, seq)))
                    .or_default() += 1;
            }
        }
        // 180 000 writes over 8 sources: 22 full buckets each, and a 23rd filling.
        let full: Vec<u64> = rows
            .iter()
            .filter(|(p, _)| p.bucket < 22)
            .map(|(_, n)| *n)
            .collect();
        assert_eq!(full.len(), 8 * 22);
        assert!(full.iter().all(|&n| n == 1000), "{rows:?}");
        assert_eq!(rows.values().sum::<u64>(), 180_000);
        assert!(rows.keys().all(|p| p.bucket <= 22));
        // Writes are numbered without gaps: the w-th write is request seq's first-type count.
        let writes: Vec<u64> = (0..50)
            .filter(|&s| mix.op_for(s) == 0)
            .map(|s| writes_before(&mix, s))
            .collect();
        assert_eq!(writes, (0..writes.len() as u64).collect::<Vec<_>>());
    }

    #[test]
    fn reads_fetch_a_partition_being_filled_or_the_one_before() {
        let layout = Layout {
            rows_per_partition: 100,
        };
        let writes = 8 * 450 + 3; // sources 0..3 have 451 rows, the others 450
        let mut seen = BTreeMap::new();
        for seq in 0..2000 {
            let p = layout.read(writes, &mut request_rng(9, seq));
            *seen.entry(p.bucket).or_insert(0) += 1;
            assert!((0..8).contains(&p.source));
        }
        // Latest row of every source is in bucket 4 (rows 400..499): buckets 4 and 3 only.
        assert_eq!(seen.keys().copied().collect::<Vec<_>>(), vec![3, 4]);
        // Before any write, the first bucket.
        let p = layout.read(0, &mut request_rng(9, 1));
        assert_eq!(p.bucket, 0);
        assert_eq!(
            layout.read(writes, &mut request_rng(9, 5)),
            layout.read(writes, &mut request_rng(9, 5))
        );
    }
}
