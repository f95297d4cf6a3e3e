//! A scripted model server: the model API each coding agent calls, on 127.0.0.1, played
//! from a script instead of a model. Each of the agent's turns takes the script's next
//! [`Step`] (a tool call, or the final text); once the script is spent, every turn is a
//! final "done". Every request is recorded, so a test can read what the agent sent back
//! after a tool call (the tool's output, or execgate's refusal).
//!
//! The wire formats are the ones INTEGRATIONS.md ("Checked against the real agents")
//! records: Anthropic Messages, OpenAI Responses and OpenAI chat completions as
//! server-sent events, and Gemini's `generateContent` (the routing classifier) and
//! `streamGenerateContent?alt=sse`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One model turn in a script.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A call of the agent's tool `name`. `input` is the arguments object of a function
    /// tool; a string is the raw input of a freeform tool (Codex's and Copilot's
    /// `apply_patch`).
    Call { name: String, input: Value },
    /// Codex only: a search of the tools Codex defers (MCP tools), which Codex answers
    /// with the matching tools; the model can call them only after that.
    ToolSearch { query: String },
    /// The model's final answer: the agent's run ends.
    Text(String),
}

/// Which API the agent speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// `POST /v1/messages` (Claude Code).
    Anthropic,
    /// `POST /v1/responses` (Codex).
    Responses,
    /// `POST /v1beta/models/M:generateContent` and `…:streamGenerateContent` (Gemini CLI).
    Gemini,
    /// `POST /v1/chat/completions` (Copilot CLI with its own provider key).
    ChatCompletions,
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Received {
    /// The path and query, as sent.
    pub path: String,
    /// The JSON body (a string when the body was not JSON).
    pub body: Value,
    /// Whether it was one of the agent's turns (it took a step of the script), not a
    /// side request (Gemini's routing classifier, a request without tools).
    pub turn: bool,
}

struct Script {
    wire: Wire,
    steps: std::collections::VecDeque<Step>,
    received: Vec<Received>,
    /// Numbers the tool calls, so each has an id of its own.
    calls: u64,
}

/// A running model server; it stops when dropped.
pub struct ModelServer {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    task: JoinHandle<()>,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ModelServer {
    /// Serves `wire` on a free port of 127.0.0.1, answering turns from `steps`.
    pub async fn start(wire: Wire, steps: Vec<Step>) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port on 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let script = Arc::new(Mutex::new(Script {
            wire,
            steps: steps.into(),
            received: Vec::new(),
            calls: 0,
        }));
        let app = Router::new().fallback(handle).with_state(script.clone());
        let task = tokio::spawn(serve(listener, app));
        ModelServer { addr, script, task }
    }

    /// `http://127.0.0.1:PORT`, without a path.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.script).received.clone()
    }

    /// The bodies of the agent's turns, in order: the first asks for the first step; each
    /// later one carries what came of the step before.
    pub fn turns(&self) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|r| r.turn)
            .map(|r| r.body)
            .collect()
    }

    /// Replaces the steps not yet taken, for a script that names what exists only once
    /// the server does (the agent's project directory).
    pub fn set_script(&self, steps: Vec<Step>) {
        lock(&self.script).steps = steps.into();
    }

    /// The steps not yet taken.
    pub fn steps_left(&self) -> usize {
        lock(&self.script).steps.len()
    }
}

/// Serves each connection in a task of its own, which ends with this one's: a dropped
/// server answers nothing more.
async fn serve(listener: TcpListener, app: Router) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // E.g. out of file descriptors: back off instead of spinning.
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                };
                let service = hyper_util::service::TowerToHyperService::new(app.clone());
                connections.spawn(async move {
                    // An error here is the agent hanging up: nothing to report.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

fn lock(script: &Mutex<Script>) -> MutexGuard<'_, Script> {
    // A panicking test must not turn every later look at the record into a PoisonError.
    script.lock().unwrap_or_else(|e| e.into_inner())
}

async fn handle(State(script): State<Arc<Mutex<Script>>>, uri: Uri, body: Bytes) -> Response {
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_string(), |p| p.as_str().to_string());
    let body: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let mut script = lock(&script);
    let wire = script.wire;
    let turn = is_turn(wire, &path, &body);
    script.received.push(Received {
        path: path.clone(),
        body: body.clone(),
        turn,
    });
    if !turn {
        return side_answer(wire, &path, &body);
    }
    let step = match script.steps.pop_front() {
        None => Step::Text("done".into()),
        // Only Codex searches tools; elsewhere the script is wrong, and the model says so.
        Some(Step::ToolSearch { query }) if wire != Wire::Responses => Step::Text(format!(
            "scripted tool search {query:?} on a wire without one"
        )),
        Some(step) => step,
    };
    script.calls += 1;
    let id = script.calls;
    let stream = body["stream"] != false;
    match wire {
        Wire::Anthropic if !stream => json_response(anthropic_message(&step, id, &body)),
        Wire::Anthropic => sse(anthropic_events(&step, id, &body)),
        Wire::Responses => sse(responses_events(&step, id)),
        Wire::Gemini => sse(vec![(None, gemini_chunk(&step))]),
        Wire::ChatCompletions => sse(chat_events(&step, id, &body)),
    }
}

/// Whether a request is one of the agent's turns. Side requests (Gemini's routing
/// classifier; any request offering no tools, such as a title or a quota probe) are
/// answered without taking a step.
fn is_turn(wire: Wire, path: &str, body: &Value) -> bool {
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    match wire {
        Wire::Anthropic => path.starts_with("/v1/messages") && offers_tools,
        Wire::Responses => path.starts_with("/v1/responses") && offers_tools,
        Wire::Gemini => path.contains(":streamGenerateContent"),
        Wire::ChatCompletions => path.starts_with("/v1/chat/completions") && offers_tools,
    }
}

/// The answer to a side request: final text in the wire's shape, or 404 for a path the
/// wire does not have.
fn side_answer(wire: Wire, path: &str, body: &Value) -> Response {
    let text = Step::Text("ok".into());
    match wire {
        // Gemini's classifiers ask for JSON text; this one object satisfies the routing
        // classifier's schema (`complexity_*`) and the next-speaker check's.
        Wire::Gemini if path.contains(":generateContent") => {
            let answer = json!({
                "complexity_reasoning": "a single scripted step",
                "complexity_score": 1,
                "reasoning": "the scripted turn is over",
                "next_speaker": "user",
            });
            json_response(gemini_chunk(&Step::Text(answer.to_string())))
        }
        Wire::Anthropic if path.starts_with("/v1/messages") => match body["stream"] == true {
            true => sse(anthropic_events(&text, 0, body)),
            false => json_response(anthropic_message(&text, 0, body)),
        },
        Wire::Responses if path.starts_with("/v1/responses") => sse(responses_events(&text, 0)),
        Wire::ChatCompletions if path.starts_with("/v1/chat/completions") => {
            sse(chat_events(&text, 0, body))
        }
        _ => (StatusCode::NOT_FOUND, "no such route in the scripted model").into_response(),
    }
}

fn json_response(value: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// Server-sent events: `(event name, data)`; a string datum is sent as it is.
fn sse(events: Vec<(Option<&str>, Value)>) -> Response {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            out.push_str(&format!("event: {name}\n"));
        }
        let data = match data {
            Value::String(s) => s,
            v => v.to_string(),
        };
        out.push_str(&format!("data: {data}\n\n"));
    }
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        out,
    )
        .into_response()
}

/// The tool input as a JSON text (a freeform input has none: Anthropic and Gemini tools
/// are all function tools).
fn arguments(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

fn anthropic_message(step: &Step, id: u64, request: &Value) -> Value {
    let (content, stop) = match step {
        Step::Call { name, input } => (
            json!([{"type": "tool_use", "id": format!("toolu_{id}"), "name": name, "input": input}]),
            "tool_use",
        ),
        Step::Text(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
        Step::ToolSearch { .. } => unreachable!("only Codex searches tools (see handle)"),
    };
    json!({
        "id": format!("msg_{id}"), "type": "message", "role": "assistant",
        "model": request["model"], "content": content, "stop_reason": stop,
        "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 5},
    })
}

/// Claude Code reads only the whole event sequence: the block starts empty (`input: {}`)
/// and its JSON arrives in a delta.
fn anthropic_events(step: &Step, id: u64, request: &Value) -> Vec<(Option<&'static str>, Value)> {
    let (block, delta, stop) = match step {
        Step::Call { name, input } => (
            json!({"type": "tool_use", "id": format!("toolu_{id}"), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": arguments(input)}),
            "tool_use",
        ),
        Step::Text(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
            "end_turn",
        ),
        Step::ToolSearch { .. } => unreachable!("only Codex searches tools (see handle)"),
    };
    vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {
                "id": format!("msg_{id}"), "type": "message", "role": "assistant",
                "model": request["model"], "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": 5}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ]
}

/// Codex needs `response.completed` with `usage`; a freeform tool's call is a
/// `custom_tool_call` with its `input`.
fn responses_events(step: &Step, id: u64) -> Vec<(Option<&'static str>, Value)> {
    let response = |status: &str, output: Value| json!({"id": format!("resp_{id}"), "object": "response", "status": status, "output": output});
    let (item, mut middle) = match step {
        Step::Call { name, input } => {
            let item = match input {
                Value::String(raw) => json!({"type": "custom_tool_call", "id": format!("ctc_{id}"),
                    "call_id": format!("call_{id}"), "name": name, "input": raw,
                    "status": "completed"}),
                args => {
                    let mut call = json!({"type": "function_call", "id": format!("fc_{id}"),
                        "call_id": format!("call_{id}"), "name": name,
                        "arguments": args.to_string(), "status": "completed"});
                    // Codex calls an MCP tool (`mcp__SERVER__TOOL`) as TOOL in the namespace
                    // `mcp__SERVER` its tool search gave.
                    if let Some((server, tool)) = name
                        .strip_prefix("mcp__")
                        .and_then(|rest| rest.split_once("__"))
                    {
                        call["namespace"] = json!(format!("mcp__{server}"));
                        call["name"] = json!(tool);
                    }
                    call
                }
            };
            let added =
                json!({"type": "response.output_item.added", "output_index": 0, "item": item});
            (item, vec![(Some("response.output_item.added"), added)])
        }
        // Run by Codex itself ("client"), which answers with the tools found.
        Step::ToolSearch { query } => {
            let item = json!({"type": "tool_search_call", "id": format!("tsc_{id}"),
                "call_id": format!("call_{id}"), "execution": "client", "status": "completed",
                "arguments": {"query": query}});
            let added =
                json!({"type": "response.output_item.added", "output_index": 0, "item": item});
            (item, vec![(Some("response.output_item.added"), added)])
        }
        Step::Text(text) => {
            let msg_id = format!("msg_{id}");
            let item = json!({"type": "message", "role": "assistant", "id": msg_id,
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]});
            let mut empty = item.clone();
            empty["content"] = json!([]);
            (
                item,
                vec![
                    (
                        Some("response.output_item.added"),
                        json!({"type": "response.output_item.added", "output_index": 0, "item": empty}),
                    ),
                    (
                        Some("response.output_text.delta"),
                        json!({"type": "response.output_text.delta", "item_id": msg_id,
                               "output_index": 0, "content_index": 0, "delta": text}),
                    ),
                ],
            )
        }
    };
    let mut completed = response("completed", json!([item.clone()]));
    completed["usage"] = json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15});
    let mut events = vec![
        (
            Some("response.created"),
            json!({"type": "response.created", "response": response("in_progress", json!([]))}),
        ),
        (
            Some("response.in_progress"),
            json!({"type": "response.in_progress", "response": response("in_progress", json!([]))}),
        ),
    ];
    events.append(&mut middle);
    events.push((
        Some("response.output_item.done"),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    ));
    events.push((
        Some("response.completed"),
        json!({"type": "response.completed", "response": completed}),
    ));
    events
}

fn gemini_chunk(step: &Step) -> Value {
    let part = match step {
        Step::Call { name, input } => json!({"functionCall": {"name": name, "args": input}}),
        Step::Text(text) => json!({"text": text}),
        Step::ToolSearch { .. } => unreachable!("only Codex searches tools (see handle)"),
    };
    json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    })
}

/// A freeform tool's call is `type: "custom"` with `custom: {name, input}`; the stream
/// ends with a usage chunk and `[DONE]`.
fn chat_events(step: &Step, id: u64, request: &Value) -> Vec<(Option<&'static str>, Value)> {
    let chunk = |choices: Value| {
        json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion.chunk", "created": 1,
               "model": request["model"], "choices": choices})
    };
    let (delta, finish) = match step {
        Step::Call { name, input } => {
            let call = match input {
                Value::String(raw) => json!({"index": 0, "id": format!("call_{id}"),
                    "type": "custom", "custom": {"name": name, "input": raw}}),
                args => json!({"index": 0, "id": format!("call_{id}"), "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}}),
            };
            (
                json!({"role": "assistant", "content": null, "tool_calls": [call]}),
                "tool_calls",
            )
        }
        Step::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Step::ToolSearch { .. } => unreachable!("only Codex searches tools (see handle)"),
    };
    let mut usage = chunk(json!([]));
    usage["usage"] = json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15});
    vec![
        (
            None,
            chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}])),
        ),
        (
            None,
            chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}])),
        ),
        (None, usage),
        (None, json!("[DONE]")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Posts `body` to `path` on the server and returns the response's text.
    async fn post(server: &ModelServer, path: &str, body: Value) -> String {
        use http_body_util::{BodyExt, Full};
        use hyper_util::client::legacy::Client;
        use hyper_util::rt::TokioExecutor;
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
        let request = hyper::Request::post(format!("{}{path}", server.url()))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap();
        let response = client.request(request).await.unwrap();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn turns_take_the_script_in_order_and_side_requests_do_not() {
        let shell = Step::Call {
            name: "Bash".into(),
            input: json!({"command": "touch x"}),
        };
        let server = ModelServer::start(Wire::Anthropic, vec![shell]).await;
        let turn = json!({"model": "m", "stream": true, "tools": [{"name": "Bash"}]});
        // A request offering no tools (a title, a probe) is no turn.
        let side = post(&server, "/v1/messages?beta=true", json!({"model": "m"})).await;
        assert!(side.contains("\"stop_reason\":\"end_turn\""), "{side}");
        let first = post(&server, "/v1/messages?beta=true", turn.clone()).await;
        assert!(first.contains("event: content_block_start"), "{first}");
        assert!(first.contains(r#"\"command\":\"touch x\""#), "{first}");
        assert!(first.contains("\"stop_reason\":\"tool_use\""), "{first}");
        let second = post(&server, "/v1/messages?beta=true", turn).await;
        assert!(second.contains("\"text\":\"done\""), "{second}");
        assert_eq!(server.turns().len(), 2);
        assert_eq!(server.received().len(), 3);
        assert_eq!(server.steps_left(), 0);
    }

    #[tokio::test]
    async fn freeform_calls_keep_their_raw_input() {
        let patch = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n";
        let step = Step::Call {
            name: "apply_patch".into(),
            input: json!(patch),
        };
        let codex = ModelServer::start(Wire::Responses, vec![step.clone()]).await;
        let said = post(&codex, "/v1/responses", json!({"tools": [{}]})).await;
        assert!(said.contains("\"type\":\"custom_tool_call\""), "{said}");
        assert!(said.contains(r#""input":"*** Begin Patch\n"#), "{said}");
        let copilot = ModelServer::start(Wire::ChatCompletions, vec![step]).await;
        let said = post(&copilot, "/v1/chat/completions", json!({"tools": [{}]})).await;
        assert!(said.contains("\"type\":\"custom\""), "{said}");
        assert!(said.ends_with("data: [DONE]\n\n"), "{said}");
    }

    #[tokio::test]
    async fn codex_searches_for_mcp_tools_and_calls_them_in_their_namespace() {
        let search = Step::ToolSearch {
            query: "execgate".into(),
        };
        let call = Step::Call {
            name: "mcp__execgate__execute_command".into(),
            input: json!({"command": "ls"}),
        };
        let codex = ModelServer::start(Wire::Responses, vec![search.clone(), call]).await;
        let said = post(&codex, "/v1/responses", json!({"tools": [{}]})).await;
        assert!(said.contains(r#""type":"tool_search_call""#), "{said}");
        assert!(said.contains(r#""execution":"client""#), "{said}");
        let said = post(&codex, "/v1/responses", json!({"tools": [{}]})).await;
        assert!(said.contains(r#""namespace":"mcp__execgate""#), "{said}");
        assert!(said.contains(r#""name":"execute_command""#), "{said}");
        // Anywhere else a search is a scripting mistake the model says out loud.
        let claude = ModelServer::start(Wire::Anthropic, vec![search]).await;
        let turn = json!({"model": "m", "stream": true, "tools": [{"name": "Bash"}]});
        let said = post(&claude, "/v1/messages", turn).await;
        assert!(said.contains("scripted tool search"), "{said}");
    }

    #[tokio::test]
    async fn gemini_classifier_is_answered_beside_the_script() {
        let server = ModelServer::start(Wire::Gemini, vec![]).await;
        let said = post(&server, "/v1beta/models/f:generateContent", json!({})).await;
        let v: Value = serde_json::from_str(&said).unwrap();
        let text = v["candidates"][0]["content"]["parts"][0]["text"]
            .as_str()
            .unwrap();
        let answer: Value = serde_json::from_str(text).unwrap();
        assert_eq!(answer["complexity_score"], 1);
        assert!(server.turns().is_empty());
    }
}
