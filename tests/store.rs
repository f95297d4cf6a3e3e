//! The store on its own, against a real SQLite file (and, from `tests/on_postgres.rs`, a
//! real PostgreSQL database): short-id quarantine and exactly-once transitions.

use std::collections::HashSet;
use std::time::Duration;

use chrono::Utc;
use execgate::model::{AgentName, Command, RequestSpec, Risk, Status, Via};
use execgate::store::{NewRequest, Resolution, Store};

fn new_request(i: usize) -> NewRequest {
    NewRequest {
        id: uuid::Uuid::now_v7().to_string(),
        spec: RequestSpec {
            agent: AgentName::new("a".into()).unwrap(),
            session: None,
            command: Command::Line(format!("make target{i}")),
            cwd: None,
            reason: None,
            front: None,
            run: false,
            shell: None,
            input: None,
            peer_uid: None,
            peer_pid: None,
        },
        risk: Risk::NeedsReview,
        risk_reasons: vec![],
        created_at: Utc::now(),
        grant: None,
        confinement: None,
    }
}

/// The ids `Store::list` gives for a filter, newest first.
async fn listed(
    store: &Store,
    status: Option<Status>,
    agent: Option<&str>,
    limit: u32,
    before: Option<String>,
) -> Vec<String> {
    let filter = execgate::store::RequestFilter {
        status,
        agent: agent.map(str::to_string),
        limit,
        before,
    };
    store
        .list(&filter)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect()
}

/// A fresh store: a SQLite file in `dir`, or (in `tests/on_postgres.rs`) a fresh
/// PostgreSQL database.
async fn open(dir: &tempfile::TempDir) -> Store {
    if execgate_testkit::on_postgres() {
        let url = execgate_testkit::postgres::shared().create_database();
        let url = execgate::config::PostgresUrl::parse(&url).unwrap();
        let options = execgate::store::postgres::Options {
            acquire_timeout: Duration::from_secs(5),
            max_connections: 8,
        };
        return Store::open_postgres(&url, "test", options).await.unwrap();
    }
    Store::open(&dir.path().join("x.db"), Duration::from_secs(5))
        .await
        .unwrap()
}

fn resolution(status: Status) -> Resolution {
    Resolution {
        status,
        decision: None,
        via: Via::Timeout,
        decided_by: None,
        resolved_at: Utc::now(),
        shown: false,
    }
}

#[tokio::test]
async fn asked_short_ids_are_not_reused_within_a_day() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    // 1500 random 16-bit ids would collide with near certainty (birthday bound ≈ 300);
    // the quarantine must keep every one a human was shown distinct, resolved or not.
    let mut seen = HashSet::new();
    for i in 0..1500 {
        let new = new_request(i);
        let short = store
            .insert_pending(new.clone(), Utc::now())
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
        // A third are resolved having been shown; a third are shown only after their
        // transition was written; a third wait, which holds an id shown or not.
        match i % 3 {
            0 => {
                let mut shown = resolution(Status::Expired);
                shown.shown = true;
                assert!(store.resolve(&new.id, shown, None, None).await.unwrap());
            }
            1 => {
                let unseen = resolution(Status::Expired);
                assert!(store.resolve(&new.id, unseen, None, None).await.unwrap());
                store.mark_shown(vec![new.id.clone()]).await.unwrap();
            }
            _ => {}
        }
    }
}

/// docs/lifecycle.md#short-ids: an id no human was shown (its request ended before any transport posted
/// it, as when an agent asks and hangs up) goes back at once. Otherwise one agent that
/// asks and hangs up fast enough uses up all 65,536 ids, and every uid is refused for a
/// day, across restarts.
#[tokio::test]
async fn short_ids_nobody_was_shown_go_back_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let mut seen = HashSet::new();
    let mut reused = 0;
    for i in 0..1500 {
        let new = new_request(i);
        let short = store
            .insert_pending(new.clone(), Utc::now())
            .await
            .unwrap()
            .short_id;
        reused += usize::from(!seen.insert(short));
        let mut cancelled = resolution(Status::Cancelled);
        cancelled.via = Via::Disconnect;
        assert!(store.resolve(&new.id, cancelled, None, None).await.unwrap());
    }
    // 1500 draws from 65,536 repeat with near certainty (birthday bound ≈ 300).
    assert!(reused > 0, "ids nobody saw were kept out of circulation");
}

#[tokio::test]
async fn a_request_leaves_pending_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let new = new_request(0);
    let short = store
        .insert_pending(new.clone(), Utc::now())
        .await
        .unwrap()
        .short_id;
    assert!(
        store
            .resolve(&new.id, resolution(Status::Denied), Some("no".into()), None)
            .await
            .unwrap()
    );
    assert!(
        !store
            .resolve(&new.id, resolution(Status::Approved), None, None)
            .await
            .unwrap()
    );
    let r = store.find(&short.to_uppercase()).await.unwrap().unwrap();
    assert_eq!((r.status, r.error.as_deref()), (Status::Denied, Some("no")));
    assert!(
        !store
            .resolve("no-such-id", resolution(Status::Approved), None, None)
            .await
            .unwrap()
    );
    // The startup sweep touches only what is still pending.
    let other = new_request(1);
    store
        .insert_pending(other.clone(), Utc::now())
        .await
        .unwrap();
    let swept = store
        .sweep_pending(resolution(Status::Cancelled), "restarted")
        .await
        .unwrap();
    assert_eq!(swept, vec![other.id.clone()]);
    assert_eq!(
        store.get(&new.id).await.unwrap().unwrap().status,
        Status::Denied
    );
    assert_eq!(
        store.get(&other.id).await.unwrap().unwrap().status,
        Status::Cancelled
    );
}

/// Concurrent writes are committed together, each caller hears only after the commit that
/// holds its write (a read through another connection sees the row at once), and a
/// write that fails takes nobody else down: its group is committed again one by one.
#[tokio::test]
async fn concurrent_writes_commit_together_and_a_failure_fails_alone() {
    if !execgate_testkit::on_sqlite_file(
        "concurrent_writes_commit_together_and_a_failure_fails_alone",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let taken = new_request(0);
    store
        .insert_decided(taken.clone(), resolution(Status::Approved), None, vec![])
        .await
        .unwrap();
    let before = store.write_stats();

    // Another connection holds the database's write lock while the 64 are asked for: the
    // writer takes the first (and whatever is queued with it) and waits for the lock,
    // and the rest queue behind it, so the duplicate is committed in a group of several
    // whichever group it falls in (alone, it would fail alone without a retry).
    let lock = execgate_testkit::db::hold_write_lock(&dir.path().join("x.db")).await;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 1..=64 {
        let store = store.clone();
        // One of them reuses an id that is already stored: its insert must fail.
        let new = if i == 32 {
            taken.clone()
        } else {
            new_request(i)
        };
        tasks.spawn(async move {
            let id = new.id.clone();
            let written = store
                .insert_decided(new, resolution(Status::Denied), Some("no".into()), vec![])
                .await;
            let visible = store.get(&id).await.unwrap().map(|r| r.status);
            (id, written.is_ok(), visible)
        });
    }
    // The tasks run (and queue their writes) while this one sleeps.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(lock);
    let mut failed = Vec::new();
    while let Some(outcome) = tasks.join_next().await {
        let (id, ok, visible) = outcome.unwrap();
        if ok {
            assert_eq!(
                visible,
                Some(Status::Denied),
                "{id} acknowledged, not readable"
            );
        } else {
            failed.push((id, visible));
        }
    }
    assert_eq!(
        failed,
        vec![(taken.id.clone(), Some(Status::Approved))],
        "only the duplicate fails, and the row it collided with is untouched"
    );

    let after = store.write_stats();
    assert_eq!(after.writes - before.writes, 64);
    assert!(
        after.groups - before.groups < 64,
        "the writes were not grouped: {before:?} → {after:?}"
    );
    assert!(
        after.retried_groups > before.retried_groups,
        "the failing group was not retried: {after:?}"
    );
}

/// Every combination of listing filters returns what it names, newest first, and a short
/// id finds only requests that were put to a human (others' short ids were never shown).
#[tokio::test]
async fn listing_filters_and_short_id_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let mut decided = Vec::new();
    for (i, (agent, status)) in [
        ("a", Status::Approved),
        ("b", Status::Denied),
        ("a", Status::Denied),
    ]
    .into_iter()
    .enumerate()
    {
        let mut new = new_request(i);
        new.spec.agent = AgentName::new(agent.into()).unwrap();
        decided.push(
            store
                .insert_decided(new, resolution(status), None, vec![])
                .await
                .unwrap(),
        );
    }
    let mut asked = new_request(10);
    asked.spec.agent = AgentName::new("b".into()).unwrap();
    let pending = store.insert_pending(asked, Utc::now()).await.unwrap();

    let list = |status: Option<Status>, agent: Option<&'static str>| {
        listed(&store, status, agent, 10, None)
    };
    let id = |i: usize| decided[i].id.clone();
    let p = pending.id.clone();
    assert_eq!(
        list(None, None).await,
        [pending.id.clone(), id(2), id(1), id(0)]
    );
    assert_eq!(list(None, Some("a")).await, [id(2), id(0)]);
    assert_eq!(
        list(Some(Status::Pending), None).await,
        std::slice::from_ref(&p)
    );
    assert_eq!(list(Some(Status::Pending), Some("b")).await, [p]);
    assert!(list(Some(Status::Pending), Some("a")).await.is_empty());
    assert_eq!(list(Some(Status::Denied), None).await, [id(2), id(1)]);
    assert_eq!(list(Some(Status::Denied), Some("a")).await, [id(2)]);

    let found = store.find(&pending.short_id.to_uppercase()).await.unwrap();
    assert_eq!(found.map(|r| r.id), Some(pending.id.clone()));
    for r in &decided {
        if r.short_id != pending.short_id {
            assert!(store.find(&r.short_id).await.unwrap().is_none());
        }
        assert_eq!(
            store.find(&r.id).await.unwrap().map(|f| f.id),
            Some(r.id.clone())
        );
    }
}

/// A digest's requests are found by their message, and nothing else is: neither a
/// message whose id merely begins the same, nor the message itself alone.
#[tokio::test]
async fn a_digests_requests_are_found_by_their_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let mut asked = Vec::new();
    for i in 0..4 {
        asked.push(
            store
                .insert_pending(new_request(i), Utc::now())
                .await
                .unwrap(),
        );
    }
    for r in &asked[..2] {
        store
            .set_message_external_id(&r.id, &format!("42:7#{}", r.id))
            .await
            .unwrap();
    }
    // Message 70 (its id begins like 7's), and 7 posted alone elsewhere.
    store
        .set_message_external_id(&asked[2].id, &format!("42:70#{}", asked[2].id))
        .await
        .unwrap();
    store
        .set_message_external_id(&asked[3].id, "42:7")
        .await
        .unwrap();
    let found: Vec<String> = store
        .find_by_message_prefix("42:7#")
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(found, [asked[0].id.clone(), asked[1].id.clone()]);
    assert!(
        store
            .find_by_message_prefix("42:8#")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.find_by_message_prefix("").await.unwrap().is_empty());
}

/// Paging with `before` walks every combination of filters to its end, page by page,
/// with nothing skipped or repeated: also across requests created in the same
/// millisecond, which listing orders by id.
#[tokio::test]
async fn paging_with_before_walks_each_listing_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let base = Utc::now();
    for i in 0..11 {
        let mut new = new_request(i);
        new.spec.agent = AgentName::new(["a", "b"][i % 2].into()).unwrap();
        // Two by two in the same millisecond.
        new.created_at = base + chrono::TimeDelta::milliseconds((i / 2) as i64);
        match i % 3 {
            0 => {
                store.insert_pending(new, base).await.unwrap();
            }
            n => {
                let status = [Status::Approved, Status::Denied][n - 1];
                store
                    .insert_decided(new, resolution(status), None, vec![])
                    .await
                    .unwrap();
            }
        }
    }
    let list =
        |status: Option<Status>,
         agent: Option<&'static str>,
         limit: u32,
         before: Option<String>| { listed(&store, status, agent, limit, before) };
    for status in [None, Some(Status::Pending), Some(Status::Denied)] {
        for agent in [None, Some("a")] {
            let whole = list(status, agent, 100, None).await;
            assert!(!whole.is_empty());
            let mut paged = Vec::new();
            let mut before = None;
            loop {
                let page = list(status, agent, 2, before.clone()).await;
                assert!(page.len() <= 2);
                let Some(last) = page.last() else { break };
                before = Some(last.clone());
                paged.extend(page);
            }
            assert_eq!(paged, whole, "status {status:?}, agent {agent:?}");
        }
    }
    assert!(
        list(None, None, 100, Some("no-such-id".into()))
            .await
            .is_empty()
    );
}

/// A database written by the release before execgate ran its own migrations (sqlx kept
/// the list of applied migrations in `_sqlx_migrations`) opens in place: nothing is
/// migrated twice, and every request and rule reads back as it was written.
#[tokio::test]
async fn a_database_from_the_sqlx_era_upgrades_in_place() {
    if !execgate_testkit::on_sqlite_file("a_database_from_the_sqlx_era_upgrades_in_place") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/schema-0006-sqlx.db"
        ),
        &path,
    )
    .unwrap();
    let store = Store::open(&path, Duration::from_secs(5)).await.unwrap();
    let all = store
        .list(&execgate::store::RequestFilter {
            status: None,
            agent: None,
            limit: 100,
            before: None,
        })
        .await
        .unwrap();
    let mut seen: Vec<(String, Status)> = all
        .iter()
        .map(|r| (r.command.display().into_owned(), r.status))
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        seen,
        [
            ("cargo build --release".to_string(), Status::Cancelled),
            ("cargo publish".into(), Status::Denied),
            ("grep -r 'fn main' src".into(), Status::Expired),
            ("ls -la".into(), Status::Approved),
            ("make deploy".into(), Status::Cancelled),
        ]
    );
    let deploy = all.iter().find(|r| r.short_id == "ecca").unwrap();
    assert_eq!(deploy.input.as_ref().map(|i| i.bytes), Some(6));
    assert_eq!(
        store.find("ea5c").await.unwrap().unwrap().via,
        Some(Via::Cli)
    );
    assert_eq!(store.list_rules().await.unwrap().len(), 1);
    // And it takes new writes.
    let pending = store
        .insert_pending(new_request(1), Utc::now())
        .await
        .unwrap();
    let read = store.get(&pending.id).await.unwrap().unwrap();
    assert_eq!(
        (read.short_id, read.status),
        (pending.short_id, Status::Pending)
    );
    store.close().await;
    // Opened again, it is not migrated again.
    let again = Store::open(&path, Duration::from_secs(5)).await.unwrap();
    assert_eq!(again.list_rules().await.unwrap().len(), 1);
    again.close().await;
}
