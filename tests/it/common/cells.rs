//! Shared driver for the tf_* integration tests: runs cells through a real session and
//! returns what a notebook would show (stdout/stderr text, the cell's result, any error),
//! and checks every cell of a reference fixture (tests/fixtures/{tf,keras}/*.json, written
//! by a generator beside it) against what TensorFlow printed.

use std::sync::Arc;

use mirror_kernel::cell::{CollectSink, ExecuteRequest, Output, StreamName};
use mirror_kernel::session::Session;
use serde_json::Value as Json;

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

/// Where `got` differs from `want`, if anywhere: token by token, numbers within `tol`
/// (relative for numbers above one) with the same brackets and commas around them, other
/// text exactly.
pub fn difference(want: &str, got: &str, tol: f64) -> Option<String> {
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
                    shell(a) == shell(b) && (x - y).abs() <= tol * x.abs().max(1.0)
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

/// A cell's stdout, as a script would print it.
pub fn stdout(shown: &Shown) -> String {
    shown.stdout.clone()
}

/// What a script would have printed to stdout for a cell's outputs: its stdout text and the
/// plain text of what it displayed (Keras prints `summary()` where the kernel displays a
/// table), in order. TensorFlow's `INFO:` log lines, which the kernel shows in the cell and
/// TensorFlow logs to stderr, are left out.
pub fn stdout_and_displays(shown: &Shown) -> String {
    let mut out = String::new();
    for o in &shown.outputs {
        match o {
            Output::Stream {
                name: StreamName::Stdout,
                text,
            } => out.push_str(text),
            Output::DisplayData { data, .. } => {
                if let Some(t) = data.get("text/plain").and_then(|v| v.as_str()) {
                    out.push_str(t);
                    if !t.ends_with('\n') {
                        out.push('\n');
                    }
                }
            }
            _ => {}
        }
    }
    out.lines()
        .filter(|l| !l.starts_with("INFO:tensorflow:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// How a fixture's cells are compared with what TensorFlow printed.
pub struct Fixture {
    /// The fixture, relative to the crate (`tests/fixtures/tf/….json`).
    pub file: &'static str,
    /// The tolerance of numbers, unless a cell gives its own `tol`.
    pub tol: f64,
    /// The stderr lines compared (TF's warnings), by their start.
    pub warnings: &'static str,
    /// What the cell printed, as the generator wrote TensorFlow's (masks, dropped lines).
    pub printed: fn(&Shown) -> String,
}

/// The cells of a fixture file (relative to the crate), at least ten of them.
pub fn fixture_cases(file: &str) -> Vec<Json> {
    let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let reference: Json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cases = reference["cases"].as_array().cloned().unwrap_or_default();
    assert!(cases.len() >= 10, "{path} holds {} cells", cases.len());
    cases
}

/// The failure line of a cell that raised, if it did.
pub fn raised(name: &str, shown: &Shown) -> Option<String> {
    let (ename, evalue) = shown.error.as_ref()?;
    Some(format!(
        "{name}: raised {ename}: {evalue}\nstdout so far:\n{}",
        shown.stdout
    ))
}

/// Runs every cell of the fixture, each in a fresh session as each ran in a fresh Python,
/// and fails with every difference: an exception, stdout beyond the tolerance, other
/// warnings.
pub fn every_cell_matches(f: &Fixture) {
    let mut failures = Vec::new();
    for case in &fixture_cases(f.file) {
        let name = case["name"].as_str().unwrap_or("?");
        let code = case["code"].as_str().unwrap_or("");
        let tol = case["tol"].as_f64().unwrap_or(f.tol);
        let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
        let shown = run(&session, code);
        if let Some(raised) = raised(name, &shown) {
            failures.push(raised);
            continue;
        }
        let want = case["stdout"].as_str().unwrap_or("");
        if let Some(d) = difference(want, &(f.printed)(&shown), tol) {
            failures.push(format!("{name}: stdout differs: {d}"));
        }
        let want_err = case["stderr"].as_str().unwrap_or("");
        let got_err: String = shown
            .stderr
            .lines()
            .filter(|l| l.starts_with(f.warnings))
            .map(|l| format!("{l}\n"))
            .collect();
        if want_err != got_err {
            failures.push(format!(
                "{name}: warnings differ\nexpected:\n{want_err}\nprinted:\n{got_err}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_comparison_sees_a_difference() {
    // The fixture checks pass vacuously if the comparison never fails; prove it can.
    assert!(difference("g float32 [2] 1.0 2.0", "g float32 [2] 1.0 2.0001", 1e-5).is_some());
    assert!(difference(
        "tf.Tensor([2. 4.], shape=(2,))",
        "tf.Tensor([2. 4.], shape=(3,))",
        1e-5
    )
    .is_some());
    assert!(difference("x 1.0", "x 1.0\ny", 1e-5).is_some());
    assert!(difference("[[2. 4.]", "[2. 4.]", 1e-5).is_some());
    assert!(difference("g float32 [1] 1000.0", "g float32 [1] 1000.005", 1e-5).is_none());
    assert!(difference("w 0.5", "w 0.5000015", 1e-6).is_some());
}

/// A `with` block that does nothing: the one-replica run of [`one_and_two_replicas`].
const NO_SCOPE: &str = "class NoScope:\n    def __enter__(self):\n        return None\n\n    def __exit__(self, *exc):\n        return False\n\nscope = NoScope()\n";

/// Runs `body` (which builds and compiles its model inside `with scope:`) in a fresh
/// session without a strategy and in one with a two-replica `MirroredStrategy` on logical
/// CPUs, and returns what each printed (the strategy's INFO lines left out).
pub fn one_and_two_replicas(body: &str) -> (String, String) {
    let one = Session::start().expect("session");
    let single = ok(&one, &format!("import tensorflow as tf\n{NO_SCOPE}{body}"));
    let two = Session::start().expect("session");
    let mirrored = ok(
        &two,
        &format!(
            "import tensorflow as tf\ncpu = tf.config.list_physical_devices(\"CPU\")\n\
             tf.config.set_logical_device_configuration(cpu[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])\n\
             strategy = tf.distribute.MirroredStrategy([\"/cpu:0\", \"/cpu:1\"])\n\
             print(strategy.num_replicas_in_sync)\nscope = strategy.scope()\n{body}"
        ),
    );
    // The strategy's INFO line goes to stdout, as TensorFlow's logging does in a notebook.
    let mirrored: String = mirrored
        .lines()
        .filter(|l| !l.starts_with("INFO:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mirrored = mirrored
        .strip_prefix("2\n")
        .unwrap_or_else(|| panic!("not two replicas:\n{mirrored}"))
        .to_string();
    (single, mirrored)
}

/// Saves the session's fitted model `m` as `.keras` and as `.h5`, loads each file back as
/// `a`, and returns for each file what the cell printed: `describe` (Python that prints
/// facts of `a`), then whether weights and predictions on `x` equal the saved model's bit
/// for bit, then whether one more epoch of `fit` on `x`, `y` keeps them equal (Adam's
/// state must have travelled with the file for that).
pub fn saved_and_loaded_back(s: &Session, tag: &str, describe: &str) -> Vec<(String, String)> {
    let dir = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    ok(
        s,
        "def same(a, b):\n    return len(a) == len(b) and all([(p == q).all() for p, q in zip(a, b)])\n",
    );
    let printed = ["m.keras", "m.h5"]
        .into_iter()
        .map(|file| {
            let p = dir.join(file).display().to_string();
            let out = ok(
                s,
                &format!(
                    "m.save({p:?})\na = tf.keras.models.load_model({p:?})\n{describe}\n\
print(same(m.get_weights(), a.get_weights()), (m.predict(x, verbose=0) == a.predict(x, verbose=0)).all())\n\
m.fit(x, y, epochs=1, batch_size=4, verbose=0, shuffle=False)\n\
a.fit(x, y, epochs=1, batch_size=4, verbose=0, shuffle=False)\n\
print(same(m.get_weights(), a.get_weights()))\n"
                ),
            );
            (file.to_string(), out)
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    printed
}

/// Runs every cell of a Keras layer fixture the way the layer modules compare them:
/// numbers within 1e-5, TF's warnings, what the cell printed and displayed.
pub fn every_layer_cell_matches(file: &'static str) {
    every_cell_matches(&Fixture {
        file,
        tol: 1e-5,
        warnings: "WARNING:tensorflow:",
        printed: stdout_and_displays,
    });
}

/// A fresh session, or the test fails saying why.
pub fn session() -> Session {
    Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"))
}
