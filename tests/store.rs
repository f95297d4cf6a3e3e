//! The store on its own, against a real SQLite file: short-id quarantine and
//! exactly-once transitions.

use std::collections::HashSet;
use std::time::Duration;

use chrono::Utc;
use execgate::model::{Risk, Status, Via};
use execgate::store::{NewRequest, Resolution, Store};

fn new_request(i: usize) -> NewRequest {
    NewRequest {
        id: uuid::Uuid::now_v7().to_string(),
        agent: "a".into(),
        session: None,
        command: Some(format!("make target{i}")),
        argv: None,
        cwd: None,
        reason: None,
        risk: Risk::NeedsReview,
        risk_reasons: vec![],
        created_at: Utc::now(),
        peer_uid: None,
        peer_pid: None,
        run: false,
    }
}

fn resolution(status: Status) -> Resolution {
    Resolution {
        status,
        decision: None,
        via: Via::Timeout,
        decided_by: None,
        resolved_at: Utc::now(),
    }
}

#[tokio::test]
async fn asked_short_ids_are_not_reused_within_a_day() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("x.db"), Duration::from_secs(5))
        .await
        .unwrap();
    // 1500 random 16-bit ids would collide with near certainty (birthday bound ≈ 300);
    // the quarantine must keep every one distinct, resolved or not.
    let mut seen = HashSet::new();
    for i in 0..1500 {
        let new = new_request(i);
        let short = store
            .insert_pending(&new, Utc::now())
            .await
            .unwrap()
            .short_id;
        assert_eq!(short.len(), 4);
        assert!(
            short
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert!(seen.insert(short.clone()), "short id {short} reused");
        if i % 2 == 0 {
            assert!(
                store
                    .resolve(&new.id, &resolution(Status::Expired), None, None)
                    .await
                    .unwrap()
            );
        }
    }
}

#[tokio::test]
async fn a_request_leaves_pending_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("x.db"), Duration::from_secs(5))
        .await
        .unwrap();
    let new = new_request(0);
    let short = store
        .insert_pending(&new, Utc::now())
        .await
        .unwrap()
        .short_id;
    assert!(
        store
            .resolve(&new.id, &resolution(Status::Denied), Some("no"), None)
            .await
            .unwrap()
    );
    assert!(
        !store
            .resolve(&new.id, &resolution(Status::Approved), None, None)
            .await
            .unwrap()
    );
    let r = store.find(&short.to_uppercase()).await.unwrap().unwrap();
    assert_eq!((r.status, r.error.as_deref()), (Status::Denied, Some("no")));
    assert!(
        !store
            .resolve("no-such-id", &resolution(Status::Approved), None, None)
            .await
            .unwrap()
    );
    // The startup sweep touches only what is still pending.
    let other = new_request(1);
    store.insert_pending(&other, Utc::now()).await.unwrap();
    let swept = store
        .sweep_pending(&resolution(Status::Cancelled), "restarted")
        .await
        .unwrap();
    assert_eq!(swept, 1);
    assert_eq!(
        store.get(&new.id).await.unwrap().unwrap().status,
        Status::Denied
    );
    assert_eq!(
        store.get(&other.id).await.unwrap().unwrap().status,
        Status::Cancelled
    );
}
