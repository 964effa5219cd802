//! The files and command line of one node: cassandra.yaml, logback.xml,
//! cassandra-rackdc.properties and the JVM arguments.

use std::ffi::OsString;
use std::path::Path;

use super::config::{
    CassandraVersion, ClusterConfig, NodeSpec, NATIVE_PORT, STORAGE_PORT, TOKENS_PER_NODE,
};
use super::jars::CassandraJars;
use super::java::Java;

/// The class Cassandra's start script runs.
pub const DAEMON_CLASS: &str = "org.apache.cassandra.service.CassandraDaemon";

/// Module-system openings Cassandra needs on Java 11 and later: the list Cassandra ships in
/// conf/jvm11-server.options and conf/jvm17-server.options. nodetool needs them too.
pub const JAVA_MODULE_OPENINGS: &[&str] = &[
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.math=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
];

/// The tokens of node `index` (1-based) of `nodes`: TOKENS_PER_NODE tokens, interleaved with
/// the other nodes' so that every node owns exactly 1/nodes of the Murmur3 ring.
pub fn initial_tokens(index: u32, nodes: u32) -> Vec<i64> {
    let total = u128::from(TOKENS_PER_NODE * nodes);
    let ring = 1u128 << 64;
    (0..TOKENS_PER_NODE)
        .map(|k| {
            let position = u128::from(k * nodes + index - 1) * ring / total;
            (position as i128 + i128::from(i64::MIN)) as i64
        })
        .collect()
}

/// A YAML scalar for any text: a JSON string is a valid YAML double-quoted scalar.
fn quoted(text: impl AsRef<str>) -> String {
    serde_json::to_string(text.as_ref()).expect("a string always serializes")
}

fn path_text(path: &Path) -> String {
    quoted(path.to_string_lossy())
}

/// cassandra.yaml for one node. Only what differs from Cassandra's built-in defaults is
/// written, so a reader sees at a glance what headroom chose.
pub fn cassandra_yaml(config: &ClusterConfig, node: &NodeSpec) -> String {
    let mut yaml = base_yaml(config, node);
    if config.auth {
        yaml.push_str("authenticator: PasswordAuthenticator\n");
    }
    if config.tls.is_on() {
        // The node's folder is in the cluster's directory, which holds the certificates.
        let cluster_dir = node.dir.parent().unwrap_or(&node.dir);
        yaml.push_str(&super::tls::client_encryption_yaml(
            cluster_dir,
            node.index,
            config.tls.requires_client_certificate(),
        ));
    }
    apply_overrides(&yaml, &config.yaml)
}

/// Replaces (or adds) top-level keys of a YAML text: each `(key, value)` becomes one line
/// `key: value`, taking the place of the key's whole block (its line and the indented lines
/// under it) where the text has the key, or added at the end.
pub fn apply_overrides(yaml: &str, overrides: &[(String, String)]) -> String {
    // Split into blocks: a top-level line with its indented continuation lines.
    let mut blocks: Vec<(Option<String>, String)> = Vec::new();
    for line in yaml.lines() {
        let top_level =
            !line.starts_with([' ', '\t', '-']) && !line.starts_with('#') && line.contains(':');
        if top_level || blocks.is_empty() {
            let key = top_level.then(|| line.split(':').next().unwrap_or("").trim().to_string());
            blocks.push((key, format!("{line}\n")));
        } else {
            let last = blocks.last_mut().expect("a block exists");
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    for (key, value) in overrides {
        let line = format!("{key}: {value}\n");
        match blocks
            .iter_mut()
            .find(|(k, _)| k.as_deref() == Some(key.as_str()))
        {
            Some(block) => block.1 = line,
            None => blocks.push((Some(key.clone()), line)),
        }
    }
    blocks.into_iter().map(|(_, text)| text).collect()
}

fn base_yaml(config: &ClusterConfig, node: &NodeSpec) -> String {
    let version = CassandraVersion::parse(&config.cassandra_version)
        .expect("the configuration was validated before rendering");
    // Each data centre splits the whole ring among its own nodes; a data centre's tokens are
    // those of the first one, moved up by its number, so that no two nodes share a token.
    let per_dc = config.nodes_per_dc();
    let dc = (node.index - 1) / per_dc;
    let tokens: Vec<String> = initial_tokens(node.index - dc * per_dc, per_dc)
        .iter()
        .map(|t| (t + i64::from(dc)).to_string())
        .collect();
    let seeds: Vec<String> = config
        .seeds()
        .iter()
        .map(|seed| format!("{seed}:{STORAGE_PORT}"))
        .collect();
    let commitlog_period = if version.has_unit_names() {
        "commitlog_sync_period: 10000ms"
    } else {
        "commitlog_sync_period_in_ms: 10000"
    };
    let dir = |name: &str| path_text(&node.dir.join(name));
    format!(
        "# Written by headroom for node {index} of {nodes}; rewritten at every start.\n\
         cluster_name: headroom\n\
         num_tokens: {num_tokens}\n\
         initial_token: {tokens}\n\
         # A new, empty cluster: nothing to stream, and the tokens are given above.\n\
         auto_bootstrap: false\n\
         partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n\
         data_file_directories: [{data}]\n\
         commitlog_directory: {commitlog}\n\
         hints_directory: {hints}\n\
         saved_caches_directory: {saved_caches}\n\
         cdc_raw_directory: {cdc_raw}\n\
         commitlog_sync: periodic\n\
         {commitlog_period}\n\
         seed_provider:\n  \
           - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    \
             parameters:\n      \
               - seeds: \"{seed}\"\n\
         listen_address: {address}\n\
         rpc_address: {address}\n\
         storage_port: {storage_port}\n\
         native_transport_port: {native_port}\n\
         start_native_transport: true\n\
         endpoint_snitch: GossipingPropertyFileSnitch\n",
        index = node.index,
        nodes = config.nodes,
        num_tokens = TOKENS_PER_NODE,
        tokens = quoted(tokens.join(",")),
        data = dir("data"),
        commitlog = dir("commitlog"),
        hints = path_text(&node.hints_dir()),
        saved_caches = dir("saved_caches"),
        cdc_raw = dir("cdc_raw"),
        seed = seeds.join(","),
        storage_port = STORAGE_PORT,
        native_port = NATIVE_PORT,
        address = node.address,
    )
}

/// cassandra-rackdc.properties: the node's data centre, one rack per data centre.
pub fn rackdc_properties(config: &ClusterConfig, node: &NodeSpec) -> String {
    format!(
        "# Written by headroom.\ndc={}\nrack=rack1\n",
        config.datacenter_of(node.index)
    )
}

/// logback.xml: everything at INFO and above to the console, which headroom sends to
/// logs/system.log.
pub fn logback_xml() -> String {
    r#"<!-- Written by headroom: the node's console output is its log. -->
<configuration scan="false">
  <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
    <encoder>
      <pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
  <root level="INFO">
    <appender-ref ref="CONSOLE"/>
  </root>
</configuration>
"#
    .to_string()
}

/// The JVM arguments that start one node, main class included.
pub fn jvm_args(
    config: &ClusterConfig,
    node: &NodeSpec,
    java: &Java,
    jars: &CassandraJars,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |arg: String| args.push(OsString::from(arg));
    let heap = config.heap.to_jvm();
    push(format!("-Xms{heap}"));
    push(format!("-Xmx{heap}"));
    push(config.gc.jvm_flag().to_string());
    // Bound to its cores, the JVM sizes its GC, compiler and Cassandra's thread pools to them.
    if let Some(cores) = &node.cores {
        push(format!("-XX:ActiveProcessorCount={}", cores.len()));
    }
    // Cassandra's own defaults (conf/jvm-server.options) that matter for pauses and safety.
    push("-Xss256k".into());
    push("-XX:+AlwaysPreTouch".into());
    push("-XX:+PerfDisableSharedMem".into());
    push("-XX:+ExitOnOutOfMemoryError".into());
    push("-Djava.net.preferIPv4Stack=true".into());
    push("-Djdk.attach.allowAttachSelf=true".into());
    let gc_log = node.gc_log_path();
    if java.major >= 9 {
        for opening in JAVA_MODULE_OPENINGS {
            push((*opening).to_string());
        }
        // Every stop-the-world pause, with wall-clock and uptime stamps, for pause charts.
        push(format!(
            "-Xlog:gc*,safepoint:file={}:time,uptime,level,tags:filecount=10,filesize=20M",
            gc_log.display()
        ));
    } else {
        push(format!("-Xloggc:{}", gc_log.display()));
        push("-XX:+PrintGCDetails".into());
        push("-XX:+PrintGCDateStamps".into());
        push("-XX:+PrintGCApplicationStoppedTime".into());
    }
    if let Some(jamm) = jars.jamm_agent() {
        push(format!("-javaagent:{}", jamm.display()));
    }
    push(node.command_line_marker());
    push(format!(
        "-Dcassandra-rackdc.properties=file://{}",
        node.conf_dir()
            .join("cassandra-rackdc.properties")
            .display()
    ));
    push(format!(
        "-Dlogback.configurationFile=file://{}",
        node.conf_dir().join("logback.xml").display()
    ));
    push(format!("-Dcassandra.logdir={}", node.logs_dir().display()));
    push(format!("-Dcassandra.storagedir={}", node.dir.display()));
    push(format!("-Dcassandra.jmx.local.port={}", node.jmx_port));
    push("-Dcassandra-foreground=yes".into());
    // A brand-new local cluster has no gossip to wait for.
    push("-Dcassandra.skip_wait_for_gossip_to_settle=0".into());
    if config.auth {
        // The default superuser at once, not 10 s after start: it creates headroom's role.
        push("-Dcassandra.superuser_setup_delay_ms=0".into());
    }
    for opt in &config.jvm_opts {
        push(opt.clone());
    }
    args.push(OsString::from("-cp"));
    args.push(jars.class_path(&node.conf_dir()));
    args.push(OsString::from(DAEMON_CLASS));
    args
}

/// The JVM arguments that run nodetool against `node`, before nodetool's own arguments.
pub fn nodetool_args(node: &NodeSpec, java: &Java, jars: &CassandraJars) -> Vec<OsString> {
    nodetool_args_for(
        "127.0.0.1",
        node.jmx_port,
        &node.dir,
        &node.conf_dir(),
        java,
        jars,
    )
}

/// The JVM arguments of nodetool against the JMX endpoint `host:port`, any node's: `home`
/// keeps nodetool's history and logs, `conf_dir` holds logback-tools.xml.
pub fn nodetool_args_for(
    host: &str,
    port: u16,
    home: &Path,
    conf_dir: &Path,
    java: &Java,
    jars: &CassandraJars,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["-Xmx256m".into(), "-XX:+UseSerialGC".into()];
    if java.major >= 9 {
        args.extend(JAVA_MODULE_OPENINGS.iter().map(OsString::from));
    }
    // nodetool keeps a history under user.home/.cassandra; keep it in headroom's folders.
    args.push(format!("-Duser.home={}", home.display()).into());
    args.push(format!("-Dcassandra.logdir={}", home.join("logs").display()).into());
    args.push(
        format!(
            "-Dlogback.configurationFile=file://{}",
            conf_dir.join("logback-tools.xml").display()
        )
        .into(),
    );
    args.push("-cp".into());
    args.push(jars.class_path(conf_dir));
    args.push("org.apache.cassandra.tools.NodeTool".into());
    args.push("-h".into());
    args.push(host.into());
    args.push("-p".into());
    args.push(port.to_string().into());
    args
}

/// logback-tools.xml: nodetool prints only warnings and errors of its own, to stderr.
pub fn logback_tools_xml() -> String {
    r#"<!-- Written by headroom for nodetool. -->
<configuration scan="false">
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR"/></root>
</configuration>
"#
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::config::GcKind;
    use crate::units::ByteSize;

    fn three_nodes() -> (ClusterConfig, Vec<NodeSpec>) {
        let config = ClusterConfig {
            nodes: 3,
            heap: ByteSize::mib(768),
            gc: GcKind::Shenandoah,
            jvm_opts: vec!["-XX:MaxGCPauseMillis=50".into()],
            ..ClusterConfig::default()
        };
        let specs = config.node_specs(Path::new("/c"));
        (config, specs)
    }

    #[test]
    fn tokens_interleave_and_split_the_ring_evenly() {
        let all: Vec<i64> = {
            let mut t: Vec<i64> = (1..=3).flat_map(|i| initial_tokens(i, 3)).collect();
            t.sort();
            t
        };
        assert_eq!(all.len(), 48);
        assert_eq!(all[0], i64::MIN);
        let gaps: Vec<i128> = all
            .windows(2)
            .map(|w| i128::from(w[1]) - i128::from(w[0]))
            .collect();
        let (lo, hi) = (gaps.iter().min().unwrap(), gaps.iter().max().unwrap());
        assert!(
            hi - lo <= 1,
            "gaps differ by more than rounding: {lo} .. {hi}"
        );
        assert_eq!(
            initial_tokens(2, 3)[0],
            all[1],
            "node 2 takes the slot right after node 1"
        );
        assert_eq!(initial_tokens(1, 1)[8], 0);
    }

    /// Two data centres of two nodes: a seed in each, each node's own data centre, and
    /// every data centre's ring split evenly among its nodes with no token shared.
    #[test]
    fn each_data_centre_has_its_seed_its_name_and_its_own_even_ring() {
        let config = ClusterConfig::from_settings(
            &crate::cluster::ClusterSettings {
                nodes: Some(2),
                dcs: Some(2),
                heap: Some(crate::units::ByteSize::mib(768)),
                ..Default::default()
            },
            None,
        )
        .unwrap();
        assert_eq!(config.nodes, 4);
        let specs = config.node_specs(Path::new("/c"));
        let dcs: Vec<String> = specs
            .iter()
            .map(|n| rackdc_properties(&config, n))
            .map(|p| {
                p.lines()
                    .find(|l| l.starts_with("dc="))
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(dcs, ["dc=dc1", "dc=dc1", "dc=dc2", "dc=dc2"]);
        let yaml = cassandra_yaml(&config, &specs[3]);
        assert!(
            yaml.contains("- seeds: \"127.0.0.1:7000,127.0.0.3:7000\""),
            "{yaml}"
        );
        let tokens = |i: usize| -> Vec<i64> {
            let yaml = cassandra_yaml(&config, &specs[i]);
            let line = yaml
                .lines()
                .find(|l| l.starts_with("initial_token:"))
                .unwrap();
            line.trim_start_matches("initial_token: ")
                .trim_matches('"')
                .split(',')
                .map(|t| t.parse().unwrap())
                .collect()
        };
        let mut all: Vec<i64> = (0..4).flat_map(tokens).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 4 * TOKENS_PER_NODE as usize, "no token shared");
        // dc2's ring is dc1's, one token up.
        let moved: Vec<i64> = tokens(0).iter().map(|t| t + 1).collect();
        assert_eq!(tokens(2), moved);
        // One data centre keeps Cassandra's default name.
        let one = ClusterConfig::default();
        assert!(
            rackdc_properties(&one, &one.node_specs(Path::new("/c"))[0]).contains("dc=datacenter1")
        );
    }

    #[test]
    fn yaml_has_the_node_address_directories_and_seed() {
        let (config, specs) = three_nodes();
        let yaml = cassandra_yaml(&config, &specs[1]);
        assert!(yaml.contains("listen_address: 127.0.0.2\n"));
        assert!(yaml.contains("rpc_address: 127.0.0.2\n"));
        assert!(yaml.contains("- seeds: \"127.0.0.1:7000\""));
        assert!(yaml.contains("data_file_directories: [\"/c/node2/data\"]"));
        assert!(yaml.contains("commitlog_directory: \"/c/node2/commitlog\""));
        assert!(yaml.contains("commitlog_sync_period: 10000ms"));
        assert!(yaml.contains("num_tokens: 16\ninitial_token: \""));
        assert!(yaml.contains("endpoint_snitch: GossipingPropertyFileSnitch"));
        let old = ClusterConfig {
            cassandra_version: "4.0.13".into(),
            ..config
        };
        assert!(cassandra_yaml(&old, &specs[1]).contains("commitlog_sync_period_in_ms: 10000\n"));
    }

    #[test]
    fn yaml_overrides_replace_whole_blocks_or_are_added() {
        let (mut config, specs) = three_nodes();
        config.yaml = vec![
            ("authenticator".into(), "PasswordAuthenticator".into()),
            ("seed_provider".into(), "[{class_name: X}]".into()),
            ("num_tokens".into(), "16".into()),
        ];
        let yaml = cassandra_yaml(&config, &specs[0]);
        assert!(
            yaml.ends_with("authenticator: PasswordAuthenticator\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("seed_provider: [{class_name: X}]\nlisten_address"),
            "{yaml}"
        );
        assert!(
            !yaml.contains("SimpleSeedProvider"),
            "the whole block is replaced"
        );
        assert_eq!(yaml.matches("num_tokens:").count(), 1);
    }

    #[test]
    fn yaml_quotes_paths_that_would_break_it() {
        let config = ClusterConfig::default();
        let specs = config.node_specs(Path::new("/tmp/my cluster: \"x\""));
        let yaml = cassandra_yaml(&config, &specs[0]);
        assert!(
            yaml.contains(r#"commitlog_directory: "/tmp/my cluster: \"x\"/node1/commitlog""#),
            "{yaml}"
        );
    }

    #[test]
    fn jvm_arguments_carry_heap_gc_logs_ports_and_user_options_last() {
        let (config, specs) = three_nodes();
        let java = Java {
            path: "/usr/bin/java".into(),
            major: 17,
            version: "17.0.15".into(),
        };
        let jars = CassandraJars {
            version: "5.0.9".into(),
            lib_dir: "/cache/lib".into(),
        };
        let args: Vec<String> = jvm_args(&config, &specs[2], &java, &jars)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let has = |s: &str| args.iter().any(|a| a == s);
        assert!(has("-Xms768M") && has("-Xmx768M"));
        assert!(has("-XX:+UseShenandoahGC"));
        assert!(has("-XX:+ExitOnOutOfMemoryError"));
        assert!(has("-Dcassandra.jmx.local.port=7399"));
        assert!(has(
            "-Dcassandra.config=file:///c/node3/conf/cassandra.yaml"
        ));
        assert!(has("--add-opens=java.base/java.nio=ALL-UNNAMED"));
        assert!(args
            .iter()
            .any(|a| a.starts_with("-Xlog:gc*,safepoint:file=/c/node3/logs/gc.log:")));
        let user = args
            .iter()
            .position(|a| a == "-XX:MaxGCPauseMillis=50")
            .unwrap();
        let cp = args.iter().position(|a| a == "-cp").unwrap();
        assert!(user < cp, "user options come before the class path");
        assert_eq!(args[cp + 1], "/c/node3/conf:/cache/lib/*");
        assert_eq!(args.last().unwrap(), DAEMON_CLASS);

        let java8 = Java { major: 8, ..java };
        let old: Vec<String> = jvm_args(&config, &specs[0], &java8, &jars)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert!(
            !old.iter().any(|a| a.starts_with("--add-opens")),
            "Java 8 rejects module options"
        );
        assert!(old.iter().any(|a| a == "-Xloggc:/c/node1/logs/gc.log"));
    }

    #[test]
    fn nodetool_targets_the_node_jmx_port() {
        let (_, specs) = three_nodes();
        let java = Java {
            path: "/usr/bin/java".into(),
            major: 17,
            version: "17.0.15".into(),
        };
        let jars = CassandraJars {
            version: "5.0.9".into(),
            lib_dir: "/cache/lib".into(),
        };
        let args: Vec<String> = nodetool_args(&specs[1], &java, &jars)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(
            &args[args.len() - 5..],
            [
                "org.apache.cassandra.tools.NodeTool",
                "-h",
                "127.0.0.1",
                "-p",
                "7299"
            ]
        );
    }
}
