//! The `execgate` command line: `serve` runs the daemon; every other verb is a client of
//! its sockets (requests on `agent.sock`, decisions and rules on `admin.sock`).
//!
//! `args`: the verbs and flags; this file: what each client verb does; `print`: how
//! what comes back is shown.

mod args;
mod audit;
pub mod hook;
mod mcp;
mod print;
mod tool_call;

pub use args::*;

use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use crate::client::Client;
use crate::config::Config;
use crate::model::{self, Answer, Confine, Decision, Record, Rule, Status, parse_duration};
use crate::policy::suggest::Suggestion;
use crate::render;
use crate::runs::RunEntry;
use crate::text::visible;
use print::{print_json, print_record, print_records, print_rules, print_runs, print_suggestions};

/// Runs a client verb; returns the process exit code.
pub async fn run(global: &Global, verb: Verb) -> i32 {
    // The MCP server starts whatever its configuration: a client that cannot start it
    // shows the user little, while each tool call can say why it cannot ask.
    if let Verb::Mcp(args) = verb {
        let config = Config::load(&global.overrides()).map_err(|e| e.to_string());
        return mcp::serve(config, args.agent_name).await;
    }
    let config = match Config::load(&global.overrides()) {
        Ok(c) => c,
        // A hook that cannot read its configuration still answers its agent: a deny.
        Err(e) => match &verb {
            Verb::Hook(HookArgs {
                setup: None,
                which: Some(which),
                ..
            }) => {
                let why = format!("its configuration does not load: {e}");
                let answer = hook::failed(*which, hook::default_event(*which), &why);
                hook::emit(&answer);
                return answer.code;
            }
            _ => return fail(&e.to_string()),
        },
    };
    // `run` exits with the command's code, so its own failures need a code no command
    // is likely to use for itself.
    let own_failure = if matches!(verb, Verb::Run(_)) { 125 } else { 2 };
    // Editing an agent's settings file is local work: no socket is involved.
    let verb = match verb {
        Verb::Hook(HookArgs {
            setup: Some(setup), ..
        }) => return hook_setup(&config, global, setup),
        verb => verb,
    };
    match verb_result(&config, verb).await {
        Ok(code) => code,
        Err(message) => {
            fail(&message);
            own_failure
        }
    }
}

/// `execgate hook install|uninstall AGENT`.
fn hook_setup(config: &Config, global: &Global, setup: HookSetup) -> i32 {
    use hook::install::{Action, Options};
    let (action, args) = match setup {
        HookSetup::Install(args) => (Action::Install, args),
        HookSetup::Uninstall(args) => (Action::Uninstall, args),
        HookSetup::Status(args) => return hook_status(config, global, args),
    };
    let options = Options {
        action,
        agent: args.which,
        project: args.project.as_deref(),
        print: args.print,
        timeout: args.timeout,
    };
    match hook::install::run(config, &global.overrides(), options) {
        Ok(()) => 0,
        Err(message) => fail(&message),
    }
}

/// `execgate hook status [AGENT]`: 0 when every entry there is current and active, and
/// the one agent named has one; else 1.
fn hook_status(config: &Config, global: &Global, args: HookStatusArgs) -> i32 {
    use clap::ValueEnum;
    let agents = match args.which {
        Some(agent) => vec![agent],
        None => HookAgent::value_variants().to_vec(),
    };
    let mut good = true;
    for agent in agents {
        let status =
            hook::install::status(config, &global.overrides(), agent, args.project.as_deref());
        println!("{}", status.line);
        good &= status.good || (!status.present && args.which.is_none());
    }
    if good { 0 } else { 1 }
}

fn fail(message: &str) -> i32 {
    eprintln!("execgate: {message}");
    2
}

/// `execgate confine`: builds the confinement the daemon would (`Policy::confinement_plan`)
/// for this command in the working directory, puts it on this process and becomes the
/// command. Returns only when that fails: 126, and nothing ran.
fn confine_command(config: &Config, args: ConfineArgs) -> i32 {
    use std::os::unix::process::CommandExt;
    let confine = match (args.read_only, args.workspace, args.network) {
        (true, _, false) => Confine::ReadOnly,
        (true, _, true) => Confine::ReadOnlyNetwork,
        (false, true, false) => Confine::Workspace,
        (false, true, true) => Confine::WorkspaceNetwork,
        (false, false, _) => Confine::Harmless,
    };
    if args.network && confine == Confine::Harmless {
        fail("--network needs --read-only or --workspace: a harmless command has none");
        return 126;
    }
    let command = match args.cmd.as_slice() {
        [line] => model::Command::Line(line.clone()),
        argv => model::Command::Argv(argv.to_vec()),
    };
    let cwd = match std::env::current_dir().and_then(|d| d.canonicalize()) {
        Ok(cwd) => cwd,
        Err(e) => {
            fail(&format!("cannot find the working directory: {e}"));
            return 126;
        }
    };
    let policy = match crate::policy::Policy::new(std::sync::Arc::new(config.clone())) {
        Ok(policy) => policy,
        Err(e) => {
            fail(&format!("the configuration does not compile: {e}"));
            return 126;
        }
    };
    let subject = crate::policy::Subject {
        agent: "confine",
        session: None,
        command: command.as_ref(),
        cwd: Some(&cwd),
        run: true,
        shell: None,
        uid: None,
    };
    let path = std::env::var("PATH").unwrap_or_else(|_| crate::exec::DEFAULT_PATH.into());
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let place = crate::policy::confinement::Place {
        path: &crate::exec::absolute_path(&path),
        tmp: None,
        home: home.as_deref(),
    };
    let ruleset = policy
        .confinement_plan(&policy.settings(), subject, confine, &place)
        .and_then(|plan| plan.map(|p| p.prepare()).transpose());
    let ruleset = match ruleset {
        Ok(Some(ruleset)) => ruleset,
        Ok(None) => unreachable!("every confinement here has a plan"),
        Err(why) => {
            fail(&format!("cannot confine the command ({confine}): {why}"));
            return 126;
        }
    };
    let mut child = match &command {
        model::Command::Line(line) => {
            let mut c = std::process::Command::new("/bin/sh");
            c.arg("-c").arg(line);
            c
        }
        model::Command::Argv(argv) => {
            let mut c = std::process::Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
        model::Command::Tool(_) => unreachable!("built from words above"),
    };
    if let Err(e) = crate::confine::restrict(ruleset.raw_fd()) {
        fail(&format!("cannot put the confinement on: {e}"));
        return 126;
    }
    let e = child.exec();
    fail(&format!("cannot run the command: {e}"));
    126
}

async fn verb_result(config: &Config, verb: Verb) -> Result<i32, String> {
    let agent = Client::new(&config.socket);
    let admin = Client::new(&config.admin_socket);
    match verb {
        Verb::Serve(_) => unreachable!("serve is handled by main"),
        Verb::Web(WebVerb::Url) => web_url(config),
        Verb::Mcp(_) => unreachable!("mcp is handled by run"),
        // (`hook install|uninstall` returned above.)
        Verb::Hook(HookArgs {
            which,
            agent_name,
            timeout,
            ..
        }) => match which {
            Some(which) => Ok(hook::run(config, which, agent_name, timeout).await),
            None => {
                Err("name the agent: execgate hook claude-code|codex|gemini|cursor|copilot".into())
            }
        },
        Verb::Request(args) => request(&agent, args).await,
        Verb::Run(args) => run_command(&agent, args).await,
        Verb::Confine(args) => Ok(confine_command(config, args)),
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
        Verb::History(args) if args.rules => audit::rule_history(&admin, args).await,
        Verb::Audit(AuditVerb::Verify { head, json }) => {
            audit::verify(&admin, head, json.json).await
        }
        Verb::Audit(AuditVerb::Export { output }) => audit::export(&admin, output).await,
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
        Verb::Show { id, json } => {
            let record: Value = expect(
                &admin,
                Method::GET,
                &format!("/v1/requests/{}", encode(&id)),
                None,
            )
            .await?;
            if json.json {
                print_json(&record);
            } else {
                let record: Record = serde_json::from_value(record)
                    .map_err(|e| format!("unexpected answer from execgate: {e}"))?;
                println!("{}", render::whole(&record, chrono::Utc::now()));
            }
            Ok(0)
        }
        Verb::Approve {
            id,
            mode,
            duration,
            json,
        } => {
            let answer = approval(mode.as_deref(), duration.as_deref())?;
            decide(&admin, &id, answer, json.json).await
        }
        Verb::Deny { id, json } => decide(&admin, &id, Decision::Deny.into(), json.json).await,
        Verb::Allow(AllowVerb::Add {
            agent,
            glob,
            tool,
            force,
            expires_at,
            json,
            pattern,
        }) => {
            let body = json!({
                "agent": agent,
                "pattern": pattern.join(" "),
                "kind": if tool { "tool" } else if glob { "glob" } else { "exact" },
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
        Verb::Allow(AllowVerb::Suggest { days, min, json }) => {
            let path = format!("/v1/allowlist/suggestions?days={days}&min={min}");
            let found: Vec<Suggestion> = expect(&admin, Method::GET, &path, None).await?;
            if json.json {
                print_json(&found);
            } else {
                print_suggestions(&found, days);
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

/// `execgate web url`: the address `web.listen` names (else the one `serve --web` uses)
/// and the token the daemon made; read from files, so it works with the daemon stopped.
fn web_url(config: &Config) -> Result<i32, String> {
    use crate::config::WebConfig;
    let addr = config.web.listen.unwrap_or(WebConfig::DEFAULT_LISTEN);
    if addr.port() == 0 {
        return Err(format!(
            "web.listen is {addr}: port 0 takes any free port, so the URL is only known to the running daemon (it prints it at start on a terminal); name a port"
        ));
    }
    let token = crate::web_token::read(&WebConfig::token_file(&config.database))
        .map_err(|e| e.to_string())?;
    println!("{}", crate::web_token::url(addr, &token));
    Ok(0)
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
        "front": "cli",
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
        "front": "cli",
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

/// `execgate approve ID [MODE] [DURATION]` as an answer: the mode (once by default), and
/// for always or session how long the rule lasts; a duration alone means always.
fn approval(mode: Option<&str>, duration: Option<&str>) -> Result<Answer, String> {
    const USAGE: &str =
        "usage: execgate approve ID [once|always|session] [DURATION like 30m, 2h, 7d]";
    let decision = |word: &str| match word {
        "once" => Some(Decision::AllowOnce),
        "always" => Some(Decision::AllowAlways),
        "session" => Some(Decision::AllowSession),
        _ => None,
    };
    let secs = |word: &str| {
        parse_duration(word).ok_or_else(|| {
            format!(
                "{word:?} is not a duration (a number and s, m, h, d or w, at most 366d); {USAGE}"
            )
        })
    };
    let (decision, for_secs) = match (mode, duration) {
        (None, _) => (Decision::AllowOnce, None),
        (Some(word), None) if decision(word).is_none() && parse_duration(word).is_some() => {
            (Decision::AllowAlways, Some(secs(word)?))
        }
        (Some(word), duration) => {
            let decision = decision(word).ok_or_else(|| {
                format!("{word:?} is not a mode (once, always or session) or a duration; {USAGE}")
            })?;
            (decision, duration.map(secs).transpose()?)
        }
    };
    Answer::new(decision, for_secs).map_err(|e| format!("{e}; {USAGE}"))
}

async fn decide(admin: &Client, id: &str, answer: Answer, as_json: bool) -> Result<i32, String> {
    let path = format!("/v1/requests/{}/decision", encode(id));
    let record: Record = expect(
        admin,
        Method::POST,
        &path,
        Some(&json!({ "decision": answer.decision, "for_secs": answer.for_secs })),
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
