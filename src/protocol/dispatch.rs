//! Answers requests. Shell requests other than `execute_request` are answered at once or
//! by the session thread through a callback; `execute_request`s go, in arrival order, to
//! [`run_executor`], which runs one cell at a time so that a failed cell can abort the cells
//! queued behind it. Control requests (interrupt, shutdown, kernel_info) are answered on the
//! control task and never wait for a cell.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::sync::Notify;

use super::history;
use super::message::{Message, Parent, PROTOCOL_VERSION};
use super::sink::{InputSlot, IopubSink, Outbox};
use crate::cell::{ErrorInfo, ExecuteReply, ExecuteRequest, IsComplete};
use crate::session::Session;

/// Everything the request handlers share: the session, the outgoing channels, and the
/// signal that ends the kernel.
pub struct Kernel {
    pub out: Outbox,
    pub session: Session,
    pub interrupt: Arc<AtomicBool>,
    pub executions: UnboundedSender<Message>,
    pub input_slot: InputSlot,
    pub shutdown: Notify,
}

/// Logs to stderr, where Jupyter shows kernel logs; never to a cell. A line names what a
/// client sent (a message type, a parse error), so it is cut short: a client must not be
/// able to fill the log with megabytes per message.
pub fn log(what: impl std::fmt::Display) {
    const MAX_CHARS: usize = 300;
    let text = what.to_string();
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => eprintln!("[mirror-kernel] {}... ({} bytes)", &text[..cut], text.len()),
        None => eprintln!("[mirror-kernel] {text}"),
    }
}

pub fn kernel_info() -> Value {
    json!({
        "status": "ok",
        "protocol_version": PROTOCOL_VERSION,
        "implementation": "mirror",
        "implementation_version": env!("CARGO_PKG_VERSION"),
        "language_info": {
            "name": "python",
            "version": "3.11",
            "mimetype": "text/x-python",
            "file_extension": ".py",
            "pygments_lexer": "ipython3",
            "codemirror_mode": "python",
            "nbconvert_exporter": "python",
        },
        "banner": concat!(
            "mirror-kernel ", env!("CARGO_PKG_VERSION"),
            ": Keras-style data-parallel training (MirroredStrategy) on a Rust engine"
        ),
        "help_links": [
            {"text": "Keras distributed training", "url": "https://keras.io/guides/distributed_training/"},
            {"text": "tf.distribute.MirroredStrategy", "url": "https://www.tensorflow.org/api_docs/python/tf/distribute/MirroredStrategy"},
        ],
        "debugger": false,
    })
}

fn str_field<'a>(content: &'a Value, name: &str) -> &'a str {
    content.get(name).and_then(Value::as_str).unwrap_or("")
}

fn usize_field(content: &Value, name: &str, default: usize) -> usize {
    content
        .get(name)
        .and_then(Value::as_u64)
        .map_or(default, |n| n as usize)
}

/// Handles one shell message; returns at once.
pub fn handle_shell(kernel: &Arc<Kernel>, msg: Message) {
    let out = &kernel.out;
    let parent = msg.parent();
    match msg.msg_type() {
        "execute_request" => {
            if kernel.executions.send(msg).is_err() {
                log("execute_request after the executor ended; dropped");
            }
        }
        "kernel_info_request" => {
            out.status(&parent, "busy");
            out.reply(&out.shell, &parent, "kernel_info_reply", kernel_info());
            out.status(&parent, "idle");
        }
        "is_complete_request" => {
            out.status(&parent, "busy");
            let content = match Session::is_complete(str_field(&msg.content, "code")) {
                IsComplete::Complete => json!({"status": "complete"}),
                IsComplete::Incomplete { indent } => {
                    json!({"status": "incomplete", "indent": indent})
                }
                IsComplete::Invalid => json!({"status": "invalid"}),
            };
            out.reply(&out.shell, &parent, "is_complete_reply", content);
            out.status(&parent, "idle");
        }
        "complete_request" => {
            out.status(&parent, "busy");
            let code = str_field(&msg.content, "code").to_string();
            let cursor = usize_field(&msg.content, "cursor_pos", code.chars().count());
            let out2 = out.clone();
            kernel.session.complete(code, cursor, move |c| {
                let content = json!({
                    "status": "ok", "matches": c.matches, "cursor_start": c.cursor_start,
                    "cursor_end": c.cursor_end, "metadata": {},
                });
                out2.reply(&out2.shell, &parent, "complete_reply", content);
                out2.status(&parent, "idle");
            });
        }
        "inspect_request" => {
            out.status(&parent, "busy");
            let code = str_field(&msg.content, "code").to_string();
            let cursor = usize_field(&msg.content, "cursor_pos", code.chars().count());
            let detail = usize_field(&msg.content, "detail_level", 0).min(1) as u8;
            let out2 = out.clone();
            kernel.session.inspect(code, cursor, detail, move |found| {
                let content = json!({
                    "status": "ok", "found": found.is_some(),
                    "data": found.unwrap_or_default(), "metadata": {},
                });
                out2.reply(&out2.shell, &parent, "inspect_reply", content);
                out2.status(&parent, "idle");
            });
        }
        "history_request" => {
            out.status(&parent, "busy");
            let out2 = out.clone();
            let req: Result<history::HistoryRequest, _> = msg.content_as();
            kernel.session.history(move |entries| {
                let content = match req {
                    Ok(req) => json!({"status": "ok", "history": history::answer(&req, &entries)}),
                    Err(e) => error_content("ValueError", &format!("bad history_request: {e}")),
                };
                out2.reply(&out2.shell, &parent, "history_reply", content);
                out2.status(&parent, "idle");
            });
        }
        "comm_info_request" => {
            out.status(&parent, "busy");
            out.reply(
                &out.shell,
                &parent,
                "comm_info_reply",
                json!({"status": "ok", "comms": {}}),
            );
            out.status(&parent, "idle");
        }
        "comm_open" => {
            // No comm targets exist, so every comm is closed at once, as ipykernel does for
            // a target it does not know.
            out.status(&parent, "busy");
            let id = msg.content.get("comm_id").cloned().unwrap_or(Value::Null);
            log(format!(
                "no comm target {}; closing the comm",
                msg.content.get("target_name").unwrap_or(&Value::Null)
            ));
            out.publish(&parent, "comm_close", json!({"comm_id": id, "data": {}}));
            out.status(&parent, "idle");
        }
        "comm_msg" | "comm_close" => {}
        // Old clients send these on shell.
        "shutdown_request" | "interrupt_request" => handle_control(kernel, msg, true),
        other => log(format!("ignoring unknown shell message type {other:?}")),
    }
}

fn error_content(ename: &str, evalue: &str) -> Value {
    json!({"status": "error", "ename": ename, "evalue": evalue, "traceback": []})
}

/// Handles one control message (or a shutdown/interrupt that came on shell).
pub fn handle_control(kernel: &Arc<Kernel>, msg: Message, on_shell: bool) {
    let out = &kernel.out;
    let parent = msg.parent();
    let channel = if on_shell { &out.shell } else { &out.control };
    match msg.msg_type() {
        "kernel_info_request" => {
            out.status(&parent, "busy");
            out.reply(channel, &parent, "kernel_info_reply", kernel_info());
            out.status(&parent, "idle");
        }
        "interrupt_request" => {
            kernel.session.interrupt();
            out.reply(channel, &parent, "interrupt_reply", json!({"status": "ok"}));
        }
        "shutdown_request" => {
            let restart = msg
                .content
                .get("restart")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let content = json!({"status": "ok", "restart": restart});
            out.reply(channel, &parent, "shutdown_reply", content.clone());
            // Front ends that watch iopub learn of the shutdown there too.
            out.publish(&parent, "shutdown_reply", content);
            kernel.session.interrupt();
            kernel.shutdown.notify_one();
        }
        other => log(format!("ignoring unknown control message type {other:?}")),
    }
}

#[derive(Debug, Deserialize)]
struct ExecuteContent {
    #[serde(default)]
    code: String,
    #[serde(default)]
    silent: bool,
    #[serde(default = "yes")]
    store_history: bool,
    #[serde(default)]
    user_expressions: Map<String, Value>,
    #[serde(default = "yes")]
    allow_stdin: bool,
    #[serde(default = "yes")]
    stop_on_error: bool,
}

fn yes() -> bool {
    true
}

/// Runs `execute_request`s one at a time, in arrival order.
pub async fn run_executor(kernel: Arc<Kernel>, mut queue: UnboundedReceiver<Message>) {
    let mut last_count: u64 = 0;
    while let Some(msg) = queue.recv().await {
        execute_one(&kernel, msg, &mut last_count, &mut queue).await;
    }
}

/// Runs one cell. Like ipykernel, a cell that fails with `stop_on_error` set aborts the
/// cells already waiting behind it: those that arrived before its reply leaves, so that a
/// client that waits for the reply before sending its next cell never has it aborted.
async fn execute_one(
    kernel: &Arc<Kernel>,
    msg: Message,
    last_count: &mut u64,
    queue: &mut UnboundedReceiver<Message>,
) {
    let out = &kernel.out;
    let parent = msg.parent();
    out.status(&parent, "busy");
    // Only an object is a request: `null` or a list is refused, not read as all defaults.
    let parsed = if msg.content.is_object() {
        msg.content_as::<ExecuteContent>()
    } else {
        Err(serde::de::Error::custom(format!(
            "invalid type: {}, expected struct ExecuteContent",
            json_kind(&msg.content)
        )))
    };
    let req: ExecuteContent = match parsed {
        Ok(r) => r,
        Err(e) => {
            log(format!("malformed execute_request: {e}"));
            out.reply(
                &out.shell,
                &parent,
                "execute_reply",
                error_content("ValueError", &e.to_string()),
            );
            out.status(&parent, "idle");
            return;
        }
    };
    let store_history = req.store_history && !req.silent;
    if !req.silent {
        let count = *last_count + u64::from(store_history);
        out.publish(
            &parent,
            "execute_input",
            json!({"code": req.code, "execution_count": count}),
        );
    }
    let request = ExecuteRequest {
        code: req.code,
        silent: req.silent,
        store_history,
        allow_stdin: req.allow_stdin,
        user_expressions: req
            .user_expressions
            .into_iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_string())))
            .collect(),
    };
    let sink = IopubSink {
        out: out.clone(),
        parent: parent.clone(),
        allow_stdin: req.allow_stdin,
        input_slot: kernel.input_slot.clone(),
        interrupt: kernel.interrupt.clone(),
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    kernel.session.execute(request, Box::new(sink), move |r| {
        let _ = tx.send(r);
    });
    let reply = rx.await.unwrap_or_else(|_| ExecuteReply {
        execution_count: *last_count,
        result: Err(ErrorInfo {
            ename: "RuntimeError".into(),
            evalue: "the session has ended".into(),
            traceback: vec![],
        }),
        pager: vec![],
        user_expressions: vec![],
    });
    *last_count = reply.execution_count;
    let mut waiting = vec![];
    if reply.result.is_err() && req.stop_on_error {
        while let Ok(m) = queue.try_recv() {
            waiting.push(m);
        }
    }
    out.reply(&out.shell, &parent, "execute_reply", reply_content(reply));
    out.status(&parent, "idle");
    kernel.interrupt.store(false, Ordering::SeqCst);
    for m in waiting {
        let parent = m.parent();
        out.status(&parent, "busy");
        out.reply(
            &out.shell,
            &parent,
            "execute_reply",
            json!({"status": "aborted", "execution_count": null}),
        );
        out.status(&parent, "idle");
    }
}

/// How serde names a JSON value's kind in its errors.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "sequence",
        Value::Object(_) => "map",
    }
}

fn reply_content(reply: ExecuteReply) -> Value {
    let mut exprs = Map::new();
    for (name, r) in reply.user_expressions {
        let v = match r {
            Ok(data) => json!({"status": "ok", "data": data, "metadata": {}}),
            Err(e) => {
                json!({"status": "error", "ename": e.ename, "evalue": e.evalue, "traceback": e.traceback})
            }
        };
        exprs.insert(name, v);
    }
    let payload: Vec<Value> = reply
        .pager
        .into_iter()
        .map(|data| json!({"source": "page", "data": data, "start": 0}))
        .collect();
    match reply.result {
        Ok(()) => json!({
            "status": "ok", "execution_count": reply.execution_count,
            "payload": payload, "user_expressions": exprs,
        }),
        Err(e) => json!({
            "status": "error", "execution_count": reply.execution_count,
            "ename": e.ename, "evalue": e.evalue, "traceback": e.traceback,
            "payload": payload, "user_expressions": exprs,
        }),
    }
}

/// The parent of messages the kernel sends on its own (the `starting` status).
pub fn no_parent() -> Parent {
    Parent::none()
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
