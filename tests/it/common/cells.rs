//! Shared driver for the tf_* integration tests: runs cells through a real session and
//! returns what a notebook would show (stdout/stderr text, the cell's result, any error).

use std::sync::Arc;

use mirror_kernel::cell::{CollectSink, ExecuteRequest, Output, StreamName};
use mirror_kernel::session::Session;

/// What one cell showed.
#[derive(Debug, Default)]
pub struct Shown {
    pub stdout: String,
    pub stderr: String,
    /// `text/plain` of the execute result, if the cell ended in an expression.
    pub result: Option<String>,
    /// `(ename, evalue)` of an uncaught exception.
    pub error: Option<(String, String)>,
    pub outputs: Vec<Output>,
}

pub fn run(session: &Session, code: &str) -> Shown {
    let sink = Arc::new(CollectSink::default());
    let req = ExecuteRequest {
        code: code.into(),
        silent: false,
        store_history: true,
        allow_stdin: false,
        user_expressions: vec![],
    };
    let reply = session.execute_blocking(req, Box::new(sink.clone()));
    let mut shown = Shown {
        error: reply.result.err().map(|e| (e.ename, e.evalue)),
        ..Shown::default()
    };
    for o in sink.take() {
        match &o {
            Output::Stream {
                name: StreamName::Stdout,
                text,
            } => shown.stdout.push_str(text),
            Output::Stream {
                name: StreamName::Stderr,
                text,
            } => shown.stderr.push_str(text),
            Output::ExecuteResult { data, .. } => {
                shown.result = data
                    .get("text/plain")
                    .and_then(|v| v.as_str())
                    .map(str::to_string);
            }
            _ => {}
        }
        shown.outputs.push(o);
    }
    shown
}

/// Runs a cell that must succeed and returns its stdout.
pub fn ok(session: &Session, code: &str) -> String {
    let s = run(session, code);
    assert_eq!(s.error, None, "cell failed:\n{code}\nstdout:\n{}", s.stdout);
    s.stdout
}
