//! The pods' flags of a fleet on Kubernetes (`--image`, `--namespace`, resources, Secrets,
//! `--host-network`, ...) into the launcher's options: shared by `kube manifest` and
//! `capacity --launcher kubernetes`.

use crate::cli::KubeLauncherArgs;
use crate::fleet::kube::{Credentials, KubeOptions, Resources};
use crate::usage::UsageError;

/// The launcher's options from the pods' flags; `username` is the run's `--username`.
pub fn kube_options(
    args: &KubeLauncherArgs,
    username: Option<&str>,
) -> Result<KubeOptions, UsageError> {
    let image = args
        .image
        .clone()
        .filter(|i| !i.trim().is_empty())
        .ok_or_else(|| UsageError::new("--image: name the worker image (REGISTRY/headroom:TAG)"))?;
    let credentials = match (username, &args.password_secret) {
        (Some(username), Some(secret)) => Some(Credentials {
            username: username.to_string(),
            secret: secret.clone(),
            key: args.password_secret_key.clone(),
        }),
        (Some(_), None) => {
            return Err(UsageError::new(
                "--username needs --password-secret: the Secret the workers read the password \
                 from (never a flag or a file in the pod)",
            ))
        }
        (None, Some(_)) => {
            return Err(UsageError::new(
                "--password-secret needs --username: the user the password is for",
            ))
        }
        (None, None) => None,
    };
    let mut options = KubeOptions::new(image, args.namespace.clone());
    options.image_pull_policy = args.image_pull_policy.clone();
    options.image_pull_secrets = args.image_pull_secret.clone();
    options.service_account = args.service_account.clone();
    options.resources = Resources {
        cpu_request: args.cpu.clone(),
        cpu_limit: args.cpu_limit.clone(),
        memory_request: args.memory.clone(),
        memory_limit: args.memory_limit.clone(),
    };
    options.credentials = credentials;
    options.tls_secret = args.tls_secret.clone();
    options.lead = args.lead;
    options.deadline_margin = args.deadline_margin;
    options.ttl_after_finished = args.job_ttl;
    options.max_log_bytes = args.max_log_bytes;
    options.host_network = args.host_network;
    crate::fleet::kube::names::check_options(&options)?;
    Ok(options)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command, KubeArgs, KubeCommand};

    fn launcher_args(line: &str) -> KubeLauncherArgs {
        let cli = Cli::try_parse_from(
            format!("headroom kube manifest --config c.json --workers 2 {line}").split_whitespace(),
        )
        .unwrap();
        let Command::Kube(KubeArgs {
            command: KubeCommand::Manifest(args),
        }) = cli.command
        else {
            panic!()
        };
        args.pods
    }

    #[test]
    fn the_pods_flags_become_options_and_credentials_need_both_halves() {
        let args = launcher_args(
            "--image reg/h:1 --namespace load --cpu 2 --memory 1Gi --password-secret login \
             --tls-secret tls --lead 90s",
        );
        let options = kube_options(&args, Some("loader")).unwrap();
        assert_eq!(options.image, "reg/h:1");
        assert_eq!(options.namespace, "load");
        assert_eq!(options.resources.cpu_request.as_deref(), Some("2"));
        assert_eq!(options.resources.memory_request.as_deref(), Some("1Gi"));
        assert_eq!(options.lead, Duration::from_secs(90));
        let credentials = options.credentials.unwrap();
        assert_eq!(
            (
                credentials.username.as_str(),
                credentials.secret.as_str(),
                credentials.key.as_str()
            ),
            ("loader", "login", "password")
        );

        let err = kube_options(&args, None).unwrap_err().to_string();
        assert!(err.contains("--password-secret needs --username"), "{err}");
        let err = kube_options(&launcher_args("--image reg/h:1"), Some("loader"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--username needs --password-secret"), "{err}");
        let err = kube_options(&launcher_args(""), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--image"), "{err}");
    }
}
