//! What a fleet search keeps in search.json: how many workers, where they run and, on
//! Kubernetes, how their pods are made. Apart from `launch` (the contract every launcher
//! implements), which the Kubernetes launcher imports: the pods' options here import it in
//! turn.

use serde::{Deserialize, Serialize};

use super::kube::KubeOptions;

/// Where a fleet's workers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LauncherKind {
    /// Processes of this machine ([`super::local::LocalLauncher`]).
    Local,
    /// Pods of an Indexed Job on a Kubernetes cluster.
    Kubernetes,
}

/// A search whose trials a fleet runs: how many workers, and where (search.json keeps it, so
/// that `--resume` goes on with the same fleet).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetSettings {
    /// Workers per trial (N).
    pub workers: u32,
    /// Where they run.
    pub launcher: LauncherKind,
    /// With `launcher` kubernetes: how the pods are made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube: Option<KubeOptions>,
}
