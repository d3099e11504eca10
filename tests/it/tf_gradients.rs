//! `tf.GradientTape` seen from a notebook, against real TensorFlow 2.21: every cell of
//! tests/fixtures/tf/gradient_reference.json (an MLP, a small CNN, the cross-entropies
//! and Keras losses, a residual block, second derivatives through nested and persistent
//! tapes, broadcasting, gather/slice/concat, reductions, activations, the tape's
//! semantics, and TF's errors and warnings) runs through a real session, each in a fresh
//! one, and must print what TensorFlow printed: numbers within 1e-5 (relative for large
//! ones), everything else exactly. The fixture is written by
//! tests/fixtures/tf/make_gradient_reference.py.

use crate::common::cells::{self, every_cell_matches, Fixture};

#[test]
fn every_cell_matches_tensorflow() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/tf/gradient_reference.json",
        tol: 1e-5,
        warnings: "WARNING:tensorflow:",
        printed: cells::stdout,
    });
}
