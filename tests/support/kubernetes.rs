//! A real single-node Kubernetes for the tests, started and stopped by
//! `scripts/local-kubernetes.sh` (etcd, the API server with RBAC, the controller manager, the
//! scheduler, containerd and a kubelet, all on 127.0.0.1). Dropping [`LocalKubernetes`]
//! stops every process the script started, by pid, and restores the kernel settings the
//! kubelet changes, even when the test panics.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// Where the cluster lives: a short path (the script's unix sockets must fit in 108 bytes),
/// one per machine (its ports are fixed). .ci/run stops one a killed test left.
pub const DIR: &str = "/tmp/headroom-test-kubernetes";

/// The script.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/local-kubernetes.sh")
}

/// A running local Kubernetes; stopped when dropped.
pub struct LocalKubernetes {
    pub dir: PathBuf,
    /// Seconds `up` took, as it said.
    pub up_line: String,
}

impl LocalKubernetes {
    /// Starts a fresh cluster whose kubelet keeps `log_max_size` of a container's log
    /// (`containerLogMaxSize`, e.g. `1Mi`). Builds the Kubernetes binaries first when they
    /// are not cached (minutes, once per machine).
    pub fn up(log_max_size: &str) -> LocalKubernetes {
        let dir = PathBuf::from(DIR);
        // Left by a test process that was killed: stopped before starting again.
        let _ = Command::new(script()).arg("down").arg(&dir).output();
        let started = Instant::now();
        let output = Command::new(script())
            .arg("up")
            .arg(&dir)
            .env("LOCAL_KUBERNETES_LOG_MAX_SIZE", log_max_size)
            .stdin(Stdio::null())
            .output()
            .expect("the script runs");
        let up = LocalKubernetes {
            dir,
            up_line: String::from_utf8_lossy(&output.stdout).trim().to_string(),
        };
        assert!(
            output.status.success(),
            "local Kubernetes did not start ({:.0} s):\n{}",
            started.elapsed().as_secs_f64(),
            tail(&String::from_utf8_lossy(&output.stderr), 30)
        );
        eprintln!("{}", up.up_line);
        up
    }

    /// The admin's kubeconfig.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    /// Runs the cluster's kubectl as the admin.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_with_input(args, None)
    }

    /// Runs kubectl as the admin with `input` on its stdin.
    pub fn kubectl_with_input(&self, args: &[&str], input: Option<&[u8]>) -> Output {
        let mut command = Command::new(script());
        command.arg("kubectl").arg(&self.dir).args(args);
        run_with_input(command, input)
    }

    /// Imports an image archive into the cluster's containerd; the names it now has.
    pub fn load(&self, archive: &Path) -> String {
        let output = Command::new(script())
            .arg("load")
            .arg(&self.dir)
            .arg(archive)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// A user NAME with a certificate of the cluster's CA and no rights yet, and the
    /// namespace it works in; its kubeconfig.
    pub fn user(&self, name: &str, namespace: &str) -> PathBuf {
        let output = Command::new(script())
            .args(["user"])
            .arg(&self.dir)
            .args([name, namespace])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        self.dir.join(format!("{name}.kubeconfig"))
    }
}

impl Drop for LocalKubernetes {
    fn drop(&mut self) {
        let output = Command::new(script()).arg("down").arg(&self.dir).output();
        match output {
            Ok(o) if o.status.success() => {
                let _ = std::fs::remove_dir_all(&self.dir);
            }
            Ok(o) => eprintln!(
                "local Kubernetes in {} did not stop cleanly: {}",
                self.dir.display(),
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => eprintln!("cannot run {}: {e}", script().display()),
        }
    }
}

/// Runs `command`, with `input` on its stdin when given.
pub fn run_with_input(mut command: Command, input: Option<&[u8]>) -> Output {
    use std::io::Write;
    command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the command runs");
    if let Some(input) = input {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input)
            .expect("stdin takes the input");
    }
    child.wait_with_output().unwrap()
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The coordinator's Role and RoleBinding as docs/distributed.md prints them, for `user` in
/// `namespace`: the tests apply exactly what the docs tell a user to.
pub fn documented_role(user: &str, namespace: &str) -> String {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/distributed.md"))
            .unwrap();
    let start = docs
        .find("```yaml\napiVersion: v1\nkind: Namespace")
        .expect("docs/distributed.md prints the coordinator's Role");
    let block = &docs[start + "```yaml\n".len()..];
    let block = &block[..block.find("```").unwrap()];
    block
        .replace("you@example.com", user)
        .replace("name: load", &format!("name: {namespace}"))
        .replace("namespace: load", &format!("namespace: {namespace}"))
}
