//! YCSB's property files and `-p KEY=VALUE`: reading them as `java.util.Properties` does,
//! layering them as YCSB's client does (the core workload, then the `-P` files in order,
//! then `-p`), and sorting their keys into those headroom uses, those it ignores (about
//! YCSB's own runner or another database binding) and those it refuses.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::workload::common::error::WorkloadError;
use crate::workload::common::request::WorkloadRequest;

/// Where a property's value came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// One of YCSB's core workload files, chosen by `--workload`.
    Core(char),
    /// A line of a `-P` file.
    File {
        /// The file as given.
        path: PathBuf,
        /// The line the entry starts on, from 1.
        line: usize,
    },
    /// A `-p KEY=VALUE` flag.
    CommandLine,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Core(letter) => write!(f, "--workload {letter}"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::CommandLine => write!(f, "-p"),
        }
    }
}

/// A property's value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// The value as written (escapes resolved, surrounding spaces removed).
    pub value: String,
    /// Where it was set (the last place, when set several times).
    pub origin: Origin,
}

/// YCSB's six core workloads: the keys and values of its files workloads/workloada to
/// workloadf (their comments left out).
const CORE_WORKLOADS: [(char, &str); 6] = [
    (
        'a',
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\n\
         insertproportion=0\nrequestdistribution=zipfian\n",
    ),
    (
        'b',
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0.95\nupdateproportion=0.05\nscanproportion=0\n\
         insertproportion=0\nrequestdistribution=zipfian\n",
    ),
    (
        'c',
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=1\nupdateproportion=0\nscanproportion=0\n\
         insertproportion=0\nrequestdistribution=zipfian\n",
    ),
    (
        'd',
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0.95\nupdateproportion=0\nscanproportion=0\n\
         insertproportion=0.05\nrequestdistribution=latest\n",
    ),
    (
        'e',
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0\nupdateproportion=0\nscanproportion=0.95\n\
         insertproportion=0.05\nrequestdistribution=zipfian\nmaxscanlength=100\n\
         scanlengthdistribution=uniform\n",
    ),
    (
        'f',
        "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\
         readallfields=true\nreadproportion=0.5\nupdateproportion=0\nscanproportion=0\n\
         insertproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian\n",
    ),
];

/// The keys headroom reads: CoreWorkload's and the Cassandra binding's consistency levels.
pub const SUPPORTED: &[&str] = &[
    "recordcount",
    "operationcount",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "zipfianconstant",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "fieldcount",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "readallfields",
    "readallfieldsbyname",
    "writeallfields",
    "insertorder",
    "zeropadding",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "insertstart",
    "insertcount",
    "fieldnameprefix",
    "fieldlengthhistogram",
    "exponential.percentile",
    "exponential.frac",
    "table",
    "cassandra.readconsistencylevel",
    "cassandra.writeconsistencylevel",
];

/// YCSB keys whose behaviour headroom does not implement (docs/ycsb.md gives the reasons),
/// with YCSB's default: a file may state the default (it changes nothing), any other value
/// is refused.
const NOT_IMPLEMENTED: &[(&str, &str)] = &[
    ("dataintegrity", "false"),
    ("core_workload_insertion_retry_limit", "0"),
    ("core_workload_insertion_retry_interval", "3"),
    ("cassandra.tracing", "false"),
];

/// Keys about YCSB's own runner or the binding's connection, which headroom ignores, each
/// with what does the same in headroom.
const RUNNER: &[(&str, &str)] = &[
    ("workload", "headroom runs YCSB's CoreWorkload"),
    ("db", "headroom is the client, speaking CQL to Cassandra"),
    (
        "threadcount",
        "use --concurrency N, or --rate R for a fixed rate",
    ),
    ("target", "use --rate"),
    ("maxexecutiontime", "use --duration"),
    ("dotransactions", "use --phase load|run|both"),
    ("status.interval", "use --interval"),
    ("hosts", "use --hosts"),
    ("port", "use --hosts HOST:PORT"),
    ("debug", ""),
    ("cassandra.keyspace", "use --keyspace"),
    ("cassandra.username", "use --username"),
    ("cassandra.password", "use --password"),
    ("cassandra.maxconnections", "use --connections"),
    ("cassandra.coreconnections", "use --connections"),
    ("cassandra.connecttimeoutmillis", "use --timeout"),
    ("cassandra.readtimeoutmillis", "use --timeout"),
    (
        "cassandra.useSSL",
        "use --tls, with --tls-ca and the other --tls flags",
    ),
];

/// Prefixes of YCSB's measurement and export settings: headroom always records
/// HdrHistograms of every operation in the run directory.
const MEASUREMENT_PREFIXES: &[&str] = &[
    "measurement",
    "histogram.",
    "hdrhistogram.",
    "timeseries.",
    "exporter",
    "exportfile",
    "reportlatencyforeacherror",
    "latencytrackederrors",
];

/// What headroom does with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Supported,
    NotImplemented { default: &'static str },
    Runner { hint: &'static str },
    OtherBinding,
    Unknown,
}

fn kind_of(key: &str) -> Kind {
    if SUPPORTED.contains(&key) {
        return Kind::Supported;
    }
    if let Some((_, default)) = NOT_IMPLEMENTED.iter().find(|(k, _)| *k == key) {
        return Kind::NotImplemented { default };
    }
    if let Some((_, hint)) = RUNNER.iter().find(|(k, _)| *k == key) {
        return Kind::Runner { hint };
    }
    if MEASUREMENT_PREFIXES.iter().any(|p| key.starts_with(p)) {
        return Kind::Runner {
            hint: "headroom records HdrHistograms of every operation in the run directory",
        };
    }
    match key.split_once('.') {
        Some(("cassandra" | "exponential" | "core_workload", _)) | None => Kind::Unknown,
        Some(_) => Kind::OtherBinding,
    }
}

/// The properties of a YCSB workload, layered, by key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Properties {
    map: BTreeMap<String, Property>,
}

impl Properties {
    /// Layers the core workload of `--workload`, the `-P` files in order and the `-p
    /// KEY=VALUE` flags, each over the ones before; then checks every key, printing a
    /// one-line notice for each one ignored.
    pub fn from_args(args: &WorkloadRequest) -> Result<Properties, WorkloadError> {
        let mut props = Properties::default();
        if let Some(letter) = &args.ycsb_workload {
            props.add_core(letter)?;
        }
        for path in &args.property_files {
            props.add_file(path)?;
        }
        for p in &args.p {
            match p.split_once('=') {
                Some((key, value)) => props.set(key.trim(), value.trim(), Origin::CommandLine),
                None => {
                    return Err(WorkloadError::Invalid(format!(
                        "-p {p}: for ycsb, -p sets a property, KEY=VALUE (e.g. -p recordcount=100000); \
                         the number of keys is recordcount"
                    )))
                }
            }
        }
        if props.map.is_empty() && !args.property_files.is_empty() {
            let files: Vec<String> = args
                .property_files
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            return Err(WorkloadError::Invalid(format!(
                "-P {}: no property in it (every line is empty or a comment); a YCSB workload \
                 file sets at least workload=... and its proportions, as YCSB's workloads/workloada does",
                files.join(", -P ")
            )));
        }
        if props.map.is_empty() {
            return Err(WorkloadError::Invalid(
                "ycsb needs a workload: --workload a..f (YCSB's core workloads), -P FILE \
                 (a YCSB property file), or -p KEY=VALUE properties over CoreWorkload's defaults"
                    .into(),
            ));
        }
        for notice in props.check()? {
            eprintln!("{notice}");
        }
        Ok(props)
    }

    /// Adds YCSB's core workload `letter` (a to f).
    pub fn add_core(&mut self, letter: &str) -> Result<(), WorkloadError> {
        let wanted = letter.trim().to_ascii_lowercase();
        let wanted = wanted.strip_prefix("workload").unwrap_or(&wanted);
        let Some((letter, text)) = CORE_WORKLOADS
            .iter()
            .find(|(l, _)| wanted.len() == 1 && wanted.starts_with(*l))
        else {
            return Err(WorkloadError::Invalid(format!(
                "--workload {letter}: YCSB's core workloads are a, b, c, d, e and f"
            )));
        };
        for (key, value, _) in parse(text) {
            self.set(&key, &value, Origin::Core(*letter));
        }
        Ok(())
    }

    /// Adds the properties of the file at `path`.
    pub fn add_file(&mut self, path: &Path) -> Result<(), WorkloadError> {
        let text = crate::usage::read_input_file(path, "-P")
            .map_err(|e| WorkloadError::Invalid(e.to_string()))?;
        for (key, value, line) in parse(&text) {
            let origin = Origin::File {
                path: path.to_path_buf(),
                line,
            };
            self.set(&key, &value, origin);
        }
        Ok(())
    }

    /// Sets `key`, over any earlier value.
    pub fn set(&mut self, key: &str, value: &str, origin: Origin) {
        self.map.insert(
            key.to_string(),
            Property {
                value: value.trim().to_string(),
                origin,
            },
        );
    }

    /// The property `key`, if set.
    pub fn get(&self, key: &str) -> Option<&Property> {
        self.map.get(key)
    }

    /// Checks every key: the notices for keys ignored, or the error for the first key
    /// refused.
    pub fn check(&self) -> Result<Vec<String>, WorkloadError> {
        let mut notices = Vec::new();
        for (key, p) in &self.map {
            let at = &p.origin;
            match kind_of(key) {
                Kind::Supported => {}
                Kind::NotImplemented { default } if p.value == default => {}
                Kind::NotImplemented { .. } => {
                    return Err(WorkloadError::Invalid(format!(
                        "{at}: {key}={}: headroom does not implement YCSB's {key}; remove it \
                         (docs/ycsb.md says why)",
                        p.value
                    )))
                }
                // The core workloads name YCSB's runner class: nothing to say.
                Kind::Runner { .. } if matches!(at, Origin::Core(_)) => {}
                Kind::Runner { hint } => {
                    let hint = if hint.is_empty() {
                        String::new()
                    } else {
                        format!(" ({hint})")
                    };
                    notices.push(format!(
                        "Note: {at}: {key} is about YCSB's own runner; headroom ignores it{hint}"
                    ));
                }
                Kind::OtherBinding => notices.push(format!(
                    "Note: {at}: {key} is a setting of another YCSB database binding; headroom ignores it"
                )),
                Kind::Unknown => {
                    let suggestion = closest(key)
                        .map(|k| format!("; did you mean {k}?"))
                        .unwrap_or_default();
                    return Err(WorkloadError::Invalid(format!(
                        "{at}: {key} is not a YCSB CoreWorkload or Cassandra binding property{suggestion} \
                         (docs/ycsb.md lists those headroom reads)"
                    )));
                }
            }
        }
        Ok(notices)
    }
}

/// The known key nearest to `key` in spelling, if it is near enough to be a typo.
fn closest(key: &str) -> Option<&'static str> {
    let known = SUPPORTED
        .iter()
        .copied()
        .chain(NOT_IMPLEMENTED.iter().map(|(k, _)| *k))
        .chain(RUNNER.iter().map(|(k, _)| *k));
    known
        .map(|k| {
            (
                edit_distance(&key.to_ascii_lowercase(), &k.to_ascii_lowercase()),
                k,
            )
        })
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance, for suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Reads text in `java.util.Properties`' line format: entries `key=value`, `key: value` or
/// `key value`; lines starting with `#` or `!` are comments; a line ending in a backslash
/// continues on the next; backslash escapes (`\t`, `\n`, `\uXXXX`, `\=`...). Returns the
/// entries in order, each with the line it starts on. Like Java, it never fails: a line
/// without a separator is a key with an empty value.
pub fn parse(text: &str) -> Vec<(String, String, usize)> {
    let mut entries = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let first = line.trim_start();
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        let mut logical = first.to_string();
        while ends_in_continuation(&logical) {
            logical.pop();
            match lines.next() {
                Some((_, next)) => logical.push_str(next.trim_start()),
                None => break,
            }
        }
        let (key, value) = split_entry(&logical);
        entries.push((unescape(key), unescape(value), index + 1));
    }
    entries
}

/// Whether a line ends in an odd number of backslashes (an even number is escaped ones).
fn ends_in_continuation(line: &str) -> bool {
    line.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// Splits an entry at the first unescaped `=`, `:` or whitespace.
fn split_entry(line: &str) -> (&str, &str) {
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
            continue;
        }
        if c == '=' || c == ':' || c.is_whitespace() {
            let key = &line[..i];
            let mut rest = line[i + c.len_utf8()..].trim_start();
            // `key = value`: the separator may follow the spaces after the key.
            if c.is_whitespace() {
                if let Some(r) = rest.strip_prefix(['=', ':']) {
                    rest = r.trim_start();
                }
            }
            return (key, rest);
        }
    }
    (line, "")
}

/// Resolves backslash escapes.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Vec<(String, String, usize)> {
        parse(text)
    }

    fn e(key: &str, value: &str, line: usize) -> (String, String, usize) {
        (key.to_string(), value.to_string(), line)
    }

    #[test]
    fn the_java_properties_format() {
        let text = "# a comment\n\n   ! another\nrecordcount=1000\n  operationcount = 500\n\
                    table:usertable\nfieldcount 10\nempty\nlong=a\\\n    b\nreadallfields=true   \n\
                    escaped\\=key=x\\ty\nunicode=\\u0041\n";
        assert_eq!(
            entries(text),
            vec![
                e("recordcount", "1000", 4),
                e("operationcount", "500", 5),
                e("table", "usertable", 6),
                e("fieldcount", "10", 7),
                e("empty", "", 8),
                e("long", "ab", 9),
                e("readallfields", "true   ", 11),
                e("escaped=key", "x\ty", 12),
                e("unicode", "A", 13),
            ]
        );
    }

    #[test]
    fn later_sources_override_earlier_ones() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("first");
        let second = dir.path().join("second");
        std::fs::write(&first, "recordcount=10\nfieldcount=3\n").unwrap();
        std::fs::write(&second, "# over the first\nrecordcount=20\n").unwrap();
        let mut props = Properties::default();
        props.add_core("f").unwrap();
        props.add_file(&first).unwrap();
        props.add_file(&second).unwrap();
        assert_eq!(props.get("recordcount").unwrap().value, "20");
        assert_eq!(
            props.get("recordcount").unwrap().origin,
            Origin::File {
                path: second.clone(),
                line: 2
            }
        );
        assert_eq!(props.get("fieldcount").unwrap().value, "3");
        assert_eq!(
            props.get("readmodifywriteproportion").unwrap().origin,
            Origin::Core('f')
        );
        props.set("recordcount", "30", Origin::CommandLine);
        assert_eq!(props.get("recordcount").unwrap().value, "30");
        assert!(
            props.check().unwrap().is_empty(),
            "the core files say nothing"
        );
    }

    #[test]
    fn core_workloads_hold_ycsbs_values() {
        let value = |letter: &str, key: &str| {
            let mut props = Properties::default();
            props.add_core(letter).unwrap();
            props.get(key).map(|p| p.value.clone())
        };
        assert_eq!(value("a", "updateproportion").as_deref(), Some("0.5"));
        assert_eq!(value("b", "readproportion").as_deref(), Some("0.95"));
        assert_eq!(value("c", "readproportion").as_deref(), Some("1"));
        assert_eq!(value("d", "requestdistribution").as_deref(), Some("latest"));
        assert_eq!(value("d", "insertproportion").as_deref(), Some("0.05"));
        assert_eq!(value("e", "maxscanlength").as_deref(), Some("100"));
        assert_eq!(value("E", "scanproportion").as_deref(), Some("0.95"));
        assert_eq!(
            value("workloadf", "readmodifywriteproportion").as_deref(),
            Some("0.5")
        );
        for letter in ["a", "b", "c", "d", "e", "f"] {
            assert_eq!(value(letter, "recordcount").as_deref(), Some("1000"));
            assert_eq!(value(letter, "readallfields").as_deref(), Some("true"));
        }
        let mut props = Properties::default();
        let error = props.add_core("g").unwrap_err().to_string();
        assert!(
            error.contains("--workload g") && error.contains("a, b, c"),
            "{error}"
        );
    }

    fn check(text: &str) -> Result<Vec<String>, String> {
        let mut props = Properties::default();
        for (key, value, line) in parse(text) {
            let origin = Origin::File {
                path: PathBuf::from("w"),
                line,
            };
            props.set(&key, &value, origin);
        }
        props.check().map_err(|e| e.to_string())
    }

    #[test]
    fn keys_are_used_ignored_with_a_notice_or_refused() {
        let notices = check(
            "readproportion=1\nworkload=site.ycsb.workloads.CoreWorkload\nthreadcount=8\n\
             measurementtype=hdrhistogram\nmongodb.url=mongodb://x\ndataintegrity=false\n",
        )
        .unwrap();
        assert_eq!(notices.len(), 4, "{notices:?}");
        assert!(notices
            .iter()
            .any(|n| n.contains("w:3: threadcount") && n.contains("--concurrency")));
        assert!(notices
            .iter()
            .any(|n| n.contains("another YCSB database binding")));

        let error = check("recordcount=1\n\ndataintegrity=true\n").unwrap_err();
        assert!(error.starts_with("w:3: dataintegrity=true"), "{error}");
        assert!(error.contains("does not implement"), "{error}");

        let error = check("readproprtion=0.5\n").unwrap_err();
        assert!(error.contains("w:1: readproprtion"), "{error}");
        assert!(error.contains("did you mean readproportion?"), "{error}");
        let error = check("cassandra.readconsistency=ONE\n").unwrap_err();
        assert!(error.contains("not a YCSB"), "{error}");
    }

    #[test]
    fn dash_p_needs_a_key_and_something_must_be_given() {
        let args = |extra: &[&str]| WorkloadRequest::with_flags("ycsb", extra);
        let error = Properties::from_args(&args(&[])).unwrap_err().to_string();
        assert!(error.contains("--workload a..f"), "{error}");
        let error = Properties::from_args(&args(&["--workload", "a", "-p", "100"]))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("-p 100") && error.contains("KEY=VALUE"),
            "{error}"
        );
        let props =
            Properties::from_args(&args(&["--workload", "a", "-p", "recordcount=7"])).unwrap();
        assert_eq!(props.get("recordcount").unwrap().value, "7");
        let error = Properties::from_args(&args(&["-P", "/nonexistent/workloadx"]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("-P /nonexistent/workloadx"), "{error}");
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "# nothing\n\n").unwrap();
        let error = Properties::from_args(&args(&["-P", empty.to_str().unwrap()]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("no property in it"), "{error}");
        assert!(!error.contains("-P FILE"), "{error}");
    }
}
