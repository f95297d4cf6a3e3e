//! H. An MCP tool call: what going through `execgate mcp` adds to asking the daemon.
//! One MCP session (the official Rust SDK's client on a spawned `execgate mcp`) calls
//! `request_approval` for the allowlisted command; interleaved with it, the same request
//! is POSTed straight to the agent socket on a fresh connection, as the server itself
//! sends it. The difference is the MCP layer: JSON-RPC over the pipes, the SDK's
//! dispatch, reading the arguments and writing the result.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use hyper::{Method, StatusCode};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::client::add_exact_rule;
use crate::lab::{Lab, daemon_binary};
use crate::stats::{Stats, ratio, show, times};
use crate::{ALLOWED, Plan};

pub struct McpCost {
    pub direct: Stats,
    pub mcp: Stats,
}

impl McpCost {
    pub fn above_direct(&self) -> Duration {
        self.mcp.p50.saturating_sub(self.direct.p50)
    }

    pub fn print(&self) {
        println!("\nH. An MCP tool call (request_approval, allowlisted; interleaved)");
        println!("   {:<28}{}", "", Stats::HEADER);
        for (name, s) in [
            ("agent socket, new conn", &self.direct),
            ("MCP request_approval", &self.mcp),
        ] {
            println!("   {name:<28}{}", s.row());
        }
        println!(
            "   MCP above the socket: {} at p50 ({} the socket's p50)",
            show(self.above_direct()),
            times(ratio(self.mcp.p50, self.direct.p50)),
        );
    }

    pub fn json(&self) -> Value {
        json!({
            "direct": self.direct.json(),
            "mcp": self.mcp.json(),
            "above_direct_p50_us": crate::stats::us(self.above_direct()),
        })
    }
}

pub async fn mcp_cost(lab: &mut Lab, plan: &Plan) -> Result<McpCost> {
    let daemon = lab.start(&lab.path().join("state/mcp.db")).await?;
    add_exact_rule(&lab.admin_socket(), ALLOWED).await?;
    let mut child = tokio::process::Command::new(daemon_binary())
        .args(["mcp", "--agent", "bench"])
        .current_dir(lab.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", lab.path())
        .env("EXECGATE_CONFIG", lab.path().join("execgate.toml"))
        .env("EXECGATE_SOCKET", lab.agent_socket())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .context("spawning execgate mcp")?;
    let stdin = child.stdin.take().context("stdin")?;
    let stdout = child.stdout.take().context("stdout")?;
    let session = ().serve((stdout, stdin)).await.context("opening the MCP session")?;
    let cwd = lab.path().canonicalize()?;
    let body =
        json!({"agent": "bench", "command": ALLOWED, "cwd": cwd, "front": "mcp", "wait": true});
    let socket = execgate::client::Client::new(lab.agent_socket());
    let args = json!({"command": ALLOWED})
        .as_object()
        .cloned()
        .unwrap_or_default();

    let (mut direct, mut mcp) = (Vec::new(), Vec::new());
    for i in 0..plan.mcp_runs + plan.mcp_warmup {
        let keep = i >= plan.mcp_warmup;
        let started = Instant::now();
        let (status, record) = socket
            .call(Method::POST, "/v1/requests", Some(&body))
            .await?;
        let took = started.elapsed();
        ensure!(
            status == StatusCode::OK && record["status"] == "approved",
            "the allowlisted request must be approved: {status} {record}"
        );
        keep.then(|| direct.push(took));

        let started = Instant::now();
        let result = session
            .call_tool(CallToolRequestParams::new("request_approval").with_arguments(args.clone()))
            .await?;
        let took = started.elapsed();
        ensure!(
            result.is_error != Some(true)
                && result.structured_content.as_ref().map(|r| &r["status"])
                    == Some(&json!("approved")),
            "the allowlisted request must be approved through MCP: {result:?}"
        );
        keep.then(|| mcp.push(took));
    }
    session.cancel().await?;
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    drop(daemon);
    Ok(McpCost {
        direct: Stats::of(direct)?,
        mcp: Stats::of(mcp)?,
    })
}
