//! Keras's remaining metric classes: the confusion counts (`TruePositives`, ...),
//! `Precision` and `Recall` with `top_k` and several thresholds, and the operating-point
//! rates (`PrecisionAtRecall`, ...), and the class-sized scores (`FBetaScore`,
//! `F1Score`, `R2Score`), used by hand (update_state, result, reset_state,
//! get_config, repr, variables, errors) and in `compile`, against what TensorFlow 2.21 /
//! Keras 3.15 printed for the same cells (tests/fixtures/keras/metrics_more_reference.json,
//! written by make_metrics_more_reference.py beside it); and N replicas reporting what one
//! reports.

use crate::common::cells::{difference, every_cell_matches, one_and_two_replicas, stdout, Fixture};

#[test]
fn every_cell_matches_keras() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/keras/metrics_more_reference.json",
        tol: 1e-5,
        warnings: "WARNING:tensorflow:",
        printed: stdout,
    });
}

/// Each replica counts its share of every batch; the counts summed over the replicas are
/// the counts of one replica that saw the whole batch, so the logs agree.
const COUNTS_FIT: &str = r#"
import numpy as np
xs = np.sin(np.arange(60, dtype="float32")).reshape(20, 3)
ys = np.eye(3, dtype="float32")[(np.arange(20) * 7) % 3]
with scope:
    m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, activation="relu"),
                             tf.keras.layers.Dense(3, activation="softmax")])
    m.set_weights([np.sin(np.arange(w.size, dtype="float32") + i).reshape(w.shape) * 0.5
                   for i, w in enumerate(m.get_weights())])
    m.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.2), loss="categorical_crossentropy",
              metrics=["true_positives", tf.keras.metrics.FalseNegatives(thresholds=0.3),
                       tf.keras.metrics.Precision(top_k=2), tf.keras.metrics.Recall(top_k=1, class_id=1),
                       tf.keras.metrics.PrecisionAtRecall(0.5, num_thresholds=30),
                       tf.keras.metrics.SensitivityAtSpecificity(0.4, class_id=2)])
h = m.fit(xs, ys, batch_size=6, epochs=3, shuffle=False, verbose=0, validation_split=0.25)
for k in sorted(h.history):
    print(k, *h.history[k])
print("eval", *m.evaluate(xs, ys, batch_size=7, verbose=0))
"#;

#[test]
fn counts_and_rates_agree_on_two_replicas_and_on_one() {
    let (single, mirrored) = one_and_two_replicas(COUNTS_FIT);
    for key in [
        "true_positives ",
        "false_negatives ",
        "precision ",
        "recall ",
        "precision_at_recall ",
        "sensitivity_at_specificity ",
        "val_precision ",
        "eval ",
    ] {
        assert!(
            single.lines().any(|l| l.starts_with(key)),
            "no {key:?} line in:\n{single}"
        );
    }
    assert_eq!(difference(&single, &mirrored, 1e-6), None);
}
