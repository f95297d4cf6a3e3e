//! The `execgate` command line: `serve` runs the daemon; every other verb is a client of
//! its sockets (requests on `agent.sock`, decisions and rules on `admin.sock`).

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use crate::client::Client;
use crate::config::{Config, Overrides};
use crate::model::{Record, Rule, Status};
use crate::render;
use crate::runs::RunEntry;
use crate::text::{clip_chars, visible};

#[derive(Debug, Parser)]
#[command(
    name = "execgate",
    version,
    about = "Puts a human between AI agents and the shell"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Args)]
pub struct Global {
    /// Configuration file (default: $XDG_CONFIG_HOME/execgate/execgate.toml, or ~/.config/execgate/execgate.toml, else /etc/execgate/execgate.toml).
    #[arg(long, global = true, env = "EXECGATE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Load environment variables (KEY=value lines) from FILE; variables already set win.
    /// No file is read unless named here (a `.env` in the working directory is not).
    #[arg(long, global = true, value_name = "FILE")]
    pub env_file: Option<PathBuf>,
    /// Agent socket path (overrides `socket`).
    #[arg(long, global = true, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Admin socket path (overrides `admin_socket`).
    #[arg(long, global = true, value_name = "PATH")]
    pub admin_socket: Option<PathBuf>,
    /// SQLite database path (overrides `database`).
    #[arg(long, global = true, value_name = "PATH")]
    pub database: Option<PathBuf>,
}

impl Global {
    pub fn overrides(&self) -> Overrides {
        Overrides {
            config_file: self.config.clone(),
            env_file: self.env_file.clone(),
            socket: self.socket.clone(),
            admin_socket: self.admin_socket.clone(),
            database: self.database.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Verb {
    /// Run the daemon.
    Serve,
    /// Ask for a decision on a command and print the record.
    /// Exit 0 approved, 1 not approved (or still pending with --no-wait), 2 error.
    Request(RequestArgs),
    /// Ask for a command and run it once approved (run mode); print its output.
    /// Exit: the command's own code (128+N when killed by signal N), 124 timed out,
    /// 126 not approved, 127 could not start, 125 execgate error.
    Run(RunArgs),
    /// List requests waiting for a human, and approved commands waiting to run.
    Pending(JsonFlag),
    /// List past requests, newest first.
    History(HistoryArgs),
    /// Approve a pending request: once (default) or always (stores an exact rule).
    Approve {
        /// Short id (a1b2) or full id.
        id: String,
        #[arg(value_parser = ["once", "always"], default_value = "once")]
        mode: String,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Deny a pending request.
    Deny {
        id: String,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Manage the allowlist.
    #[command(subcommand)]
    Allow(AllowVerb),
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `request` and `run` both say about who asks, where, and why.
#[derive(Debug, Args)]
pub struct AskArgs {
    /// The agent name to ask as.
    #[arg(long, env = "EXECGATE_AGENT", default_value = "cli")]
    pub agent: String,
    /// Working directory for the command (relative: to where you run this).
    #[arg(long)]
    pub cwd: Option<String>,
    /// Why the command is needed (shown to the approver).
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct RequestArgs {
    #[command(flatten)]
    pub ask: AskArgs,
    /// Session id, for session-scoped grants.
    #[arg(long)]
    pub session: Option<String>,
    /// Return at once with the pending record instead of waiting.
    #[arg(long)]
    pub no_wait: bool,
    #[command(flatten)]
    pub json: JsonFlag,
    /// One argument: a shell command line. Several: a program and its arguments (no shell).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub ask: AskArgs,
    /// Execution timeout in milliseconds (default `exec.default_timeout_ms`).
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// text: the command's stdout and stderr as they are; json: the record; yaml:
    /// exit_code, stdout and stderr (plus timed_out and error when set).
    #[arg(long, value_enum, default_value = "text")]
    pub format: RunFormat,
    /// One argument: a shell command line (run with /bin/sh -c). Several: a program and
    /// its arguments (no shell). Standard input is passed to the command.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum RunFormat {
    Text,
    Json,
    Yaml,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[arg(long)]
    pub agent: Option<String>,
    #[arg(long)]
    pub status: Option<Status>,
    #[arg(long, default_value_t = 20)]
    pub limit: u32,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum AllowVerb {
    /// Add a rule: exact by default, a glob with --glob.
    Add {
        /// Limit the rule to one agent (default: every agent).
        #[arg(long)]
        agent: Option<String>,
        /// Treat PATTERN as a glob (matched per command segment).
        #[arg(long)]
        glob: bool,
        /// Accept a glob that would approve nearly everything.
        #[arg(long)]
        force: bool,
        /// When the rule stops applying (RFC 3339, e.g. 2026-12-01T00:00:00Z).
        #[arg(long)]
        expires_at: Option<String>,
        #[command(flatten)]
        json: JsonFlag,
        /// The command (exact) or glob; several words are joined with spaces.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        pattern: Vec<String>,
    },
    /// List rules.
    List(JsonFlag),
    /// Remove a rule by id.
    Rm { id: i64 },
}

/// Runs a client verb; returns the process exit code.
pub async fn run(global: &Global, verb: Verb) -> i32 {
    let config = match Config::load(&global.overrides()) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    // `run` exits with the command's code, so its own failures need a code no command
    // is likely to use for itself.
    let own_failure = if matches!(verb, Verb::Run(_)) { 125 } else { 2 };
    match verb_result(&config, verb).await {
        Ok(code) => code,
        Err(message) => {
            fail(&message);
            own_failure
        }
    }
}

fn fail(message: &str) -> i32 {
    eprintln!("execgate: {message}");
    2
}

async fn verb_result(config: &Config, verb: Verb) -> Result<i32, String> {
    let agent = Client::new(&config.socket);
    let admin = Client::new(&config.admin_socket);
    match verb {
        Verb::Serve => unreachable!("serve is handled by main"),
        Verb::Request(args) => request(&agent, args).await,
        Verb::Run(args) => run_command(&agent, args).await,
        Verb::Pending(flag) => {
            let list: Vec<Record> = expect(
                &admin,
                Method::GET,
                "/v1/requests?status=pending&limit=10000",
                None,
            )
            .await?;
            print_records(&list, flag.json);
            if !flag.json {
                let runs: Vec<RunEntry> = expect(&admin, Method::GET, "/v1/runs", None).await?;
                print_runs(&runs);
            }
            Ok(0)
        }
        Verb::History(args) => {
            let mut path = format!("/v1/requests?limit={}", args.limit);
            if let Some(a) = &args.agent {
                path.push_str(&format!("&agent={}", encode(a)));
            }
            if let Some(s) = args.status {
                path.push_str(&format!("&status={s}"));
            }
            let list: Vec<Record> = expect(&admin, Method::GET, &path, None).await?;
            print_records(&list, args.json.json);
            Ok(0)
        }
        Verb::Approve { id, mode, json } => {
            let decision = if mode == "always" {
                "allow-always"
            } else {
                "allow-once"
            };
            decide(&admin, &id, decision, json.json).await
        }
        Verb::Deny { id, json } => decide(&admin, &id, "deny", json.json).await,
        Verb::Allow(AllowVerb::Add {
            agent,
            glob,
            force,
            expires_at,
            json,
            pattern,
        }) => {
            let body = json!({
                "agent": agent,
                "pattern": pattern.join(" "),
                "kind": if glob { "glob" } else { "exact" },
                "expires_at": expires_at,
                "force": force,
            });
            let added: serde_json::Value =
                expect(&admin, Method::POST, "/v1/allowlist", Some(&body)).await?;
            let rule: Rule = serde_json::from_value(added.clone()).map_err(|e| {
                format!("the daemon answered with something that is not a rule: {e}")
            })?;
            for warning in added["warnings"].as_array().into_iter().flatten() {
                eprintln!("warning: {}", warning.as_str().unwrap_or_default());
            }
            if json.json {
                print_json(&added);
            } else {
                println!(
                    "added rule #{}: {} {} for {}",
                    rule.id,
                    rule.kind,
                    visible(&rule.pattern),
                    rule.agent.as_deref().unwrap_or("all agents")
                );
            }
            Ok(0)
        }
        Verb::Allow(AllowVerb::List(flag)) => {
            let rules: Vec<Rule> = expect(&admin, Method::GET, "/v1/allowlist", None).await?;
            if flag.json {
                print_json(&rules);
            } else {
                print_rules(&rules);
            }
            Ok(0)
        }
        Verb::Allow(AllowVerb::Rm { id }) => {
            let (status, body) = admin
                .call(Method::DELETE, &format!("/v1/allowlist/{id}"), None)
                .await
                .map_err(|e| e.to_string())?;
            if status != StatusCode::NO_CONTENT {
                return Err(error_message(status, &body));
            }
            println!("removed rule #{id}");
            Ok(0)
        }
    }
}

/// A relative --cwd means the caller's directory, not the daemon's.
fn caller_cwd(cwd: Option<&str>) -> Result<Option<String>, String> {
    Ok(match cwd.map(std::path::Path::new) {
        Some(p) if p.is_relative() => {
            let here = std::env::current_dir().map_err(|e| format!("cannot resolve --cwd: {e}"))?;
            Some(here.join(p).to_string_lossy().into_owned())
        }
        _ => cwd.map(String::from),
    })
}

/// One CMD argument is a shell line (`command`), several are `argv`.
fn command_fields(body: &mut Value, cmd: &[String]) {
    if cmd.len() == 1 {
        body["command"] = json!(cmd[0]);
    } else {
        body["argv"] = json!(cmd);
    }
}

async fn run_command(client: &Client, args: RunArgs) -> Result<i32, String> {
    use std::io::{IsTerminal, Read};
    // The command reads what this process reads; a terminal is not data.
    let input = if std::io::stdin().is_terminal() {
        None
    } else {
        let mut data = String::new();
        std::io::stdin()
            .read_to_string(&mut data)
            .map_err(|e| format!("cannot read standard input (it must be UTF-8 text): {e}"))?;
        (!data.is_empty()).then_some(data)
    };
    let mut body = json!({
        "agent": args.ask.agent,
        "cwd": caller_cwd(args.ask.cwd.as_deref())?,
        "reason": args.ask.reason,
        "timeout_ms": args.timeout_ms,
        "input": input,
        "run": true,
    });
    command_fields(&mut body, &args.cmd);
    let (status, value) = client
        .call(Method::POST, "/v1/requests", Some(&body))
        .await
        .map_err(|e| e.to_string())?;
    if status != StatusCode::OK {
        return Err(error_message(status, &value));
    }
    let record: Record = serde_json::from_value(value)
        .map_err(|e| format!("unexpected answer from execgate: {e}"))?;
    let Some(result) = record
        .result
        .as_ref()
        .filter(|_| record.status == Status::Approved)
    else {
        if let RunFormat::Json = args.format {
            print_json(&record);
        }
        eprintln!(
            "execgate: {}",
            record
                .error
                .clone()
                .unwrap_or_else(|| format!("command was not approved ({})", record.status))
        );
        return Ok(126);
    };
    match args.format {
        RunFormat::Json => print_json(&record),
        RunFormat::Yaml => print!("{}", crate::yaml::result(result)),
        RunFormat::Text => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(result.stdout.as_bytes());
            let _ = std::io::stderr().write_all(result.stderr.as_bytes());
            if let Some(e) = &result.error {
                eprintln!("execgate: {e}");
            }
        }
    }
    Ok(if result.timed_out {
        124
    } else if let Some(code) = result.exit_code {
        code
    } else if let Some(signal) = result.signal {
        128 + signal
    } else {
        // It never started (the error says why).
        127
    })
}

async fn request(client: &Client, args: RequestArgs) -> Result<i32, String> {
    let cwd = caller_cwd(args.ask.cwd.as_deref())?;
    let mut body = json!({
        "agent": args.ask.agent,
        "cwd": cwd,
        "reason": args.ask.reason,
        "session": args.session,
        "wait": !args.no_wait,
    });
    command_fields(&mut body, &args.cmd);
    let (status, value) = client
        .call(Method::POST, "/v1/requests", Some(&body))
        .await
        .map_err(|e| e.to_string())?;
    if !(status == StatusCode::OK || status == StatusCode::ACCEPTED) {
        return Err(error_message(status, &value));
    }
    let record: Record = serde_json::from_value(value)
        .map_err(|e| format!("unexpected answer from execgate: {e}"))?;
    if args.json.json {
        print_json(&record);
    } else {
        print_record(&record);
    }
    Ok(if record.status == Status::Approved {
        0
    } else {
        1
    })
}

async fn decide(admin: &Client, id: &str, decision: &str, as_json: bool) -> Result<i32, String> {
    let path = format!("/v1/requests/{}/decision", encode(id));
    let record: Record = expect(
        admin,
        Method::POST,
        &path,
        Some(&json!({ "decision": decision })),
    )
    .await?;
    if as_json {
        print_json(&record);
    } else {
        println!("{}", render::outcome(&record));
    }
    Ok(0)
}

/// Calls and decodes a success body, or turns the error envelope into its message.
async fn expect<T: serde::de::DeserializeOwned>(
    client: &Client,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Result<T, String> {
    let (status, value) = client
        .call(method, path, body)
        .await
        .map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(error_message(status, &value));
    }
    serde_json::from_value(value).map_err(|e| format!("unexpected answer from execgate: {e}"))
}

fn error_message(status: StatusCode, body: &Value) -> String {
    match body["error"]["message"].as_str() {
        Some(m) => format!("{m} ({})", status.as_u16()),
        None => format!("execgate answered {status}"),
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn print_json<T: serde::Serialize>(value: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, value);
    let _ = writeln!(out);
}

fn print_record(r: &Record) {
    println!("id:       {} ({})", r.short_id, r.id);
    println!("agent:    {}", visible(&r.agent));
    if let Some(uid) = r.peer_uid {
        println!(
            "peer:     uid {uid}{}",
            r.peer_pid.map_or(String::new(), |p| format!(", pid {p}"))
        );
    }
    println!("command:  {}", visible(&r.command.display()));
    if let Some(input) = &r.input {
        let line = render::input_line(input);
        println!("input:    {}", line.trim_start_matches("Input: "));
    }
    if let Some(cwd) = &r.cwd {
        println!("cwd:      {}", visible(cwd));
    }
    println!(
        "run:      {}",
        if r.run {
            "yes (execgate runs it)"
        } else {
            "no"
        }
    );
    println!("status:   {}", r.status);
    if let Some(d) = r.decision {
        println!("decision: {d}");
    }
    if let Some(v) = r.via {
        println!("via:      {v}");
    }
    if let Some(by) = &r.decided_by {
        println!("by:       {}", visible(by));
    }
    println!(
        "risk:     {} ({})",
        r.risk,
        r.risk_reasons
            .iter()
            .map(|s| visible(s))
            .collect::<Vec<_>>()
            .join("; ")
    );
    if let Some(e) = &r.error {
        println!("error:    {}", visible(e));
    }
}

fn print_records(list: &[Record], as_json: bool) {
    if as_json {
        return print_json(&list);
    }
    if list.is_empty() {
        println!("(none)");
        return;
    }
    let rows: Vec<[String; 8]> = list
        .iter()
        .map(|r| {
            // Input is part of what is approved: its size is on the row.
            let stdin = r
                .input
                .as_ref()
                .map_or(String::new(), |i| format!(" [{} B stdin]", i.bytes));
            [
                r.short_id.clone(),
                r.created_at.format("%Y-%m-%d %H:%M:%S").to_string(),
                visible(&r.agent),
                r.status.to_string(),
                r.risk.to_string(),
                r.via.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                r.result.as_ref().map_or_else(|| "-".into(), run_summary),
                clip_chars(&visible(&r.command.display()), 60) + &stdin,
            ]
        })
        .collect();
    print_table(
        [
            "ID",
            "CREATED (UTC)",
            "AGENT",
            "STATUS",
            "RISK",
            "VIA",
            "RAN",
            "COMMAND",
        ],
        &rows,
    );
}

/// How a run ended, in a few characters: `exit 0 12ms`, `timeout 30000ms`, `signal 9`.
fn run_summary(r: &crate::model::ExecResult) -> String {
    let how = if r.timed_out {
        "timeout".to_string()
    } else if let Some(code) = r.exit_code {
        format!("exit {code}")
    } else if let Some(signal) = r.signal {
        format!("signal {signal}")
    } else {
        "not started".to_string()
    };
    format!("{how} {}ms", r.duration_ms)
}

/// Approved commands waiting for a slot, and those running.
fn print_runs(runs: &[RunEntry]) {
    if runs.is_empty() {
        return;
    }
    println!();
    let now = chrono::Utc::now();
    let rows: Vec<[String; 4]> = runs
        .iter()
        .map(|e| {
            let state = match e.started_at {
                Some(t) => format!("running {}s", (now - t).num_seconds().max(0)),
                None => format!("queued {}s", (now - e.queued_at).num_seconds().max(0)),
            };
            [
                e.short_id.clone(),
                visible(&e.agent),
                state,
                clip_chars(&visible(&e.command), 60),
            ]
        })
        .collect();
    print_table(["ID", "AGENT", "RUN", "COMMAND"], &rows);
}

fn print_rules(rules: &[Rule]) {
    if rules.is_empty() {
        println!("(none)");
        return;
    }
    let rows: Vec<[String; 6]> = rules
        .iter()
        .map(|r| {
            [
                r.id.to_string(),
                r.agent.clone().unwrap_or_else(|| "*".into()),
                r.kind.to_string(),
                r.use_count.to_string(),
                r.expires_at
                    .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
                    .unwrap_or_else(|| "-".into()),
                clip_chars(&visible(&r.pattern), 60),
            ]
        })
        .collect();
    print_table(["ID", "AGENT", "KIND", "USES", "EXPIRES", "PATTERN"], &rows);
}

fn print_table<const N: usize>(header: [&str; N], rows: &[[String; N]]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == N {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<w$}  "));
            }
        }
        s
    };
    println!("{}", line(header.to_vec()));
    for row in rows {
        println!("{}", line(row.iter().map(String::as_str).collect()));
    }
}
