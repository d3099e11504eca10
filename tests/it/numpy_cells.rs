//! Notebook cells that use numpy, run through a real session (parser, interpreter and the
//! `np` binding), compared with what CPython and numpy 2 print for the same cells
//! (tests/fixtures/numpy/cells.json, made by gen_cells.py in the same folder).

use mirror_kernel::cell::{CollectSink, ExecuteRequest, Output};
use mirror_kernel::session::Session;

fn run(session: &Session, code: &str) -> (String, Option<(String, String)>) {
    let sink = std::sync::Arc::new(CollectSink::default());
    let req = ExecuteRequest {
        code: code.into(),
        silent: false,
        store_history: true,
        allow_stdin: false,
        user_expressions: vec![],
    };
    let reply = session.execute_blocking(req, Box::new(sink.clone()));
    let mut text = String::new();
    for o in sink.take() {
        match o {
            Output::Stream { text: t, .. } => text.push_str(&t),
            Output::ExecuteResult { data, .. } => {
                text.push_str(
                    data.get("text/plain")
                        .and_then(|v| v.as_str())
                        .unwrap_or(""),
                );
                text.push('\n');
            }
            _ => {}
        }
    }
    (text, reply.result.err().map(|e| (e.ename, e.evalue)))
}

#[test]
fn numpy_cells_match_numpy() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/numpy/cells.json"
    ))
    .expect("fixture is committed");
    let fixture: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let session = Session::start().expect("session starts");
    let mut failures = Vec::new();
    for cell in fixture["cells"].as_array().expect("cells") {
        let code = cell["code"].as_str().unwrap_or_default();
        let want_out = cell["output"].as_str().unwrap_or_default();
        let want_err = cell["error"].as_array().map(|e| {
            (
                e[0].as_str().unwrap_or_default().to_string(),
                e[1].as_str().unwrap_or_default().to_string(),
            )
        });
        let (out, err) = run(&session, code);
        if out != want_out || err != want_err {
            let report = format!(
                "--- cell:\n{code}\n--- got:\n{out}{err:?}\n--- numpy:\n{want_out}{want_err:?}"
            );
            failures.push(report);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cells differ\n{}",
        failures.len(),
        fixture["cells"].as_array().map_or(0, |c| c.len()),
        failures.join("\n")
    );
}
