//! [`KubernetesLauncher`]: a trial's workers as the pods of an Indexed Job. It creates the
//! ConfigMap and the Job, polls until the Job has ended (or a pod cannot start, or the
//! deadline passed, or `stop` was set), follows each pod's log from the moment its container
//! runs (so that the kubelet's rotation cannot take the worker's results, decision 0014),
//! unpacks each worker's run directory into `worker-K`, and deletes what it created
//! whatever happened. Stopped, it deletes the Job first: the pods get SIGTERM, their runs
//! end and pack what they measured, and that is kept, as the local launcher keeps it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use futures::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use super::api::KubeApi;
use super::manifest::{self, CONTAINER, JOB_LABEL};
use super::pack;
use super::options::KubeOptions;
use crate::fleet::launch::{Launcher, WorkerEnd, WorkerPlan};
use crate::stop::StopSignal;

/// The annotation (and, since Kubernetes 1.28, label) holding a pod's completion index.
const INDEX_KEY: &str = "batch.kubernetes.io/job-completion-index";
/// How long after the start a pod may still be waiting (image pull, scheduling) before the
/// trial is given up: it would send its share late.
const START_GRACE: Duration = Duration::from_secs(30);
/// Lines of a pod's log quoted when it brought no run directory back.
const TAIL_LINES: usize = 8;
/// How long, once the Job has ended or been deleted, the followers of the pods' logs may
/// take to read to the end: the pods' grace period for SIGTERM (30 s by default) and the
/// packing of their directories.
const FOLLOW_DRAIN: Duration = Duration::from_secs(45);
/// A container waiting for one of these never starts by itself: the trial is given up at
/// once rather than at the start's grace. (A pull that fails may succeed at its next try:
/// `ImagePullBackOff` is left to the grace.)
const FATAL_WAITS: [&str; 4] = [
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
];

/// One pod's log as followed while the pod wrote it.
#[derive(Default)]
struct Followed {
    /// The blocks and the last other lines read so far.
    collector: pack::Collector,
    /// A block went wrong, or the stream broke: the log is read whole at the end instead.
    failed: Option<String>,
}

/// The followers of a trial's pods, by pod name, with each pod's worker (its index).
#[derive(Default)]
struct Followers {
    logs: BTreeMap<String, (Option<u32>, Arc<Mutex<Followed>>)>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Followers {
    /// The log followed of `pod`, or else of any pod of worker `index` (a pod deleted since,
    /// whose log was read while it ran).
    fn of(&self, pod: Option<&str>, index: u32) -> Option<&Arc<Mutex<Followed>>> {
        pod.and_then(|name| self.logs.get(name))
            .or_else(|| {
                self.logs
                    .values()
                    .rev()
                    .find(|(i, _)| *i == Some(index - 1))
            })
            .map(|(_, followed)| followed)
    }
}

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
        let mut followers = Followers::default();
        let waited = self.wait(plan, &name, deadline, stop, &mut followers).await;
        let how = match &waited {
            Waited::Stopped => format!("stopped: Job {name} deleted before it ended"),
            Waited::Ended(how) | Waited::GaveUp(how) => how.clone(),
        };
        if !matches!(waited, Waited::Ended(_)) {
            // The pods get SIGTERM: their runs end and pack what they measured, which the
            // followers read before the pods are gone.
            let _ = self.api.delete_job(namespace, &name).await;
        }
        drain(&mut followers).await;
        let ends = self.collect(plan, &name, &how, &followers).await;
        self.clean_up(&name).await;
        Ok(ends)
    }

    /// Polls the Job and its pods until the Job ends, `stop` is set, or it cannot end well;
    /// follows each pod's log from the moment its container has started.
    async fn wait(
        &self,
        plan: &WorkerPlan,
        name: &str,
        deadline: SystemTime,
        stop: &StopSignal,
        followers: &mut Followers,
    ) -> Waited {
        let namespace = self.options.namespace.as_str();
        let selector = format!("{JOB_LABEL}={name}");
        loop {
            if stop.is_set() {
                return Waited::Stopped;
            }
            if let Ok(pods) = self.api.list_pods(namespace, &selector).await {
                self.follow_new(&pods, followers);
                if let Some(fatal) = cannot_start(&pods) {
                    return Waited::GaveUp(fatal);
                }
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

    /// Starts following the log of each pod whose container has started and is not
    /// followed yet.
    fn follow_new(&self, pods: &[Pod], followers: &mut Followers) {
        let namespace = self.options.namespace.as_str();
        for pod in pods {
            let Some(name) = pod.metadata.name.clone() else {
                continue;
            };
            if followers.logs.contains_key(&name) || !has_started(pod) {
                continue;
            }
            let followed = Arc::new(Mutex::new(Followed::default()));
            followers
                .logs
                .insert(name.clone(), (pod_index(pod), followed.clone()));
            let mut lines = self.api.follow_log(namespace, &name, CONTAINER);
            followers.tasks.push(tokio::spawn(async move {
                while let Some(line) = lines.next().await {
                    let mut followed = followed.lock().unwrap_or_else(|e| e.into_inner());
                    let read = match line {
                        Ok(line) => followed.collector.line(&line).map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    };
                    if let Err(why) = read {
                        followed.failed = Some(why);
                        return;
                    }
                }
            }));
        }
    }

    /// Each worker's end: its run directory unpacked from its pod's log, or why not.
    async fn collect(
        &self,
        plan: &WorkerPlan,
        name: &str,
        job_state: &str,
        followers: &Followers,
    ) -> Vec<WorkerEnd> {
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
            let followed = followers.of(pod.and_then(|p| p.metadata.name.as_deref()), index);
            let end = match (pod, followed) {
                (Some(pod), _) => self.bring_back(plan, index, pod, job_state, followed).await,
                // Its pod is gone (deleted, evicted), but its log was read as it ran.
                (None, Some(followed)) => self.unpack_followed(plan, index, followed, job_state),
                (None, None) => WorkerEnd::Failed {
                    index,
                    reason: format!("no pod of worker {index} is left ({job_state})"),
                },
            };
            ends.push(end);
        }
        ends
    }

    /// Worker `index`'s run directory from the log followed of a pod that is gone.
    fn unpack_followed(
        &self,
        plan: &WorkerPlan,
        index: u32,
        followed: &Arc<Mutex<Followed>>,
        job: &str,
    ) -> WorkerEnd {
        let mut f = followed.lock().unwrap_or_else(|e| e.into_inner());
        let failed = |why: String| WorkerEnd::Failed {
            index,
            reason: format!("its pod is gone; {why} ({job})"),
        };
        if let Some(why) = &f.failed {
            return failed(format!("its log broke off: {why}"));
        }
        let tail = f.collector.tail(TAIL_LINES);
        let blocks = match std::mem::take(&mut f.collector).finish() {
            Ok(blocks) => blocks,
            Err(e) => return failed(e.to_string()),
        };
        match blocks.into_iter().find(|b| b.header.worker == index) {
            Some(block) => unpacked(plan, index, &block).unwrap_or_else(failed),
            None => failed(format!(
                "no packed run directory in its log, which ends:\n{tail}"
            )),
        }
    }

    /// Worker `index`'s run directory from `pod`'s log into `plan.worker_dir(index)`: from
    /// the log as followed when that read a whole block, else from the log read whole now
    /// (what the kubelet still keeps of it).
    async fn bring_back(
        &self,
        plan: &WorkerPlan,
        index: u32,
        pod: &Pod,
        job: &str,
        followed: Option<&Arc<Mutex<Followed>>>,
    ) -> WorkerEnd {
        let namespace = self.options.namespace.as_str();
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        let failed = |why: String| WorkerEnd::Failed {
            index,
            reason: format!("{}; {why} ({job})", pod_state(pod)),
        };
        if !has_started(pod) {
            return failed("its container never started".to_string());
        }
        let from_follow = followed.and_then(|f| {
            let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
            if f.failed.is_some() {
                return None;
            }
            let tail = f.collector.tail(TAIL_LINES);
            let blocks = std::mem::take(&mut f.collector).finish().ok()?;
            Some((blocks, tail))
        });
        let (blocks, log_tail) = match from_follow {
            Some((blocks, tail)) if blocks.iter().any(|b| b.header.worker == index) => {
                (blocks, tail)
            }
            _ => {
                let log = match self.api.pod_log(namespace, &pod_name, CONTAINER).await {
                    Ok(log) => log,
                    Err(e) => return failed(format!("its log could not be read: {e}")),
                };
                match pack::find_blocks(log.as_bytes()) {
                    Ok(blocks) => (blocks, tail(&log, TAIL_LINES)),
                    Err(e) => return failed(e.to_string()),
                }
            }
        };
        let Some(block) = blocks.into_iter().find(|b| b.header.worker == index) else {
            return failed(format!(
                "no packed run directory in its log, which ends:\n{log_tail}"
            ));
        };
        unpacked(plan, index, &block).unwrap_or_else(failed)
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

/// Unpacks worker `index`'s block into its directory: its end, or why it could not.
fn unpacked(plan: &WorkerPlan, index: u32, block: &pack::Packed) -> Result<WorkerEnd, String> {
    let dir = plan.worker_dir(index);
    pack::unpack(block, &dir).map_err(|e| e.to_string())?;
    Ok(WorkerEnd::Finished {
        index,
        dir,
        exit_code: block.header.exit_code,
    })
}

/// Waits, at most [`FOLLOW_DRAIN`], for the followers to read their logs to the end; those
/// still reading then are stopped (their pods' logs are read whole instead).
async fn drain(followers: &mut Followers) {
    let tasks = std::mem::take(&mut followers.tasks);
    let aborts: Vec<_> = tasks.iter().map(|t| t.abort_handle()).collect();
    if tokio::time::timeout(FOLLOW_DRAIN, futures::future::join_all(tasks))
        .await
        .is_err()
    {
        for abort in aborts {
            abort.abort();
        }
    }
}

/// Whether a pod's worker container has started (running, or run and ended): its log can
/// be followed.
fn has_started(pod: &Pod) -> bool {
    let state = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|all| all.iter().find(|c| c.name == CONTAINER))
        .and_then(|c| c.state.as_ref());
    state.is_some_and(|s| s.running.is_some() || s.terminated.is_some())
}

/// Why a pod will never start by itself (an image that cannot be had, a Secret or
/// ConfigMap it mounts that is missing), when one waits so; `None` otherwise.
fn cannot_start(pods: &[Pod]) -> Option<String> {
    let fatal: Vec<String> = pods
        .iter()
        .filter(|pod| {
            pod.status
                .as_ref()
                .and_then(|s| s.container_statuses.as_ref())
                .and_then(|all| all.iter().find(|c| c.name == CONTAINER))
                .and_then(|c| c.state.as_ref()?.waiting.as_ref()?.reason.as_deref())
                .is_some_and(|reason| FATAL_WAITS.contains(&reason))
        })
        .map(pod_state)
        .collect();
    (!fatal.is_empty()).then(|| format!("a worker's pod cannot start: {}", fatal.join("; ")))
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
