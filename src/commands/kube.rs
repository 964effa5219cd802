//! `headroom kube`: the manifest of a fleet run, and packing a run directory into a log and
//! out of it again; and the Kubernetes launcher built from its flags, for `capacity
//! --launcher kubernetes`.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use crate::cli::{
    ImageArgs, KubeArgs, KubeCommand, ManifestArgs, PackArgs, UnpackArgs, WorkerArgs,
};
use crate::fleet::kube::{manifest, pack};
use crate::fleet::launch::WorkerPlan;
use crate::results::config::RunSettings;
use crate::usage::{usage_error, UsageError};

/// Runs `headroom kube`.
pub fn run(args: KubeArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        KubeCommand::Manifest(args) => print_manifest(*args),
        KubeCommand::Pack(args) => pack_dir(args),
        KubeCommand::Unpack(args) => unpack_log(args),
        KubeCommand::Image(args) => write_image(args),
        KubeCommand::Worker(args) => run_worker(args),
    }
}

fn write_image(args: ImageArgs) -> anyhow::Result<ExitCode> {
    crate::fleet::kube::names::check_image(&args.name)
        .map_err(|e| usage_error(e.to_string().replacen("--image", "--name", 1)))?;
    crate::output_dir::claim_file(&args.out, "--out", crate::output_dir::Made::ImageArchive)?;
    let binary = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find this program's own file: {e}"))?;
    let written = crate::fleet::kube::image::write_image(&binary, &args.name, &args.out)?;
    eprintln!(
        "Wrote {} ({:.1} MB, {} files; {}): load it with `ctr -n k8s.io images import {}`, \
         `docker load -i {}` or `podman load -i {}`",
        args.out.display(),
        written.bytes as f64 / 1e6,
        written.files,
        written.digest,
        args.out.display(),
        args.out.display(),
        args.out.display()
    );
    println!("{}", written.name);
    Ok(ExitCode::SUCCESS)
}

fn run_worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    use crate::fleet::kube::worker;
    let slot = worker::slot_from_env(
        std::env::var("JOB_COMPLETION_INDEX").ok(),
        std::env::var("HEADROOM_WORKERS").ok(),
    )?;
    let max_bytes = std::env::var("HEADROOM_PACK_MAX_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(pack::DEFAULT_MAX_BYTES);
    let program = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find this program's own file: {e}"))?;
    let stdout = std::io::stdout();
    let code = worker::run(
        &program,
        &args.args,
        slot,
        max_bytes,
        &worker::results_dir(),
        &mut stdout.lock(),
    )?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

fn print_manifest(args: ManifestArgs) -> anyhow::Result<ExitCode> {
    let settings = read_settings(&args.config)?;
    let options = super::settings::kube_options(&args.pods, args.username.as_deref())?;
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

fn pack_dir(args: PackArgs) -> anyhow::Result<ExitCode> {
    if !args.dir.is_dir() {
        return Err(usage_error(format!(
            "{} is not a directory",
            args.dir.display()
        )));
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    pack::pack(
        &args.dir,
        args.worker,
        args.exit_code,
        args.max_bytes,
        &mut out,
    )?;
    Ok(ExitCode::SUCCESS)
}

fn unpack_log(args: UnpackArgs) -> anyhow::Result<ExitCode> {
    if args.out.exists() && !args.out.is_dir() {
        return Err(usage_error(format!(
            "--out {} is a file: give the directory that gets worker-K/",
            args.out.display()
        )));
    }
    let blocks = if args.log == "-" {
        pack::find_blocks(std::io::stdin().lock())?
    } else {
        let (file, _) = crate::usage::open_input_file(Path::new(&args.log), "the log")?;
        pack::find_blocks(BufReader::new(file))?
    };
    if blocks.is_empty() {
        return Err(usage_error(format!(
            "no packed run directory in {}: did the workers end (kubectl get pods -l \
             headroom-job=NAME), and was the whole log read (kubectl logs --tail=-1)?",
            if args.log == "-" { "stdin" } else { &args.log }
        )));
    }
    // Every worker's directory is checked before any is written: several logs may unpack
    // into one --out, each worker once.
    let mut seen = std::collections::BTreeSet::new();
    for block in &blocks {
        if !seen.insert(block.header.worker) {
            return Err(usage_error(format!(
                "worker {} is packed twice in {}: give each worker's log once",
                block.header.worker, args.log
            )));
        }
        crate::output_dir::claim_new(&pack::worker_dir(&args.out, block.header.worker))?;
    }
    let headers = pack::unpack_all(blocks, &args.out)?;
    for header in &headers {
        println!(
            "worker {}: {} (its run exited {})",
            header.worker,
            args.out.join(format!("worker-{}", header.worker)).display(),
            header.exit_code
        );
    }
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
