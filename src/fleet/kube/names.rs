//! What the Kubernetes API accepts, checked before a manifest is printed or a Job created:
//! object names (DNS-1123 labels and subdomains), an image reference, resource quantities
//! and a request no larger than its limit. The API server would refuse such a Job only
//! when it is applied, or its pods would never start; here the flag is named at once.

use crate::results::config::RunSettings;
use crate::usage::UsageError;

use super::options::{KubeOptions, Resources};

/// Checks every name, the image and the resources of `options`.
pub fn check_options(options: &KubeOptions) -> Result<(), UsageError> {
    check_label("--namespace", &options.namespace)?;
    check_image(&options.image)?;
    if let Some(account) = &options.service_account {
        check_subdomain("--service-account", account)?;
    }
    for secret in &options.image_pull_secrets {
        check_subdomain("--image-pull-secret", secret)?;
    }
    if let Some(secret) = &options.tls_secret {
        check_subdomain("--tls-secret", secret)?;
    }
    if let Some(credentials) = &options.credentials {
        check_subdomain("--password-secret", &credentials.secret)?;
        check_secret_key(&credentials.key)?;
    }
    check_resources(&options.resources)
}

/// A DNS-1123 label: a namespace's name, at most 63 lowercase letters, digits and `-`,
/// starting and ending with a letter or digit.
pub fn check_label(flag: &str, name: &str) -> Result<(), UsageError> {
    if is_label(name) {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "{flag} '{}' is not a Kubernetes name: at most 63 lowercase letters, digits and '-', \
         starting and ending with a letter or digit",
        crate::usage::cut(name, 80)
    )))
}

fn is_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// A DNS-1123 subdomain: a Secret's or service account's name, labels joined by `.`, at
/// most 253 characters.
fn check_subdomain(flag: &str, name: &str) -> Result<(), UsageError> {
    if name.len() <= 253 && name.split('.').all(is_label) {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "{flag} '{}' is not a Kubernetes name: lowercase letters, digits, '-' and '.', at most \
         253, each part starting and ending with a letter or digit",
        crate::usage::cut(name, 80)
    )))
}

/// A key of a Secret's data: letters, digits, `-`, `_` and `.`.
fn check_secret_key(key: &str) -> Result<(), UsageError> {
    let ok = !key.is_empty()
        && key.len() <= 253
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "--password-secret-key '{}' is not a key of a Secret: letters, digits, '-', '_' and '.'",
        crate::usage::cut(key, 80)
    )))
}

/// An image reference: `[REGISTRY[:PORT]/]PATH[:TAG][@DIGEST]`, the path in lowercase
/// components (`headroom`, `team/headroom`), the tag up to 128 word characters, `.` and `-`.
pub fn check_image(image: &str) -> Result<(), UsageError> {
    let bad = |why: &str| {
        UsageError::new(format!(
            "--image '{}' is not an image reference ({why}): write it like \
             registry.example.com/headroom:0.1.0",
            crate::usage::cut(image, 80)
        ))
    };
    if image.is_empty() || image.len() > 4096 {
        return Err(bad("empty or too long"));
    }
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest {
        let ok = digest.split_once(':').is_some_and(|(algorithm, hex)| {
            !algorithm.is_empty()
                && algorithm
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                && hex.len() >= 32
                && hex.bytes().all(|b| b.is_ascii_hexdigit())
        });
        if !ok {
            return Err(bad("its digest is not ALGORITHM:HEX"));
        }
    }
    // A tag follows the last ':' after the last '/' (a ':' before it is a registry's port).
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (path, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if let Some(tag) = tag {
        let ok = !tag.is_empty()
            && tag.len() <= 128
            && !tag.starts_with(['.', '-'])
            && tag
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        if !ok {
            return Err(bad("its tag is not letters, digits, '_', '.' and '-'"));
        }
    }
    let mut components: Vec<&str> = path.split('/').collect();
    // A first component with '.' or ':', or `localhost`, is a registry.
    if components.len() > 1 && (components[0].contains(['.', ':']) || components[0] == "localhost")
    {
        let registry = components.remove(0);
        let (host, port) = registry.split_once(':').unwrap_or((registry, "1"));
        let host_ok = !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'));
        if !host_ok || port.parse::<u16>().map_or(true, |p| p == 0) {
            return Err(bad("its registry is not HOST or HOST:PORT"));
        }
    }
    let component_ok = |c: &str| {
        !c.is_empty()
            && c.bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
            })
            && c.starts_with(|ch: char| ch.is_ascii_alphanumeric())
            && c.ends_with(|ch: char| ch.is_ascii_alphanumeric())
    };
    if components.is_empty() || !components.iter().all(|c| component_ok(c)) {
        return Err(bad(
            "its path is lowercase letters, digits, '.', '_' and '-'",
        ));
    }
    Ok(())
}

/// A quantity's value: CPUs for `2` or `1500m`, bytes for `512Mi` or `1G`; the forms the
/// pods' flags accept (`cli/ranges.rs` reads them with it).
pub fn quantity(text: &str) -> Option<f64> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let number: f64 = text[..end].parse().ok()?;
    let scale = match &text[end..] {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        _ => return None,
    };
    Some(number * scale)
}

/// A request above its limit: the API server refuses such a pod.
fn check_resources(resources: &Resources) -> Result<(), UsageError> {
    for (what, request, limit, flags) in [
        (
            "CPU",
            &resources.cpu_request,
            &resources.cpu_limit,
            "--cpu and --cpu-limit",
        ),
        (
            "memory",
            &resources.memory_request,
            &resources.memory_limit,
            "--memory and --memory-limit",
        ),
    ] {
        let (Some(request), Some(limit)) = (request, limit) else {
            continue;
        };
        if let (Some(r), Some(l)) = (quantity(request), quantity(limit)) {
            if r > l {
                return Err(UsageError::new(format!(
                    "{flags}: the {what} request ({request}) is above its limit ({limit}); \
                     Kubernetes refuses such a pod. Give a request at most the limit"
                )));
            }
        }
    }
    Ok(())
}

/// A pod cannot reach this machine's loopback: contact points there are a mistake, unless
/// the pods run on their nodes' network (`host_network`), where loopback is the node's own.
pub fn check_hosts<M>(settings: &RunSettings<M>, host_network: bool) -> Result<(), UsageError> {
    if host_network {
        return Ok(());
    }
    for host in &settings.hosts {
        let bare = host
            .rsplit_once(':')
            .filter(|(h, port)| !h.contains(':') && port.parse::<u16>().is_ok())
            .map_or(host.as_str(), |(h, _)| h);
        let bare = bare.trim_start_matches('[').trim_end_matches(']');
        let loopback = bare == "localhost"
            || bare
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if loopback {
            return Err(UsageError::new(format!(
                "contact point {host} is this machine's loopback, which a pod cannot reach: \
                 give the cluster's addresses (--hosts) as the pods see them, or run the pods \
                 on their nodes' network (--host-network) when Cassandra listens on the nodes \
                 themselves"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_read_as_registries_paths_tags_and_digests() {
        for good in [
            "headroom",
            "headroom:0.1.0",
            "team/headroom:latest",
            "registry.example.com/headroom:0.1",
            "localhost:5000/headroom:v1",
            "reg.io:443/a/b/c:Tag_1.0-rc",
            "headroom@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            check_image(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in [
            "",
            "Headroom:1",
            "registry.example.com/Team/h",
            "headroom:",
            "headroom:-x",
            "head room",
            "a//b",
            "reg:0/h",
            "h@sha256:xyz",
        ] {
            assert!(check_image(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_and_resources_kubernetes_would_refuse_are_named() {
        assert!(check_label("--namespace", "load-tests").is_ok());
        for bad in ["Load", "-a", "a-", "a_b", "", &"a".repeat(64)] {
            let e = check_label("--namespace", bad).unwrap_err().to_string();
            assert!(e.contains("is not a Kubernetes name"), "{e}");
        }
        assert!(check_subdomain("--tls-secret", "tls.client-1").is_ok());
        assert!(check_subdomain("--tls-secret", "TLS").is_err());
        let r = |cpu: &str, limit: &str| Resources {
            cpu_request: Some(cpu.into()),
            cpu_limit: Some(limit.into()),
            ..Resources::default()
        };
        assert!(check_resources(&r("500m", "1")).is_ok());
        assert!(check_resources(&r("1", "1000m")).is_ok());
        let e = check_resources(&r("2", "1500m")).unwrap_err().to_string();
        assert!(
            e.contains("the CPU request (2) is above its limit (1500m)"),
            "{e}"
        );
        let mem = Resources {
            memory_request: Some("2Gi".into()),
            memory_limit: Some("2G".into()),
            ..Resources::default()
        };
        assert!(check_resources(&mem).is_err(), "2Gi is more than 2G");
    }
}
