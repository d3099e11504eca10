//! Shared driver for the tf_* integration tests: runs cells through a real session and
//! returns what a notebook would show (stdout/stderr text, the cell's result, any error),
//! and compares printed text with a reference's (numbers within a tolerance).

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

/// A token as a number, with the brackets and commas around numbers in printed
/// tensors stripped (`[[2.`, `4.]` and `12.],`).
fn number(token: &str) -> Option<f64> {
    let t = token.trim_matches(|c: char| matches!(c, '[' | ']' | '(' | ')' | ','));
    if t.is_empty() {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Where `got` differs from `want`, if anywhere: line by line, token by token, numbers
/// within 1e-5 (relative for large ones, with the brackets and commas around them equal),
/// everything else exactly.
pub fn difference(want: &str, got: &str) -> Option<String> {
    let (wl, gl): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    if wl.len() != gl.len() {
        return Some(format!("{} lines expected, {} printed", wl.len(), gl.len()));
    }
    for (i, (w, g)) in wl.iter().zip(&gl).enumerate() {
        let (wt, gt): (Vec<&str>, Vec<&str>) = (
            w.split_whitespace().collect(),
            g.split_whitespace().collect(),
        );
        if wt.len() != gt.len() {
            return Some(format!("line {}: {w:?} vs {g:?}", i + 1));
        }
        for (a, b) in wt.iter().zip(&gt) {
            let same = match (number(a), number(b)) {
                (Some(x), Some(y)) => {
                    // The text around the number must match too (brackets, commas).
                    let shell = |s: &str| {
                        s.chars()
                            .filter(|c| "[](),".contains(*c))
                            .collect::<String>()
                    };
                    shell(a) == shell(b) && (x - y).abs() <= 1e-5 * x.abs().max(1.0)
                }
                _ => a == b,
            };
            if !same {
                return Some(format!(
                    "line {}: {a:?} vs {b:?}\nexpected: {w}\nprinted:  {g}",
                    i + 1
                ));
            }
        }
    }
    None
}
