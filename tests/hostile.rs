//! A hostile agent on its own uid, against a real daemon (issue: daemon hardening).
//! The agent's side runs as uid 65534 (see `common::uid`); the owner's side is the test.

mod common;

use common::TestDaemon;
use common::uid::{AGENT_UID, as_agent, can_switch_uid, let_agent_in};
use execgate::client::Client;
use hyper::{Method, StatusCode};
use serde_json::json;

/// The harness itself: what the daemon sees is the agent's uid, and the admin socket
/// stays closed to it.
#[tokio::test]
async fn the_agent_side_is_another_uid() {
    if !can_switch_uid("the_agent_side_is_another_uid") {
        return;
    }
    let d = TestDaemon::start(&[]).await;
    let_agent_in(d.dir.path(), &d.config().socket);
    let (agent, admin) = (d.config().socket.clone(), d.config().admin_socket.clone());
    let (record, admin_answer) = tokio::task::spawn_blocking(move || {
        as_agent(move || async move {
            let body = json!({"agent": "a", "command": "pwd"});
            let record = Client::new(agent)
                .call(Method::POST, "/v1/requests", Some(&body))
                .await
                .unwrap();
            let admin = Client::new(admin)
                .call(Method::GET, "/v1/requests?status=pending", None)
                .await;
            (record, admin.map(|(s, _)| s))
        })
    })
    .await
    .unwrap();
    assert_eq!(record.0, StatusCode::OK, "{}", record.1);
    assert_eq!(record.1["peer_uid"], json!(AGENT_UID));
    assert!(
        admin_answer.is_err()
            || admin_answer
                .as_ref()
                .is_ok_and(|s| *s == StatusCode::FORBIDDEN),
        "the admin socket answered the agent: {admin_answer:?}"
    );
}
