//! The `execgate` binary: parse the command line, set up logging, run a verb.

use std::io::IsTerminal;

use anyhow::Context;
use clap::Parser;
use execgate::cli::{Cli, Verb};
use execgate::config::Config;
use execgate::daemon::{Daemon, StartOptions};
use execgate::transport::console::ConsoleIo;

fn main() {
    // A .env in the working directory is a convenience for development; a broken one
    // is an error, not something to skip silently.
    if let Err(e) = dotenvy::from_path(".env")
        && !e.not_found()
    {
        eprintln!("execgate: cannot read .env: {e}");
        std::process::exit(2);
    }
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("EXECGATE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let code = runtime.block_on(async {
        match cli.verb {
            Verb::Serve => match serve(&cli.global).await {
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

async fn serve(global: &execgate::cli::Global) -> anyhow::Result<()> {
    let config = Config::load(&global.overrides()).context("loading configuration")?;
    // The console approver stands in for a chat, and needs a person at a terminal;
    // under systemd there is none.
    let console = if config.telegram.bot_token.is_some() {
        None
    } else if std::io::stdin().is_terminal() {
        Some(ConsoleIo::stdio())
    } else {
        tracing::info!(
            "stdin is not a terminal: console approver off (approve with `execgate approve`)"
        );
        None
    };
    let daemon = Daemon::start(config, StartOptions { console })
        .await
        .context("starting execgate")?;
    wait_for_signal().await?;
    daemon.shutdown().await;
    Ok(())
}

/// SIGINT (ctrl-c), SIGTERM (systemd's stop) or SIGHUP (the terminal went away): each
/// stops the daemon the orderly way, so pending requests end as `cancelled`.
async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut hup = signal(SignalKind::hangup()).context("installing the SIGHUP handler")?;
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received"),
        _ = int.recv() => tracing::info!("SIGINT received"),
        _ = hup.recv() => tracing::info!("SIGHUP received"),
    }
    Ok(())
}
