//! HdrHistogram interval logs (`.hlog`, format version 1.3): one line per interval and tag,
//! each carrying the interval's full histogram, as Java's `HistogramLogWriter` writes them and
//! `HistogramLogReader`, `HistogramLogProcessor` and HistogramLogAnalyzer read them.
//!
//! ```text
//! #[Logged with headroom 0.1.0]
//! #[Histogram log format version 1.3]
//! #[StartTime: 1700000000.123 (seconds since epoch), Tue Nov 14 22:13:20 UTC 2023]
//! #[BaseTime: 1700000000.123 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! Tag=reads,0.000,1.000,428.605,HISTFAAACHJ4nC2Xv45lRxHG79T29rR7amt7a5ve...
//! ```
//!
//! Recorded values are nanoseconds; the max column is in milliseconds, as Java's writer reports
//! it by default. Interval start times are seconds since the StartTime.
//!
//! The header is written here rather than with the crate's `IntervalLogWriterBuilder`: that
//! builder writes neither the format version nor the legend, leaves the date off the StartTime
//! line, adds a `#[MaxValueDivisor: ...]` line that Java's writer never writes, and does not
//! flush after each interval.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use flate2::{Compress, Compression, FlushCompress, Status};
use hdrhistogram::serialization::{Serializer as _, V2Serializer};
use hdrhistogram::Histogram;

use super::java_format::fixed;

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;

/// Writes an HdrHistogram interval log.
///
/// Each interval line holds the histogram in the compressed (DEFLATE) V2 encoding, base64: the
/// encoding Java's reader decodes (it refuses the uncompressed one).
pub struct HlogWriter<W: Write> {
    out: W,
    serializer: DeflateV2,
    encoded: Vec<u8>,
    line: String,
}

/// The cookie of the compressed V2 encoding (HdrHistogram's `V2CompressedEncodingCookieBase`
/// with the word size 0x10), as Java's reader and the crate's deserializer expect it.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;

/// The compressed V2 encoding of a histogram, byte for byte what the crate's
/// `V2DeflateSerializer` writes (zlib, level 6, around the plain V2 encoding), but keeping its
/// deflate state and buffers from one histogram to the next. The crate's serializer builds a
/// new deflate state, some hundreds of kB to allocate and clear, for every histogram, a few
/// each interval: a fixed cost per interval that a run with 10 ms intervals pays a hundred
/// times a second.
struct DeflateV2 {
    plain: V2Serializer,
    uncompressed: Vec<u8>,
    deflate: Compress,
}

impl DeflateV2 {
    fn new() -> Self {
        DeflateV2 {
            plain: V2Serializer::new(),
            uncompressed: Vec::new(),
            deflate: Compress::new(Compression::default(), true),
        }
    }

    /// Replaces `out` with the encoding of `histogram`.
    fn encode(&mut self, histogram: &Histogram<u64>, out: &mut Vec<u8>) -> io::Result<()> {
        self.uncompressed.clear();
        self.plain
            .serialize(histogram, &mut self.uncompressed)
            .map_err(|e| io::Error::other(format!("encoding a histogram: {e:?}")))?;
        out.clear();
        out.extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        // The compressed length, filled in below.
        out.extend_from_slice(&[0; 4]);
        self.deflate.reset();
        loop {
            let consumed = self.deflate.total_in() as usize;
            out.reserve((self.uncompressed.len() - consumed) / 2 + 64);
            let status = self
                .deflate
                .compress_vec(&self.uncompressed[consumed..], out, FlushCompress::Finish)
                .map_err(|e| io::Error::other(format!("compressing a histogram: {e}")))?;
            if status == Status::StreamEnd {
                break;
            }
        }
        let compressed = u32::try_from(out.len() - 8)
            .map_err(|_| io::Error::other("a histogram too large to encode"))?;
        out[4..8].copy_from_slice(&compressed.to_be_bytes());
        Ok(())
    }
}

impl HlogWriter<BufWriter<File>> {
    /// Creates (or truncates) the file at `path` and writes the log's header. `start` is the
    /// moment interval offsets count from, usually when the run began.
    pub fn create(path: &Path, start: SystemTime) -> io::Result<Self> {
        let file = File::create(path)?;
        HlogWriter::new(BufWriter::new(file), start)
    }
}

impl<W: Write> HlogWriter<W> {
    /// Writes the log's header to `out`: the writer's name and version, the format version,
    /// the StartTime and BaseTime (both `start`) and the column legend.
    ///
    /// BaseTime makes the interval timestamps explicitly relative to `start`. Without it Java's
    /// reader has to guess, and guesses "relative" only for timestamps more than a year
    /// smaller than the StartTime.
    ///
    /// Returns an error of kind `InvalidInput` when `start` is before 1970.
    pub fn new(mut out: W, start: SystemTime) -> io::Result<Self> {
        let since_epoch = start.duration_since(UNIX_EPOCH).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the log's start time is before 1970",
            )
        })?;
        let seconds = seconds_with_millis(since_epoch);
        let header = format!(
            "#[Logged with headroom {version}]\n\
             #[Histogram log format version 1.3]\n\
             #[StartTime: {seconds} (seconds since epoch), {date}]\n\
             #[BaseTime: {seconds} (seconds since epoch)]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
            version = env!("CARGO_PKG_VERSION"),
            date = java_date(since_epoch),
        );
        out.write_all(header.as_bytes())?;
        out.flush()?;
        Ok(HlogWriter {
            out,
            serializer: DeflateV2::new(),
            encoded: Vec::new(),
            line: String::new(),
        })
    }

    /// One interval line: start offset from `start` (seconds, 3 decimals), length (seconds),
    /// max in ms (value/1e6), the histogram in V2 *compressed* (DEFLATE) encoding, base64;
    /// tagged lines begin "Tag=<tag>,". Flushes after each line so a crash keeps finished
    /// intervals.
    ///
    /// A tag must be non-empty and free of commas, `=`, whitespace and control characters;
    /// otherwise this returns an error of kind `InvalidInput` and writes nothing.
    pub fn write_interval(
        &mut self,
        tag: Option<&str>,
        offset: Duration,
        length: Duration,
        histogram: &Histogram<u64>,
    ) -> io::Result<()> {
        if let Some(tag) = tag {
            check_tag(tag)?;
        }
        self.serializer.encode(histogram, &mut self.encoded)?;
        self.line.clear();
        if let Some(tag) = tag {
            self.line.push_str("Tag=");
            self.line.push_str(tag);
            self.line.push(',');
        }
        self.line.push_str(&seconds_with_millis(offset));
        self.line.push(',');
        self.line.push_str(&seconds_with_millis(length));
        self.line.push(',');
        self.line
            .push_str(&fixed(histogram.max() as f64 / 1_000_000.0, 3));
        self.line.push(',');
        base64::engine::general_purpose::STANDARD.encode_string(&self.encoded, &mut self.line);
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())?;
        self.out.flush()
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Refuses tags that would break the line apart for a reader: Java's splits fields at commas,
/// spaces and line breaks, and `Tag=` introduces the tag.
fn check_tag(tag: &str) -> io::Result<()> {
    let bad = tag.is_empty()
        || tag
            .chars()
            .any(|c| c == ',' || c == '=' || c.is_whitespace() || c.is_control());
    if bad {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "histogram log tag {tag:?} must be non-empty and free of commas, '=', \
                 whitespace and control characters"
            ),
        ));
    }
    Ok(())
}

/// Seconds with three decimals, the millisecond rounded half up (as Java's `%.3f` does).
fn seconds_with_millis(duration: Duration) -> String {
    let millis = (duration.as_nanos() + 500_000) / 1_000_000;
    format!("{}.{:03}", millis / 1000, millis % 1000)
}

/// The date as Java's `Date.toString()` writes it, in UTC: `Tue Nov 14 22:13:20 UTC 2023`.
fn java_date(since_epoch: Duration) -> String {
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let seconds = since_epoch.as_secs();
    let days = seconds / 86_400;
    let of_day = seconds % 86_400;
    let (year, month, day) = civil_date(days);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        WEEKDAYS[(days % 7) as usize],
        MONTHS[month as usize - 1],
        day,
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60,
        year
    )
}

/// Year, month (1-12) and day (1-31) of the `days`-th day after 1970-01-01, in the proleptic
/// Gregorian calendar.
fn civil_date(days: u64) -> (u64, u64, u64) {
    // Count from 0000-03-01, so that the leap day closes each year, in 400-year cycles of
    // 146 097 days. 1970-01-01 is day 719 468 of that count.
    let days = days + 719_468;
    let cycle = days / 146_097;
    let day_of_cycle = days % 146_097;
    // Years of 365 days, corrected for the leap days of the 4-, 100- and 400-year rules.
    let year_of_cycle =
        (day_of_cycle - day_of_cycle / 1460 + day_of_cycle / 36_524 - day_of_cycle / 146_096) / 365;
    let day_of_year =
        day_of_cycle - (365 * year_of_cycle + year_of_cycle / 4 - year_of_cycle / 100);
    // Months from March: 31 30 31 30 31 31 30 31 30 31 31 29/28, in 153-day five-month runs.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = cycle * 400 + year_of_cycle + u64::from(month <= 2);
    (year, month, day)
}

/// The tag of the client's hiccup meter.
pub const HICCUP_TAG: &str = "client.hiccup";

/// One decoded interval of an HdrHistogram interval log.
pub struct LoggedInterval<'a> {
    /// The interval's tag.
    pub tag: &'a str,
    /// Start, seconds since the log's start time.
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// Its values.
    pub histogram: Histogram<u64>,
}

/// Decodes the intervals of an interval log whose tag `keep` accepts, handing each to `each`
/// in file order. Reading stops at a line that does not parse (a crash can tear the last
/// one), with a note naming `file`; histograms that cannot be decoded are counted in a note.
pub fn for_each_interval(
    bytes: &[u8],
    file: &str,
    notes: &mut Vec<String>,
    keep: impl Fn(&str) -> bool,
    mut each: impl FnMut(LoggedInterval<'_>),
) {
    let mut deserializer = Deserializer::new();
    let mut undecodable = 0;
    for entry in IntervalLogIterator::new(bytes) {
        let interval = match entry {
            Ok(LogEntry::Interval(interval)) => interval,
            Ok(_) => continue,
            Err(_) => {
                notes.push(format!(
                    "{file} ends in a line that could not be read (the run may have been cut \
                     short); the intervals before it are shown."
                ));
                break;
            }
        };
        let Some(tag) = interval.tag().map(|t| t.as_str()) else {
            continue;
        };
        if !keep(tag) {
            continue;
        }
        let decoded: Option<Histogram<u64>> = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .ok()
            .and_then(|raw| deserializer.deserialize(&mut &raw[..]).ok());
        let Some(histogram) = decoded else {
            undecodable += 1;
            continue;
        };
        each(LoggedInterval {
            tag,
            start_s: interval.start_timestamp().as_secs_f64(),
            length_s: interval.duration().as_secs_f64(),
            histogram,
        });
    }
    if undecodable > 0 {
        notes.push(format!(
            "{file}: {undecodable} histogram(s) could not be decoded and were left out."
        ));
    }
}

/// One interval of an HdrHistogram interval log, its histogram still encoded: a whole log
/// held this way takes the file's size, not its histograms' (see [`encoded_intervals`]).
pub struct EncodedInterval<'a> {
    /// The interval's tag.
    pub tag: String,
    /// Start, seconds since the log's start time.
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    encoded: &'a str,
}

impl EncodedInterval<'_> {
    /// Its histogram; `None` when it does not decode.
    pub fn decode(&self) -> Option<Histogram<u64>> {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(self.encoded)
            .ok()?;
        Deserializer::new().deserialize(&mut &raw[..]).ok()
    }
}

/// The tagged intervals of an interval log, in file order, their histograms encoded. A line
/// that does not parse ends the reading with a note naming `file` (a crash can tear the
/// last one).
pub fn encoded_intervals<'a>(
    bytes: &'a [u8],
    file: &str,
    notes: &mut Vec<String>,
) -> Vec<EncodedInterval<'a>> {
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(bytes) {
        match entry {
            Ok(LogEntry::Interval(interval)) => {
                let Some(tag) = interval.tag() else { continue };
                intervals.push(EncodedInterval {
                    tag: tag.as_str().to_string(),
                    start_s: interval.start_timestamp().as_secs_f64(),
                    length_s: interval.duration().as_secs_f64(),
                    encoded: interval.encoded_histogram(),
                });
            }
            Ok(_) => continue,
            Err(_) => {
                notes.push(format!(
                    "{file} ends in a line that could not be read (the run may have been cut short)"
                ));
                break;
            }
        }
    }
    intervals
}

/// Whether a histograms.hlog tag holds measured response times (`<op>.rt`).
pub fn is_measured_response_tag(tag: &str) -> bool {
    tag.ends_with(".rt") && !tag.starts_with("warmup.")
}

#[cfg(test)]
mod tests {
    /// The kept deflate state encodes every histogram as the crate's serializer does, byte
    /// for byte, one after another: empty, one value, wide ranges, large counts.
    #[test]
    fn the_kept_encoder_writes_what_the_crates_serializer_writes() {
        use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
        use rand::{Rng, SeedableRng};
        let mut ours = DeflateV2::new();
        let mut theirs = V2DeflateSerializer::new();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut histograms = vec![crate::stats::new_histogram()];
        for n in [1usize, 10, 1_000, 100_000] {
            let mut h = crate::stats::new_histogram();
            for _ in 0..n {
                let exponent = rng.random_range(0..40);
                h.record(rng.random_range(1..=(1u64 << exponent).max(2)))
                    .unwrap();
            }
            histograms.push(h);
        }
        let mut big = crate::stats::new_histogram();
        big.record_n(1_000_000, 1 << 40).unwrap();
        big.record_n(3, u64::MAX >> 20).unwrap();
        histograms.push(big);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for h in histograms.iter().chain(histograms.iter().rev()) {
            ours.encode(h, &mut a).unwrap();
            b.clear();
            theirs.serialize(h, &mut b).unwrap();
            assert_eq!(a, b, "a histogram of {} values", h.len());
        }
    }

    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;

    use super::*;

    fn start() -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(1_700_000_000_123)
    }

    fn histogram(values_micros: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for micros in values_micros {
            h.record(micros * 1_000).unwrap();
        }
        h
    }

    #[test]
    fn the_header_is_javas() {
        let writer = HlogWriter::new(Vec::new(), start()).unwrap();
        let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
        assert_eq!(
            text,
            format!(
                "#[Logged with headroom {}]\n\
                 #[Histogram log format version 1.3]\n\
                 #[StartTime: 1700000000.123 (seconds since epoch), Tue Nov 14 22:13:20 UTC 2023]\n\
                 #[BaseTime: 1700000000.123 (seconds since epoch)]\n\
                 \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
                env!("CARGO_PKG_VERSION")
            )
        );
    }

    #[test]
    fn intervals_read_back_with_their_tags_times_and_counts() {
        let reads = histogram(1..=1000);
        let writes = histogram([5_000, 7_000, 12_583]);
        let untagged = histogram(std::iter::empty());
        let mut writer = HlogWriter::new(Vec::new(), start()).unwrap();
        let second = Duration::from_secs(1);
        writer
            .write_interval(Some("reads"), Duration::ZERO, second, &reads)
            .unwrap();
        writer
            .write_interval(Some("writes"), Duration::from_millis(1), second, &writes)
            .unwrap();
        writer
            .write_interval(
                None,
                Duration::from_micros(2_000_600),
                second / 2,
                &untagged,
            )
            .unwrap();
        let log = writer.into_inner().unwrap();

        let entries: Vec<LogEntry> = IntervalLogIterator::new(&log)
            .collect::<Result<_, _>>()
            .unwrap();
        let since_epoch = Duration::from_millis(1_700_000_000_123);
        assert_eq!(entries[0], LogEntry::StartTime(since_epoch));
        assert_eq!(entries[1], LogEntry::BaseTime(since_epoch));
        let intervals: Vec<_> = entries[2..]
            .iter()
            .map(|entry| match entry {
                LogEntry::Interval(interval) => interval,
                other => panic!("not an interval: {other:?}"),
            })
            .collect();
        assert_eq!(intervals.len(), 3);
        let mut deserializer = Deserializer::new();
        let expected = [
            (Some("reads"), 0, 1000, &reads),
            (Some("writes"), 1, 1000, &writes),
            (None, 2001, 500, &untagged),
        ];
        for (interval, (tag, offset_ms, length_ms, original)) in intervals.iter().zip(expected) {
            assert_eq!(interval.tag().map(|t| t.as_str()), tag);
            assert_eq!(interval.start_timestamp(), Duration::from_millis(offset_ms));
            assert_eq!(interval.duration(), Duration::from_millis(length_ms));
            let max_ms = fixed(original.max() as f64 / 1e6, 3);
            assert_eq!(interval.max(), max_ms.parse::<f64>().unwrap());
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(interval.encoded_histogram())
                .unwrap();
            // The compressed V2 cookie: the only encoding Java's log reader accepts.
            assert_eq!(bytes[..4], [0x1c, 0x84, 0x93, 0x14]);
            let decoded: Histogram<u64> = deserializer.deserialize(&mut &bytes[..]).unwrap();
            assert_eq!(decoded.len(), original.len());
            assert_eq!(decoded, *original);
        }
        // 1 ms and 12.583 ms as their buckets' highest equivalent values.
        assert_eq!(intervals[0].max(), 1.0);
        assert_eq!(intervals[1].max(), 12.591);
    }

    #[test]
    fn bad_tags_are_refused_and_write_nothing() {
        let mut writer = HlogWriter::new(Vec::new(), start()).unwrap();
        let header_len = writer.out.len();
        let h = histogram([1, 2, 3]);
        for tag in ["", "a,b", "a b", "a=b", "a\nb", "a\tb"] {
            let err = writer
                .write_interval(Some(tag), Duration::ZERO, Duration::from_secs(1), &h)
                .unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{tag:?}");
        }
        assert_eq!(writer.out.len(), header_len);
        writer
            .write_interval(
                Some("read-latency_1.x"),
                Duration::ZERO,
                Duration::from_secs(1),
                &h,
            )
            .unwrap();
        assert!(writer.out.len() > header_len);
    }

    #[test]
    fn a_start_before_1970_is_refused() {
        let before = UNIX_EPOCH - Duration::from_secs(1);
        let err = HlogWriter::new(Vec::new(), before).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn times_round_to_the_millisecond() {
        assert_eq!(seconds_with_millis(Duration::ZERO), "0.000");
        assert_eq!(seconds_with_millis(Duration::from_micros(1_499)), "0.001");
        assert_eq!(seconds_with_millis(Duration::from_micros(1_500)), "0.002");
        assert_eq!(
            seconds_with_millis(Duration::from_micros(999_999_600)),
            "1000.000"
        );
        assert_eq!(
            seconds_with_millis(Duration::from_millis(3_600_250)),
            "3600.250"
        );
    }

    #[test]
    fn dates_read_as_javas_date_to_string_in_utc() {
        let at = |secs| java_date(Duration::from_secs(secs));
        assert_eq!(at(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(at(951_782_400), "Tue Feb 29 00:00:00 UTC 2000");
        assert_eq!(at(1_700_000_000), "Tue Nov 14 22:13:20 UTC 2023");
        assert_eq!(at(1_709_251_199), "Thu Feb 29 23:59:59 UTC 2024");
        assert_eq!(at(4_102_444_800), "Fri Jan 01 00:00:00 UTC 2100");
    }
}
