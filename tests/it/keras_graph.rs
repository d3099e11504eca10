//! The functional API as a graph, seen from a notebook, against real TensorFlow 2.21 /
//! Keras 3.15: every cell of tests/fixtures/keras/graph_reference.json (two inputs joined
//! by `Concatenate`, a residual `Add` block, a layer shared by two inputs, every merge layer
//! and its functional form on tensors and on `keras.Input`s with Keras's shape errors,
//! `summary()` with its "Connected to" column, `model.layers` in Keras's order,
//! `model.inputs`/`outputs`, `get_layer`, `predict`/`fit`/`evaluate` with lists and dicts of
//! arrays, a graph called on tensors under `tf.GradientTape`, and a residual graph trained
//! on a two-replica MirroredStrategy) runs through a real session, each in a fresh one, and
//! must print what Keras printed: numbers within 1e-5, everything else exactly. The
//! fixture is written by tests/fixtures/keras/make_graph_reference.py. One more test trains
//! the same residual graph on two replicas and on one and wants the same weights.

use crate::common::cells::{
    difference, every_cell_matches, one_and_two_replicas, stdout_and_displays, Fixture,
};

#[test]
fn every_cell_matches_keras() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/keras/graph_reference.json",
        tol: 1e-5,
        warnings: "WARNING:tensorflow:",
        printed: stdout_and_displays,
    });
}

/// A residual graph (a skip connection around two Dense layers, so the input's gradient
/// path fans out) trained for two epochs with SGD, printing its loss and weights.
const RESIDUAL_FIT: &str = r#"
import numpy as np
xs = np.sin(np.arange(96, dtype="float32")).reshape(24, 4)
ys = np.cos(np.arange(48, dtype="float32") * 0.7).reshape(24, 2)
with scope:
    x = tf.keras.Input(shape=(4,))
    h = tf.keras.layers.Dense(4, activation="relu")(x)
    h = tf.keras.layers.Dense(4)(h)
    s = tf.keras.layers.Add()([x, h])
    out = tf.keras.layers.Dense(2)(s)
    m = tf.keras.Model(x, out)
    m.set_weights([np.sin(np.arange(w.size, dtype="float32") + i).reshape(w.shape) * 0.5
                   for i, w in enumerate(m.get_weights())])
    m.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9), loss="mse")
h = m.fit(xs, ys, batch_size=8, epochs=2, shuffle=False, verbose=0)
print("loss", *h.history["loss"])
for w in m.get_weights():
    print("w", *w.ravel().tolist())
"#;

#[test]
fn a_residual_graph_trains_alike_on_two_replicas_and_on_one() {
    let (single, mirrored) = one_and_two_replicas(RESIDUAL_FIT);
    assert_eq!(single.lines().filter(|l| l.starts_with("w ")).count(), 6);
    assert_eq!(difference(&single, &mirrored, 1e-6), None);
}
