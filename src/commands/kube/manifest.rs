//! `headroom kube manifest`: the ConfigMap and Indexed Job of a fleet run, printed for those
//! who apply it with their own tooling. Built with the `kubernetes` feature.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use crate::cli::ManifestArgs;
use crate::fleet::kube::manifest;
use crate::fleet::launch::WorkerPlan;
use crate::results::config::RunSettings;
use crate::usage::{usage_error, UsageError};

pub fn print_manifest(args: ManifestArgs) -> anyhow::Result<ExitCode> {
    let settings = read_settings(&args.config)?;
    let options = crate::commands::settings::kube_options(&args.pods, args.username.as_deref())?;
    let now = SystemTime::now();
    let plan = WorkerPlan {
        name: trial_name(&args.config),
        settings,
        workers: args.workers,
        start_at: parse_start_at(&args.start_at, now)?,
        out: PathBuf::from("."),
        populate: args.phase.is_none(),
    };
    let mut options = options;
    options.name = args.name.clone();
    let manifest = manifest::build(&plan, &options, now)?;
    let yaml = manifest::to_yaml(&manifest)?;
    std::io::stdout().lock().write_all(yaml.as_bytes())?;
    eprintln!(
        "{} workers of Job {} in namespace {}, starting at {}",
        plan.workers,
        manifest::job_name(&plan, &options),
        options.namespace,
        manifest::start_at_text(plan.start_at)
    );
    Ok(ExitCode::SUCCESS)
}

/// A config.json the user named, as settings; what is wrong with it is theirs to mend.
fn read_settings(path: &Path) -> anyhow::Result<RunSettings> {
    let text = crate::usage::read_input_file(path, "--config")?;
    serde_json::from_str(&text).map_err(|e| {
        usage_error(format!(
            "--config {}: not a run's config.json: {e}",
            path.display()
        ))
    })
}

/// `--start-at` as [`crate::fleet::worker::parse_start_at`] reads it, and not in the past;
/// its errors are the user's.
pub fn parse_start_at(text: &str, now: SystemTime) -> Result<SystemTime, UsageError> {
    let at = crate::fleet::worker::parse_start_at(text, now)
        .map_err(|e| UsageError::new(format!("--start-at {e}")))?;
    crate::fleet::worker::check_not_past(at, now).map_err(UsageError::new)?;
    Ok(at)
}

/// A trial's name from the config's directory: `runs/probe/config.json` gives `probe`.
fn trial_name(config: &Path) -> String {
    let dir = config
        .canonicalize()
        .ok()
        .and_then(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let name: String = dir
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let name = name.trim_matches('-').to_string();
    if name.is_empty() {
        "run".to_string()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn start_at_is_a_utc_time_or_a_duration_from_now_and_never_past() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_795_712_000);
        assert_eq!(
            parse_start_at("+2m", now).unwrap(),
            now + Duration::from_secs(120)
        );
        let at = parse_start_at("2026-11-26T17:00:00.500Z", now).unwrap();
        assert_eq!(manifest::start_at_text(at), "2026-11-26T17:00:00.500Z");
        for bad in [
            "2026-11-26T17:00:00",
            "tomorrow",
            "+soon",
            "2020-01-01T00:00:00Z",
        ] {
            assert!(parse_start_at(bad, now).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_trial_is_named_after_the_configs_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("Probe_1");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), "{}").unwrap();
        assert_eq!(trial_name(&dir.join("config.json")), "probe-1");
    }
}
