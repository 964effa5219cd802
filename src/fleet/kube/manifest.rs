//! The Kubernetes objects of one trial, typed (k8s-openapi): a ConfigMap holding the workers'
//! config.json and an Indexed Job of N pods, pod K−1 running worker K.
//!
//! What the Job guarantees, and why:
//! - `completionMode: Indexed`, `completions = parallelism = N`: every worker has its own
//!   index and all run at once, as the schedule needs;
//! - `backoffLimit: 0` and `restartPolicy: Never`: a worker that failed is never started
//!   again, since a late worker would send its share of the schedule after the others;
//! - `activeDeadlineSeconds` (the lead, the run, a margin) and `ttlSecondsAfterFinished`:
//!   nothing stays running or lying about when the coordinator is gone.
//!
//! config.json is self-contained for workloads (every definition holds its file's text, not
//! only its path); the paths it does read in a pod are TLS files, which come from a Secret
//! mounted read-only, and the copy in the ConfigMap names them where they are mounted.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, EmptyDirVolumeSource, EnvVar, EnvVarSource,
    KeyToPath, LocalObjectReference, PodSecurityContext, PodSpec, PodTemplateSpec,
    ResourceRequirements, SecretKeySelector, SecretVolumeSource, SecurityContext, Volume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::options::KubeOptions;
use crate::catalogue::CONFIG_JSON;
use crate::fleet::launch::WorkerPlan;
use crate::results::config::RunSettings;
use crate::usage::UsageError;

/// Where the ConfigMap is mounted in a pod.
pub const CONFIG_DIR: &str = "/etc/headroom/config";
/// Where the TLS Secret is mounted.
pub const TLS_DIR: &str = "/etc/headroom/tls";
/// The pod's scratch directory (an emptyDir): the run directory and the run's output.
pub use super::worker::RESULTS_DIR;
/// The worker container's name.
pub const CONTAINER: &str = "worker";
/// The label every object of one Job carries, with the Job's name.
pub const JOB_LABEL: &str = "headroom-job";
/// The label naming the trial.
pub const TRIAL_LABEL: &str = "headroom-trial";
/// The user the image's Dockerfile creates; the pods run as it.
const WORKER_UID: i64 = 10001;

/// The TLS Secret's keys, by the setting they replace (those of `kubernetes.io/tls`, plus
/// `ca.crt`).
const TLS_KEYS: [&str; 3] = ["ca.crt", "tls.crt", "tls.key"];

/// The container's command: `headroom kube worker --` and the run's fixed flags. The worker
/// (see [`super::worker`]) runs worker K (from the Job's 0-based index) with its output kept
/// in a file, so the log holds only its last lines and the packed directory (decision
/// 0010), and packs the directory when the run left a whole one (exit codes 0, 3, 4, and 130
/// when stopped). The container then exits 0, whatever the run's verdict: a pod exiting 3
/// would fail the Job and have the others stopped before they pack. No shell is needed.
pub const WORKER_COMMAND: [&str; 4] = ["headroom", "kube", "worker", "--"];

/// The objects of one trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// config.json, as the pods read it.
    pub config_map: ConfigMap,
    /// The Indexed Job of the workers.
    pub job: Job,
    /// The Secrets the pods read, which must exist beforehand: (name, keys).
    pub secrets: Vec<(String, Vec<String>)>,
}

/// The name of the Job and its ConfigMap: the options' or `headroom-<trial>`.
pub fn job_name(plan: &WorkerPlan, options: &KubeOptions) -> String {
    options
        .name
        .clone()
        .unwrap_or_else(|| label_value(&format!("headroom-{}", plan.name)))
}

/// Builds the ConfigMap and the Job of `plan`; `now` is when the Job will be created, for
/// its deadline.
pub fn build(
    plan: &WorkerPlan,
    options: &KubeOptions,
    now: SystemTime,
) -> Result<Manifest, UsageError> {
    let name = job_name(plan, options);
    check_name(&name)?;
    if options.image.trim().is_empty() {
        return Err(UsageError::new("--image: name the worker image"));
    }
    super::names::check_options(options)?;
    if plan.workers == 0 || plan.workers > crate::fleet::worker::MAX_WORKERS {
        return Err(UsageError::new(format!(
            "--workers {}: from 1 to {} (a worker's `run --worker K/N` takes no more)",
            plan.workers,
            crate::fleet::worker::MAX_WORKERS
        )));
    }
    super::names::check_hosts(&plan.settings, options.host_network)?;
    let (settings, tls_keys) = settings_for_pods(&plan.settings, options)?;
    let config_json = serde_json::to_string_pretty(&settings)
        .map_err(|e| UsageError::new(format!("config.json cannot be written: {e}")))?;

    let labels = BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), "headroom".to_string()),
        (
            "app.kubernetes.io/component".to_string(),
            "worker".to_string(),
        ),
        (JOB_LABEL.to_string(), name.clone()),
        (TRIAL_LABEL.to_string(), label_value(&plan.name)),
    ]);
    let meta = ObjectMeta {
        name: Some(name.clone()),
        namespace: Some(options.namespace.clone()),
        labels: Some(labels.clone()),
        ..ObjectMeta::default()
    };
    let config_map = ConfigMap {
        metadata: meta.clone(),
        data: Some(BTreeMap::from([(CONFIG_JSON.to_string(), config_json)])),
        ..ConfigMap::default()
    };

    let mut secrets = Vec::new();
    let mut env = vec![
        env_value("HEADROOM_WORKERS", plan.workers.to_string()),
        env_value("HEADROOM_PACK_MAX_BYTES", options.max_log_bytes.to_string()),
    ];
    let mut args = vec![
        "--config".to_string(),
        format!("{CONFIG_DIR}/{CONFIG_JSON}"),
        "--start-at".to_string(),
        start_at_text(plan.start_at),
    ];
    if !plan.populate {
        args.extend(["--phase".to_string(), "run".to_string()]);
    }
    if let Some(credentials) = &options.credentials {
        args.extend(["--username".to_string(), credentials.username.clone()]);
        env.push(EnvVar {
            name: "HEADROOM_PASSWORD".to_string(),
            value_from: Some(EnvVarSource {
                secret_key_ref: Some(SecretKeySelector {
                    name: credentials.secret.clone(),
                    key: credentials.key.clone(),
                    optional: Some(false),
                }),
                ..EnvVarSource::default()
            }),
            ..EnvVar::default()
        });
        secrets.push((credentials.secret.clone(), vec![credentials.key.clone()]));
    }

    let mut mounts = vec![
        mount("config", CONFIG_DIR, true),
        mount("results", RESULTS_DIR, false),
    ];
    let mut volumes = vec![
        Volume {
            name: "config".to_string(),
            config_map: Some(ConfigMapVolumeSource {
                name: name.clone(),
                items: Some(vec![KeyToPath {
                    key: CONFIG_JSON.to_string(),
                    path: CONFIG_JSON.to_string(),
                    mode: None,
                }]),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        },
        Volume {
            name: "results".to_string(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        },
    ];
    if let (Some(secret), false) = (&options.tls_secret, tls_keys.is_empty()) {
        mounts.push(mount("tls", TLS_DIR, true));
        volumes.push(Volume {
            name: "tls".to_string(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(secret.clone()),
                items: Some(
                    tls_keys
                        .iter()
                        .map(|key| KeyToPath {
                            key: key.to_string(),
                            path: key.to_string(),
                            mode: None,
                        })
                        .collect(),
                ),
                default_mode: Some(0o440),
                optional: Some(false),
            }),
            ..Volume::default()
        });
        secrets.push((
            secret.clone(),
            tls_keys.iter().map(|k| k.to_string()).collect(),
        ));
    }

    let container = Container {
        name: CONTAINER.to_string(),
        image: Some(options.image.clone()),
        image_pull_policy: options.image_pull_policy.clone(),
        command: Some(WORKER_COMMAND.iter().map(|s| s.to_string()).collect()),
        args: Some(args),
        env: Some(env),
        volume_mounts: Some(mounts),
        resources: resources(options),
        termination_message_policy: Some("FallbackToLogsOnError".to_string()),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            ..SecurityContext::default()
        }),
        ..Container::default()
    };
    let pod = PodSpec {
        containers: vec![container],
        restart_policy: Some("Never".to_string()),
        service_account_name: options.service_account.clone(),
        automount_service_account_token: Some(false),
        image_pull_secrets: (!options.image_pull_secrets.is_empty()).then(|| {
            options
                .image_pull_secrets
                .iter()
                .map(|name| LocalObjectReference { name: name.clone() })
                .collect()
        }),
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(WORKER_UID),
            run_as_group: Some(WORKER_UID),
            fs_group: Some(WORKER_UID),
            ..PodSecurityContext::default()
        }),
        volumes: Some(volumes),
        host_network: options.host_network.then_some(true),
        // On the node's network a pod would otherwise resolve with the node's resolver only.
        dns_policy: options
            .host_network
            .then(|| "ClusterFirstWithHostNet".to_string()),
        ..PodSpec::default()
    };
    let workers = i32::try_from(plan.workers)
        .map_err(|_| UsageError::new(format!("--workers {}: too many", plan.workers)))?;
    let job = Job {
        metadata: meta,
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".to_string()),
            completions: Some(workers),
            parallelism: Some(workers),
            backoff_limit: Some(0),
            active_deadline_seconds: Some(deadline(plan, options, now).as_secs() as i64),
            ttl_seconds_after_finished: Some(
                i32::try_from(options.ttl_after_finished.as_secs()).unwrap_or(i32::MAX),
            ),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    };
    Ok(Manifest {
        config_map,
        job,
        secrets,
    })
}

/// The plan's start in RFC 3339, UTC, with milliseconds: `2026-11-26T17:00:00.000Z`.
pub fn start_at_text(start_at: SystemTime) -> String {
    humantime::format_rfc3339_millis(start_at).to_string()
}

/// How long the Job may run: until the start, the warmup and the measured part (or the
/// request count at the rate), plus the margin. A run bounded by a count at a fixed
/// concurrency has no known length: an hour is assumed.
pub fn deadline(plan: &WorkerPlan, options: &KubeOptions, now: SystemTime) -> Duration {
    let until_start = plan.start_at.duration_since(now).unwrap_or_default();
    let s = &plan.settings;
    // The request count is the whole schedule's, sent at the whole rate.
    let measured_s = match (s.duration_s, s.ops, s.whole_rate()) {
        (Some(d), _, _) => d,
        (None, Some(ops), Some(rate_per_s)) if rate_per_s > 0.0 => ops as f64 / rate_per_s,
        _ => 3600.0,
    };
    let run = Duration::from_secs_f64((s.warmup_s + measured_s).max(0.0));
    until_start + run + options.deadline_margin
}

/// The settings as the pods read them: TLS files where the Secret is mounted. Returns them
/// with the Secret's keys they need.
fn settings_for_pods(
    settings: &RunSettings,
    options: &KubeOptions,
) -> Result<(RunSettings, Vec<&'static str>), UsageError> {
    let mut settings = settings.clone();
    // The coordinator's cores mean nothing in a pod: its CPU is the pod's request and limit.
    settings.client_cpus = None;
    let mut keys = Vec::new();
    if let Some(tls) = settings.tls.as_mut() {
        let files = [
            (&mut tls.ca, TLS_KEYS[0]),
            (&mut tls.client_cert, TLS_KEYS[1]),
            (&mut tls.client_key, TLS_KEYS[2]),
        ];
        for (path, key) in files {
            if let Some(path) = path {
                *path = format!("{TLS_DIR}/{key}").into();
                keys.push(key);
            }
        }
        tls.from_cluster = None;
        if !keys.is_empty() && options.tls_secret.is_none() {
            return Err(UsageError::new(format!(
                "config.json reads TLS files ({}): name the Secret holding them with \
                 --tls-secret (keys {})",
                keys.join(", "),
                TLS_KEYS.join(", ")
            )));
        }
    }
    Ok((settings, keys))
}

/// A Job's name must be a DNS label of at most 63 characters (it becomes a label value).
fn check_name(name: &str) -> Result<(), UsageError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(UsageError::new(format!(
            "--name {name}: a Job's name is lowercase letters, digits and '-', at most 63, \
             starting and ending with a letter or digit"
        )))
    }
}

/// `text` cut to a label value's 63 characters, without a trailing `-`.
fn label_value(text: &str) -> String {
    let cut: String = text.chars().take(63).collect();
    cut.trim_end_matches('-').to_string()
}

fn env_value(name: &str, value: String) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: Some(value),
        ..EnvVar::default()
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_string(),
        mount_path: path.to_string(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

fn resources(options: &KubeOptions) -> Option<ResourceRequirements> {
    let r = &options.resources;
    let map = |cpu: &Option<String>, memory: &Option<String>| {
        let map: BTreeMap<String, Quantity> = [("cpu", cpu), ("memory", memory)]
            .into_iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| (k.to_string(), Quantity(v.clone()))))
            .collect();
        (!map.is_empty()).then_some(map)
    };
    let requests = map(&r.cpu_request, &r.memory_request);
    let limits = map(&r.cpu_limit, &r.memory_limit);
    (requests.is_some() || limits.is_some()).then(|| ResourceRequirements {
        requests,
        limits,
        ..ResourceRequirements::default()
    })
}

/// The objects as YAML documents, for `kubectl apply -f -`: a comment naming the Secrets to
/// create first, the ConfigMap, the Job.
pub fn to_yaml(manifest: &Manifest) -> anyhow::Result<String> {
    let mut out = String::new();
    if !manifest.secrets.is_empty() {
        out.push_str("# Secrets the pods read; create them in the same namespace first:\n");
        for (name, keys) in &manifest.secrets {
            out.push_str(&format!("#   {name} (keys: {})\n", keys.join(", ")));
        }
    }
    for document in [
        serde_yaml_ng::to_string(&manifest.config_map)?,
        serde_yaml_ng::to_string(&manifest.job)?,
    ] {
        out.push_str("---\n");
        out.push_str(&document);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::UNIX_EPOCH;

    use super::*;
    use crate::client::tls::TlsSettings;
    use crate::fixtures::run_fixture;

    /// 2026-11-26T17:00:00.250Z
    fn start() -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(1_795_712_400_250)
    }

    fn plan(workers: u32, populate: bool) -> WorkerPlan {
        let mut settings = RunSettings::read(&run_fixture()).unwrap();
        settings.hosts = vec!["cassandra-0.cassandra.db.svc".to_string()];
        WorkerPlan {
            name: "rate-4000-repeat-1".to_string(),
            settings,
            workers,
            start_at: start(),
            out: PathBuf::from("trials/rate-4000-repeat-1"),
            populate,
        }
    }

    fn options() -> KubeOptions {
        KubeOptions::new("registry.example/headroom:1", "load")
    }

    fn built(plan: &WorkerPlan, options: &KubeOptions) -> Manifest {
        build(plan, options, start() - Duration::from_secs(60)).unwrap()
    }

    fn pod(manifest: &Manifest) -> &PodSpec {
        let spec = manifest.job.spec.as_ref().unwrap();
        spec.template.spec.as_ref().unwrap()
    }

    #[test]
    fn the_job_is_indexed_runs_every_worker_at_once_and_never_retries() {
        let manifest = built(&plan(3, true), &options());
        let spec = manifest.job.spec.as_ref().unwrap();
        assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
        assert_eq!(spec.completions, Some(3));
        assert_eq!(spec.parallelism, Some(3));
        assert_eq!(spec.backoff_limit, Some(0));
        assert_eq!(spec.ttl_seconds_after_finished, Some(3600));
        assert_eq!(pod(&manifest).restart_policy.as_deref(), Some("Never"));
        assert_eq!(pod(&manifest).automount_service_account_token, Some(false));
        let name = manifest.job.metadata.name.as_deref();
        assert_eq!(name, Some("headroom-rate-4000-repeat-1"));
        assert_eq!(manifest.job.metadata.namespace.as_deref(), Some("load"));
        let labels = spec
            .template
            .metadata
            .as_ref()
            .unwrap()
            .labels
            .as_ref()
            .unwrap();
        assert_eq!(labels[TRIAL_LABEL], "rate-4000-repeat-1");
        assert_eq!(labels[JOB_LABEL], "headroom-rate-4000-repeat-1");
    }

    #[test]
    fn the_deadline_covers_the_lead_the_run_and_the_margin() {
        let plan = plan(2, true);
        let manifest = built(&plan, &options());
        let run_s = plan.settings.warmup_s + plan.settings.duration_s.unwrap();
        let expected = 60 + run_s as i64 + 300;
        let spec = manifest.job.spec.as_ref().unwrap();
        assert_eq!(spec.active_deadline_seconds, Some(expected));
    }

    #[test]
    fn the_container_runs_worker_k_of_n_from_the_index_with_the_plans_start() {
        let manifest = built(&plan(4, false), &options());
        let container = &pod(&manifest).containers[0];
        let command = container.command.as_ref().unwrap();
        assert_eq!(command, &["headroom", "kube", "worker", "--"]);
        let args = container.args.as_ref().unwrap();
        assert_eq!(
            args,
            &[
                "--config",
                "/etc/headroom/config/config.json",
                "--start-at",
                "2026-11-26T17:00:00.250Z",
                "--phase",
                "run",
            ]
        );
        let env = container.env.as_ref().unwrap();
        let workers = env.iter().find(|e| e.name == "HEADROOM_WORKERS").unwrap();
        assert_eq!(workers.value.as_deref(), Some("4"));
        assert!(env.iter().all(|e| e.name != "HEADROOM_PASSWORD"));

        let populating = built(&plan(4, true), &options());
        let args = pod(&populating).containers[0].args.clone().unwrap();
        assert!(!args.contains(&"--phase".to_string()), "{args:?}");
    }

    #[test]
    fn the_config_map_holds_the_settings_and_is_mounted_where_the_flag_says() {
        let plan = plan(2, true);
        let manifest = built(&plan, &options());
        let data = manifest.config_map.data.as_ref().unwrap();
        let back: RunSettings = serde_json::from_str(&data[CONFIG_JSON]).unwrap();
        assert_eq!(back.hosts, plan.settings.hosts);
        assert_eq!(back.workload, plan.settings.workload);
        assert_eq!(back.duration_s, plan.settings.duration_s);
        let volumes = pod(&manifest).volumes.as_ref().unwrap();
        let config = volumes.iter().find(|v| v.name == "config").unwrap();
        assert_eq!(
            config.config_map.as_ref().unwrap().name,
            "headroom-rate-4000-repeat-1"
        );
        let mounts = pod(&manifest).containers[0].volume_mounts.clone().unwrap();
        let mounted = mounts.iter().find(|m| m.name == "config").unwrap();
        assert_eq!(mounted.mount_path, CONFIG_DIR);
        assert_eq!(mounted.read_only, Some(true));
    }

    #[test]
    fn credentials_and_tls_come_from_secrets_and_the_paths_follow_the_mount() {
        let mut plan = plan(2, true);
        plan.settings.tls = Some(TlsSettings {
            ca: Some("/home/me/certs/ca.pem".into()),
            client_cert: Some("/home/me/certs/me.pem".into()),
            client_key: Some("/home/me/certs/me.key".into()),
            from_cluster: Some("/home/me/cluster".into()),
            ..TlsSettings::default()
        });
        let mut options = options();
        let err = build(&plan, &options, start()).unwrap_err().to_string();
        assert!(err.contains("--tls-secret"), "{err}");

        options.tls_secret = Some("cassandra-client-tls".to_string());
        options.credentials = Some(super::super::options::Credentials {
            username: "loader".to_string(),
            secret: "cassandra-login".to_string(),
            key: "password".to_string(),
        });
        let manifest = built(&plan, &options);
        let data = manifest.config_map.data.as_ref().unwrap();
        let back: RunSettings = serde_json::from_str(&data[CONFIG_JSON]).unwrap();
        let tls = back.tls.unwrap();
        assert_eq!(tls.ca, Some("/etc/headroom/tls/ca.crt".into()));
        assert_eq!(tls.client_cert, Some("/etc/headroom/tls/tls.crt".into()));
        assert_eq!(tls.client_key, Some("/etc/headroom/tls/tls.key".into()));
        assert_eq!(tls.from_cluster, None);

        let container = &pod(&manifest).containers[0];
        let args = container.args.as_ref().unwrap();
        let at = args.iter().position(|a| a == "--username").unwrap();
        assert_eq!(args[at + 1], "loader");
        let env = container.env.as_ref().unwrap();
        let password = env.iter().find(|e| e.name == "HEADROOM_PASSWORD").unwrap();
        assert_eq!(password.value, None);
        let key = password
            .value_from
            .as_ref()
            .unwrap()
            .secret_key_ref
            .as_ref()
            .unwrap();
        assert_eq!(
            (key.name.as_str(), key.key.as_str()),
            ("cassandra-login", "password")
        );

        let volumes = pod(&manifest).volumes.as_ref().unwrap();
        let tls = volumes.iter().find(|v| v.name == "tls").unwrap();
        let secret = tls.secret.as_ref().unwrap();
        assert_eq!(secret.secret_name.as_deref(), Some("cassandra-client-tls"));
        let keys: Vec<_> = secret
            .items
            .as_ref()
            .unwrap()
            .iter()
            .map(|i| &i.key)
            .collect();
        assert_eq!(keys, ["ca.crt", "tls.crt", "tls.key"]);
        let mounts = container.volume_mounts.as_ref().unwrap();
        let mounted = mounts.iter().find(|m| m.name == "tls").unwrap();
        assert_eq!(
            (mounted.mount_path.as_str(), mounted.read_only),
            (TLS_DIR, Some(true))
        );
        assert_eq!(
            manifest.secrets,
            [
                ("cassandra-login".to_string(), vec!["password".to_string()]),
                (
                    "cassandra-client-tls".to_string(),
                    vec![
                        "ca.crt".to_string(),
                        "tls.crt".to_string(),
                        "tls.key".to_string()
                    ]
                ),
            ]
        );
    }

    #[test]
    fn the_yaml_reads_back_as_the_same_objects_with_kubernetes_names() {
        let mut options = options();
        options.credentials = Some(super::super::options::Credentials {
            username: "loader".to_string(),
            secret: "cassandra-login".to_string(),
            key: "password".to_string(),
        });
        options.resources.cpu_request = Some("2".to_string());
        let manifest = built(&plan(3, false), &options);
        let yaml = to_yaml(&manifest).unwrap();
        assert!(yaml.starts_with("# Secrets the pods read"), "{yaml}");
        for field in [
            "kind: ConfigMap",
            "kind: Job",
            "apiVersion: batch/v1",
            "completionMode: Indexed",
            "backoffLimit: 0",
            "restartPolicy: Never",
            "secretKeyRef:",
            "ttlSecondsAfterFinished: 3600",
        ] {
            assert!(yaml.contains(field), "{field} missing:\n{yaml}");
        }
        let documents: Vec<&str> = yaml.split("---\n").skip(1).collect();
        assert_eq!(documents.len(), 2);
        let config_map: ConfigMap = serde_yaml_ng::from_str(documents[0]).unwrap();
        let job: Job = serde_yaml_ng::from_str(documents[1]).unwrap();
        assert_eq!(config_map, manifest.config_map);
        assert_eq!(job, manifest.job);
        let json = serde_json::to_value(&manifest.job).unwrap();
        assert_eq!(json["spec"]["parallelism"], 3);
        assert_eq!(
            json["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "2"
        );
    }

    #[test]
    fn a_pod_cannot_reach_loopback_and_a_job_name_is_a_dns_label() {
        let mut loopback = plan(2, true);
        loopback.settings.hosts = vec!["10.0.0.5".to_string(), "127.0.0.1:9042".to_string()];
        let err = build(&loopback, &options(), start())
            .unwrap_err()
            .to_string();
        assert!(err.contains("127.0.0.1:9042"), "{err}");
        assert!(err.contains("--host-network"), "{err}");
        // On the nodes' network, loopback is the node's own: accepted.
        let mut host = options();
        host.host_network = true;
        let manifest = build(&loopback, &host, start()).unwrap();
        let spec = pod(&manifest);
        assert_eq!(spec.host_network, Some(true));
        assert_eq!(spec.dns_policy.as_deref(), Some("ClusterFirstWithHostNet"));
        assert_eq!(pod(&built(&plan(2, true), &options())).host_network, None);

        let mut named = options();
        named.name = Some("Headroom_Run".to_string());
        let err = build(&plan(2, true), &named, start())
            .unwrap_err()
            .to_string();
        assert!(err.contains("--name Headroom_Run"), "{err}");
    }
}
