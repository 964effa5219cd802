//! Cassandra's jars: resolved from Maven Central with the machine's Maven, once per version,
//! into headroom's cache. Later starts use the cache and need no network.
//!
//! Maven does the resolving because it is what Cassandra's own build publishes for: the
//! dependency tree of `org.apache.cassandra:cassandra-all` is exactly the server's class path.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::ClusterError;

/// The maven-dependency-plugin release used to copy the jars, pinned so that resolution does
/// not change under the user.
const DEPENDENCY_PLUGIN: &str = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1";

/// The jars of one Cassandra release, ready to run.
#[derive(Debug, Clone)]
pub struct CassandraJars {
    /// The release.
    pub version: String,
    /// The folder that holds cassandra-all and all its runtime dependencies.
    pub lib_dir: PathBuf,
}

impl CassandraJars {
    /// The class path: the node's configuration folder first (logback.xml,
    /// cassandra-rackdc.properties), then every jar.
    pub fn class_path(&self, conf_dir: &Path) -> OsString {
        let mut cp = OsString::from(conf_dir);
        cp.push(":");
        cp.push(self.lib_dir.join("*"));
        cp
    }

    /// The jamm jar, which Cassandra loads as a Java agent to measure object sizes.
    pub fn jamm_agent(&self) -> Option<PathBuf> {
        let entries = fs::read_dir(&self.lib_dir).ok()?;
        entries.filter_map(Result::ok).map(|e| e.path()).find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("jamm-") && n.ends_with(".jar"))
        })
    }
}

/// headroom's cache folder: `$HEADROOM_CACHE_DIR`, else headroom/ under the user's cache
/// directory (e.g. ~/.cache/headroom).
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("HEADROOM_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("headroom")
}

/// Whether the jars of `version` are in the cache already (no fetch needed).
pub fn is_cached(version: &str) -> bool {
    jar_path(&cache_root(), version).is_file()
}

fn jar_path(cache: &Path, version: &str) -> PathBuf {
    cache
        .join("cassandra")
        .join(version)
        .join("lib")
        .join(format!("cassandra-all-{version}.jar"))
}

/// The jars of `version` under `cache`, fetched with Maven when they are not there yet.
/// `progress` hears one line before a fetch starts.
pub fn resolve(
    version: &str,
    cache: &Path,
    progress: &dyn Fn(&str),
) -> Result<CassandraJars, ClusterError> {
    let version_dir = cache.join("cassandra").join(version);
    let lib_dir = version_dir.join("lib");
    let jars = CassandraJars {
        version: version.to_string(),
        lib_dir: lib_dir.clone(),
    };
    if jar_path(cache, version).is_file() {
        return Ok(jars);
    }
    let mvn = find_maven()?;
    progress(&format!(
        "Fetching Cassandra {version} and its dependencies from Maven Central into {} (once; about 70 MB)...",
        lib_dir.display()
    ));
    fs::create_dir_all(&version_dir).map_err(ClusterError::io(format!(
        "creating {}",
        version_dir.display()
    )))?;
    // Resolve into a folder of our own and rename it into place only when complete, so that
    // an interrupted fetch or two fetches at once never leave a half-filled lib/.
    let partial = version_dir.join(format!("lib.partial-{}", std::process::id()));
    let _ = fs::remove_dir_all(&partial);
    let pom = version_dir.join("pom.xml");
    fs::write(&pom, pom_xml(version))
        .map_err(ClusterError::io(format!("writing {}", pom.display())))?;
    let log = version_dir.join("maven.log");
    let log_file =
        fs::File::create(&log).map_err(ClusterError::io(format!("creating {}", log.display())))?;
    let log_err = log_file
        .try_clone()
        .map_err(ClusterError::io("duplicating the Maven log handle"))?;
    let status = Command::new(&mvn)
        .arg("--batch-mode")
        // Plain text: the log's end is quoted in an error message.
        .arg("-Dstyle.color=never")
        .arg("--file")
        .arg(&pom)
        .arg(format!("{DEPENDENCY_PLUGIN}:copy-dependencies"))
        .arg("-DincludeScope=runtime")
        .arg(format!("-DoutputDirectory={}", partial.display()))
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(log_err)
        .status()
        .map_err(ClusterError::io(format!("running {}", mvn.display())))?;
    let complete = partial
        .join(format!("cassandra-all-{version}.jar"))
        .is_file();
    if !status.success() || !complete {
        let _ = fs::remove_dir_all(&partial);
        // Nothing of a failed fetch stays in the cache: Maven's log moves to the temporary
        // directory, where the error names it, and the version's folder goes when it holds
        // no jars of an earlier fetch.
        let kept = std::env::temp_dir().join(format!(
            "headroom-cassandra-{}-maven.log",
            version.replace(['/', '\\'], "_")
        ));
        let log = match fs::rename(&log, &kept).or_else(|_| fs::copy(&log, &kept).map(|_| ())) {
            Ok(()) => kept,
            Err(_) => log,
        };
        let _ = fs::remove_file(&pom);
        let _ = fs::remove_file(version_dir.join("maven.log"));
        if !lib_dir.exists() {
            let _ = fs::remove_dir(&version_dir);
        }
        return Err(ClusterError::MavenFailed {
            version: version.to_string(),
            tail: strip_ansi(&super::process::tail_of_file(&log, 15)),
            log,
        });
    }
    if fs::rename(&partial, &lib_dir).is_err() {
        // Another fetch finished first; its jars are the same.
        let _ = fs::remove_dir_all(&partial);
    }
    Ok(jars)
}

/// Text without ANSI escape sequences (colours, cursor moves), as a terminal would show it.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        // ESC [ parameters... final byte (@ to ~); a lone ESC is dropped.
        if chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
}

/// Finds Maven: `$HEADROOM_MVN`, else `mvn` on PATH.
pub fn find_maven() -> Result<PathBuf, ClusterError> {
    if let Some(path) = std::env::var_os("HEADROOM_MVN").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(ClusterError::MavenNotFound)
        };
    }
    which::which("mvn").map_err(|_| ClusterError::MavenNotFound)
}

/// A project whose only dependency is cassandra-all at `version`.
fn pom_xml(version: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by headroom to fetch Cassandra's jars; safe to delete with the cache. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>headroom.cache</groupId>
  <artifactId>cassandra-jars</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pom_asks_for_exactly_cassandra_all() {
        let pom = pom_xml("5.0.9");
        assert!(
            pom.contains("<artifactId>cassandra-all</artifactId>\n      <version>5.0.9</version>")
        );
    }

    #[test]
    fn escapes_are_stripped_from_mavens_words() {
        assert_eq!(
            strip_ansi("\u{1b}[1;31m[ERROR]\u{1b}[m Failed to \u{1b}[1mresolve\u{1b}[m"),
            "[ERROR] Failed to resolve"
        );
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn a_failed_fetch_leaves_nothing_in_the_cache() {
        let cache = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let mvn = bin.path().join("mvn");
        fs::write(
            &mvn,
            "#!/bin/sh\nprintf '\\033[1;31m[ERROR]\\033[m Could not resolve\\n'\nexit 1\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&mvn, fs::Permissions::from_mode(0o755)).unwrap();
        std::env::set_var("HEADROOM_MVN", &mvn);
        let error = resolve("0.0.0-test", cache.path(), &|_| {}).unwrap_err();
        std::env::remove_var("HEADROOM_MVN");
        let text = error.to_string();
        assert!(text.contains("[ERROR] Could not resolve"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(
            !cache.path().join("cassandra/0.0.0-test").exists(),
            "the cache keeps nothing of a failed fetch"
        );
        let ClusterError::MavenFailed { log, .. } = error else {
            panic!("{text}")
        };
        assert!(log.starts_with(std::env::temp_dir()), "{}", log.display());
        let _ = fs::remove_file(log);
    }

    #[test]
    fn a_cached_version_needs_no_maven() {
        let cache = tempfile::tempdir().unwrap();
        let lib = cache.path().join("cassandra/9.9.9/lib");
        fs::create_dir_all(&lib).unwrap();
        fs::write(lib.join("cassandra-all-9.9.9.jar"), b"").unwrap();
        fs::write(lib.join("jamm-0.4.0.jar"), b"").unwrap();
        let jars = resolve("9.9.9", cache.path(), &|_| panic!("must not fetch")).unwrap();
        assert_eq!(jars.lib_dir, lib);
        assert_eq!(jars.jamm_agent(), Some(lib.join("jamm-0.4.0.jar")));
        let cp = jars.class_path(Path::new("/n/conf"));
        assert_eq!(cp, OsString::from(format!("/n/conf:{}/*", lib.display())));
    }
}
