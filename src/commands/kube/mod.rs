//! `headroom kube`: the manifest of a fleet run, and packing a run directory into a log and
//! out of it again; and the Kubernetes launcher built from its flags, for `capacity
//! --launcher kubernetes`.

#[cfg(feature = "kubernetes")]
mod manifest;

use std::io::BufReader;
use std::path::Path;
use std::process::ExitCode;

use crate::cli::{ImageArgs, KubeArgs, KubeCommand, PackArgs, UnpackArgs, WorkerArgs};
use crate::fleet::kube::pack;
use crate::usage::usage_error;

/// Runs `headroom kube`.
pub fn run(args: KubeArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        #[cfg(feature = "kubernetes")]
        KubeCommand::Manifest(args) => manifest::print_manifest(*args),
        #[cfg(not(feature = "kubernetes"))]
        KubeCommand::Manifest(_) => Err(crate::fleet::kube::not_built().into()),
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
    let folder = args
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    if !folder.is_dir() {
        return Err(usage_error(format!(
            "--out {}: {} is not a directory; make it first, or give another --out",
            args.out.display(),
            folder.display()
        )));
    }
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
