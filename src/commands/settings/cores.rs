//! The cores the client runs on: `--client-cpus`, else those the local cluster headroom
//! started left to it (`cluster start`'s split, recorded in cluster.json). Every error here
//! is the user's input, found before anything connects.

use std::path::Path;

use crate::cluster::{NodeSource, Placement};
use crate::cpus::{self, CoreChoice, Cores};
use crate::results::config::RunSettings;
use crate::usage::UsageError;

/// The client's cores: `flag` when given (`all`: none), else `left`, the cores the nodes
/// left it (those of them this process may use). Refused: cores the machine lacks, or cores
/// a local node is bound to.
pub fn client_cores(
    flag: Option<&CoreChoice>,
    nodes: Option<&Cores>,
    left: Option<&Cores>,
) -> Result<Option<Cores>, UsageError> {
    match flag {
        Some(CoreChoice::All) => Ok(None),
        Some(CoreChoice::Only(cores)) => {
            cpus::check_on_machine(cores, "--client-cpus").map_err(UsageError::new)?;
            if let Some((nodes, shared)) = nodes.and_then(|n| Some((n, cores.shared_with(n)?))) {
                let free = cpus::machine()
                    .without(nodes)
                    .map_or(String::new(), |free| format!(" ({free})"));
                return Err(UsageError::new(format!(
                    "--client-cpus {cores} shares {} {shared} with the local nodes (bound to \
                     {nodes}): give cores they do not have{free}, or --client-cpus all to run \
                     anywhere",
                    if shared.len() == 1 { "core" } else { "cores" },
                )));
            }
            Ok(Some(cores.clone()))
        }
        None => Ok(left.and_then(|l| l.shared_with(cpus::machine()))),
    }
}

/// Fills in `settings.client_cpus` for a run against `hosts` with `--client-cpus` `flag`,
/// the local cluster looked for in `cluster_dir`; a run that takes as many threads as its
/// rate needs then takes at most one a core.
pub fn with_client_cores<M>(
    settings: &mut RunSettings<M>,
    flag: Option<&CoreChoice>,
    cluster_dir: &Path,
) -> Result<(), UsageError> {
    let local = NodeSource::Recorded(cluster_dir.to_path_buf()).resolve(&settings.hosts);
    let cores = client_cores(flag, local.nodes_cores().as_ref(), local.client_cpus())?;
    set_client_cores(settings, cores);
    Ok(())
}

/// Fills in `settings.client_cpus` for a run against a cluster this command starts (or
/// started) with `placement`.
pub fn with_placement_cores<M>(
    settings: &mut RunSettings<M>,
    flag: Option<&CoreChoice>,
    placement: &Placement,
) -> Result<(), UsageError> {
    let cores = client_cores(
        flag,
        placement.nodes_cores().as_ref(),
        placement.client_cpus.as_ref(),
    )?;
    set_client_cores(settings, cores);
    Ok(())
}

fn set_client_cores<M>(settings: &mut RunSettings<M>, cores: Option<Cores>) {
    if let Some(cores) = &cores {
        if settings.threads_from_rate {
            settings.threads = settings.threads.min(cores.len()).max(1);
        }
    }
    settings.client_cpus = cores;
}

/// Binds this process (its threads, and those it starts) to the cores `settings` give the
/// client, if any.
pub fn bind_client<M>(settings: &RunSettings<M>) -> anyhow::Result<()> {
    if let Some(cores) = &settings.client_cpus {
        cpus::bind_process(cores).map_err(|e| {
            anyhow::anyhow!("binding the client to cores {cores} (--client-cpus): {e}")
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cores(text: &str) -> Cores {
        text.parse().unwrap()
    }

    #[test]
    fn the_flag_wins_and_all_binds_nothing() {
        let machine = cpus::machine().clone();
        let first = Cores::new(machine.iter().take(1)).unwrap();
        assert_eq!(
            client_cores(Some(&CoreChoice::Only(first.clone())), None, None).unwrap(),
            Some(first.clone())
        );
        assert_eq!(
            client_cores(Some(&CoreChoice::All), None, Some(&first)).unwrap(),
            None
        );
        // Without the flag: what the nodes left, else nothing.
        assert_eq!(client_cores(None, None, Some(&first)).unwrap(), Some(first));
        assert_eq!(client_cores(None, None, None).unwrap(), None);
    }

    #[test]
    fn cores_the_nodes_have_or_the_machine_lacks_are_refused() {
        let err = client_cores(Some(&CoreChoice::Only(cores("1000"))), None, None).unwrap_err();
        assert!(
            err.to_string()
                .contains("--client-cpus 1000 names core 1000"),
            "{err}"
        );
        let machine = cpus::machine().clone();
        let first = Cores::new(machine.iter().take(1)).unwrap();
        let err = client_cores(Some(&CoreChoice::Only(first.clone())), Some(&machine), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("shares core {first} with the local nodes")),
            "{err}"
        );
        assert!(err.contains("--client-cpus all"), "{err}");
    }

    #[test]
    fn cores_left_that_this_process_may_not_use_are_dropped() {
        assert_eq!(
            client_cores(None, None, Some(&cores("1000"))).unwrap(),
            None
        );
    }
}
