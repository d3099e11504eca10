//! Runs `execute_request`s one at a time, in arrival order, so that a failed cell can abort
//! the cells queued behind it (as ipykernel does with `stop_on_error`). Turns the session's
//! [`cell::ExecuteReply`] into the typed `execute_reply` of [`super::content`].

use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedReceiver;

use super::content::{
    ExecuteInput, ExecuteReply, ExecuteRequest, ExecutionState, Payload, RequestError,
    UserExpression,
};
use super::dispatch::Kernel;
use super::log;
use super::message::Message;
use super::sink::IopubSink;
use crate::cell::{self, ErrorInfo};

/// Runs `execute_request`s one at a time, in arrival order.
pub async fn run_executor(kernel: Arc<Kernel>, mut queue: UnboundedReceiver<Message>) {
    let mut last_count: u64 = 0;
    while let Some(msg) = queue.recv().await {
        execute_one(&kernel, msg, &mut last_count, &mut queue).await;
    }
}

/// Reads an `execute_request`'s body. Only an object is a request: `null` or a list is
/// refused, not read as all defaults.
fn request_of(msg: &Message) -> Result<ExecuteRequest, serde_json::Error> {
    if msg.content.is_object() {
        msg.content_as::<ExecuteRequest>()
    } else {
        Err(serde::de::Error::custom(format!(
            "invalid type: {}, expected struct ExecuteRequest",
            json_kind(&msg.content)
        )))
    }
}

/// Runs one cell. A cell that fails with `stop_on_error` set aborts the cells already
/// waiting behind it: those that arrived before its reply leaves, so that a client that
/// waits for the reply before sending its next cell never has it aborted.
async fn execute_one(
    kernel: &Arc<Kernel>,
    msg: Message,
    last_count: &mut u64,
    queue: &mut UnboundedReceiver<Message>,
) {
    let out = &kernel.out;
    let parent = msg.parent();
    out.status(&parent, ExecutionState::Busy);
    let req = match request_of(&msg) {
        Ok(r) => r,
        Err(e) => {
            log(format!("malformed execute_request: {e}"));
            out.reply(
                &out.shell,
                &parent,
                &RequestError::bad_body("execute_reply", e),
            );
            out.status(&parent, ExecutionState::Idle);
            return;
        }
    };
    let store_history = req.store_history && !req.silent;
    if !req.silent {
        let input = ExecuteInput {
            code: req.code.clone(),
            execution_count: *last_count + u64::from(store_history),
        };
        out.publish(&parent, &input);
    }
    let request = cell::ExecuteRequest {
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
    let reply = rx.await.unwrap_or_else(|_| cell::ExecuteReply {
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
    out.reply(&out.shell, &parent, &reply_content(reply));
    out.status(&parent, ExecutionState::Idle);
    kernel.interrupt.store(false, Ordering::SeqCst);
    for m in waiting {
        let parent = m.parent();
        out.status(&parent, ExecutionState::Busy);
        let aborted = ExecuteReply::Aborted {
            execution_count: None,
        };
        out.reply(&out.shell, &parent, &aborted);
        out.status(&parent, ExecutionState::Idle);
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

/// The `execute_reply` for what the session answered.
pub(super) fn reply_content(reply: cell::ExecuteReply) -> ExecuteReply {
    let mut user_expressions = Map::new();
    for (name, r) in reply.user_expressions {
        let answer = match r {
            Ok(data) => UserExpression::Ok {
                data,
                metadata: Map::new(),
            },
            Err(e) => UserExpression::Error(e.into()),
        };
        match serde_json::to_value(answer) {
            Ok(v) => {
                user_expressions.insert(name, v);
            }
            Err(e) => log(format!("could not write user expression {name:?}: {e}")),
        }
    }
    let payload = reply.pager.into_iter().map(Payload::page).collect();
    let execution_count = reply.execution_count;
    match reply.result {
        Ok(()) => ExecuteReply::Ok {
            execution_count,
            payload,
            user_expressions,
        },
        Err(e) => ExecuteReply::Error {
            execution_count,
            error: e.into(),
            payload,
            user_expressions,
        },
    }
}
