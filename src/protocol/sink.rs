//! Where the protocol meets a running cell: [`Outbox`] holds the channels to every socket's
//! sending task, and [`IopubSink`] turns the cell's [`Output`] events into iopub messages
//! parented to the request, and `input()` into an `input_request` on stdin. Bodies are the
//! typed structs of [`super::content`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::content::{
    ClearOutput, Content, DisplayData, ErrorOutput, ExecuteResult, ExecutionState, InputRequest,
    KernelStatus, Stream, Transient, UpdateDisplayData,
};
use super::log;
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
    pub fn publish(&self, parent: &Parent, content: &impl Content) {
        if let Some(body) = body_of(content) {
            // A send fails only once the iopub task has ended, i.e. during shutdown.
            let _ = self
                .iopub
                .send(parent.broadcast(&self.session_id, content.msg_type(), body));
        }
    }

    pub fn status(&self, parent: &Parent, execution_state: ExecutionState) {
        self.publish(parent, &KernelStatus { execution_state });
    }

    /// Sends `content` on `channel` (shell, control or stdin) to the client of `parent`.
    pub fn reply(
        &self,
        channel: &UnboundedSender<Message>,
        parent: &Parent,
        content: &impl Content,
    ) {
        if let Some(body) = body_of(content) {
            let _ = channel.send(parent.child(&self.session_id, content.msg_type(), body));
        }
    }
}

/// A body as JSON. Only a map with keys that are not strings could fail, and no body has
/// one; should it happen, the message is logged and not sent rather than sent half-made.
fn body_of(content: &impl Content) -> Option<Value> {
    match serde_json::to_value(content) {
        Ok(body) => Some(body),
        Err(e) => {
            log(format!("could not write a {}: {e}", content.msg_type()));
            None
        }
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

impl Sink for IopubSink {
    fn emit(&self, output: Output) {
        let (out, parent) = (&self.out, &self.parent);
        match output {
            Output::Stream { name, text } => out.publish(
                parent,
                &Stream {
                    name: name.as_str(),
                    text,
                },
            ),
            Output::DisplayData {
                data,
                metadata,
                display_id,
            } => out.publish(
                parent,
                &DisplayData {
                    data,
                    metadata,
                    transient: Transient { display_id },
                },
            ),
            Output::UpdateDisplayData {
                data,
                metadata,
                display_id,
            } => out.publish(
                parent,
                &UpdateDisplayData {
                    data,
                    metadata,
                    transient: Transient {
                        display_id: Some(display_id),
                    },
                },
            ),
            Output::ClearOutput { wait } => out.publish(parent, &ClearOutput { wait }),
            Output::ExecuteResult {
                execution_count,
                data,
                metadata,
            } => out.publish(
                parent,
                &ExecuteResult {
                    execution_count,
                    data,
                    metadata,
                },
            ),
            Output::Error(e) => out.publish(parent, &ErrorOutput::from(e)),
        }
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
            &InputRequest {
                prompt: prompt.to_string(),
                password,
            },
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
