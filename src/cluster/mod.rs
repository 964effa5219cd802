//! Real Apache Cassandra nodes on this machine.
//!
//! [`LocalCluster::start`] resolves Cassandra's jars (Maven Central, cached), checks the JDK,
//! writes each node's configuration and launches the nodes one after another on 127.0.0.1,
//! 127.0.0.2, ..., each answering CQL before the next starts. Dropping a [`LocalCluster`]
//! stops the nodes it started, so a test that panics leaves no JVM behind;
//! [`LocalCluster::keep_running`] hands them over to later `headroom cluster` commands, which
//! find them through the record in the cluster directory ([`state`]).
//!
//! Only processes headroom recorded are ever signalled, and only after checking that the pid
//! still runs that node's configuration ([`process::is_running`]).
//!
//! **Why one file of about 750 lines.** [`LocalCluster`]'s life (start, a node signalled or
//! restarted, handed over with `keep_running`, stopped by `Drop`) is one set of methods over
//! one record of its nodes; what each step uses (jars, the JDK, configuration, processes, the
//! record on disk, TLS, authentication) is a file of its own beside it.

pub mod auth;
pub mod config;
mod error;
pub mod hints;
pub mod jars;
pub mod java;
mod launch;
pub mod local_nodes;
pub mod pauses;
pub mod placement;
pub mod probe;
pub mod process;
pub mod render;
pub mod state;
pub mod tls;

use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub use config::{ClientTls, ClusterConfig, ClusterSettings, GcKind, NodeSpec};
pub use error::ClusterError;
use java::Java;
pub use local_nodes::{LocalNodes, NodeSource};
pub use placement::{CpusFlag, Placement, DEFAULT_NODE_NICE};
use process::Target;
use state::ClusterState;

/// How a start behaves, apart from what the cluster is.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// How long one node may take from launch until it answers CQL.
    pub node_timeout: Duration,
    /// Where Cassandra's jars are cached.
    pub cache_dir: PathBuf,
    /// Print a line per step to standard error.
    pub verbose: bool,
    /// The command starting a new cluster for its own use, recorded in `cluster.json` so
    /// that it alone removes a cluster it left behind (see [`state::Owner`]).
    pub owner: Option<state::Owner>,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            node_timeout: Duration::from_secs(180),
            cache_dir: jars::cache_root(),
            verbose: true,
            owner: None,
        }
    }
}

/// The default cluster directory: `headroom/cluster` under the user's local data directory.
pub fn default_dir() -> PathBuf {
    dirs::data_local_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("headroom")
        .join("cluster")
}

/// A local cluster: its directory, configuration and the node processes headroom recorded.
///
/// Dropping it stops the nodes unless [`keep_running`](Self::keep_running) was called.
#[derive(Debug)]
pub struct LocalCluster {
    dir: PathBuf,
    state: ClusterState,
    /// The node processes this value launched, to reap them after they stop.
    children: Vec<Option<Child>>,
    stop_on_drop: bool,
    /// How long a node may take to stop after SIGTERM.
    stop_grace: Duration,
}

impl LocalCluster {
    /// Starts a cluster in `dir`: a new one, or the stopped one recorded there (which must have
    /// the same configuration). Nodes already started are stopped again if a later one fails.
    pub fn start(
        dir: &Path,
        config: ClusterConfig,
        options: &StartOptions,
    ) -> Result<LocalCluster, ClusterError> {
        config.validate()?;
        let say = |line: &str| {
            if options.verbose {
                eprintln!("{line}");
            }
        };
        let existing = ClusterState::load(dir)?;
        if let Some(existing) = &existing {
            let attached = LocalCluster::attached(dir, existing.clone());
            let running = attached.running_pids();
            if running.len() == existing.config.nodes as usize {
                let pids: Vec<String> = running.iter().map(u32::to_string).collect();
                return Err(ClusterError::AlreadyRunning {
                    dir: dir.to_path_buf(),
                    pids: pids.join(", "),
                });
            }
            // A stopped cluster may start on other cores; nothing else may change.
            let same_but_cores = ClusterConfig {
                placement: existing.config.placement.clone(),
                ..config.clone()
            } == existing.config;
            if !same_but_cores || (!running.is_empty() && existing.config != config) {
                return Err(ClusterError::ConfigMismatch {
                    dir: dir.to_path_buf(),
                    stored: existing.config.describe(),
                    requested: config.describe(),
                });
            }
            if !running.is_empty() {
                return LocalCluster::start_down_nodes(attached, options, &say);
            }
        }
        let java = Java::find()?;
        java.check_supports(&config.cassandra_version)?;
        if existing.is_none() {
            // Before anything is written: a refused start leaves no record behind.
            for spec in config.node_specs(dir) {
                launch::check_ports_free(&spec)?;
            }
        }
        let jars = jars::resolve(&config.cassandra_version, &options.cache_dir, &say)?;
        fs::create_dir_all(dir).map_err(ClusterError::io(format!("creating {}", dir.display())))?;
        let dir = dir
            .canonicalize()
            .map_err(ClusterError::io(format!("resolving {}", dir.display())))?;

        let nodes = config.nodes as usize;
        let mut cluster = LocalCluster {
            state: ClusterState {
                config,
                pids: vec![None; nodes],
                java: format!("{} ({})", java.version, java.path.display()),
                owner: existing
                    .as_ref()
                    .map_or(options.owner.clone(), |e| e.owner.clone()),
            },
            dir,
            children: (0..nodes).map(|_| None).collect(),
            stop_on_drop: true,
            stop_grace: Duration::from_secs(60),
        };
        cluster.state.save(&cluster.dir)?;
        let client_tls = cluster.state.config.tls;
        if client_tls.is_on() {
            tls::generate(
                &cluster.dir,
                &cluster.nodes(),
                client_tls.requires_client_certificate(),
            )?;
        }
        say(&format!(
            "Starting {} in {}",
            cluster.state.config.describe(),
            cluster.dir.display()
        ));
        if let Some(remark) = cluster.state.config.placement.remark(crate::cpus::machine()) {
            say(&format!("  ({remark})"));
        }
        let specs = cluster.nodes();
        if existing.is_none() {
            // A new cluster: one node after another, each joining the ring before the next.
            for spec in &specs {
                let started = Instant::now();
                cluster.launch_node(spec, &java, &jars)?;
                cluster.wait_until_ready(spec, options.node_timeout)?;
                cluster.report_ready(spec, started, &say);
            }
        } else {
            // A stopped cluster: all nodes at once, as a real cluster restarts. One by one, each
            // node would first wait out its gossip round with the peers it remembers (30 s).
            let started = Instant::now();
            for spec in &specs {
                cluster.launch_node(spec, &java, &jars)?;
            }
            for spec in &specs {
                let left = options
                    .node_timeout
                    .saturating_sub(started.elapsed())
                    .max(Duration::from_secs(1));
                cluster.wait_until_ready(spec, left)?;
                cluster.report_ready(spec, started, &say);
            }
        }
        if nodes > 1 {
            cluster.wait_until_all_see_each_other(options.node_timeout)?;
            say("  every node sees all the others");
        }
        if client_tls.is_on() {
            say(&format!(
                "  TLS required on CQL: the cluster's CA is {}{}",
                tls::ca_path(&cluster.dir).display(),
                if client_tls.requires_client_certificate() {
                    format!(
                        ", a client certificate too: {} with its key {}",
                        tls::client_cert_path(&cluster.dir).display(),
                        tls::client_key_path(&cluster.dir).display()
                    )
                } else {
                    String::new()
                }
            ));
        }
        if cluster.state.config.auth {
            auth::set_up(&cluster, options.node_timeout)?;
            say(&format!(
                "  password authentication: role {} (its password in {}, for this user only)",
                auth::ROLE,
                auth::credentials_path(&cluster.dir).display()
            ));
        }
        Ok(cluster)
    }

    /// Starts the nodes of a running cluster that are down (killed, crashed, drained and
    /// stopped), all at once, leaving the others as they are; the value returned does not
    /// stop the cluster when dropped.
    fn start_down_nodes(
        mut cluster: LocalCluster,
        options: &StartOptions,
        say: &dyn Fn(&str),
    ) -> Result<LocalCluster, ClusterError> {
        let down: Vec<NodeSpec> = cluster
            .nodes()
            .into_iter()
            .filter(|spec| cluster.pid(spec.index).is_none())
            .collect();
        let java = Java::find()?;
        let jars = jars::resolve(
            &cluster.state.config.cassandra_version,
            &options.cache_dir,
            say,
        )?;
        let names: Vec<String> = down.iter().map(|s| s.index.to_string()).collect();
        say(&format!(
            "Starting the nodes of {} that are down: {}",
            cluster.dir.display(),
            names.join(", ")
        ));
        let started = Instant::now();
        for spec in &down {
            cluster.launch_node(spec, &java, &jars)?;
        }
        for spec in &down {
            let left = options
                .node_timeout
                .saturating_sub(started.elapsed())
                .max(Duration::from_secs(1));
            cluster.wait_until_ready(spec, left)?;
            cluster.report_ready(spec, started, say);
        }
        cluster.wait_until_all_see_each_other(options.node_timeout)?;
        say("  every node sees all the others");
        Ok(cluster)
    }

    /// Starts node `index` again: stops its process first if it still runs (frozen, drained
    /// or not), then launches it and waits until it answers CQL. Returns the new pid.
    pub fn restart_node(&mut self, index: u32, timeout: Duration) -> Result<u32, ClusterError> {
        let spec = self.node(index)?;
        if let Some(pid) = self.pid(index) {
            // A frozen process would never see the SIGTERM.
            let _ = process::signal(pid, nix::sys::signal::Signal::SIGCONT);
            process::stop_all(
                &[Target {
                    node: index,
                    pid,
                    marker: spec.command_line_marker(),
                }],
                Duration::from_secs(30),
            )?;
        }
        let java = Java::find()?;
        let jars = jars::resolve(
            &self.state.config.cassandra_version,
            &jars::cache_root(),
            &|_| {},
        )?;
        self.launch_node(&spec, &java, &jars)?;
        self.wait_until_ready(&spec, timeout)?;
        Ok(self.state.pids[index as usize - 1].unwrap_or(0))
    }

    /// Stops node `index` alone as an operator stops a node for maintenance: SIGTERM, on
    /// which Cassandra drains (flushes its tables, tells its peers it is shutting down) and
    /// exits; SIGKILL after `grace`. Returns the pid it stopped, `None` when it was not
    /// running. The others keep running; `cluster start` or [`Self::restart_node`] starts
    /// it again.
    pub fn stop_node(&mut self, index: u32, grace: Duration) -> Result<Option<u32>, ClusterError> {
        let spec = self.node(index)?;
        let Some(pid) = self.pid(index) else {
            return Ok(None);
        };
        process::stop_all(
            &[Target {
                node: index,
                pid,
                marker: spec.command_line_marker(),
            }],
            grace,
        )?;
        let slot = index as usize - 1;
        if let Some(mut child) = self.children[slot].take() {
            let _ = child.wait();
        }
        self.state.pids[slot] = None;
        self.state.save(&self.dir)?;
        Ok(Some(pid))
    }

    /// Sends `signal` to node `index`'s process; its pid, or an error if it is not running.
    pub fn signal_node(
        &self,
        index: u32,
        signal: nix::sys::signal::Signal,
    ) -> Result<u32, ClusterError> {
        let pid = self
            .pid(index)
            .ok_or(ClusterError::NodeDown { node: index })?;
        process::signal(pid, signal).map_err(|e| ClusterError::Io {
            context: format!("sending {signal} to node {index} (pid {pid})"),
            source: std::io::Error::from(e),
        })?;
        Ok(pid)
    }

    /// The cluster recorded in `dir`, as it is now. Dropping the value does not stop it.
    pub fn open(dir: &Path) -> Result<LocalCluster, ClusterError> {
        let state = ClusterState::load(dir)?.ok_or_else(|| ClusterError::NoCluster {
            dir: dir.to_path_buf(),
        })?;
        Ok(LocalCluster::attached(dir, state))
    }

    fn attached(dir: &Path, state: ClusterState) -> LocalCluster {
        let nodes = state.pids.len();
        LocalCluster {
            // Absolute, like the paths in the nodes' command lines: a node is recognised by
            // its config file's path there, and a relative --dir would match no node.
            dir: dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()),
            state,
            children: (0..nodes).map(|_| None).collect(),
            stop_on_drop: false,
            stop_grace: Duration::from_secs(60),
        }
    }

    /// Leaves the nodes running when this value is dropped, for later `headroom cluster`
    /// commands to find.
    pub fn keep_running(mut self) {
        self.stop_on_drop = false;
    }

    /// The cluster's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cluster's configuration.
    pub fn config(&self) -> &ClusterConfig {
        &self.state.config
    }

    /// The Java that runs the nodes, as recorded at start.
    pub fn java_description(&self) -> &str {
        &self.state.java
    }

    /// Every node's addresses and folders.
    pub fn nodes(&self) -> Vec<NodeSpec> {
        self.state.config.node_specs(&self.dir)
    }

    /// One node by number (1 for the first).
    pub fn node(&self, index: u32) -> Result<NodeSpec, ClusterError> {
        let count = self.state.config.nodes;
        if index == 0 || index > count {
            return Err(ClusterError::NoSuchNode { node: index, count });
        }
        Ok(self.nodes().swap_remove(index as usize - 1))
    }

    /// The CQL endpoints of all nodes, for a driver's contact points.
    pub fn contact_points(&self) -> Vec<SocketAddr> {
        self.nodes().iter().map(NodeSpec::native_addr).collect()
    }

    /// Whether every one of `hosts` (host:port, as a run's contact points) is one of this
    /// cluster's nodes; false when there are none.
    pub fn serves(&self, hosts: &[String]) -> bool {
        let nodes = self.contact_points();
        !hosts.is_empty()
            && hosts.iter().all(|host| {
                host.parse::<SocketAddr>()
                    .ok()
                    .or_else(|| {
                        std::net::ToSocketAddrs::to_socket_addrs(host.as_str())
                            .ok()?
                            .next()
                    })
                    .is_some_and(|addr| nodes.contains(&addr))
            })
    }

    /// The recorded pid of node `index`, if that process still runs this node.
    pub fn pid(&self, index: u32) -> Option<u32> {
        let spec = self.node(index).ok()?;
        let pid = self.state.pids.get(index as usize - 1).copied().flatten()?;
        process::is_running(pid, &spec.command_line_marker()).then_some(pid)
    }

    /// The pids of the nodes that are running.
    pub fn running_pids(&self) -> Vec<u32> {
        (1..=self.state.config.nodes)
            .filter_map(|i| self.pid(i))
            .collect()
    }

    /// Stops every node (SIGTERM, then SIGKILL after `grace`) and records them as stopped.
    /// The data stays.
    pub fn stop(&mut self, grace: Duration) -> Result<(), ClusterError> {
        self.adopt_recorded_pids();
        let targets: Vec<Target> = self
            .nodes()
            .iter()
            .zip(&self.state.pids)
            .filter_map(|(spec, pid)| {
                pid.map(|pid| Target {
                    node: spec.index,
                    pid,
                    marker: spec.command_line_marker(),
                })
            })
            .collect();
        process::stop_all(&targets, grace)?;
        for child in self.children.iter_mut().flatten() {
            let _ = child.wait();
        }
        self.children.iter_mut().for_each(|c| *c = None);
        self.state.pids.iter_mut().for_each(|p| *p = None);
        if self.dir.exists() {
            self.state.save(&self.dir)?;
        }
        Ok(())
    }

    /// Takes the pids another process recorded since this value read the state: a node that
    /// a run restarted (`--during restart:N@T`) or a later `cluster start` started runs
    /// under a pid this value has not seen.
    fn adopt_recorded_pids(&mut self) {
        let Ok(Some(recorded)) = ClusterState::load(&self.dir) else {
            return;
        };
        for (slot, spec) in self.nodes().iter().enumerate() {
            let Some(Some(pid)) = recorded.pids.get(slot).copied() else {
                continue;
            };
            if self.state.pids[slot] != Some(pid)
                && process::is_running(pid, &spec.command_line_marker())
            {
                self.state.pids[slot] = Some(pid);
                // The process this value launched there has ended: reap it.
                if let Some(mut child) = self.children[slot].take() {
                    let _ = child.try_wait();
                }
            }
        }
    }

    /// Stops every node, deletes their data (keyspaces, commit log, hints, caches; the
    /// configuration and logs stay) and starts them again: the same cluster, empty.
    pub fn restart_fresh(
        &mut self,
        grace: Duration,
        options: &StartOptions,
    ) -> Result<(), ClusterError> {
        self.stop(grace)?;
        for spec in self.nodes() {
            for sub in ["data", "commitlog", "hints", "saved_caches", "cdc_raw"] {
                let path = spec.dir.join(sub);
                if path.exists() {
                    fs::remove_dir_all(&path)
                        .map_err(ClusterError::io(format!("removing {}", path.display())))?;
                }
            }
        }
        let mut restarted = LocalCluster::start(&self.dir, self.state.config.clone(), options)?;
        // This value takes over the new nodes; whether they stop on drop stays as it was.
        self.state = restarted.state.clone();
        self.children = std::mem::take(&mut restarted.children);
        restarted.stop_on_drop = false;
        Ok(())
    }

    /// Stops every node and deletes what headroom wrote in the cluster directory: each
    /// node's folder with its data and logs, the certificates, the credentials and the
    /// record; the directory itself too when nothing else is left in it. Files of anyone
    /// else's in the directory stay.
    pub fn destroy(mut self, grace: Duration) -> Result<(), ClusterError> {
        self.stop(grace)?;
        self.stop_on_drop = false;
        let mut ours: Vec<PathBuf> = self.nodes().into_iter().map(|spec| spec.dir).collect();
        ours.push(tls::tls_dir(&self.dir));
        ours.push(auth::credentials_path(&self.dir));
        ours.push(self.dir.join(format!(
            "{}{}",
            crate::catalogue::CLUSTER_JSON,
            crate::catalogue::PARTIAL
        )));
        // The record last: a destroy cut short can be run again.
        ours.push(ClusterState::path(&self.dir));
        for path in ours {
            let removed = match fs::symlink_metadata(&path) {
                Err(_) => Ok(()),
                Ok(meta) if meta.is_dir() => fs::remove_dir_all(&path),
                Ok(_) => fs::remove_file(&path),
            };
            removed.map_err(ClusterError::io(format!("removing {}", path.display())))?;
        }
        // Only when empty: never a file headroom did not write.
        let _ = fs::remove_dir(&self.dir);
        Ok(())
    }

    /// The command that started this cluster for its own use, if one did.
    pub fn owner(&self) -> Option<&state::Owner> {
        self.state.owner.as_ref()
    }

    /// A command that runs nodetool against node `index`; add nodetool's arguments and run it.
    pub fn nodetool(&self, index: u32) -> Result<Command, ClusterError> {
        let spec = self.node(index)?;
        let java = Java::find()?;
        let jars = jars::resolve(
            &self.state.config.cassandra_version,
            &jars::cache_root(),
            &|line| eprintln!("{line}"),
        )?;
        let tools_log = spec.conf_dir().join("logback-tools.xml");
        if !tools_log.exists() {
            write_file(&tools_log, &render::logback_tools_xml())?;
        }
        let mut command = Command::new(&java.path);
        command.args(render::nodetool_args(&spec, &java, &jars));
        Ok(command)
    }

    /// A command that runs nodetool against the JMX endpoint `host:port` of a node headroom
    /// did not start, with the jars of headroom's default Cassandra release (nodetool's JMX
    /// calls work across releases); add nodetool's arguments and run it. Its history and
    /// logging setup live in headroom's cache folder.
    pub fn remote_nodetool(host: &str, port: u16) -> Result<Command, ClusterError> {
        let java = Java::find()?;
        let cache = jars::cache_root();
        let jars = jars::resolve(config::DEFAULT_CASSANDRA_VERSION, &cache, &|line| {
            eprintln!("{line}")
        })?;
        let home = cache.join("nodetool");
        let tools_log = home.join("logback-tools.xml");
        if !tools_log.exists() {
            fs::create_dir_all(&home)
                .map_err(ClusterError::io(format!("creating {}", home.display())))?;
            write_file(&tools_log, &render::logback_tools_xml())?;
        }
        let mut command = Command::new(&java.path);
        command.args(render::nodetool_args_for(
            host, port, &home, &home, &java, &jars,
        ));
        Ok(command)
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        if self.stop_on_drop {
            if let Err(e) = self.stop(self.stop_grace) {
                eprintln!(
                    "headroom: could not stop the cluster in {}: {e}",
                    self.dir.display()
                );
            }
        }
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), ClusterError> {
    fs::write(path, text).map_err(ClusterError::io(format!("writing {}", path.display())))
}

/// Writes a file readable and writable by this user only (keys, credentials), on disk before
/// it returns.
fn write_private_file(path: &Path, text: &str) -> Result<(), ClusterError> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let io = |e| ClusterError::io(format!("writing {}", path.display()))(e);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(&io)?;
    // A file that existed keeps its mode through open: set it.
    file.set_permissions(fs::Permissions::from_mode(0o600))
        .map_err(&io)?;
    file.write_all(text.as_bytes()).map_err(&io)?;
    file.sync_all().map_err(io)
}
