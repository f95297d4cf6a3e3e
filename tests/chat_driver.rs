//! The chat driver (`transport::chat`) with a chat of the test's own: every chat service
//! (Telegram, Matrix, the next ones) gets the same post-to-edit life from it. A chat
//! that refuses, then is down, then lands the post; the message known at once to an
//! early answer, stored for a restart, edited with the outcome; an edit of a message
//! that is gone given up at once; a button pressed on one request's message naming
//! another changes nothing.

use execgate_testkit as common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{config_for, env_for};
use execgate::approvals::{Approvals, Submitted};
use execgate::config::ReactionMap;
use execgate::model::{AgentName, Command, Decision, Record, RequestSpec, Status, Via};
use execgate::policy::Policy;
use execgate::store::Store;
use execgate::transport::card::{Line, Offer};
use execgate::transport::chat::{self, Failure, Service, Trouble};
use execgate::transport::health::Health;
use execgate::transport::posted::Posted;

/// A chat that does what the test scripts: each post and edit takes the next scripted
/// failure, if any, and succeeds after them; everything it did is logged.
struct Fake {
    approvals: Arc<Approvals>,
    reactions: ReactionMap,
    health: Health,
    posted: Posted<u64>,
    next: AtomicU64,
    attempts: AtomicU64,
    posts: Mutex<VecDeque<Trouble>>,
    edits: Mutex<VecDeque<Trouble>>,
    log: Mutex<Vec<String>>,
    /// The chat's pacing as the test sets it: None, every message may go at once; else
    /// a message goes only with a slot the test hands out.
    slots: Option<tokio::sync::Semaphore>,
    /// How many requests a digest may show (0: none).
    digest_size: usize,
    /// How many lines one digest message has room for, whatever `digest_size` says.
    room: usize,
}

impl Fake {
    /// A digest's lines as `a1b2 pending, c3d4 approved (buttons: 2)`.
    fn shown(lines: &[Line]) -> String {
        let each: Vec<String> = lines
            .iter()
            .map(|l| format!("{} {}", l.record.short_id, l.record.status))
            .collect();
        let buttons = lines.iter().filter(|l| l.grants.is_some()).count();
        format!("{} (buttons: {buttons})", each.join(", "))
    }

    fn did(&self, what: String) {
        self.log.lock().unwrap().push(what);
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn scripted(&self, queue: &Mutex<VecDeque<Trouble>>, what: &'static str) -> Option<Failure> {
        let kind = queue.lock().unwrap().pop_front()?;
        self.did(format!("{what} failed: {kind:?}"));
        // The service asks for a short wait, as a 429's Retry-After does.
        Some(Failure {
            what,
            error: format!("{kind:?}"),
            told: Some(Duration::from_millis(20)),
            kind,
        })
    }
}

impl Service for Fake {
    type Message = u64;
    type Attempt = u64;
    const NAME: &'static str = "Fake";
    const HOLD_LIMIT: Duration = Duration::from_secs(5);

    fn approvals(&self) -> &Approvals {
        &self.approvals
    }
    fn reactions(&self) -> &ReactionMap {
        &self.reactions
    }
    fn health(&self) -> &Health {
        &self.health
    }
    fn posted(&self) -> &Posted<u64> {
        &self.posted
    }
    fn prefix(&self) -> String {
        "fake:".into()
    }
    fn name_of(&self, message: &u64) -> String {
        message.to_string()
    }
    fn message(&self, rest: &str) -> Option<u64> {
        rest.parse().ok()
    }
    fn attempt(&self) -> u64 {
        self.attempts.fetch_add(1, Ordering::Relaxed)
    }
    async fn ready(&self) {
        if let Some(slots) = &self.slots {
            slots.acquire().await.unwrap().forget();
        }
    }
    fn ready_now(&self) -> bool {
        match &self.slots {
            Some(slots) => slots.try_acquire().map(|p| p.forget()).is_ok(),
            None => true,
        }
    }
    fn digest_size(&self) -> usize {
        self.digest_size
    }
    fn digest_fits(&self, lines: &[Line]) -> bool {
        lines.len() <= self.room
    }
    async fn post_digest(&self, lines: &[Line], _: &u64) -> Result<u64, Failure> {
        let message = self.next.fetch_add(1, Ordering::Relaxed);
        self.did(format!("digest {message}: {}", Self::shown(lines)));
        Ok(message)
    }
    async fn edit_digest(&self, message: &u64, lines: &[Line], _: &u64) -> Result<(), Failure> {
        self.did(format!("edit digest {message}: {}", Self::shown(lines)));
        Ok(())
    }
    async fn post(
        &self,
        record: &Record,
        offer: &Offer<'_>,
        attempt: &u64,
    ) -> Result<u64, Failure> {
        if let Some(failure) = self.scripted(&self.posts, "post") {
            return Err(failure);
        }
        let message = self.next.fetch_add(1, Ordering::Relaxed);
        self.did(format!(
            "post {message} for {} (always offered: {}, attempt {attempt})",
            record.short_id,
            offer.grants.always_refused.is_none()
        ));
        Ok(message)
    }
    async fn reply(&self, to: &u64, text: &str, _: &u64) -> Result<(), Failure> {
        self.did(format!("reply to {to}: {text}"));
        Ok(())
    }
    async fn edit(&self, message: &u64, last: &Record, _: &u64) -> Result<(), Failure> {
        if let Some(failure) = self.scripted(&self.edits, "edit") {
            return Err(failure);
        }
        self.did(format!("edit {message}: {}", last.status));
        Ok(())
    }
}

/// Not a setting: how many lines the fake's digest message has room for.
const ROOM: &str = "FAKE_DIGEST_ROOM";

struct Bench {
    _dir: tempfile::TempDir,
    fake: Arc<Fake>,
    store: Store,
}

async fn bench(posts: Vec<Trouble>, edits: Vec<Trouble>) -> Bench {
    bench_paced(posts, edits, None, 0, &[]).await
}

async fn bench_paced(
    posts: Vec<Trouble>,
    edits: Vec<Trouble>,
    slots: Option<tokio::sync::Semaphore>,
    digest_size: usize,
    env: &[(&str, &str)],
) -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let settings: Vec<(&str, &str)> = env.iter().filter(|(k, _)| *k != ROOM).copied().collect();
    let config = config_for(&env_for(dir.path(), &settings));
    let reactions = ReactionMap::default();
    let store = Store::open(&dir.path().join("x.db"), Duration::from_secs(5))
        .await
        .unwrap();
    let policy = Arc::new(Policy::new(Arc::new(config)).unwrap());
    let approvals = Approvals::new(store.clone(), policy);
    let fake = Arc::new(Fake {
        approvals,
        reactions,
        health: Health::new("Fake", "the fake chat"),
        posted: Posted::new(),
        next: AtomicU64::new(1),
        attempts: AtomicU64::new(1),
        posts: Mutex::new(posts.into()),
        edits: Mutex::new(edits.into()),
        log: Mutex::new(Vec::new()),
        slots,
        digest_size,
        room: env
            .iter()
            .find(|(k, _)| *k == ROOM)
            .map_or(usize::MAX, |(_, v)| v.parse().unwrap()),
    });
    Bench {
        _dir: dir,
        fake,
        store,
    }
}

/// `make deploy`, put to a human.
async fn pending(approvals: &Arc<Approvals>) -> Record {
    asked(approvals, "make deploy").await
}

/// `command`, put to a human.
async fn asked(approvals: &Arc<Approvals>, command: &str) -> Record {
    let spec = RequestSpec {
        agent: AgentName::new("builder".into()).unwrap(),
        session: None,
        command: Command::Line(command.into()),
        cwd: None,
        reason: None,
        front: None,
        run: false,
        shell: None,
        input: None,
        peer_uid: Some(1000),
        peer_pid: None,
    };
    let settings = approvals.policy().settings();
    let Submitted::Ask(ask) = approvals.submit(spec, settings).await.unwrap() else {
        panic!("`{command}` must be put to a human");
    };
    approvals.register(ask).await.unwrap().record
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_then_down_chat_posts_once_then_edits_the_outcome() {
    let b = bench(
        vec![Trouble::Refused("add the bot".into()), Trouble::Outage],
        vec![Trouble::Outage],
    )
    .await;
    let record = pending(&b.fake.approvals).await;
    let done = b.fake.approvals.watch(&record.id).unwrap();
    let delivering = {
        let (fake, record) = (Arc::clone(&b.fake), record.clone());
        tokio::spawn(async move { chat::deliver(fake.as_ref(), record, done).await })
    };
    // Posted after the refusal and the outage: one message, known at once, then stored.
    let posted = common::eventually(|| async { b.fake.posted.get(&1).is_some() }).await;
    assert!(posted, "{:?}", b.fake.log());
    let stored = common::eventually(|| async {
        b.fake.approvals.messages(&record.id).await.unwrap() == vec!["fake:1".to_string()]
    })
    .await;
    assert!(stored, "the message is stored for a restart");
    // An answer from elsewhere (the CLI): the message is edited to say so, through an
    // outage, and forgotten by the chat.
    b.fake
        .approvals
        .resolve(&record.id, Decision::AllowOnce.into(), Via::Cli, "cli:0")
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), delivering)
        .await
        .expect("the delivery ends once its message is edited")
        .unwrap();
    let log = b.fake.log();
    let posts: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("post ") && !l.starts_with("post failed"))
        .collect();
    assert_eq!(posts.len(), 1, "posted once: {log:?}");
    assert!(posts[0].contains(&record.short_id), "{log:?}");
    assert_eq!(
        log.iter().filter(|l| l.starts_with("post failed")).count(),
        2,
        "{log:?}"
    );
    assert_eq!(
        log.last().unwrap(),
        &format!("edit 1: {}", Status::Approved),
        "{log:?}"
    );
    assert!(b.fake.posted.get(&1).is_none());
    b.fake.approvals.shutdown().await;
    b.store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_gone_is_left_and_a_button_for_another_request_changes_nothing() {
    let b = bench(vec![], vec![Trouble::Gone]).await;
    let first = pending(&b.fake.approvals).await;
    let second = pending(&b.fake.approvals).await;
    let done = b.fake.approvals.watch(&first.id).unwrap();
    let delivering = {
        let (fake, record) = (Arc::clone(&b.fake), first.clone());
        tokio::spawn(async move { chat::deliver(fake.as_ref(), record, done).await })
    };
    assert!(common::eventually(|| async { b.fake.posted.get(&1).is_some() }).await);
    // A button on the first request's message that names the second: refused, and
    // neither request changes.
    let said = chat::press(
        b.fake.as_ref(),
        &1,
        &second.id,
        Decision::AllowOnce,
        "owner",
        Via::TelegramButton,
    )
    .await;
    assert!(said.contains("does not belong"), "{said}");
    for id in [&first.id, &second.id] {
        let now = b.fake.approvals.record(id).await.unwrap().unwrap();
        assert_eq!(now.status, Status::Pending);
    }
    // The button for its own request answers it; the edit finds the message gone and
    // leaves it after one try.
    let said = chat::press(
        b.fake.as_ref(),
        &1,
        &first.id,
        Decision::Deny,
        "owner",
        Via::TelegramButton,
    )
    .await;
    assert!(!said.contains("does not belong"), "{said}");
    tokio::time::timeout(Duration::from_secs(10), delivering)
        .await
        .expect("the delivery gives up a message that is gone")
        .unwrap();
    let log = b.fake.log();
    assert_eq!(
        log.iter().filter(|l| l.starts_with("edit")).count(),
        1,
        "one try: {log:?}"
    );
    b.fake.approvals.shutdown().await;
    b.store.close().await;
}

/// Starts the delivery of `record` as the driver's run loop does.
fn deliver(fake: &Arc<Fake>, record: &Record) -> tokio::task::JoinHandle<()> {
    let done = fake.approvals.watch(&record.id).unwrap();
    let (fake, record) = (Arc::clone(fake), record.clone());
    tokio::spawn(async move { chat::deliver(fake.as_ref(), record, done).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_behind_the_pacing_is_one_digest_each_request_answered_alone() {
    // No slot free: everything waits for the pacing, and a long command waits alone.
    let b = bench_paced(vec![], vec![], Some(tokio::sync::Semaphore::new(0)), 8, &[]).await;
    let mut records = Vec::new();
    for i in 0..5 {
        records.push(asked(&b.fake.approvals, &format!("make job{i}")).await);
    }
    let long = asked(&b.fake.approvals, &format!("make {}", "x".repeat(400))).await;
    let mut deliveries: Vec<_> = records.iter().map(|r| deliver(&b.fake, r)).collect();
    deliveries.push(deliver(&b.fake, &long));
    // The five that fit a digest wait in line; the long one waits for a slot alone.
    assert!(common::eventually(|| async { b.fake.posted.waiting() == 5 }).await);
    assert!(b.fake.log().is_empty(), "nothing goes without a slot");

    // Two slots: the five that fit a digest go as one message, oldest first; the long one
    // alone.
    let slots = b.fake.slots.as_ref().unwrap();
    slots.add_permits(2);
    let short: Vec<&str> = records.iter().map(|r| r.short_id.as_str()).collect();
    let lines = format!(
        "{} (buttons: 5)",
        short
            .iter()
            .map(|s| format!("{s} pending"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let posted = || {
        let log = b.fake.log();
        let digest = log.iter().find_map(|l| {
            l.strip_prefix("digest ")?
                .strip_suffix(&format!(": {lines}"))
        })?;
        let alone = log.iter().find_map(|l| {
            let (message, rest) = l.strip_prefix("post ")?.split_once(' ')?;
            rest.starts_with(&format!("for {} ", long.short_id))
                .then_some(message)
        })?;
        Some((
            digest.parse::<u64>().unwrap(),
            alone.parse::<u64>().unwrap(),
        ))
    };
    assert!(
        common::eventually(|| async { posted().is_some() }).await,
        "{:?}",
        b.fake.log()
    );
    let (d, alone) = posted().unwrap();
    // From here on the pacing lets everything through (the edits wait for it too).
    slots.add_permits(1000);
    // Each request is stored with the digest, for a restart.
    for r in &records {
        let expected = vec![format!("fake:{d}#{}", r.id)];
        assert!(
            common::eventually(|| async {
                b.fake.approvals.messages(&r.id).await.unwrap() == expected
            })
            .await
        );
    }

    // A reaction cannot say which request it means; a reply must name one of them.
    chat::react(
        b.fake.as_ref(),
        &d,
        Decision::AllowOnce,
        "owner",
        Via::TelegramReaction,
    )
    .await;
    let shown = chat::request_at(b.fake.as_ref(), &d).await.unwrap();
    assert!(
        matches!(&shown, chat::Shown::Several(t) if t.len() == 5),
        "{shown:?}"
    );
    let heard = |replied| chat::Heard {
        by: "owner",
        via: Via::TelegramCommand,
        replied,
        replying: true,
    };
    chat::command(b.fake.as_ref(), &7, heard(Some(&d)), "/approve", None).await;
    chat::command(
        b.fake.as_ref(),
        &8,
        heard(Some(&d)),
        &format!("/deny {}", long.short_id),
        None,
    )
    .await;
    // A button names its request: one of the digest's answers it, the long one's id on
    // the digest changes nothing.
    let said = chat::press(
        b.fake.as_ref(),
        &d,
        &long.id,
        Decision::AllowOnce,
        "owner",
        Via::TelegramButton,
    )
    .await;
    assert!(said.contains("does not belong"), "{said}");
    let said = chat::press(
        b.fake.as_ref(),
        &d,
        &records[1].id,
        Decision::AllowOnce,
        "owner",
        Via::TelegramButton,
    )
    .await;
    assert!(said.contains("approved"), "{said}");
    let log = b.fake.log();
    assert!(
        log.iter().any(|l| l.starts_with(&format!(
            "reply to {d}: That message shows several requests"
        ))),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l.starts_with("reply to 7: That message shows several requests")),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l.contains("reply to 8: You replied to a message showing")),
        "{log:?}"
    );
    for r in [&records[0], &records[2], &long] {
        let now = b.fake.approvals.record(&r.id).await.unwrap().unwrap();
        assert_eq!(now.status, Status::Pending, "{}", r.short_id);
    }
    // The digest is redrawn as each ends: the answered one closed, its buttons gone.
    let redrawn = format!("{} approved", short[1]);
    let edited = format!("edit digest {d}:");
    assert!(
        common::eventually(|| async {
            b.fake.log().iter().any(|l| {
                l.starts_with(&edited) && l.contains(&redrawn) && l.ends_with("(buttons: 4)")
            })
        })
        .await,
        "{:?}",
        b.fake.log()
    );
    // The rest end otherwise (the CLI); the last redraw shows every one ended.
    for r in records.iter().chain([&long]) {
        let _ = b
            .fake
            .approvals
            .resolve(&r.id, Decision::Deny.into(), Via::Cli, "cli:0")
            .await;
    }
    for d in deliveries.drain(..) {
        tokio::time::timeout(Duration::from_secs(10), d)
            .await
            .unwrap()
            .unwrap();
    }
    let log = b.fake.log();
    let last = log.iter().rev().find(|l| l.starts_with(&edited)).unwrap();
    assert!(last.ends_with("(buttons: 0)"), "{log:?}");
    assert_eq!(last.matches(" denied").count(), 4, "{last}");
    assert!(log.contains(&format!("edit {alone}: denied")), "{log:?}");
    b.fake.approvals.shutdown().await;
    b.store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_ends_while_waiting_leaves_the_digest_and_one_left_goes_alone() {
    let b = bench_paced(vec![], vec![], Some(tokio::sync::Semaphore::new(0)), 8, &[]).await;
    let first = asked(&b.fake.approvals, "make one").await;
    let second = asked(&b.fake.approvals, "make two").await;
    let deliveries = [deliver(&b.fake, &first), deliver(&b.fake, &second)];
    assert!(common::eventually(|| async { b.fake.posted.waiting() == 2 }).await);
    b.fake
        .approvals
        .resolve(&first.id, Decision::Deny.into(), Via::Cli, "cli:0")
        .await
        .unwrap();
    b.fake.slots.as_ref().unwrap().add_permits(1);
    // Alone now: posted as a message of its own, not a digest of one.
    assert!(
        common::eventually(|| async {
            b.fake
                .log()
                .iter()
                .any(|l| l.starts_with("post ") && l.contains(&second.short_id))
        })
        .await,
        "{:?}",
        b.fake.log()
    );
    assert!(
        !b.fake.log().iter().any(|l| l.starts_with("digest")),
        "{:?}",
        b.fake.log()
    );
    b.fake.slots.as_ref().unwrap().add_permits(1000);
    b.fake.approvals.shutdown().await;
    for d in deliveries {
        tokio::time::timeout(Duration::from_secs(10), d)
            .await
            .unwrap()
            .unwrap();
    }
    b.store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_digests_off_each_request_waits_for_a_message_of_its_own() {
    let b = bench_paced(
        vec![],
        vec![],
        Some(tokio::sync::Semaphore::new(0)),
        8,
        &[("EXECGATE_APPROVAL__DIGESTS", "false")],
    )
    .await;
    let mut deliveries = Vec::new();
    for i in 0..3 {
        let r = asked(&b.fake.approvals, &format!("make job{i}")).await;
        deliveries.push(deliver(&b.fake, &r));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    b.fake.slots.as_ref().unwrap().add_permits(1);
    assert!(common::eventually(|| async { !b.fake.log().is_empty() }).await);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let log = b.fake.log();
    assert_eq!(log.len(), 1, "one slot, one message: {log:?}");
    assert!(log[0].starts_with("post "), "{log:?}");
    b.fake.slots.as_ref().unwrap().add_permits(1000);
    assert!(
        common::eventually(|| async {
            b.fake
                .log()
                .iter()
                .filter(|l| l.starts_with("post "))
                .count()
                == 3
        })
        .await
    );
    b.fake.approvals.shutdown().await;
    for d in deliveries {
        tokio::time::timeout(Duration::from_secs(10), d)
            .await
            .unwrap()
            .unwrap();
    }
    b.store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_digest_takes_what_its_message_has_room_for_and_the_rest_wait() {
    let b = bench_paced(
        vec![],
        vec![],
        Some(tokio::sync::Semaphore::new(0)),
        8,
        &[(ROOM, "2")],
    )
    .await;
    let mut records = Vec::new();
    let mut deliveries = Vec::new();
    for i in 0..5 {
        let r = asked(&b.fake.approvals, &format!("make job{i}")).await;
        deliveries.push(deliver(&b.fake, &r));
        records.push(r);
    }
    assert!(common::eventually(|| async { b.fake.posted.waiting() == 5 }).await);
    // One slot: the two oldest fit.
    b.fake.slots.as_ref().unwrap().add_permits(1);
    let first = format!(
        "digest 1: {} pending, {} pending (buttons: 2)",
        records[0].short_id, records[1].short_id
    );
    assert!(
        common::eventually(|| async { b.fake.log().contains(&first) }).await,
        "{:?}",
        b.fake.log()
    );
    // The rest wait for the next slots, never lost: two more, then one alone.
    b.fake.slots.as_ref().unwrap().add_permits(1000);
    assert!(
        common::eventually(|| async {
            let log = b.fake.log();
            records
                .iter()
                .all(|r| log.iter().any(|l| l.contains(&r.short_id)))
        })
        .await,
        "{:?}",
        b.fake.log()
    );
    assert!(
        b.fake
            .log()
            .iter()
            .all(|l| !l.starts_with("digest") || l.matches(" pending").count() <= 2),
        "{:?}",
        b.fake.log()
    );
    b.fake.approvals.shutdown().await;
    for d in deliveries {
        tokio::time::timeout(Duration::from_secs(10), d)
            .await
            .unwrap()
            .unwrap();
    }
    b.store.close().await;
}
