//! Three `execgate serve` processes on this machine, each with its own sockets, sharing
//! one real PostgreSQL database (`testkit::postgres`): a decision made on any node, the
//! chat leader's failover, silent nodes, the database going away and coming back, and
//! concurrent writes from every node.

use execgate_testkit as common;

use std::time::{Duration, Instant};

use common::fake_telegram::*;
use common::postgres::{self, PgServer};
use common::process::Process;
use common::*;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

const TOKEN: &str = "7000000001:AAtest-token-for-the-fake-bot-api";

/// One node: its own directory (sockets, lock, logs) and its process.
struct Node {
    dir: tempfile::TempDir,
    p: Process,
}

impl Node {
    async fn start(name: &str, database: &str, extra: &[(&str, &str)]) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let mut env = vec![
            ("EXECGATE_DATABASE", database),
            ("EXECGATE_NODE", name),
            // Quick enough for a test, as the configuration allows.
            ("EXECGATE_CLUSTER__HEARTBEAT_SECS", "1"),
            ("EXECGATE_CLUSTER__NODE_TIMEOUT_SECS", "3"),
            ("EXECGATE_CLUSTER__FAILOVER_SECS", "2"),
        ];
        env.extend_from_slice(extra);
        let p = Process::start(dir.path(), &env).await;
        Node { dir, p }
    }

    fn client(&self, admin: bool) -> execgate::client::Client {
        let config = config_for(&self.p.env);
        execgate::client::Client::new(match admin {
            true => config.admin_socket,
            false => config.socket,
        })
    }

    async fn ask(&self, command: &str) -> Value {
        self.p.ask_no_wait(command).await
    }

    /// Asks and waits for the answer, as an agent does.
    fn ask_waiting(&self, command: &str) -> tokio::task::JoinHandle<(StatusCode, Value)> {
        let client = self.client(false);
        let body = json!({"agent": "a", "command": command});
        tokio::spawn(async move {
            client
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
        })
    }

    async fn record(&self, id: &str) -> Value {
        let (status, body) = self
            .client(true)
            .call(Method::GET, &format!("/v1/requests/{id}"), None)
            .await
            .unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    async fn cli(&self, args: &[&str]) -> std::process::Output {
        run_cli(&self.p.env, args).await
    }
}

/// Waits (bounded: 20 s) until `check` gives a value.
async fn until<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..400 {
        if let Some(found) = check().await {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never: {what}");
}

/// Waits (bounded) until `node`'s view of request `id` has left `pending`.
async fn ended(node: &Node, id: &str) -> Value {
    for _ in 0..200 {
        let r = node.record(id).await;
        if r["status"] != "pending" {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("request {id} is still pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_on_one_node_is_answered_from_another_and_rules_reach_every_node() {
    let db = postgres::shared().create_database();
    let a = Node::start("node-a", &db, &[]).await;
    let b = Node::start("node-b", &db, &[]).await;
    let c = Node::start("node-c", &db, &[]).await;

    // A second daemon calling itself node-a is refused: it would take A's requests for
    // its own last run's.
    let dir = tempfile::tempdir().unwrap();
    let twin = env_for(
        dir.path(),
        &[("EXECGATE_DATABASE", &db), ("EXECGATE_NODE", "node-a")],
    );
    let out = tokio::time::timeout(Duration::from_secs(20), run_cli(&twin, &["serve"]))
        .await
        .expect("a twin stops at once");
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("node \"node-a\""), "{}", stderr(&out));

    // Asked on A, approved from B's CLI: A's waiting agent hears it.
    let waiting = a.ask_waiting("make deploy");
    until("the request is pending on A", || async {
        let out = a.cli(&["pending"]).await;
        stdout(&out).contains("make deploy").then_some(())
    })
    .await;
    let (_, listed) = b
        .client(true)
        .call(Method::GET, "/v1/requests?status=pending", None)
        .await
        .unwrap();
    let listed = listed.as_array().expect("a list").clone();
    assert_eq!(listed.len(), 1, "B sees A's pending request: {listed:?}");
    assert_eq!(listed[0]["node"], "node-a");
    let short = listed[0]["short_id"].as_str().unwrap().to_string();
    // A notification is a wake-up, never a decision: one forged by anyone who can reach
    // the database changes nothing.
    let id = listed[0]["id"].as_str().unwrap();
    postgres::shared().psql(
        &db,
        &format!("SELECT pg_notify('execgate', 'resolved node-z {id}'), pg_notify('execgate', 'rules node-z')"),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "a forged notification answers nobody"
    );
    assert_eq!(a.record(id).await["status"], "pending");
    let out = b.cli(&["approve", &short]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (status, record) = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("A's agent hears B's decision")
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{record}");
    assert_eq!(record["status"], "approved");
    assert_eq!(record["via"], "cli");

    // Answered twice, from two nodes: the second is refused, as on one daemon.
    let r = c.ask("make release").await;
    let id = r["id"].as_str().unwrap();
    let short = r["short_id"].as_str().unwrap();
    let first = a.cli(&["deny", short]).await;
    let second = b.cli(&["approve", short]).await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_ne!(second.status.code(), Some(0), "a second answer is refused");
    assert_eq!(ended(&c, id).await["status"], "denied");

    // A rule added on C is in force on A and B.
    let out = c.cli(&["allow", "add", "make lint"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for node in [&a, &b] {
        until("the rule is in force on every node", || async {
            let (status, r) = node
                .p
                .submit(&json!({"agent": "a", "command": "make lint", "wait": false}))
                .await;
            (status == StatusCode::OK && r["via"] == "allowlist").then_some(())
        })
        .await;
    }

    // One chain per node, each vouching for what that node wrote (A's request created
    // in A's chain, resolved in B's), and together for every row: intact, from any node.
    let out = c.cli(&["audit", "verify", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let nodes: Vec<&str> = report["chains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["node"].as_str().unwrap())
        .collect();
    assert_eq!(nodes, ["node-a", "node-b", "node-c"], "{report:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chats_fail_over_when_the_leader_is_killed_and_nothing_is_posted_twice() {
    let fake = FakeTelegram::start(TOKEN).await;
    let owner = User::owner();
    let chat = owner.id;
    let (owner_id, url) = (owner.id.to_string(), fake.url());
    let telegram = [
        ("EXECGATE_TELEGRAM__BOT_TOKEN", TOKEN),
        ("EXECGATE_TELEGRAM__OWNER_IDS", owner_id.as_str()),
        ("EXECGATE_TELEGRAM__API_URL", url.as_str()),
    ];
    let db = postgres::shared().create_database();
    // A starts first, so it takes the lock and runs the chats.
    let a = Node::start("node-a", &db, &telegram).await;
    let leading = fake.wait_for_call("getUpdates", 1).await;
    assert!(!leading.is_empty());
    let b = Node::start("node-b", &db, &telegram).await;
    let c = Node::start("node-c", &db, &telegram).await;

    // Asked on B, posted by A; and one of A's own, which dies with it.
    let before = b.ask("make one").await;
    let posted = fake
        .wait_for_message(chat, |text| text.contains("make one"))
        .await;
    let mine = a.ask("make mine").await;
    fake.wait_for_message(chat, |text| text.contains("make mine"))
        .await;
    // The database knows the message before the leader dies (a test is faster than a
    // human; the fake sees the post a moment before the daemon hears back).
    for r in [&before, &mine] {
        let sql = format!(
            "SELECT count(*) FROM exec_approval_message WHERE request_id = '{}'",
            r["id"].as_str().unwrap()
        );
        until("the messages are stored", || async {
            (postgres::shared().psql(&db, &sql).trim() == "1").then_some(())
        })
        .await;
    }

    a.p.signal(libc::SIGKILL);
    let killed = Instant::now();
    let after = c.ask("make two").await;
    fake.wait_for_message(chat, |text| text.contains("make two"))
        .await;
    let took = killed.elapsed();
    assert!(
        took < Duration::from_secs(2 + 5),
        "failover took {took:?}, beyond cluster.failover_secs"
    );

    // The owner answers the message posted before the failover: the new leader takes it.
    fake.reply_to(chat, &owner, posted.message_id, "/approve");
    let done = ended(&b, before["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "approved", "{done}");
    assert_eq!(done["via"], "telegram-command");

    // Nothing was posted twice.
    let messages = fake.messages(chat);
    for command in ["make one", "make mine", "make two"] {
        let n = messages
            .iter()
            .filter(|m| m.plain.contains(command) && m.reply_to.is_none())
            .count();
        assert_eq!(n, 1, "{command} posted {n} times: {messages:#?}");
    }
    // The killed node's request is cancelled once it has been silent long enough.
    let gone = ended(&c, mine["id"].as_str().unwrap()).await;
    assert_eq!(gone["status"], "cancelled", "{gone}");
    assert_eq!(gone["via"], "restart");
    let still = c.record(after["id"].as_str().unwrap()).await;
    assert_eq!(
        still["status"], "pending",
        "a live node's request is not touched"
    );
    // The leader's cancellation of a dead node's request is chained like any other.
    let out = c.cli(&["audit", "verify", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_going_away_fails_closed_and_its_return_recovers() {
    let server = PgServer::start();
    let db = server.create_database();
    let a = Node::start("node-a", &db, &[]).await;
    let out = a.cli(&["allow", "add", "make test"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let allowlisted = json!({"agent": "a", "command": "make test", "wait": false});
    let (status, _) = a.p.submit(&allowlisted).await;
    assert_eq!(status, StatusCode::OK);
    let waiting = a.ask_waiting("make deploy");
    let r = until("the request is pending", || async {
        let (_, list) = a
            .client(true)
            .call(Method::GET, "/v1/requests?status=pending", None)
            .await
            .unwrap();
        list.as_array()?.first().cloned()
    })
    .await;

    server.stop();
    // Nothing needing the store is approved; health still answers.
    let (status, body) = a.p.submit(&allowlisted).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let (status, _) = a
        .client(false)
        .call(Method::GET, "/v1/health", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let out = a.cli(&["approve", r["short_id"].as_str().unwrap()]).await;
    assert_ne!(
        out.status.code(),
        Some(0),
        "no answer lands without the database"
    );
    assert!(!waiting.is_finished(), "the waiting agent is not answered");

    server.start_again();
    until("the node recovers", || async {
        let (status, r) = a.p.submit(&allowlisted).await;
        (status == StatusCode::OK && r["status"] == "approved").then_some(())
    })
    .await;
    let out = a.cli(&["approve", r["short_id"].as_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (status, record) = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the agent hears the answer")
        .unwrap();
    assert_eq!(
        (status, record["status"].clone()),
        (StatusCode::OK, json!("approved"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_on_every_node_are_each_stored_once() {
    const EACH: usize = 64;
    let db = postgres::shared().create_database();
    let a = Node::start("node-a", &db, &[]).await;
    let b = Node::start("node-b", &db, &[]).await;
    let c = Node::start("node-c", &db, &[]).await;
    let out = a.cli(&["allow", "add", "make test"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for node in [&b, &c] {
        until("the rule reaches every node", || async {
            let (status, _) = node
                .p
                .submit(&json!({"agent": "a", "command": "make test", "wait": false}))
                .await;
            (status == StatusCode::OK).then_some(())
        })
        .await;
    }
    let count = |sql: &str| -> usize { postgres::shared().psql(&db, sql).trim().parse().unwrap() };
    let rows = "SELECT count(*) FROM exec_approval";
    let uses = "SELECT use_count FROM exec_allowlist WHERE pattern = 'make test'";
    // Each node writes its rule's use in sums, also whenever it lists the rules: the
    // probes above are counted before the count is taken.
    for node in [&a, &b, &c] {
        let out = node.cli(&["allow", "list"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let (rows_before, uses_before) = (count(rows), count(uses));

    let mut all = tokio::task::JoinSet::new();
    for node in [&a, &b, &c] {
        for _ in 0..EACH {
            let client = node.client(false);
            all.spawn(async move {
                let body = json!({"agent": "a", "command": "make test", "wait": false});
                client
                    .call(Method::POST, "/v1/requests", Some(&body))
                    .await
                    .unwrap()
            });
        }
    }
    let mut ids = std::collections::HashSet::new();
    while let Some(done) = all.join_next().await {
        let (status, r) = done.unwrap();
        assert_eq!(status, StatusCode::OK, "{r}");
        assert_eq!(r["via"], "allowlist");
        assert!(
            ids.insert(r["id"].as_str().unwrap().to_string()),
            "an id twice"
        );
    }
    assert_eq!(ids.len(), 3 * EACH);
    assert_eq!(
        count(rows) - rows_before,
        3 * EACH,
        "no row lost or doubled"
    );
    assert_eq!(
        count("SELECT count(DISTINCT node) FROM exec_approval WHERE via = 'allowlist'"),
        3
    );
    // And the burst's, a moment later.
    until("every use counted", || async {
        (count(uses) - uses_before >= 3 * EACH).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count(uses) - uses_before, 3 * EACH, "each use counted once");
}

/// Two nodes put 400 requests each to a human at once: every pending short id is held by
/// one request only, though each node draws its ids alone (the database's unique index
/// decides; with 800 ids from 65,536, a few draws collide and are drawn again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_ids_are_unique_among_pending_requests_of_every_node() {
    use execgate::config::PostgresUrl;
    use execgate::model::{AgentName, Command, RequestSpec, Risk};
    use execgate::store::{NewRequest, Store, postgres::Options};
    const EACH: usize = 400;
    let url = PostgresUrl::parse(&postgres::shared().create_database()).unwrap();
    let options = || Options {
        acquire_timeout: Duration::from_secs(10),
        max_connections: 8,
    };
    let a = Store::open_postgres(&url, "node-a", options())
        .await
        .unwrap();
    let b = Store::open_postgres(&url, "node-b", options())
        .await
        .unwrap();
    let mut all = tokio::task::JoinSet::new();
    for (node, store) in [("a", a.clone()), ("b", b.clone())] {
        for i in 0..EACH {
            let store = store.clone();
            all.spawn(async move {
                let new = NewRequest {
                    id: uuid::Uuid::now_v7().to_string(),
                    spec: RequestSpec {
                        agent: AgentName::new("a".into()).unwrap(),
                        session: None,
                        command: Command::Line(format!("make {node}{i}")),
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
                    created_at: chrono::Utc::now(),
                    grant: None,
                    confinement: None,
                };
                let expires = new.created_at + chrono::TimeDelta::hours(1);
                store.insert_pending(new, expires).await.unwrap()
            });
        }
    }
    let mut shorts = std::collections::HashSet::new();
    while let Some(record) = all.join_next().await {
        let record = record.unwrap();
        assert!(
            shorts.insert(record.short_id.clone()),
            "{} held twice",
            record.short_id
        );
    }
    assert_eq!(shorts.len(), 2 * EACH);
    let listed = a
        .list(&execgate::store::RequestFilter {
            status: Some(execgate::model::Status::Pending),
            agent: None,
            limit: u32::MAX,
            before: None,
        })
        .await
        .unwrap();
    assert_eq!(listed.len(), 2 * EACH);
    for node in ["node-a", "node-b"] {
        assert_eq!(listed.iter().filter(|r| r.node == node).count(), EACH);
    }
}

/// A hostile agent on node B's agent socket (its own uid): it can ask on B, but neither
/// answer a request that waits on A through B (B's admin socket is not its to open) nor
/// read the database's URL from B's environment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_on_one_node_cannot_answer_another_nodes_request_or_read_the_database_url() {
    if !common::uid::can_switch_uid("cluster hostile agent") {
        return;
    }
    let db = postgres::shared().create_database();
    let a = Node::start("node-a", &db, &[]).await;
    let b = Node::start("node-b", &db, &[]).await;
    let r = a.ask("make deploy").await;
    let id = r["id"].as_str().unwrap().to_string();
    let b_config = config_for(&b.p.env);
    common::uid::let_agent_in(b.dir.path(), &b_config.socket);
    let (socket, admin) = (b_config.socket.clone(), b_config.admin_socket.clone());
    let environ = format!("/proc/{}/environ", b.p.pid());
    let short = r["short_id"].as_str().unwrap().to_string();
    let (asked, answered, read) = common::uid::as_agent(move || async move {
        let body = json!({"agent": "a", "command": "make lint", "wait": false});
        let asked = execgate::client::Client::new(socket)
            .call(Method::POST, "/v1/requests", Some(&body))
            .await
            .map(|(status, _)| status);
        let answer = json!({"decision": "allow-always"});
        let answered = execgate::client::Client::new(admin)
            .call(
                Method::POST,
                &format!("/v1/requests/{short}/decision"),
                Some(&answer),
            )
            .await
            .map(|(status, _)| status);
        (asked.ok(), answered.ok(), std::fs::read(environ).is_ok())
    });
    assert_eq!(asked, Some(StatusCode::ACCEPTED), "the agent may ask on B");
    assert_ne!(
        answered,
        Some(StatusCode::OK),
        "B's admin socket took the agent's answer"
    );
    assert!(
        !read,
        "the agent read B's environment, the database URL with it"
    );
    assert_eq!(a.record(&id).await["status"], "pending");
    let rules = postgres::shared().psql(&db, "SELECT count(*) FROM exec_allowlist");
    assert_eq!(rules.trim(), "0", "no rule was saved");
}
