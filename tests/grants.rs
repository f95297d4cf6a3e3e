//! Grants: "this session" rules, time-boxed rules, where they are refused, the order
//! rules are looked up in, and `approval.remember = "memory"`; through the admin API,
//! the CLI and the console (the chats' paths are in telegram.rs and matrix.rs).

use execgate_testkit as common;

use common::*;
use execgate::model::{Decision, Record, Rule, Status, Via};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

const LONG: (&str, &str) = ("EXECGATE_APPROVAL__TIMEOUT_SECS", "300");

/// Submits `command` for `agent` in `session` without waiting: a pending record, or
/// whatever policy decided at once.
async fn ask_in(d: &TestDaemon, agent: &str, session: Option<&str>, command: &str) -> Record {
    let (status, body) = d
        .submit(json!({"agent": agent, "session": session, "command": command, "wait": false}))
        .await;
    assert!(
        status == StatusCode::OK || status == StatusCode::ACCEPTED,
        "{status}: {body}"
    );
    serde_json::from_value(body).unwrap()
}

async fn grant(d: &TestDaemon, id: &str, body: Value) -> (StatusCode, Value) {
    d.admin()
        .call(
            Method::POST,
            &format!("/v1/requests/{id}/decision"),
            Some(&body),
        )
        .await
        .unwrap()
}

async fn rules(d: &TestDaemon) -> Vec<Rule> {
    let (status, body) = d
        .admin()
        .call(Method::GET, "/v1/allowlist", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    serde_json::from_value(body).unwrap()
}

fn allowlisted(r: &Record) -> bool {
    (r.status, r.via) == (Status::Approved, Some(Via::Allowlist))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_rule_approves_the_same_command_in_that_session_only() {
    let d = TestDaemon::start(&[LONG]).await;
    let first = ask_in(&d, "claude", Some("s-1"), "make deploy").await;
    assert_eq!(first.status, Status::Pending);
    let (status, body) = grant(&d, &first.short_id, json!({"decision": "allow-session"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let done: Record = serde_json::from_value(body).unwrap();
    assert_eq!(
        (done.status, done.decision, done.via, done.rule_expires_at),
        (
            Status::Approved,
            Some(Decision::AllowSession),
            Some(Via::Cli),
            None
        )
    );

    let rule = &rules(&d).await[0];
    assert_eq!(
        (
            rule.agent.as_deref(),
            rule.session.as_deref(),
            rule.pattern.as_str()
        ),
        (Some("claude"), Some("s-1"), "make deploy")
    );
    assert_eq!(rule.source_request.as_deref(), Some(first.id.as_str()));
    assert!(!rule.memory);

    // The same command, spaced otherwise, in the same session: approved by that rule.
    let again = ask_in(&d, "claude", Some("s-1"), "make   deploy").await;
    assert!(allowlisted(&again), "{again:?}");
    // Another session, no session, another agent in that session: a human decides.
    for (agent, session) in [
        ("claude", Some("s-2")),
        ("claude", None),
        ("codex", Some("s-1")),
    ] {
        let r = ask_in(&d, agent, session, "make deploy").await;
        assert_eq!(r.status, Status::Pending, "{agent} {session:?}");
    }
    // Another command in the same session: asked.
    let other = ask_in(&d, "claude", Some("s-1"), "make deploy-prod").await;
    assert_eq!(other.status, Status::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_are_refused_where_always_is_and_session_without_a_session() {
    let d = TestDaemon::start(&[LONG]).await;
    // No session named, or an empty one: "this session" has nothing to hold on to.
    let empty = ask_in(&d, "claude", Some(""), "make deploy").await;
    assert_eq!(empty.session, None, "an empty session is none");
    let plain = ask_in(&d, "claude", None, "make deploy").await;
    let (status, body) = grant(&d, &plain.short_id, json!({"decision": "allow-session"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "ALWAYS_REFUSED");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"session\" refused: the request names no session"),
        "{body}"
    );
    // Dangerous, or a shell: no grant that saves a rule, timed or not.
    let dangerous = ask_in(&d, "claude", Some("s"), "rm -rf /srv/data").await;
    let shell = ask_in(&d, "claude", Some("s"), "bash -c 'make deploy'").await;
    for r in [&dangerous, &shell] {
        for body in [
            json!({"decision": "allow-session"}),
            json!({"decision": "allow-session", "for_secs": 60}),
            json!({"decision": "allow-always", "for_secs": 60}),
        ] {
            let (status, answer) = grant(&d, &r.short_id, body.clone()).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body} {answer}");
            assert_eq!(answer["error"]["code"], "ALWAYS_REFUSED");
        }
    }
    // A duration means nothing for once or deny.
    for decision in ["allow-once", "deny"] {
        let (status, answer) = grant(
            &d,
            &plain.short_id,
            json!({"decision": decision, "for_secs": 60}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("a duration goes with a grant that saves a rule")
        );
    }
    let (status, answer) = grant(
        &d,
        &plain.short_id,
        json!({"decision": "allow-always", "for_secs": 0}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    // Nothing changed: every request still waits, and no rule was saved.
    for r in [&plain, &dangerous, &shell] {
        assert_eq!(d.record(&r.id).await.status, Status::Pending);
    }
    assert!(rules(&d).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_boxed_rule_approves_until_it_expires_and_a_longer_grant_renews_it() {
    let d = TestDaemon::start(&[LONG]).await;
    let first = ask_in(&d, "claude", None, "make deploy").await;
    let (status, body) = grant(
        &d,
        &first.short_id,
        json!({"decision": "allow-always", "for_secs": 1}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let done: Record = serde_json::from_value(body).unwrap();
    let until = done
        .rule_expires_at
        .expect("a time-boxed grant says until when");
    assert_eq!(
        until,
        done.resolved_at.unwrap() + chrono::TimeDelta::seconds(1)
    );
    assert_eq!(d.record(&first.id).await.rule_expires_at, Some(until));
    assert_eq!(rules(&d).await[0].expires_at, Some(until));

    // A rule in its time approves: another command, granted for a minute, so that a
    // slow machine cannot make this check race the one-second rule.
    let minute = ask_in(&d, "claude", None, "make lint").await;
    let (status, body) = grant(
        &d,
        &minute.short_id,
        json!({"decision": "allow-always", "for_secs": 60}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(allowlisted(&ask_in(&d, "claude", None, "make lint").await));
    // After it: asked again.
    assert!(eventually(|| async { chrono::Utc::now() > until }).await);
    let later = ask_in(&d, "claude", None, "make deploy").await;
    assert_eq!(
        later.status,
        Status::Pending,
        "an expired rule approves nothing"
    );

    // Granted again for good: the same rule, now kept.
    let (status, body) = grant(&d, &later.short_id, json!({"decision": "allow-always"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let all = rules(&d).await;
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[0].expires_at, None, "the same rule, renewed for good");
    assert!(allowlisted(
        &ask_in(&d, "claude", None, "make deploy").await
    ));
    let elsewhere = ask_in(&d, "claude", Some("x"), "make deploy").await;
    assert!(
        allowlisted(&elsewhere),
        "the agent's rule covers every session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_are_looked_up_session_first_then_agent_then_global() {
    let d = TestDaemon::start(&[LONG]).await;
    // The session rule first (while nothing else approves the command), then an agent
    // rule and a global one for the same command, so that all three match.
    let asked = ask_in(&d, "claude", Some("s-1"), "make deploy").await;
    assert_eq!(asked.status, Status::Pending);
    let (status, body) = grant(&d, &asked.short_id, json!({"decision": "allow-session"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for rule in [
        json!({"agent": null, "pattern": "make deploy", "kind": "exact"}),
        json!({"agent": "claude", "pattern": "make deploy", "kind": "exact"}),
    ] {
        assert_eq!(d.add_rule(rule).await.0, StatusCode::CREATED);
    }

    // Each request credits the most specific rule that applies to it.
    for (agent, session) in [
        ("claude", Some("s-1")),
        ("claude", Some("s-1")),
        ("claude", Some("s-2")),
        ("codex", Some("s-1")),
    ] {
        assert!(allowlisted(
            &ask_in(&d, agent, session, "make deploy").await
        ));
    }
    let all = rules(&d).await;
    let uses = |session: Option<&str>, agent: Option<&str>| {
        all.iter()
            .find(|r| r.session.as_deref() == session && r.agent.as_deref() == agent)
            .map(|r| r.use_count)
            .unwrap()
    };
    assert_eq!(uses(Some("s-1"), Some("claude")), 2, "{all:?}");
    assert_eq!(uses(None, Some("claude")), 1, "{all:?}");
    assert_eq!(uses(None, None), 1, "{all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_rules_are_forgotten_at_restart_and_others_are_kept() {
    let mut d = TestDaemon::start(&[LONG, ("EXECGATE_APPROVAL__REMEMBER", "memory")]).await;
    assert_eq!(
        d.add_rule(json!({"pattern": "make test", "kind": "exact"}))
            .await
            .0,
        StatusCode::CREATED
    );
    let asked = ask_in(&d, "claude", Some("s"), "make deploy").await;
    let (status, _) = grant(&d, &asked.short_id, json!({"decision": "allow-always"})).await;
    assert_eq!(status, StatusCode::OK);
    let asked = ask_in(&d, "claude", Some("s"), "make lint").await;
    let (status, _) = grant(&d, &asked.short_id, json!({"decision": "allow-session"})).await;
    assert_eq!(status, StatusCode::OK);
    let before = rules(&d).await;
    assert_eq!(
        before.iter().map(|r| r.memory).collect::<Vec<_>>(),
        [false, true, true]
    );
    // In force while this run lasts.
    assert!(allowlisted(
        &ask_in(&d, "claude", None, "make deploy").await
    ));
    let cli = stdout(&d.cli(&["allow", "list"]).await);
    assert!(cli.contains("until restart"), "{cli}");
    assert!(cli.contains("agent claude, session s"), "{cli}");

    d.stop().await;
    let dir = std::mem::replace(&mut d.dir, tempfile::tempdir().unwrap());
    let d = TestDaemon::start_in(dir, &[LONG]).await;
    let after = rules(&d).await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0].pattern, "make test");
    assert_eq!(
        ask_in(&d, "claude", None, "make deploy").await.status,
        Status::Pending
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_grants_for_a_session_and_for_a_while() {
    let d = TestDaemon::start(&[LONG]).await;
    let r = ask_in(&d, "claude", Some("s-9"), "make deploy").await;
    let out = d.cli(&["approve", &r.short_id, "session", "2h"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("approved (allow-session, rule until"),
        "{}",
        stdout(&out)
    );
    let done = d.record(&r.id).await;
    assert_eq!(done.decision, Some(Decision::AllowSession));
    let until = done.rule_expires_at.unwrap() - done.resolved_at.unwrap();
    assert_eq!(until, chrono::TimeDelta::hours(2));

    let r = ask_in(&d, "claude", None, "make lint").await;
    let out = d.cli(&["approve", &r.short_id, "30m"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let done = d.record(&r.id).await;
    assert_eq!(done.decision, Some(Decision::AllowAlways));
    assert_eq!(
        done.rule_expires_at.unwrap() - done.resolved_at.unwrap(),
        chrono::TimeDelta::minutes(30)
    );

    let list = stdout(&d.cli(&["allow", "list"]).await);
    assert!(list.contains("SCOPE"), "{list}");
    assert!(list.contains("agent claude, session s-9"), "{list}");
    assert!(list.contains("until 20"), "{list}");

    // Words the CLI does not take change nothing.
    let r = ask_in(&d, "claude", None, "make docs").await;
    for args in [
        vec!["approve", r.short_id.as_str(), "once", "2h"],
        vec!["approve", r.short_id.as_str(), "forever"],
        vec!["approve", r.short_id.as_str(), "always", "1.5h"],
        vec!["approve", r.short_id.as_str(), "session"],
    ] {
        let out = d.cli(&args).await;
        assert!(!out.status.success(), "{args:?}");
        assert!(!stderr(&out).is_empty());
    }
    assert_eq!(d.record(&r.id).await.status, Status::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_grants_for_a_session_and_for_a_while() {
    let mut d = TestDaemon::start(&[LONG]).await;
    let r = ask_in(&d, "claude", Some("s-1"), "make deploy").await;
    d.console_expect(&format!(
        "Reply: /approve {0} · /approve {0} always · /approve {0} session · /deny {0}",
        r.short_id
    ))
    .await;
    d.console_expect(
        "Always saves a rule for agent claude: make deploy; session, for session s-1 only.",
    )
    .await;
    d.console_say(&format!("/approve {} session", r.short_id))
        .await;
    d.console_expect(&format!("{} approved (allow-session)", r.short_id))
        .await;
    assert_eq!(d.terminal(&r.id).await.via, Some(Via::Console));
    let r = ask_in(&d, "claude", None, "make lint").await;
    d.console_say(&format!("/approve {} 45s", r.short_id)).await;
    d.console_expect(&format!(
        "{} approved (allow-always, rule until",
        r.short_id
    ))
    .await;
    let r = ask_in(&d, "claude", None, "make docs").await;
    d.console_say(&format!("/approve {} session", r.short_id))
        .await;
    d.console_expect("\"session\" refused").await;
    assert_eq!(d.record(&r.id).await.status, Status::Pending);
}
