//! Where the protocol meets a running cell: [`Outbox`] holds the channels to every socket's
//! sending task, and [`IopubSink`] turns the cell's [`Output`] events into iopub messages
//! parented to the request, and `input()` into an `input_request` on stdin.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::message::{Message, Parent};
use crate::cell::{Output, Sink};

/// The sending side of every socket. Each channel feeds one task that owns the socket, so
/// threads that are not on the runtime (the session thread) can send without blocking.
#[derive(Clone)]
pub struct Outbox {
    pub session_id: Arc<str>,
    pub iopub: UnboundedSender<Message>,
    pub shell: UnboundedSender<Message>,
    pub control: UnboundedSender<Message>,
    pub stdin: UnboundedSender<Message>,
}

impl Outbox {
    /// Publishes one iopub message answering `parent`.
    pub fn publish(&self, parent: &Parent, msg_type: &str, content: Value) {
        // A send fails only once the iopub task has ended, i.e. during shutdown.
        let _ = self
            .iopub
            .send(parent.broadcast(&self.session_id, msg_type, content));
    }

    pub fn status(&self, parent: &Parent, state: &str) {
        self.publish(parent, "status", json!({ "execution_state": state }));
    }

    pub fn reply(
        &self,
        channel: &UnboundedSender<Message>,
        parent: &Parent,
        msg_type: &str,
        content: Value,
    ) {
        let _ = channel.send(parent.child(&self.session_id, msg_type, content));
    }
}

/// Longer than the iopub stream batching window (see `sockets`).
const PROMPT_SETTLE: Duration = Duration::from_millis(25);

/// Where the stdin task hands the value of an `input_reply` to the cell waiting for it.
pub type InputSlot = Arc<Mutex<Option<mpsc::Sender<String>>>>;

/// The sink of one `execute_request`.
pub struct IopubSink {
    pub out: Outbox,
    pub parent: Parent,
    pub allow_stdin: bool,
    pub input_slot: InputSlot,
    pub interrupt: Arc<AtomicBool>,
}

fn transient(display_id: Option<&str>) -> Value {
    match display_id {
        Some(id) => json!({ "display_id": id }),
        None => Value::Object(Map::new()),
    }
}

impl Sink for IopubSink {
    fn emit(&self, output: Output) {
        let (msg_type, content) = match output {
            Output::Stream { name, text } => {
                ("stream", json!({"name": name.as_str(), "text": text}))
            }
            Output::DisplayData {
                data,
                metadata,
                display_id,
            } => (
                "display_data",
                json!({"data": data, "metadata": metadata, "transient": transient(display_id.as_deref())}),
            ),
            Output::UpdateDisplayData {
                data,
                metadata,
                display_id,
            } => (
                "update_display_data",
                json!({"data": data, "metadata": metadata, "transient": transient(Some(&display_id))}),
            ),
            Output::ClearOutput { wait } => ("clear_output", json!({ "wait": wait })),
            Output::ExecuteResult {
                execution_count,
                data,
                metadata,
            } => (
                "execute_result",
                json!({"execution_count": execution_count, "data": data, "metadata": metadata}),
            ),
            Output::Error(e) => (
                "error",
                json!({"ename": e.ename, "evalue": e.evalue, "traceback": e.traceback}),
            ),
        };
        self.out.publish(&self.parent, msg_type, content);
    }

    fn input(&self, prompt: &str, password: bool) -> Option<String> {
        if !self.allow_stdin {
            return None;
        }
        // Output printed just before the prompt may still sit in the iopub batching window;
        // letting it leave first keeps the prompt below it in the front end.
        std::thread::sleep(PROMPT_SETTLE);
        let (tx, rx) = mpsc::channel();
        if let Ok(mut slot) = self.input_slot.lock() {
            *slot = Some(tx);
        }
        self.out.reply(
            &self.out.stdin,
            &self.parent,
            "input_request",
            json!({"prompt": prompt, "password": password}),
        );
        // Wake up now and then so an interrupt ends the wait; the interpreter then raises
        // KeyboardInterrupt at its next check.
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(value) => return Some(value),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if self.interrupt.load(Ordering::SeqCst) {
                        break;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        if let Ok(mut slot) = self.input_slot.lock() {
            *slot = None;
        }
        None
    }
}
