//! The launcher against a fake cluster: a Job that completes, a pod that fails, a log with
//! no packed directory, a stop in the middle, a pod that never starts, a log rotated away
//! but followed.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use futures::future::BoxFuture;
use futures::StreamExt;
use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};
use k8s_openapi::api::core::v1::{
    ConfigMap, ContainerState, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus,
    PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::fleet::kube::api::ApiError;
use crate::results::config::RunSettings;

/// A cluster whose Job ends (`Complete` or `Failed`) at the `ends_after`-th read, or never.
struct Fake {
    ends_after: usize,
    condition: Option<&'static str>,
    pods: Vec<Pod>,
    /// Each pod's log as read whole at the end (what the kubelet still keeps).
    logs: HashMap<String, String>,
    /// Each pod's log as a follower reads it while it is written; the same as `logs`
    /// unless a test says otherwise.
    followed: HashMap<String, String>,
    reads: AtomicUsize,
    calls: Mutex<Vec<String>>,
    created_job: Mutex<Option<Job>>,
}

impl Fake {
    fn new(condition: Option<&'static str>) -> Fake {
        Fake {
            ends_after: 3,
            condition,
            pods: Vec::new(),
            logs: HashMap::new(),
            followed: HashMap::new(),
            reads: AtomicUsize::new(0),
            calls: Mutex::new(Vec::new()),
            created_job: Mutex::new(None),
        }
    }

    fn with_pod(mut self, index: u32, phase: &str, exit_code: Option<i32>, log: &str) -> Fake {
        let name = format!("headroom-t-{index}-abcde");
        let state = match exit_code {
            Some(code) if code < 0 => ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some("ErrImageNeverPull".to_string()),
                    message: Some("image headroom:9 is not present with pull policy Never".into()),
                }),
                ..ContainerState::default()
            },
            Some(code) => ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: code,
                    reason: Some(if code == 0 { "Completed" } else { "Error" }.to_string()),
                    ..ContainerStateTerminated::default()
                }),
                ..ContainerState::default()
            },
            None => ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some("ImagePullBackOff".to_string()),
                    message: Some("pull access denied".to_string()),
                }),
                ..ContainerState::default()
            },
        };
        self.pods.push(Pod {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                annotations: Some(BTreeMap::from([(INDEX_KEY.to_string(), index.to_string())])),
                ..ObjectMeta::default()
            },
            status: Some(PodStatus {
                phase: Some(phase.to_string()),
                container_statuses: Some(vec![ContainerStatus {
                    name: CONTAINER.to_string(),
                    state: Some(state),
                    ..ContainerStatus::default()
                }]),
                ..PodStatus::default()
            }),
            ..Pod::default()
        });
        self.logs.insert(name.clone(), log.to_string());
        self.followed.insert(name, log.to_string());
        self
    }

    /// The pod of worker `index + 1`'s log as the end finds it: rotated away, say, while a
    /// follower read it all.
    fn with_log_at_the_end(mut self, index: u32, log: &str) -> Fake {
        self.logs
            .insert(format!("headroom-t-{index}-abcde"), log.to_string());
        self
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }

    fn call(&self, what: String) {
        self.calls.lock().unwrap().push(what);
    }

    fn deleted(&self) -> bool {
        self.calls().iter().any(|c| c.starts_with("delete job"))
    }
}

impl KubeApi for Fake {
    fn create_config_map<'a>(
        &'a self,
        namespace: &'a str,
        config_map: &'a ConfigMap,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let name = config_map.metadata.name.clone().unwrap();
        self.call(format!("create configmap {namespace}/{name}"));
        Box::pin(async { Ok(()) })
    }

    fn create_job<'a>(
        &'a self,
        namespace: &'a str,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let name = job.metadata.name.clone().unwrap();
        self.call(format!("create job {namespace}/{name}"));
        *self.created_job.lock().unwrap() = Some(job.clone());
        Box::pin(async { Ok(()) })
    }

    fn get_job<'a>(
        &'a self,
        _namespace: &'a str,
        _name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Job>, ApiError>> {
        let reads = self.reads.fetch_add(1, Ordering::SeqCst) + 1;
        let mut job = self.created_job.lock().unwrap().clone();
        if self.deleted() {
            job = None;
        }
        if let (Some(job), Some(condition)) = (job.as_mut(), self.condition) {
            if reads >= self.ends_after {
                job.status = Some(JobStatus {
                    conditions: Some(vec![JobCondition {
                        type_: condition.to_string(),
                        status: "True".to_string(),
                        reason: (condition == "Failed").then(|| "BackoffLimitExceeded".into()),
                        ..JobCondition::default()
                    }]),
                    ..JobStatus::default()
                });
            }
        }
        Box::pin(async move { Ok(job) })
    }

    fn list_pods<'a>(
        &'a self,
        _namespace: &'a str,
        selector: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Pod>, ApiError>> {
        self.call(format!("list pods {selector}"));
        let pods = self.pods.clone();
        Box::pin(async move { Ok(pods) })
    }

    fn pod_log<'a>(
        &'a self,
        _namespace: &'a str,
        pod: &'a str,
        container: &'a str,
    ) -> BoxFuture<'a, Result<String, ApiError>> {
        assert_eq!(container, CONTAINER);
        let log = self.logs.get(pod).cloned();
        Box::pin(async move { log.ok_or_else(|| ApiError::Other(format!("no pod {pod}"))) })
    }

    fn delete_job<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        self.call(format!("delete job {namespace}/{name}"));
        Box::pin(async { Ok(()) })
    }

    fn delete_config_map<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        self.call(format!("delete configmap {namespace}/{name}"));
        Box::pin(async { Ok(()) })
    }

    fn follow_log(
        &self,
        _namespace: &str,
        pod: &str,
        container: &str,
    ) -> futures::stream::BoxStream<'static, Result<Vec<u8>, ApiError>> {
        assert_eq!(container, CONTAINER);
        self.call(format!("follow {pod}"));
        let lines: Vec<Result<Vec<u8>, ApiError>> = self
            .followed
            .get(pod)
            .map(|log| {
                log.split_inclusive('\n')
                    .map(|l| Ok(l.as_bytes().to_vec()))
                    .collect()
            })
            .unwrap_or_default();
        futures::stream::iter(lines).boxed()
    }
}

fn plan(out: &Path, workers: u32, start_in: Duration) -> WorkerPlan {
    // The recorded run the unit tests share (fixtures.rs), read by its path.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run");
    let mut settings = RunSettings::read(&fixture).unwrap();
    settings.hosts = vec!["cassandra.db.svc".to_string()];
    WorkerPlan {
        name: "t".to_string(),
        settings,
        workers,
        start_at: SystemTime::now() + start_in,
        out: out.to_path_buf(),
        populate: false,
    }
}

/// A worker's log as the pod writes it: the run's last lines, then its directory packed.
fn worker_log(scratch: &Path, worker: u32, exit_code: i32) -> String {
    let dir = scratch.join(format!("made-{worker}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("summary.json"),
        format!("{{\"worker\": {worker}}}"),
    )
    .unwrap();
    let mut log = b"Summary: 2000/s, p99 4.1 ms\n".to_vec();
    pack::pack(&dir, worker, exit_code, pack::DEFAULT_MAX_BYTES, &mut log).unwrap();
    String::from_utf8(log).unwrap()
}

async fn launch(fake: Arc<Fake>, plan: &WorkerPlan, stop: &StopSignal) -> Vec<WorkerEnd> {
    let launcher = KubernetesLauncher::new(fake, KubeOptions::new("img:1", "load"))
        .with_poll(Duration::from_millis(5));
    launcher.run(plan, stop).await
}

#[tokio::test]
async fn a_completed_job_brings_every_workers_directory_back_and_is_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = Arc::new(
        Fake::new(Some("Complete"))
            .with_pod(0, "Succeeded", Some(0), &worker_log(tmp.path(), 1, 0))
            .with_pod(1, "Succeeded", Some(0), &worker_log(tmp.path(), 2, 3)),
    );
    let plan = plan(&tmp.path().join("trial"), 2, Duration::from_secs(60));
    let ends = launch(fake.clone(), &plan, &StopSignal::new()).await;
    assert_eq!(
        ends,
        [
            WorkerEnd::Finished {
                index: 1,
                dir: plan.worker_dir(1),
                exit_code: 0
            },
            WorkerEnd::Finished {
                index: 2,
                dir: plan.worker_dir(2),
                exit_code: 3
            },
        ]
    );
    let summary = std::fs::read_to_string(plan.worker_dir(2).join("summary.json")).unwrap();
    assert_eq!(summary, "{\"worker\": 2}");
    let calls = fake.calls();
    assert_eq!(calls[0], "create configmap load/headroom-t");
    assert_eq!(calls[1], "create job load/headroom-t");
    assert!(
        calls.contains(&"list pods headroom-job=headroom-t".to_string()),
        "{calls:?}"
    );
    assert_eq!(
        calls[calls.len() - 2..],
        [
            "delete job load/headroom-t",
            "delete configmap load/headroom-t"
        ]
    );
}

#[tokio::test]
async fn a_failed_pod_makes_its_worker_failed_with_its_exit_code_and_last_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = Arc::new(
        Fake::new(Some("Failed"))
            .with_pod(0, "Succeeded", Some(0), &worker_log(tmp.path(), 1, 0))
            .with_pod(
                1,
                "Failed",
                Some(1),
                "Error: no node of the cluster answered: cassandra.db.svc:9042\n\
                 headroom run exited with 1\n",
            ),
    );
    let plan = plan(&tmp.path().join("trial"), 2, Duration::from_secs(60));
    let ends = launch(fake.clone(), &plan, &StopSignal::new()).await;
    assert!(
        matches!(ends[0], WorkerEnd::Finished { index: 1, .. }),
        "{ends:?}"
    );
    let WorkerEnd::Failed { index: 2, reason } = &ends[1] else {
        panic!("{ends:?}")
    };
    for words in [
        "pod headroom-t-1-abcde Failed",
        "exit code 1 (Error)",
        "no packed run directory",
        "no node of the cluster answered",
        "Job failed: BackoffLimitExceeded",
    ] {
        assert!(reason.contains(words), "{words}: {reason}");
    }
    assert!(!plan.worker_dir(2).exists());
    assert!(fake.deleted());
}

#[tokio::test]
async fn a_log_without_a_packed_directory_or_with_a_damaged_one_fails_its_worker() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = worker_log(tmp.path(), 2, 0);
    let cut: String = whole.lines().take(2).map(|l| format!("{l}\n")).collect();
    let fake = Arc::new(
        Fake::new(Some("Complete"))
            .with_pod(
                0,
                "Succeeded",
                Some(0),
                "the run printed this and nothing more\n",
            )
            .with_pod(1, "Succeeded", Some(0), &cut),
    );
    let plan = plan(&tmp.path().join("trial"), 3, Duration::from_secs(60));
    let ends = launch(fake, &plan, &StopSignal::new()).await;
    let reasons: Vec<String> = ends
        .iter()
        .map(|end| match end {
            WorkerEnd::Failed { reason, .. } => reason.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(
        reasons[0].contains("no packed run directory"),
        "{}",
        reasons[0]
    );
    assert!(
        reasons[0].contains("the run printed this"),
        "{}",
        reasons[0]
    );
    assert!(reasons[1].contains("damaged"), "{}", reasons[1]);
    assert!(reasons[2].contains("no pod of worker 3"), "{}", reasons[2]);
}

#[tokio::test]
async fn stop_set_mid_run_deletes_the_job_and_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = Arc::new(Fake::new(None));
    let plan = plan(&tmp.path().join("trial"), 2, Duration::from_secs(600));
    let stop = StopSignal::new();
    let trigger = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.trigger();
    });
    let ends = tokio::time::timeout(Duration::from_secs(10), launch(fake.clone(), &plan, &stop))
        .await
        .expect("the launch returns once stopped");
    assert_eq!(ends.len(), 2);
    for end in &ends {
        assert!(
            matches!(end, WorkerEnd::Failed { reason, .. } if reason.contains("stopped")),
            "{end:?}"
        );
    }
    assert!(fake.deleted());
    assert!(fake
        .calls()
        .contains(&"delete configmap load/headroom-t".to_string()));
}

#[tokio::test]
async fn a_pod_still_pulling_its_image_after_the_start_gives_the_trial_up() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = Arc::new(
        Fake::new(None)
            .with_pod(0, "Running", None, "")
            .with_pod(1, "Pending", None, ""),
    );
    // Started a minute ago: past the grace.
    let mut plan = plan(&tmp.path().join("trial"), 2, Duration::ZERO);
    plan.start_at = SystemTime::now() - Duration::from_secs(60);
    let ends = tokio::time::timeout(
        Duration::from_secs(10),
        launch(fake.clone(), &plan, &StopSignal::new()),
    )
    .await
    .expect("the launch gives up");
    let WorkerEnd::Failed { reason, .. } = &ends[1] else {
        panic!("{ends:?}")
    };
    assert!(reason.contains("ImagePullBackOff"), "{reason}");
    assert!(reason.contains("not every worker runs"), "{reason}");
    assert!(fake.deleted());
}

#[tokio::test]
async fn a_log_rotated_away_is_brought_back_from_its_follower() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = worker_log(tmp.path(), 1, 0);
    // The kubelet rotated the log: read whole at the end, only its last lines are left.
    let rotated: String = whole.lines().rev().take(3).collect::<Vec<_>>().join("\n");
    let fake = Arc::new(
        Fake::new(Some("Complete"))
            .with_pod(0, "Succeeded", Some(0), &whole)
            .with_log_at_the_end(0, &rotated),
    );
    let plan = plan(&tmp.path().join("trial"), 1, Duration::from_secs(60));
    let ends = launch(fake.clone(), &plan, &StopSignal::new()).await;
    assert!(
        matches!(
            ends[0],
            WorkerEnd::Finished {
                index: 1,
                exit_code: 0,
                ..
            }
        ),
        "{ends:?}"
    );
    assert!(fake
        .calls()
        .contains(&"follow headroom-t-0-abcde".to_string()));
    // Without the follower's copy, the rotated log alone would not do.
    assert!(pack::find_blocks(rotated.as_bytes()).unwrap().is_empty());
}

#[tokio::test]
async fn a_stopped_trial_keeps_what_its_workers_packed() {
    let tmp = tempfile::tempdir().unwrap();
    // The pods run; stopped, their runs end and pack what they measured (exit 130).
    let fake = Arc::new(
        Fake::new(None)
            .with_pod(0, "Running", Some(0), &worker_log(tmp.path(), 1, 130))
            .with_pod(1, "Running", Some(0), &worker_log(tmp.path(), 2, 130)),
    );
    let plan = plan(&tmp.path().join("trial"), 2, Duration::from_secs(600));
    let stop = StopSignal::new();
    let trigger = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.trigger();
    });
    let ends = tokio::time::timeout(Duration::from_secs(10), launch(fake.clone(), &plan, &stop))
        .await
        .expect("the launch returns once stopped");
    for (k, end) in ends.iter().enumerate() {
        assert!(
            matches!(end, WorkerEnd::Finished { exit_code: 130, .. }),
            "worker {}: {end:?}",
            k + 1
        );
    }
    assert!(plan.worker_dir(2).join("summary.json").exists());
    let calls = fake.calls();
    let deleted = calls
        .iter()
        .position(|c| c.starts_with("delete job"))
        .unwrap();
    assert!(
        calls[..deleted].iter().any(|c| c.starts_with("follow")),
        "{calls:?}"
    );
}

#[tokio::test]
async fn an_image_that_cannot_be_had_gives_the_trial_up_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = Arc::new(
        Fake::new(None)
            .with_pod(0, "Running", Some(0), "")
            .with_pod(1, "Pending", Some(-1), ""),
    );
    // The start is ten minutes away: the trial is given up well before it.
    let plan = plan(&tmp.path().join("trial"), 2, Duration::from_secs(600));
    let ends = tokio::time::timeout(
        Duration::from_secs(10),
        launch(fake.clone(), &plan, &StopSignal::new()),
    )
    .await
    .expect("the launch gives up at once");
    let WorkerEnd::Failed { reason, .. } = &ends[1] else {
        panic!("{ends:?}")
    };
    assert!(reason.contains("cannot start"), "{reason}");
    assert!(reason.contains("ErrImageNeverPull"), "{reason}");
    assert!(fake.deleted());
}

#[test]
fn describe_names_the_pods_the_job_and_the_namespace() {
    let mut options = KubeOptions::new("reg/headroom:1", "load");
    options.name = Some("headroom-rate-4000-repeat-1".to_string());
    let launcher = KubernetesLauncher::new(Arc::new(Fake::new(None)), options);
    assert_eq!(
        launcher.describe(3),
        "3 pods of Job headroom-rate-4000-repeat-1 in namespace load, image reg/headroom:1"
    );
    assert_eq!(launcher.lead(), Duration::from_secs(60));
}
