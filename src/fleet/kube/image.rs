//! `headroom kube image`: the worker image of a fleet as an OCI image archive, made from the
//! running binary without Docker or a registry.
//!
//! The image holds the binary at `/usr/local/bin/headroom`, the shared libraries and loader
//! it needs (as `ldd` lists them; none for a static build), the system's CA certificates, a
//! `passwd` entry for the worker's user (10001) and an empty `/results`. Its one layer is a
//! deterministic tar (sorted, owned by root, dated 1970), gzipped. The archive is an OCI
//! image layout (`oci-layout`, `index.json`, `blobs/sha256/...`) with the image's name in
//! the annotations containerd reads (`ctr images import`), and Docker's `manifest.json`
//! beside it, so `docker load` and `podman load` take it too. Decision 0013 says why.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use sha2::{Digest, Sha256};

/// Where the binary goes in the image.
pub const BINARY_PATH: &str = "/usr/local/bin/headroom";
/// Where the CA certificates go (and where Debian keeps them).
const CA_CERTIFICATES: &str = "/etc/ssl/certs/ca-certificates.crt";
/// The worker's user, as the Job runs it (manifest's WORKER_UID).
const WORKER_UID: u64 = 10001;

/// What went wrong making the image.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// Reading a file that goes in, or writing the archive.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The binary's libraries could not be listed.
    #[error("cannot list the libraries {binary} needs: {why}")]
    Libraries {
        /// The binary.
        binary: String,
        /// ldd's complaint.
        why: String,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ImageError {
    let what = what.into();
    move |source| ImageError::Io { what, source }
}

/// One file of the image: its path in the image, its bytes and mode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    path: String,
    bytes: Vec<u8>,
    mode: u32,
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The image's name as given (`headroom:0.1.0`).
    pub name: String,
    /// The name container runtimes resolve it to (`docker.io/library/headroom:0.1.0`).
    pub reference: String,
    /// The manifest's digest (`sha256:...`).
    pub digest: String,
    /// Files in the image.
    pub files: usize,
    /// The archive's size, bytes.
    pub bytes: u64,
}

/// The default name: `headroom:<this version>`.
pub fn default_name() -> String {
    format!("headroom:{}", env!("CARGO_PKG_VERSION"))
}

/// Writes the image of `binary` (normally the running program), named `name`, as an OCI
/// archive at `out`.
pub fn write_image(binary: &Path, name: &str, out: &Path) -> Result<Written, ImageError> {
    let mut entries = vec![Entry {
        path: BINARY_PATH.trim_start_matches('/').to_string(),
        bytes: std::fs::read(binary).map_err(io(format!("reading {}", binary.display())))?,
        mode: 0o755,
    }];
    for library in libraries(binary)? {
        entries.push(Entry {
            path: library
                .to_string_lossy()
                .trim_start_matches('/')
                .to_string(),
            bytes: std::fs::read(&library).map_err(io(format!("reading {}", library.display())))?,
            mode: 0o755,
        });
    }
    if let Ok(certificates) = std::fs::read(CA_CERTIFICATES) {
        entries.push(Entry {
            path: CA_CERTIFICATES.trim_start_matches('/').to_string(),
            bytes: certificates,
            mode: 0o644,
        });
    }
    entries.push(Entry {
        path: "etc/passwd".into(),
        bytes: format!(
            "root:x:0:0:root:/root:/usr/sbin/nologin\n\
             headroom:x:{WORKER_UID}:{WORKER_UID}:headroom:/results:/usr/sbin/nologin\n"
        )
        .into_bytes(),
        mode: 0o644,
    });
    entries.push(Entry {
        path: "etc/group".into(),
        bytes: format!("root:x:0:\nheadroom:x:{WORKER_UID}:\n").into_bytes(),
        mode: 0o644,
    });
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let files = entries.len();

    let layer = layer_tar(&entries)?;
    let diff_id = sha256(&layer);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&layer).map_err(io("compressing the layer"))?;
    let layer_gz = gz.finish().map_err(io("compressing the layer"))?;

    let reference = normalized(name);
    let config = serde_json::to_vec(&json!({
        "architecture": std::env::consts::ARCH.replace("x86_64", "amd64").replace("aarch64", "arm64"),
        "os": "linux",
        "config": {
            "User": WORKER_UID.to_string(),
            "Entrypoint": [BINARY_PATH],
            "Cmd": ["--help"],
            "WorkingDir": "/results",
            "Env": [
                "PATH=/usr/local/bin:/usr/bin:/bin",
                format!("SSL_CERT_FILE={CA_CERTIFICATES}"),
            ],
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "headroom kube image", "comment": name}],
    }))
    .expect("a JSON value serializes");
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": sha256(&config),
            "size": config.len(),
        },
        "layers": [{
            "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
            "digest": sha256(&layer_gz),
            "size": layer_gz.len(),
        }],
    }))
    .expect("a JSON value serializes");
    let digest = sha256(&manifest);
    let tag = name.rsplit_once(':').map_or("latest", |(_, tag)| tag);
    let index = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": digest,
            "size": manifest.len(),
            "annotations": {
                "io.containerd.image.name": reference,
                "org.opencontainers.image.ref.name": tag,
            },
        }],
    }))
    .expect("a JSON value serializes");
    let blob = |bytes: &[u8]| format!("blobs/sha256/{}", &sha256(bytes)["sha256:".len()..]);
    // Docker's own layout beside the OCI one: older `docker load` reads only this.
    let docker_manifest = serde_json::to_vec(&json!([{
        "Config": blob(&config),
        "RepoTags": [name],
        "Layers": [blob(&layer_gz)],
    }]))
    .expect("a JSON value serializes");

    let archive = [
        (
            "oci-layout".to_string(),
            br#"{"imageLayoutVersion":"1.0.0"}"#.to_vec(),
        ),
        ("index.json".to_string(), index),
        ("manifest.json".to_string(), docker_manifest),
        (blob(&config), config),
        (blob(&manifest), manifest),
        (blob(&layer_gz), layer_gz),
    ];
    let file = std::fs::File::create(out).map_err(io(format!("creating {}", out.display())))?;
    let mut tar = tar::Builder::new(std::io::BufWriter::new(file));
    for dir in ["blobs/", "blobs/sha256/"] {
        append(&mut tar, dir, &[], 0o755, tar::EntryType::Directory)
            .map_err(io(format!("writing {}", out.display())))?;
    }
    for (path, bytes) in &archive {
        append(&mut tar, path, bytes, 0o644, tar::EntryType::Regular)
            .map_err(io(format!("writing {}", out.display())))?;
    }
    tar.into_inner()
        .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
        .and_then(|f| f.sync_all())
        .map_err(io(format!("writing {}", out.display())))?;
    let bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    Ok(Written {
        name: name.to_string(),
        reference,
        digest,
        files,
        bytes,
    })
}

/// The layer: the entries and the directories above them, then `/results` and `/tmp`.
fn layer_tar(entries: &[Entry]) -> Result<Vec<u8>, ImageError> {
    let mut dirs = std::collections::BTreeSet::new();
    for entry in entries {
        let mut path = Path::new(&entry.path);
        while let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            dirs.insert(format!("{}/", parent.display()));
            path = parent;
        }
    }
    let mut tar = tar::Builder::new(Vec::new());
    for dir in &dirs {
        append(&mut tar, dir, &[], 0o755, tar::EntryType::Directory)
            .map_err(io("building the layer"))?;
    }
    for (dir, mode) in [("results/", 0o777), ("tmp/", 0o1777)] {
        append(&mut tar, dir, &[], mode, tar::EntryType::Directory)
            .map_err(io("building the layer"))?;
    }
    for entry in entries {
        append(
            &mut tar,
            &entry.path,
            &entry.bytes,
            entry.mode,
            tar::EntryType::Regular,
        )
        .map_err(io("building the layer"))?;
    }
    tar.into_inner().map_err(io("building the layer"))
}

/// One entry, owned by root, dated 1970: the same binary gives the same layer.
fn append<W: Write>(
    tar: &mut tar::Builder<W>,
    path: &str,
    bytes: &[u8],
    mode: u32,
    kind: tar::EntryType,
) -> std::io::Result<()> {
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(kind);
    header.set_size(bytes.len() as u64);
    header.set_mode(mode);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(0);
    tar.append_data(&mut header, path, bytes)
}

/// `sha256:` and the hex digest of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The reference a container runtime resolves `name` to: a name without a registry is
/// Docker Hub's (`docker.io/library/headroom:0.1.0`), without a tag `:latest`.
pub fn normalized(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    let with_tag = if last.contains(':') || last.contains('@') {
        name.to_string()
    } else {
        format!("{name}:latest")
    };
    let first = with_tag.split('/').next().unwrap_or("");
    let has_registry =
        with_tag.contains('/') && (first.contains(['.', ':']) || first == "localhost");
    match (has_registry, with_tag.contains('/')) {
        (true, _) => with_tag,
        (false, true) => format!("docker.io/{with_tag}"),
        (false, false) => format!("docker.io/library/{with_tag}"),
    }
}

/// The shared libraries and the loader `binary` needs, as `ldd` lists them; none for a
/// static build.
fn libraries(binary: &Path) -> Result<Vec<PathBuf>, ImageError> {
    let failed = |why: String| ImageError::Libraries {
        binary: binary.display().to_string(),
        why,
    };
    let output = Command::new("ldd")
        .arg(binary)
        .output()
        .map_err(|e| failed(format!("ldd: {e} (Debian's libc-bin has it)")))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let errors = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        if text.contains("not a dynamic executable")
            || errors.contains("not a dynamic executable")
            || text.contains("statically linked")
        {
            return Ok(Vec::new());
        }
        return Err(failed(errors.trim().to_string()));
    }
    parse_ldd(&text).map_err(failed)
}

/// The paths in `ldd`'s output: `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)` and
/// the loader's own line; the vDSO has no file.
fn parse_ldd(text: &str) -> Result<Vec<PathBuf>, String> {
    let mut paths = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.contains("statically linked") {
            continue;
        }
        if line.contains("not found") {
            return Err(format!("a library is missing: {line}"));
        }
        let path = match line.split_once("=>") {
            Some((_, rest)) => rest.trim().split(" (").next().unwrap_or("").trim(),
            None => line.split(" (").next().unwrap_or("").trim(),
        };
        if path.starts_with('/') {
            paths.push(PathBuf::from(path));
        }
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_lines_give_the_libraries_and_the_loader() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                    \tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f2f)\n\
                    \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2f)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f2f)\n";
        assert_eq!(
            parse_ldd(text).unwrap(),
            [
                PathBuf::from("/lib/x86_64-linux-gnu/libgcc_s.so.1"),
                PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2"),
            ]
        );
        assert!(parse_ldd("\tlibfoo.so => not found\n").is_err());
    }

    #[test]
    fn names_resolve_as_container_runtimes_resolve_them() {
        assert_eq!(
            normalized("headroom:0.1.0"),
            "docker.io/library/headroom:0.1.0"
        );
        assert_eq!(normalized("headroom"), "docker.io/library/headroom:latest");
        assert_eq!(normalized("team/headroom:1"), "docker.io/team/headroom:1");
        assert_eq!(
            normalized("registry.example:5000/headroom:1"),
            "registry.example:5000/headroom:1"
        );
        assert_eq!(normalized("localhost/h:2"), "localhost/h:2");
    }

    #[test]
    fn the_archive_is_an_oci_layout_whose_digests_hold() {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("tool");
        std::fs::write(&binary, b"#!/not/an/elf\n").unwrap();
        let out = dir.path().join("image.tar");
        let written = write_image(&binary, "headroom:9.9.9", &out).unwrap();
        assert_eq!(written.reference, "docker.io/library/headroom:9.9.9");
        let mut files = std::collections::BTreeMap::new();
        let mut archive = tar::Archive::new(std::fs::File::open(&out).unwrap());
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().display().to_string();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
            files.insert(path, bytes);
        }
        let json =
            |name: &str| -> serde_json::Value { serde_json::from_slice(&files[name]).unwrap() };
        assert_eq!(json("oci-layout")["imageLayoutVersion"], "1.0.0");
        let index = json("index.json");
        let entry = &index["manifests"][0];
        assert_eq!(
            entry["annotations"]["io.containerd.image.name"],
            "docker.io/library/headroom:9.9.9"
        );
        let digest = entry["digest"].as_str().unwrap();
        assert_eq!(digest, written.digest);
        let blob = |digest: &str| &files[&format!("blobs/sha256/{}", &digest[7..])];
        // Every blob's name is its digest.
        for (path, bytes) in &files {
            if let Some(hex) = path.strip_prefix("blobs/sha256/").filter(|h| !h.is_empty()) {
                assert_eq!(sha256(bytes), format!("sha256:{hex}"), "{path}");
            }
        }
        let manifest: serde_json::Value = serde_json::from_slice(blob(digest)).unwrap();
        let config: serde_json::Value =
            serde_json::from_slice(blob(manifest["config"]["digest"].as_str().unwrap())).unwrap();
        assert_eq!(config["config"]["User"], "10001");
        assert_eq!(config["config"]["Entrypoint"][0], BINARY_PATH);
        // The layer holds the binary, and its diff_id is the uncompressed tar's digest.
        let layer_gz = blob(manifest["layers"][0]["digest"].as_str().unwrap());
        let mut layer = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(layer_gz.as_slice()),
            &mut layer,
        )
        .unwrap();
        assert_eq!(config["rootfs"]["diff_ids"][0], sha256(&layer));
        let names: Vec<String> = tar::Archive::new(layer.as_slice())
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert!(
            names.contains(&"usr/local/bin/headroom".to_string()),
            "{names:?}"
        );
        assert!(names.contains(&"results/".to_string()), "{names:?}");
        // The same binary gives the same image.
        let again = dir.path().join("again.tar");
        assert_eq!(
            write_image(&binary, "headroom:9.9.9", &again)
                .unwrap()
                .digest,
            written.digest
        );
        let docker: serde_json::Value = json("manifest.json");
        assert_eq!(docker[0]["RepoTags"][0], "headroom:9.9.9");
    }
}
