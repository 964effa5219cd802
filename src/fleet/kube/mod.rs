//! The fleet on Kubernetes: the workers of a trial as the pods of one Indexed Job.
//!
//! - [`manifest`]: the ConfigMap (the workers' config.json) and the Job, as typed objects
//!   built from a [`WorkerPlan`](super::launch::WorkerPlan) and [`KubeOptions`];
//! - [`pack`]: a worker's run directory carried back through its pod's log (decision 0010);
//! - [`api`]: the few API calls the launcher makes, behind a trait ([`api::KubeApi`]), with
//!   kube-rs's client as the real one;
//! - [`launcher`]: [`KubernetesLauncher`], the [`Launcher`](super::launch::Launcher) that
//!   creates them, waits, reads each pod's log back into `worker-K` and cleans up;
//! - [`options`]: how the pods are made ([`KubeOptions`]), as search.json keeps it;
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
pub mod options;
pub mod pack;
pub mod worker;

#[cfg(feature = "kubernetes")]
pub use launcher::KubernetesLauncher;
pub use options::{Credentials, KubeOptions, Resources};

/// Whether this build has the Kubernetes launcher and `kube manifest`.
pub const BUILT: bool = cfg!(feature = "kubernetes");

/// What `--launcher kubernetes` and `kube manifest` say in a build without them.
pub fn not_built() -> crate::usage::UsageError {
    crate::usage::UsageError::new(
        "this headroom was built without Kubernetes support (--no-default-features): build          it with `cargo build --release` for --launcher kubernetes and kube manifest",
    )
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
