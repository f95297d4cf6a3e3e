//! The daemon as systemd runs it: `sd_notify` messages on a notify socket (READY only
//! after the crash sweep, WATCHDOG, STATUS, STOPPING) and a socket passed in by socket
//! activation. No systemd here: the test plays its part.

use execgate_testkit as common;

use std::os::fd::AsRawFd;
use std::process::Stdio;
use std::time::Duration;

use common::process::Process;
use common::*;
use hyper::{Method, StatusCode};
use tokio::net::UnixDatagram;

/// `execgate serve` with `env`, stderr piped, and an optional setup run in the child.
fn spawn(dir: &std::path::Path, env: &[(String, String)]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_execgate"));
    cmd.current_dir(dir)
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Receives notify messages until one contains `needle` (bounded); returns them all.
async fn until(sock: &UnixDatagram, needle: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut buf = vec![0u8; 4096];
    let found = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let n = sock.recv(&mut buf).await.unwrap();
            let msg = String::from_utf8_lossy(&buf[..n]).into_owned();
            let hit = msg.contains(needle);
            seen.push(msg);
            if hit {
                return;
            }
        }
    })
    .await;
    assert!(found.is_ok(), "no {needle:?} among {seen:?}");
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_comes_after_the_sweep_then_watchdog_status_and_stopping() {
    let dir = tempfile::tempdir().unwrap();
    // A crash leaves a request pending.
    let first = Process::start(dir.path(), &[]).await;
    first.ask_no_wait("make deploy").await;
    first.signal(libc::SIGKILL);
    let _ = first.wait().await;

    let notify_path = dir.path().join("notify.sock");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    let mut env = env_for(dir.path(), &[]);
    env.push(("NOTIFY_SOCKET".into(), notify_path.display().to_string()));
    env.push(("WATCHDOG_USEC".into(), "400000".into()));
    let mut child = spawn(dir.path(), &env).spawn().unwrap();

    let seen = until(&notify, "READY=1").await;
    // Ready means swept: the crash's pending row is already cancelled.
    {
        let conn = db::open(&db_path(dir.path()));
        let pending: i64 = conn
            .query_row(
                "SELECT count(*) FROM exec_approval WHERE status = 'pending'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(pending, 0, "READY=1 was sent before the sweep");
    }
    let ready = seen.last().unwrap();
    assert!(ready.contains("STATUS=0 pending"), "{ready}");

    // The watchdog is fed (every 200 ms here), and the status follows the traffic.
    let client = execgate::client::Client::new(config_for(&env).socket);
    let body = serde_json::json!({"agent": "a", "command": "make test", "wait": false});
    let (status, _) = client
        .call(Method::POST, "/v1/requests", Some(&body))
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED);
    until(&notify, "WATCHDOG=1").await;
    until(&notify, "STATUS=1 pending, 1 requests served").await;

    // A reload says so, then ready again.
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGHUP) };
    until(&notify, "RELOADING=1").await;
    until(&notify, "READY=1").await;

    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGTERM) };
    until(&notify, "STOPPING=1").await;
    assert!(child.wait().await.unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activated_socket_is_served_and_left_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_for(dir.path(), &[]);
    let socket = config_for(&env).socket;
    std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        socket.parent().unwrap(),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    // systemd's part: bind the socket, pass it as fd 3 named "agent", with LISTEN_PID set
    // to the daemon's own pid (the shell's, which exec keeps).
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let fd = listener.as_raw_fd();
    let mut env = env.clone();
    env.push(("LISTEN_FDS".into(), "1".into()));
    env.push(("LISTEN_FDNAMES".into(), "agent".into()));
    env.push(("SERVE_BINARY".into(), env!("CARGO_BIN_EXE_execgate").into()));
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.current_dir(dir.path())
        .args(["-c", "LISTEN_PID=$$ exec \"$SERVE_BINARY\" serve"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for (k, v) in &env {
        cmd.env(k, v);
    }
    // SAFETY: dup2 is async-signal-safe; it runs in the child between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    drop(listener);

    let client = execgate::client::Client::new(&socket);
    let mut served = false;
    for _ in 0..500 {
        if let Ok((StatusCode::OK, _)) = client.call(Method::GET, "/v1/health", None).await {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(served, "the passed socket is served");
    // The admin socket is the daemon's own.
    let admin = execgate::client::Client::new(config_for(&env).admin_socket);
    assert_eq!(
        admin
            .call(Method::GET, "/v1/requests", None)
            .await
            .unwrap()
            .0,
        StatusCode::OK
    );
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGTERM) };
    assert!(child.wait().await.unwrap().success());
    assert!(
        socket.exists(),
        "an activated socket is systemd's: left in place"
    );
    assert!(
        !config_for(&env).admin_socket.exists(),
        "the daemon's own socket is removed"
    );
}
