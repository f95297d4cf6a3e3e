//! SIGHUP: the configuration and the allowlist are re-read without dropping a connection
//! or a pending request; an invalid new configuration is refused and the old one stays.

use execgate_testkit as common;

use std::time::Duration;

use common::process::Process;
use common::*;
use execgate::config::{Config, Overrides};
use execgate::model::{Record, Status};
use hyper::{Method, StatusCode};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_changes_policy_and_keeps_what_is_pending() {
    let d = TestDaemon::start(&[]).await;
    let waiting = d.ask_waiting("a", "make deploy");
    let pending = d.pending_for("make deploy").await;

    let mut env = d.env.clone();
    env.push(("EXECGATE_POLICY__DENY".into(), "make clean*".into()));
    env.push(("EXECGATE_APPROVAL__TIMEOUT_SECS".into(), "300".into()));
    // Only a restart can move the sockets: this part is ignored, with a warning.
    env.push(("EXECGATE_EXEC__MAX_CONCURRENT".into(), "3".into()));
    let daemon = d.daemon.as_ref().unwrap();
    daemon
        .reload(Config::load_from(&Overrides::default(), &env))
        .await;

    let r = d.ask("a", "make clean all").await;
    assert_eq!(r.status, Status::Denied, "the new deny list is in force");
    let later = d.ask_no_wait("a", "make later").await;
    let ttl = later.expires_at.unwrap() - later.created_at;
    assert_eq!(
        ttl.num_seconds(),
        300,
        "the new timeout applies to new requests"
    );

    // The request pending across the reload, and its waiting agent, are untouched.
    assert_eq!(d.record(&pending.id).await.status, Status::Pending);
    d.decide(&pending.id, "allow-once").await;
    assert_eq!(waiting.await.unwrap().status, Status::Approved);

    // An invalid configuration is refused; the running one stays.
    let mut bad = env.clone();
    bad.push(("EXECGATE_APPROVAL__ASK".into(), "sometimes".into()));
    daemon
        .reload(Config::load_from(&Overrides::default(), &bad))
        .await;
    assert_eq!(d.ask("a", "make clean x").await.status, Status::Denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_rereads_the_config_file_and_the_allowlist() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("execgate.toml");
    std::fs::write(&file, "[approval]\ntimeout_secs = 60\n").unwrap();
    let file_s = file.display().to_string();
    let daemon = Process::start(dir.path(), &[("EXECGATE_CONFIG", &file_s)]).await;
    let env = daemon.env.clone();
    let agent = execgate::client::Client::new(config_for(&env).socket);
    let ask = |command: &'static str| {
        let agent = agent.clone();
        async move {
            let body = json!({"agent": "a", "command": command, "wait": false});
            let (_, v) = agent
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap();
            serde_json::from_value::<Record>(v).unwrap()
        }
    };
    let before = ask("make deploy").await;
    assert_eq!(before.status, Status::Pending);
    // An agent waiting on a held connection across the reload.
    let held = tokio::spawn({
        let agent = agent.clone();
        async move {
            let body = json!({"agent": "a", "command": "make held"});
            agent
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap()
        }
    });
    let held_record = wait_pending_for(&env, "make held").await;

    std::fs::write(
        &file,
        "[approval]\ntimeout_secs = 60\n[policy]\ndeny = [\"make deploy*\"]\n",
    )
    .unwrap();
    // A rule added behind the daemon's back, straight into the database, is picked up.
    {
        let conn = db::open(&db_path(dir.path()));
        conn.execute(
            "INSERT INTO exec_allowlist (agent_id, pattern, kind, created_at, created_by, use_count) \
             VALUES (NULL, 'make lint', 'exact', '2026-01-01T00:00:00.000Z', 'test', 0)",
            [],
        )
        .unwrap();
    }
    daemon.signal(libc::SIGHUP);
    let mut reloaded = false;
    for _ in 0..500 {
        if ask("make deploy again").await.status == Status::Denied {
            reloaded = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(reloaded, "the new deny list is in force after SIGHUP");
    assert_eq!(ask("make lint").await.status, Status::Approved);

    // A broken file: refused, the daemon keeps running with what it had.
    std::fs::write(&file, "[approval]\ntimeot_secs = 1\n").unwrap();
    daemon.signal(libc::SIGHUP);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(ask("make deploy twice").await.status, Status::Denied);
    // (The CLI reads the same file: fix it before using the CLI.)
    std::fs::write(
        &file,
        "[approval]\ntimeout_secs = 60\n[policy]\ndeny = [\"make deploy*\"]\n",
    )
    .unwrap();

    // Nothing pending was lost, and the held connection is answered.
    let out = run_cli(&env, &["approve", &held_record.short_id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (status, v) = held.await.unwrap();
    assert_eq!(
        (status, v["status"].as_str()),
        (StatusCode::OK, Some("approved"))
    );
    let out = run_cli(&env, &["approve", &before.short_id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
    assert!(log.contains("reload refused"), "{log}");
    assert!(log.contains("timeot_secs"), "{log}");
}

async fn wait_pending_for(env: &[(String, String)], command: &str) -> Record {
    for _ in 0..500 {
        let out = run_cli(env, &["pending", "--json"]).await;
        let list: Vec<Record> = serde_json::from_str(&stdout(&out)).unwrap_or_default();
        if let Some(r) = list.into_iter().find(|r| r.command.display() == command) {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{command} never pending");
}

/// A request is judged, asked and timed by the configuration in force when it arrived:
/// a reload between its verdict and its registration does not give it the new timeout
/// (the settings travel with it, `policy::Settings`).
#[tokio::test]
async fn a_reload_mid_request_does_not_mix_two_configurations() {
    use std::sync::Arc;

    use execgate::approvals::{Approvals, Submitted};
    use execgate::model::{AgentName, Command, RequestSpec};
    use execgate::policy::Policy;
    use execgate::store::Store;

    let dir = tempfile::tempdir().unwrap();
    let old = config_for(&env_for(
        dir.path(),
        &[("EXECGATE_APPROVAL__TIMEOUT_SECS", "600")],
    ));
    let new = config_for(&env_for(
        dir.path(),
        &[("EXECGATE_APPROVAL__TIMEOUT_SECS", "1")],
    ));
    let store = Store::open(&dir.path().join("x.db"), Duration::from_secs(5))
        .await
        .unwrap();
    let policy = Arc::new(Policy::new(Arc::new(old)).unwrap());
    let approvals = Approvals::new(store.clone(), Arc::clone(&policy));
    let spec = RequestSpec {
        agent: AgentName::new("builder".into()).unwrap(),
        session: None,
        command: Command::Line("make deploy".into()),
        cwd: None,
        reason: None,
        front: None,
        run: false,
        shell: None,
        input: None,
        peer_uid: Some(1000),
        peer_pid: None,
    };
    let submitted = approvals.submit(spec, policy.settings()).await.unwrap();
    let Submitted::Ask(ask) = submitted else {
        panic!("`make deploy` must be put to a human");
    };
    // The reload lands between the verdict and the registration.
    policy.reconfigure(Arc::new(new), None).unwrap();
    let registered = approvals.register(ask).await.unwrap();
    let record = registered.record;
    assert_eq!(
        record.expires_at.unwrap() - record.created_at,
        chrono::TimeDelta::seconds(600),
        "the request keeps the timeout it arrived under"
    );
    approvals.shutdown().await;
    store.close().await;
}
