//! The real coding agents — Claude Code, Codex, Gemini CLI and Copilot CLI, pinned by
//! `.ci/peers` — with `execgate hook install AGENT` done in a temporary HOME, run
//! headless against a scripted model (testkit's `agents`): the model calls the agent's
//! shell or file tool, the agent's own hook machinery runs `execgate hook`, and the
//! owner answers at the daemon. What must hold for each agent: an allowlisted command
//! runs; the owner's deny stops it and the model hears why; the owner's approval lets
//! it run; with the daemon down nothing runs; the agent's file tool is asked about too;
//! no agent runs a command the owner has not answered yet; and with `execgate mcp`
//! registered beside the hook, a command run through it asks the owner once.
//!
//! Each finding of issue 31 is a test here that failed against the real agent before
//! execgate was changed for it.

use execgate_testkit as common;

use std::time::Duration;

use common::TestDaemon;
use common::agents::{Agent, AgentRun, Finished, Running, Step, turns_mention};
use execgate::model::{Record, Status, Via};
use hyper::Method;
use serde_json::json;

/// Starts the agent as the tests drive it: Codex with its hook trusted for the run
/// (without that Codex skips the hook: issue 31 finding 1, tested on its own below).
fn start(run: &AgentRun) -> Running {
    run.start_bypassing_codex_hook_trust()
}

/// Waits for a pending request whose command mentions `needle`. `None` when the agent
/// exits first, or the wait outlives the agent's own limit: nothing reached execgate.
async fn pending(d: &TestDaemon, agent: &mut Running, needle: &str) -> Option<Record> {
    let deadline = tokio::time::Instant::now() + common::agents::RUN_LIMIT;
    while tokio::time::Instant::now() < deadline {
        let (_, list) = d
            .admin()
            .call(Method::GET, "/v1/requests?status=pending", None)
            .await
            .unwrap();
        let list: Vec<Record> = serde_json::from_value(list).unwrap();
        if let Some(r) = list
            .into_iter()
            .find(|r| r.command.display().contains(needle))
        {
            return Some(r);
        }
        if agent.exited() {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

/// Every request the daemon recorded, newest first.
async fn requests(d: &TestDaemon) -> Vec<Record> {
    let (_, list) = d
        .admin()
        .call(Method::GET, "/v1/requests?limit=50", None)
        .await
        .unwrap();
    serde_json::from_value(list).unwrap()
}

/// The agent ran to its end: it exited 0, having taken the whole script (so the tool
/// call was made and its outcome went back to the model).
fn assert_ran_the_script(run: &AgentRun, out: &Finished) {
    assert!(
        out.status.is_some_and(|s| s.success()),
        "{}: {}",
        run.agent.word(),
        out.describe()
    );
    assert_eq!(
        run.model.steps_left(),
        0,
        "{}: the agent stopped before the script's end: {}",
        run.agent.word(),
        out.describe()
    );
    assert!(
        run.model.turns().len() >= 2,
        "{}: no turn after the tool call: {}",
        run.agent.word(),
        out.describe()
    );
}

async fn an_allowlisted_command_runs(agent: Agent) {
    let d = TestDaemon::start(&[]).await;
    let command = "touch marker-allowlisted";
    let (status, body) = d
        .add_rule(json!({"agent": null, "pattern": command, "kind": "exact"}))
        .await;
    assert!(status.is_success(), "{body}");
    let run = AgentRun::new(agent, &d, vec![agent.shell(command)]).await;
    let out = start(&run).finish().await;
    assert_ran_the_script(&run, &out);
    assert!(
        run.project.join("marker-allowlisted").exists(),
        "{}: the allowlisted command did not run: {}",
        agent.word(),
        out.describe()
    );
    let asked = requests(&d).await;
    let r = asked
        .iter()
        .find(|r| r.command.display() == command)
        .unwrap_or_else(|| panic!("{}: execgate was not asked: {asked:?}", agent.word()));
    assert_eq!(r.status, Status::Approved, "{r:?}");
    assert_eq!(r.agent, agent.word());
    assert_eq!(
        r.front.as_deref(),
        Some(format!("hook:{}", agent.word()).as_str())
    );
}

async fn the_owners_deny_stops_the_command_and_the_model_hears_why(agent: Agent) {
    let d = TestDaemon::start(&[]).await;
    let command = "touch marker-denied";
    let run = AgentRun::new(agent, &d, vec![agent.shell(command)]).await;
    let mut running = start(&run);
    let Some(r) = pending(&d, &mut running, command).await else {
        panic!(
            "{}: no request reached execgate: {}",
            agent.word(),
            running.finish().await.describe()
        );
    };
    let said = d.cli(&["deny", &r.short_id]).await;
    assert!(said.status.success(), "{said:?}");
    let out = running.finish().await;
    assert_ran_the_script(&run, &out);
    assert!(
        !run.project.join("marker-denied").exists(),
        "{}: a denied command ran: {}",
        agent.word(),
        out.describe()
    );
    // The refusal names the request, so the model (and the user reading along) can
    // refer to it.
    assert!(
        turns_mention(&run.model, &r.short_id),
        "{}: the model never heard of request {}: {:?}",
        agent.word(),
        r.short_id,
        run.model.turns().last()
    );
}

async fn the_owners_approval_lets_the_command_run(agent: Agent) {
    let d = TestDaemon::start(&[]).await;
    let command = "touch marker-approved";
    let run = AgentRun::new(agent, &d, vec![agent.shell(command)]).await;
    let mut running = start(&run);
    let Some(r) = pending(&d, &mut running, command).await else {
        panic!(
            "{}: no request reached execgate: {}",
            agent.word(),
            running.finish().await.describe()
        );
    };
    // Not yet answered: not yet run.
    assert!(!run.project.join("marker-approved").exists());
    let said = d.cli(&["approve", &r.short_id]).await;
    assert!(said.status.success(), "{said:?}");
    let out = running.finish().await;
    assert_ran_the_script(&run, &out);
    assert!(
        run.project.join("marker-approved").exists(),
        "{}: the approved command did not run: {}",
        agent.word(),
        out.describe()
    );
}

async fn with_the_daemon_down_nothing_runs(agent: Agent) {
    let mut d = TestDaemon::start(&[]).await;
    let command = "touch marker-unasked";
    let run = AgentRun::new(agent, &d, vec![agent.shell(command)]).await;
    let socket = d.config().socket.clone();
    d.stop().await;
    assert!(!socket.exists(), "the stopped daemon's socket is gone");
    let out = start(&run).finish().await;
    assert_ran_the_script(&run, &out);
    assert!(
        !run.project.join("marker-unasked").exists(),
        "{}: a command ran with execgate down: {}",
        agent.word(),
        out.describe()
    );
    // The hook's own words reach the model: it was the hook that blocked the call.
    assert!(
        turns_mention(&run.model, "could not ask for approval"),
        "{}: the model never heard why: {:?}",
        agent.word(),
        run.model.turns().last()
    );
}

async fn the_file_tool_is_asked_about_and_a_deny_blocks_it(agent: Agent) {
    let d = TestDaemon::start(&[]).await;
    // The edit names the file by its absolute path, known once the project is made.
    let run = AgentRun::new(agent, &d, vec![]).await;
    run.model
        .set_script(agent.edit(&run.project, "notes.txt", "first line", "edited line"));
    let file = run.project.join("notes.txt");
    std::fs::write(&file, "first line\n").unwrap();
    let mut running = start(&run);
    let Some(r) = pending(&d, &mut running, "notes.txt").await else {
        let out = running.finish().await;
        panic!(
            "{}: the file tool never reached execgate (the file now holds {:?}; execgate \
             recorded {:?}): {}",
            agent.word(),
            std::fs::read_to_string(&file).unwrap_or_default(),
            requests(&d).await,
            out.describe()
        );
    };
    assert!(
        r.command.tool().is_some(),
        "a file edit is a tool request: {r:?}"
    );
    d.cli(&["deny", &r.short_id]).await;
    let out = running.finish().await;
    assert_ran_the_script(&run, &out);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "first line\n",
        "{}: a denied edit was made: {}",
        agent.word(),
        out.describe()
    );
    assert!(
        turns_mention(&run.model, &r.short_id),
        "{}: the model never heard of request {}",
        agent.word(),
        r.short_id
    );
}

/// The agent's own hook timeout is shorter than the owner takes to answer: the agent
/// must not take that as leave to run the command. The hook answers first, naming the
/// request, which stays for the owner.
async fn a_hook_timeout_before_the_owner_answers_runs_nothing(agent: Agent) {
    let d = TestDaemon::start(&[]).await;
    let command = "touch marker-unanswered";
    let run = AgentRun::new(agent, &d, vec![agent.shell(command)]).await;
    run.install_hook_with_timeout(&d, 3).await;
    let mut running = start(&run);
    let Some(r) = pending(&d, &mut running, command).await else {
        panic!(
            "{}: no request reached execgate: {}",
            agent.word(),
            running.finish().await.describe()
        );
    };
    let out = running.finish().await;
    assert!(
        !run.project.join("marker-unanswered").exists(),
        "{}: the agent ran the command while request {} was pending: {}",
        agent.word(),
        r.short_id,
        out.describe()
    );
    assert_ran_the_script(&run, &out);
    assert!(
        turns_mention(&run.model, &r.short_id),
        "{}: the model never heard that request {} still waits",
        agent.word(),
        r.short_id
    );
    // Left for the owner, not cancelled with the hook.
    assert_eq!(d.record(&r.id).await.status, Status::Pending);
}

/// The owner answers after the agent's hook timeout: the model makes the same call
/// again, which gets the owner's answer (the owner is asked once).
async fn a_late_approval_reaches_the_same_call_made_again(agent: Agent) {
    let d = TestDaemon::start(&[]).await;
    let command = "touch marker-late";
    let run = AgentRun::new(agent, &d, vec![agent.shell(command), agent.shell(command)]).await;
    run.install_hook_with_timeout(&d, 3).await;
    let mut running = start(&run);
    let Some(r) = pending(&d, &mut running, command).await else {
        panic!(
            "{}: no request reached execgate: {}",
            agent.word(),
            running.finish().await.describe()
        );
    };
    // Once the first call has been told the request still waits.
    let told = tokio::time::Instant::now() + Duration::from_secs(30);
    while !turns_mention(&run.model, &r.short_id) {
        assert!(
            tokio::time::Instant::now() < told,
            "{}: the model never heard that request {} still waits",
            agent.word(),
            r.short_id
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let approved = d.cli(&["approve", &r.short_id]).await;
    assert!(approved.status.success(), "{approved:?}");
    let out = running.finish().await;
    assert!(
        run.project.join("marker-late").exists(),
        "{}: the approved call made again did not run: {}",
        agent.word(),
        out.describe()
    );
    let asked: Vec<Record> = requests(&d)
        .await
        .into_iter()
        .filter(|q| q.command.display().contains(command))
        .collect();
    assert_eq!(
        asked.len(),
        1,
        "{}: the owner was asked again: {asked:?}",
        agent.word()
    );
}

/// Both doors open: the hook installed and `execgate mcp` registered with the agent. The
/// model runs a command through execgate's own `execute_command`, which asks the owner
/// itself: the owner is asked once, the command runs after that one approval, and the
/// model gets the short result (Claude Code and Codex hand it `structuredContent`), not
/// the caller's uid and pid.
///
/// What the hook sees of execgate's MCP tools (issue 31, finding 6): Claude Code
/// `mcp__execgate__execute_command` with `mcp_server: {name, source}` beside it; Codex
/// the same name, nothing beside it; Gemini CLI `mcp_execgate_execute_command` with
/// `mcp_context: {server_name, tool_name, command, args}`; Copilot CLI
/// `execgate-execute_command`. The hook entries execgate installs for Claude Code and
/// Gemini CLI name their tools, so those never reach it; Codex's (`*`) and Copilot's
/// (every tool) do, and ask the owner a first time.
async fn execgate_mcp_asks_the_owner_once(agent: Agent) {
    let d = TestDaemon::start(&[]).await;
    // Under `out/`: execgate runs it confined to the project, where nothing new may be
    // made at the top (docs/decisions.md#the-guard-stays-out-of-reach).
    let command = "touch out/marker-mcp";
    let script = agent.mcp_call("execute_command", json!({ "command": command }));
    let mut run = AgentRun::new(agent, &d, script).await;
    std::fs::create_dir_all(run.project.join("out")).unwrap();
    run.add_execgate_mcp(&d).await;
    let mut running = start(&run);
    let Some(first) = pending(&d, &mut running, command).await else {
        panic!(
            "{}: no request reached execgate: {}",
            agent.word(),
            running.finish().await.describe()
        );
    };
    assert!(!run.project.join("out/marker-mcp").exists());
    let said = d.cli(&["approve", &first.short_id]).await;
    assert!(said.status.success(), "{said:?}");
    // A second question for the same call: answered no, so that the agent ends now.
    if let Some(again) = pending(&d, &mut running, command).await {
        d.cli(&["deny", &again.short_id]).await;
        running.finish().await;
        panic!(
            "{}: the owner was asked twice for one call: first through {:?}, then through {:?}",
            agent.word(),
            first.front,
            again.front
        );
    }
    let out = running.finish().await;
    assert_ran_the_script(&run, &out);
    assert!(
        run.project.join("out/marker-mcp").exists(),
        "{}: the approved command did not run: {}",
        agent.word(),
        out.describe()
    );
    assert_eq!(first.front.as_deref(), Some("mcp"), "{first:?}");
    assert!(turns_mention(&run.model, "exit_code"));
    assert!(
        !turns_mention(&run.model, "peer_uid"),
        "{}: the model was handed the whole record: {:?}",
        agent.word(),
        run.model.turns().last()
    );
}

/// Claude Code gives up on an MCP call at its tool timeout (`MCP_TOOL_TIMEOUT`) and
/// tells the server with `notifications/cancelled`: the request is withdrawn, recorded
/// `cancelled` `via: withdrawn` (not `disconnect`: the connection was not lost), the
/// owner's card says so, and nothing runs (issue 31, finding 8).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_codes_mcp_tool_timeout_withdraws_the_request() {
    let agent = Agent::ClaudeCode;
    let d = TestDaemon::start(&[]).await;
    let command = "touch marker-withdrawn";
    let script = agent.mcp_call("execute_command", json!({ "command": command }));
    let mut run = AgentRun::new(agent, &d, script).await;
    run.add_execgate_mcp(&d).await;
    run.env("MCP_TOOL_TIMEOUT", "3000");
    let mut running = start(&run);
    let Some(r) = pending(&d, &mut running, command).await else {
        panic!(
            "no request reached execgate: {}",
            running.finish().await.describe()
        );
    };
    let out = running.finish().await;
    let r = d.terminal(&r.id).await;
    assert_eq!(
        (r.status, r.via),
        (Status::Cancelled, Some(Via::Withdrawn)),
        "{r:?}: {}",
        out.describe()
    );
    assert!(!run.project.join("marker-withdrawn").exists());
}

/// Claude Code's `Monitor` runs a shell command (in the background). Asked about, and
/// approved by the owner, it runs; the owner is asked once.
///
/// Issue 31, finding 7, with Claude Code 2.1.332: a hook entry whose matcher names
/// `Bash` but not `Monitor` is run for Monitor with `tool_name: "Bash"` and
/// `tool_input: {command, description}`, and its allow is ignored: Claude Code falls
/// back to its own permissions (in `-p`, "needs approval"; a `PermissionRequest` hook
/// fires, with `tool_name: "Monitor"` under matcher `*`, `"Bash"` under `Bash`). An entry
/// that names `Monitor` gets `tool_name: "Monitor"`, `tool_input: {command,
/// description, timeout_ms}`, and its allow is obeyed; a deny is obeyed either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_an_approved_monitor_command() {
    let agent = Agent::ClaudeCode;
    let d = TestDaemon::start(&[]).await;
    let command = "touch marker-monitor";
    let script = vec![
        // Monitor is deferred: its schema is loaded by a tool search first.
        Step::Call {
            name: "ToolSearch".into(),
            input: json!({"query": "select:Monitor"}),
        },
        Step::Call {
            name: "Monitor".into(),
            input: json!({"command": command, "description": "scripted", "timeout_ms": 10000}),
        },
    ];
    let run = AgentRun::new(agent, &d, script).await;
    let mut running = start(&run);
    let Some(r) = pending(&d, &mut running, command).await else {
        panic!(
            "no request reached execgate: {}",
            running.finish().await.describe()
        );
    };
    // The owner judges the command itself, as for Bash, not a tool named Monitor.
    assert_eq!(r.command.display(), command, "{r:?}");
    let said = d.cli(&["approve", &r.short_id]).await;
    assert!(said.status.success(), "{said:?}");
    if let Some(again) = pending(&d, &mut running, command).await {
        d.cli(&["deny", &again.short_id]).await;
        running.finish().await;
        panic!("the owner was asked twice: {r:?}, then {again:?}");
    }
    let out = running.finish().await;
    assert_ran_the_script(&run, &out);
    assert!(
        run.project.join("marker-monitor").exists(),
        "the approved Monitor command did not run (the model heard {:?}): {}",
        run.model
            .turns()
            .get(2)
            .and_then(|t| t["messages"].as_array()?.last().cloned()),
        out.describe()
    );
}

/// Codex exactly as a user runs it after `execgate hook install codex`: no flag of any
/// kind, and the hook must gate the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_as_installed_asks_before_it_runs_a_command() {
    let d = TestDaemon::start(&[]).await;
    let command = "touch marker-as-installed";
    let run = AgentRun::new(Agent::Codex, &d, vec![Agent::Codex.shell(command)]).await;
    let mut running = run.start();
    let asked = pending(&d, &mut running, command).await;
    if let Some(r) = &asked {
        d.cli(&["deny", &r.short_id]).await;
    }
    let out = running.finish().await;
    assert!(
        asked.is_some(),
        "Codex never asked execgate (the command ran: {}): {}",
        run.project.join("marker-as-installed").exists(),
        out.describe()
    );
    assert!(!run.project.join("marker-as-installed").exists());
}

/// One test per agent and check, each named for both.
macro_rules! case {
    ($(#[$attr:meta])* $name:ident: $check:ident($agent:expr)) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            $check($agent).await
        }
    };
}

case!(claude_code_runs_an_allowlisted_command: an_allowlisted_command_runs(Agent::ClaudeCode));
case!(codex_runs_an_allowlisted_command: an_allowlisted_command_runs(Agent::Codex));
case!(gemini_runs_an_allowlisted_command: an_allowlisted_command_runs(Agent::Gemini));
case!(copilot_runs_an_allowlisted_command: an_allowlisted_command_runs(Agent::Copilot));

case!(claude_code_obeys_a_deny: the_owners_deny_stops_the_command_and_the_model_hears_why(Agent::ClaudeCode));
case!(codex_obeys_a_deny: the_owners_deny_stops_the_command_and_the_model_hears_why(Agent::Codex));
case!(gemini_obeys_a_deny: the_owners_deny_stops_the_command_and_the_model_hears_why(Agent::Gemini));
case!(copilot_obeys_a_deny: the_owners_deny_stops_the_command_and_the_model_hears_why(Agent::Copilot));

case!(claude_code_runs_an_approved_command: the_owners_approval_lets_the_command_run(Agent::ClaudeCode));
case!(codex_runs_an_approved_command: the_owners_approval_lets_the_command_run(Agent::Codex));
case!(gemini_runs_an_approved_command: the_owners_approval_lets_the_command_run(Agent::Gemini));
case!(copilot_runs_an_approved_command: the_owners_approval_lets_the_command_run(Agent::Copilot));

case!(claude_code_runs_nothing_with_the_daemon_down: with_the_daemon_down_nothing_runs(Agent::ClaudeCode));
case!(codex_runs_nothing_with_the_daemon_down: with_the_daemon_down_nothing_runs(Agent::Codex));
case!(gemini_runs_nothing_with_the_daemon_down: with_the_daemon_down_nothing_runs(Agent::Gemini));
case!(copilot_runs_nothing_with_the_daemon_down: with_the_daemon_down_nothing_runs(Agent::Copilot));

case!(claude_code_asks_before_editing_a_file: the_file_tool_is_asked_about_and_a_deny_blocks_it(Agent::ClaudeCode));
case!(codex_asks_before_editing_a_file: the_file_tool_is_asked_about_and_a_deny_blocks_it(Agent::Codex));
case!(gemini_asks_before_editing_a_file: the_file_tool_is_asked_about_and_a_deny_blocks_it(Agent::Gemini));
case!(copilot_asks_before_editing_a_file: the_file_tool_is_asked_about_and_a_deny_blocks_it(Agent::Copilot));

case!(claude_code_waits_out_its_hook_timeout: a_hook_timeout_before_the_owner_answers_runs_nothing(Agent::ClaudeCode));
case!(codex_waits_out_its_hook_timeout: a_hook_timeout_before_the_owner_answers_runs_nothing(Agent::Codex));
case!(gemini_waits_out_its_hook_timeout: a_hook_timeout_before_the_owner_answers_runs_nothing(Agent::Gemini));
case!(copilot_waits_out_its_hook_timeout: a_hook_timeout_before_the_owner_answers_runs_nothing(Agent::Copilot));

case!(claude_code_gets_a_late_approval: a_late_approval_reaches_the_same_call_made_again(Agent::ClaudeCode));
case!(codex_gets_a_late_approval: a_late_approval_reaches_the_same_call_made_again(Agent::Codex));
case!(gemini_gets_a_late_approval: a_late_approval_reaches_the_same_call_made_again(Agent::Gemini));
case!(copilot_gets_a_late_approval: a_late_approval_reaches_the_same_call_made_again(Agent::Copilot));

case!(claude_code_asks_once_through_execgate_mcp: execgate_mcp_asks_the_owner_once(Agent::ClaudeCode));
case!(codex_asks_once_through_execgate_mcp: execgate_mcp_asks_the_owner_once(Agent::Codex));
case!(gemini_asks_once_through_execgate_mcp: execgate_mcp_asks_the_owner_once(Agent::Gemini));
case!(copilot_asks_once_through_execgate_mcp: execgate_mcp_asks_the_owner_once(Agent::Copilot));
