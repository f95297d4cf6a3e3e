//! The approvals page against a real daemon: in a real headless Chromium (a pending
//! request appears without a reload, its countdown runs, the owner's answers are
//! recorded as `via: web`, cards leave when a request is answered anywhere, the history
//! and allowlist tabs work, a phone-sized window still shows the buttons, an agent's
//! markup stays text), and over plain HTTP (no token, no access; a forged Host, a
//! foreign Origin and a hostile uid change nothing; every answer carries the security
//! headers).

use std::time::Duration;

use execgate_testkit as common;

use common::browser::Browser;
use common::web::{Page, raw};
use common::*;
use execgate::config::WebConfig;
use execgate::model::{Decision, Record, Status, Via};
use hyper::StatusCode;
use serde_json::{Value, json};

const WEB: (&str, &str) = ("EXECGATE_WEB__LISTEN", "127.0.0.1:0");
const LONG: (&str, &str) = ("EXECGATE_APPROVAL__TIMEOUT_SECS", "300");

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// ---- The browser ---------------------------------------------------------------------

/// Runs `script` in the page and returns what it returns.
async fn js(b: &Browser, script: &str) -> Value {
    b.client
        .execute(script, vec![])
        .await
        .unwrap_or_else(|e| panic!("{script}: {e}"))
}

/// Waits (bounded) until `script` returns `want`.
async fn until(b: &Browser, script: &str, want: Value) {
    let held = eventually(|| {
        let got = js(b, script);
        let want = &want;
        async move { got.await == *want }
    })
    .await;
    if !held {
        panic!("{script} returned {}, not {want}", js(b, script).await);
    }
}

/// The page opened at its URL, its event stream live.
async fn open(page: &Page) -> Browser {
    let b = Browser::start().await;
    b.client.goto(&page.url()).await.unwrap();
    live(&b).await;
    b
}

async fn live(b: &Browser) {
    until(
        b,
        "return document.getElementById('status').dataset.state",
        json!("live"),
    )
    .await;
}

fn card_css(id: &str) -> String {
    format!(".card[data-id=\"{id}\"]")
}

/// Waits for the card of request `id` and returns its text.
async fn card(b: &Browser, id: &str) -> String {
    let css = card_css(id);
    until(
        b,
        &format!("return document.querySelector('{css}') !== null"),
        json!(true),
    )
    .await;
    b.element(&css).await.text().await.unwrap()
}

async fn card_gone(b: &Browser, id: &str) {
    let css = card_css(id);
    until(
        b,
        &format!("return document.querySelector('{css}') === null"),
        json!(true),
    )
    .await;
}

/// Clicks a card's answer, as the owner does.
async fn answer(b: &Browser, id: &str, decision: &str) {
    let css = format!("{} button[data-decision=\"{decision}\"]", card_css(id));
    b.click(&css).await;
}

/// The record says the page decided it, as `decision`.
fn by_web(done: &Record, status: Status, decision: Decision) {
    assert_eq!(
        (
            done.status,
            done.decision,
            done.via,
            done.decided_by.as_deref()
        ),
        (status, Some(decision), Some(Via::Web), Some("web")),
        "{done:?}"
    );
}

async fn decided(d: &TestDaemon, id: &str) -> Record {
    d.terminal(id).await
}

/// Where a test leaves what it wants a person to look at.
fn artefact(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("web");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Submits a request that waits (run mode must), in the background.
fn waiting(d: &TestDaemon, body: Value) -> tokio::task::JoinHandle<Value> {
    let agent = d.agent();
    tokio::spawn(async move {
        agent
            .call(hyper::Method::POST, "/v1/requests", Some(&body))
            .await
            .map(|(_, record)| record)
            .unwrap_or_default()
    })
}

async fn pending(d: &TestDaemon, body: Value) -> Record {
    let (status, record) = d.submit(body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{record}");
    serde_json::from_value(record).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_sees_requests_live_and_answers_them() {
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    let b = open(&page).await;
    // The token left the address bar (and so bookmarks and screen shares).
    assert_eq!(
        js(&b, "return location.href").await,
        json!(format!("http://{}/", page.addr))
    );
    // Marks this document: a reload would lose it.
    js(&b, "window.notReloaded = true; return true").await;

    let r = d.ask_no_wait("builder", "make deploy").await;
    let text = card(&b, &r.id).await;
    for part in [
        &r.short_id,
        "builder",
        "make deploy",
        "needs-review",
        "Allow once",
        "Deny",
    ] {
        assert!(text.contains(part), "the card lacks {part:?}:\n{text}");
    }
    // The countdown runs.
    let countdown = format!(
        "return document.querySelector('{} .countdown').textContent",
        card_css(&r.id)
    );
    let first = js(&b, &countdown).await;
    assert!(first.as_str().unwrap().ends_with("left"), "{first}");
    let runs = eventually(|| {
        let got = js(&b, &countdown);
        let first = &first;
        async move { got.await != *first }
    })
    .await;
    assert!(runs, "the countdown stayed at {first}");

    answer(&b, &r.id, "allow-once").await;
    let done = decided(&d, &r.id).await;
    by_web(&done, Status::Approved, Decision::AllowOnce);
    card_gone(&b, &r.id).await;
    // The Pending tab tells what was decided meanwhile.
    until(
        &b,
        &format!(
            "return document.querySelector('#feed li[data-id=\"{}\"]') !== null",
            r.id
        ),
        json!(true),
    )
    .await;

    // A few requests as an owner meets them, for the screenshot.
    let push = pending(
        &d,
        json!({
            "agent": "claude-code", "session": "b7e2c9", "front": "hook:claude-code",
            "command": "git push --force origin main", "cwd": "/tmp",
            "reason": "publish the rebased branch", "wait": false,
        }),
    )
    .await;
    let write = pending(
        &d,
        json!({
            "agent": "claude-code", "session": "b7e2c9", "front": "hook:claude-code",
            "tool": {"name": "Write", "input": {
                "file_path": "/srv/app/config/database.yml",
                "content": "url: postgres://app@db/app\n",
            }},
            "wait": false,
        }),
    )
    .await;
    let tee = waiting(
        &d,
        json!({
            "agent": "builder", "command": "tee -a notes.txt", "cwd": "/tmp",
            "input": "ship it on Friday\n", "run": true, "reason": "keep a note of the plan",
        }),
    );
    let tee_id = d.pending_for("tee -a notes.txt").await.id;
    for id in [&push.id, &write.id, &tee_id] {
        card(&b, id).await;
    }
    let tee_text = card(&b, &tee_id).await;
    assert!(tee_text.contains("execgate runs it itself"), "{tee_text}");
    assert!(tee_text.contains("18 bytes"), "{tee_text}");
    let write_text = card(&b, &write.id).await;
    assert!(
        write_text.contains("Tool Write") && write_text.contains("/srv/app/config/database.yml"),
        "{write_text}"
    );
    // What each grant would save.
    assert!(
        write_text.contains(
            "Always saves a tool rule for agent claude-code: Write; This session saves it for session b7e2c9 only."
        ),
        "{write_text}"
    );
    // Room for more than one card.
    b.client.set_window_size(1280, 1000).await.unwrap();
    let shot = artefact("pending.png");
    b.screenshot(&shot).await;
    println!(
        "screenshot of the page with three pending requests: {}",
        shot.display()
    );

    // Deny.
    answer(&b, &push.id, "deny").await;
    let done = decided(&d, &push.id).await;
    by_web(&done, Status::Denied, Decision::Deny);
    card_gone(&b, &push.id).await;

    // This session, for 2 hours: a rule for this agent and session only, that expires.
    let select = format!("{} select.grant-time", card_css(&write.id));
    b.choose(&select, "7200").await;
    answer(&b, &write.id, "allow-session").await;
    let done = decided(&d, &write.id).await;
    assert_eq!(
        (done.status, done.decision, done.via),
        (
            Status::Approved,
            Some(Decision::AllowSession),
            Some(Via::Web)
        )
    );
    let rules = page.get("/v1/allowlist").await.json();
    let rule = rules
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["source_request"] == write.id.as_str())
        .unwrap_or_else(|| panic!("no rule made by {}: {rules}", write.id));
    assert_eq!(
        (rule["agent"].as_str(), rule["session"].as_str()),
        (Some("claude-code"), Some("b7e2c9"))
    );
    assert_eq!(rule["created_by"], "web");
    let expires: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(rule["expires_at"].clone()).unwrap();
    let hours = (expires - chrono::Utc::now()).num_minutes();
    assert!((115..=120).contains(&hours), "expires in {hours} minutes");

    // Answered elsewhere: the card leaves.
    let out = d.cli(&["deny", &tee_id]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    card_gone(&b, &tee_id).await;
    assert_eq!(tee.await.unwrap()["status"], "denied");
    assert_eq!(
        js(
            &b,
            "return document.getElementById('pending-count').textContent"
        )
        .await,
        json!("0")
    );
    assert_eq!(
        js(&b, "return window.notReloaded === true").await,
        json!(true)
    );
    b.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_and_allowlist_tabs() {
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    let older = d.ask_no_wait("reviewer", "make lint").await;
    d.decide(&older.id, "deny").await;
    let newer = d.ask_no_wait("builder", "make deploy").await;
    let b = open(&page).await;

    // History: everything, then one agent's, then by status.
    b.click("#tab-history").await;
    let rows =
        "return [...document.querySelectorAll('#history-rows tr.row')].map(r => r.dataset.id)";
    until(&b, rows, json!([newer.id, older.id])).await;
    b.type_in("#history-agent", "reviewer").await;
    b.click("#history-apply").await;
    until(&b, rows, json!([older.id])).await;
    b.element("#history-agent").await.clear().await.unwrap();
    b.choose("#history-status", "pending").await;
    b.click("#history-apply").await;
    until(&b, rows, json!([newer.id])).await;
    // A row opens to its details.
    b.click(&format!("#history-rows tr.row[data-id=\"{}\"]", newer.id))
        .await;
    until(
        &b,
        "return document.querySelector('#history-rows tr.details') !== null",
        json!(true),
    )
    .await;

    // The allowlist: add a rule for one agent, expiring in a day.
    b.click("#tab-allowlist").await;
    b.type_in("#rule-pattern", "cargo test --workspace").await;
    b.type_in("#rule-agent", "builder").await;
    b.choose("#rule-expiry", "86400").await;
    b.click("#rule-add").await;
    let patterns =
        "return [...document.querySelectorAll('#rules-rows td.pattern')].map(t => t.textContent)";
    until(&b, patterns, json!(["cargo test --workspace"])).await;
    let rules = page.get("/v1/allowlist").await.json();
    let rule = &rules[0];
    assert_eq!(
        (rule["agent"].as_str(), rule["kind"].as_str()),
        (Some("builder"), Some("exact"))
    );
    assert_eq!(rule["created_by"], "web");
    assert!(rule["expires_at"].is_string(), "{rule}");
    let scope = js(
        &b,
        "return document.querySelector('#rules-rows tr td:nth-child(2)').textContent",
    )
    .await;
    assert_eq!(scope, json!("agent builder"));

    // A glob that would approve everything is refused, and the page says why.
    b.type_in("#rule-pattern", "*").await;
    b.choose("#rule-kind", "glob").await;
    b.click("#rule-add").await;
    until(
        &b,
        "return document.getElementById('rule-message').className",
        json!("message error"),
    )
    .await;
    assert_eq!(
        page.get("/v1/allowlist")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Removing asks once more, then removes.
    let id = rule["id"].as_i64().unwrap();
    let row = format!("#rules-rows tr[data-rule-id=\"{id}\"]");
    b.click(&format!("{row} button.remove")).await;
    assert_eq!(
        page.get("/v1/allowlist")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        1,
        "not before the confirmation"
    );
    b.click(&format!("{row} button.confirm-remove")).await;
    until(&b, patterns, json!([])).await;
    assert_eq!(page.get("/v1/allowlist").await.json(), json!([]));

    // A rule added elsewhere shows up without a reload (the stream's `allowlist`).
    let (status, _) = d.add_rule(json!({"pattern": "make test"})).await;
    assert_eq!(status, StatusCode::CREATED);
    until(&b, patterns, json!(["make test"])).await;
    b.client.clone().close().await.unwrap();
}

/// An agent's markup stays text; a phone-sized window still shows every answer; no or a
/// wrong token shows how to get the right one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_stays_text_and_a_phone_can_answer() {
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    let b = Browser::start().await;

    b.client
        .goto(&format!("http://{}/", page.addr))
        .await
        .unwrap();
    let auth = "const a = document.getElementById('auth'); return a.hidden ? '' : a.textContent";
    until(
        &b,
        "return document.getElementById('status').dataset.state",
        json!("unauthorised"),
    )
    .await;
    assert!(
        js(&b, auth)
            .await
            .as_str()
            .unwrap()
            .contains("execgate web url")
    );
    b.client
        .goto(&format!("http://{}/#token={}", page.addr, "0".repeat(64)))
        .await
        .unwrap();
    until(
        &b,
        "return document.getElementById('auth-why').textContent.includes('not the daemon')",
        json!(true),
    )
    .await;
    b.client.goto(&page.url()).await.unwrap();
    live(&b).await;
    assert_eq!(js(&b, auth).await, json!(""));

    b.client.set_window_size(390, 800).await.unwrap();
    let hostile = "make \"<script>window.pwned=1</script><img src=x onerror=window.pwned=2>\"";
    let r = pending(
        &d,
        json!({"agent": "builder", "command": hostile, "session": "<b>s1</b>",
               "reason": "<img src=x onerror=window.pwned=3> \u{202e}txt.exe", "wait": false}),
    )
    .await;
    card(&b, &r.id).await;
    let shown = js(
        &b,
        &format!(
            "return document.querySelector('{} pre.command').textContent",
            card_css(&r.id)
        ),
    )
    .await;
    assert_eq!(shown, json!(hostile));
    let injected = "return document.querySelectorAll('#stack script, #stack img, #stack b').length";
    assert_eq!(js(&b, injected).await, json!(0));
    assert_eq!(
        js(&b, "return window.pwned === undefined").await,
        json!(true)
    );
    // What cannot be seen is shown escaped.
    let text = card(&b, &r.id).await;
    assert!(text.contains("\\u{202e}txt.exe"), "{text}");

    // Every button is on screen and answers.
    let width = js(&b, "return window.innerWidth").await.as_i64().unwrap();
    assert!(width <= 390, "a phone-sized window: {width} px");
    let on_screen = format!(
        "return [...document.querySelectorAll('{} button')].map(b => {{ const r = b.getBoundingClientRect(); \
         return r.width > 0 && r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.bottom <= innerHeight; }})",
        card_css(&r.id)
    );
    let shown = js(&b, &on_screen).await;
    let shown = shown.as_array().unwrap();
    assert!(
        shown.len() >= 2 && shown.iter().all(|s| s == true),
        "{shown:?}"
    );
    let shot = artefact("phone.png");
    b.screenshot(&shot).await;
    println!("screenshot of the page at 390x800: {}", shot.display());
    answer(&b, &r.id, "allow-once").await;
    assert_eq!(decided(&d, &r.id).await.via, Some(Via::Web));

    // What no front showed (issue 30): a path ending in a tag character. The page shows
    // the daemon's rendering, and the note on a non-ASCII path.
    let tag = pending(
        &d,
        json!({"agent": "builder", "command": "head -n 5 notes.txt\u{E0041}", "wait": false}),
    )
    .await;
    let text = card(&b, &tag.id).await;
    let shown = js(
        &b,
        &format!(
            "return document.querySelector('{} pre.command').textContent",
            card_css(&tag.id)
        ),
    )
    .await;
    assert_eq!(shown, json!("head -n 5 notes.txt\\u{e0041}"));
    assert!(
        text.contains("non-ASCII characters: notes.txt\\u{e0041} (U+E0041)"),
        "{text}"
    );
    assert!(!text.contains('\u{E0041}'), "{text}");
    b.client.clone().close().await.unwrap();
}

/// The page escapes nothing itself: every record and rule it reads carries `shown`, the
/// daemon's rendering (the one `text::visible` every front uses), and its script keeps
/// no list of characters of its own (issue 30).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_gets_the_daemons_rendering() {
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    let r = pending(
        &d,
        json!({"agent": "builder", "command": "head -n 5 notes.txt\u{E0041}",
               "reason": "a\u{2800}b", "session": "s\u{FE0F}", "wait": false}),
    )
    .await;
    let escaped = "head -n 5 notes.txt\\u{e0041}";
    let one = page.get(&format!("/v1/requests/{}", r.id)).await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.text);
    let list = page.get("/v1/requests").await.json();
    for v in [one.json(), list[0].clone()] {
        assert_eq!(v["command"], "head -n 5 notes.txt\u{E0041}", "{v}");
        let shown = &v["shown"];
        assert_eq!(shown["label"], "Command", "{v}");
        assert_eq!(shown["text"], escaped, "{v}");
        assert_eq!(shown["line"], escaped, "{v}");
        assert_eq!(shown["reason"], "a\\u{2800}b", "{v}");
        assert_eq!(shown["session"], "s\\u{fe0f}", "{v}");
        assert_eq!(
            shown["notes"][0],
            "a path or word in this request holds non-ASCII characters: notes.txt\\u{e0041} (U+E0041)"
        );
    }
    // The answer to a decision carries it too (the page shows it in its feed).
    let done = page
        .send(
            "POST",
            &format!("/v1/requests/{}/decision", r.id),
            Some(&json!({"decision": "deny"})),
        )
        .await
        .json();
    assert_eq!(done["shown"]["text"], escaped, "{done}");
    assert_eq!(done["shown"]["decided_by"], "web", "{done}");
    // Rules as well.
    let (status, v) = d
        .add_rule(json!({"pattern": "cat x\u{200B}y", "kind": "exact"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let rules = page.get("/v1/allowlist").await.json();
    assert_eq!(rules[0]["shown"]["pattern"], "cat x\\u{200b}y", "{rules}");
    // The script has no list of its own to fall behind the daemon's.
    let script = page.get("/app.js").await.text;
    assert!(
        !script.contains("codePointAt") && !script.contains("\\u200b"),
        "app.js escapes text itself"
    );
}

/// The page rides out a restart: it says it is reconnecting, then comes back with the
/// same token (kept in its file) and the new daemon's queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_reconnects_after_a_restart() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let env = [LONG, ("EXECGATE_WEB__LISTEN", listen.as_str())];
    let mut d = TestDaemon::start(&env).await;
    let page = Page::of(&d);
    let b = open(&page).await;
    let r = d.ask_no_wait("builder", "make deploy").await;
    card(&b, &r.id).await;

    d.stop().await;
    // Shutdown cancels the request: its card leaves; then the stream ends.
    card_gone(&b, &r.id).await;
    until(
        &b,
        "return document.getElementById('status').dataset.state",
        json!("reconnecting"),
    )
    .await;

    let TestDaemon { dir, .. } = d;
    let d = TestDaemon::start_in(dir, &env).await;
    assert_eq!(Page::of(&d).token, page.token, "the token file is reused");
    live(&b).await;
    let again = d.ask_no_wait("builder", "make deploy").await;
    card(&b, &again.id).await;
    b.client.clone().close().await.unwrap();
}

// ---- Over HTTP -----------------------------------------------------------------------

/// What every route of the admin API is asked, with a body where it takes one.
fn every_route(id: &str, rule: i64) -> Vec<(&'static str, String, Option<Value>)> {
    vec![
        ("GET", "/v1/health".into(), None),
        ("GET", "/v1/requests".into(), None),
        ("GET", "/v1/requests?status=pending".into(), None),
        ("GET", format!("/v1/requests/{id}"), None),
        ("GET", "/v1/events".into(), None),
        ("GET", "/v1/runs".into(), None),
        ("GET", "/v1/allowlist".into(), None),
        (
            "POST",
            format!("/v1/requests/{id}/decision"),
            Some(json!({"decision": "allow-once"})),
        ),
        (
            "POST",
            format!("/v1/requests/{id}/decision"),
            Some(json!({"decision": "allow-always"})),
        ),
        (
            "POST",
            "/v1/allowlist".into(),
            Some(json!({"pattern": "rm -rf /", "kind": "exact"})),
        ),
        ("DELETE", format!("/v1/allowlist/{rule}"), None),
        ("GET", "/v1/nothing".into(), None),
        ("GET", "/v1".into(), None),
        ("POST", "/".into(), None),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_token_nothing_is_read_or_changed() {
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    let r = d.ask_no_wait("builder", "make deploy").await;
    let (_, rule) = d.add_rule(json!({"pattern": "make test"})).await;
    let rule = rule["id"].as_i64().unwrap();
    let rules_before = page.get("/v1/allowlist").await.json();

    let host = page.host();
    let origin = page.origin();
    let wrong = format!("Bearer {}", "0".repeat(64));
    // The token with its last digit changed (to another digit, whatever it was).
    let last = if page.token.ends_with('0') { '1' } else { '0' };
    let almost = format!("Bearer {}{last}", &page.token[..63]);
    let basic = format!("Basic {}", page.token);
    let cookie = format!("token={}", page.token);
    let ways: Vec<Vec<(&str, &str)>> = vec![
        vec![("host", &host), ("origin", &origin)],
        vec![
            ("host", &host),
            ("origin", &origin),
            ("authorization", &wrong),
        ],
        vec![
            ("host", &host),
            ("origin", &origin),
            ("authorization", &almost),
        ],
        vec![
            ("host", &host),
            ("origin", &origin),
            ("authorization", &basic),
        ],
        vec![
            ("host", &host),
            ("origin", &origin),
            ("authorization", "Bearer"),
        ],
        vec![("host", &host), ("origin", &origin), ("cookie", &cookie)],
    ];
    for headers in &ways {
        for (method, path, body) in every_route(&r.id, rule) {
            let reply = page.call(method, &path, headers, body.as_ref()).await;
            assert_eq!(
                reply.status,
                StatusCode::UNAUTHORIZED,
                "{method} {path} with {headers:?}: {}",
                reply.text
            );
            assert!(
                reply.header("www-authenticate").starts_with("Bearer"),
                "{method} {path}"
            );
            assert_eq!(reply.json()["error"]["code"], "UNAUTHORIZED");
            assert!(!reply.text.contains("make deploy"));
        }
        // Nor in the query string.
        let path = format!("/v1/requests?token={}", page.token);
        assert_eq!(
            page.call("GET", &path, headers, None).await.status,
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(
        d.record(&r.id).await.status,
        Status::Pending,
        "still pending"
    );
    assert_eq!(
        page.get("/v1/allowlist").await.json(),
        rules_before,
        "no rule changed"
    );

    // With the token, the same reads answer (the page's files need none).
    assert_eq!(
        page.get("/v1/requests").await.json()[0]["id"],
        r.id.as_str()
    );
    let events = page.get("/v1/events").await;
    assert_eq!(events.status, StatusCode::OK);
    assert!(
        events
            .header("content-type")
            .starts_with("text/event-stream")
    );
    for file in ["/", "/app.js", "/app.css", "/favicon.svg"] {
        let reply = page.call("GET", file, &[("host", &host)], None).await;
        assert_eq!(reply.status, StatusCode::OK, "{file}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_host_or_a_foreign_origin_changes_nothing() {
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    let r = d.ask_no_wait("builder", "make deploy").await;
    let bearer = format!("Bearer {}", page.token);
    let port = page.addr.port();

    // DNS rebinding: the browser sends the attacker's name as Host.
    let other_port = format!("127.0.0.1:{}", port.wrapping_add(1));
    let forged_hosts = [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        other_port,
        format!("127.0.0.1:{port}.evil.example"),
        "127.0.0.1".to_string(),
    ];
    for host in &forged_hosts {
        for (method, path, body) in every_route(&r.id, 1) {
            let reply = page
                .call(
                    method,
                    &path,
                    &[
                        ("host", host),
                        ("authorization", &bearer),
                        ("origin", &format!("http://{host}")),
                    ],
                    body.as_ref(),
                )
                .await;
            assert_eq!(
                reply.status,
                StatusCode::MISDIRECTED_REQUEST,
                "{method} {path} Host {host}"
            );
            assert_eq!(reply.json()["error"]["code"], "WRONG_HOST");
        }
        let reply = page.call("GET", "/", &[("host", host)], None).await;
        assert_eq!(
            reply.status,
            StatusCode::MISDIRECTED_REQUEST,
            "the page itself for Host {host}"
        );
    }
    let no_host = page
        .call("GET", "/v1/requests", &[("authorization", &bearer)], None)
        .await;
    assert_eq!(no_host.status, StatusCode::MISDIRECTED_REQUEST);
    let two_hosts = raw(
        page.addr,
        format!(
            "GET / HTTP/1.1\r\nHost: {}\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
            page.host()
        )
        .as_bytes(),
    )
    .await;
    assert!(two_hosts.starts_with("HTTP/1.1 4"), "{two_hosts}");
    // An absolute request target names its host too.
    let absolute = page
        .call(
            "GET",
            "http://evil.example/v1/requests",
            &[("host", &page.host()), ("authorization", &bearer)],
            None,
        )
        .await;
    assert_eq!(absolute.status, StatusCode::MISDIRECTED_REQUEST);
    // `localhost` with the port is the same page.
    let localhost = format!("localhost:{port}");
    let reply = page
        .call(
            "GET",
            "/v1/requests",
            &[("host", &localhost), ("authorization", &bearer)],
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);

    // Cross-site: the right token (somehow) but another page's Origin, or none.
    let host = page.host();
    let decision = json!({"decision": "allow-once"});
    let path = format!("/v1/requests/{}/decision", r.id);
    for origin in [
        Some("http://evil.example"),
        Some("null"),
        Some(&format!("https://{host}") as &str),
        None,
    ] {
        let mut headers = vec![
            ("host", host.as_str()),
            ("authorization", bearer.as_str()),
            ("content-type", "application/json"),
        ];
        headers.extend(origin.map(|o| ("origin", o)));
        let reply = page.call("POST", &path, &headers, Some(&decision)).await;
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "Origin {origin:?}: {}",
            reply.text
        );
        let reply = page.call("DELETE", "/v1/allowlist/1", &headers, None).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "Origin {origin:?}");
        let reply = page
            .call(
                "POST",
                "/v1/allowlist",
                &headers,
                Some(&json!({"pattern": "rm -rf /"})),
            )
            .await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "Origin {origin:?}");
    }
    assert_eq!(d.record(&r.id).await.status, Status::Pending);
    assert_eq!(page.get("/v1/allowlist").await.json(), json!([]));

    // The page itself: decided, as `web`.
    let reply = page.send("POST", &path, Some(&decision)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let record: Record = serde_json::from_value(reply.json()).unwrap();
    assert_eq!(
        (record.status, record.via, record.decided_by.as_deref()),
        (Status::Approved, Some(Via::Web), Some("web"))
    );
    // Once is once: a second answer is a conflict, shown on the card.
    let again = page.send("POST", &path, Some(&decision)).await;
    assert_eq!(again.status, StatusCode::CONFLICT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_carries_the_security_headers_and_no_cookie() {
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    let host = page.host();
    let mut replies = vec![
        (
            "page",
            page.call("GET", "/", &[("host", &host)], None).await,
        ),
        (
            "script",
            page.call("GET", "/app.js", &[("host", &host)], None).await,
        ),
        (
            "no token",
            page.call("GET", "/v1/requests", &[("host", &host)], None)
                .await,
        ),
        (
            "wrong host",
            page.call("GET", "/", &[("host", "evil.example")], None)
                .await,
        ),
        ("not found", page.get("/v1/nothing").await),
        ("list", page.get("/v1/requests").await),
        ("events", page.get("/v1/events").await),
        ("bad query", page.get("/v1/requests?before=nobody").await),
        (
            "foreign origin",
            page.call(
                "DELETE",
                "/v1/allowlist/1",
                &[
                    ("host", &host),
                    ("authorization", &format!("Bearer {}", page.token)),
                ],
                None,
            )
            .await,
        ),
    ];
    replies.push((
        "rule",
        page.send(
            "POST",
            "/v1/allowlist",
            Some(&json!({"pattern": "make test"})),
        )
        .await,
    ));
    for (what, reply) in &replies {
        assert_eq!(reply.header("content-security-policy"), CSP, "{what}");
        assert_eq!(reply.header("x-content-type-options"), "nosniff", "{what}");
        assert_eq!(reply.header("referrer-policy"), "no-referrer", "{what}");
        assert_eq!(reply.header("cache-control"), "no-store", "{what}");
        assert_eq!(reply.header("x-frame-options"), "DENY", "{what}");
        assert!(reply.headers.get("set-cookie").is_none(), "{what}");
    }
    assert!(replies[0].1.header("content-type").starts_with("text/html"));
    assert!(
        replies[1]
            .1
            .header("content-type")
            .starts_with("text/javascript")
    );
    assert_eq!(
        replies[7].1.status,
        StatusCode::BAD_REQUEST,
        "an unknown `before` id"
    );
    // Answers made before a request reaches the router carry them too.
    for head in [
        format!("GET / HTTP/1.1\r\nHost: {host}\r\nBad Header\r\n\r\n"),
        format!(
            "GET /v1/requests/%FF HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
            page.token
        ),
    ] {
        let answer = raw(page.addr, head.as_bytes()).await.to_ascii_lowercase();
        assert!(answer.starts_with("http/1.1 400"), "{answer}");
        assert!(
            answer.contains(&format!(
                "content-security-policy: {}",
                CSP.to_ascii_lowercase()
            )),
            "{answer}"
        );
        assert!(answer.contains("x-frame-options: deny"), "{answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_pages_with_before() {
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(d.ask_no_wait("builder", &format!("make step{i}")).await.id);
    }
    ids.reverse();
    let first = page.get("/v1/requests?limit=2").await.json();
    let first: Vec<&str> = first
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(first, [ids[0].as_str(), ids[1].as_str()]);
    let next = page
        .get(&format!("/v1/requests?limit=2&before={}", ids[1]))
        .await
        .json();
    let next: Vec<&str> = next
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(next, [ids[2].as_str(), ids[3].as_str()]);
    let unknown = page
        .get("/v1/requests?before=0193a7c2-0000-7000-8000-000000000000")
        .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert!(
        unknown.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("before")
    );
}

/// A hostile agent on another uid can neither read the token nor get past the port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_uid_cannot_read_the_token_or_use_the_port() {
    if !execgate_testkit::uid::can_switch_uid("a_hostile_uid_cannot_read_the_token_or_use_the_port")
    {
        return;
    }
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    common::uid::let_agent_in(d.dir.path(), &d.config().socket);
    let token_file = WebConfig::token_file(&d.config().database);
    // Even with the state directory open to search, the file itself is the daemon's.
    let state = token_file.parent().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(state, std::fs::Permissions::from_mode(0o711)).unwrap();
    let r = d.ask_no_wait("builder", "make deploy").await;

    let (addr, path, id, host) = (page.addr, token_file.clone(), r.id.clone(), page.host());
    let (read, replies) = common::uid::as_agent(move || async move {
        let read = std::fs::read_to_string(&path).map_err(|e| e.kind());
        let origin = format!("http://{host}");
        let guess = format!("Bearer {}", "f".repeat(64));
        let mut replies = Vec::new();
        for headers in [
            vec![("host", host.as_str()), ("origin", origin.as_str())],
            vec![
                ("host", host.as_str()),
                ("origin", origin.as_str()),
                ("authorization", guess.as_str()),
            ],
        ] {
            let reply = common::web::call(
                addr,
                "POST",
                &format!("/v1/requests/{id}/decision"),
                &headers,
                Some(&json!({"decision": "allow-once"})),
            )
            .await;
            replies.push(reply.status);
            let reply = common::web::call(addr, "GET", "/v1/requests", &headers, None).await;
            replies.push(reply.status);
        }
        (read, replies)
    });
    assert_eq!(read, Err(std::io::ErrorKind::PermissionDenied));
    assert_eq!(replies, [StatusCode::UNAUTHORIZED; 4]);
    assert_eq!(d.record(&r.id).await.status, Status::Pending);

    // Nor does `execgate web url` show it to them.
    let mut env = d.env.clone();
    env.retain(|(k, _)| k != "EXECGATE_WEB__LISTEN");
    env.push(("EXECGATE_WEB__LISTEN".into(), page.host()));
    let out = tokio::task::spawn_blocking(move || {
        common::uid::agent_command(execgate_binary(), &env)
            .args(["web", "url"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    let (out, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.contains(&page.token) && !err.contains(&page.token));
    assert!(err.contains("Permission denied"), "{err}");
}

/// One local user cannot lock the owner out of the page (issue 30, finding 6): the
/// agent's uid opens 80 connections that never finish their headers, more than its
/// share; the owner's page, with its token, still answers 200 every time. A loopback
/// client is counted by the uid that owns its end, as the kernel's socket tables say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_uids_connections_never_lock_the_owner_out() {
    if !common::uid::can_switch_uid("another_uids_connections_never_lock_the_owner_out") {
        return;
    }
    const CAP: usize = 16;
    let d = TestDaemon::start(&[
        LONG,
        WEB,
        ("EXECGATE_LIMITS__MAX_CONNECTIONS_PER_UID", "16"),
        ("EXECGATE_LIMITS__REQUEST_READ_TIMEOUT_MS", "60000"),
    ])
    .await;
    let page = Page::of(&d);
    let addr = page.addr;
    let (ready, refused) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let agent = std::thread::spawn(move || {
        common::uid::as_agent(move || async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut held = Vec::new();
            for _ in 0..80 {
                let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
                slow.write_all(b"GET /v1/requests HTTP/1.1\r\nHost: ")
                    .await
                    .unwrap();
                held.push(slow);
            }
            // Those over the agent's share are answered 429 at once.
            let mut count = 0;
            for slow in &mut held {
                let mut head = [0u8; 12];
                let read = tokio::time::timeout(Duration::from_millis(200), slow.read(&mut head));
                if let Ok(Ok(n)) = read.await
                    && head[..n].starts_with(b"HTTP/1.1 429")
                {
                    count += 1;
                }
            }
            ready.send(count).unwrap();
            // Held until the owner has been served.
            let _ = released.recv();
            drop(held);
        })
    });
    let refused = tokio::task::spawn_blocking(move || refused.recv().unwrap())
        .await
        .unwrap();
    assert_eq!(refused, 80 - CAP, "the agent's uid keeps to its own share");
    let list = format!(
        "GET /v1/requests HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        page.host(),
        page.token
    );
    let index = format!(
        "GET / HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        page.host()
    );
    for _ in 0..20 {
        for request in [&list, &index] {
            let reply = raw(addr, request.as_bytes()).await;
            assert!(
                reply.starts_with("HTTP/1.1 200"),
                "the owner's page was refused: {reply}"
            );
        }
    }
    release.send(()).unwrap();
    agent.join().unwrap();
}

/// `execgate web url` prints the URL from the configuration and the token file, with
/// no daemon needed; a token file others could read keeps the page, and the daemon, from
/// starting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_url_and_the_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let listen = ("EXECGATE_WEB__LISTEN", "127.0.0.1:18787");
    let env = env_for(dir.path(), &[listen]);
    let out = run_cli(&env, &["web", "url"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("start `execgate serve --web`"),
        "{}",
        stderr(&out)
    );

    // Made at the first start, kept after it.
    let mut d = TestDaemon::start_in(dir, &[LONG, WEB]).await;
    let token = Page::of(&d).token;
    d.stop().await;
    let TestDaemon { dir, .. } = d;
    let out = run_cli(&env, &["web", "url"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("http://127.0.0.1:18787/#token={token}\n")
    );
    // Without web.listen, the address `serve --web` uses.
    let out = run_cli(&env_for(dir.path(), &[]), &["web", "url"]).await;
    assert_eq!(
        stdout(&out),
        format!("http://127.0.0.1:8787/#token={token}\n")
    );
    let out = run_cli(&env_for(dir.path(), &[WEB]), &["web", "url"]).await;
    assert!(stderr(&out).contains("port 0"), "{}", stderr(&out));

    use std::os::unix::fs::PermissionsExt;
    let file = WebConfig::token_file(&db_path(dir.path()));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let env = env_for(dir.path(), &[LONG, WEB]);
    let refused = execgate::daemon::Daemon::start(config_for(&env), Default::default()).await;
    let e = refused
        .err()
        .expect("the daemon does not start")
        .to_string();
    assert!(e.contains("mode 0640") && e.contains("chmod 600"), "{e}");
    let out = run_cli(&env_for(dir.path(), &[listen]), &["web", "url"]).await;
    assert!(
        !stdout(&out).contains(&token),
        "a token others may have read is not handed out"
    );
}

/// `serve --web` as a user starts it: the page on 127.0.0.1:8787, its URL not in the log
/// (stderr is not a terminal here, as under systemd).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_web_listens_on_the_default_address_and_logs_no_token() {
    if std::net::TcpListener::bind("127.0.0.1:8787").is_err() {
        panic!("127.0.0.1:8787 is in use: this test needs the address `serve --web` listens on");
    }
    let dir = tempfile::tempdir().unwrap();
    let p = common::process::Process::start_with(
        dir.path(),
        &[],
        common::process::Options {
            serve_args: &["--web"],
            ..Default::default()
        },
    )
    .await;
    let token = std::fs::read_to_string(WebConfig::token_file(&db_path(dir.path())))
        .unwrap()
        .trim()
        .to_string();
    let addr = "127.0.0.1:8787".parse().unwrap();
    let page = Page {
        addr,
        token: token.clone(),
    };
    assert_eq!(page.get("/v1/health").await.status, StatusCode::OK);
    p.signal(libc::SIGTERM);
    let (status, log) = tokio::time::timeout(Duration::from_secs(10), p.wait())
        .await
        .unwrap();
    assert!(status.success(), "{log}");
    assert!(log.contains("the approvals page is listening"), "{log}");
    assert!(!log.contains(&token), "the token reached the log:\n{log}");
}

/// A reload does not move the page: `web.listen` takes a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_leaves_the_page_where_it_is() {
    let d = TestDaemon::start(&[LONG, WEB]).await;
    let page = Page::of(&d);
    let mut env = d.env.clone();
    env.retain(|(k, _)| k != "EXECGATE_WEB__LISTEN");
    let daemon = d.daemon.as_ref().unwrap();
    daemon
        .reload(execgate::config::Config::load_from(
            &Default::default(),
            &env,
        ))
        .await;
    assert_eq!(daemon.web_addr(), Some(page.addr));
    assert_eq!(page.get("/v1/health").await.status, StatusCode::OK);
    // The configuration in force keeps the running value, as for the sockets.
    let in_force = daemon.approvals.policy().config();
    assert_eq!(in_force.web.listen, Some("127.0.0.1:0".parse().unwrap()));
}
