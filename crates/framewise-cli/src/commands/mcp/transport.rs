//! The server's stdio transport: one JSON-RPC message a line, answered per JSON-RPC 2.0
//! when a line is no message.
//!
//! rmcp's own stdio transport drops a line that is not JSON without a word (so a client
//! that sent a truncated request waits forever) and answers a JSON line that is no message
//! with an error carrying no `id`. Here a reader task takes stdin apart line by line:
//!
//! - a line that is not JSON (or not UTF-8, or nested too deep) is answered
//!   `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,…}}` (Parse error);
//! - a JSON line that is no JSON-RPC message is answered with code -32600 (Invalid
//!   Request), its `id` when the line carries a readable one (an integer or a string),
//!   else `null` — unless the line is a notification (a `method` and no `id`) or a response
//!   (`result` or `error`, no `method`), which JSON-RPC never answers (so a client echoing
//!   our error back cannot start an error storm);
//! - a line over [`MAX_LINE`] bytes is answered -32600 without being held in memory;
//! - an empty line is skipped;
//!
//! - a request for a method the server answers ([`ANSWERED`]) whose `params` do not read as
//!   that method's is answered -32602 (Invalid params) saying what is wrong (rmcp would take
//!   it for a method it does not know and answer -32601); so is a `tools/call` whose params
//!   hold a member MCP does not define there ([`CALL_MEMBERS`]: rmcp would ignore a
//!   misspelt `arguments` and run the tool with its defaults);
//! - an `initialize` after the session's first is answered -32600 (Invalid Request: the
//!   session is already initialized), as the official TypeScript SDK answers it (rmcp would
//!   initialize again);
//! - before the session has started, a request other than `initialize` and `ping` that does
//!   not carry protocol revision 2026-07-28's per-request `_meta` is answered -32602 saying to
//!   send `initialize` first (rmcp asked for the `_meta` fields, as if every client spoke
//!   2026-07-28), and one whose `_meta` names a revision that starts with `initialize`
//!   (2025-11-25 or earlier) -32022, Unsupported protocol version (rmcp served it with no
//!   handshake at all) ([`before_the_session`]); a 2026-07-28 request, which has no
//!   handshake, is passed on and served as that revision says;
//! - a `tools/call` whose line repeats a key is refused rather than resolved (JSON keeps the
//!   last): a key repeated in its `arguments` makes the call an `isError` result naming the
//!   argument ([`DuplicateArguments`], which the tools' argument extractor reads), one repeated
//!   anywhere else in its params is answered -32602 naming it ([`duplicates`]);
//!
//! and every message is handed to the service in order. The session goes on after each.
//! The reader and every response share one stdout lock, so lines never interleave. A
//! request for a method the server does not have is answered -32601 "Method not found:
//! METHOD", where rmcp's message is the bare method name.

use std::future::Future;
use std::sync::Arc;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Mutex};

use super::duplicates::{self, DuplicateArguments};

/// The longest line read whole (rmcp's limit, so what it accepted is still accepted).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// JSON-RPC 2.0's code for a message that is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0's code for JSON that is not a valid request.
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0's code for a known method's parameters that do not read.
const INVALID_PARAMS: i64 = -32602;
/// MCP's code (2026-07-28) for a request naming a protocol revision the server does not serve
/// that way.
const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// The `_meta` key of a request's protocol revision (MCP 2026-07-28, which has no handshake).
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of a request's client capabilities (MCP 2026-07-28).
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The methods this server answers (`-32601` is for every other).
pub const ANSWERED: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];

/// Where responses go: one writer, locked a whole line at a time.
type Out = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// The transport `serve` takes: messages from the reader task, responses to the shared out.
pub struct LineTransport {
    messages: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    out: Out,
}

impl LineTransport {
    /// Reads `input` on a task of the current runtime and writes to `output`.
    pub fn spawn(
        input: impl tokio::io::AsyncRead + Send + Unpin + 'static,
        output: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        let out: Out = Arc::new(Mutex::new(Box::new(output)));
        let (tx, messages) = mpsc::channel(16);
        tokio::spawn(read_lines(BufReader::new(input), tx, Arc::clone(&out)));
        Self { messages, out }
    }
}

/// Writes one line (a JSON value and `\n`) and flushes it.
async fn write_line(out: &Out, value: &impl serde::Serialize) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value)?;
    line.push(b'\n');
    let mut out = out.lock().await;
    out.write_all(&line).await?;
    out.flush().await
}

impl Transport<RoleServer> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = Arc::clone(&self.out);
        let item = name_the_missing_method(item);
        async move { write_line(&out, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.messages.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.messages.close();
        Ok(())
    }
}

/// rmcp answers a method the server does not have (`nope`, or `resources/list` on a server
/// with tools only) with -32601 and the bare method name as the message; the answer says
/// "Method not found: nope", as JSON-RPC names the error, and what the server does answer.
fn name_the_missing_method(item: TxJsonRpcMessage<RoleServer>) -> TxJsonRpcMessage<RoleServer> {
    match item {
        rmcp::model::JsonRpcMessage::Error(mut e)
            if e.error.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND
                && !e.error.message.contains(' ')
                && !ANSWERED.contains(&&*e.error.message) =>
        {
            e.error.message = format!(
                "Method not found: {} (this server answers initialize, ping, tools/list and tools/call)",
                e.error.message
            )
            .into();
            rmcp::model::JsonRpcMessage::Error(e)
        }
        other => other,
    }
}

/// What one line of input is.
#[derive(Debug)]
pub enum Line {
    /// A message for the service.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// An error response to send back.
    Answer(ErrorResponse),
    /// Nothing to do (an empty line, a notification or a response that is no message).
    Skip,
}

/// A JSON-RPC 2.0 error response, its members in the specification's order.
#[derive(Debug, serde::Serialize)]
pub struct ErrorResponse {
    jsonrpc: &'static str,
    /// The request's id; null when it cannot be read.
    pub id: Value,
    /// The error.
    pub error: ErrorBody,
}

/// A JSON-RPC 2.0 error object.
#[derive(Debug, serde::Serialize)]
pub struct ErrorBody {
    /// -32700, -32600, -32602 or -32022.
    pub code: i64,
    /// What was wrong, one line.
    pub message: String,
    /// What the error carries besides (-32022: the versions served and the one requested).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// An error response: `id` null when the line's id cannot be read.
fn error_response(id: Value, code: i64, message: String) -> Line {
    Line::Answer(ErrorResponse {
        jsonrpc: "2.0",
        id,
        error: ErrorBody {
            code,
            message,
            data: None,
        },
    })
}

/// What a session has passed on to the service so far, which decides how the next line is
/// read.
#[derive(Debug, Default)]
struct Session {
    /// An `initialize` request (the handshake of the revisions up to 2025-11-25).
    initialized: bool,
    /// A request of a revision without a handshake (2026-07-28), served without `initialize`.
    handshake_free: bool,
}

/// Classifies one line (without its `\n`), as the first of a session.
pub fn classify(line: &[u8]) -> Line {
    classify_in(line, &mut Session::default())
}

/// Classifies one line of a session, and notes in `session` the request that starts it.
fn classify_in(line: &[u8], session: &mut Session) -> Line {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => return error_response(Value::Null, PARSE_ERROR, format!("Parse error: {e}")),
    };
    let id = match value.get("id") {
        Some(id @ Value::String(_)) => id.clone(),
        Some(id @ Value::Number(n)) if n.is_i64() || n.is_u64() => id.clone(),
        _ => Value::Null,
    };
    // A request (an id, JSON-RPC 2.0) for a method the server answers: a second
    // `initialize` is refused, and params that do not read are said to be the problem.
    let method = value.get("method").and_then(Value::as_str);
    let request = !id.is_null() && value.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let mut repeated_arguments = Vec::new();
    if let (Some(method), true) = (method, request) {
        if method == "initialize" && session.initialized {
            return error_response(
                id,
                INVALID_REQUEST,
                "Invalid Request: the session is already initialized (a client sends `initialize` once, to start it)".to_owned(),
            );
        }
        if !session.initialized && !session.handshake_free {
            if let Some(error) = before_the_session(method, value.get("params")) {
                return Line::Answer(ErrorResponse {
                    jsonrpc: "2.0",
                    id,
                    error,
                });
            }
        }
        if let Some(problem) = params_problem(method, value.get("params")) {
            return error_response(
                id,
                INVALID_PARAMS,
                format!("Invalid params: {method}: {problem}"),
            );
        }
        if method == "tools/call" {
            let (arguments, elsewhere) = duplicates::in_call(line);
            if let Some(path) = elsewhere.first() {
                let (code, kind) = match path.as_slice() {
                    [_] => (INVALID_REQUEST, "Invalid Request"),
                    _ => (INVALID_PARAMS, "Invalid params"),
                };
                return error_response(
                    id,
                    code,
                    format!(
                        "{kind}: tools/call: `{}` is given more than once: a repeated key is refused, not resolved to one of its values; give it once (nothing was run)",
                        duplicates::shown(path)
                    ),
                );
            }
            repeated_arguments = arguments;
        }
    }
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        Ok(mut message) => {
            if let rmcp::model::JsonRpcMessage::Request(r) = &mut message {
                use rmcp::model::ClientRequest;
                match &mut r.request {
                    ClientRequest::InitializeRequest(_) => session.initialized = true,
                    ClientRequest::CallToolRequest(call) if !repeated_arguments.is_empty() => {
                        call.extensions
                            .insert(DuplicateArguments(repeated_arguments));
                    }
                    _ => {}
                }
                if !session.initialized && opens_without_handshake(&value) {
                    session.handshake_free = true;
                }
            }
            Line::Message(Box::new(message))
        }
        Err(e) => {
            let has = |key: &str| value.get(key).is_some();
            let notification = has("method") && !has("id");
            let response = (has("result") || has("error")) && !has("method");
            if notification || response {
                return Line::Skip;
            }
            error_response(id, INVALID_REQUEST, format!("Invalid Request: {e}"))
        }
    }
}

/// The error for a request that comes before the session has started (no `initialize`
/// request, nor a request of a revision that has none), or `None` to pass it on: `initialize`
/// and `ping` (which MCP allows before `initialize`) are passed on, and so is a request whose
/// `_meta` names a revision without a handshake (2026-07-28, which carries the lifecycle in
/// every request's `_meta`; rmcp checks the rest of it, and serves it).
///
/// A request without that `_meta` is from a client of a handshake revision that skipped
/// `initialize` (rmcp's answer asked it to add `_meta` fields, which would start a session of
/// another revision): -32602, saying to send `initialize` first. A `_meta` naming a revision
/// that starts with `initialize` (2025-11-25 or earlier) is -32022 (Unsupported protocol
/// version, as 2026-07-28 answers a version a server does not serve), listing the revisions
/// served without a handshake: rmcp ran such a request with no handshake at all.
fn before_the_session(method: &str, params: Option<&Value>) -> Option<ErrorBody> {
    if matches!(method, "initialize" | "ping") {
        return None;
    }
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION));
    match version {
        None => Some(ErrorBody {
            code: INVALID_PARAMS,
            message: format!(
                "Invalid params: {method} came before `initialize`: send the `initialize` request first (then `notifications/initialized`); only `ping` is answered before it (a client of protocol revision 2026-07-28, which has no handshake, gives every request `_meta` with `{META_PROTOCOL_VERSION}` and `{META_CLIENT_CAPABILITIES}` instead)"
            ),
            data: None,
        }),
        Some(Value::String(requested)) if has_handshake(requested) => {
            let served = handshake_free_versions();
            Some(ErrorBody {
                code: UNSUPPORTED_PROTOCOL_VERSION,
                message: format!(
                    "Unsupported protocol version: {requested} starts with the `initialize` request: send it first (this request names {requested} in `_meta` and came before it); without a handshake the server serves {}",
                    served.join(", ")
                ),
                data: Some(serde_json::json!({"supported": served, "requested": requested})),
            })
        }
        // Malformed, or a revision without a handshake: rmcp answers (the fields missing, a
        // version not served) or serves it.
        Some(_) => None,
    }
}

/// Whether protocol revision `version` starts with an `initialize` handshake (2025-11-25 and
/// earlier; revisions are dated, so they compare as text).
fn has_handshake(version: &str) -> bool {
    version < rmcp::model::ProtocolVersion::NO_INITIALIZE.as_str()
}

/// The revisions the server serves without a handshake: those of the ones it speaks (rmcp's
/// known revisions, which `ServerHandler::supported_protocol_versions` serves) that have none.
fn handshake_free_versions() -> Vec<String> {
    rmcp::model::ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .filter(|v| !v.has_initialize())
        .map(|v| v.as_str().to_owned())
        .collect()
}

/// Whether the request `value`, passed on before the session started, starts it without a
/// handshake, as rmcp does: a request other than `server/discover` (which it answers and
/// then goes on waiting) whose `_meta` names a revision without a handshake that it serves,
/// with the client's capabilities.
fn opens_without_handshake(value: &Value) -> bool {
    if value.get("method").and_then(Value::as_str) == Some("server/discover") {
        return false;
    }
    let meta = value.get("params").and_then(|p| p.get("_meta"));
    let version = meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let capabilities = meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES));
    version.is_some_and(|v| handshake_free_versions().iter().any(|s| s == v))
        && capabilities.is_some_and(Value::is_object)
}

/// What is wrong with the `params` of a request for `method`, when it is one the server
/// answers ([`ANSWERED`]) and they do not read as that method's (rmcp's own types decide);
/// `None` for any other method, or params that read.
fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    use rmcp::model::{CallToolRequest, InitializeRequest, ListToolsRequest, PingRequest};
    fn reads<T: serde::de::DeserializeOwned>(request: Value) -> Option<String> {
        serde_json::from_value::<T>(request)
            .err()
            .map(|e| e.to_string())
    }
    if !ANSWERED.contains(&method) {
        return None;
    }
    if params.is_some_and(|p| !p.is_object()) {
        return Some("params must be an object".to_owned());
    }
    if method == "tools/call" {
        const SHAPE: &str = r#"{"name": TOOL, "arguments": {…}}"#;
        let Some(params) = params.and_then(Value::as_object) else {
            return Some(format!("no params; it takes {SHAPE}"));
        };
        if !params.get("name").is_some_and(Value::is_string) {
            return Some(format!(
                "`name`, the tool's name, must be a string ({SHAPE})"
            ));
        }
        if params.get("arguments").is_some_and(|a| !a.is_object()) {
            return Some(
                "`arguments` must be an object of the tool's arguments (see its inputSchema)"
                    .to_owned(),
            );
        }
        if let Some(problem) = unknown_call_members(params) {
            return Some(problem);
        }
    }
    let mut request = serde_json::Map::new();
    request.insert("method".to_owned(), Value::String(method.to_owned()));
    if let Some(params) = params {
        request.insert("params".to_owned(), params.clone());
    }
    let request = Value::Object(request);
    match method {
        "initialize" => reads::<InitializeRequest>(request),
        "ping" => reads::<PingRequest>(request),
        "tools/list" => reads::<ListToolsRequest>(request),
        _ => reads::<CallToolRequest>(request),
    }
}

/// The members MCP defines in `tools/call` params, over the revisions the server speaks
/// (2024-11-05 to 2025-11-25 over `initialize`, 2026-07-28 by per-request `_meta`): `name`,
/// `arguments` and `_meta` in every one; `task` (2025-11-25: task-augmented execution, which
/// a server that does not declare tasks runs as a plain call, as this one does); and
/// `inputResponses` and `requestState` (2026-07-28: a retry after an input request, which
/// this server never makes).
pub const CALL_MEMBERS: [&str; 6] = [
    "name",
    "arguments",
    "_meta",
    "task",
    "inputResponses",
    "requestState",
];

/// A `tools/call` params member MCP does not define, named: rmcp would ignore it, so a
/// misspelt `arguments` (`argumnts`, `args`) ran the tool with its defaults and judged what
/// was not asked.
fn unknown_call_members(params: &serde_json::Map<String, Value>) -> Option<String> {
    let unknown: Vec<String> = params
        .keys()
        .filter(|key| !CALL_MEMBERS.contains(&key.as_str()))
        .map(|key| {
            let near = framewise_analysis::gate::nearest(key, CALL_MEMBERS);
            match near.first() {
                Some(near) => format!("unknown member `{key}` (did you mean `{near}`?)"),
                None => format!("unknown member `{key}`"),
            }
        })
        .collect();
    if unknown.is_empty() {
        return None;
    }
    Some(format!(
        "{} in params, which take `name`, `arguments` (the tool's arguments, an object), `_meta`, `task`, `inputResponses` and `requestState`; nothing was run",
        unknown.join("; ")
    ))
}

/// One read of a line, bounded by [`MAX_LINE`].
enum Read {
    Line(Vec<u8>),
    TooLong,
    End,
}

/// Reads up to and without the next `\n`; a line over [`MAX_LINE`] is consumed, not kept.
async fn read_line(input: &mut (impl AsyncBufRead + Unpin)) -> Read {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = match input.fill_buf().await {
            Ok(available) => available,
            Err(_) => return Read::End,
        };
        if available.is_empty() {
            // A last line without its `\n` is still a line.
            return match (too_long, line.is_empty()) {
                (true, _) => Read::TooLong,
                (false, true) => Read::End,
                (false, false) => Read::Line(line),
            };
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let part = &available[..newline.unwrap_or(available.len())];
        if !too_long && line.len() + part.len() > MAX_LINE {
            too_long = true;
            line = Vec::new();
        }
        if !too_long {
            line.extend_from_slice(part);
        }
        let used = newline.map_or(available.len(), |i| i + 1);
        input.consume(used);
        if newline.is_some() {
            return if too_long {
                Read::TooLong
            } else {
                Read::Line(line)
            };
        }
    }
}

/// The reader task: every line classified, messages passed on in order, errors answered.
async fn read_lines(
    mut input: impl AsyncBufRead + Unpin,
    messages: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    out: Out,
) {
    let mut session = Session::default();
    loop {
        let line = match read_line(&mut input).await {
            Read::End => return,
            Read::TooLong => error_response(
                Value::Null,
                INVALID_REQUEST,
                format!("Invalid Request: a message over {MAX_LINE} bytes"),
            ),
            Read::Line(line) => classify_in(&line, &mut session),
        };
        match line {
            Line::Message(message) => {
                if messages.send(*message).await.is_err() {
                    return;
                }
            }
            Line::Answer(answer) => {
                if write_line(&out, &answer).await.is_err() {
                    return;
                }
            }
            Line::Skip => {}
        }
    }
}
