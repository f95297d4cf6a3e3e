//! `GET /v1/events` on the admin socket: what a custom UI reads to follow the queue.

use std::time::Duration;

use execgate_testkit as common;

use common::events::{EventStream, stalled};
use common::*;
use execgate::model::{Status, Via};
use hyper::{Method, StatusCode};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_sees_the_snapshot_then_pending_and_resolved_in_order() {
    let d = TestDaemon::start(&[("EXECGATE_APPROVAL__TIMEOUT_SECS", "300")]).await;
    let before = d.ask_no_wait("builder", "make deploy").await;

    let mut events = EventStream::open(&d.config().admin_socket).await;
    let snapshot = events.expect("snapshot").await;
    let pending = snapshot["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{snapshot}");
    assert_eq!(pending[0]["id"], before.id.as_str());
    assert_eq!(pending[0]["command"], "make deploy");
    assert_eq!(pending[0]["status"], "pending");
    // Which grants an answer may make: no session named, so not "this session".
    assert_eq!(pending[0]["offer"]["always_refused"], json!(null));
    assert_eq!(
        pending[0]["offer"]["session_refused"],
        "the request names no session"
    );

    let (status, body) = d
        .submit(
            json!({"agent": "builder", "session": "s1", "command": "rm -rf /tmp/x", "wait": false}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let second = events.expect("pending").await;
    assert_eq!(second["id"], body["id"]);
    assert_eq!(second["session"], "s1");
    assert!(
        second["offer"]["always_refused"]
            .as_str()
            .is_some_and(|w| w.contains("dangerous")),
        "{second}"
    );
    assert_eq!(
        second["offer"]["session_refused"], second["offer"]["always_refused"],
        "this session is refused where always is"
    );

    let (status, _) = d.decide(&before.short_id, "deny").await;
    assert_eq!(status, StatusCode::OK);
    let resolved = events.expect("resolved").await;
    assert_eq!(resolved["id"], before.id.as_str());
    assert_eq!(resolved["status"], "denied");
    assert_eq!(resolved["via"], "cli");

    let (status, _) = d
        .add_rule(json!({"pattern": "make test", "kind": "exact"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // With what changed: the rule event, as `execgate history --rules` shows it.
    let changed = events.expect("allowlist").await;
    let told = changed["events"].as_array().expect("the rule events");
    assert_eq!(told.len(), 1, "{changed}");
    assert_eq!(
        (
            told[0]["event"].as_str(),
            told[0]["pattern"].as_str(),
            told[0]["via"].as_str()
        ),
        (Some("added"), Some("make test"), Some("cli"))
    );

    // The agent socket has no event stream: agents never learn of each other's requests.
    let (status, _) = d
        .agent()
        .call(Method::GET, "/v1/events", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_ends_with_the_daemon_after_its_cancellations() {
    let mut d = TestDaemon::start(&[("EXECGATE_APPROVAL__TIMEOUT_SECS", "300")]).await;
    let mut events = EventStream::open(&d.config().admin_socket).await;
    events.expect("snapshot").await;
    let r = d.ask_no_wait("builder", "make deploy").await;
    assert_eq!(events.expect("pending").await["id"], r.id.as_str());

    let stopping = tokio::spawn(async move {
        d.stop().await;
        d
    });
    let resolved = events.expect("resolved").await;
    assert_eq!(
        (resolved["status"].as_str(), resolved["via"].as_str()),
        (Some("cancelled"), Some("shutdown"))
    );
    assert!(
        events.next_within(Duration::from_secs(10)).await.is_none(),
        "the stream ends once the daemon stops"
    );
    // An open stream does not hold the daemon's shutdown up (it drains in 5 s at most).
    tokio::time::timeout(Duration::from_secs(4), stopping)
        .await
        .expect("shutdown does not wait for event readers")
        .unwrap();
}

/// Readers that stop reading cost only their own connection: decisions go on at their
/// usual pace, and a reader left behind is told and given a fresh snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_reader_slows_nothing_and_is_resynchronised() {
    let d = TestDaemon::start(&[
        ("EXECGATE_APPROVAL__TIMEOUT_SECS", "300"),
        ("EXECGATE_LIMITS__MAX_PENDING_PER_UID", "200"),
        ("EXECGATE_LIMITS__ASKS_PER_MINUTE_PER_UID", "200"),
    ])
    .await;
    let socket = d.config().admin_socket.clone();
    // Never read: once its socket's buffers are full, the daemon can write it nothing.
    let _dead = stalled(&socket).await;
    // Read, but only later.
    let mut late = EventStream::open(&socket).await;
    let (status, _) = d
        .add_rule(json!({"pattern": "make test", "kind": "exact"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);

    // Big pending events first, more than the buffers between the daemon and a reader
    // hold (socket and HTTP writer), then more events than the daemon keeps.
    let big = format!("make {}", "x".repeat(30_000));
    for _ in 0..100 {
        d.ask_no_wait("builder", &big).await;
    }
    for i in 0..600 {
        let (status, rule) = d
            .add_rule(json!({"pattern": format!("true {i}"), "kind": "exact"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{rule}");
        let id = rule["id"].as_i64().unwrap();
        let (status, _) = d
            .admin()
            .call(Method::DELETE, &format!("/v1/allowlist/{id}"), None)
            .await
            .unwrap();
        assert_eq!(status, StatusCode::NO_CONTENT);
    }
    // Decisions still come at once.
    for _ in 0..20 {
        let r = tokio::time::timeout(Duration::from_secs(5), d.ask("builder", "make test"))
            .await
            .expect("an allowlisted decision is not held up by stalled readers");
        assert_eq!((r.status, r.via), (Status::Approved, Some(Via::Allowlist)));
    }

    // The late reader: the snapshot, whatever its buffers held, then word that it missed
    // events, then a fresh snapshot with every pending request.
    assert_eq!(late.expect("snapshot").await["pending"], json!([]));
    let missed = loop {
        let (name, data) = late
            .next_within(Duration::from_secs(10))
            .await
            .expect("the stream goes on");
        if name == "resync" {
            break data["missed"].as_u64().unwrap();
        }
        assert!(
            ["pending", "allowlist"].contains(&name.as_str()),
            "{name}: {data}"
        );
    };
    assert!(missed > 0);
    let fresh = late.expect("snapshot").await;
    assert_eq!(fresh["pending"].as_array().unwrap().len(), 100);
}
