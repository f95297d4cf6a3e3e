//! `/metrics` as Prometheus meets it: a real Prometheus server scrapes the daemon's
//! `metrics.listen` port and the counts are read back through Prometheus' own query API;
//! the admin socket serves the same text to admins only; and no label ever carries a
//! request's id, command or agent.

use execgate_testkit as common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use common::process::Process;
use common::*;
use execgate::client::ClientError;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

/// The label names execgate's series may carry; anything else would be a label nobody
/// bounded. `le` is the histograms' bucket bound, `version` the build's.
const LABELS: &[&str] = &[
    "verdict", "via", "risk", "front", "chat", "outcome", "version", "le",
];

/// How long Prometheus gets to start and to scrape: it scrapes every second, but starts
/// slowly on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(60);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GET `path` on a TCP port, as Prometheus would (it always sends `Host`).
async fn get(addr: SocketAddr, path: &str) -> common::web::Reply {
    common::web::call(addr, "GET", path, &[("host", &addr.to_string())], None).await
}

/// `/metrics` on the admin socket: its status and text.
async fn admin_metrics(client: &execgate::client::Client) -> (StatusCode, String) {
    match client.call(Method::GET, "/metrics", None).await {
        Err(ClientError::NotJson { status, body }) => (status, body),
        Ok((status, body)) => (status, body.to_string()),
        Err(e) => panic!("the admin socket did not answer: {e}"),
    }
}

/// Every sample line of an exposition as (name, labels, value); panics on a line that
/// is not one, or on a label that is not in [`LABELS`].
fn samples(text: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    assert!(text.ends_with("# EOF\n"), "not a whole exposition:\n{text}");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("a sample is `series value`");
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("{line:?}: not a number"));
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, rest.strip_suffix('}').expect("labels end with }")),
            None => (series, ""),
        };
        let mut map = BTreeMap::new();
        for pair in labels.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').expect("a label is `k=\"v\"`");
            assert!(LABELS.contains(&k), "{line:?}: unexpected label {k}");
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap();
            map.insert(k.to_string(), v.to_string());
        }
        assert!(name.starts_with("execgate_"), "{line:?}: not execgate's");
        out.push((name.to_string(), map, value));
    }
    out
}

/// The value of the sample `name` whose labels include `with`; 0 when there is none.
fn value(
    samples: &[(String, BTreeMap<String, String>, f64)],
    name: &str,
    with: &[(&str, &str)],
) -> f64 {
    samples
        .iter()
        .filter(|(n, labels, _)| {
            n == name
                && with
                    .iter()
                    .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, _, v)| v)
        .sum()
}

/// A real Prometheus, scraping `target` every second, with its data in `dir`.
struct Prometheus {
    /// Killed when dropped.
    _child: tokio::process::Child,
    addr: SocketAddr,
    log: std::path::PathBuf,
}

impl Prometheus {
    async fn start(dir: &std::path::Path, target: SocketAddr) -> Prometheus {
        let program = common::peers::prometheus();
        let version = std::process::Command::new(program)
            .arg("--version")
            .output()
            .unwrap();
        eprintln!(
            "{}",
            String::from_utf8_lossy(&version.stdout)
                .lines()
                .next()
                .unwrap_or("?")
        );
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: execgate\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let log = dir.join("prometheus.log");
        let child = tokio::process::Command::new(program)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let p = Prometheus {
            _child: child,
            addr,
            log,
        };
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while tokio::net::TcpStream::connect(addr).await.is_err()
            || get(addr, "/-/ready").await.status != StatusCode::OK
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "prometheus never became ready:\n{}",
                p.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        p
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// An instant query's result vector.
    async fn query(&self, query: &str) -> Vec<Value> {
        let reply = get(self.addr, &format!("/api/v1/query?query={query}")).await;
        let body = reply.json();
        assert_eq!(body["status"], "success", "{body}");
        body["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

/// The sum of an instant query's values whose labels include `with`.
fn total(result: &[Value], with: &[(&str, &str)]) -> f64 {
    result
        .iter()
        .filter(|s| with.iter().all(|(k, v)| s["metric"][*k] == *v))
        .map(|s| s["value"][1].as_str().unwrap().parse::<f64>().unwrap())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scrapes_the_requests_the_daemon_decided() {
    let dir = tempfile::tempdir().unwrap();
    let listen: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let daemon = Process::start(
        dir.path(),
        &[
            ("EXECGATE_METRICS__LISTEN", &listen.to_string()),
            ("EXECGATE_APPROVAL__TIMEOUT_SECS", "300"),
            ("EXECGATE_POLICY__DENY", "shutdown*"),
        ],
    )
    .await;
    let env = daemon.env.clone();
    let out = run_cli(&env, &["allow", "add", "make", "lint"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Three approved by the allowlist, one by policy, one denied by policy.
    for _ in 0..3 {
        let (status, r) = daemon
            .submit(&json!({"agent": "ci-agent", "command": "make lint", "front": "api"}))
            .await;
        assert_eq!(
            (status, r["via"].as_str()),
            (StatusCode::OK, Some("allowlist")),
            "{r}"
        );
    }
    let (_, r) = daemon
        .submit(&json!({"agent": "ci-agent", "command": "ls -la", "front": "mcp"}))
        .await;
    assert_eq!(
        (r["status"].as_str(), r["via"].as_str()),
        (Some("approved"), Some("policy")),
        "{r}"
    );
    let (_, r) = daemon
        .submit(&json!({"agent": "ci-agent", "command": "shutdown now", "front": "mcp"}))
        .await;
    assert_eq!(
        (r["status"].as_str(), r["via"].as_str()),
        (Some("denied"), Some("policy")),
        "{r}"
    );

    // Three asked: one approved and one denied through the CLI, one left waiting.
    let approved = daemon.ask_no_wait("make deploy").await;
    let denied = daemon.ask_no_wait("make release").await;
    let waiting = daemon.ask_no_wait("make publish").await;
    let out = run_cli(&env, &["approve", approved["short_id"].as_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_cli(&env, &["deny", denied["short_id"].as_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // The port serves the exposition, and nothing else.
    let reply = get(listen, "/metrics").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    assert!(
        reply
            .header("content-type")
            .starts_with("application/openmetrics-text"),
        "{}",
        reply.header("content-type")
    );
    let text = reply.text;
    for secret in [
        "make",
        "ci-agent",
        approved["id"].as_str().unwrap(),
        waiting["id"].as_str().unwrap(),
    ] {
        assert!(
            !text.contains(secret),
            "{secret:?} is in the exposition:\n{text}"
        );
    }
    let s = samples(&text);
    assert_eq!(value(&s, "execgate_pending_requests", &[]), 1.0, "{text}");
    assert_eq!(
        value(&s, "execgate_analysis_seconds_count", &[]),
        8.0,
        "{text}"
    );
    assert_eq!(
        value(&s, "execgate_answer_seconds_count", &[("via", "cli")]),
        2.0,
        "{text}"
    );
    assert!(
        value(&s, "execgate_store_commit_seconds_count", &[]) >= 8.0,
        "{text}"
    );
    assert_eq!(
        get(listen, "/v1/requests").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(listen, "/v1/health").await.status,
        StatusCode::NOT_FOUND
    );
    let post = common::web::call(
        listen,
        "POST",
        "/metrics",
        &[("host", &listen.to_string())],
        None,
    )
    .await;
    assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED);

    // Prometheus scrapes the port and answers with what the daemon counted.
    let prometheus = Prometheus::start(dir.path(), listen).await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let (result, scraped) = loop {
        let result = prometheus.query("execgate_requests_total").await;
        let scraped = total(&result, &[]) == 7.0;
        if scraped || tokio::time::Instant::now() > deadline {
            break (result, scraped);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let targets = get(prometheus.addr, "/api/v1/targets").await.text;
    assert!(
        scraped,
        "prometheus did not read 7 requests: {result:?}\ntargets: {targets}\n{}",
        prometheus.log()
    );
    for (verdict, via, n) in [
        ("approved", "allowlist", 3.0),
        ("approved", "policy", 1.0),
        ("denied", "policy", 1.0),
        ("approved", "cli", 1.0),
        ("denied", "cli", 1.0),
    ] {
        assert_eq!(
            total(&result, &[("verdict", verdict), ("via", via)]),
            n,
            "{verdict} via {via}: {result:?}"
        );
    }
    assert_eq!(
        total(&result, &[("via", "allowlist"), ("front", "api")]),
        3.0,
        "{result:?}"
    );
    assert_eq!(
        total(&result, &[("via", "cli"), ("front", "none")]),
        2.0,
        "{result:?}"
    );
    assert_eq!(total(&result, &[("front", "mcp")]), 2.0, "{result:?}");
    let pending = prometheus.query("execgate_pending_requests").await;
    assert_eq!(total(&pending, &[]), 1.0, "{pending:?}");
    let build = prometheus.query("execgate_build_info").await;
    assert_eq!(
        build[0]["metric"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{build:?}"
    );
    let up = prometheus.query("up").await;
    assert_eq!(total(&up, &[("job", "execgate")]), 1.0, "{up:?}");
    drop(prometheus);
    daemon.signal(libc::SIGTERM);
    let (status, log) = daemon.wait().await;
    assert!(status.success(), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_socket_serves_metrics_to_admins_only() {
    let d = TestDaemon::start(&[]).await;
    let r = d.ask_no_wait("secret-agent", "make deploy").await;
    let (status, text) = admin_metrics(&d.admin()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let s = samples(&text);
    assert_eq!(value(&s, "execgate_pending_requests", &[]), 1.0, "{text}");
    for secret in ["secret-agent", "make", r.id.as_str()] {
        assert!(!text.contains(secret), "{secret:?} in:\n{text}");
    }
    let (status, _) = d.decide(&r.id, "deny").await;
    assert_eq!(status, StatusCode::OK);
    let (_, text) = admin_metrics(&d.admin()).await;
    let s = samples(&text);
    assert_eq!(value(&s, "execgate_pending_requests", &[]), 0.0, "{text}");
    assert_eq!(
        value(
            &s,
            "execgate_requests_total",
            &[("verdict", "denied"), ("via", "cli"), ("front", "none")]
        ),
        1.0,
        "{text}"
    );

    // Not an admin: refused like every admin route.
    let other = (uid() + 4242).to_string();
    let d = TestDaemon::start(&[("EXECGATE_ADMIN_UIDS", other.as_str())]).await;
    let (status, body) = admin_metrics(&d.admin()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    // Off: no endpoint, and no port even when one is configured.
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let d = TestDaemon::start(&[
        ("EXECGATE_METRICS__ENABLED", "false"),
        ("EXECGATE_METRICS__LISTEN", listen.as_str()),
    ])
    .await;
    let (status, body) = admin_metrics(&d.admin()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        tokio::net::TcpStream::connect(listen.as_str())
            .await
            .is_err(),
        "something listens on {listen}"
    );
}
