//! The Kubernetes API calls of the launcher, behind [`KubeApi`] so the launcher's logic is
//! tested against a fake cluster; [`ClientApi`] makes them through kube-rs.
//!
//! The launcher polls (a Job and its pods every few seconds) rather than watching: N pods
//! and one Job a trial are a handful of small requests, and a poll needs no resuming after a
//! dropped watch. Each pod's log is followed as it is written, so that the kubelet's log
//! rotation cannot take a worker's results (decision 0014).

use std::pin::Pin;

use futures::future::BoxFuture;
use futures::stream::{BoxStream, StreamExt};
use futures::{AsyncBufRead, AsyncBufReadExt};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams};

/// The longest log line a follower keeps whole (as [`super::pack`]'s reader).
const MAX_LINE_BYTES: usize = 64 << 10;

/// What the coordinator does in the workers' namespace, as RBAC names it: (API group,
/// resource, subresource, verb). docs/distributed.md's Role grants exactly these.
pub const RIGHTS: [(&str, &str, &str, &str); 7] = [
    ("", "configmaps", "", "create"),
    ("", "configmaps", "", "delete"),
    ("batch", "jobs", "", "create"),
    ("batch", "jobs", "", "get"),
    ("batch", "jobs", "", "delete"),
    ("", "pods", "", "list"),
    ("", "pods", "log", "get"),
];

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// An object of that name exists already (409).
    #[error("{0} exists already")]
    AlreadyExists(String),
    /// RBAC refused the call (403), in the API server's words.
    #[error("{0}: the coordinator lacks this right; grant it the Role of docs/distributed.md")]
    Forbidden(String),
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

    /// Follows a container's log from its start as it is written, a line at a time (each
    /// with its newline, at most 64 KiB of it), until the container ends.
    fn follow_log(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
    ) -> BoxStream<'static, Result<Vec<u8>, ApiError>>;
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

    /// The [`RIGHTS`] the coordinator lacks in `namespace`, as the API server answers a
    /// SelfSubjectAccessReview for each (which every authenticated user may ask): `verb
    /// resource` words, empty when it has them all.
    pub async fn missing_rights(&self, namespace: &str) -> Result<Vec<String>, ApiError> {
        let api: Api<SelfSubjectAccessReview> = Api::all(self.client.clone());
        let mut missing = Vec::new();
        for (group, resource, subresource, verb) in RIGHTS {
            let review = SelfSubjectAccessReview {
                spec: SelfSubjectAccessReviewSpec {
                    resource_attributes: Some(ResourceAttributes {
                        namespace: Some(namespace.to_string()),
                        group: Some(group.to_string()),
                        resource: Some(resource.to_string()),
                        subresource: (!subresource.is_empty()).then(|| subresource.to_string()),
                        verb: Some(verb.to_string()),
                        ..ResourceAttributes::default()
                    }),
                    ..SelfSubjectAccessReviewSpec::default()
                },
                ..SelfSubjectAccessReview::default()
            };
            let answer = api
                .create(&PostParams::default(), &review)
                .await
                .map_err(other)?;
            if !answer.status.is_some_and(|s| s.allowed) {
                missing.push(right_name(group, resource, subresource, verb));
            }
        }
        Ok(missing)
    }
}

/// `create jobs.batch`, `get pods/log`: a right as RBAC errors name it.
pub fn right_name(group: &str, resource: &str, subresource: &str, verb: &str) -> String {
    let resource = match (group, subresource) {
        ("", "") => resource.to_string(),
        ("", sub) => format!("{resource}/{sub}"),
        (group, "") => format!("{resource}.{group}"),
        (group, sub) => format!("{resource}.{group}/{sub}"),
    };
    format!("{verb} {resource}")
}

/// Reads one line (with its newline) into `line`, keeping at most `max` bytes of it and
/// skipping the rest; `false` at the end of the stream.
async fn read_line_capped(
    reader: &mut Pin<Box<dyn AsyncBufRead + Send>>,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<bool> {
    line.clear();
    let mut any = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(any);
        }
        any = true;
        let (taken, ends) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = max.saturating_sub(line.len());
        line.extend_from_slice(&available[..taken.min(room)]);
        reader.consume_unpin(taken);
        if ends {
            return Ok(true);
        }
    }
}

fn other(error: kube::Error) -> ApiError {
    match &error {
        // RBAC's own words name the user, the verb and the resource.
        kube::Error::Api(status) if status.code == 403 => {
            ApiError::Forbidden(status.message.clone())
        }
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

    fn follow_log(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
    ) -> BoxStream<'static, Result<Vec<u8>, ApiError>> {
        /// Where a follow stands: not opened yet, reading, or over.
        enum Follow {
            Start(Box<(Api<Pod>, String, LogParams)>),
            Reading(Pin<Box<dyn AsyncBufRead + Send>>),
            Over,
        }
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let params = LogParams {
            container: Some(container.to_string()),
            follow: true,
            ..LogParams::default()
        };
        let start = Follow::Start(Box::new((api, pod.to_string(), params)));
        futures::stream::unfold(start, |follow| async move {
            let mut reader = match follow {
                Follow::Start(start) => match start.0.log_stream(&start.1, &start.2).await {
                    Ok(reader) => Box::pin(reader) as Pin<Box<dyn AsyncBufRead + Send>>,
                    Err(e) => return Some((Err(other(e)), Follow::Over)),
                },
                Follow::Reading(reader) => reader,
                Follow::Over => return None,
            };
            let mut line = Vec::new();
            match read_line_capped(&mut reader, &mut line, MAX_LINE_BYTES).await {
                Ok(true) => Some((Ok(line), Follow::Reading(reader))),
                Ok(false) => None,
                Err(e) => Some((
                    Err(ApiError::Other(format!("the log stream broke: {e}"))),
                    Follow::Over,
                )),
            }
        })
        .boxed()
    }
}
