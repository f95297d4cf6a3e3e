//! The `execgate` binary: parse the command line, load `--env-file`, set up logging, run
//! a verb.

use std::io::IsTerminal;

use anyhow::Context;
use clap::Parser;
use execgate::cli::{Cli, Verb};
use execgate::config::{Config, Overrides};
use execgate::daemon::{Daemon, StartOptions};
use execgate::systemd;
use execgate::transport::console::ConsoleIo;

fn main() {
    let cli = Cli::parse();
    // What a verb exits with when execgate itself fails before doing anything: `serve`
    // could not start, `run` needs a code no command is likely to use for itself, and
    // `confine` says "not run" as a shell does for a command it cannot execute.
    let failed = match cli.verb {
        Verb::Serve(_) => 1,
        Verb::Run(_) => 125,
        Verb::Confine(_) => 126,
        _ => 2,
    };
    if matches!(cli.verb, Verb::Serve(_)) {
        // First, before any secret is read: the commands the daemon runs share its uid,
        // and a dumpable process's environment and memory are theirs to read in /proc.
        if let Err(e) = execgate::sys::make_non_dumpable() {
            eprintln!("execgate: cannot mark the daemon non-dumpable (prctl): {e}");
            std::process::exit(failed);
        }
    }
    // No file is read from the working directory (an agent can often write there): only
    // the one `--env-file` names. It is loaded before anything reads the environment
    // (the flags' environment defaults, logging, the runtime, the configuration).
    let cli = match &cli.global.env_file {
        None => cli,
        Some(path) => match execgate::config::read_env_file(path) {
            Ok(vars) => {
                for (key, value) in vars {
                    // The real environment wins, as for any env file.
                    if std::env::var_os(&key).is_none() {
                        // SAFETY: no other thread exists yet (the runtime and logging
                        // start below), so nothing reads the environment meanwhile.
                        unsafe { std::env::set_var(&key, value) };
                    }
                }
                // Again, so that `EXECGATE_CONFIG` and `EXECGATE_AGENT` from the file
                // count as the flags' defaults.
                Cli::parse()
            }
            Err(e) => {
                eprintln!("execgate: {e}");
                std::process::exit(failed);
            }
        },
    };
    // A write past RLIMIT_FSIZE raises SIGXFSZ, whose default action kills the process.
    // Ignored, the write fails with EFBIG instead: SQLite reports an error, the request
    // fails closed with 503, and the daemon lives to serve once space returns.
    // SAFETY: setting a signal disposition to SIG_IGN before any thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // Sockets from systemd are taken now, while this is the only thread.
    let activated = match cli.verb {
        Verb::Serve(_) => match execgate::systemd::take_activated_sockets() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("execgate: {e}");
                std::process::exit(1);
            }
        },
        _ => Default::default(),
    };
    // A hook runs once per tool call of a coding agent: it logs nothing, so it starts
    // no logging (see below for its runtime).
    let hook = matches!(&cli.verb, Verb::Hook(h) if h.setup.is_none());
    // Logs go to stderr (journald under systemd). EXECGATE_LOG_FORMAT=json gives one JSON
    // object per line for log pipelines.
    if !hook {
        // The MCP server's stderr is shown by its client; the SDK's notes (a warning for
        // every malformed call, which the client is told of anyway) would drown
        // execgate's own there.
        //
        // The Matrix SDK logs normal events loudly (an ERROR line for every 404 of a new
        // account's empty key backup, a warning on every sync about that backup): its
        // notes are kept to warnings, its HTTP layer to nothing. The transport logs every
        // failure that matters to the owner in its own words.
        let default = match cli.verb {
            Verb::Mcp(_) => "error,execgate=info",
            _ => {
                "info,matrix_sdk=warn,matrix_sdk_base=warn,matrix_sdk_common=warn,matrix_sdk_sqlite=warn,matrix_sdk_crypto=warn,matrix_sdk_crypto::backups=error,matrix_sdk::http_client=off"
            }
        };
        let filter = tracing_subscriber::EnvFilter::try_from_env("EXECGATE_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
        let logs = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr);
        match std::env::var("EXECGATE_LOG_FORMAT").as_deref() {
            Ok("json") => logs.json().init(),
            Ok("text") | Err(_) => logs.with_ansi(std::io::stderr().is_terminal()).init(),
            Ok(other) => {
                eprintln!("execgate: EXECGATE_LOG_FORMAT must be `text` or `json`, not {other:?}");
                std::process::exit(2);
            }
        }
    }
    // The daemon gets worker threads; a client verb makes one call after another, and
    // one thread serves it without the cost of starting others (which a hook, run per
    // tool call, would pay every time).
    let runtime = match cli.verb {
        Verb::Serve(_) => execgate::daemon::runtime(),
        _ => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
    .expect("a tokio runtime");
    let code = runtime.block_on(async {
        match cli.verb {
            Verb::Serve(args) => match serve(&cli.global, args, activated).await {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("execgate: {e:#}");
                    1
                }
            },
            verb => execgate::cli::run(&cli.global, verb).await,
        }
    });
    std::process::exit(code);
}

async fn serve(
    global: &execgate::cli::Global,
    args: execgate::cli::ServeArgs,
    activated: execgate::systemd::Activated,
) -> anyhow::Result<()> {
    // `--web` is kept with the flags, so that a reload loads what the start loaded.
    let overrides = Overrides {
        web: args.web,
        ..global.overrides()
    };
    let config = Config::load(&overrides).context("loading configuration")?;
    // The console approver stands in for a chat, and needs a person at a terminal;
    // under systemd there is none.
    let console = if config.has_chat() {
        None
    } else if std::io::stdin().is_terminal() {
        Some(ConsoleIo::stdio())
    } else {
        tracing::info!(
            "stdin is not a terminal: console approver off (approve with `execgate approve`)"
        );
        None
    };
    // Signal handlers go in before the sockets open: a SIGHUP or SIGTERM that arrives
    // as soon as the daemon answers must find them (SIGHUP's default would kill it).
    let signals = Signals::install()?;
    let daemon = Daemon::start(config, StartOptions { console, activated })
        .await
        .context("starting execgate")?;
    // The page's URL carries its token: shown to the person at the terminal, never
    // written to a log (stderr is the journal under systemd).
    if let Some(url) = daemon.web_url()
        && std::io::stderr().is_terminal()
    {
        eprintln!("execgate: the approvals page is at {url}");
    }
    systemd::ready(&daemon.status_line());
    serve_until_stopped(&daemon, &overrides, signals).await?;
    systemd::stopping();
    daemon.shutdown().await;
    Ok(())
}

/// Serves until SIGTERM or SIGINT, meanwhile telling systemd how things stand and, while
/// the database answers, that the daemon is alive.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> anyhow::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            term: signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
            int: signal(SignalKind::interrupt()).context("installing the SIGINT handler")?,
            hup: signal(SignalKind::hangup()).context("installing the SIGHUP handler")?,
        })
    }
}

async fn serve_until_stopped(
    daemon: &Daemon,
    overrides: &Overrides,
    signals: Signals,
) -> anyhow::Result<()> {
    let Signals {
        mut term,
        mut int,
        mut hup,
    } = signals;
    // The watchdog is fed from this loop, so a stuck loop stops feeding it; the status
    // line is refreshed on the same beat (every 5 s without a watchdog).
    let beat = systemd::watchdog_interval().unwrap_or(std::time::Duration::from_secs(5));
    let watchdog = systemd::watchdog_interval().is_some();
    let mut ticker = tokio::time::interval(beat);
    loop {
        tokio::select! {
            _ = term.recv() => {
                tracing::info!("SIGTERM received");
                return Ok(());
            }
            _ = int.recv() => {
                tracing::info!("SIGINT received");
                return Ok(());
            }
            _ = hup.recv() => {
                tracing::info!("SIGHUP received: reloading the configuration and the allowlist");
                systemd::reloading();
                daemon.reload(Config::load(overrides)).await;
                systemd::ready(&daemon.status_line());
            }
            _ = ticker.tick() => {
                // Only a daemon whose database answers says it is alive.
                if daemon.healthy().await {
                    if watchdog {
                        systemd::watchdog();
                    }
                    systemd::status(&daemon.status_line());
                } else {
                    systemd::status("the database does not answer");
                }
            }
        }
    }
}
