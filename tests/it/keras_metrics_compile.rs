//! Keras's confusion-count metrics in `compile` (`AUC`, `Precision`, `Recall`, as objects
//! and by name): the History, `evaluate`, the `*_on_batch` logs and their names (`auc_1`
//! for a second instance) against what TensorFlow 2.21 / Keras 3.15 printed for the same
//! cells (tests/fixtures/keras/metrics_compile_reference.json, written by
//! make_metrics_compile_reference.py beside it), on the compiled engine and on the op
//! library's trainer (a subclassed model); and N replicas reporting what one reports.

use crate::common::cells::{difference, every_cell_matches, one_and_two_replicas, stdout, Fixture};

#[test]
fn every_cell_matches_keras() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/keras/metrics_compile_reference.json",
        tol: 1e-5,
        warnings: "WARNING:tensorflow:",
        printed: stdout,
    });
}

/// Each replica counts its share of every batch; the counts summed over the replicas are
/// the counts of one replica that saw the whole batch, so the logs agree.
const CONFUSION_FIT: &str = r#"
import numpy as np
xs = np.sin(np.arange(60, dtype="float32")).reshape(20, 3)
ys = (np.cos(np.arange(20, dtype="float32")) > 0).astype("float32").reshape(20, 1)
with scope:
    m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, activation="relu"),
                             tf.keras.layers.Dense(1, activation="sigmoid")])
    m.set_weights([np.sin(np.arange(w.size, dtype="float32") + i).reshape(w.shape) * 0.5
                   for i, w in enumerate(m.get_weights())])
    m.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.2), loss="binary_crossentropy",
              metrics=[tf.keras.metrics.AUC(), tf.keras.metrics.AUC(curve="PR"), "precision",
                       tf.keras.metrics.Recall(thresholds=0.4)])
h = m.fit(xs, ys, batch_size=6, epochs=3, shuffle=False, verbose=0, validation_split=0.25)
for k in sorted(h.history):
    print(k, *h.history[k])
print("eval", *m.evaluate(xs, ys, batch_size=7, verbose=0))
"#;

#[test]
fn confusion_metrics_agree_on_two_replicas_and_on_one() {
    let (single, mirrored) = one_and_two_replicas(CONFUSION_FIT);
    for key in [
        "auc ",
        "auc_1 ",
        "precision ",
        "recall ",
        "val_auc ",
        "eval ",
    ] {
        assert!(
            single.lines().any(|l| l.starts_with(key)),
            "no {key:?} line in:\n{single}"
        );
    }
    assert_eq!(difference(&single, &mirrored, 1e-6), None);
}
