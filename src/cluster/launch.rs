//! Starting one node of a local cluster: its ports checked, its folders and configuration
//! written, its process launched, and the waits until it answers CQL and sees its peers.

use std::fs;
use std::process::Child;
use std::time::{Duration, Instant};

use super::jars::CassandraJars;
use super::java::Java;
use super::{auth, probe, process, render, tls, write_file, ClusterError, LocalCluster, NodeSpec};

impl LocalCluster {
    /// Writes node `spec`'s folders and configuration and launches its process, recording
    /// its pid.
    pub(super) fn launch_node(
        &mut self,
        spec: &NodeSpec,
        java: &Java,
        jars: &CassandraJars,
    ) -> Result<(), ClusterError> {
        check_ports_free(spec)?;
        for sub in [
            "conf",
            "data",
            "commitlog",
            "hints",
            "saved_caches",
            "cdc_raw",
            "logs",
        ] {
            let path = spec.dir.join(sub);
            fs::create_dir_all(&path)
                .map_err(ClusterError::io(format!("creating {}", path.display())))?;
        }
        let conf = spec.conf_dir();
        write_file(
            &spec.yaml_path(),
            &render::cassandra_yaml(&self.state.config, spec),
        )?;
        write_file(
            &conf.join("cassandra-rackdc.properties"),
            &render::rackdc_properties(&self.state.config, spec),
        )?;
        write_file(&conf.join("logback.xml"), &render::logback_xml())?;
        write_file(
            &conf.join("logback-tools.xml"),
            &render::logback_tools_xml(),
        )?;
        let args = render::jvm_args(&self.state.config, spec, java, jars);
        let child = process::launch(
            &java.path,
            &args,
            &spec.log_path(),
            spec.cores.as_ref(),
            self.state.config.placement.node_nice,
        )?;
        let pid = child.id();
        let slot = spec.index as usize - 1;
        self.children[slot] = Some(child);
        self.state.pids[slot] = Some(pid);
        write_file(&spec.pid_path(), &format!("{pid}\n"))?;
        self.state.save(&self.dir)
    }

    /// Says that node `spec` answers CQL, how long after `started`, and its pid.
    pub(super) fn report_ready(&self, spec: &NodeSpec, started: Instant, say: &dyn Fn(&str)) {
        say(&format!(
            "  node {} at {} answers CQL after {:.1} s (pid {})",
            spec.index,
            spec.native_addr(),
            started.elapsed().as_secs_f64(),
            self.state.pids[spec.index as usize - 1].unwrap_or(0),
        ));
    }

    /// Waits until node `spec` accepts CQL connections; an error when its process exits
    /// first or `timeout` passes.
    pub(super) fn wait_until_ready(
        &mut self,
        spec: &NodeSpec,
        timeout: Duration,
    ) -> Result<(), ClusterError> {
        let slot = spec.index as usize - 1;
        let started = Instant::now();
        let mut exited = None;
        let ready = process::wait_until(timeout, || {
            if let Some(Ok(Some(status))) = self.children[slot].as_mut().map(Child::try_wait) {
                exited = Some(status);
                return true;
            }
            probe::accepts_connections(spec.native_addr())
        });
        if let Some(status) = exited {
            self.children[slot] = None;
            self.state.pids[slot] = None;
            self.state.save(&self.dir)?;
            return Err(ClusterError::NodeExited {
                node: spec.index,
                address: spec.address.to_string(),
                status: status.to_string(),
                log: spec.log_path(),
                tail: process::tail_of_file(&spec.log_path(), 20),
            });
        }
        if !ready {
            return Err(ClusterError::StartTimeout {
                node: spec.index,
                address: spec.address.to_string(),
                waited: started.elapsed(),
                log: spec.log_path(),
                tail: process::tail_of_file(&spec.log_path(), 20),
            });
        }
        Ok(())
    }

    /// Waits until every node lists all the others, with their CQL addresses, in
    /// `system.peers_v2`. A node opens its CQL port as soon as it has joined, which can be a
    /// moment before gossip has told it (and the nodes before it) about every peer; a driver
    /// connecting in that moment would see part of the cluster.
    pub(super) fn wait_until_all_see_each_other(
        &self,
        timeout: Duration,
    ) -> Result<(), ClusterError> {
        let specs = self.nodes();
        let others = specs.len() - 1;
        let login = auth::login(self);
        let tls = tls::probe_tls(self)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ClusterError::io("starting the async runtime"))?;
        let mut last = String::new();
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            let mut lagging = Vec::new();
            for spec in &specs {
                match runtime.block_on(probe::peers_known(
                    spec.native_addr(),
                    Duration::from_secs(5),
                    login.as_ref().map(auth::Credentials::user_and_password),
                    tls.clone(),
                )) {
                    Ok(n) if n == others => {}
                    Ok(n) => {
                        lagging.push(format!("node {} sees {n} of {others} peers", spec.index))
                    }
                    Err(e) => lagging.push(format!("node {}: {e}", spec.index)),
                }
            }
            if lagging.is_empty() {
                return Ok(());
            }
            last = lagging.join("; ");
            std::thread::sleep(Duration::from_millis(500));
        }
        let first = &specs[0];
        Err(ClusterError::StartTimeout {
            node: first.index,
            address: format!(
                "{}, waiting for all nodes to see each other: {last}",
                first.address
            ),
            waited: timeout,
            log: first.log_path(),
            tail: process::tail_of_file(&first.log_path(), 20),
        })
    }
}

/// Refuses a node whose CQL, storage or JMX port is taken.
pub(super) fn check_ports_free(spec: &NodeSpec) -> Result<(), ClusterError> {
    for (what, addr) in [
        ("CQL", spec.native_addr()),
        ("storage", spec.storage_addr()),
        ("JMX", spec.jmx_addr()),
    ] {
        // A short grace: a node stopped a moment ago may still be closing its sockets.
        if !process::wait_until(Duration::from_secs(3), || probe::is_free(addr)) {
            return Err(ClusterError::PortInUse {
                node: spec.index,
                what,
                addr,
            });
        }
    }
    Ok(())
}
