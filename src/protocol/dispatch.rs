//! Answers requests: a table from message type to the one function that handles it, and on
//! which channels it is accepted. Shell requests other than `execute_request` are answered
//! at once or by the session thread through a callback; `execute_request`s are queued for
//! [`super::execute`], which runs one cell at a time. Control requests (interrupt, shutdown,
//! kernel_info) are answered on the control task and never wait for a cell. Every body read
//! or written is a typed struct of [`super::content`].

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Map;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::Notify;

use super::content::{
    CommClose, CommInfoReply, CommOpen, CompleteReply, Content, CursorRequest, ExecutionState,
    HistoryReply, InspectReply, InterruptReply, IsCompleteReply, IsCompleteRequest,
    KernelInfoReply, RequestError, ShutdownReply, ShutdownRequest, Success,
};
use super::history;
use super::log;
use super::message::{Message, Parent};
use super::sink::{InputSlot, Outbox};
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

/// The socket a request came in on; its reply goes back on the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Shell,
    Control,
}

impl Kernel {
    fn sender(&self, channel: Channel) -> &UnboundedSender<Message> {
        match channel {
            Channel::Shell => &self.out.shell,
            Channel::Control => &self.out.control,
        }
    }
}

/// What a handler gets: the kernel, the request, and the channel to answer on.
type Handler = fn(&Arc<Kernel>, Message, Channel);

/// One row of the table.
struct Route {
    msg_type: &'static str,
    handler: Handler,
    /// Control requests are also accepted on shell, where old clients send them.
    on_control: bool,
}

const fn shell(msg_type: &'static str, handler: Handler) -> Route {
    Route {
        msg_type,
        handler,
        on_control: false,
    }
}

const fn control(msg_type: &'static str, handler: Handler) -> Route {
    Route {
        msg_type,
        handler,
        on_control: true,
    }
}

/// Every message type the kernel answers. A type not here is logged and dropped.
const ROUTES: &[Route] = &[
    shell("execute_request", queue_execute),
    shell("is_complete_request", is_complete),
    shell("complete_request", complete),
    shell("inspect_request", inspect),
    shell("history_request", history),
    shell("comm_info_request", comm_info),
    shell("comm_open", comm_open),
    // No comm is ever open, so messages to one have nowhere to go.
    shell("comm_msg", ignore),
    shell("comm_close", ignore),
    control("kernel_info_request", kernel_info),
    control("interrupt_request", interrupt),
    control("shutdown_request", shutdown),
];

/// Handles one message that came in on `channel`; returns at once.
pub fn handle(kernel: &Arc<Kernel>, msg: Message, channel: Channel) {
    let route = ROUTES
        .iter()
        .find(|r| r.msg_type == msg.msg_type() && (channel == Channel::Shell || r.on_control));
    match route {
        Some(route) => (route.handler)(kernel, msg, channel),
        None => log(format!(
            "ignoring unknown {channel:?} message type {:?}",
            msg.msg_type()
        )),
    }
}

/// Reads a request's body. One that does not fit is answered at once with `reply_type` and
/// a `ValueError`, and the idle status that ends the request.
fn body<T: DeserializeOwned>(
    kernel: &Kernel,
    msg: &Message,
    channel: Channel,
    reply_type: &'static str,
) -> Option<T> {
    match msg.content_as::<T>() {
        Ok(body) => Some(body),
        Err(e) => {
            let parent = msg.parent();
            log(format!("malformed {}: {e}", msg.msg_type()));
            finish(
                kernel,
                channel,
                &parent,
                &RequestError::bad_body(reply_type, e),
            );
            None
        }
    }
}

/// Announces that the kernel is busy with `msg`, and returns the parent of what answers it.
fn begin(kernel: &Kernel, msg: &Message) -> Parent {
    let parent = msg.parent();
    kernel.out.status(&parent, ExecutionState::Busy);
    parent
}

/// Sends `reply` on the request's channel, then the idle status that ends the request.
fn finish(kernel: &Kernel, channel: Channel, parent: &Parent, reply: &impl Content) {
    kernel.out.reply(kernel.sender(channel), parent, reply);
    kernel.out.status(parent, ExecutionState::Idle);
}

fn queue_execute(kernel: &Arc<Kernel>, msg: Message, _: Channel) {
    if kernel.executions.send(msg).is_err() {
        log("execute_request after the executor ended; dropped");
    }
}

fn ignore(_: &Arc<Kernel>, _: Message, _: Channel) {}

fn kernel_info(kernel: &Arc<Kernel>, msg: Message, channel: Channel) {
    let parent = begin(kernel, &msg);
    finish(kernel, channel, &parent, &KernelInfoReply::this_kernel());
}

fn is_complete(kernel: &Arc<Kernel>, msg: Message, channel: Channel) {
    let parent = begin(kernel, &msg);
    let Some(req) = body::<IsCompleteRequest>(kernel, &msg, channel, "is_complete_reply") else {
        return;
    };
    let answer = IsCompleteReply::from(Session::is_complete(&req.code));
    finish(kernel, channel, &parent, &answer);
}

fn complete(kernel: &Arc<Kernel>, msg: Message, channel: Channel) {
    let parent = begin(kernel, &msg);
    let Some(req) = body::<CursorRequest>(kernel, &msg, channel, "complete_reply") else {
        return;
    };
    let cursor = req.cursor();
    let answer = kernel.clone();
    kernel.session.complete(req.code, cursor, move |c| {
        let reply = CompleteReply {
            status: Success::Ok,
            matches: c.matches,
            cursor_start: c.cursor_start,
            cursor_end: c.cursor_end,
            metadata: Map::new(),
        };
        finish(&answer, channel, &parent, &reply);
    });
}

fn inspect(kernel: &Arc<Kernel>, msg: Message, channel: Channel) {
    let parent = begin(kernel, &msg);
    let Some(req) = body::<CursorRequest>(kernel, &msg, channel, "inspect_reply") else {
        return;
    };
    let (cursor, detail) = (req.cursor(), req.detail_level.min(1) as u8);
    let answer = kernel.clone();
    kernel
        .session
        .inspect(req.code, cursor, detail, move |found| {
            let reply = InspectReply {
                status: Success::Ok,
                found: found.is_some(),
                data: found.unwrap_or_default(),
                metadata: Map::new(),
            };
            finish(&answer, channel, &parent, &reply);
        });
}

fn history(kernel: &Arc<Kernel>, msg: Message, channel: Channel) {
    let parent = begin(kernel, &msg);
    let Some(req) = body::<history::HistoryRequest>(kernel, &msg, channel, "history_reply") else {
        return;
    };
    let answer = kernel.clone();
    kernel.session.history(move |entries| {
        let reply = HistoryReply {
            status: Success::Ok,
            history: history::answer(&req, &entries),
        };
        finish(&answer, channel, &parent, &reply);
    });
}

fn comm_info(kernel: &Arc<Kernel>, msg: Message, channel: Channel) {
    let parent = begin(kernel, &msg);
    let reply = CommInfoReply {
        status: Success::Ok,
        comms: Map::new(),
    };
    finish(kernel, channel, &parent, &reply);
}

/// No comm targets exist, so every comm is closed at once, as ipykernel does for a target
/// it does not know.
fn comm_open(kernel: &Arc<Kernel>, msg: Message, _: Channel) {
    let parent = begin(kernel, &msg);
    // A body that is not even an object still names no comm we could close.
    let open: CommOpen = msg.content_as().unwrap_or(CommOpen {
        comm_id: serde_json::Value::Null,
        target_name: serde_json::Value::Null,
    });
    log(format!(
        "no comm target {}; closing the comm",
        open.target_name
    ));
    let close = CommClose {
        comm_id: open.comm_id,
        data: Map::new(),
    };
    kernel.out.publish(&parent, &close);
    kernel.out.status(&parent, ExecutionState::Idle);
}

fn interrupt(kernel: &Arc<Kernel>, msg: Message, channel: Channel) {
    kernel.session.interrupt();
    let reply = InterruptReply {
        status: Success::Ok,
    };
    kernel
        .out
        .reply(kernel.sender(channel), &msg.parent(), &reply);
}

fn shutdown(kernel: &Arc<Kernel>, msg: Message, channel: Channel) {
    let (out, parent) = (&kernel.out, msg.parent());
    // A malformed body still asks for a shutdown; it just cannot ask for a restart.
    let req: ShutdownRequest = msg
        .content_as()
        .unwrap_or(ShutdownRequest { restart: false });
    let reply = ShutdownReply {
        status: Success::Ok,
        restart: req.restart,
    };
    out.reply(kernel.sender(channel), &parent, &reply);
    // Front ends that watch iopub learn of the shutdown there too.
    out.publish(&parent, &reply);
    kernel.session.interrupt();
    kernel.shutdown.notify_one();
}

/// The parent of messages the kernel sends on its own (the `starting` status).
pub fn no_parent() -> Parent {
    Parent::none()
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
