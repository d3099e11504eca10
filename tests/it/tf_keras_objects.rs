//! Keras's loss, metric and optimizer objects seen from a notebook. Against real
//! TensorFlow 2.21 / Keras 3.15: every cell of tests/fixtures/tf/keras_objects_reference.json
//! (each loss under each reduction with and without sample weights and its gradient, the
//! loss functions, `tf.nn.compute_average_loss`, metric update/result/reset sequences with
//! AUC's thresholds, several steps of every optimizer on a small problem, schedules,
//! clipping, missing gradients and TF's errors) runs in a fresh session and must print what
//! TensorFlow printed: numbers within the cell's tolerance (1e-6 for the optimizer steps),
//! other text exactly, object addresses masked, and the same warnings. The fixture is
//! written by tests/fixtures/tf/make_keras_objects_reference.py. Against the kernel
//! itself: `fit` and a hand-written eager loop over the same batches with the same
//! optimizer end with the same weights, and `compile` takes metric and optimizer objects
//! (logged under their names, computing what the objects compute).

use crate::common::cells::{self as tf_common, every_cell_matches, Fixture};

use mirror_kernel::session::Session;

#[test]
fn every_cell_matches_tensorflow() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/tf/keras_objects_reference.json",
        tol: 1e-5,
        warnings: "UserWarning:",
        printed: |shown| printed(&shown.stdout),
    });
}

/// `0x7f...` addresses replaced by `0x?`, as the fixture writes them.
fn mask_addresses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let hex = tail
            .find(|c: char| !c.is_ascii_hexdigit() || c.is_ascii_uppercase())
            .unwrap_or(tail.len());
        if hex == 0 {
            out.push_str("0x");
        } else {
            out.push_str("0x?");
        }
        rest = &tail[hex..];
    }
    out.push_str(rest);
    out
}

/// What the cell printed, without the INFO lines TensorFlow logs on stderr and the kernel
/// shows in the cell (`Using MirroredStrategy with devices ...`).
fn printed(stdout: &str) -> String {
    let kept: String = stdout
        .lines()
        .filter(|l| !l.starts_with("INFO:tensorflow:"))
        .map(|l| format!("{l}\n"))
        .collect();
    mask_addresses(&kept)
}

#[test]
fn addresses_are_masked_and_info_lines_dropped() {
    assert_eq!(
        mask_addresses("<SGD object at 0x7f3a9c0d1e50> and 0x and 0xZ"),
        "<SGD object at 0x?> and 0x and 0xZ"
    );
    assert_eq!(printed("INFO:tensorflow:Using\nkept 0x1f\n"), "kept 0x?\n");
}

/// The data of the fit-against-loop cells: 16 examples of 3 features, 2 targets.
const DATA: &str = r#"import tensorflow as tf
import numpy as np
x = np.array([[0.1, -0.4, 0.7], [0.9, 0.2, -0.3], [-0.5, 0.6, 0.1], [0.3, -0.8, 0.5],
              [0.0, 0.4, -0.9], [-0.7, -0.1, 0.2], [0.6, 0.6, 0.6], [-0.2, 0.9, -0.4],
              [0.8, -0.6, 0.0], [-0.9, 0.3, 0.7], [0.4, 0.1, -0.6], [-0.3, -0.7, -0.2],
              [0.5, 0.8, 0.3], [-0.6, -0.4, 0.9], [0.2, -0.2, -0.8], [0.7, 0.5, -0.1]], dtype="float32")
y = np.array([[0.5, -0.2], [0.1, 0.8], [-0.4, 0.3], [0.9, -0.6], [-0.1, 0.2], [0.3, 0.7],
              [0.6, -0.5], [-0.8, 0.1], [0.2, 0.4], [-0.3, -0.9], [0.7, 0.0], [0.0, 0.6],
              [-0.5, -0.3], [0.4, 0.9], [-0.7, 0.5], [0.8, -0.1]], dtype="float32")
"#;

#[test]
fn fit_and_an_eager_loop_end_with_the_same_weights() {
    for (name, make) in [
        (
            "sgd",
            "tf.keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True)",
        ),
        ("adam", "tf.keras.optimizers.Adam(0.05)"),
        ("adamw", "tf.keras.optimizers.AdamW(0.05, weight_decay=0.1)"),
        (
            "rmsprop",
            "tf.keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True)",
        ),
        ("adagrad", "tf.keras.optimizers.Adagrad(0.1)"),
    ] {
        let code = format!(
            r#"{DATA}
model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
opt = {make}
model.compile(optimizer=opt, loss="mse")
w0, b0 = model.get_weights()
model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
w_fit, b_fit = model.get_weights()
w = tf.Variable(w0)
b = tf.Variable(b0)
mine = {make}
for epoch in range(3):
    for i in range(0, 16, 4):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.mse(y[i:i + 4], tf.matmul(x[i:i + 4], w) + b))
        mine.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
moved = float(np.max(np.abs(w.numpy() - w0)))
apart = max(float(np.max(np.abs(w.numpy() - w_fit))), float(np.max(np.abs(b.numpy() - b_fit))))
print(moved, apart, int(opt.iterations.numpy()), int(mine.iterations.numpy()))
"#
        );
        let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
        let out = tf_common::ok(&session, &code);
        let nums: Vec<f64> = out
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect();
        let [moved, apart, fit_steps, loop_steps] = nums[..] else {
            panic!("{name}: printed {out}");
        };
        assert!(moved > 1e-3, "{name}: the weights hardly moved ({moved})");
        assert!(
            apart <= 1e-6,
            "{name}: fit and the eager loop end {apart} apart"
        );
        assert_eq!((fit_steps, loop_steps), (12.0, 12.0), "{name}");
    }
}

#[test]
fn compile_takes_metric_and_optimizer_objects() {
    let code = format!(
        r#"{DATA}
labels = np.array([0, 1, 2, 1, 0, 2, 1, 0, 2, 2, 1, 0, 1, 2, 0, 1])
model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(3, activation="softmax")])
opt = tf.keras.optimizers.SGD(0.2, momentum=0.5)
metrics = [tf.keras.metrics.SparseCategoricalAccuracy(name="acc"),
           tf.keras.metrics.SparseTopKCategoricalAccuracy(k=2),
           tf.keras.metrics.SparseCategoricalCrossentropy(),
           "accuracy"]
model.compile(optimizer=opt, loss=tf.keras.losses.SparseCategoricalCrossentropy(), metrics=metrics)
history = model.fit(x, labels, batch_size=8, epochs=2, verbose=0)
print(sorted(history.history.keys()))
print(int(opt.iterations.numpy()), round(float(opt.learning_rate.numpy()), 6))
opt.learning_rate = 0.05
print(round(float(model.optimizer.learning_rate), 6))
scores = model.evaluate(x, labels, verbose=0)
p = model.predict(x, verbose=0)
for m in metrics[:3]:
    m.reset_state()
    m.update_state(labels, p)
eager = [float(m.result().numpy()) for m in metrics[:3]]
print(max(abs(a - b) for a, b in zip(scores[1:4], eager)))
reg = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
reg.compile(optimizer="sgd", loss="mse", metrics=[tf.keras.metrics.RootMeanSquaredError(), tf.keras.metrics.MeanAbsoluteError()])
r = reg.evaluate(x, y, verbose=0)
q = reg.predict(x, verbose=0)
rmse = tf.keras.metrics.RootMeanSquaredError()
rmse.update_state(y, q)
print(abs(r[1] - float(rmse.result().numpy())) < 1e-6, abs(r[1] * r[1] - r[0]) < 1e-6)
try:
    reg.compile(optimizer="sgd", loss="mse", metrics=[tf.keras.metrics.Precision(thresholds=[0.3, 0.6])])
except ValueError as e:
    print("Precision", "compile() on this kernel cannot compute Precision" in str(e))
try:
    reg.compile(optimizer=tf.keras.optimizers.SGD(tf.keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)), loss="mse")
except ValueError as e:
    print("schedule", "constant learning rate" in str(e))
"#
    );
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let out = tf_common::ok(&session, &code);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("['acc', 'accuracy', 'loss', 'sparse_categorical_crossentropy', 'sparse_top_k_categorical_accuracy']"),
        "{out}"
    );
    assert_eq!(lines.get(1).copied(), Some("4 0.2"), "{out}");
    assert_eq!(lines.get(2).copied(), Some("0.05"), "{out}");
    let apart: f64 = lines
        .get(3)
        .and_then(|l| l.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        apart < 1e-5,
        "evaluate and the metric objects differ by {apart}\n{out}"
    );
    assert_eq!(lines.get(4).copied(), Some("True True"), "{out}");
    assert_eq!(lines.get(5).copied(), Some("Precision True"), "{out}");
    assert_eq!(lines.get(6).copied(), Some("schedule True"), "{out}");
}

#[test]
fn an_auc_larger_than_memory_is_a_memory_error_and_the_session_lives() {
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let out = tf_common::ok(
        &session,
        r#"import tensorflow as tf
try:
    tf.keras.metrics.AUC(num_thresholds=10**12)
except MemoryError as e:
    print(type(e).__name__, "Unable to allocate" in str(e))
m = tf.keras.metrics.AUC(num_thresholds=3)
m.update_state([0.0, 1.0], [0.2, 0.9])
print(float(m.result()))
"#,
    );
    assert_eq!(out, "MemoryError True\n1.0\n");
}
