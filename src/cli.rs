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
use crate::transport::render::{clip, visible};

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
    /// List requests waiting for a human.
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

#[derive(Debug, Args)]
pub struct RequestArgs {
    /// The agent name to ask as.
    #[arg(long, env = "EXECGATE_AGENT", default_value = "cli")]
    pub agent: String,
    /// Working directory for the command.
    #[arg(long)]
    pub cwd: Option<String>,
    /// Why the command is needed (shown to the approver).
    #[arg(long)]
    pub reason: Option<String>,
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
    match verb_result(&config, verb).await {
        Ok(code) => code,
        Err(message) => fail(&message),
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
        Verb::Pending(flag) => {
            let list: Vec<Record> = expect(
                &admin,
                Method::GET,
                "/v1/requests?status=pending&limit=10000",
                None,
            )
            .await?;
            print_records(&list, flag.json);
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
            let rule: Rule = expect(&admin, Method::POST, "/v1/allowlist", Some(&body)).await?;
            if json.json {
                print_json(&rule);
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

async fn request(client: &Client, args: RequestArgs) -> Result<i32, String> {
    // A relative --cwd means the caller's directory, not the daemon's.
    let cwd = match args.cwd.as_deref().map(std::path::Path::new) {
        Some(p) if p.is_relative() => {
            let here = std::env::current_dir().map_err(|e| format!("cannot resolve --cwd: {e}"))?;
            Some(here.join(p).to_string_lossy().into_owned())
        }
        _ => args.cwd.clone(),
    };
    let mut body = json!({
        "agent": args.agent,
        "cwd": cwd,
        "reason": args.reason,
        "session": args.session,
        "wait": !args.no_wait,
    });
    if args.cmd.len() == 1 {
        body["command"] = json!(args.cmd[0]);
    } else {
        body["argv"] = json!(args.cmd);
    }
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
        println!("{}", crate::transport::render::outcome(&record));
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
    println!("command:  {}", visible(&r.display_command()));
    if let Some(cwd) = &r.cwd {
        println!("cwd:      {}", visible(cwd));
    }
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
    let rows: Vec<[String; 6]> = list
        .iter()
        .map(|r| {
            [
                r.short_id.clone(),
                r.created_at.format("%Y-%m-%d %H:%M:%S").to_string(),
                visible(&r.agent),
                r.status.to_string(),
                r.via.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                clip(&visible(&r.display_command()), 60),
            ]
        })
        .collect();
    print_table(
        ["ID", "CREATED (UTC)", "AGENT", "STATUS", "VIA", "COMMAND"],
        &rows,
    );
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
                clip(&visible(&r.pattern), 60),
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
