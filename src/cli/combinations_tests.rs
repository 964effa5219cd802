//! The walk over [`RULES`]: for each rule and each command it holds in, the flag alone is
//! refused naming its need, and with its need it is not.

use clap::CommandFactory;

use super::*;
use crate::cli::Cli;

/// A value each flag of the table (and each need) takes.
fn sample(id: &str) -> Option<&'static str> {
    Some(match id {
        "linger" => "5s",
        "live" | "metrics_listen" => "127.0.0.1:0",
        "arrivals" => "poisson",
        "max_in_flight" => "100",
        "rate" => "100",
        "window" => "5s",
        "sla" => "p99<10ms",
        "jmx" => "127.0.0.1:7199",
        "during" => "flush@1s",
        "target_load" => "100k",
        "size_for" => "healthy",
        "node_price" => "1/h",
        "first_address" => "127.0.0.2",
        "heap" => "2G",
        "matrix" => "gc=g1,zgc",
        "launcher" => "local",
        "workers" => "2",
        "image" => "registry/headroom:1",
        "namespace" => "load",
        "image_pull_policy" => "Always",
        "image_pull_secret" | "password_secret" | "tls_secret" => "secret",
        "service_account" => "runner",
        "cpu" | "cpu_limit" => "1",
        "memory" | "memory_limit" => "1Gi",
        "password_secret_key" => "key",
        "lead" => "30s",
        "deadline_margin" => "1m",
        "job_ttl" => "2h",
        "max_log_bytes" => "2M",
        _ => return None,
    })
}

/// The command line of `command` with the flags `ids`, each with its sample value (none for
/// a flag that takes none).
fn line(command: &str, ids: &[&str]) -> Vec<String> {
    let mut argv = vec!["headroom".to_string()];
    argv.extend(command.split(' ').map(str::to_string));
    match command {
        "run" | "capacity" | "sweep" => argv.push("keyvalue".into()),
        "compare" => argv.extend(["a".to_string(), "b".to_string()]),
        _ => {}
    }
    let cli = Cli::command();
    let sub = command.split(' ').fold(&cli, |c, name| {
        c.find_subcommand(name).expect("a command of the table")
    });
    for id in ids {
        let arg = sub
            .get_arguments()
            .find(|a| a.get_id() == *id)
            .unwrap_or_else(|| panic!("`{command}` has no flag {id}"));
        argv.push(format!("--{}", arg.get_long().unwrap()));
        if arg.get_action().takes_values() {
            argv.push(
                sample(id)
                    .unwrap_or_else(|| panic!("no sample value for {id}"))
                    .to_string(),
            );
        }
    }
    argv
}

fn checked(argv: &[String]) -> Result<(), String> {
    let matches = Cli::command()
        .try_get_matches_from(argv)
        .unwrap_or_else(|e| panic!("{argv:?} does not parse: {e}"));
    check(&matches).map_err(|e| e.to_string())
}

#[test]
fn every_rule_refuses_its_flag_alone_and_takes_it_with_its_need() {
    let mut walked = 0;
    for rule in rules() {
        let flag = shown(rule.flag);
        for command in rule.commands {
            let alone = line(command, &[rule.flag]);
            let err = checked(&alone).expect_err(&format!("{alone:?} is taken"));
            assert!(err.starts_with(&flag), "{alone:?}: {err}");
            let needed: Vec<&str> = match rule.needs {
                Needs::AnyOf(others) => {
                    for other in others {
                        assert!(err.contains(&shown(other)), "{alone:?}: {err}");
                    }
                    others.to_vec()
                }
                Needs::Value(other, value) => {
                    assert!(err.contains(&format!("{} {value}", shown(other))), "{err}");
                    vec![]
                }
                Needs::Never => {
                    assert!(err.contains("does nothing"), "{alone:?}: {err}");
                    walked += 1;
                    continue;
                }
            };
            // With (each of) its need(s), this flag is not the one refused.
            let withs: Vec<Vec<String>> = match rule.needs {
                Needs::Value(other, value) => {
                    let mut argv = line(command, &[rule.flag]);
                    argv.extend([shown(other), value.to_string()]);
                    vec![argv]
                }
                _ => needed
                    .iter()
                    .map(|n| line(command, &[rule.flag, n]))
                    .collect(),
            };
            for argv in withs {
                if let Err(e) = checked(&argv) {
                    assert!(!e.starts_with(&flag), "{argv:?}: {e}");
                }
            }
            walked += 1;
        }
    }
    assert!(walked >= 30, "{walked} rules walked");
}

/// The flags the table names are not also tied by clap's `requires`, which would refuse
/// them first in other words: the table is their one home.
#[test]
fn the_table_is_the_one_home_of_its_needs() {
    let cli = Cli::command();
    for rule in rules() {
        for command in rule.commands {
            let sub = command
                .split(' ')
                .fold(&cli, |c, name| c.find_subcommand(name).unwrap());
            let arg = sub
                .get_arguments()
                .find(|a| a.get_id() == rule.flag)
                .unwrap();
            let argv = line(command, &[rule.flag]);
            // clap parses the flag alone: only the table refuses it.
            assert!(
                Cli::command().try_get_matches_from(&argv).is_ok(),
                "{argv:?}: clap refuses it ({:?})",
                arg.get_id()
            );
        }
    }
}
