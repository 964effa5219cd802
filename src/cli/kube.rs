//! `headroom kube`: the fleet's Kubernetes objects for users who apply them with their own
//! tooling, and the two halves of carrying a worker's run directory through a pod's log;
//! and [`KubeLauncherArgs`], the flags of the pods, which `capacity` flattens for
//! `--launcher kubernetes`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::ranges;

/// `headroom kube`
#[derive(Debug, Args, Clone)]
pub struct KubeArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: KubeCommand,
}

/// The subcommands of `headroom kube`.
#[derive(Debug, Subcommand, Clone)]
pub enum KubeCommand {
    /// Print the ConfigMap and the Indexed Job that run a config.json as N workers of one
    /// schedule, as YAML documents for `kubectl apply -f -`.
    ///
    /// Pod K−1 of the Job runs `headroom run --config ... --worker K/N --start-at TIME`;
    /// when it ends, it writes its run directory, packed, to its log. The Job never
    /// restarts a pod (backoffLimit 0: a late worker would send its share after the
    /// others) and ends at a deadline (the time to the start, the run, --deadline-margin).
    /// Secrets it reads (--password-secret, --tls-secret) are named in a comment at the top
    /// and must exist first.
    ///
    /// Then, once the Job has ended, bring the workers' directories back and merge them:
    ///
    ///   kubectl logs -n NS -l headroom-job=NAME --prefix --tail=-1 --max-log-requests=50
    ///   | headroom kube unpack - --out fleet/ && headroom merge fleet/worker-* --out merged/
    ///
    /// Example: headroom kube manifest --config runs/probe/config.json --workers 4
    /// --image registry.example/headroom:0.1.0 --namespace load | kubectl apply -f -
    Manifest(Box<ManifestArgs>),

    /// Write a run directory to stdout as a gzipped tar in base64 between two marker lines:
    /// what a worker's pod does last, so its directory travels back in its log.
    ///
    /// Refuses a directory that would not fit in the log the kubelet keeps (10 MiB by
    /// default) before writing anything.
    Pack(PackArgs),

    /// Read a log (a file, or - for stdin) and unpack every run directory packed in it into
    /// OUT/worker-K. Logs of several pods interleaved, with `kubectl logs --prefix` or
    /// `--timestamps`, are read too.
    ///
    /// Example: kubectl logs -n load -l headroom-job=headroom-probe --prefix --tail=-1 |
    /// headroom kube unpack - --out fleet/
    Unpack(UnpackArgs),

    /// Write the worker image of a fleet as an OCI image archive, without Docker or a
    /// registry: this very binary, the shared libraries it needs, the CA certificates and
    /// the worker's user (10001). Prints the image's name as its last line.
    ///
    /// Load it where the pods run: `ctr -n k8s.io images import FILE` (containerd, the
    /// kubelet's runtime), `docker load -i FILE` or `podman load -i FILE`; then give
    /// `--image NAME --image-pull-policy Never` (or IfNotPresent), or push it to a registry.
    /// The repository's Dockerfile builds the same worker for people with Docker.
    ///
    /// Example: headroom kube image --out headroom-image.tar
    Image(ImageArgs),

    /// What a fleet's pod runs (the Job's command): `headroom run ARGS... --worker K/N
    /// --out /results/worker-K` with K from JOB_COMPLETION_INDEX and N from
    /// HEADROOM_WORKERS, the run's output kept in /results/run.log, its last 40 lines
    /// printed, then the run directory packed into the log (as `kube pack`). SIGTERM is
    /// passed on to the run, whose directory is packed all the same.
    Worker(WorkerArgs),
}

/// `headroom kube manifest`
#[derive(Debug, Args, Clone)]
pub struct ManifestArgs {
    /// The settings every worker runs: a config.json, e.g. the one an earlier `run` wrote
    /// into its directory. Its --hosts must be addresses the pods can reach.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,

    /// How many workers (pods) share the schedule of the config's rate. [range: 1 to 1024]
    #[arg(long, value_name = "N", value_parser = ranges::count::<u32>("1", "1024"))]
    pub workers: u32,

    /// When the schedule starts, the same for every worker: an RFC 3339 time
    /// (2026-11-26T17:00:00Z) or +DURATION from now. Leave the pods time to be scheduled,
    /// pull the image and connect.
    #[arg(long, value_name = "TIME|+DURATION", default_value = "+120s")]
    pub start_at: String,

    /// `run`: skip the populate (the rows are there from an earlier run). Without it each
    /// worker first writes its share of the populate rows, before the start.
    #[arg(long, value_name = "PHASE", value_parser = ["run"])]
    pub phase: Option<String>,

    /// The name of the Job and its ConfigMap (a DNS label). [default: headroom-TRIAL, TRIAL
    /// from the config's directory]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// User name, for a cluster that requires authentication; the password comes from
    /// --password-secret.
    #[arg(long, value_name = "NAME")]
    pub username: Option<String>,

    /// The pods.
    #[command(flatten)]
    pub pods: KubeLauncherArgs,
}

/// The workers' pods on Kubernetes: image, namespace, resources, Secrets.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Kubernetes")]
pub struct KubeLauncherArgs {
    /// The worker image, with headroom on its PATH: `headroom kube image` writes one as an
    /// OCI archive, the repository's Dockerfile builds one with Docker. REGISTRY/headroom:TAG.
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,

    /// The namespace of the Job, its ConfigMap and pods.
    #[arg(long, value_name = "NAMESPACE", default_value = "default")]
    pub namespace: String,

    /// The pods' imagePullPolicy. [default: the cluster's: IfNotPresent, or Always for
    /// :latest]
    #[arg(long, value_name = "POLICY", value_parser = ["Always", "IfNotPresent", "Never"])]
    pub image_pull_policy: Option<String>,

    /// A Secret to pull the image with (repeatable).
    #[arg(long, value_name = "SECRET")]
    pub image_pull_secret: Vec<String>,

    /// The pods' service account. The workers make no API call; its token is not mounted.
    #[arg(long, value_name = "NAME")]
    pub service_account: Option<String>,

    /// CPU each worker requests (2, 1500m). Give it: a worker starved of CPU judges the run
    /// client-bound. A limit (--cpu-limit) throttles the client and is best left out.
    /// [range: 1m to 1k]
    #[arg(long, value_name = "QUANTITY", value_parser = ranges::quantity("1m", "1k"))]
    pub cpu: Option<String>,

    /// CPU limit of each worker. [range: 1m to 1k]
    #[arg(long, value_name = "QUANTITY", value_parser = ranges::quantity("1m", "1k"))]
    pub cpu_limit: Option<String>,

    /// Memory each worker requests (512Mi, 2Gi). [range: 1Mi to 1Ti]
    #[arg(long, value_name = "QUANTITY", value_parser = ranges::quantity("1Mi", "1Ti"))]
    pub memory: Option<String>,

    /// Memory limit of each worker. [range: 1Mi to 1Ti]
    #[arg(long, value_name = "QUANTITY", value_parser = ranges::quantity("1Mi", "1Ti"))]
    pub memory_limit: Option<String>,

    /// The Secret holding the password of --username, given to the workers as
    /// HEADROOM_PASSWORD: `kubectl create secret generic NAME --from-literal=password=...`.
    #[arg(long, value_name = "SECRET")]
    pub password_secret: Option<String>,

    /// The key of the password in --password-secret.
    #[arg(long, value_name = "KEY", default_value = "password")]
    pub password_secret_key: String,

    /// The Secret holding the TLS files the settings name, mounted read-only: keys ca.crt
    /// (--tls-ca), tls.crt (--tls-cert), tls.key (--tls-key).
    #[arg(long, value_name = "SECRET")]
    pub tls_secret: Option<String>,

    /// How long before a trial's start its Job is created: scheduling, image pull,
    /// connecting (the launcher's; `kube manifest` starts at --start-at). [range: 1s to 1h]
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = ranges::duration("1s", "1h"))]
    pub lead: Duration,

    /// Added to the run's length for the Job's deadline (activeDeadlineSeconds). [range:
    /// 1s to 24h]
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = ranges::duration("1s", "24h"))]
    pub deadline_margin: Duration,

    /// How long an ended Job stays (for `kubectl logs`) before Kubernetes deletes it.
    /// [range: 0s to 30d]
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = ranges::duration("0s", "30d"))]
    pub job_ttl: Duration,

    /// The largest packed run directory a worker writes to its log, bytes. The coordinator
    /// follows each pod's log as it is written, so the kubelet's log rotation
    /// (containerLogMaxSize) does not cut it; by hand, follow the logs too (`kubectl logs
    /// -f`), or keep a run's directory under containerLogMaxSize. [range: 1M to 2G]
    #[arg(long, value_name = "BYTES", default_value_t = crate::fleet::kube::pack::DEFAULT_MAX_BYTES, value_parser = ranges::bytes("1M", "2G"))]
    pub max_log_bytes: u64,

    /// Run the pods on their nodes' network (`hostNetwork`): for database nodes a pod
    /// network cannot reach, or a single-node test cluster whose Cassandra listens on
    /// loopback. With it, loopback contact points are accepted; the pods take their
    /// nodes' ports, so two workers on one node must not clash (they do not listen).
    #[arg(long)]
    pub host_network: bool,
}

/// `headroom kube image`
#[derive(Debug, Args, Clone)]
pub struct ImageArgs {
    /// The archive to write.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: PathBuf,

    /// The image's name, as pods name it.
    #[arg(long, value_name = "NAME", default_value_t = crate::fleet::kube::image::default_name())]
    pub name: String,
}

/// `headroom kube worker`
#[derive(Debug, Args, Clone)]
pub struct WorkerArgs {
    /// The arguments of the worker's `headroom run`, after `--`.
    #[arg(
        value_name = "RUN ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

/// `headroom kube pack`
#[derive(Debug, Args, Clone)]
pub struct PackArgs {
    /// The run directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// The worker whose directory it is, K (1-based). [range: 1 to 1024]
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::fleet::worker::MAX_WORKERS)))]
    pub worker: u32,

    /// The exit code of the worker's run, passed on to the coordinator.
    #[arg(
        long,
        value_name = "CODE",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub exit_code: i32,

    /// Refuse a block longer than this, bytes of base64. [range: 1K to 256M]
    #[arg(long, value_name = "BYTES", default_value_t = 9 << 20, value_parser = ranges::bytes("1K", "256M"))]
    pub max_bytes: u64,
}

/// `headroom kube unpack`
#[derive(Debug, Args, Clone)]
pub struct UnpackArgs {
    /// The log to read; - for stdin.
    #[arg(value_name = "LOGFILE", default_value = "-")]
    pub log: String,

    /// The directory that gets worker-K/ for each packed run directory found.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}
