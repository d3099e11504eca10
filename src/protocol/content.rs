//! The body of every message this kernel reads or writes, as a typed struct: one per request
//! it understands, one per reply and broadcast it sends. A body names its own message type
//! ([`Content::msg_type`]), so a handler cannot send a reply under the wrong name, and serde
//! writes the JSON, so a field is spelt in one place. Requests keep Jupyter's defaults for
//! missing fields; a field of the wrong type is an error that the handler answers.
//!
//! The wire layer ([`super::wire`], [`super::message`]) stays untyped: it carries any body,
//! including types this kernel does not know, which are logged and dropped.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::message::PROTOCOL_VERSION;
use crate::cell::{ErrorInfo, IsComplete};
use crate::display::MimeBundle;

/// A body this kernel sends.
pub trait Content: Serialize {
    /// The `msg_type` of the message that carries it.
    fn msg_type(&self) -> &'static str;
}

/// Names the message type of bodies whose type is fixed.
macro_rules! message_type {
    ($($ty:ty => $name:literal),* $(,)?) => {
        $(impl Content for $ty {
            fn msg_type(&self) -> &'static str {
                $name
            }
        })*
    };
}

message_type! {
    KernelInfoReply => "kernel_info_reply",
    IsCompleteReply => "is_complete_reply",
    CompleteReply => "complete_reply",
    InspectReply => "inspect_reply",
    HistoryReply => "history_reply",
    CommInfoReply => "comm_info_reply",
    CommClose => "comm_close",
    InterruptReply => "interrupt_reply",
    ShutdownReply => "shutdown_reply",
    ExecuteReply => "execute_reply",
    ExecuteInput => "execute_input",
    KernelStatus => "status",
    Stream => "stream",
    DisplayData => "display_data",
    UpdateDisplayData => "update_display_data",
    ClearOutput => "clear_output",
    ExecuteResult => "execute_result",
    ErrorOutput => "error",
    InputRequest => "input_request",
    IopubWelcome => "iopub_welcome",
}

/// The `status` of a reply that succeeded.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Success {
    Ok,
}

// ---- requests ----

/// `execute_request`.
#[derive(Debug, Deserialize)]
pub struct ExecuteRequest {
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub silent: bool,
    #[serde(default = "yes")]
    pub store_history: bool,
    #[serde(default)]
    pub user_expressions: Map<String, Value>,
    #[serde(default = "yes")]
    pub allow_stdin: bool,
    #[serde(default = "yes")]
    pub stop_on_error: bool,
}

fn yes() -> bool {
    true
}

/// `is_complete_request`.
#[derive(Debug, Deserialize)]
pub struct IsCompleteRequest {
    #[serde(default)]
    pub code: String,
}

/// `complete_request` and `inspect_request`: a cursor in `code`, counted in code points;
/// without one, the end of the code.
#[derive(Debug, Deserialize)]
pub struct CursorRequest {
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub cursor_pos: Option<usize>,
    /// Only `inspect_request` has it: 0 for the signature and doc, 1 for the source too.
    #[serde(default)]
    pub detail_level: u64,
}

impl CursorRequest {
    pub fn cursor(&self) -> usize {
        self.cursor_pos.unwrap_or_else(|| self.code.chars().count())
    }
}

/// `comm_open`: both fields are echoed or logged, never interpreted, so any JSON will do.
#[derive(Debug, Deserialize)]
pub struct CommOpen {
    #[serde(default)]
    pub comm_id: Value,
    #[serde(default)]
    pub target_name: Value,
}

/// `shutdown_request`.
#[derive(Debug, Deserialize)]
pub struct ShutdownRequest {
    #[serde(default)]
    pub restart: bool,
}

/// `input_reply` on stdin.
#[derive(Debug, Deserialize)]
pub struct InputReply {
    #[serde(default)]
    pub value: String,
}

// ---- replies ----

/// `kernel_info_reply`: what this kernel is and speaks.
#[derive(Debug, Serialize)]
pub struct KernelInfoReply {
    pub status: Success,
    pub protocol_version: &'static str,
    pub implementation: &'static str,
    pub implementation_version: &'static str,
    pub language_info: LanguageInfo,
    pub banner: &'static str,
    pub help_links: Vec<HelpLink>,
    pub debugger: bool,
}

#[derive(Debug, Serialize)]
pub struct LanguageInfo {
    pub name: &'static str,
    pub version: &'static str,
    pub mimetype: &'static str,
    pub file_extension: &'static str,
    pub pygments_lexer: &'static str,
    pub codemirror_mode: &'static str,
    pub nbconvert_exporter: &'static str,
}

#[derive(Debug, Serialize)]
pub struct HelpLink {
    pub text: &'static str,
    pub url: &'static str,
}

impl KernelInfoReply {
    /// This kernel's answer: Python 3.11 as the language, since cells are Python and the
    /// front end highlights and exports them as such.
    pub fn this_kernel() -> KernelInfoReply {
        KernelInfoReply {
            status: Success::Ok,
            protocol_version: PROTOCOL_VERSION,
            implementation: "mirror",
            implementation_version: env!("CARGO_PKG_VERSION"),
            language_info: LanguageInfo {
                name: "python",
                version: "3.11",
                mimetype: "text/x-python",
                file_extension: ".py",
                pygments_lexer: "ipython3",
                codemirror_mode: "python",
                nbconvert_exporter: "python",
            },
            banner: concat!(
                "mirror-kernel ",
                env!("CARGO_PKG_VERSION"),
                ": Keras-style data-parallel training (MirroredStrategy) on a Rust engine"
            ),
            help_links: vec![
                HelpLink {
                    text: "Keras distributed training",
                    url: "https://keras.io/guides/distributed_training/",
                },
                HelpLink {
                    text: "tf.distribute.MirroredStrategy",
                    url:
                        "https://www.tensorflow.org/api_docs/python/tf/distribute/MirroredStrategy",
                },
            ],
            debugger: false,
        }
    }
}

/// `is_complete_reply`.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum IsCompleteReply {
    Complete,
    Incomplete { indent: String },
    Invalid,
}

impl From<IsComplete> for IsCompleteReply {
    fn from(answer: IsComplete) -> IsCompleteReply {
        match answer {
            IsComplete::Complete => IsCompleteReply::Complete,
            IsComplete::Incomplete { indent } => IsCompleteReply::Incomplete { indent },
            IsComplete::Invalid => IsCompleteReply::Invalid,
        }
    }
}

/// `complete_reply`.
#[derive(Debug, Serialize)]
pub struct CompleteReply {
    pub status: Success,
    pub matches: Vec<String>,
    pub cursor_start: usize,
    pub cursor_end: usize,
    pub metadata: Map<String, Value>,
}

/// `inspect_reply`.
#[derive(Debug, Serialize)]
pub struct InspectReply {
    pub status: Success,
    pub found: bool,
    pub data: MimeBundle,
    pub metadata: Map<String, Value>,
}

/// `history_reply`: entries as `[session, line, input]` or `[session, line, [input, output]]`.
#[derive(Debug, Serialize)]
pub struct HistoryReply {
    pub status: Success,
    pub history: Vec<Value>,
}

/// `comm_info_reply`.
#[derive(Debug, Serialize)]
pub struct CommInfoReply {
    pub status: Success,
    pub comms: Map<String, Value>,
}

/// `comm_close`, sent on iopub.
#[derive(Debug, Serialize)]
pub struct CommClose {
    pub comm_id: Value,
    pub data: Map<String, Value>,
}

/// `interrupt_reply`.
#[derive(Debug, Serialize)]
pub struct InterruptReply {
    pub status: Success,
}

/// `shutdown_reply`, sent to the client that asked and on iopub.
#[derive(Debug, Serialize)]
pub struct ShutdownReply {
    pub status: Success,
    pub restart: bool,
}

/// `execute_reply`.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ExecuteReply {
    Ok {
        execution_count: u64,
        payload: Vec<Payload>,
        user_expressions: Map<String, Value>,
    },
    Error {
        execution_count: u64,
        #[serde(flatten)]
        error: ErrorOutput,
        payload: Vec<Payload>,
        user_expressions: Map<String, Value>,
    },
    /// A cell that never ran because one before it failed; `execution_count` is null.
    Aborted { execution_count: Option<u64> },
}

/// A pager payload: a bundle the front end shows in its pager (`obj?`, `help(obj)`).
#[derive(Debug, Serialize)]
pub struct Payload {
    pub source: &'static str,
    pub data: MimeBundle,
    pub start: u64,
}

impl Payload {
    pub fn page(data: MimeBundle) -> Payload {
        Payload {
            source: "page",
            data,
            start: 0,
        }
    }
}

/// The answer to one of `user_expressions`.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum UserExpression {
    Ok {
        data: MimeBundle,
        metadata: Map<String, Value>,
    },
    Error(ErrorOutput),
}

/// A request this kernel could not read, answered under its reply type (`reply_type`) so
/// that a client waiting for the reply is not left waiting.
#[derive(Debug, Serialize)]
pub struct RequestError {
    #[serde(skip)]
    pub reply_type: &'static str,
    pub status: ErrorStatus,
    #[serde(flatten)]
    pub error: ErrorOutput,
}

/// The `status` of a reply that failed.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorStatus {
    Error,
}

impl Content for RequestError {
    fn msg_type(&self) -> &'static str {
        self.reply_type
    }
}

impl RequestError {
    /// Python's `ValueError`, naming what serde found wrong with the body.
    pub fn bad_body(reply_type: &'static str, why: impl std::fmt::Display) -> RequestError {
        RequestError {
            reply_type,
            status: ErrorStatus::Error,
            error: ErrorOutput {
                ename: "ValueError".into(),
                evalue: why.to_string(),
                traceback: vec![],
            },
        }
    }
}

// ---- broadcasts on iopub ----

/// `execute_input`: the code of the cell now running, with the count it runs as.
#[derive(Debug, Serialize)]
pub struct ExecuteInput {
    pub code: String,
    pub execution_count: u64,
}

/// `status`.
#[derive(Debug, Serialize)]
pub struct KernelStatus {
    pub execution_state: ExecutionState,
}

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionState {
    Starting,
    Busy,
    Idle,
}

/// `stream`: text on stdout or stderr.
#[derive(Debug, Serialize)]
pub struct Stream {
    pub name: &'static str,
    pub text: String,
}

/// What a display carries besides its bundle; only the id is used.
#[derive(Debug, Default, Serialize)]
pub struct Transient {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_id: Option<String>,
}

/// `display_data`.
#[derive(Debug, Serialize)]
pub struct DisplayData {
    pub data: MimeBundle,
    pub metadata: MimeBundle,
    pub transient: Transient,
}

/// `update_display_data`: replaces the display with the same id in place.
#[derive(Debug, Serialize)]
pub struct UpdateDisplayData {
    pub data: MimeBundle,
    pub metadata: MimeBundle,
    pub transient: Transient,
}

/// `clear_output`.
#[derive(Debug, Serialize)]
pub struct ClearOutput {
    pub wait: bool,
}

/// `execute_result`: the value of a cell's last expression.
#[derive(Debug, Serialize)]
pub struct ExecuteResult {
    pub execution_count: u64,
    pub data: MimeBundle,
    pub metadata: MimeBundle,
}

/// `error` on iopub, and the error fields of a failed reply.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorOutput {
    pub ename: String,
    pub evalue: String,
    pub traceback: Vec<String>,
}

impl From<ErrorInfo> for ErrorOutput {
    fn from(e: ErrorInfo) -> ErrorOutput {
        ErrorOutput {
            ename: e.ename,
            evalue: e.evalue,
            traceback: e.traceback,
        }
    }
}

/// `input_request` on stdin.
#[derive(Debug, Serialize)]
pub struct InputRequest {
    pub prompt: String,
    pub password: bool,
}

/// `iopub_welcome`: tells a new subscriber its subscription is live.
#[derive(Debug, Serialize)]
pub struct IopubWelcome {
    pub subscription: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json_of(c: &impl Content) -> Value {
        serde_json::to_value(c).unwrap()
    }

    #[test]
    fn tagged_replies_write_jupyters_status_field() {
        assert_eq!(
            json_of(&IsCompleteReply::Incomplete {
                indent: "    ".into()
            }),
            json!({"status": "incomplete", "indent": "    "})
        );
        assert_eq!(
            json_of(&IsCompleteReply::Invalid),
            json!({"status": "invalid"})
        );
        assert_eq!(
            json_of(&ExecuteReply::Aborted {
                execution_count: None
            }),
            json!({"status": "aborted", "execution_count": null})
        );
        let failed = ExecuteReply::Error {
            execution_count: 2,
            error: ErrorOutput {
                ename: "NameError".into(),
                evalue: "name 'x' is not defined".into(),
                traceback: vec![],
            },
            payload: vec![],
            user_expressions: Map::new(),
        };
        assert_eq!(
            json_of(&failed),
            json!({"status": "error", "execution_count": 2, "ename": "NameError",
                   "evalue": "name 'x' is not defined", "traceback": [],
                   "payload": [], "user_expressions": {}})
        );
        let refused = RequestError::bad_body("history_reply", "missing field");
        assert_eq!(refused.msg_type(), "history_reply");
        assert_eq!(
            json_of(&refused),
            json!({"status": "error", "ename": "ValueError", "evalue": "missing field",
                   "traceback": []})
        );
    }

    #[test]
    fn a_display_without_an_id_sends_an_empty_transient() {
        let shown = DisplayData {
            data: Map::new(),
            metadata: Map::new(),
            transient: Transient::default(),
        };
        assert_eq!(json_of(&shown)["transient"], json!({}));
        assert_eq!(
            json_of(&KernelStatus {
                execution_state: ExecutionState::Busy
            }),
            json!({"execution_state": "busy"})
        );
    }

    #[test]
    fn requests_take_jupyters_defaults_and_refuse_wrong_types() {
        let r: ExecuteRequest = serde_json::from_value(json!({"code": "1"})).unwrap();
        assert!(r.store_history && r.allow_stdin && r.stop_on_error && !r.silent);
        let c: CursorRequest = serde_json::from_value(json!({"code": "ab"})).unwrap();
        assert_eq!(c.cursor(), 2);
        assert!(serde_json::from_value::<CursorRequest>(json!({"code": 7})).is_err());
        assert!(serde_json::from_value::<ShutdownRequest>(json!(null)).is_err());
    }
}
