//! How a fleet's pods are made ([`KubeOptions`]): the namespace, image, resources, the
//! credentials' Secret and the rest of a Job that is not in a trial's plan, as search.json
//! keeps them so that `--resume` makes the same pods.

use std::time::Duration;

use super::pack;

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
