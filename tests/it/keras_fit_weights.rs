//! Per-example weights in `fit`, `evaluate` and the `*_on_batch` calls (`sample_weight`,
//! `class_weight`, `(x, y, sample_weight)` datasets and validation tuples): the History,
//! the logs, the trained weights and Keras's errors against what TensorFlow 2.21 / Keras
//! 3.15 printed for the same cells (tests/fixtures/keras/fit_weights_reference.json,
//! written by make_fit_weights_reference.py beside it), on the compiled engine and on the
//! op library's trainer (a subclassed model); and N replicas training as one does.

use crate::common::cells::{difference, every_cell_matches, one_and_two_replicas, stdout, Fixture};

#[test]
fn every_cell_matches_keras() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/keras/fit_weights_reference.json",
        tol: 1e-5,
        warnings: "WARNING:tensorflow:",
        printed: stdout,
    });
}

/// Each replica weighs its slice of the batch by its slice of the weights and the
/// gradients are summed over the global batch, so two replicas take the step one takes.
const WEIGHTED_FIT: &str = r#"
import numpy as np
xs = np.sin(np.arange(60, dtype="float32")).reshape(20, 3)
ys = (np.cos(np.arange(20)) > 0).astype("int64")
ws = (np.arange(20, dtype="float32") % 5) * 0.5
with scope:
    m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, activation="relu"),
                             tf.keras.layers.Dense(2, activation="softmax")])
    m.set_weights([np.sin(np.arange(w.size, dtype="float32") + i).reshape(w.shape) * 0.5
                   for i, w in enumerate(m.get_weights())])
    m.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.2),
              loss="sparse_categorical_crossentropy", metrics=["accuracy"])
h = m.fit(xs, ys, sample_weight=ws, batch_size=6, epochs=2, shuffle=False, verbose=0,
          validation_split=0.25)
for k in sorted(h.history):
    print(k, *h.history[k])
h = m.fit(xs, ys, class_weight={0: 0.5, 1: 2.0}, batch_size=7, epochs=1, shuffle=False, verbose=0)
print("class", *h.history["loss"])
print("eval", m.evaluate(xs, ys, sample_weight=ws, batch_size=5, verbose=0))
for w in m.get_weights():
    print("w", *w.ravel().tolist())
"#;

#[test]
fn weighted_fit_agrees_on_two_replicas_and_on_one() {
    let (single, mirrored) = one_and_two_replicas(WEIGHTED_FIT);
    assert_eq!(single.lines().filter(|l| l.starts_with("w ")).count(), 4);
    assert!(
        single.lines().any(|l| l.starts_with("val_loss ")),
        "{single}"
    );
    assert_eq!(difference(&single, &mirrored, 1e-6), None);
}
