//! The fleet on Kubernetes: the workers of a trial as the pods of one Indexed Job.
//!
//! - [`manifest`]: the ConfigMap (the workers' config.json) and the Job, as typed objects
//!   built from a [`WorkerPlan`](super::launch::WorkerPlan) and [`KubeOptions`];
//! - [`pack`]: a worker's run directory carried back through its pod's log (decision 0010);
//! - [`api`]: the few API calls the launcher makes, behind a trait ([`api::KubeApi`]), with
//!   kube-rs's client as the real one;
//! - [`launcher`]: [`KubernetesLauncher`], the [`Launcher`](super::launch::Launcher) that
//!   creates them, waits, reads each pod's log back into `worker-K` and cleans up;
//! - `image`, `worker`, `names`: the worker's image, what a pod runs, the checks of names.
//!
//! `api`, `launcher` and `manifest` need the Kubernetes client and its types: they are built
//! with the `kubernetes` feature (on by default). The worker's side needs neither.

#[cfg(feature = "kubernetes")]
pub mod api;
pub mod image;
#[cfg(feature = "kubernetes")]
pub mod launcher;
#[cfg(feature = "kubernetes")]
pub mod manifest;
pub mod names;
pub mod pack;
pub mod worker;

use std::time::Duration;

#[cfg(feature = "kubernetes")]
pub use launcher::KubernetesLauncher;

/// Whether this build has the Kubernetes launcher and `kube manifest`.
pub const BUILT: bool = cfg!(feature = "kubernetes");

/// What `--launcher kubernetes` and `kube manifest` say in a build without them.
pub fn not_built() -> crate::usage::UsageError {
    crate::usage::UsageError::new(
        "this headroom was built without Kubernetes support (--no-default-features): build          it with `cargo build --release` for --launcher kubernetes and kube manifest",
    )
}

/// How the workers' pods are made: everything of a Job that is not in the plan. A fleet
/// search keeps it in search.json, so that `--resume` makes the same pods.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KubeOptions {
    /// The worker image (e.g. `registry.example/headroom:0.1.0`), with `headroom` on its PATH
    /// (`headroom kube image` writes one; the repository's Dockerfile builds one).
    pub image: String,
    /// The namespace of the Job, its ConfigMap and its pods.
    pub namespace: String,
    /// The name of the Job and its ConfigMap; `headroom-<trial>` when absent.
    pub name: Option<String>,
    /// `imagePullPolicy`: Always, IfNotPresent or Never; the cluster's default when absent.
    pub image_pull_policy: Option<String>,
    /// The pods' service account; the namespace's default when absent. The workers never
    /// call the API: its token is not mounted.
    pub service_account: Option<String>,
    /// Secrets to pull the image with.
    pub image_pull_secrets: Vec<String>,
    /// Each worker's CPU and memory.
    pub resources: Resources,
    /// The user the workers log in as, and where their password is.
    pub credentials: Option<Credentials>,
    /// The Secret holding the TLS files config.json names (keys `ca.crt`, `tls.crt`,
    /// `tls.key`), mounted read-only.
    pub tls_secret: Option<String>,
    /// How long a finished Job stays for `kubectl logs` before Kubernetes deletes it.
    pub ttl_after_finished: Duration,
    /// Added to the run's expected length for the Job's `activeDeadlineSeconds`.
    pub deadline_margin: Duration,
    /// How long before the start the launcher creates the Job: scheduling, image pull,
    /// connecting and preparing.
    pub lead: Duration,
    /// The largest packed run directory a worker writes to its log (bytes of base64).
    pub max_log_bytes: u64,
    /// Run the pods on their nodes' network: loopback contact points are then reachable.
    #[serde(default)]
    pub host_network: bool,
}

impl KubeOptions {
    /// Options with the defaults for everything but the image and the namespace.
    pub fn new(image: impl Into<String>, namespace: impl Into<String>) -> KubeOptions {
        KubeOptions {
            image: image.into(),
            namespace: namespace.into(),
            name: None,
            image_pull_policy: None,
            service_account: None,
            image_pull_secrets: Vec::new(),
            resources: Resources::default(),
            credentials: None,
            tls_secret: None,
            ttl_after_finished: Duration::from_secs(3600),
            deadline_margin: Duration::from_secs(300),
            lead: Duration::from_secs(60),
            max_log_bytes: pack::DEFAULT_MAX_BYTES,
            host_network: false,
        }
    }
}

/// CPU and memory of one worker, as Kubernetes quantities (`2`, `500m`, `1Gi`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Resources {
    /// `requests.cpu`.
    pub cpu_request: Option<String>,
    /// `limits.cpu`: a limit throttles the client and makes it the bottleneck (the run is
    /// then judged client-bound); prefer a request alone.
    pub cpu_limit: Option<String>,
    /// `requests.memory`.
    pub memory_request: Option<String>,
    /// `limits.memory`.
    pub memory_limit: Option<String>,
}

/// The user the workers log in as; the password comes from a Secret into HEADROOM_PASSWORD,
/// never through config.json or a flag.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Credentials {
    /// `--username`.
    pub username: String,
    /// The Secret holding the password.
    pub secret: String,
    /// The key of the password in it.
    pub key: String,
}

#[cfg(feature = "kubernetes")]
/// Connects to the cluster of the current kubeconfig (KUBECONFIG, ~/.kube/config) or, inside
/// a pod, its service account, and returns the launcher `capacity --launcher kubernetes`
/// uses.
pub async fn connect(options: KubeOptions) -> anyhow::Result<KubernetesLauncher> {
    let api = api::ClientApi::connect().await?;
    // Asked before the first trial: a right missing halfway would leave a Job behind.
    let missing = api.missing_rights(&options.namespace).await.map_err(|e| {
        anyhow::anyhow!("cannot ask the API server what the coordinator may do: {e}")
    })?;
    if !missing.is_empty() {
        return Err(crate::usage::UsageError::new(format!(
            "the coordinator may not {} in namespace {} (RBAC): grant its user the Role of \
             docs/distributed.md",
            missing.join(", "),
            options.namespace
        ))
        .into());
    }
    Ok(KubernetesLauncher::new(std::sync::Arc::new(api), options))
}
