//! A cassandra-stress profile as the command line names it and config.json keeps it
//! ([`StressDefinition`]): which WORKLOAD arguments are profiles, the flags a profile refuses,
//! and the `--ops` mix over its operations, all checked before anything connects.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::model::{self, Profile, INSERT};
use super::raw;
use crate::workload::common::error::WorkloadError;
use crate::workload::common::request::WorkloadRequest;
/// `--keyspace` when not given: a profile's own keyspace replaces it.
use crate::workload::common::request::DEFAULT_KEYSPACE;

/// A cassandra-stress profile as stored in config.json: its text, so that a run can be
/// repeated from config.json alone, and the operation mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StressDefinition {
    /// The profile's path, as given.
    pub path: String,
    /// The profile's keyspace.
    pub keyspace: String,
    /// The profile's text.
    pub profile: String,
    /// Each operation's weight, in the profile's order: insert, then the queries.
    pub ops: Vec<(String, f64)>,
}

impl StressDefinition {
    /// The profile's table.
    pub fn table(&self) -> Result<String, WorkloadError> {
        Ok(self.parsed()?.table)
    }

    /// The profile, parsed (it was checked when the definition was made).
    pub(super) fn parsed(&self) -> Result<Profile, WorkloadError> {
        Profile::parse(&self.profile)
            .map_err(|e| WorkloadError::Invalid(format!("{}: {e}", self.path)))
    }
}

/// Whether the WORKLOAD argument names a cassandra-stress profile: a .yaml or .yml file
/// whose top-level mapping has no `operations` key (that key marks headroom's own format).
pub fn is_profile_path(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if !(lower.ends_with(".yaml") || lower.ends_with(".yml")) {
        return false;
    }
    // An unreadable file is this format's to report.
    crate::usage::read_input_file(Path::new(name), "the profile")
        .map_or(true, |text| raw::is_stress_profile(&text))
}

/// Reads the profile `path` and the operation mix from the command line.
pub fn resolve(path: &str, args: &WorkloadRequest) -> Result<StressDefinition, WorkloadError> {
    let text = crate::usage::read_input_file(Path::new(path), "the profile")
        .map_err(|e| WorkloadError::Invalid(e.to_string()))?;
    let profile =
        Profile::parse(&text).map_err(|e| WorkloadError::Invalid(format!("{path}: {e}")))?;
    refuse_foreign_flags(args)?;
    let names = profile.op_names();
    let steps = profile.step_names();
    let ops = match &args.op_mix {
        None if names.len() == 1 => vec![(INSERT.to_string(), 1.0)],
        None => {
            let example: Vec<String> = names.iter().map(|n| format!("{n}=1")).collect();
            return Err(WorkloadError::Invalid(format!(
                "{path} has the operations {}: give their mix with --ops, e.g. --ops '{}'",
                names.join(", "),
                example.join(",")
            )));
        }
        Some(mix) => {
            let mut weights = vec![0.0; names.len()];
            let mut given = vec![false; names.len()];
            for (name, weight) in mix {
                let lower = name.to_ascii_lowercase();
                if steps.contains(&lower) {
                    return Err(WorkloadError::Invalid(format!(
                        "--ops: '{name}' is the read step of the conditional update '{}': it is recorded whenever that query runs, and has no weight of its own",
                        lower.trim_end_matches(model::READ_STEP)
                    )));
                }
                let Some(i) = names.iter().position(|n| *n == lower) else {
                    return Err(WorkloadError::Invalid(format!(
                        "--ops: '{name}' is not an operation of {path}; its operations are {}",
                        names.join(", ")
                    )));
                };
                if given[i] {
                    return Err(WorkloadError::Invalid(format!(
                        "--ops names '{name}' twice"
                    )));
                }
                given[i] = true;
                weights[i] = *weight;
            }
            names.into_iter().zip(weights).collect()
        }
    };
    Ok(StressDefinition {
        path: path.to_string(),
        keyspace: profile.keyspace.clone(),
        profile: text,
        ops,
    })
}

/// Flags of other formats, and table settings the profile's CQL owns: refused, not ignored.
fn refuse_foreign_flags(args: &WorkloadRequest) -> Result<(), WorkloadError> {
    let ycsb = "is for the ycsb workload, not a cassandra-stress profile";
    let refused = if !args.property_files.is_empty() {
        Some(format!("-P {ycsb}"))
    } else if args.ycsb_workload.is_some() {
        Some(format!("--workload {ycsb}"))
    } else if args.p.iter().any(|p| p.contains('=')) {
        Some(format!("-p KEY=VALUE {ycsb}"))
    } else if args.read_ratio.is_some_and(|r| r != 0.0) || args.delete_ratio != 0.0 {
        Some("--read-ratio and --delete-ratio are for the built-in workloads: a cassandra-stress profile's mix is --ops 'insert=W,QUERY=W,...'".to_string())
    } else if args.keyspace != DEFAULT_KEYSPACE {
        Some("--keyspace does not apply: a cassandra-stress profile names its keyspace (its `keyspace:` key)".to_string())
    } else if args.compaction.is_some() || args.ttl.is_some() {
        Some("--compaction and --ttl cannot change a cassandra-stress profile's table: write them in its table_definition".to_string())
    } else {
        None
    };
    refused.map_or(Ok(()), |why| Err(WorkloadError::Invalid(why)))
}

/// The operation names of a definition, before connecting: those of the mix, then the
/// steps recorded within them (the reads of conditional updates).
pub fn op_names_of(definition: &StressDefinition) -> Vec<String> {
    let steps = definition
        .parsed()
        .map(|p| p.step_names())
        .unwrap_or_default();
    definition
        .ops
        .iter()
        .map(|(n, _)| n.clone())
        .chain(steps)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str], profile: &Path) -> WorkloadRequest {
        WorkloadRequest::with_flags(profile.to_str().unwrap(), extra)
    }

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/profiles")
            .join(name)
    }
    #[test]
    fn the_mix_names_the_profile_operations() {
        let path = fixture("blogposts.yaml");
        let def = resolve(
            path.to_str().unwrap(),
            &args(&["--ops", "insert=1,Timeline=2"], &path),
        )
        .unwrap();
        assert_eq!(def.keyspace, "stress_blog");
        assert_eq!(
            def.ops,
            [
                ("insert".to_string(), 1.0),
                ("timeline".to_string(), 2.0),
                ("since".to_string(), 0.0)
            ]
        );
        let err = |extra: &[&str]| {
            resolve(path.to_str().unwrap(), &args(extra, &path))
                .unwrap_err()
                .to_string()
        };
        assert!(err(&["--ops", "insert=1,read=1"]).contains("'read' is not an operation of"));
        assert!(err(&["--ops", "insert=1,read=1"])
            .contains("its operations are insert, timeline, since"));
        assert!(err(&[])
            .contains("give their mix with --ops, e.g. --ops 'insert=1,timeline=1,since=1'"));
        assert!(err(&["--ops", "insert=1,insert=2"]).contains("twice"));
        assert!(err(&["--ops", "insert=1", "-r", "0.5"]).contains("--read-ratio"));
        assert!(err(&["--ops", "insert=1", "--ttl", "1h"]).contains("table_definition"));
        assert!(err(&["--ops", "insert=1", "--keyspace", "other"]).contains("names its keyspace"));
        assert!(err(&["--ops", "insert=1", "-P", "w"]).contains("-P is for the ycsb"));
    }

    #[test]
    fn paths_are_told_apart_by_extension_and_operations_key() {
        assert!(!is_profile_path("keyvalue"));
        assert!(is_profile_path(fixture("blogposts.yaml").to_str().unwrap()));
        assert!(is_profile_path("missing.yml"), "its error is this format's");
        let own = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::fs::write(own.path(), "operations:\n  read: {}\n").unwrap();
        assert!(!is_profile_path(own.path().to_str().unwrap()));
        let text = resolve("missing.yml", &args(&[], Path::new("missing.yml")))
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("cannot read the profile missing.yml"),
            "{text}"
        );
    }

    #[test]
    fn a_profile_error_names_the_file_and_line() {
        let file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::fs::write(
            file.path(),
            "keyspace: k\ntable: t\ninsert:\n  batchsize: 3\n",
        )
        .unwrap();
        let path = file.path().to_str().unwrap();
        let text = resolve(path, &args(&[], file.path()))
            .unwrap_err()
            .to_string();
        assert!(text.starts_with(&format!("{path}: line 4: ")), "{text}");
        assert!(text.contains("unknown field `batchsize`"), "{text}");
    }

    #[test]
    fn a_read_step_takes_no_weight_and_follows_the_mix() {
        let file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::fs::write(
            file.path(),
            "keyspace: k\ntable: t\nqueries:\n  lwt:\n    cql: update t set v = ? where k = ? if v = ?\n    fields: samerow\ntoken_range_queries:\n  all:\n    columns: '*'\n",
        )
        .unwrap();
        let path = file.path().to_str().unwrap();
        let def = resolve(path, &args(&["--ops", "insert=1,lwt=2,all=1"], file.path())).unwrap();
        assert_eq!(op_names_of(&def), ["insert", "lwt", "all", "lwt-read"]);
        let text = resolve(path, &args(&["--ops", "insert=1,lwt-read=1"], file.path()))
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("'lwt-read' is the read step of the conditional update 'lwt'"),
            "{text}"
        );
    }

    #[test]
    fn an_insert_only_profile_needs_no_mix() {
        let file = tempfile::Builder::new().suffix(".yml").tempfile().unwrap();
        std::fs::write(file.path(), "keyspace: k\ntable: t\n").unwrap();
        let path = file.path().to_str().unwrap();
        let def = resolve(path, &args(&[], file.path())).unwrap();
        assert_eq!(def.ops, [("insert".to_string(), 1.0)]);
        assert_eq!(op_names_of(&def), ["insert"]);
    }
}
