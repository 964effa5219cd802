//! The Java HdrHistogram tools read headroom's exports: `HistogramLogProcessor` (from
//! org.hdrhistogram:HdrHistogram on Maven Central) processes an `.hlog` written by
//! `HlogWriter`, and its percentiles, counts and `.hgrm` distribution must be the ones headroom
//! computes from the same histograms.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use headroom::cluster::jars;
use headroom::cluster::java::Java;
use headroom::results::hgrm::write_percentiles;
use headroom::results::hlog::HlogWriter;

use crate::support;

/// The HdrHistogram release whose tools the exports must satisfy.
const HDR_HISTOGRAM_VERSION: &str = "2.2.2";

/// The same pinned plugin release that fetches Cassandra's jars.
const DEPENDENCY_PLUGIN: &str = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1";

/// The percentiles the processor prints per interval, then for all intervals so far.
const INTERVAL_PERCENTILES: [f64; 2] = [50.0, 90.0];
const TOTAL_PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// Both tags of the log, each processed on its own: HistogramLogProcessor reads one tag a run.
const TAGS: [&str; 2] = ["reads", "writes"];

#[test]
fn java_histogram_log_processor_reads_our_hlog() {
    let _machine = support::exclusive();
    let jar = hdr_histogram_jar();
    let java = Java::find()
        .expect("a JDK to run the HdrHistogram tools")
        .path;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hdr-tools");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();

    // 2024-05-01T00:00:00.250Z: fixed, so that failures repeat.
    let start = UNIX_EPOCH + Duration::from_millis(1_714_521_600_250);
    let log_path = dir.join("run.hlog");
    let intervals = sample_intervals();
    {
        let mut log = HlogWriter::create(&log_path, start).unwrap();
        for interval in &intervals {
            log.write_interval(
                Some(interval.tag),
                interval.offset,
                interval.length,
                &interval.histogram,
            )
            .unwrap();
        }
    }

    let listed = run_java(
        &java,
        &jar,
        &["-i", log_path.to_str().unwrap(), "-listtags"],
    );
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        ["Tags found in input file:", "reads", "writes"],
        "{listed}"
    );

    for tag in TAGS {
        let ours: Vec<&Interval> = intervals.iter().filter(|i| i.tag == tag).collect();
        let out_prefix = dir.join(tag);
        run_java(
            &java,
            &jar,
            &[
                "-i",
                log_path.to_str().unwrap(),
                "-o",
                out_prefix.to_str().unwrap(),
                "-tag",
                tag,
                "-outputValueUnitRatio",
                "1000000",
                "-percentilesOutputTicksPerHalf",
                "5",
            ],
        );
        let interval_log = fs::read_to_string(&out_prefix).unwrap();
        check_start_time(&interval_log, start);
        let rows = parse_interval_rows(&interval_log);
        assert_eq!(
            rows.len(),
            ours.len(),
            "one row per {tag} interval:\n{interval_log}"
        );

        let mut total = Histogram::<u64>::new_from(&ours[0].histogram);
        for (row, interval) in rows.iter().zip(&ours) {
            total.add(&interval.histogram).unwrap();
            let context = format!("{tag} interval at {:?}: {row:?}", interval.offset);
            let end = (interval.offset + interval.length).as_secs_f64();
            assert!((row.end_seconds - end).abs() <= 0.002, "{context}");

            // The counts show that Java decoded every histogram whole.
            assert_eq!(row.interval_count, interval.histogram.len(), "{context}");
            assert_eq!(row.total_count, total.len(), "{context}");

            let h = &interval.histogram;
            let expected: Vec<f64> = INTERVAL_PERCENTILES
                .iter()
                .map(|&p| percentile_ms(h, p))
                .chain([max_ms(h)])
                .collect();
            assert_close(&row.interval, &expected, &context);
            let expected: Vec<f64> = TOTAL_PERCENTILES
                .iter()
                .map(|&p| percentile_ms(&total, p))
                .chain([max_ms(&total)])
                .collect();
            assert_close(&row.total, &expected, &context);
        }
        eprintln!(
            "{tag}: Java's first interval row: {}\n{tag}: ours: count {}, p50/p90/max {:.3}/{:.3}/{:.3} ms",
            interval_log
                .lines()
                .find(|l| l.contains(": I:"))
                .unwrap_or_default(),
            ours[0].histogram.len(),
            percentile_ms(&ours[0].histogram, 50.0),
            percentile_ms(&ours[0].histogram, 90.0),
            max_ms(&ours[0].histogram),
        );

        // The overall distribution Java printed is, row for row, the one we write.
        let java_hgrm = fs::read_to_string(format!("{}.hgrm", out_prefix.display())).unwrap();
        let java_distribution = java_hgrm
            .find("       Value     Percentile")
            .map(|at| &java_hgrm[at..])
            .unwrap_or_else(|| panic!("no distribution in Java's .hgrm:\n{java_hgrm}"));
        let mut ours_hgrm = Vec::new();
        write_percentiles(&mut ours_hgrm, &total, 5, 1e6).unwrap();
        let ours_hgrm = String::from_utf8(ours_hgrm).unwrap();
        assert_same_lines(java_distribution, &ours_hgrm, tag);
        assert!(
            java_distribution.contains(&format!("Total count    = {:>12}]", total.len())),
            "{java_distribution}"
        );
    }
}

/// The HdrHistogram jar, fetched from Maven Central with the machine's Maven on first use and
/// cached under headroom's cache (tools/), so later runs need no network.
pub(crate) fn hdr_histogram_jar() -> PathBuf {
    let tools = jars::cache_root().join("tools");
    let jar = tools.join(format!("HdrHistogram-{HDR_HISTOGRAM_VERSION}.jar"));
    if jar.is_file() {
        return jar;
    }
    fs::create_dir_all(&tools).unwrap();
    // Fetch into a folder of our own and rename the jar into place, so that an interrupted
    // fetch never leaves a partial jar where the next run would take it for a complete one.
    let partial = tempfile::Builder::new()
        .prefix("HdrHistogram.partial-")
        .tempdir_in(&tools)
        .unwrap();
    let mvn = jars::find_maven().expect("Maven (mvn) to fetch the HdrHistogram jar");
    let output = Command::new(&mvn)
        .current_dir(partial.path())
        .arg("-B")
        .arg("-q")
        .arg(format!("{DEPENDENCY_PLUGIN}:copy"))
        .arg(format!(
            "-Dartifact=org.hdrhistogram:HdrHistogram:{HDR_HISTOGRAM_VERSION}"
        ))
        .arg(format!("-DoutputDirectory={}", partial.path().display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let fetched = partial.path().join(jar.file_name().unwrap());
    assert!(
        output.status.success() && fetched.is_file(),
        "{} could not fetch HdrHistogram {HDR_HISTOGRAM_VERSION}:\n{}{}",
        mvn.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if let Err(e) = fs::rename(&fetched, &jar) {
        // Another run may have put it there first.
        assert!(
            jar.is_file(),
            "moving {} into place: {e}",
            fetched.display()
        );
    }
    jar
}

/// Runs HistogramLogProcessor and returns what it printed; it must succeed without a word on
/// standard error (it reports lines it cannot parse there).
pub(crate) fn run_java(java: &Path, jar: &Path, args: &[&str]) -> String {
    let output = Command::new(java)
        .arg("-cp")
        .arg(jar)
        .arg("org.HdrHistogram.HistogramLogProcessor")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The JVM's own notices (e.g. "Picked up JAVA_TOOL_OPTIONS: ...") are not the tool's.
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("Picked up ") && !l.trim().is_empty())
        .collect();
    eprintln!(
        "$ {} -cp {} org.HdrHistogram.HistogramLogProcessor {}",
        java.display(),
        jar.display(),
        args.join(" ")
    );
    assert!(
        output.status.success() && complaints.is_empty(),
        "HistogramLogProcessor failed ({}):\n{stdout}{stderr}",
        output.status
    );
    stdout
}

/// One interval of the sample log.
struct Interval {
    tag: &'static str,
    offset: Duration,
    length: Duration,
    histogram: Histogram<u64>,
}

/// Six one-second intervals per tag, their lines interleaved as a run writes them. Reads:
/// 20 000 latencies mostly 0.2-2 ms, 1% at 5-50 ms and a few at 100-500 ms. Writes: 5 000
/// latencies at 1-5 ms, 0.2% at 20-80 ms; one idle second records nothing.
fn sample_intervals() -> Vec<Interval> {
    let mut random = SplitMix64(0x5eed_1e55_c0ff_ee00);
    let mut intervals = Vec::new();
    for second in 0..6_u64 {
        let mut reads = latency_histogram();
        for _ in 0..20_000 {
            let u = random.unit();
            let ns = if u < 0.0005 {
                random.log_uniform(100e6, 500e6)
            } else if u < 0.01 {
                random.log_uniform(5e6, 50e6)
            } else {
                random.log_uniform(0.2e6, 2e6 + second as f64 * 0.1e6)
            };
            reads.record(ns).unwrap();
        }
        let mut writes = latency_histogram();
        if second != 3 {
            for _ in 0..5_000 {
                let ns = if random.unit() < 0.002 {
                    random.log_uniform(20e6, 80e6)
                } else {
                    random.log_uniform(1e6, 5e6)
                };
                writes.record(ns).unwrap();
            }
        }
        for (tag, histogram) in [("reads", reads), ("writes", writes)] {
            intervals.push(Interval {
                tag,
                offset: Duration::from_secs(second),
                length: Duration::from_secs(1),
                histogram,
            });
        }
    }
    intervals
}

/// Nanosecond latencies from 1 ns to a minute at 3 significant digits.
fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).unwrap()
}

/// A small deterministic generator, enough for test data.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// Between `low` and `high`, uniform in the logarithm (as latencies roughly are).
    fn log_uniform(&mut self, low: f64, high: f64) -> u64 {
        (low.ln() + self.unit() * (high.ln() - low.ln())).exp() as u64
    }
}

/// The value at `percentile`, in ms, by headroom's rule (which must be Java's).
fn percentile_ms(h: &Histogram<u64>, percentile: f64) -> f64 {
    headroom::stats::value_at_percentile(h, percentile) as f64 / 1e6
}

fn max_ms(h: &Histogram<u64>) -> f64 {
    h.max() as f64 / 1e6
}

/// One row of the processor's interval log:
/// `%4.3f: I:%d ( %7.3f %7.3f %7.3f ) T:%d ( %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f )`, the end
/// of the interval in seconds since StartTime, the interval's count, p50, p90 and max, then the
/// same for all intervals so far with p50, p90, p99, p99.9, p99.99 and max.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) end_seconds: f64,
    pub(crate) interval_count: u64,
    pub(crate) interval: Vec<f64>,
    pub(crate) total_count: u64,
    pub(crate) total: Vec<f64>,
}

pub(crate) fn parse_interval_rows(text: &str) -> Vec<Row> {
    text.lines()
        .filter(|line| line.contains(": I:"))
        .map(|line| {
            let fields: Vec<&str> = line
                .split_whitespace()
                .filter(|f| *f != "(" && *f != ")")
                .collect();
            let number = |s: &str| -> f64 {
                s.parse()
                    .unwrap_or_else(|_| panic!("{s:?} is not a number in {line:?}"))
            };
            let count = |s: &str, prefix: &str| -> u64 {
                s.strip_prefix(prefix)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("no {prefix} count in {line:?}"))
            };
            assert_eq!(fields.len(), 12, "{line:?}");
            Row {
                end_seconds: number(fields[0].trim_end_matches(':')),
                interval_count: count(fields[1], "I:"),
                interval: fields[2..5].iter().map(|f| number(f)).collect(),
                total_count: count(fields[5], "T:"),
                total: fields[6..12].iter().map(|f| number(f)).collect(),
            }
        })
        .collect()
}

/// Java read our StartTime (it prints it at the top of its own outputs).
fn check_start_time(text: &str, start: SystemTime) {
    let seconds = start.duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    let line = text
        .lines()
        .find(|l| l.starts_with("#[StartTime: "))
        .unwrap_or_else(|| panic!("no StartTime in Java's output:\n{text}"));
    let printed: f64 = line["#[StartTime: ".len()..]
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no seconds in {line:?}"));
    assert!((printed - seconds).abs() < 0.0005, "{line} vs {seconds}");
}

/// Java's numbers, printed with 3 decimals, against ours: equal within HdrHistogram's
/// precision (3 significant digits: 0.1%) plus the rounding of the printed decimals.
fn assert_close(java: &[f64], ours: &[f64], context: &str) {
    assert_eq!(java.len(), ours.len(), "{context}");
    for (j, o) in java.iter().zip(ours) {
        let tolerance = o.abs() * 0.001 + 0.0005 + 1e-9;
        assert!(
            (j - o).abs() <= tolerance,
            "Java printed {j}, we computed {o} ({context}); all: Java {java:?}, ours {ours:?}"
        );
    }
}

/// The two texts line by line, naming the first line that differs.
pub(crate) fn assert_same_lines(java: &str, ours: &str, tag: &str) {
    let java_lines: Vec<&str> = java.lines().collect();
    let our_lines: Vec<&str> = ours.lines().collect();
    for (number, (j, o)) in java_lines.iter().zip(&our_lines).enumerate() {
        assert_eq!(
            j,
            o,
            "{tag}: line {} of the distribution differs.\nJava's:\n{java}\nours:\n{ours}",
            number + 1
        );
    }
    assert_eq!(
        java_lines.len(),
        our_lines.len(),
        "{tag}: Java's distribution has {} lines, ours {}.\nJava's:\n{java}\nours:\n{ours}",
        java_lines.len(),
        our_lines.len()
    );
}
