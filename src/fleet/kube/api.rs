//! The Kubernetes API calls of the launcher, behind [`KubeApi`] so the launcher's logic is
//! tested against a fake cluster; [`ClientApi`] makes them through kube-rs.
//!
//! The launcher polls (a Job and its pods every few seconds) rather than watching: N pods
//! and one Job a trial are a handful of small requests, and a poll needs no resuming after a
//! dropped watch.

use futures::future::BoxFuture;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams};

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// An object of that name exists already (409).
    #[error("{0} exists already")]
    AlreadyExists(String),
    /// Any other failure, in the API's words.
    #[error("{0}")]
    Other(String),
}

/// The calls the launcher makes, in one namespace.
pub trait KubeApi: Send + Sync {
    /// Creates the ConfigMap.
    fn create_config_map<'a>(
        &'a self,
        namespace: &'a str,
        config_map: &'a ConfigMap,
    ) -> BoxFuture<'a, Result<(), ApiError>>;

    /// Creates the Job.
    fn create_job<'a>(
        &'a self,
        namespace: &'a str,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<(), ApiError>>;

    /// The Job as it is now; `None` when it is gone.
    fn get_job<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Job>, ApiError>>;

    /// The pods matching a label selector (`key=value`).
    fn list_pods<'a>(
        &'a self,
        namespace: &'a str,
        selector: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Pod>, ApiError>>;

    /// A container's whole log.
    fn pod_log<'a>(
        &'a self,
        namespace: &'a str,
        pod: &'a str,
        container: &'a str,
    ) -> BoxFuture<'a, Result<String, ApiError>>;

    /// Deletes the Job and, in the background, its pods; one already gone is no error.
    fn delete_job<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), ApiError>>;

    /// Deletes the ConfigMap; one already gone is no error.
    fn delete_config_map<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), ApiError>>;
}

/// [`KubeApi`] through kube-rs's client.
#[derive(Clone)]
pub struct ClientApi {
    client: kube::Client,
}

impl ClientApi {
    /// Connects as kubectl would: KUBECONFIG or ~/.kube/config, else the pod's service
    /// account.
    pub async fn connect() -> anyhow::Result<ClientApi> {
        let client = kube::Client::try_default().await.map_err(|e| {
            anyhow::anyhow!(
                "cannot reach a Kubernetes cluster (KUBECONFIG, ~/.kube/config or the pod's \
                 service account): {e}"
            )
        })?;
        Ok(ClientApi { client })
    }
}

fn other(error: kube::Error) -> ApiError {
    match &error {
        kube::Error::Api(status) => ApiError::Other(format!(
            "{} ({} {})",
            status.message, status.code, status.reason
        )),
        _ => ApiError::Other(error.to_string()),
    }
}

fn created<K>(what: String, result: Result<K, kube::Error>) -> Result<(), ApiError> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Err(ApiError::AlreadyExists(what)),
        Err(e) => Err(other(e)),
    }
}

fn deleted<K>(result: Result<K, kube::Error>) -> Result<(), ApiError> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(other(e)),
    }
}

impl KubeApi for ClientApi {
    fn create_config_map<'a>(
        &'a self,
        namespace: &'a str,
        config_map: &'a ConfigMap,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), namespace);
            let name = config_map.metadata.name.clone().unwrap_or_default();
            let result = api.create(&PostParams::default(), config_map).await;
            created(format!("ConfigMap {name} in namespace {namespace}"), result)
        })
    }

    fn create_job<'a>(
        &'a self,
        namespace: &'a str,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let api: Api<Job> = Api::namespaced(self.client.clone(), namespace);
            let name = job.metadata.name.clone().unwrap_or_default();
            let result = api.create(&PostParams::default(), job).await;
            created(format!("Job {name} in namespace {namespace}"), result)
        })
    }

    fn get_job<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Job>, ApiError>> {
        Box::pin(async move {
            let api: Api<Job> = Api::namespaced(self.client.clone(), namespace);
            api.get_opt(name).await.map_err(other)
        })
    }

    fn list_pods<'a>(
        &'a self,
        namespace: &'a str,
        selector: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Pod>, ApiError>> {
        Box::pin(async move {
            let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
            let list = api
                .list(&ListParams::default().labels(selector))
                .await
                .map_err(other)?;
            Ok(list.items)
        })
    }

    fn pod_log<'a>(
        &'a self,
        namespace: &'a str,
        pod: &'a str,
        container: &'a str,
    ) -> BoxFuture<'a, Result<String, ApiError>> {
        Box::pin(async move {
            let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
            let params = LogParams {
                container: Some(container.to_string()),
                ..LogParams::default()
            };
            api.logs(pod, &params).await.map_err(other)
        })
    }

    fn delete_job<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let api: Api<Job> = Api::namespaced(self.client.clone(), namespace);
            deleted(api.delete(name, &DeleteParams::background()).await)
        })
    }

    fn delete_config_map<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), namespace);
            deleted(api.delete(name, &DeleteParams::default()).await)
        })
    }
}
