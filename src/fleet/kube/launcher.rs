//! [`KubernetesLauncher`]: a trial's workers as the pods of an Indexed Job. It creates the
//! ConfigMap and the Job, polls until the Job has ended (or a pod never started, or the
//! deadline passed, or `stop` was set), reads each pod's log back into `worker-K`, and
//! deletes what it created whatever happened.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use super::api::KubeApi;
use super::manifest::{self, CONTAINER, JOB_LABEL};
use super::pack;
use super::KubeOptions;
use crate::fleet::launch::{Launcher, WorkerEnd, WorkerPlan};
use crate::stop::StopSignal;

/// The annotation (and, since Kubernetes 1.28, label) holding a pod's completion index.
const INDEX_KEY: &str = "batch.kubernetes.io/job-completion-index";
/// How long after the start a pod may still be waiting (image pull, scheduling) before the
/// trial is given up: it would send its share late.
const START_GRACE: Duration = Duration::from_secs(30);
/// Lines of a pod's log quoted when it brought no run directory back.
const TAIL_LINES: usize = 8;

/// Runs a trial's workers as the pods of an Indexed Job (see [`super::manifest`]).
pub struct KubernetesLauncher {
    api: Arc<dyn KubeApi>,
    options: KubeOptions,
    poll: Duration,
}

/// How the wait for the Job ended.
#[derive(Debug)]
enum Waited {
    /// The Job has ended; its condition in words.
    Ended(String),
    /// `stop` was set.
    Stopped,
    /// The Job or its pods went wrong before ending; why.
    GaveUp(String),
}

impl KubernetesLauncher {
    /// A launcher making its calls through `api`.
    pub fn new(api: Arc<dyn KubeApi>, options: KubeOptions) -> KubernetesLauncher {
        KubernetesLauncher {
            api,
            options,
            poll: Duration::from_secs(2),
        }
    }

    /// How often the Job and its pods are read while they run (2 s by default).
    pub fn with_poll(mut self, poll: Duration) -> KubernetesLauncher {
        self.poll = poll;
        self
    }

    /// The options the pods are made with.
    pub fn options(&self) -> &KubeOptions {
        &self.options
    }

    async fn launch(&self, plan: &WorkerPlan, stop: &StopSignal) -> Result<Vec<WorkerEnd>, String> {
        let now = SystemTime::now();
        let manifest = manifest::build(plan, &self.options, now).map_err(|e| e.to_string())?;
        let namespace = self.options.namespace.as_str();
        let name = manifest::job_name(plan, &self.options);
        self.api
            .create_config_map(namespace, &manifest.config_map)
            .await
            .map_err(|e| format!("cannot create the ConfigMap: {e}"))?;
        if let Err(e) = self.api.create_job(namespace, &manifest.job).await {
            self.clean_up(&name).await;
            return Err(format!("cannot create the Job: {e}"));
        }
        let deadline = now + manifest::deadline(plan, &self.options, now) + self.poll * 5;
        let waited = self.wait(plan, &name, deadline, stop).await;
        let ends = match &waited {
            Waited::Stopped => WorkerEnd::all_failed(
                plan.workers,
                &format!("stopped: Job {name} deleted before it ended"),
            ),
            Waited::Ended(how) | Waited::GaveUp(how) => self.collect(plan, &name, how).await,
        };
        self.clean_up(&name).await;
        Ok(ends)
    }

    /// Polls the Job and its pods until the Job ends, `stop` is set, or it cannot end well.
    async fn wait(
        &self,
        plan: &WorkerPlan,
        name: &str,
        deadline: SystemTime,
        stop: &StopSignal,
    ) -> Waited {
        let namespace = self.options.namespace.as_str();
        let selector = format!("{JOB_LABEL}={name}");
        loop {
            if stop.is_set() {
                return Waited::Stopped;
            }
            match self.api.get_job(namespace, name).await {
                Ok(None) => return Waited::GaveUp(format!("Job {name} was deleted")),
                Ok(Some(job)) => {
                    if let Some(ended) = job_ended(&job) {
                        return Waited::Ended(ended);
                    }
                }
                // A passing error of the API is read again at the next poll; the deadline
                // bounds how long.
                Err(_) => {}
            }
            let now = SystemTime::now();
            if now > deadline {
                return Waited::GaveUp(format!(
                    "Job {name} had not ended {} s after the start, past its deadline",
                    deadline
                        .duration_since(plan.start_at)
                        .unwrap_or_default()
                        .as_secs()
                ));
            }
            if now > plan.start_at + START_GRACE {
                if let Ok(pods) = self.api.list_pods(namespace, &selector).await {
                    if let Some(late) = not_started(&pods, plan.workers) {
                        return Waited::GaveUp(late);
                    }
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(self.poll) => {}
                _ = stop.wait() => {}
            }
        }
    }

    /// Each worker's end: its run directory unpacked from its pod's log, or why not.
    async fn collect(&self, plan: &WorkerPlan, name: &str, job_state: &str) -> Vec<WorkerEnd> {
        let namespace = self.options.namespace.as_str();
        let selector = format!("{JOB_LABEL}={name}");
        let pods = match self.api.list_pods(namespace, &selector).await {
            Ok(pods) => pods,
            Err(e) => {
                return WorkerEnd::all_failed(
                    plan.workers,
                    &format!("{job_state}; its pods could not be listed: {e}"),
                )
            }
        };
        let mut ends = Vec::new();
        for index in 1..=plan.workers {
            let pod = pods.iter().rfind(|p| pod_index(p) == Some(index - 1));
            let end = match pod {
                None => WorkerEnd::Failed {
                    index,
                    reason: format!("no pod of worker {index} is left ({job_state})"),
                },
                Some(pod) => self.bring_back(plan, index, pod, job_state).await,
            };
            ends.push(end);
        }
        ends
    }

    /// Worker `index`'s run directory from `pod`'s log into `plan.worker_dir(index)`.
    async fn bring_back(&self, plan: &WorkerPlan, index: u32, pod: &Pod, job: &str) -> WorkerEnd {
        let namespace = self.options.namespace.as_str();
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        let failed = |why: String| WorkerEnd::Failed {
            index,
            reason: format!("{}; {why} ({job})", pod_state(pod)),
        };
        let log = match self.api.pod_log(namespace, &pod_name, CONTAINER).await {
            Ok(log) => log,
            Err(e) => return failed(format!("its log could not be read: {e}")),
        };
        let blocks = match pack::find_blocks(log.as_bytes()) {
            Ok(blocks) => blocks,
            Err(e) => return failed(e.to_string()),
        };
        let Some(block) = blocks.into_iter().find(|b| b.header.worker == index) else {
            return failed(format!(
                "no packed run directory in its log, which ends:\n{}",
                tail(&log, TAIL_LINES)
            ));
        };
        let dir = plan.worker_dir(index);
        match pack::unpack(&block, &dir) {
            Ok(()) => WorkerEnd::Finished {
                index,
                dir,
                exit_code: block.header.exit_code,
            },
            Err(e) => failed(e.to_string()),
        }
    }

    /// Deletes the Job (its pods in the background) and the ConfigMap; a failure leaves
    /// them to the Job's TTL.
    async fn clean_up(&self, name: &str) {
        let namespace = self.options.namespace.as_str();
        let _ = self.api.delete_job(namespace, name).await;
        let _ = self.api.delete_config_map(namespace, name).await;
    }
}

impl Launcher for KubernetesLauncher {
    fn describe(&self, workers: u32) -> String {
        let job = match &self.options.name {
            Some(name) => format!("Job {name}"),
            None => "an Indexed Job per trial (headroom-TRIAL)".to_string(),
        };
        format!(
            "{workers} pods of {job} in namespace {}, image {}",
            self.options.namespace, self.options.image
        )
    }

    fn lead(&self) -> Duration {
        self.options.lead
    }

    fn run<'a>(
        &'a self,
        plan: &'a WorkerPlan,
        stop: &'a StopSignal,
    ) -> BoxFuture<'a, Vec<WorkerEnd>> {
        Box::pin(async move {
            match self.launch(plan, stop).await {
                Ok(ends) => ends,
                Err(reason) => WorkerEnd::all_failed(plan.workers, &reason),
            }
        })
    }
}

/// The Job's final condition in words, when it has one.
fn job_ended(job: &Job) -> Option<String> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .find(|c| c.status == "True" && (c.type_ == "Complete" || c.type_ == "Failed"))
        .map(|c| {
            let mut words = format!("Job {}", c.type_.to_lowercase());
            if let Some(reason) = &c.reason {
                words.push_str(&format!(": {reason}"));
            }
            if let Some(message) = c.message.as_deref().filter(|m| !m.is_empty()) {
                words.push_str(&format!(" ({message})"));
            }
            words
        })
}

/// A pod's completion index.
fn pod_index(pod: &Pod) -> Option<u32> {
    let meta = &pod.metadata;
    [meta.annotations.as_ref(), meta.labels.as_ref()]
        .into_iter()
        .flatten()
        .find_map(|map| map.get(INDEX_KEY))
        .and_then(|v| v.parse().ok())
}

/// Why the trial cannot run as one schedule when, past the start, a worker has no pod or
/// its pod still waits; `None` when every one runs or has run.
fn not_started(pods: &[Pod], workers: u32) -> Option<String> {
    let mut late = Vec::new();
    for index in 0..workers {
        match pods.iter().find(|p| pod_index(p) == Some(index)) {
            None => late.push(format!("worker {} has no pod", index + 1)),
            Some(pod) => {
                let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
                if matches!(phase, None | Some("Pending")) {
                    late.push(format!("worker {}: {}", index + 1, pod_state(pod)));
                }
            }
        }
    }
    (!late.is_empty()).then(|| {
        format!(
            "{} s after the start, not every worker runs: {}",
            START_GRACE.as_secs(),
            late.join("; ")
        )
    })
}

/// A pod's state in words: its name, phase and the worker container's state.
fn pod_state(pod: &Pod) -> String {
    let name = pod.metadata.name.as_deref().unwrap_or("?");
    let status = pod.status.as_ref();
    let mut words = format!(
        "pod {name} {}",
        status.and_then(|s| s.phase.as_deref()).unwrap_or("Unknown")
    );
    if let Some(reason) = status.and_then(|s| s.reason.as_deref()) {
        words.push_str(&format!(" ({reason})"));
    }
    let container = status
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|all| all.iter().find(|c| c.name == CONTAINER));
    if let Some(state) = container.and_then(|c| c.state.as_ref()) {
        if let Some(t) = &state.terminated {
            words.push_str(&format!(", exit code {}", t.exit_code));
            if let Some(reason) = &t.reason {
                words.push_str(&format!(" ({reason})"));
            }
        } else if let Some(w) = &state.waiting {
            words.push_str(&format!(
                ", waiting: {}",
                w.reason.as_deref().unwrap_or("?")
            ));
            if let Some(message) = &w.message {
                words.push_str(&format!(" ({message})"));
            }
        }
    }
    words
}

/// The last `lines` lines of a log.
fn tail(log: &str, lines: usize) -> String {
    let all: Vec<&str> = log.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
#[path = "launcher_tests.rs"]
mod tests;
