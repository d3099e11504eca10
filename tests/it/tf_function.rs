//! `tf.function` seen from a notebook, against real TensorFlow 2.21: every cell of
//! tests/fixtures/tf/function_reference.json (tracing counts and retracing, Python `print`
//! against `tf.print`, `input_signature` and its errors, concrete functions and their
//! reprs, gradients through a `tf.function`, the rules for variables made inside one,
//! control flow over tensor values, nested structures, methods) runs through a real
//! session, each in a fresh one. Its stdout must be TensorFlow's (numbers within 1e-5,
//! object addresses and capture ids masked), and the lines `tf.print` wrote to stderr
//! must be TensorFlow's. The kernel's own one-line notes on stderr (a function that runs
//! eagerly because its Python reads a tensor's value) are not TensorFlow's and are left
//! out of that comparison; `the_eager_fallback_says_so_once` checks them. The fixture is
//! written by tests/fixtures/tf/make_function_reference.py.

use crate::common::cells::{self, difference};

use mirror_kernel::session::Session;
use serde_json::Value as Json;

fn reference() -> Json {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tf/function_reference.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The fixture's case `name`: its code, stdout and stderr.
fn case(name: &str) -> (String, String, String) {
    let reference = reference();
    let cases = reference["cases"].as_array().cloned().unwrap_or_default();
    let case = cases
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("the fixture has no case {name}"));
    let field = |k: &str| case[k].as_str().unwrap_or("").to_string();
    (field("code"), field("stdout"), field("stderr"))
}

/// `text` with what differs from run to run masked: object addresses (`at 0x7f…>`) and
/// the ids a concrete function lists its captures by (`  139970849183248: TensorSpec…`).
fn mask(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut line = line.to_string();
        while let Some(at) = line.find(" at 0x") {
            let start = at + " at 0x".len();
            let end = line[start..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .map_or(line.len(), |n| start + n);
            line = format!("{} at ADDRESS{}", &line[..at], &line[end..]);
        }
        let body = line.trim_start();
        if let Some((id, rest)) = body.split_once(": ") {
            if !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()) {
                line = format!("{}ID: {rest}", &line[..line.len() - body.len()]);
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The kernel's own notes on stderr, which TensorFlow does not print.
fn is_note(line: &str) -> bool {
    line.starts_with("note: tf.function ")
}

/// Runs the fixture's case `name` in a fresh session and checks it printed what
/// TensorFlow printed.
fn check(name: &str) {
    let (code, want_out, want_err) = case(name);
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let shown = cells::run(&session, &code);
    if let Some((ename, evalue)) = &shown.error {
        panic!(
            "{name}: raised {ename}: {evalue}\nstdout so far:\n{}\nstderr:\n{}",
            shown.stdout, shown.stderr
        );
    }
    if let Some(d) = difference(&mask(&want_out), &mask(&shown.stdout), 1e-5) {
        panic!(
            "{name}: stdout differs: {d}\n\nexpected:\n{want_out}\nprinted:\n{}",
            shown.stdout
        );
    }
    let got_err: String = shown
        .stderr
        .lines()
        .filter(|l| !is_note(l))
        .map(|l| format!("{l}\n"))
        .collect();
    if let Some(d) = difference(&want_err, &got_err, 1e-5) {
        panic!("{name}: stderr differs: {d}\n\nexpected:\n{want_err}\nprinted:\n{got_err}");
    }
}

/// A trace per input type (tensors by dtype and shape, Python values by value, `2.0`
/// the same as `2`), a Python `print` while tracing only, `tf.print` on every call, what a
/// traced tensor shows, and the reprs of the function and its Python function.
#[test]
fn tracing_counts_and_retracing() {
    check("tracing_counts");
}

/// `tf.print` with nested structures, `output_stream`, `sep`, `end`, `summarize`, its
/// number formats and its error for an unknown keyword.
#[test]
fn print_and_tf_print() {
    check("print_and_tf_print");
}

/// One trace for a signature with a `None` dimension, TF's binding errors for tensors of
/// another dtype or rank, Python values and wrong arguments, `tf.TensorSpec`'s repr and
/// `is_compatible_with`, and the errors for a malformed `input_signature`.
#[test]
fn input_signature_and_its_errors() {
    check("input_signature");
}

/// `get_concrete_function` with specs and with values: its repr (parameters, output
/// type, captures), `structured_outputs`, `structured_input_signature`, calling it.
#[test]
fn concrete_functions() {
    check("concrete_functions");
}

/// A tape around a call records the replayed graph (gradients to the input and to
/// captured variables), and a training step with its own tape inside the function.
#[test]
fn gradients_through_a_function() {
    check("gradients_through_a_function");
}

/// A variable made on the first call persists (the first call traces twice); one made on
/// every trace is TF's `ValueError`.
#[test]
fn variables_made_inside() {
    check("variables_made_inside");
}

/// `if`/`while` over a tensor's value give TF's results, `.numpy()` inside is TF's
/// `AttributeError`, and `tf.cond`/`tf.while_loop` eagerly.
#[test]
fn value_dependent_control_flow() {
    check("value_dependent_control_flow");
}

/// Dicts of tensors and Python values as arguments (keyed by structure), NumPy arrays
/// keyed as tensors, methods traced per instance, and `reduce_retracing`.
#[test]
fn nested_structures_and_methods() {
    check("nested_structures_and_methods");
}

/// A function whose Python reads a traced tensor's value runs eagerly on every call and
/// says so once on stderr, naming the function.
/// An optimizer's slots, made by its first step inside the function, are variables made
/// on the first call (TF traces that call twice); a tensor formats as its numpy value.
#[test]
fn optimizer_slots_made_on_the_first_call() {
    check("optimizer_slots_made_on_the_first_call");
}

#[test]
fn the_eager_fallback_says_so_once() {
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let shown = cells::run(
        &session,
        "import tensorflow as tf\n\
         @tf.function\n\
         def h(x):\n\
         \x20   if x > 0:\n\
         \x20       return x\n\
         \x20   return -x\n\
         print(h(tf.constant(3)).numpy(), h(tf.constant(-2)).numpy(), h(tf.constant(-5)).numpy())\n",
    );
    assert_eq!(shown.error, None);
    assert_eq!(shown.stdout, "3 2 5\n");
    let notes: Vec<&str> = shown.stderr.lines().filter(|l| is_note(l)).collect();
    assert_eq!(notes.len(), 1, "stderr:\n{}", shown.stderr);
    assert!(notes[0].contains("'h'"), "{}", notes[0]);
}

#[test]
fn the_masks_hide_only_what_varies() {
    assert_eq!(
        mask("<function f at 0x7fdab3db84a0>\n  139970849183248: TensorSpec(shape=())\n"),
        "<function f at ADDRESS>\n  ID: TensorSpec(shape=())\n"
    );
    // Numbers and words elsewhere still count.
    assert!(difference(
        &mask("  x (POSITIONAL_OR_KEYWORD): Literal[2]"),
        &mask("  x (POSITIONAL_OR_KEYWORD): Literal[3]"),
        1e-5
    )
    .is_some());
    assert!(difference(&mask("Tracing with 2\n"), &mask("Tracing with 3\n"), 1e-5).is_some());
}

/// The same model trained by `fit` and by a hand-written `tf.function` loop over the same
/// batches, from the same weights, with the same optimizer, ends with the same weights:
/// `fit` is that loop. (TensorFlow 2.21 ends this cell 0.0 apart after 2 traces.)
#[test]
fn fit_and_a_tf_function_loop_end_with_the_same_weights() {
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let out = cells::ok(
        &session,
        r#"import numpy as np
import tensorflow as tf
np.random.seed(0)
x = np.random.normal(size=(256, 6)).astype('float32')
y = np.random.randint(0, 3, size=256)
def make():
    m = tf.keras.Sequential([tf.keras.Input(shape=(6,)), tf.keras.layers.Dense(8, activation='relu'),
                             tf.keras.layers.Dense(3)])
    m.set_weights([np.linspace(-0.5, 0.5, 48).reshape(6, 8).astype('float32'), np.zeros(8, 'float32'),
                   np.linspace(0.4, -0.4, 24).reshape(8, 3).astype('float32'), np.zeros(3, 'float32')])
    return m
a = make()
a.compile(optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.9),
          loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
a.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=0)
b = make()
opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
@tf.function
def step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, b(xb, training=True))
    grads = tape.gradient(loss, b.trainable_variables)
    opt.apply_gradients(zip(grads, b.trainable_variables))
    return loss
for epoch in range(2):
    for xb, yb in tf.data.Dataset.from_tensor_slices((x, y)).batch(32):
        step(xb, yb)
diff = max(float(np.abs(p - q).max()) for p, q in zip(a.get_weights(), b.get_weights()))
moved = max(float(np.abs(p - q).max()) for p, q in zip(a.get_weights(), make().get_weights()))
print(diff, moved, step.experimental_get_tracing_count(), int(opt.iterations.numpy()))
"#,
    );
    let fields: Vec<f64> = out
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect();
    let [diff, moved, traces, steps] = fields[..] else {
        panic!("unexpected output: {out}");
    };
    assert!(moved > 0.05, "the weights hardly moved ({moved}): {out}");
    assert!(diff <= 1e-6, "fit and the loop differ by {diff}");
    assert_eq!((traces, steps), (2.0, 16.0), "{out}");
}
