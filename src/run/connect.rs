//! A run's first phase: the driver's session, the data centre the requests go to, the
//! client's threads (the lanes) and, unless the driver sends, the native sender's
//! connections on them.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use scylla::client::session::Session;

use crate::client::native::{NativeClient, Sender};
use crate::client::{self, ClientConfig};
use crate::lanes::Lanes;

use super::observer::RunObserver;
use super::{policy, RunContext, RunSettings};

/// What a run sends through: the driver's session, the native sender when it carries the
/// measured requests, and the client's threads, stopped however the run ends.
pub(super) struct Connected {
    /// The driver's session.
    pub(super) session: Arc<Session>,
    /// The native sender's connections, when it sends.
    pub(super) native: Option<Arc<NativeClient>>,
    /// The client's threads, for the populate and the measured run alike.
    pub(super) lanes: Arc<Lanes>,
    /// Last, so that the lanes stop once the sender above is dropped.
    _stop_lanes: StopLanes,
}

/// Stops the run's lanes when dropped.
struct StopLanes(Arc<Lanes>);

impl Drop for StopLanes {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Connects the run: the session, the data centre noted, the lanes, the native sender.
pub(super) async fn connect(
    settings: &RunSettings,
    context: &RunContext<'_>,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<Connected> {
    let client_config = ClientConfig {
        hosts: settings.hosts.clone(),
        request_timeout: Duration::from_secs_f64(settings.request_timeout_s),
        connections: settings.connections,
        credentials: context.credentials.clone(),
        local_dc: settings.local_dc.clone(),
        tls: settings.tls.clone(),
    };
    let session = client::connect(&client_config).await?;
    let local_dc = client::local_datacenter(&session, &client_config)?;
    let datacenters = client::datacenters(&session);
    if let (Some(dc), true) = (&local_dc, datacenters.len() > 1) {
        let how = if settings.local_dc.is_some() {
            "--local-dc"
        } else {
            "the contact points'; --local-dc picks another"
        };
        observer.note(&format!(
            "Data centre: {dc} ({how}) of {}; the requests go to its nodes only.",
            datacenters.join(", ")
        ));
    }
    let lanes = Arc::new(
        Lanes::start(policy::run_threads(settings)).context("starting the client's threads")?,
    );
    let stop_lanes = StopLanes(lanes.clone());
    let native = match policy::effective_sender(settings) {
        Sender::Driver => None,
        sender => {
            let to = Native {
                session: &session,
                credentials: &client_config.credentials,
                local_dc,
                lanes: &lanes,
            };
            native_sender(settings, sender, to, observer).await?
        }
    };
    Ok(Connected {
        session,
        native,
        lanes,
        _stop_lanes: stop_lanes,
    })
}

/// Where the native sender connects from.
struct Native<'a> {
    session: &'a Arc<Session>,
    credentials: &'a Option<(String, String)>,
    local_dc: Option<String>,
    lanes: &'a Arc<Lanes>,
}

/// Opens the native sender's connections on every lane; with `--sender auto`, none (the
/// driver sends) when they cannot be opened, said to the observer.
async fn native_sender(
    settings: &RunSettings,
    sender: Sender,
    to: Native<'_>,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<Option<Arc<NativeClient>>> {
    let tls = match &settings.tls {
        Some(tls) => Some(client::tls::TlsClient::new(tls)?),
        None => None,
    };
    match NativeClient::open(
        to.session.clone(),
        settings.connections,
        to.credentials.clone(),
        tls,
        client::CONNECT_TIMEOUT,
        to.local_dc,
        Some(to.lanes.clone()),
    )
    .await
    {
        Ok(native) => {
            if native.credentials_unused() {
                let user = to
                    .credentials
                    .as_ref()
                    .map_or("", |(user, _)| user.as_str());
                observer.problem(&format!(
                    "Warning: the cluster did not ask for a password: it requires no \
                     authentication, and --username {user} was not used."
                ));
            }
            Ok(Some(Arc::new(native)))
        }
        // The ring has more nodes than the contact points told the flags' check: the cause
        // is the open-file limit, not the cluster.
        Err(reason) if reason.contains("Too many open files") => {
            Err(crate::usage::UsageError::new(format!(
                "--connections {} to each node from each of {} client thread(s) need more \
                 open files than this process may have (ulimit -n): give fewer --connections \
                 or --threads ({reason})",
                settings.connections,
                policy::run_threads(settings)
            ))
            .into())
        }
        Err(reason) if sender == Sender::Auto => {
            observer.note(&format!(
                "The native sender cannot connect ({reason}): the driver sends the requests."
            ));
            Ok(None)
        }
        Err(reason) => {
            let hosts = settings.hosts.join(", ");
            let explained = settings
                .tls
                .as_ref()
                .and_then(|tls| client::tls::explain(&reason, tls));
            Err(match explained {
                Some(cause) => client::ConnectError::Tls { hosts, cause },
                None => client::ConnectError::Unreachable {
                    hosts,
                    reason: format!("the native sender: {reason}"),
                },
            }
            .into())
        }
    }
}
