//! The five ZeroMQ sockets, each served by tasks of its own on a small tokio runtime, so
//! heartbeat and control answer while a cell runs: shell, control and stdin are ROUTERs,
//! iopub is an XPUB (it greets each new subscriber with `iopub_welcome`, so a client knows
//! when output can no longer be lost), heartbeat a REP. Every socket's sending side is one task fed by a
//! channel, which lets the session thread send without touching the runtime.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::sync::Notify;
use zeromq::{
    RepSocket, RouterRecvHalf, RouterSendHalf, RouterSocket, Socket, SocketRecv, SocketSend,
    XPubSocket, ZmqMessage, ZmqResult,
};

use super::connection::ConnectionInfo;
use super::content::{Content, ExecutionState, InputReply, IopubWelcome};
use super::dispatch::{self, Channel, Kernel};
use super::execute;
use super::log;
use super::message::{Message, Parent};
use super::sign::Signer;
use super::sink::{InputSlot, Outbox};
use super::{wire, ProtocolError};
use crate::session::Session;

/// How long the kernel waits after a shutdown reply before exiting: `send` only queues a
/// message, so the process must live a moment longer for the reply to leave.
const FLUSH_GRACE: Duration = Duration::from_millis(200);

/// Consecutive stream messages are merged up to this size, so a cell printing megabytes in
/// small pieces sends a few large messages rather than a million tiny ones.
const STREAM_BATCH_BYTES: usize = 1 << 20;

/// How long stream output may wait for more of itself before it is published.
const STREAM_WINDOW: Duration = Duration::from_millis(10);

/// Serves the kernel described by the connection file until a shutdown request, then exits
/// the process (the interpreter thread may be inside a cell that never ends, so the process
/// does not wait for it).
pub fn run_kernel(connection_file: &Path) -> Result<(), ProtocolError> {
    let info = ConnectionInfo::read(connection_file)?;
    super::parent::watch();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(serve(info))?;
    std::process::exit(0)
}

fn to_zmq(frames: Vec<Vec<u8>>) -> Option<ZmqMessage> {
    let mut it = frames.into_iter();
    let mut msg = ZmqMessage::from(it.next()?);
    for f in it {
        msg.push_back(f.into());
    }
    Some(msg)
}

fn from_zmq(msg: ZmqMessage) -> Vec<Vec<u8>> {
    msg.into_vec().into_iter().map(|b| b.to_vec()).collect()
}

async fn bind_router(info: &ConnectionInfo, port: u16) -> Result<RouterSocket, ProtocolError> {
    let mut s = RouterSocket::new();
    s.bind(&info.endpoint(port)).await?;
    Ok(s)
}

async fn serve(info: ConnectionInfo) -> Result<(), ProtocolError> {
    let signer = Signer::new(&info.key);
    let (shell_send, shell_recv) = bind_router(&info, info.shell_port).await?.split();
    let (control_send, control_recv) = bind_router(&info, info.control_port).await?.split();
    let (stdin_send, stdin_recv) = bind_router(&info, info.stdin_port).await?.split();
    let mut iopub = XPubSocket::new();
    iopub.bind(&info.endpoint(info.iopub_port)).await?;
    let mut heartbeat = RepSocket::new();
    heartbeat.bind(&info.endpoint(info.hb_port)).await?;

    let (iopub_tx, iopub_rx) = unbounded_channel();
    let (shell_tx, shell_rx) = unbounded_channel();
    let (control_tx, control_rx) = unbounded_channel();
    let (stdin_tx, stdin_rx) = unbounded_channel();
    let (exec_tx, exec_rx) = unbounded_channel();
    let out = Outbox {
        session_id: Arc::from(uuid::Uuid::new_v4().to_string()),
        iopub: iopub_tx,
        shell: shell_tx,
        control: control_tx,
        stdin: stdin_tx,
    };
    let session = Session::start()?;
    let kernel = Arc::new(Kernel {
        out: out.clone(),
        interrupt: session.interrupt_flag(),
        session,
        executions: exec_tx,
        input_slot: Arc::new(Mutex::new(None)),
        shutdown: Notify::new(),
    });

    tokio::spawn(send_router("shell", shell_send, shell_rx, signer.clone()));
    tokio::spawn(send_router(
        "control",
        control_send,
        control_rx,
        signer.clone(),
    ));
    tokio::spawn(send_router("stdin", stdin_send, stdin_rx, signer.clone()));
    tokio::spawn(publish(
        iopub,
        iopub_rx,
        signer.clone(),
        out.session_id.clone(),
    ));
    tokio::spawn(beat(heartbeat));
    tokio::spawn(execute::run_executor(kernel.clone(), exec_rx));
    let k = kernel.clone();
    tokio::spawn(receive("shell", shell_recv, signer.clone(), move |m| {
        dispatch::handle(&k, m, Channel::Shell)
    }));
    let k = kernel.clone();
    tokio::spawn(receive("control", control_recv, signer.clone(), move |m| {
        dispatch::handle(&k, m, Channel::Control)
    }));
    let slot = kernel.input_slot.clone();
    tokio::spawn(receive("stdin", stdin_recv, signer, move |m| {
        deliver_input(&slot, m)
    }));
    let k = kernel.clone();
    tokio::spawn(async move {
        // SIGINT interrupts the running cell, never the process.
        while tokio::signal::ctrl_c().await.is_ok() {
            k.session.interrupt();
        }
    });
    out.status(&Parent::none(), ExecutionState::Starting);

    kernel.shutdown.notified().await;
    tokio::time::sleep(FLUSH_GRACE).await;
    Ok(())
}

fn deliver_input(slot: &InputSlot, msg: Message) {
    if msg.msg_type() != "input_reply" {
        log(format!("ignoring {:?} on stdin", msg.msg_type()));
        return;
    }
    // A reply without a readable value still ends the wait, as an empty line.
    let value = msg
        .content_as::<InputReply>()
        .map(|r| r.value)
        .unwrap_or_default();
    let waiting = slot.lock().ok().and_then(|mut s| s.take());
    match waiting {
        Some(tx) => {
            let _ = tx.send(value);
        }
        None => log("input_reply with no input() waiting; ignored"),
    }
}

/// Receives, verifies and parses messages on a ROUTER; bad ones are logged and dropped.
/// A handler that panics (a bug, or a library that panics on some input) loses that one
/// message: the loop, and with it the socket, goes on.
async fn receive(
    name: &'static str,
    mut socket: RouterRecvHalf,
    signer: Signer,
    handle: impl Fn(Message),
) {
    loop {
        match socket.recv().await {
            Ok(raw) => match wire::parse(from_zmq(raw), &signer) {
                Ok(msg) => {
                    let kind = msg.msg_type().to_string();
                    let handled =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(msg)));
                    if handled.is_err() {
                        log(format!(
                            "handling a {kind} on {name} failed; the message is dropped"
                        ));
                    }
                }
                Err(e) => log(format!("dropped a message on {name}: {e}")),
            },
            Err(e) => {
                log(format!("{name} receive failed: {e}"));
                // Avoid spinning if the socket keeps failing.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

async fn send_router(
    name: &'static str,
    mut socket: RouterSendHalf,
    mut queue: UnboundedReceiver<Message>,
    signer: Signer,
) {
    while let Some(msg) = queue.recv().await {
        let Some(frames) = serialize(&msg, &signer) else {
            continue;
        };
        // A client that went away leaves an unknown identity behind; its reply is lost.
        if let Err(e) = socket.send(frames).await {
            log(format!("could not send {} on {name}: {e}", msg.msg_type()));
        }
    }
}

fn serialize(msg: &Message, signer: &Signer) -> Option<ZmqMessage> {
    match wire::serialize(msg, signer) {
        Ok(frames) => to_zmq(frames),
        Err(e) => {
            log(format!("could not serialize {}: {e}", msg.msg_type()));
            None
        }
    }
}

/// Whether `next` continues the stream message `current` (same request, same stream).
fn same_stream(current: &Message, next: &Message) -> bool {
    current.msg_type() == "stream"
        && next.msg_type() == "stream"
        && current.parent_header.get("msg_id") == next.parent_header.get("msg_id")
        && current.content.get("name") == next.content.get("name")
}

fn stream_text(msg: &mut Message) -> Option<&mut String> {
    match msg.content.get_mut("text") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// What the iopub task wakes up for.
enum IopubEvent {
    Outgoing(Option<Box<Message>>),
    Incoming(ZmqResult<ZmqMessage>),
}

/// Greets a new subscriber. XPUB records a subscription only while `recv` runs, which is why
/// the iopub task keeps receiving as well as sending.
async fn welcome(socket: &mut XPubSocket, raw: ZmqMessage, signer: &Signer, session_id: &str) {
    let Some(frame) = raw.get(0) else { return };
    let Some((&1, topic)) = frame.split_first() else {
        return; // an unsubscription, or noise
    };
    let topic = String::from_utf8_lossy(topic).into_owned();
    let welcome = IopubWelcome {
        subscription: topic.clone(),
    };
    let Ok(body) = serde_json::to_value(&welcome) else {
        return;
    };
    let mut msg = Parent::none().broadcast(session_id, welcome.msg_type(), body);
    if !topic.is_empty() {
        msg.identities = vec![topic.into_bytes()];
    }
    if let Some(frames) = serialize(&msg, signer) {
        if let Err(e) = socket.send(frames).await {
            log(format!("could not send iopub_welcome: {e}"));
        }
    }
}

/// Publishes iopub messages. Stream output is held for at most [`STREAM_WINDOW`] while more
/// of the same stream arrives, so a cell printing in a tight loop sends a few large messages
/// instead of one per print. Any other message ends the batch first, so order is kept.
async fn publish(
    mut socket: XPubSocket,
    mut queue: UnboundedReceiver<Message>,
    signer: Signer,
    session_id: Arc<str>,
) {
    let mut pending: Option<Message> = None;
    loop {
        let next = match pending.take() {
            Some(m) => Some(m),
            None => {
                let event = tokio::select! {
                    m = queue.recv() => IopubEvent::Outgoing(m.map(Box::new)),
                    r = socket.recv() => IopubEvent::Incoming(r),
                };
                match event {
                    IopubEvent::Outgoing(m) => m.map(|b| *b),
                    IopubEvent::Incoming(Ok(raw)) => {
                        welcome(&mut socket, raw, &signer, &session_id).await;
                        continue;
                    }
                    IopubEvent::Incoming(Err(e)) => {
                        log(format!("iopub receive failed: {e}"));
                        continue;
                    }
                }
            }
        };
        let Some(mut msg) = next else { break };
        if msg.msg_type() == "stream" {
            let deadline = tokio::time::Instant::now() + STREAM_WINDOW;
            while stream_text(&mut msg).is_some_and(|t| t.len() < STREAM_BATCH_BYTES) {
                match tokio::time::timeout_at(deadline, queue.recv()).await {
                    Ok(Some(mut more)) if same_stream(&msg, &more) => {
                        let extra = stream_text(&mut more)
                            .map(std::mem::take)
                            .unwrap_or_default();
                        if let Some(t) = stream_text(&mut msg) {
                            t.push_str(&extra);
                        }
                    }
                    Ok(Some(other)) => {
                        pending = Some(other);
                        break;
                    }
                    // The channel closed or the window passed: send what we have.
                    Ok(None) | Err(_) => break,
                }
            }
        }
        if let Some(frames) = serialize(&msg, &signer) {
            if let Err(e) = socket.send(frames).await {
                log(format!("could not publish {}: {e}", msg.msg_type()));
            }
        }
    }
}

async fn beat(mut socket: RepSocket) {
    loop {
        match socket.recv().await {
            Ok(ping) => {
                if let Err(e) = socket.send(ping).await {
                    log(format!("heartbeat send failed: {e}"));
                }
            }
            Err(e) => {
                log(format!("heartbeat receive failed: {e}"));
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::message::Parent;
    use serde_json::json;
    use zeromq::SubSocket;

    async fn next_message(sub: &mut SubSocket, signer: &Signer) -> Message {
        let raw = tokio::time::timeout(Duration::from_secs(10), sub.recv())
            .await
            .expect("iopub went quiet")
            .expect("iopub receive failed");
        wire::parse(from_zmq(raw), signer).expect("a published message must parse")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_small_prints_arrive_whole_in_few_messages_and_in_order() {
        let signer = Signer::new("k");
        let mut iopub = XPubSocket::new();
        let endpoint = iopub.bind("tcp://127.0.0.1:0").await.unwrap().to_string();
        let (tx, rx) = unbounded_channel();
        tokio::spawn(publish(iopub, rx, signer.clone(), Arc::from("s")));
        let mut sub = SubSocket::new();
        sub.connect(&endpoint).await.unwrap();
        sub.subscribe("").await.unwrap();

        // The welcome says the subscription is in place: nothing after it can be lost.
        let welcome = next_message(&mut sub, &signer).await;
        assert_eq!(welcome.msg_type(), "iopub_welcome");
        assert_eq!(welcome.content["subscription"], "");
        let parent = Parent::none();

        let line = "x".repeat(99) + "\n";
        let count = 30_000;
        for _ in 0..count {
            let content = json!({"name": "stdout", "text": line});
            tx.send(parent.broadcast("s", "stream", content)).unwrap();
        }
        tx.send(parent.broadcast("s", "status", json!({"execution_state": "idle"})))
            .unwrap();

        let mut text = String::new();
        let mut messages = 0;
        loop {
            let msg = next_message(&mut sub, &signer).await;
            if msg.msg_type() == "status" {
                break;
            }
            assert_eq!(msg.msg_type(), "stream");
            text.push_str(msg.content["text"].as_str().unwrap());
            messages += 1;
        }
        assert_eq!(text, line.repeat(count));
        assert!(
            messages < count / 10,
            "{messages} messages for {count} prints"
        );
    }
}
