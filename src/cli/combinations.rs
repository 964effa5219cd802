//! Which flags go with which: one table ([`RULES`]) of the flags that do nothing unless
//! another flag is given (or has a value), read against what the user typed before any
//! command runs. A flag given without what it needs is refused in one line that names the
//! need and why (`--linger 5s needs --live or --metrics-listen: ...`), never ignored.
//!
//! Flags that cannot be given together at all are clap's (`conflicts_with`); checks that
//! depend on values read together (a `--window` beside an SLA that names its own, an
//! interval flag under the strict goal) stay with the settings in `commands/`.

use clap::parser::ValueSource;
use clap::ArgMatches;

use crate::usage::UsageError;

/// What a flag needs to have an effect.
#[derive(Debug, Clone, Copy)]
pub enum Needs {
    /// One of these flags (clap ids), given by the user.
    AnyOf(&'static [&'static str]),
    /// This flag (a clap id) with this value, given or its default.
    Value(&'static str, &'static str),
    /// Nothing it can be given with: it never has an effect in this command.
    Never,
}

/// One flag of some commands, what it needs there and why.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The commands it holds in, as their names are typed (`run`, `kube manifest`).
    pub commands: &'static [&'static str],
    /// The flag's clap id (its long name with `_` for `-`).
    pub flag: &'static str,
    /// What it needs.
    pub needs: Needs,
    /// Why, after the need: what the flag does, or why it cannot here.
    pub why: &'static str,
}

const LOAD: &[&str] = &["run", "capacity", "sweep"];
const PRICED: &[&str] = &["capacity", "compare"];

/// The flags of a fleet's pods on Kubernetes, which `capacity` takes only for that launcher.
const POD_FLAGS: [&str; 17] = [
    "image",
    "namespace",
    "image_pull_policy",
    "image_pull_secret",
    "service_account",
    "cpu",
    "cpu_limit",
    "memory",
    "memory_limit",
    "password_secret",
    "password_secret_key",
    "tls_secret",
    "lead",
    "deadline_margin",
    "job_ttl",
    "max_log_bytes",
    "host_network",
];

const POD_WHY: &str = "it shapes the workers' pods, and --launcher local runs the workers \
                       as processes of this machine";

/// Every flag that needs another: the one table the check reads.
pub const RULES: &[Rule] = &[
    Rule {
        commands: LOAD,
        flag: "linger",
        needs: Needs::AnyOf(&["live", "metrics_listen"]),
        why: "it serves their final state after the end, and nothing is served without them",
    },
    Rule {
        commands: &["run"],
        flag: "arrivals",
        needs: Needs::AnyOf(&["rate"]),
        why: "it spaces a fixed rate's requests; without --rate the run is a closed loop, \
              which starts a request each time one is answered",
    },
    Rule {
        commands: &["run"],
        flag: "max_in_flight",
        needs: Needs::AnyOf(&["rate"]),
        why: "it caps a fixed rate's requests in flight; without --rate the run is a closed \
              loop, which keeps --concurrency in flight",
    },
    Rule {
        commands: &["sweep"],
        flag: "arrivals",
        needs: Needs::Never,
        why: "a sweep's steps are closed loops at --concurrency, which start a request each \
              time one is answered",
    },
    Rule {
        commands: &["sweep"],
        flag: "max_in_flight",
        needs: Needs::Never,
        why: "a sweep's steps are closed loops, which keep --concurrency in flight",
    },
    Rule {
        commands: &["run"],
        flag: "window",
        needs: Needs::AnyOf(&["sla"]),
        why: "it is the length of the windows an SLA is judged on, e.g. --sla 'p99<10ms' \
              --window 10s",
    },
    Rule {
        commands: &["run"],
        flag: "jmx",
        needs: Needs::AnyOf(&["during"]),
        why: "nodetool reaches the nodes of --during through it",
    },
    Rule {
        commands: PRICED,
        flag: "target_load",
        needs: Needs::AnyOf(&["node_price"]),
        why: "the yearly cost of the nodes it takes is priced by it",
    },
    Rule {
        commands: PRICED,
        flag: "size_for",
        needs: Needs::AnyOf(&["node_price"]),
        why: "it chooses the capacity the cost is sized by, and there is no cost without a \
              price",
    },
    Rule {
        commands: &["capacity"],
        flag: "first_address",
        needs: Needs::AnyOf(&["matrix"]),
        why: "it places the local cluster a matrix starts",
    },
    Rule {
        commands: &["capacity"],
        flag: "heap",
        needs: Needs::AnyOf(&["matrix"]),
        why: "it sizes the nodes of the local cluster a matrix starts",
    },
    Rule {
        commands: &["capacity"],
        flag: "launcher",
        needs: Needs::AnyOf(&["workers"]),
        why: "it says where a fleet's workers run",
    },
    Rule {
        commands: &["capacity"],
        flag: "image",
        needs: Needs::Value("launcher", "kubernetes"),
        why: POD_WHY,
    },
];

/// The rules of the pods' flags beside `--image`, each as `--image`'s.
fn pod_rules() -> impl Iterator<Item = Rule> {
    POD_FLAGS[1..].iter().map(|flag| Rule {
        commands: &["capacity"],
        flag,
        needs: Needs::Value("launcher", "kubernetes"),
        why: POD_WHY,
    })
}

/// Every rule: the table, and the pods' flags.
pub fn rules() -> impl Iterator<Item = Rule> {
    RULES.iter().copied().chain(pod_rules())
}

/// Whether the user gave `id` (on the command line or in its environment variable), not
/// its default.
fn given(matches: &ArgMatches, id: &str) -> bool {
    matches.try_contains_id(id).unwrap_or(false)
        && matches!(
            matches.value_source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        )
}

/// A flag as typed: `--max-in-flight`, from its id.
fn shown(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

/// The flag with the value the user gave it, as they would read it back.
fn with_value(matches: &ArgMatches, id: &str) -> String {
    // A switch (`--host-network`) is shown as typed, without its `true`.
    if matches.try_get_one::<bool>(id).is_ok() {
        return shown(id);
    }
    let value = matches
        .try_get_raw(id)
        .ok()
        .flatten()
        .and_then(|mut values| values.next())
        .map(|v| v.to_string_lossy().into_owned());
    match value {
        Some(v) if !v.is_empty() => format!("{} {}", shown(id), crate::usage::cut(&v, 40)),
        _ => shown(id),
    }
}

/// Checks the leaf command of `matches` against [`rules`]: the first flag given without
/// what it needs, in the table's order, is refused.
pub fn check(matches: &ArgMatches) -> Result<(), UsageError> {
    let (mut name, mut leaf) = (String::new(), matches);
    while let Some((sub, sub_matches)) = leaf.subcommand() {
        name = if name.is_empty() {
            sub.to_string()
        } else {
            format!("{name} {sub}")
        };
        leaf = sub_matches;
    }
    for rule in rules().filter(|r| r.commands.contains(&name.as_str())) {
        if !given(leaf, rule.flag) {
            continue;
        }
        let need = match rule.needs {
            Needs::AnyOf(others) if others.iter().any(|o| given(leaf, o)) => continue,
            Needs::AnyOf(others) => format!(
                "needs {}",
                others
                    .iter()
                    .map(|o| shown(o))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            Needs::Value(other, value)
                if leaf
                    .try_get_raw(other)
                    .ok()
                    .flatten()
                    .and_then(|mut v| v.next())
                    .is_some_and(|v| v == value) =>
            {
                continue
            }
            Needs::Value(other, value) => format!("needs {} {value}", shown(other)),
            Needs::Never => format!("does nothing in `{name}`"),
        };
        return Err(UsageError::new(format!(
            "{} {need}: {}",
            with_value(leaf, rule.flag),
            rule.why
        )));
    }
    Ok(())
}

#[cfg(test)]
#[path = "combinations_tests.rs"]
mod tests;
