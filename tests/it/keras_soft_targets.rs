//! The categorical cross-entropy in `fit` on targets whose rows do not sum to one, on a
//! softmax output and from logits: the History and the trained weights against what
//! TensorFlow 2.21 / Keras 3.15 printed (tests/fixtures/keras/soft_targets_reference.json,
//! written by make_soft_targets_reference.py beside it). TensorFlow's kernel takes
//! `softmax - labels` as the gradient, which differs from the exact derivative for such
//! targets, and Keras users' smoothed or partial labels meet it.

use crate::common::cells::{every_cell_matches, stdout, Fixture};

#[test]
fn every_cell_matches_keras() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/keras/soft_targets_reference.json",
        tol: 1e-5,
        warnings: "WARNING:tensorflow:",
        printed: stdout,
    });
}
