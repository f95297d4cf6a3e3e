//! Every bad input gets its documented status and a message naming the problem, nothing
//! is approved by accident, and the daemon keeps serving afterwards.

use execgate_testkit as common;

use std::time::Duration;

use common::*;
use execgate::model::Status;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends raw bytes as one HTTP request and returns (status, body).
async fn raw(socket: &std::path::Path, body: &[u8]) -> (u16, Value) {
    let mut stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    let head = format!(
        "POST /v1/requests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // The server may answer (413) before reading everything; a failed write is fine then.
    let _ = stream.write_all(body).await;
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply)).await;
    let text = String::from_utf8_lossy(&reply).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let json = text
        .split("\r\n\r\n")
        .nth(1)
        .and_then(|b| serde_json::from_str(b).ok())
        .unwrap_or(Value::Null);
    (status, json)
}

async fn assert_rejected(d: &TestDaemon, body: Value, status: StatusCode, needle: &str) {
    let (got, reply) = d.submit(body.clone()).await;
    assert_eq!(got, status, "{body} -> {reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(needle),
        "{body}: message {message:?} should mention {needle:?}"
    );
    assert!(reply["error"]["code"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_requests_name_the_problem() {
    let d = TestDaemon::start(&[]).await;
    let bad = StatusCode::BAD_REQUEST;
    assert_rejected(&d, json!({"command": "ls"}), bad, "agent").await;
    assert_rejected(&d, json!({"agent": "a"}), bad, "`command`").await;
    assert_rejected(
        &d,
        json!({"agent": "a", "command": "ls", "argv": ["ls"]}),
        bad,
        "not both",
    )
    .await;
    assert_rejected(
        &d,
        json!({"agent": "bad name!", "command": "ls"}),
        bad,
        "`agent`",
    )
    .await;
    assert_rejected(
        &d,
        json!({"agent": "a".repeat(65), "command": "ls"}),
        bad,
        "`agent`",
    )
    .await;
    assert_rejected(&d, json!({"agent": "", "command": "ls"}), bad, "`agent`").await;
    assert_rejected(
        &d,
        json!({"agent": "a", "command": "ls\u{0}rm"}),
        bad,
        "`command` contains a NUL",
    )
    .await;
    assert_rejected(
        &d,
        json!({"agent": "a", "argv": ["ls", "a\u{0}b"]}),
        bad,
        "`argv[1]` contains a NUL",
    )
    .await;
    assert_rejected(
        &d,
        json!({"agent": "a", "command": "ls", "reason": "\u{0}"}),
        bad,
        "`reason`",
    )
    .await;
    assert_rejected(&d, json!({"agent": "a", "argv": []}), bad, "`argv`").await;
    assert_rejected(
        &d,
        json!({"agent": "a", "command": "   "}),
        bad,
        "`command` is empty",
    )
    .await;
    assert_rejected(
        &d,
        json!({"agent": "a", "command": "ls", "comand": "x"}),
        bad,
        "unknown field `comand`",
    )
    .await;
    assert_rejected(&d, json!({"agent": "a", "command": 5}), bad, "invalid type").await;
    assert_rejected(
        &d,
        json!({"agent": "a", "command": "ls", "cwd": "/no/such/dir"}),
        bad,
        "`cwd`",
    )
    .await;
    assert_rejected(
        &d,
        json!({"agent": "a", "command": "ls", "timeout_ms": 10_000_000}),
        bad,
        "timeout_ms",
    )
    .await;
    assert_rejected(
        &d,
        json!({"agent": "a", "command": "ls", "run": true, "wait": false}),
        bad,
        "wait",
    )
    .await;

    let (status, reply) = raw(&d.config().socket, b"{\"agent\": \"a\", \"command\": ").await;
    assert_eq!(status, 400);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("invalid JSON")
    );
    let (status, _) = raw(&d.config().socket, b"").await;
    assert_eq!(status, 400);

    let (_, list) = d
        .admin()
        .call(Method::GET, "/v1/requests", None)
        .await
        .unwrap();
    assert_eq!(list, json!([]), "no invalid request left a row");
    assert_eq!(
        d.ask("a", "ls").await.status,
        Status::Approved,
        "still serving"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversize_bodies_are_refused_whole() {
    let d = TestDaemon::start(&[]).await;
    let big =
        json!({"agent": "a", "command": format!("echo {}", "x".repeat(70 * 1024))}).to_string();
    let (status, reply) = raw(&d.config().socket, big.as_bytes()).await;
    assert_eq!(status, 413, "{reply}");
    assert_eq!(reply["error"]["code"], "BODY_TOO_LARGE");

    // Without a Content-Length (chunked), the limit still holds while reading.
    let mut stream = tokio::net::UnixStream::connect(&d.config().socket)
        .await
        .unwrap();
    let chunk = "y".repeat(8192);
    let mut req = String::from(
        "POST /v1/requests HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
    );
    for _ in 0..10 {
        req.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    req.push_str("0\r\n\r\n");
    let _ = stream.write_all(req.as_bytes()).await;
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply)).await;
    assert!(String::from_utf8_lossy(&reply).starts_with("HTTP/1.1 413"));

    // Just under the limit is fine.
    let fits =
        json!({"agent": "a", "command": format!("make {}", "x".repeat(60 * 1024)), "wait": false});
    assert_eq!(d.submit(fits).await.0, StatusCode::ACCEPTED);
    let (_, list) = d
        .admin()
        .call(Method::GET, "/v1/requests", None)
        .await
        .unwrap();
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "only the request that fit was recorded"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_ids_and_second_answers() {
    let d = TestDaemon::start(&[]).await;
    let admin = d.admin();
    for path in [
        "/v1/requests/ffff",
        "/v1/requests/0193a7c2-0000-7000-8000-000000000000",
    ] {
        let (status, body) = admin.call(Method::GET, path, None).await.unwrap();
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(body["error"]["code"], "NOT_FOUND");
    }
    let (status, body) = admin
        .call(
            Method::POST,
            "/v1/requests/ffff/decision",
            Some(&json!({"decision": "allow-once"})),
        )
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("NOT_FOUND"))
    );
    let (status, _) = d
        .agent()
        .call(Method::GET, "/v1/requests/ffff", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND);

    let r = d.ask_no_wait("a", "make deploy").await;
    let (status, body) = d.decide(&r.short_id, "sometimes").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sometimes")
    );
    assert_eq!(d.decide(&r.short_id, "deny").await.0, StatusCode::OK);
    let (status, body) = d.decide(&r.short_id, "allow-once").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("ALREADY_RESOLVED"))
    );
    assert_eq!(d.record(&r.id).await.status, Status::Denied);

    let (status, _) = admin
        .call(Method::GET, "/v1/requests?status=maybe", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = admin
        .call(Method::GET, "/v1/requests?stauts=pending", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = admin
        .call(Method::DELETE, "/v1/allowlist/999", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = admin
        .call(
            Method::POST,
            "/v1/allowlist",
            Some(&json!({"pattern": "git [", "kind": "glob"})),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_database_answers_503_and_approves_nothing() {
    let d = TestDaemon::start(&[("EXECGATE_DATABASE_BUSY_TIMEOUT_MS", "200")]).await;
    let r = d.ask_no_wait("a", "make deploy").await;

    // Another process holds SQLite's write lock: every write times out.
    let blocker = d.hold_write_lock().await;

    for body in [
        json!({"agent": "a", "command": "ls"}),
        json!({"agent": "a", "command": "make x"}),
    ] {
        let (status, reply) = d.submit(body).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reply}");
        assert_eq!(reply["error"]["code"], "UNAVAILABLE");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not approved")
        );
    }
    let (status, _) = d.decide(&r.id, "allow-once").await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "a decision that cannot be stored is not made"
    );

    blocker.execute_batch("ROLLBACK").unwrap();
    drop(blocker);
    assert_eq!(
        d.record(&r.id).await.status,
        Status::Pending,
        "nothing was approved meanwhile"
    );
    assert_eq!(
        d.ask("a", "ls").await.status,
        Status::Approved,
        "serving again once the database is back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_endpoints_and_methods_get_json_errors() {
    let d = TestDaemon::start(&[]).await;
    let (status, body) = d
        .agent()
        .call(Method::GET, "/v2/anything", None)
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("NOT_FOUND"))
    );
    let (status, body) = d
        .agent()
        .call(Method::DELETE, "/v1/requests", None)
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, Some("METHOD_NOT_ALLOWED"))
    );
    let (status, body) = d
        .agent()
        .call(Method::GET, "/v1/health", None)
        .await
        .unwrap();
    assert_eq!(
        (status, body["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_the_store_cannot_record_is_retried_until_it_is() {
    let d = TestDaemon::start(&[
        ("EXECGATE_DATABASE_BUSY_TIMEOUT_MS", "200"),
        ("EXECGATE_APPROVAL__TIMEOUT_SECS", "1"),
        ("EXECGATE_APPROVAL__ASK_FALLBACK", "full"),
    ])
    .await;
    let waiting = d.ask_waiting("a", "make deploy");
    let pending = d.pending_for("make deploy").await;
    // The timeout fires while the database refuses writes.
    let blocker = d.hold_write_lock().await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(
        d.record(&pending.id).await.status,
        Status::Pending,
        "nothing recorded, nothing approved"
    );
    blocker.execute_batch("ROLLBACK").unwrap();
    let r = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the waiter hears the outcome once the store is back")
        .unwrap();
    assert_eq!(
        (r.status, r.via),
        (Status::Approved, Some(execgate::model::Via::Timeout))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_commands_are_answered_and_the_daemon_keeps_serving() {
    let d = TestDaemon::start(&[]).await;
    // 1,300 nested `$(` (~4 KB): one request used to overflow the analyser's stack and
    // abort the whole daemon; it has too many tokens to parse now. 330 have few enough
    // to parse: without the walk's depth limit they still overflow a debug build's
    // worker stack.
    for deep in [
        format!("echo {}{}", "$(".repeat(1300), ")".repeat(1300)),
        format!("echo {}{}", "$(".repeat(330), ")".repeat(330)),
        // A handful of tokens, 16,000 nested expressions.
        format!("echo $(({}1))", "1+".repeat(16_000)),
    ] {
        let body = json!({"agent": "a", "command": deep, "wait": false});
        assert!(body.to_string().len() < 64 * 1024);
        let (status, reply) = d.submit(body).await;
        assert!(
            status == StatusCode::ACCEPTED || status == StatusCode::OK,
            "{status}: {reply}"
        );
        let status = reply["status"].as_str().unwrap_or_default();
        assert!(
            status == "pending" || status == "denied",
            "never approved: {reply}"
        );
        assert!(
            reply["risk_reasons"].as_array().is_some_and(|r| r
                .iter()
                .any(|r| r.as_str().unwrap_or("").contains("not plain"))),
            "{reply}"
        );
    }

    let (status, body) = d
        .agent()
        .call(Method::GET, "/v1/health", None)
        .await
        .unwrap();
    assert_eq!(
        (status, body["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
    assert_eq!(
        d.ask("a", "ls").await.status,
        Status::Approved,
        "still serving"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn characters_past_the_c_librarys_tables_are_answered() {
    let d = TestDaemon::start(&[]).await;
    // `echo {` and U+10FFFF: the bash grammar's scanner read out of bounds on it and the
    // daemon died of SIGSEGV.
    for command in ["echo {\u{10FFFF}", "echo x{\u{F0000}"] {
        let r = d.ask_no_wait("a", command).await;
        assert_eq!(r.status, Status::Pending, "{command:?}");
    }
    let r = d.ask("a", "echo 'héllo 日本'").await;
    assert_eq!(r.status, Status::Approved, "still serving");
}

/// Every body is a JSON object: serde would also read a struct from an array of its
/// fields in order, which no client means and no reviewer expects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_json_objects_are_accepted_as_bodies() {
    let d = TestDaemon::start(&[]).await;
    // agent, session, command, argv, input, cwd, timeout_ms, run, reason, wait, shell
    let as_array = br#"["a", null, "pwd", null, null, null, null, false, null, true, null]"#;
    let (status, reply) = raw(&d.config().socket, as_array).await;
    assert_eq!(status, 400, "{reply}");
    assert_eq!(reply["error"]["code"], "INVALID_REQUEST");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("JSON object"),
        "{reply}"
    );
    for body in [&b"\"pwd\""[..], b"42", b"null", b"  [ ]"] {
        let (status, reply) = raw(&d.config().socket, body).await;
        assert_eq!(status, 400, "{reply}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("JSON object")
        );
    }

    // The admin socket's bodies too: a decision and a rule.
    let pending = d.ask_no_wait("a", "make deploy").await;
    let admin = d.config().admin_socket.clone();
    let path = format!("/v1/requests/{}/decision", pending.id);
    let (status, reply) = raw_to(&admin, "POST", &path, br#"["allow-once"]"#).await;
    assert_eq!(status, 400, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("JSON object")
    );
    assert_eq!(d.record(&pending.id).await.status, Status::Pending);
    let (status, reply) =
        raw_to(&admin, "POST", "/v1/allowlist", br#"[null, "make deploy"]"#).await;
    assert_eq!(status, 400, "{reply}");
    let (_, rules) = d
        .admin()
        .call(Method::GET, "/v1/allowlist", None)
        .await
        .unwrap();
    assert_eq!(rules, json!([]));

    let (_, list) = d
        .admin()
        .call(Method::GET, "/v1/requests", None)
        .await
        .unwrap();
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "only the object was recorded"
    );
}

/// Sends `body` as `METHOD PATH` on `socket`; returns (status, body).
async fn raw_to(socket: &std::path::Path, method: &str, path: &str, body: &[u8]) -> (u16, Value) {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    head.extend_from_slice(body);
    let answers = exchange(socket, &head).await;
    answers.into_iter().next().unwrap_or((0, Value::Null))
}

/// Writes `bytes` (a write that fails once the server has answered is not an error) and
/// reads every response until the server closes, each as (status, JSON body or Null;
/// a body that is not JSON comes back as a string).
async fn exchange(socket: &std::path::Path, bytes: &[u8]) -> Vec<(u16, Value)> {
    let mut stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    let _ = stream.write_all(bytes).await;
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply)).await;
    parse_responses(&reply)
}

fn parse_responses(mut bytes: &[u8]) -> Vec<(u16, Value)> {
    let mut out = Vec::new();
    while let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..end]).to_lowercase();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let body = &bytes[end + 4..(end + 4 + len).min(bytes.len())];
        let value = serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        out.push((status, value));
        bytes = &bytes[(end + 4 + len).min(bytes.len())..];
    }
    out
}

fn assert_json_error(answer: &(u16, Value), status: u16, what: &str) {
    assert_eq!(answer.0, status, "{what}: {answer:?}");
    assert!(
        answer.1["error"]["code"].is_string() && answer.1["error"]["message"].is_string(),
        "{what}: the body is not the JSON error: {:?}",
        answer.1
    );
}

/// What hyper (or the router's path decoding) refuses before any handler runs is answered
/// with the same JSON error body as everything else, on a fresh connection, after a
/// keep-alive request, and after a pipelined one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_before_routing_are_json() {
    let d = TestDaemon::start(&[]).await;
    let socket = d.config().socket.clone();
    let health = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
    let big_header = |n: usize| {
        format!(
            "GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
            "a".repeat(n)
        )
        .into_bytes()
    };
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        (
            "a request line that is not HTTP",
            b"GARBAGE\r\n\r\n".to_vec(),
            400,
        ),
        ("no version", b"GET /v1/health\r\n\r\n".to_vec(), 400),
        (
            "HTTP/2 spoken to HTTP/1",
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(),
            400,
        ),
        (
            "a method with a space",
            b"G(T /v1/health HTTP/1.1\r\n\r\n".to_vec(),
            400,
        ),
        (
            "a raw byte in the path",
            b"GET /v1/\xff HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            400,
        ),
        (
            "a bad header line",
            b"GET /v1/health HTTP/1.1\r\nHost x\r\n\r\n".to_vec(),
            400,
        ),
        (
            "two lengths",
            b"POST /v1/requests HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
                .to_vec(),
            400,
        ),
        (
            "an encoding that is not chunked",
            b"POST /v1/requests HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n".to_vec(),
            400,
        ),
        ("headers a little too large", big_header(32 * 1024), 431),
        ("headers far too large", big_header(600 * 1024), 431),
        (
            "a percent-encoded path that is not UTF-8",
            b"GET /v1/requests/%FF%FE HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec(),
            400,
        ),
    ];
    for (what, bytes, status) in &cases {
        let answers = exchange(&socket, bytes).await;
        assert_eq!(answers.len(), 1, "{what}: {answers:?}");
        assert_json_error(&answers[0], *status, what);

        // After a keep-alive request on the same connection: answered in turn.
        let mut stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
        stream.write_all(&health).await.unwrap();
        let mut first = Vec::new();
        while parse_responses(&first).is_empty() || !first.ends_with(b"}") {
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "{what}: closed after the first request");
            first.extend_from_slice(&buf[..n]);
        }
        assert!(first.starts_with(b"HTTP/1.1 200"), "{what}");
        let _ = stream.write_all(bytes).await;
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest)).await;
        let answers = parse_responses(&rest);
        assert_eq!(answers.len(), 1, "{what} after keep-alive: {answers:?}");
        assert_json_error(&answers[0], *status, what);

        // Pipelined behind a good request: the good one is answered first.
        let mut both = health.clone();
        both.extend_from_slice(bytes);
        let answers = exchange(&socket, &both).await;
        assert_eq!(answers.len(), 2, "{what} pipelined: {answers:?}");
        assert_eq!(answers[0].0, 200, "{what} pipelined");
        assert_json_error(&answers[1], *status, what);
    }
    // The admin socket, with a path whose decoding is not UTF-8.
    let (status, reply) = raw_to(
        &d.config().admin_socket,
        "POST",
        "/v1/requests/%C3%28/decision",
        br#"{"decision":"deny"}"#,
    )
    .await;
    assert_json_error(&(status, reply), 400, "admin path");
    assert_eq!(
        d.ask("a", "ls").await.status,
        Status::Approved,
        "still serving"
    );
}

/// A handler that answers before reading the body (404 for a path the agent socket does
/// not have) must not leave the client writing into a closed socket: the client gets
/// the whole answer, never a broken pipe or a reset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_before_the_body_does_not_reset_the_connection() {
    let d = TestDaemon::start(&[]).await;
    let body = vec![b'x'; 60 * 1024];
    for round in 0..50 {
        let mut stream = tokio::net::UnixStream::connect(&d.config().socket)
            .await
            .unwrap();
        let head = format!(
            "POST /v1/requests/x/decision HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        // The body in pieces, after the daemon has had time to answer.
        for piece in body.chunks(4096) {
            tokio::time::sleep(Duration::from_micros(200)).await;
            if let Err(e) = stream.write_all(piece).await {
                panic!("round {round}: writing the body failed: {e}");
            }
        }
        let mut reply = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply))
            .await
            .expect("the daemon closes the connection")
            .unwrap_or_else(|e| panic!("round {round}: reading the answer failed: {e}"));
        let answers = parse_responses(&reply);
        assert_eq!(answers.len(), 1, "round {round}: {answers:?}");
        assert_json_error(&answers[0], 404, "decision on the agent socket");
        assert_eq!(answers[0].1["error"]["code"], "NOT_FOUND");
    }
}
