//! The cluster to reach and the credentials to log in with, shared by every subcommand that
//! connects (`run`, `capacity`, `sweep`); and the redaction of secrets from a recorded
//! command line.

use std::path::PathBuf;

use clap::Args;

/// The cluster to reach and how to log in to it.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Connection")]
pub struct ConnectionArgs {
    /// Contact points, host[:port], comma-separated. [default: 127.0.0.1:9042]
    #[arg(long, value_delimiter = ',', value_name = "HOSTS")]
    pub hosts: Vec<String>,

    /// The data centre whose nodes coordinate the requests (both senders route to its nodes
    /// only, so LOCAL_ONE and LOCAL_QUORUM mean that data centre). [default: the data centre of
    /// the contact points]
    #[arg(long, value_name = "NAME")]
    pub local_dc: Option<String>,

    /// User name, for a cluster that requires authentication; the password comes from
    /// HEADROOM_PASSWORD or --password-file.
    #[arg(long, value_name = "NAME", env = "HEADROOM_USERNAME")]
    pub username: Option<String>,

    /// Password, for a cluster that requires authentication. On the command line it can be
    /// read by other users of this machine (ps, /proc): prefer HEADROOM_PASSWORD or
    /// --password-file. Never written to a file or printed.
    #[arg(
        long,
        value_name = "PASSWORD",
        env = "HEADROOM_PASSWORD",
        hide_env_values = true
    )]
    pub password: Option<String>,

    /// A file whose first line is the password (the rest of the file is ignored), for a
    /// cluster that requires authentication.
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,

    /// Connect over TLS, checking the nodes' certificates against this system's root
    /// certificates (and each node's address, or --tls-server-name). Any other --tls flag
    /// implies it. Against a local cluster started with `cluster start --tls`, --cluster-dir
    /// is enough: its CA (and client certificate) are used without flags.
    #[arg(long)]
    pub tls: bool,

    /// Connect over TLS, trusting the CA certificates in this PEM file instead of the
    /// system's (e.g. the cluster's own CA).
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,

    /// Present this client certificate (PEM, with its chain), for nodes that require one
    /// (mutual TLS); give its key with --tls-key.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM, unencrypted).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,

    /// Check the nodes' certificates for this name instead of each node's address, e.g.
    /// when they hold a DNS name.
    #[arg(long, value_name = "NAME")]
    pub tls_server_name: Option<String>,

    /// Connect over TLS without checking the nodes' certificates: anyone between this
    /// machine and the nodes could read and change the traffic. Said in the output and
    /// recorded in config.json.
    #[arg(long)]
    pub tls_no_verify: bool,
}

/// Flags whose values are secrets: never written to a file, printed or shown in a report.
pub const SECRET_FLAGS: [&str; 1] = ["--password"];

/// What stands in for a secret in a recorded command line.
pub const REDACTED: &str = "<redacted>";

/// Whether a command line gives a secret as a flag's value (`--password X`), where other
/// users of the machine can read it.
pub fn secret_on_command_line(args: impl IntoIterator<Item = String>) -> bool {
    args.into_iter().any(|arg| {
        SECRET_FLAGS
            .iter()
            .any(|flag| arg == *flag || arg.starts_with(&format!("{flag}=")))
    })
}

/// The command line as typed, with the value of every [`SECRET_FLAGS`] flag replaced by
/// [`REDACTED`] (`--password X` and `--password=X` alike), for config.json and the report.
pub fn redacted_command_line(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut secret_next = false;
    for arg in args {
        if std::mem::take(&mut secret_next) {
            out.push(REDACTED.to_string());
            continue;
        }
        match SECRET_FLAGS
            .iter()
            .find(|flag| arg == **flag || arg.starts_with(&format!("{flag}=")))
        {
            Some(flag) if arg == *flag => {
                secret_next = true;
                out.push(arg);
            }
            Some(flag) => out.push(format!("{flag}={REDACTED}")),
            None => out.push(arg),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_command_line_never_holds_the_password() {
        let line =
            |args: &[&str]| redacted_command_line(args.iter().map(|a| a.to_string())).join(" ");
        assert_eq!(
            line(&[
                "headroom",
                "run",
                "kv",
                "--password",
                "s3cret",
                "--rate",
                "10"
            ]),
            "headroom run kv --password <redacted> --rate 10"
        );
        assert_eq!(
            line(&["headroom", "run", "--password=s3cret", "kv"]),
            "headroom run --password=<redacted> kv"
        );
        assert_eq!(
            line(&["headroom", "run", "kv", "--password"]),
            "headroom run kv --password"
        );
        // Only the flag itself: a workload named like it, or another flag, is kept.
        assert_eq!(
            line(&["headroom", "run", "--passwords", "x"]),
            "headroom run --passwords x"
        );
        assert_eq!(
            line(&["headroom", "run", "--password-file", "p.txt"]),
            "headroom run --password-file p.txt"
        );
    }

    #[test]
    fn a_password_typed_on_the_command_line_is_noticed() {
        let given = |args: &[&str]| secret_on_command_line(args.iter().map(|a| a.to_string()));
        assert!(given(&["headroom", "run", "--password", "x"]));
        assert!(given(&["headroom", "run", "--password=x"]));
        assert!(!given(&["headroom", "run", "--password-file", "p"]));
        assert!(!given(&["headroom", "run", "kv"]));
    }
}
