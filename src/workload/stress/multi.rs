//! Several cassandra-stress profiles in one run, as cassandra-stress's
//! `profile=a.yaml,b.yaml ops(a.insert=1,b.simple1=2)`: `headroom run a.yaml,b.yaml --ops
//! 'a.insert=1,b.simple1=2'`.
//!
//! Each profile is prepared on its own (its keyspace, table, statements, rows) and its
//! operations are named `specname.op`, specname being the profile's `specname` key or, as in
//! cassandra-stress, `keyspace.table`. One mix is dealt over all of them; request `seq` of
//! an operation is that profile's request `seq`, so every request is still a function of the
//! seed and its number. The extra operation `insert` (every profile's insert in turn) is what
//! `--populate` sends.

use scylla::errors::ExecutionError;
use serde::{Deserialize, Serialize};

use super::model::{Profile, INSERT};
use super::{StressDefinition, StressWorkload};
use crate::workload::common::error::WorkloadError;
use crate::workload::common::mix::Operations;
use crate::workload::common::schema::drop_keyspace;
use crate::workload::common::send::Requests;
use crate::workload::common::request::WorkloadRequest;
use crate::workload::common::settings::WorkloadSettings;
use crate::workload::common::workload::{Parts, Workload};

/// One profile of a run of several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// The prefix of its operations' names.
    pub specname: String,
    /// The profile (its text) and the weights of its own operations, by their plain names.
    pub definition: StressDefinition,
}

/// Several profiles run together, as stored in config.json (every profile's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StressSet {
    /// The profiles, in the order of the command line.
    pub members: Vec<Member>,
}

/// The paths of a WORKLOAD argument naming several profiles (`a.yaml,b.yaml`), or None.
pub fn profile_paths(name: &str) -> Option<Vec<&str>> {
    if !name.contains(',') {
        return None;
    }
    let paths: Vec<&str> = name.split(',').map(str::trim).collect();
    paths
        .iter()
        .all(|p| super::is_profile_path(p))
        .then_some(paths)
}

/// The specname of a profile: its `specname` key, else `keyspace.table` (cassandra-stress's
/// default).
fn specname(text: &str, profile: &Profile) -> String {
    let key = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text)
        .ok()
        .and_then(|v| v.get("specname").and_then(|s| s.as_str()).map(String::from));
    key.unwrap_or_else(|| format!("{}.{}", profile.keyspace, profile.table))
}

/// Reads every profile and deals the `--ops` mix (`specname.op=W,...`) to them.
pub fn resolve(paths: &[&str], args: &WorkloadRequest) -> Result<StressSet, WorkloadError> {
    let mut members: Vec<Member> = Vec::with_capacity(paths.len());
    // Each profile alone, with an empty mix: its operation names and its text.
    let mut alone = args.clone();
    alone.op_mix = Some(Vec::new());
    for path in paths {
        let definition = super::resolve(path, &alone)?;
        let profile = definition.parsed()?;
        let name = specname(&definition.profile, &profile);
        if let Some(other) = members
            .iter()
            .find(|m| m.specname.eq_ignore_ascii_case(&name))
        {
            return Err(WorkloadError::Invalid(format!(
                "{path} and {} have the same specname '{name}': give one of them another `specname:`",
                other.definition.path
            )));
        }
        members.push(Member {
            specname: name,
            definition,
        });
    }
    let all: Vec<String> = op_names(&members);
    let Some(mix) = &args.op_mix else {
        let example: Vec<String> = all.iter().map(|n| format!("{n}=1")).collect();
        return Err(WorkloadError::Invalid(format!(
            "several profiles: give the mix of their operations with --ops, e.g. --ops '{}'",
            example.join(",")
        )));
    };
    let mut given = vec![false; all.len()];
    for (name, weight) in mix {
        let Some(i) = all.iter().position(|n| n.eq_ignore_ascii_case(name)) else {
            return Err(WorkloadError::Invalid(format!(
                "--ops: '{name}' is not an operation of these profiles; theirs are {} (specname.op)",
                all.join(", ")
            )));
        };
        if given[i] {
            return Err(WorkloadError::Invalid(format!(
                "--ops names '{name}' twice"
            )));
        }
        given[i] = true;
        let mut at = i;
        for member in &mut members {
            if at < member.definition.ops.len() {
                member.definition.ops[at].1 = *weight;
                break;
            }
            at -= member.definition.ops.len();
        }
    }
    Ok(StressSet { members })
}

/// Every operation's name: each profile's as `specname.op`, in the order of the command
/// line; then `insert`, every profile's insert in turn; then the steps recorded within the
/// profiles' operations (`specname.q-read`, the reads of conditional updates).
pub fn op_names(members: &[Member]) -> Vec<String> {
    members
        .iter()
        .flat_map(|m| {
            m.definition
                .ops
                .iter()
                .map(move |(op, _)| format!("{}.{op}", m.specname))
        })
        .chain(std::iter::once(INSERT.to_string()))
        .chain(members.iter().flat_map(|m| {
            steps(m)
                .into_iter()
                .map(move |step| format!("{}.{step}", m.specname))
        }))
        .collect()
}

/// A profile's steps: its operations past those of its mix.
fn steps(member: &Member) -> Vec<String> {
    super::op_names_of(&member.definition)
        .into_iter()
        .skip(member.definition.ops.len())
        .collect()
}

/// Several profiles, ready to send requests.
pub struct StressSetWorkload {
    members: Vec<StressWorkload>,
    /// For each operation before `insert`: its profile and its index there.
    ops: Vec<(usize, usize)>,
    /// For each profile: how many operations its mix has, and the index of its first step
    /// among the set's operations.
    steps: Vec<(usize, usize)>,
    /// Every profile's operations, `insert` (what populates: every profile's in turn), then
    /// the steps.
    operations: Operations,
}

impl StressSetWorkload {
    /// Prepares every profile; with --drop, each keyspace is dropped once, before any is
    /// created (two profiles may share one).
    pub async fn prepare<D: Clone + Sync>(
        requests: Requests,
        config: &WorkloadSettings<D>,
        set: &StressSet,
    ) -> Result<StressSetWorkload, WorkloadError> {
        let session = requests.session().clone();
        let mut member_config = config.clone();
        if config.drop {
            let mut dropped: Vec<&str> = Vec::new();
            for member in &set.members {
                let ks = member.definition.keyspace.as_str();
                if !dropped.contains(&ks) {
                    drop_keyspace(&session, ks).await?;
                    dropped.push(ks);
                }
            }
            member_config.drop = false;
        }
        let mut members = Vec::with_capacity(set.members.len());
        let mut ops = Vec::new();
        let mut weights = Vec::new();
        for (m, member) in set.members.iter().enumerate() {
            members.push(
                StressWorkload::prepare(requests.clone(), &member_config, &member.definition)
                    .await?,
            );
            for (o, (_, weight)) in member.definition.ops.iter().enumerate() {
                ops.push((m, o));
                weights.push(*weight);
            }
        }
        // `insert` has a share only through --ops, the steps none of their own.
        weights.push(0.0);
        let mut steps = Vec::with_capacity(set.members.len());
        for member in &set.members {
            steps.push((member.definition.ops.len(), weights.len()));
            weights.extend(self::steps(member).iter().map(|_| 0.0));
        }
        let populate = ops.len();
        Ok(StressSetWorkload {
            members,
            ops,
            steps,
            operations: Operations::new(op_names(&set.members), weights, populate),
        })
    }
}

impl Workload for StressSetWorkload {
    fn operations(&self) -> &Operations {
        &self.operations
    }

    /// The lowest of the profiles' (a table with a vector column writes slowly).
    fn populate_concurrency(&self) -> Option<usize> {
        self.members
            .iter()
            .filter_map(Workload::populate_concurrency)
            .min()
    }

    async fn execute(&self, op: usize, seq: u64, parts: &mut Parts) -> Result<(), ExecutionError> {
        match self.ops.get(op) {
            Some(&(member, member_op)) => {
                // A profile's steps are recorded under the set's names for them.
                let mut own = Parts::default();
                let result = self.members[member].execute(member_op, seq, &mut own).await;
                let (mixed, first_step) = self.steps[member];
                for part in own.iter() {
                    let op = first_step + part.op.saturating_sub(mixed);
                    let elapsed = std::time::Duration::from_nanos(part.elapsed_ns);
                    parts.push(op, elapsed, part.failed);
                }
                result
            }
            None => {
                // Every profile's insert in turn: n requests write n / profiles inserts each.
                let n = self.members.len() as u64;
                let member = &self.members[(seq % n) as usize];
                member.execute(member.populate_op(), seq / n, parts).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(name: &str) -> String {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/profiles")
            .join(name)
            .to_str()
            .unwrap()
            .to_string()
    }

    fn args(extra: &[&str]) -> WorkloadRequest {
        WorkloadRequest::with_flags("a.yaml,b.yaml", extra)
    }

    #[test]
    fn operations_are_named_specname_op_and_the_mix_reaches_each_profile() {
        let (blog, types) = (fixture("blogposts.yaml"), fixture("typestest.yaml"));
        let name = format!("{blog},{types}");
        let paths = profile_paths(&name).unwrap();
        assert_eq!(paths, [blog.as_str(), types.as_str()]);
        let set = resolve(
            &paths,
            &args(&[
                "--ops",
                "stress_blog.blogposts.insert=1,Stress_Types.typestest.simple1=3",
            ]),
        )
        .unwrap();
        assert_eq!(
            set.members[0].specname, "stress_blog.blogposts",
            "keyspace.table"
        );
        assert_eq!(
            op_names(&set.members),
            [
                "stress_blog.blogposts.insert",
                "stress_blog.blogposts.timeline",
                "stress_blog.blogposts.since",
                "stress_types.typestest.insert",
                "stress_types.typestest.simple1",
                "stress_types.typestest.range1",
                "insert"
            ]
        );
        assert_eq!(
            set.members[0].definition.ops[0],
            ("insert".to_string(), 1.0)
        );
        assert_eq!(
            set.members[1].definition.ops[1],
            ("simple1".to_string(), 3.0)
        );
        assert!(
            set.members[1].definition.profile.contains("typestest"),
            "its text"
        );

        let err = |ops: &[&str]| resolve(&paths, &args(ops)).unwrap_err().to_string();
        assert!(err(&["--ops", "insert=1,simple1=1"])
            .contains("'simple1' is not an operation of these profiles"));
        assert!(err(&[]).contains("e.g. --ops 'stress_blog.blogposts.insert=1,"));
        assert!(err(&["--ops", "insert=1,INSERT=1"]).contains("twice"));
        let same = resolve(
            &[blog.as_str(), blog.as_str()],
            &args(&["--ops", "insert=1"]),
        );
        assert!(same
            .unwrap_err()
            .to_string()
            .contains("the same specname 'stress_blog.blogposts'"));
        assert!(profile_paths("keyvalue").is_none());
        assert!(profile_paths(&format!("{blog},keyvalue")).is_none());
    }

    /// A conditional update's read step is named after its profile too, after `insert`.
    #[test]
    fn read_steps_come_after_insert_with_their_specname() {
        let blog = fixture("blogposts.yaml");
        let dir = tempfile::tempdir().unwrap();
        let lwt = dir.path().join("lwt.yaml");
        std::fs::write(
            &lwt,
            "specname: lwt\nkeyspace: k\ntable: t\nqueries:\n  cas:\n    cql: update t set v = ? where k = ? if v = ?\n    fields: samerow\n",
        )
        .unwrap();
        let lwt = lwt.to_str().unwrap().to_string();
        let set = resolve(
            &[blog.as_str(), lwt.as_str()],
            &args(&["--ops", "lwt.cas=1"]),
        )
        .unwrap();
        let names = op_names(&set.members);
        assert_eq!(names[names.len() - 2..], ["insert", "lwt.cas-read"]);
    }

    #[test]
    fn a_specname_key_names_the_profile() {
        let file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::fs::write(file.path(), "specname: mine\nkeyspace: k\ntable: t\n").unwrap();
        let path = file.path().to_str().unwrap();
        let blog = fixture("blogposts.yaml");
        let set = resolve(&[path, blog.as_str()], &args(&["--ops", "mine.insert=1"])).unwrap();
        assert_eq!(op_names(&set.members)[0], "mine.insert");
    }
}
