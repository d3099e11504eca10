//! Functional models with several outputs, seen from a notebook, against real TensorFlow
//! 2.21 / Keras 3.15: every cell of tests/fixtures/keras/multi_output_reference.json (one
//! loss for every output, a list and a dict of losses, `loss_weights` as a list and a dict,
//! metrics per output as a list or a dict, targets as a list, tuple or dict, validation
//! data, `evaluate` as a list and as a dict, `predict` giving a list or a dict, the
//! `train_on_batch`/`test_on_batch`/`predict_on_batch` forms, a `tf.data` dataset of
//! `(x, (y1, y2))` or `(x, {..})` for `fit` and `evaluate`, a two-input
//! two-output graph with `Concatenate` and `Add`, Keras's errors for losses and metrics that
//! do not match the outputs, training on a two-replica MirroredStrategy, and a graph's
//! `save_weights`/`load_weights` in Keras's layout: a file real Keras wrote, and a round
//! trip into a fresh copy of the graph) runs through a real session, each in a fresh one,
//! and must print what Keras printed: History keys and values, weights after the first
//! steps and predictions within 1e-5, everything else exactly. The fixture is written by tests/fixtures/keras/make_multi_output_reference.py.
//! One more test trains a two-output graph on two replicas and on one and wants the same
//! weights and History.

use crate::common::cells::{
    difference, every_cell_matches, one_and_two_replicas, stdout_and_displays, Fixture,
};

#[test]
fn every_cell_matches_keras() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/keras/multi_output_reference.json",
        tol: 1e-5,
        warnings: "WARNING:tensorflow:",
        printed: stdout_and_displays,
    });
}

/// A graph with a regression and a classification head, weighted losses and a metric on
/// one head, trained for two epochs with momentum, printing its History and weights.
const TWO_HEADS_FIT: &str = r#"
import numpy as np
xs = np.sin(np.arange(96, dtype="float32")).reshape(24, 4)
yr = np.cos(np.arange(24, dtype="float32") * 0.7).reshape(24, 1)
yc = (np.arange(24) * 7 % 3).astype("int64")
with scope:
    x = tf.keras.Input(shape=(4,))
    h = tf.keras.layers.Dense(6, activation="relu")(x)
    reg = tf.keras.layers.Dense(1, name="reg")(h)
    cls = tf.keras.layers.Dense(3, activation="softmax", name="cls")(h)
    m = tf.keras.Model(x, [reg, cls])
    m.set_weights([np.sin(np.arange(w.size, dtype="float32") + i).reshape(w.shape) * 0.5
                   for i, w in enumerate(m.get_weights())])
    m.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
              loss={"reg": "mse", "cls": "sparse_categorical_crossentropy"},
              loss_weights=[0.7, 1.3], metrics={"cls": ["accuracy"]})
h = m.fit(xs, {"reg": yr, "cls": yc}, batch_size=8, epochs=2, shuffle=False, verbose=0)
for k in sorted(h.history):
    print(k, *h.history[k])
for w in m.get_weights():
    print("w", *w.ravel().tolist())
"#;

#[test]
fn a_two_output_graph_trains_alike_on_two_replicas_and_on_one() {
    let (single, mirrored) = one_and_two_replicas(TWO_HEADS_FIT);
    assert_eq!(single.lines().filter(|l| l.starts_with("w ")).count(), 6);
    assert!(single.contains("cls_accuracy ") && single.contains("reg_loss "));
    assert_eq!(difference(&single, &mirrored, 1e-6), None);
}
