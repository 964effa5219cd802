//! The measured requests' two paths against a real node: every kind of request a workload
//! format sends (a plain EXECUTE, a read whose rows are used, a lightweight transaction's
//! `[applied]`, logged, unlogged, counter and conditional batches, a scan of several pages)
//! gives the same answer through the native sender as through the driver.

use std::sync::Arc;
use std::time::Duration;

use headroom::client::native::NativeClient;
use headroom::client::{self, ClientConfig};
use headroom::cluster::LocalCluster;
use headroom::workload::common::send::{Answer, Requests};
use scylla::client::session::Session;
use scylla::statement::batch::BatchType;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency, SerialConsistency};
use scylla::value::{Counter, CqlValue};

use crate::support;

async fn prepare(session: &Session, cql: &str) -> PreparedStatement {
    let mut statement = session.prepare(cql).await.unwrap();
    statement.set_consistency(Consistency::One);
    statement.set_serial_consistency(Some(SerialConsistency::LocalSerial));
    statement
}

fn text(answer: &Answer, row: usize, column: &str) -> Option<String> {
    let at = answer.columns.iter().position(|c| c == column).unwrap();
    match &answer.rows[row][at] {
        Some(CqlValue::Text(t)) => Some(t.clone()),
        None => None,
        other => panic!("{column}: {other:?}"),
    }
}

/// Sends every kind of request through `requests` on the key space `p` (its own rows, so
/// that both paths start from nothing), and returns what it read, for comparing the paths.
async fn exercise(requests: &Requests, p: &str) -> Vec<String> {
    let session = requests.session().clone();
    let mut seen = Vec::new();
    let insert = prepare(&session, "INSERT INTO rq.kv (p, c, v) VALUES (?, ?, ?)").await;
    let select = prepare(&session, "SELECT p, c, v FROM rq.kv WHERE p = ? AND c = ?").await;
    let lwt = prepare(
        &session,
        "INSERT INTO rq.kv (p, c, v) VALUES (?, ?, ?) IF NOT EXISTS",
    )
    .await;
    let update_if = prepare(
        &session,
        "UPDATE rq.kv SET v = ? WHERE p = ? AND c = ? IF v = ?",
    )
    .await;
    let count = prepare(&session, "UPDATE rq.counts SET n = n + ? WHERE p = ?").await;
    let read_count = prepare(&session, "SELECT n FROM rq.counts WHERE p = ?").await;
    let scan = prepare(&session, "SELECT c FROM rq.kv WHERE p = ?").await;

    // A plain EXECUTE, then the row read back.
    requests.execute(&insert, (p, 0, "zero")).await.unwrap();
    let answer = requests.fetch(&select, (p, 0)).await.unwrap();
    assert_eq!(answer.columns, ["p", "c", "v"]);
    assert_eq!(answer.rows.len(), 1);
    seen.push(format!("read {:?}", text(&answer, 0, "v")));
    // A read of no row.
    let answer = requests.fetch(&select, (p, 99)).await.unwrap();
    assert!(answer.rows.is_empty(), "{answer:?}");
    // A write's answer has no rows.
    let answer = requests.fetch(&insert, (p, 1, "one")).await.unwrap();
    assert_eq!(answer, Answer::default());

    // Lightweight transactions: applied once, then not, with the current value.
    let first = requests.fetch(&lwt, (p, 2, "two")).await.unwrap();
    assert_eq!(first.applied(), Some(true), "{first:?}");
    let again = requests.fetch(&lwt, (p, 2, "deux")).await.unwrap();
    assert_eq!(again.applied(), Some(false), "{again:?}");
    seen.push(format!("current {:?}", text(&again, 0, "v")));
    let swapped = requests
        .fetch(&update_if, ("TWO", p, 2, "two"))
        .await
        .unwrap();
    assert_eq!(swapped.applied(), Some(true), "{swapped:?}");

    // Batches: logged and unlogged of several rows, counter, conditional.
    let rows: Vec<(&str, i32, String)> = (10..20).map(|c| (p, c, format!("v{c}"))).collect();
    let items: Vec<(&PreparedStatement, &(&str, i32, String))> =
        rows.iter().map(|r| (&insert, r)).collect();
    let answer = requests
        .batch(BatchType::Logged, Consistency::One, &items)
        .await
        .unwrap();
    assert!(answer.rows.is_empty(), "{answer:?}");
    let rows: Vec<(&str, i32, String)> = (20..45).map(|c| (p, c, format!("v{c}"))).collect();
    let items: Vec<(&PreparedStatement, &(&str, i32, String))> =
        rows.iter().map(|r| (&insert, r)).collect();
    requests
        .batch(BatchType::Unlogged, Consistency::One, &items)
        .await
        .unwrap();
    let increments = [(Counter(3), p), (Counter(4), p)];
    let items: Vec<(&PreparedStatement, &(Counter, &str))> =
        increments.iter().map(|r| (&count, r)).collect();
    requests
        .batch(BatchType::Counter, Consistency::One, &items)
        .await
        .unwrap();
    let answer = requests.fetch(&read_count, (p,)).await.unwrap();
    assert_eq!(answer.first("n"), Some(&CqlValue::Counter(Counter(7))));
    let conditional = [
        (p, 50, "fifty".to_string()),
        (p, 51, "fifty-one".to_string()),
    ];
    let items: Vec<(&PreparedStatement, &(&str, i32, String))> =
        conditional.iter().map(|r| (&lwt, r)).collect();
    let answer = requests
        .batch(BatchType::Logged, Consistency::One, &items)
        .await
        .unwrap();
    assert_eq!(answer.applied(), Some(true), "{answer:?}");
    let answer = requests
        .batch(BatchType::Logged, Consistency::One, &items)
        .await
        .unwrap();
    assert_eq!(answer.applied(), Some(false), "{answer:?}");

    // Rows 0, 1, 2, 10..45, 50, 51: 40 rows, read 7 a page (6 pages).
    for page_size in [7, 40, 1000] {
        let read = requests.scan(&scan, (p,), page_size).await.unwrap();
        assert_eq!(read, 40, "page size {page_size}");
    }
    // The scan's rows by fetch (one page) as well.
    let answer = requests.fetch(&scan, (p,)).await.unwrap();
    assert_eq!(answer.rows.len(), 40);
    seen
}

#[test]
fn native_and_driver_answer_alike() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("requests");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let config = ClientConfig {
            hosts: vec![support::hosts()],
            request_timeout: Duration::from_secs(10),
            connections: 1,
            credentials: None,
            local_dc: None,
            tls: None,
        };
        let session = client::connect(&config).await.unwrap();
        for cql in [
            "CREATE KEYSPACE IF NOT EXISTS rq WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            "CREATE TABLE IF NOT EXISTS rq.kv (p text, c int, v text, PRIMARY KEY (p, c))",
            "CREATE TABLE IF NOT EXISTS rq.counts (p text PRIMARY KEY, n counter)",
        ] {
            session.query_unpaged(cql, &[]).await.unwrap();
        }
        session.await_schema_agreement().await.unwrap();
        let native = NativeClient::open(
            session.clone(),
            1,
            None,
            None,
            client::CONNECT_TIMEOUT,
            None,
            None,
        )
        .await
        .unwrap();
        let through_native = Requests::new(session.clone(), Some(Arc::new(native)));
        let through_driver = Requests::new(session.clone(), None);
        assert!(through_native.is_native() && !through_driver.is_native());
        let native_saw = exercise(&through_native, "native").await;
        let driver_saw = exercise(&through_driver, "driver").await;
        assert_eq!(native_saw, driver_saw);
        assert_eq!(
            native_saw,
            ["read Some(\"zero\")", "current Some(\"two\")"]
        );
    });
}
