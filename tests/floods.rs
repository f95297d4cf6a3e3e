//! Floods: many connections, slow partial requests, and one uid asking too much. The
//! daemon caps what one uid may hold with a clear 429, cuts off clients that trickle,
//! keeps its memory bounded, and goes on serving.

use execgate_testkit as common;

use std::time::Duration;

use common::process::Process;
use common::*;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

/// Reads whatever the server sends until it closes (bounded).
async fn read_all(stream: &mut UnixStream) -> String {
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

fn health_request() -> &'static [u8] {
    b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_per_uid_cap_get_429_and_slots_come_back() {
    let d = TestDaemon::start(&[("EXECGATE_LIMITS__MAX_CONNECTIONS_PER_UID", "8")]).await;
    let socket = d.config().socket.clone();
    // Many short requests in a row: each connection's slot is given back.
    for _ in 0..100 {
        let (status, _) = d
            .agent()
            .call(Method::GET, "/v1/health", None)
            .await
            .unwrap();
        assert_eq!(status, StatusCode::OK);
    }
    // Eight idle connections take every slot; the ninth is refused, clearly.
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(UnixStream::connect(&socket).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut ninth = UnixStream::connect(&socket).await.unwrap();
    let reply = read_all(&mut ninth).await;
    assert!(reply.starts_with("HTTP/1.1 429"), "{reply}");
    assert!(reply.contains("TOO_MANY_CONNECTIONS"), "{reply}");
    assert!(reply.contains("limits.max_connections_per_uid"), "{reply}");
    // The admin socket counts separately: the owner can still act.
    let (status, _) = d
        .admin()
        .call(Method::GET, "/v1/requests", None)
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    drop(held);
    let served = eventually(|| async {
        matches!(
            d.agent().call(Method::GET, "/v1/health", None).await,
            Ok((StatusCode::OK, _))
        )
    })
    .await;
    assert!(served, "closed connections give their slots back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_partial_requests_are_cut_off() {
    let d = TestDaemon::start(&[("EXECGATE_LIMITS__REQUEST_READ_TIMEOUT_MS", "300")]).await;
    let socket = d.config().socket.clone();
    // Half a request line, then nothing: the connection is closed.
    let mut slow = UnixStream::connect(&socket).await.unwrap();
    slow.write_all(b"POST /v1/requ").await.unwrap();
    let started = std::time::Instant::now();
    let reply = read_all(&mut slow).await;
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "closed by the header timeout, not by the test's own bound"
    );
    assert!(!reply.contains("200 OK"), "{reply}");
    // Headers, then a body that never completes: 408.
    let mut trickle = UnixStream::connect(&socket).await.unwrap();
    trickle
        .write_all(b"POST /v1/requests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"agent\":")
        .await
        .unwrap();
    let reply = read_all(&mut trickle).await;
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains("REQUEST_TIMEOUT"), "{reply}");
    // Nothing was recorded, and well-behaved requests are served.
    assert_eq!(
        d.ask("a", "ls -la").await.status,
        execgate::model::Status::Approved
    );
    let (_, list) = d
        .admin()
        .call(Method::GET, "/v1/requests", None)
        .await
        .unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_requests_are_capped_per_uid() {
    let d = TestDaemon::start(&[("EXECGATE_LIMITS__MAX_PENDING_PER_UID", "3")]).await;
    let mut pending = Vec::new();
    for i in 0..3 {
        pending.push(d.ask_no_wait("a", &format!("make job{i}")).await);
    }
    let (status, v) = d
        .submit(json!({"agent": "b", "command": "make one-more", "wait": false}))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{v}");
    assert_eq!(v["error"]["code"], "TOO_MANY_PENDING");
    assert!(v["error"]["message"].as_str().unwrap().contains("limit 3"));
    // Decided requests are not capped: the agent can still work.
    assert_eq!(
        d.ask("a", "ls -la").await.status,
        execgate::model::Status::Approved
    );
    // Once one is answered, there is room again.
    d.decide(&pending[0].id, "deny").await;
    d.ask_no_wait("a", "make one-more").await;
}

/// Resident memory high-water mark of a process, in KiB.
fn vm_hwm(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_connections_and_huge_bodies_keep_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = Process::start(
        dir.path(),
        &[("EXECGATE_LIMITS__MAX_CONNECTIONS_PER_UID", "2000")],
    )
    .await;
    let pid = daemon.child.id().unwrap();
    let socket = config_for(&daemon.env).socket;
    let before = vm_hwm(pid);

    // 1,000 connections at once, each sending a request; then 20 bodies of 60 KiB
    // (just under the limit) and 20 of several MiB (refused whole).
    let mut tasks = Vec::new();
    for _ in 0..1000 {
        let socket = socket.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = UnixStream::connect(&socket).await.ok()?;
            s.write_all(health_request()).await.ok()?;
            Some(read_all(&mut s).await)
        }));
    }
    let mut answered = 0;
    for t in tasks {
        if let Some(reply) = t.await.unwrap()
            && reply.starts_with("HTTP/1.1 200")
        {
            answered += 1;
        }
    }
    let big = "x".repeat(8 * 1024 * 1024);
    for i in 0..20 {
        let body = if i % 2 == 0 {
            json!({"agent": "a", "command": format!("make {}", "y".repeat(60 * 1024)), "wait": false}).to_string()
        } else {
            json!({"agent": "a", "command": big}).to_string()
        };
        let mut s = UnixStream::connect(&socket).await.unwrap();
        let head = format!(
            "POST /v1/requests HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).await.unwrap();
        let _ = s.write_all(body.as_bytes()).await;
        let reply = read_all(&mut s).await;
        let want = if i % 2 == 0 {
            "HTTP/1.1 202"
        } else {
            "HTTP/1.1 413"
        };
        assert!(
            reply.starts_with(want),
            "{}",
            &reply[..reply.len().min(200)]
        );
    }
    let after = vm_hwm(pid);
    eprintln!(
        "floods: {answered}/1000 concurrent connections answered; VmHWM {before} KiB -> {after} KiB"
    );
    assert!(answered >= 990, "{answered} of 1000 answered");
    assert!(
        after < before + 150 * 1024,
        "memory grew from {before} KiB to {after} KiB"
    );
    // Still serving.
    let client = execgate::client::Client::new(&socket);
    let (status, v): (StatusCode, Value) =
        client.call(Method::GET, "/v1/health", None).await.unwrap();
    assert_eq!(status, StatusCode::OK, "{v}");
    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
}
