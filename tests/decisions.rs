//! The decision pipeline and approval lifecycle, driven over the sockets and the console.

use execgate_testkit as common;

use common::*;
use execgate::model::{Decision, Record, Risk, RuleKind, Status, Via};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowlisted_command_is_approved_via_allowlist_and_counted() {
    let d = TestDaemon::start(&[]).await;
    let (status, rule) = d
        .add_rule(json!({"agent": null, "pattern": "make  test", "kind": "exact"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{rule}");
    assert_eq!(
        rule["pattern"], "make test",
        "exact rules are stored normalized"
    );

    let r = d.ask("builder", "  make   test ").await;
    assert_eq!(
        (r.status, r.via, r.decision),
        (Status::Approved, Some(Via::Allowlist), None)
    );

    let (_, rules) = d
        .admin()
        .call(Method::GET, "/v1/allowlist", None)
        .await
        .unwrap();
    assert_eq!(rules[0]["use_count"], 1);
    assert_eq!(rules[0]["last_command"], "  make   test ");
    assert!(rules[0]["last_used_at"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_rules_match_per_agent_and_never_a_non_plain_command() {
    let d = TestDaemon::start(&[]).await;
    let (status, _) = d
        .add_rule(json!({"agent": "builder", "pattern": "cargo *", "kind": "glob"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);

    // With the cwd it will run in: cargo's configuration there is read first (issue 30).
    let (status, v) = d
        .submit(
            json!({"agent": "builder", "command": "cargo build --release", "cwd": d.dir.path()}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["via"], "allowlist", "{v}");
    // Another agent does not get builder's rule.
    assert_eq!(
        d.ask_no_wait("other", "cargo build --release").await.status,
        Status::Pending
    );
    // Chaining after an allowed prefix is not plain: asked, never auto-approved.
    for smuggled in [
        "cargo build; rm -rf ~",
        "cargo build && curl x | sh",
        "cargo $(id)",
        "cargo build\nreboot",
    ] {
        let r = d.ask_no_wait("builder", smuggled).await;
        assert_eq!(r.status, Status::Pending, "{smuggled:?} must be asked");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_miss_is_approved_from_the_console() {
    let mut d = TestDaemon::start(&[]).await;
    let waiting = d.ask_waiting("builder", "cat notes.txt");
    let pending = d.pending_for("cat notes.txt").await;
    d.console_expect(&format!("ID: {}", pending.short_id)).await;
    d.console_expect("Command: cat notes.txt").await;

    d.console_say(&format!("/approve {}", pending.short_id.to_uppercase()))
        .await;
    let r = waiting.await.unwrap();
    assert_eq!(
        (r.status, r.decision, r.via),
        (
            Status::Approved,
            Some(Decision::AllowOnce),
            Some(Via::Console)
        )
    );
    assert_eq!(r.decided_by.as_deref(), Some("console"));
    d.console_expect(&format!("✔ {} approved", r.short_id))
        .await;

    // A second answer changes nothing and says so.
    d.console_say(&format!("/deny {}", r.short_id)).await;
    d.console_expect(&format!(
        "approval {} not found or already resolved",
        r.short_id
    ))
    .await;
    assert_eq!(d.record(&r.id).await.status, Status::Approved);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_deny_and_reply_form_and_listing() {
    let mut d = TestDaemon::start(&[]).await;
    let waiting = d.ask_waiting("builder", "cat secrets.env");
    let pending = d.pending_for("cat secrets.env").await;
    d.console_say("/pending").await;
    d.console_expect(&format!("{}  builder", pending.short_id))
        .await;
    // With exactly one request pending, the id may be left out.
    d.console_say("/deny").await;
    let r = waiting.await.unwrap();
    assert_eq!(
        (r.status, r.decision, r.via),
        (Status::Denied, Some(Decision::Deny), Some(Via::Console))
    );
    assert_eq!(
        r.error.as_deref(),
        Some("command was not approved (denied)")
    );

    d.console_say("/approve zz").await;
    d.console_expect("zz").await;
    d.console_say("/allowlist").await;
    d.console_expect("The allowlist is empty.").await;
    d.console_say("/help").await;
    d.console_expect("/approve").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_stores_an_exact_rule_for_that_agent_only() {
    let d = TestDaemon::start(&[]).await;
    let waiting = d.ask_waiting("builder", "cat   Cargo.toml");
    let pending = d.pending_for("cat   Cargo.toml").await;
    let (status, body) = d.decide(&pending.short_id, "allow-always").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(waiting.await.unwrap().decision, Some(Decision::AllowAlways));

    let (_, rules) = d
        .admin()
        .call(Method::GET, "/v1/allowlist", None)
        .await
        .unwrap();
    let rules: Vec<execgate::model::Rule> = serde_json::from_value(rules).unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(
        (
            rules[0].agent.as_deref(),
            rules[0].kind,
            rules[0].pattern.as_str()
        ),
        (Some("builder"), RuleKind::Exact, "cat Cargo.toml")
    );

    // The identical request (blanks aside) is now approved without asking...
    assert_eq!(
        d.ask("builder", "cat Cargo.toml").await.via,
        Some(Via::Allowlist)
    );
    // ...a different one is still asked, and so is the same one from another agent.
    assert_eq!(
        d.ask_no_wait("builder", "cat Cargo.lock").await.status,
        Status::Pending
    );
    assert_eq!(
        d.ask_no_wait("other", "cat Cargo.toml").await.status,
        Status::Pending
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_never_widens_trust() {
    let d = TestDaemon::start(&[]).await;
    // Glob characters: not plain, so "always" is refused and the request stays pending.
    let globbed = d.ask_no_wait("builder", "ls *.txt").await;
    let (status, body) = d.decide(&globbed.short_id, "allow-always").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "ALWAYS_REFUSED");
    assert_eq!(d.record(&globbed.id).await.status, Status::Pending);
    assert_eq!(
        d.decide(&globbed.short_id, "allow-once").await.0,
        StatusCode::OK
    );
    assert_eq!(
        d.ask_no_wait("builder", "ls secret").await.status,
        Status::Pending
    );
    assert_eq!(
        d.ask_no_wait("builder", "ls *.txt").await.status,
        Status::Pending
    );

    // Dangerous commands, shells and inline interpreters are refused too.
    for cmd in [
        "X=1 rm -rf build",
        "LD_PRELOAD=/tmp/evil.so git status",
        "sudo -u root git status",
        "rm -rf build",
        "bash -c 'echo hi; make'",
        "python3 -c 'print(1)'",
        "env FOO=1 make",
        "sudo ls",
    ] {
        let r = d.ask_no_wait("builder", cmd).await;
        let (status, body) = d.decide(&r.short_id, "allow-always").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{cmd}: {body}");
        assert_eq!(d.decide(&r.short_id, "deny").await.0, StatusCode::OK);
    }
    let (_, rules) = d
        .admin()
        .call(Method::GET, "/v1/allowlist", None)
        .await
        .unwrap();
    assert_eq!(rules, json!([]), "no rule was stored");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unanswered_requests_expire() {
    let d = TestDaemon::start(&[("EXECGATE_APPROVAL__TIMEOUT_SECS", "1")]).await;
    let r = d.ask("builder", "cat Cargo.toml").await;
    assert_eq!(
        (r.status, r.via, r.decision),
        (Status::Expired, Some(Via::Timeout), None)
    );
    assert_eq!(
        r.error.as_deref(),
        Some("command was not approved (expired)")
    );
    let (status, _) = d.decide(&r.id, "allow-once").await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "an expired request cannot be approved afterwards"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_fallback_allowlist_approves_only_what_a_rule_matched() {
    let d = TestDaemon::start(&[
        ("EXECGATE_APPROVAL__TIMEOUT_SECS", "1"),
        ("EXECGATE_APPROVAL__ASK", "always"),
        ("EXECGATE_APPROVAL__ASK_FALLBACK", "allowlist"),
    ])
    .await;
    d.add_rule(json!({"pattern": "make test"})).await;
    let matched = d.ask("builder", "make test").await;
    assert_eq!(
        (matched.status, matched.via),
        (Status::Approved, Some(Via::Timeout)),
        "ask=always asked, fallback approved"
    );
    let missed = d.ask("builder", "make deploy").await;
    assert_eq!(
        (missed.status, missed.via),
        (Status::Expired, Some(Via::Timeout))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_fallback_full_approves_on_timeout() {
    let d = TestDaemon::start(&[
        ("EXECGATE_APPROVAL__TIMEOUT_SECS", "1"),
        ("EXECGATE_APPROVAL__ASK_FALLBACK", "full"),
    ])
    .await;
    let r = d.ask("builder", "make deploy").await;
    assert_eq!(
        (r.status, r.via, r.decision),
        (Status::Approved, Some(Via::Timeout), None)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_off_denies_what_no_rule_approves() {
    let d = TestDaemon::start(&[("EXECGATE_APPROVAL__ASK", "off")]).await;
    let r = d.ask("builder", "make deploy").await;
    assert_eq!((r.status, r.via), (Status::Denied, Some(Via::Policy)));
    assert!(
        r.error
            .unwrap()
            .starts_with("command was not approved (denied)")
    );
    assert_eq!(
        d.ask("builder", "ls -la").await.status,
        Status::Approved,
        "safe binaries still pass"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn security_modes_per_agent() {
    let d = TestDaemon::start(&[
        ("EXECGATE_AGENTS__LOCKED__SECURITY", "deny"),
        ("EXECGATE_AGENTS__TRUSTED__SECURITY", "full"),
    ])
    .await;
    let locked = d.ask("locked", "ls").await;
    assert_eq!(
        (locked.status, locked.via),
        (Status::Denied, Some(Via::Policy)),
        "deny mode denies even safe commands"
    );
    let trusted = d.ask("trusted", "make deploy && rm -rf build").await;
    assert_eq!(
        (trusted.status, trusted.via),
        (Status::Approved, Some(Via::Policy))
    );
    assert_eq!(trusted.risk, Risk::Dangerous, "risk is still reported");
    assert_eq!(
        d.ask_no_wait("someone", "make deploy").await.status,
        Status::Pending
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_list_beats_allowlist_and_full() {
    let d = TestDaemon::start(&[
        ("EXECGATE_POLICY__DENY", "rm -rf *,*shutdown*"),
        ("EXECGATE_AGENTS__TRUSTED__SECURITY", "full"),
    ])
    .await;
    d.add_rule(json!({"pattern": "rm -rf build", "kind": "exact"}))
        .await;
    for (agent, cmd) in [
        ("builder", "rm -rf build"),
        ("trusted", "rm -rf build"),
        ("trusted", "RM -RF /"),
        ("trusted", "make && /bin/rm -rf /"),
        ("trusted", "echo hi; sudo shutdown now"),
        ("trusted", "sudo rm -rf /x"),
        ("trusted", "sudo -u root rm -rf /x"),
        ("trusted", "FOO=1 rm -rf /x"),
        ("trusted", "time rm -rf /x"),
        ("trusted", "env -i nice -n 5 rm -rf /x"),
        ("trusted", "bash -lc 'cd / && rm -rf x'"),
        ("trusted", "'rm' -rf /x"),
    ] {
        let r = d.ask(agent, cmd).await;
        assert_eq!(
            (r.status, r.via),
            (Status::Denied, Some(Via::Policy)),
            "{agent}: {cmd}"
        );
        assert!(r.error.unwrap().contains("deny list"));
    }
    let (_, body) = d
        .submit(json!({"agent": "trusted", "argv": ["sh", "-c", "rm -rf /"]}))
        .await;
    assert_eq!(body["status"], "denied", "argv through a shell: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_binaries_refuse_other_programs_in_every_segment() {
    let d = TestDaemon::start(&[
        ("EXECGATE_POLICY__ALLOWED_BINARIES", "ls,cat"),
        ("EXECGATE_AGENTS__TRUSTED__SECURITY", "full"),
    ])
    .await;
    assert_eq!(d.ask("trusted", "ls").await.status, Status::Approved);
    for cmd in ["pwd", "ls; pwd", "cat x | sh", "ls $(reboot)"] {
        let r = d.ask("trusted", cmd).await;
        assert_eq!(r.status, Status::Denied, "{cmd}");
        assert!(r.error.unwrap().contains("allowed_binaries"), "{cmd}");
    }
    let (_, body) = d
        .submit(json!({"agent": "trusted", "argv": ["python3", "-V"]}))
        .await;
    assert_eq!(body["status"], "denied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argv_requests_are_matched_on_their_quoted_join() {
    let d = TestDaemon::start(&[]).await;
    d.add_rule(json!({"pattern": "grep -r 'fn main' src"}))
        .await;
    let (status, body) = d
        .submit(json!({"agent": "a", "argv": ["grep", "-r", "fn main", "src"]}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let r: Record = serde_json::from_value(body).unwrap();
    assert_eq!((r.status, r.via), (Status::Approved, Some(Via::Allowlist)));
    assert_eq!(
        r.command.argv(),
        Some(
            &[
                "grep".to_string(),
                "-r".into(),
                "fn main".into(),
                "src".into()
            ][..]
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_socket_reaches_no_admin_endpoint() {
    let d = TestDaemon::start(&[]).await;
    let r = d.ask_no_wait("builder", "make deploy").await;
    let agent = d.agent();
    let attempts = [
        (
            Method::POST,
            format!("/v1/requests/{}/decision", r.id),
            Some(json!({"decision": "allow-once"})),
        ),
        (
            Method::POST,
            format!("/v1/requests/{}/decision", r.short_id),
            Some(json!({"decision": "allow-always"})),
        ),
        (Method::GET, "/v1/allowlist".to_string(), None),
        (
            Method::POST,
            "/v1/allowlist".to_string(),
            Some(json!({"pattern": "*", "kind": "glob", "force": true})),
        ),
        (Method::DELETE, "/v1/allowlist/1".to_string(), None),
        (Method::GET, "/v1/requests?status=pending".to_string(), None),
        (
            Method::PUT,
            format!("/v1/requests/{}", r.id),
            Some(json!({"status": "approved"})),
        ),
    ];
    for (method, path, body) in attempts {
        let (status, reply) = agent
            .call(method.clone(), &path, body.as_ref())
            .await
            .unwrap();
        assert!(
            status.is_client_error(),
            "{method} {path} answered {status}"
        );
        assert!(reply["error"]["code"].is_string(), "{reply}");
    }
    assert_eq!(d.record(&r.id).await.status, Status::Pending);
    let (_, rules) = d
        .admin()
        .call(Method::GET, "/v1/allowlist", None)
        .await
        .unwrap();
    assert_eq!(rules, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_names_bound_to_uids() {
    let me = uid().to_string();
    let other = (uid() + 4242).to_string();
    let d = TestDaemon::start(&[
        ("EXECGATE_AGENTS__MINE__UIDS", me.as_str()),
        ("EXECGATE_AGENTS__THEIRS__UIDS", other.as_str()),
    ])
    .await;
    assert_eq!(
        d.submit(json!({"agent": "mine", "command": "ls"})).await.0,
        StatusCode::OK
    );
    let (status, body) = d.submit(json!({"agent": "theirs", "command": "ls"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "FORBIDDEN");
    let (_, list) = d
        .admin()
        .call(Method::GET, "/v1/requests?agent=theirs", None)
        .await
        .unwrap();
    assert_eq!(
        list,
        json!([]),
        "a refused identity leaves no approvable row"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_record_the_peer() {
    let d = TestDaemon::start(&[]).await;
    let r = d.ask("builder", "ls").await;
    assert_eq!(r.peer_uid, Some(uid()));
    assert_eq!(r.peer_pid, Some(std::process::id() as i32));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_that_goes_away_cancels_its_request() {
    let d = TestDaemon::start(&[]).await;
    let body = json!({"agent": "builder", "command": "make deploy"});
    let stream = send_and_hold(&d.config().socket, &body).await;
    let pending = d.pending_for("make deploy").await;
    drop(stream);
    let r = d.terminal(&pending.id).await;
    assert_eq!(
        (r.status, r.via),
        (Status::Cancelled, Some(Via::Disconnect))
    );
    assert_eq!(
        r.error.as_deref(),
        Some("command was not approved (cancelled)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_answers_exactly_one_wins() {
    let d = TestDaemon::start(&[]).await;
    let r = d.ask_no_wait("builder", "make deploy").await;
    let mut tasks = Vec::new();
    for i in 0..50 {
        let admin = d.admin();
        let id = if i % 2 == 0 {
            r.short_id.clone()
        } else {
            r.id.clone()
        };
        let decision = if i % 3 == 0 { "deny" } else { "allow-once" };
        tasks.push(tokio::spawn(async move {
            admin
                .call(
                    Method::POST,
                    &format!("/v1/requests/{id}/decision"),
                    Some(&json!({"decision": decision})),
                )
                .await
                .unwrap()
        }));
    }
    let mut ok = Vec::new();
    let mut conflicts = 0;
    for t in tasks {
        let (status, body) = t.await.unwrap();
        match status {
            StatusCode::OK => ok.push(body),
            StatusCode::CONFLICT => conflicts += 1,
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!((ok.len(), conflicts), (1, 49));
    let stored = d.record(&r.id).await;
    assert_eq!(
        stored.status.as_str(),
        ok[0]["status"].as_str().unwrap(),
        "the winner's answer is what is stored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_returns_when_resolved_and_agents_see_only_their_own() {
    let d = TestDaemon::start(&[]).await;
    let r = d.ask_no_wait("builder", "make deploy").await;
    let agent = d.agent();
    let path = format!("/v1/requests/{}?wait_secs=30", r.id);
    let poll = tokio::spawn(async move { agent.call(Method::GET, &path, None).await.unwrap() });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    d.decide(&r.short_id, "deny").await;
    let (status, body) = poll.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "denied");

    // A row sent from another uid is invisible on the agent socket.
    d.execute_sql(&format!(
        "UPDATE exec_approval SET peer_uid = peer_uid + 1 WHERE id = '{}'",
        r.id
    ));
    let (status, _) = d
        .agent()
        .call(Method::GET, &format!("/v1/requests/{}", r.id), None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_cancels_pending_requests_and_answers_their_waiters() {
    let mut d = TestDaemon::start(&[]).await;
    let waiting = d.ask_waiting("builder", "make deploy");
    let pending = d.pending_for("make deploy").await;
    d.stop().await;
    let r = waiting.await.unwrap();
    assert_eq!(
        (r.id.as_str(), r.status, r.via),
        (pending.id.as_str(), Status::Cancelled, Some(Via::Shutdown))
    );
    assert!(
        !d.dir.path().join("run/agent.sock").exists(),
        "socket files are removed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let d = TestDaemon::start(&[]).await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&d.dir.path().join("run")), 0o700);
    assert_eq!(mode(&d.config().socket), 0o660);
    assert_eq!(mode(&d.config().admin_socket), 0o600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_socket_refuses_uids_not_listed() {
    let other = (uid() + 4242).to_string();
    let d = TestDaemon::start(&[("EXECGATE_ADMIN_UIDS", other.as_str())]).await;
    let r = d.ask_no_wait("builder", "make deploy").await;
    let (status, body) = d.decide(&r.id, "allow-once").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _) = d
        .admin()
        .call(Method::GET, "/v1/allowlist", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_globs_that_allow_everything_need_force() {
    let d = TestDaemon::start(&[]).await;
    for pattern in ["*", "* *", "bash *", "sh -c *", "python3 *", "env *"] {
        let (status, body) = d
            .add_rule(json!({"pattern": pattern, "kind": "glob"}))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{pattern}");
        assert_eq!(body["error"]["code"], "TOO_BROAD", "{pattern}");
    }
    let (status, _) = d
        .add_rule(json!({"pattern": "*", "kind": "glob", "force": true}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // Even a forced `*` never approves a command that is not plain or is dangerous.
    assert_eq!(d.ask("a", "make deploy").await.via, Some(Via::Allowlist));
    assert_eq!(
        d.ask_no_wait("a", "make; reboot").await.status,
        Status::Pending
    );
    assert_eq!(
        d.ask_no_wait("a", "rm -rf build").await.status,
        Status::Pending
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_and_removed_rules_stop_approving() {
    let d = TestDaemon::start(&[]).await;
    let soon = (chrono::Utc::now() + chrono::TimeDelta::milliseconds(300)).to_rfc3339();
    d.add_rule(json!({"pattern": "make a", "expires_at": soon}))
        .await;
    let (_, rule) = d.add_rule(json!({"pattern": "make b"})).await;
    assert_eq!(d.ask("x", "make a").await.via, Some(Via::Allowlist));
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    assert_eq!(d.ask_no_wait("x", "make a").await.status, Status::Pending);

    assert_eq!(d.ask("x", "make b").await.via, Some(Via::Allowlist));
    let (status, _) = d
        .admin()
        .call(
            Method::DELETE,
            &format!("/v1/allowlist/{}", rule["id"]),
            None,
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(d.ask_no_wait("x", "make b").await.status, Status::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_console_leaves_the_daemon_serving() {
    let mut d = TestDaemon::start(&[]).await;
    d.close_console_input();
    let waiting = d.ask_waiting("builder", "make deploy");
    let pending = d.pending_for("make deploy").await;
    let out = d.cli(&["approve", &pending.short_id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(waiting.await.unwrap().via, Some(Via::Cli));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_is_private() {
    use std::os::unix::fs::PermissionsExt;
    if !on_sqlite_file("the_database_is_private") {
        return;
    }
    let d = TestDaemon::start(&[]).await;
    let mode = std::fs::metadata(db_path(d.dir.path()))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_that_leaves_while_the_row_is_written_still_cancels_it() {
    if !on_sqlite_file("a_waiter_that_leaves_while_the_row_is_written_still_cancels_it") {
        return;
    }
    let d = TestDaemon::start(&[]).await;
    // Hold SQLite's write lock so the request stalls before its row exists.
    let blocker = d.hold_write_lock().await;

    let body = json!({"agent": "builder", "command": "make deploy"});
    let stream = send_and_hold(&d.config().socket, &body).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    drop(stream);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    blocker.execute_batch("ROLLBACK").unwrap();

    // The row appears, already cancelled or about to be, long before its 120 s timeout.
    for _ in 0..500 {
        let (_, list) = d
            .admin()
            .call(Method::GET, "/v1/requests?agent=builder", None)
            .await
            .unwrap();
        let list: Vec<Record> = serde_json::from_value(list).unwrap();
        if let Some(r) = list.first().filter(|r| r.status != Status::Pending) {
            assert_eq!(
                (r.status, r.via),
                (Status::Cancelled, Some(Via::Disconnect))
            );
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the abandoned request was not cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_record_an_agent_gets_is_the_row_as_stored() {
    let d = TestDaemon::start(&[("EXECGATE_POLICY__DENY", "reboot*")]).await;
    let approved = d.ask("builder", "ls -la").await;
    let denied = d.ask("builder", "reboot now").await;
    let pending = d.ask_no_wait("builder", "make deploy").await;
    let (_, resolved) = d.decide(&pending.short_id, "deny").await;
    let resolved: Record = serde_json::from_value(resolved).unwrap();
    for r in [approved, denied, pending, resolved] {
        let stored = d.record(&r.id).await;
        if r.status == Status::Pending {
            // The 202 record, before the decision: everything but the outcome matches.
            let outcome = Record {
                status: stored.status,
                decision: stored.decision,
                via: stored.via,
                decided_by: stored.decided_by.clone(),
                resolved_at: stored.resolved_at,
                error: stored.error.clone(),
                ..r
            };
            assert_eq!(outcome, stored);
            continue;
        }
        assert_eq!(r, stored, "returned and stored records differ");
    }
}

/// An asker that names its call (`call_id`) may withdraw it while it waits for the
/// owner: the request ends `cancelled` `via: withdrawn`, its waiter is answered so, and
/// the owner can no longer approve it. Only a pending request of the asker's own uid
/// can be withdrawn; anything else is 404, and a malformed body 400 (issue 31, 8).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asker_withdraws_the_call_it_named() {
    let d = TestDaemon::start(&[]).await;
    let waiting =
        d.submit_waiting(json!({"agent": "a", "command": "touch withdrawn", "call_id": "call-1"}));
    let pending = d.pending_for("touch withdrawn").await;
    let withdraw = |call_id: Value| {
        let client = d.agent();
        async move {
            client
                .call(
                    Method::POST,
                    "/v1/requests/withdraw",
                    Some(&json!({ "call_id": call_id })),
                )
                .await
                .unwrap()
        }
    };
    let (status, body) = withdraw(json!("another-call")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"]["code"], "NOT_FOUND", "{body}");
    let (status, body) = withdraw(json!("call-1")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let r: Record = serde_json::from_value(body).unwrap();
    assert_eq!(
        (r.id.as_str(), r.status, r.via),
        (pending.id.as_str(), Status::Cancelled, Some(Via::Withdrawn))
    );
    assert_eq!(r.decision, None);
    // The waiter hears it, and the owner's approval comes too late.
    let (status, body) = waiting.await.unwrap();
    assert_eq!(
        (status, &body["status"], &body["via"]),
        (StatusCode::OK, &json!("cancelled"), &json!("withdrawn")),
        "{body}"
    );
    let (status, _) = d.decide(&pending.id, "allow-once").await;
    assert_eq!(status, StatusCode::CONFLICT);
    // Once ended, there is nothing left to withdraw.
    let (status, body) = withdraw(json!("call-1")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // A call the owner already decided cannot be withdrawn either.
    let waiting =
        d.submit_waiting(json!({"agent": "a", "command": "touch decided", "call_id": "call-2"}));
    let decided = d.pending_for("touch decided").await;
    d.decide(&decided.id, "deny").await;
    assert_eq!(waiting.await.unwrap().1["status"], "denied");
    assert_eq!(withdraw(json!("call-2")).await.0, StatusCode::NOT_FOUND);
    // Malformed: a missing, empty, oversized or non-string call_id, or another field.
    for bad in [
        json!({}),
        json!({"call_id": ""}),
        json!({"call_id": "x".repeat(129)}),
        json!({"call_id": 7}),
        json!({"call_id": "a", "id": "b"}),
    ] {
        let (status, body) = d
            .agent()
            .call(Method::POST, "/v1/requests/withdraw", Some(&bad))
            .await
            .unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    // And a call_id on the request itself is checked alike.
    let (status, body) = d
        .submit(json!({"agent": "a", "command": "ls", "call_id": "bad id\n"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("call_id"),
        "{body}"
    );
}
