//! The language corpus: every cell of tests/fixtures/lang/*.py runs through a real
//! session, one session per file, and what a notebook would see (stdout, stderr, the
//! execute result's text, the error's name and message) must equal what CPython 3.11
//! printed for the same cells (tests/fixtures/lang/gen_expected.py wrote the JSON).

use std::sync::Arc;

use mirror_kernel::cell::{CollectSink, ExecuteRequest, Output, StreamName};
use mirror_kernel::session::Session;

struct Seen {
    stdout: String,
    stderr: String,
    result: Option<String>,
    error: Option<(String, String)>,
}

fn run(session: &Session, code: &str) -> Seen {
    let sink = Arc::new(CollectSink::default());
    let req = ExecuteRequest {
        code: code.into(),
        silent: false,
        store_history: true,
        allow_stdin: false,
        user_expressions: vec![],
    };
    let reply = session.execute_blocking(req, Box::new(sink.clone()));
    let mut seen = Seen {
        stdout: String::new(),
        stderr: String::new(),
        result: None,
        error: None,
    };
    for o in sink.take() {
        match o {
            Output::Stream {
                name: StreamName::Stdout,
                text,
            } => seen.stdout.push_str(&text),
            Output::Stream {
                name: StreamName::Stderr,
                text,
            } => seen.stderr.push_str(&text),
            Output::ExecuteResult { data, .. } => {
                seen.result = data
                    .get("text/plain")
                    .and_then(|v| v.as_str())
                    .map(String::from)
            }
            _ => {}
        }
    }
    seen.error = reply.result.err().map(|e| (e.ename, e.evalue));
    seen
}

#[test]
fn corpus_matches_cpython() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lang");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().map(|x| x == "json").unwrap_or(false))
        .collect();
    files.sort();
    let mut total = 0;
    let mut failures = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).expect("fixture");
        let cells: serde_json::Value = serde_json::from_str(&text).expect("json");
        let session = Session::start().expect("session");
        for (i, cell) in cells.as_array().expect("cells").iter().enumerate() {
            total += 1;
            let code = cell["code"].as_str().unwrap_or("");
            let seen = run(&session, code);
            let want_err = cell["error"].as_array().map(|e| {
                (
                    e[0].as_str().unwrap_or("").to_string(),
                    e[1].as_str().unwrap_or("").to_string(),
                )
            });
            let want_result = cell["result"].as_str().map(String::from);
            let ok = seen.stdout == cell["stdout"].as_str().unwrap_or("")
                && seen.stderr == cell["stderr"].as_str().unwrap_or("")
                && seen.result == want_result
                && seen.error == want_err;
            if !ok {
                failures.push(format!(
                    "{}[{i}]:\n{code}\n  want out={:?} err={:?} result={:?} error={:?}\n  got  out={:?} err={:?} result={:?} error={:?}",
                    f.file_name().and_then(|n| n.to_str()).unwrap_or(""),
                    cell["stdout"].as_str().unwrap_or(""),
                    cell["stderr"].as_str().unwrap_or(""),
                    want_result,
                    want_err,
                    seen.stdout,
                    seen.stderr,
                    seen.result,
                    seen.error
                ));
            }
        }
    }
    assert!(
        total >= 150,
        "the corpus must hold at least 150 cells, found {total}"
    );
    assert!(
        failures.is_empty(),
        "{} of {total} cells differ from CPython:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
