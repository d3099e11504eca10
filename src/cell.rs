//! What running a cell exchanges, as plain types that every floor above the engine speaks:
//! the request ([`ExecuteRequest`]), what the cell shows ([`Output`], sent through a
//! [`Sink`] as it happens), its reply ([`ExecuteReply`], [`ErrorInfo`]), and the answers to
//! completion, `is_complete` and history requests. A leaf: it imports only the display
//! part's MIME bundle, so the language, the session, the protocol and the runner can all
//! use it without importing each other. It knows nothing of ZeroMQ, JSON or Python.

use std::sync::Arc;

use crate::display::MimeBundle;

/// One thing a cell shows, in the order it shows it. The protocol turns each into an iopub
/// message whose parent is the request that ran the cell; the notebook runner turns each into
/// an nbformat output.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Text on `stdout` or `stderr`.
    Stream { name: StreamName, text: String },
    /// A rich value; `display_id` lets later `UpdateDisplayData` replace it in place.
    DisplayData {
        data: MimeBundle,
        metadata: MimeBundle,
        display_id: Option<String>,
    },
    /// Replaces every earlier display that carries the same `display_id`.
    UpdateDisplayData {
        data: MimeBundle,
        metadata: MimeBundle,
        display_id: String,
    },
    /// Clears the cell's output, at once or (with `wait`) when the next output arrives.
    ClearOutput { wait: bool },
    /// The value of the cell's final expression.
    ExecuteResult {
        execution_count: u64,
        data: MimeBundle,
        metadata: MimeBundle,
    },
    /// An uncaught exception; `traceback` lines may hold ANSI colour codes as IPython's do.
    Error(ErrorInfo),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamName {
    Stdout,
    Stderr,
}

impl StreamName {
    pub fn as_str(self) -> &'static str {
        match self {
            StreamName::Stdout => "stdout",
            StreamName::Stderr => "stderr",
        }
    }
}

/// What an exception looks like to Jupyter: its class name, its message, and the formatted
/// traceback lines.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorInfo {
    pub ename: String,
    pub evalue: String,
    pub traceback: Vec<String>,
}

/// Where a running cell sends its output. Implementations must be cheap to call often
/// (progress bars update many times a second) and must never block on a slow client.
pub trait Sink: Send {
    fn emit(&self, output: Output);
    /// Asks the front end for a line of input (`input()`); `None` when the request did not
    /// allow stdin or the front end went away.
    fn input(&self, prompt: &str, password: bool) -> Option<String>;
}

/// A sink that keeps everything in memory; the notebook runner and tests read it afterwards.
#[derive(Default)]
pub struct CollectSink {
    pub outputs: std::sync::Mutex<Vec<Output>>,
    /// Lines handed to `input()` in order; empty means stdin is not allowed.
    pub stdin_lines: std::sync::Mutex<std::collections::VecDeque<String>>,
}

impl CollectSink {
    pub fn take(&self) -> Vec<Output> {
        match self.outputs.lock() {
            Ok(mut o) => std::mem::take(&mut *o),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        }
    }
}

impl Sink for CollectSink {
    fn emit(&self, output: Output) {
        if let Ok(mut o) = self.outputs.lock() {
            o.push(output);
        }
    }
    fn input(&self, _prompt: &str, _password: bool) -> Option<String> {
        self.stdin_lines.lock().ok()?.pop_front()
    }
}

impl<T: Sink + Sync> Sink for Arc<T> {
    fn emit(&self, output: Output) {
        (**self).emit(output)
    }
    fn input(&self, prompt: &str, password: bool) -> Option<String> {
        (**self).input(prompt, password)
    }
}

/// An `execute_request` as the language sees it.
#[derive(Debug, Clone)]
pub struct ExecuteRequest {
    pub code: String,
    pub silent: bool,
    pub store_history: bool,
    pub allow_stdin: bool,
    /// Expressions evaluated after the cell, answered by name in the reply.
    pub user_expressions: Vec<(String, String)>,
}

/// The outcome of a cell, as the `execute_reply` needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecuteReply {
    /// The execution count this cell ran as (the counter only advances for stored cells).
    pub execution_count: u64,
    pub result: Result<(), ErrorInfo>,
    /// Pager payloads (`obj?`, `help(obj)`): bundles the front end shows in its pager.
    pub pager: Vec<MimeBundle>,
    /// Answers to `user_expressions`, each a bundle or an error.
    pub user_expressions: Vec<(String, Result<MimeBundle, ErrorInfo>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub matches: Vec<String>,
    /// Cursor positions in Unicode code points, as the protocol (5.2+) counts them.
    pub cursor_start: usize,
    pub cursor_end: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum IsComplete {
    Complete,
    Incomplete { indent: String },
    Invalid,
}

/// One stored cell for the history channel.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    pub session: u32,
    pub line: u64,
    pub input: String,
}
