//! Runs a few cells through a real session and prints what a notebook would see.
use mirror_kernel::session::{CollectSink, ExecuteRequest, Output, Session};

pub fn run(session: &Session, code: &str) -> (String, Option<(String, String)>) {
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
fn smoke() {
    let s = Session::start().unwrap();
    let (out, err) = run(&s, "x = 1\ny = [x, 2.5, 'a']\nprint(x + 1, y)\ny");
    assert_eq!(err, None);
    assert_eq!(out, "2 [1, 2.5, 'a']\n[1, 2.5, 'a']\n");
    let (out, err) = run(&s, "def f(n):\n    return 1 if n < 2 else n * f(n - 1)\nprint(f(10))\nclass A:\n    def __init__(self, v):\n        self.v = v\n    def __repr__(self):\n        return f'A({self.v!r})'\nA(3)");
    assert_eq!(err, None, "{out}");
    assert_eq!(out, "3628800\nA(3)\n");
    let (_, err) = run(&s, "1/0");
    assert_eq!(
        err,
        Some(("ZeroDivisionError".into(), "division by zero".into()))
    );
}
