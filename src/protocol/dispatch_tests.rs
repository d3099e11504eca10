//! Tests of the request handlers without sockets: requests go in, and the messages the
//! handlers queue for each socket come out of the channels.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::sync::Notify;

use super::*;
use crate::cell::{ErrorInfo, ExecuteReply};
use crate::protocol::execute::reply_content;
use crate::protocol::message::Message;
use crate::protocol::sink::Outbox;
use std::sync::atomic::Ordering;

fn written(reply: ExecuteReply) -> Value {
    serde_json::to_value(reply_content(reply)).unwrap()
}

struct Harness {
    kernel: Arc<Kernel>,
    iopub: UnboundedReceiver<Message>,
    shell: UnboundedReceiver<Message>,
    control: UnboundedReceiver<Message>,
    _executions: UnboundedReceiver<Message>,
}

fn harness() -> Harness {
    let (iopub_tx, iopub) = unbounded_channel();
    let (shell_tx, shell) = unbounded_channel();
    let (control_tx, control) = unbounded_channel();
    let (stdin_tx, _stdin) = unbounded_channel();
    let (exec_tx, executions) = unbounded_channel();
    let session = Session::start().unwrap();
    let kernel = Arc::new(Kernel {
        out: Outbox {
            session_id: Arc::from("kernel-session"),
            iopub: iopub_tx,
            shell: shell_tx,
            control: control_tx,
            stdin: stdin_tx,
        },
        interrupt: session.interrupt_flag(),
        session,
        executions: exec_tx,
        input_slot: Arc::new(Mutex::new(None)),
        shutdown: Notify::new(),
    });
    Harness {
        kernel,
        iopub,
        shell,
        control,
        _executions: executions,
    }
}

fn request(msg_type: &str, content: Value) -> Message {
    let mut m = Parent::none().child("client", msg_type, content);
    m.identities = vec![b"client-id".to_vec()];
    m
}

fn drain(rx: &mut UnboundedReceiver<Message>) -> Vec<Message> {
    let mut v = vec![];
    while let Ok(m) = rx.try_recv() {
        v.push(m);
    }
    v
}

fn states(msgs: &[Message]) -> Vec<String> {
    msgs.iter()
        .map(|m| match m.msg_type() {
            "status" => m.content["execution_state"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            other => other.to_string(),
        })
        .collect()
}

#[test]
fn kernel_info_is_wrapped_in_busy_and_idle_and_routed_back() {
    let mut h = harness();
    let req = request("kernel_info_request", json!({}));
    handle(&h.kernel, req.clone(), Channel::Shell);
    let replies = drain(&mut h.shell);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].msg_type(), "kernel_info_reply");
    assert_eq!(replies[0].identities, req.identities);
    assert_eq!(
        replies[0].parent_header["msg_id"],
        req.header.msg_id.as_str()
    );
    assert_eq!(
        replies[0].content["language_info"]["codemirror_mode"],
        "python"
    );
    let published = drain(&mut h.iopub);
    assert_eq!(states(&published), ["busy", "idle"]);
    for m in &published {
        assert_eq!(m.parent_header["msg_id"], req.header.msg_id.as_str());
    }
}

#[test]
fn unknown_comms_are_closed_and_unknown_types_ignored() {
    let mut h = harness();
    handle(
        &h.kernel,
        request(
            "comm_open",
            json!({"comm_id": "c1", "target_name": "t", "data": {}}),
        ),
        Channel::Shell,
    );
    let published = drain(&mut h.iopub);
    assert_eq!(states(&published), ["busy", "comm_close", "idle"]);
    assert_eq!(published[1].content["comm_id"], "c1");
    handle(
        &h.kernel,
        request("made_up_request", json!({})),
        Channel::Shell,
    );
    handle(
        &h.kernel,
        request("made_up_request", json!({})),
        Channel::Control,
    );
    assert!(drain(&mut h.shell).is_empty());
    assert!(drain(&mut h.control).is_empty());
    assert!(drain(&mut h.iopub).is_empty());
}

#[test]
fn interrupt_sets_the_flag_and_shutdown_replies_on_control() {
    let mut h = harness();
    handle(
        &h.kernel,
        request("interrupt_request", json!({})),
        Channel::Control,
    );
    assert!(h.kernel.interrupt.load(Ordering::SeqCst));
    assert_eq!(drain(&mut h.control)[0].msg_type(), "interrupt_reply");
    handle(
        &h.kernel,
        request("shutdown_request", json!({"restart": true})),
        Channel::Control,
    );
    let reply = drain(&mut h.control);
    assert_eq!(reply[0].msg_type(), "shutdown_reply");
    assert_eq!(reply[0].content["restart"], true);
    // The stored permit means the serving loop will see the shutdown.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let seen = runtime.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_secs(1),
            h.kernel.shutdown.notified(),
        )
        .await
    });
    assert!(seen.is_ok());
}

#[test]
fn execute_replies_carry_pager_payloads_and_errors() {
    let ok = written(ExecuteReply {
        execution_count: 3,
        result: Ok(()),
        pager: vec![crate::display::plain("help text")],
        user_expressions: vec![],
    });
    assert_eq!(ok["status"], "ok");
    assert_eq!(ok["payload"][0]["source"], "page");
    assert_eq!(ok["payload"][0]["data"]["text/plain"], "help text");
    let err = written(ExecuteReply {
        execution_count: 4,
        result: Err(ErrorInfo {
            ename: "NameError".into(),
            evalue: "name 'x' is not defined".into(),
            traceback: vec!["NameError: name 'x' is not defined".into()],
        }),
        pager: vec![],
        user_expressions: vec![],
    });
    assert_eq!(err["status"], "error");
    assert_eq!(err["ename"], "NameError");
    assert_eq!(err["execution_count"], 4);
}

#[test]
fn a_body_that_does_not_fit_is_answered_under_its_reply_type() {
    let mut h = harness();
    for msg_type in [
        "is_complete_request",
        "complete_request",
        "inspect_request",
        "history_request",
    ] {
        // Fields of the wrong type; a history request has no `code`, so its `n` is wrong.
        let body = json!({"code": 7, "cursor_pos": "x", "n": "x"});
        let req = request(msg_type, body);
        handle(&h.kernel, req, Channel::Shell);
        let replies = drain(&mut h.shell);
        assert_eq!(replies.len(), 1, "{msg_type}");
        assert_eq!(
            replies[0].msg_type(),
            msg_type.replace("_request", "_reply")
        );
        assert_eq!(replies[0].content["status"], "error");
        assert_eq!(replies[0].content["ename"], "ValueError");
        assert_eq!(states(&drain(&mut h.iopub)), ["busy", "idle"]);
    }
}

#[test]
fn control_requests_on_shell_are_answered_on_shell_and_shell_requests_not_on_control() {
    let mut h = harness();
    handle(
        &h.kernel,
        request("interrupt_request", json!({})),
        Channel::Shell,
    );
    assert_eq!(drain(&mut h.shell)[0].msg_type(), "interrupt_reply");
    assert!(drain(&mut h.control).is_empty());
    handle(
        &h.kernel,
        request("is_complete_request", json!({"code": "1"})),
        Channel::Control,
    );
    assert!(drain(&mut h.control).is_empty());
    assert!(drain(&mut h.shell).is_empty());
    handle(
        &h.kernel,
        request("is_complete_request", json!({"code": "for x in y:"})),
        Channel::Shell,
    );
    let reply = drain(&mut h.shell);
    assert_eq!(reply[0].content["status"], "incomplete");
    assert_eq!(reply[0].content["indent"], "    ");
}
