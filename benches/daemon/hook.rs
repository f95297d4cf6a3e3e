//! G. The hook's cost per tool call: `execgate hook claude-code` is a process the agent
//! starts for every tool call, so its whole wall time (spawn → JSON answer → exit) is
//! what a user feels. Measured against spawning `/bin/true` with the same stdin in the
//! same run, interleaved, with the steps in between as a breakdown:
//!
//! - `/bin/true`: what any process costs here (fork, exec, stdin, wait).
//! - `execgate --version`: the binary's own start (loading, clap) and exit.
//! - `hook, no daemon`: start, configuration load, reading and parsing the JSON, and a
//!   refused connect: everything but the decision.
//! - `hook, allowlisted`: the whole thing, against a running daemon with an exact rule.
//!
//! The differences between neighbours are process start, configuration and input, and
//! connect + decision. Target: the hook's median at most 3 ms above `/bin/true`'s.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};

use crate::client::add_exact_rule;
use crate::lab::{Lab, daemon_binary};
use crate::stats::{Stats, show};
use crate::{ALLOWED, Plan};

/// The hook's median may be this much above `/bin/true`'s.
pub const TARGET_ABOVE_TRUE: Duration = Duration::from_millis(3);

pub struct HookCost {
    pub truth: Stats,
    pub version: Stats,
    pub no_daemon: Stats,
    pub hook: Stats,
}

impl HookCost {
    pub fn above_true(&self) -> Duration {
        self.hook.p50.saturating_sub(self.truth.p50)
    }

    pub fn print(&self) {
        println!("\nG. The hook per tool call (spawn to exit, interleaved runs)");
        println!("   {:<28}{}", "", Stats::HEADER);
        for (name, s) in [
            ("/bin/true, same stdin", &self.truth),
            ("execgate --version", &self.version),
            ("hook, no daemon", &self.no_daemon),
            ("hook claude-code, allowed", &self.hook),
        ] {
            println!("   {name:<28}{}", s.row());
        }
        let step = |a: &Stats, b: &Stats| show(a.p50.saturating_sub(b.p50));
        println!(
            "   breakdown of the median: process start {}, configuration + input {}, connect + decision {}",
            step(&self.version, &self.truth),
            step(&self.no_daemon, &self.version),
            step(&self.hook, &self.no_daemon),
        );
        println!(
            "   above /bin/true: {} (target ≤ {})",
            show(self.above_true()),
            show(TARGET_ABOVE_TRUE)
        );
    }

    pub fn json(&self) -> Value {
        json!({
            "bin_true": self.truth.json(),
            "version": self.version.json(),
            "hook_no_daemon": self.no_daemon.json(),
            "hook_allowlisted": self.hook.json(),
            "above_true_p50_us": crate::stats::us(self.above_true()),
        })
    }
}

/// Claude Code's PreToolUse input for the allowlisted command.
fn payload(cwd: &Path) -> Vec<u8> {
    json!({
        "session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": cwd,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": ALLOWED, "description": "build"},
        "tool_use_id": "toolu_bench",
    })
    .to_string()
    .into_bytes()
}

/// One spawn → exit, its stdin written whole; the wall time and the output.
fn once(cmd: &mut Command, stdin: &[u8]) -> Result<(Duration, std::process::Output)> {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("spawning {cmd:?}"))?;
    let mut input = child.stdin.take().context("stdin")?;
    // `/bin/true` may exit before reading: a broken pipe is part of its run.
    let _ = input.write_all(stdin);
    drop(input);
    let out = child.wait_with_output()?;
    Ok((started.elapsed(), out))
}

pub async fn hook_cost(lab: &mut Lab, plan: &Plan) -> Result<HookCost> {
    let daemon = lab.start(&lab.path().join("state/hook.db")).await?;
    add_exact_rule(&lab.admin_socket(), ALLOWED).await?;
    let stdin = payload(lab.path());
    let hook = |socket: &Path| {
        let mut c = Command::new(daemon_binary());
        c.args(["hook", "claude-code"])
            .current_dir(lab.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", lab.path())
            .env("EXECGATE_CONFIG", lab.path().join("execgate.toml"))
            .env("EXECGATE_SOCKET", socket)
            .env("EXECGATE_ADMIN_SOCKET", lab.admin_socket());
        c
    };
    let mut truth = Command::new("/bin/true");
    let mut version = Command::new(daemon_binary());
    version.arg("--version").env_clear();
    let mut allowed = hook(&lab.agent_socket());
    let mut nowhere = hook(&lab.path().join("run/nobody-listens.sock"));

    let runs = plan.hook_runs;
    let (mut t, mut v, mut n, mut h) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs + plan.hook_warmup {
        let keep = i >= plan.hook_warmup;
        let (d, _) = once(&mut truth, &stdin)?;
        keep.then(|| t.push(d));
        let (d, _) = once(&mut version, &[])?;
        keep.then(|| v.push(d));
        let (d, out) = once(&mut nowhere, &stdin)?;
        ensure!(
            out.status.code() == Some(2),
            "the hook with no daemon must block with exit 2: {out:?}"
        );
        keep.then(|| n.push(d));
        let (d, out) = once(&mut allowed, &stdin)?;
        let answer: Value = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("the hook's answer is not JSON: {out:?}"))?;
        ensure!(
            out.status.success() && answer["hookSpecificOutput"]["permissionDecision"] == "allow",
            "the allowlisted command must be allowed: {out:?}"
        );
        keep.then(|| h.push(d));
    }
    drop(daemon);
    Ok(HookCost {
        truth: Stats::of(t)?,
        version: Stats::of(v)?,
        no_daemon: Stats::of(n)?,
        hook: Stats::of(h)?,
    })
}
