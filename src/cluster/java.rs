//! Finding the machine's JDK and checking that it runs the chosen Cassandra release.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::config::CassandraVersion;
use super::ClusterError;

/// A Java runtime that headroom found.
#[derive(Debug, Clone)]
pub struct Java {
    /// The `java` executable.
    pub path: PathBuf,
    /// Its major version: 8, 11, 17, 21...
    pub major: u32,
    /// The version as `java -version` printed it, e.g. `17.0.15`.
    pub version: String,
}

impl Java {
    /// Finds `java`: `$JAVA_HOME/bin/java` when JAVA_HOME is set, else the first on PATH.
    pub fn find() -> Result<Java, ClusterError> {
        let candidate = match std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
            Some(home) => {
                let path = Path::new(&home).join("bin").join("java");
                if !path.is_file() {
                    return Err(ClusterError::JavaNotFound {
                        looked: format!("JAVA_HOME is {}, but it has no bin/java", path.display()),
                    });
                }
                path
            }
            None => which::which("java").map_err(|_| ClusterError::JavaNotFound {
                looked: "JAVA_HOME is not set and there is no java on PATH".into(),
            })?,
        };
        Java::at(&candidate)
    }

    /// Reads the version of the `java` at `path`.
    pub fn at(path: &Path) -> Result<Java, ClusterError> {
        let output = Command::new(path).arg("-version").output().map_err(|e| {
            ClusterError::JavaUnusable {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
        // `java -version` prints to standard error.
        let text = String::from_utf8_lossy(&output.stderr);
        let (major, version) =
            parse_version_output(&text).ok_or_else(|| ClusterError::JavaUnusable {
                path: path.to_path_buf(),
                reason: format!(
                    "no version in its output: {}",
                    text.lines().next().unwrap_or("(nothing)")
                ),
            })?;
        Ok(Java {
            path: path.to_path_buf(),
            major,
            version,
        })
    }

    /// Checks that this Java runs `cassandra` (a release number such as 5.0.9).
    pub fn check_supports(&self, cassandra: &str) -> Result<(), ClusterError> {
        let supported = CassandraVersion::parse(cassandra)?.supported_java()?;
        if supported.contains(&self.major) {
            return Ok(());
        }
        let names: Vec<String> = supported.iter().map(u32::to_string).collect();
        Err(ClusterError::JavaUnsupported {
            cassandra: cassandra.to_string(),
            path: self.path.clone(),
            found: self.major,
            supported: names.join(" or "),
        })
    }
}

/// Reads the major version and version text from `java -version` output:
/// `openjdk version "17.0.15" 2025-04-15` gives 17; `java version "1.8.0_392"` gives 8.
pub fn parse_version_output(text: &str) -> Option<(u32, String)> {
    let line = text.lines().find(|l| l.contains(" version \""))?;
    let version = line.split('"').nth(1)?.to_string();
    let mut parts = version.split(['.', '-', '+', '_']);
    let first: u32 = parts.next()?.parse().ok()?;
    let major = if first == 1 {
        parts.next()?.parse().ok()?
    } else {
        first
    };
    Some((major, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_modern_and_legacy_version_lines() {
        let jdk17 = "openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)\n";
        assert_eq!(parse_version_output(jdk17), Some((17, "17.0.15".into())));
        let jdk8 = "java version \"1.8.0_392\"\nJava(TM) SE Runtime Environment\n";
        assert_eq!(parse_version_output(jdk8).unwrap().0, 8);
        let ea = "openjdk version \"21-ea\" 2023-09-19\n";
        assert_eq!(parse_version_output(ea).unwrap().0, 21);
        let tool_options =
            "Picked up JAVA_TOOL_OPTIONS: -Xss1m\nopenjdk version \"11.0.2\" 2019-01-15\n";
        assert_eq!(parse_version_output(tool_options).unwrap().0, 11);
        assert_eq!(parse_version_output("bash: java: not found"), None);
    }

    #[test]
    fn unsupported_java_says_which_versions_work() {
        let java = Java {
            path: "/usr/bin/java".into(),
            major: 21,
            version: "21.0.1".into(),
        };
        let err = java.check_supports("5.0.9").unwrap_err().to_string();
        assert!(
            err.contains("Cassandra 5.0.9 runs on Java 11 or 17, but /usr/bin/java is Java 21"),
            "{err}"
        );
        assert!(err.contains("JAVA_HOME"), "{err}");
        let java = Java { major: 17, ..java };
        assert!(java.check_supports("5.0.9").is_ok());
        assert!(java.check_supports("4.1.7").is_err());
    }

    #[test]
    fn a_missing_executable_is_reported_with_its_path() {
        let err = Java::at(Path::new("/nonexistent/bin/java"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("/nonexistent/bin/java"), "{err}");
    }
}
