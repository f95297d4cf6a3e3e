//! Traces as a collector receives them: `execgate serve`, with `traces.otlp_endpoint` set,
//! sends a span per request to an OTLP/HTTP receiver written here, which decodes the
//! protobuf as a collector would. Each span says who asked and how the request ended,
//! never what it asked.

use execgate_testkit as common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::process::Process;
use common::*;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message;
use serde_json::json;

/// What the receiver was sent: each body as it came, and each span's attributes.
#[derive(Default)]
struct Received {
    bodies: Vec<Vec<u8>>,
    spans: Vec<BTreeMap<String, String>>,
    paths: Vec<String>,
}

/// An OTLP/HTTP receiver on a free loopback port: `POST /v1/traces`, protobuf.
async fn receiver() -> (SocketAddr, Arc<Mutex<Received>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let received = Arc::new(Mutex::new(Received::default()));
    let kept = Arc::clone(&received);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let kept = Arc::clone(&kept);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let kept = Arc::clone(&kept);
                    async move {
                        let path = request.uri().path().to_owned();
                        let body = request.into_body().collect().await?.to_bytes();
                        let export = ExportTraceServiceRequest::decode(body.as_ref())
                            .expect("the body is an OTLP ExportTraceServiceRequest");
                        let mut kept = kept.lock().unwrap();
                        kept.paths.push(path);
                        kept.bodies.push(body.to_vec());
                        for span in export
                            .resource_spans
                            .iter()
                            .flat_map(|r| &r.scope_spans)
                            .flat_map(|s| &s.spans)
                        {
                            let mut attributes = BTreeMap::new();
                            attributes.insert("name".to_owned(), span.name.clone());
                            for kv in &span.attributes {
                                let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                                    Some(Any::StringValue(s)) => s.clone(),
                                    Some(Any::IntValue(i)) => i.to_string(),
                                    other => format!("{other:?}"),
                                };
                                attributes.insert(kv.key.clone(), value);
                            }
                            kept.spans.push(attributes);
                        }
                        Ok::<_, hyper::Error>(
                            Response::builder()
                                .status(StatusCode::OK)
                                .header("content-type", "application/x-protobuf")
                                .body(Full::new(Bytes::new()))
                                .unwrap(),
                        )
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, received)
}

/// Waits (at most 30 s) until the receiver holds a span whose attributes include `with`.
async fn span_with(received: &Mutex<Received>, with: &[(&str, &str)]) -> BTreeMap<String, String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let found = received
            .lock()
            .unwrap()
            .spans
            .iter()
            .find(|s| {
                with.iter()
                    .all(|(k, v)| s.get(*k).map(String::as_str) == Some(*v))
            })
            .cloned();
        if let Some(span) = found {
            return span;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no span with {with:?}; received: {:?}",
            received.lock().unwrap().spans
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_span_per_request_reaches_the_collector_without_what_was_asked() {
    let (addr, received) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let endpoint = format!("http://{addr}");
    let daemon = Process::start(
        dir.path(),
        &[
            ("EXECGATE_TRACES__OTLP_ENDPOINT", endpoint.as_str()),
            ("EXECGATE_TRACES__EXPORT_DELAY_MS", "100"),
            ("EXECGATE_APPROVAL__TIMEOUT_SECS", "300"),
        ],
    )
    .await;
    let env = daemon.env.clone();
    let cwd = dir.path().display().to_string();
    let (status, r) = daemon
        .submit(
            &json!({"agent": "tracer-agent", "command": "ls -la", "cwd": cwd,
            "reason": "look around", "front": "mcp"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    let asked = daemon.ask_no_wait("make deploy").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let out = run_cli(&env, &["approve", asked["short_id"].as_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let left = daemon.ask_no_wait("make publish").await;

    let by_policy = span_with(&received, &[("execgate.agent", "tracer-agent")]).await;
    assert_eq!(by_policy["name"], "execgate.request");
    assert_eq!(by_policy["execgate.verdict"], "approved");
    assert_eq!(by_policy["execgate.via"], "policy");
    assert_eq!(by_policy["execgate.risk"], "safe");
    assert_eq!(by_policy["execgate.front"], "mcp");
    assert_eq!(by_policy["execgate.waiting_ms"], "0");
    let answered = span_with(&received, &[("execgate.via", "cli")]).await;
    assert_eq!(answered["execgate.verdict"], "approved");
    assert_eq!(answered["execgate.agent"], "a");
    assert_eq!(answered["execgate.front"], "none");
    let waited: u64 = answered["execgate.waiting_ms"].parse().unwrap();
    assert!(
        waited >= 300,
        "the owner answered after 300 ms or more: {answered:?}"
    );

    // Shutdown cancels what waits, and sends its span before the process ends.
    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
    let cancelled = span_with(&received, &[("execgate.via", "shutdown")]).await;
    assert_eq!(cancelled["execgate.verdict"], "cancelled");

    let received = received.lock().unwrap();
    assert!(
        received.paths.iter().all(|p| p == "/v1/traces"),
        "{:?}",
        received.paths
    );
    assert_eq!(received.spans.len(), 3, "{:?}", received.spans);
    let everything: Vec<u8> = received.bodies.concat();
    let sent = String::from_utf8_lossy(&everything);
    for secret in [
        "ls -la",
        "make",
        "look around",
        cwd.as_str(),
        r["id"].as_str().unwrap(),
        asked["id"].as_str().unwrap(),
        left["id"].as_str().unwrap(),
    ] {
        assert!(
            !sent.contains(secret),
            "{secret:?} was sent to the collector"
        );
    }
}
