//! `tf.GradientTape` seen from a notebook, against real TensorFlow 2.21: every cell of
//! tests/fixtures/tf/gradient_reference.json (an MLP, a small CNN, the cross-entropies
//! and Keras losses, a residual block, second derivatives through nested and persistent
//! tapes, broadcasting, gather/slice/concat, reductions, activations, the tape's
//! semantics, and TF's errors and warnings) runs through a real session, each in a fresh
//! one, and must print what TensorFlow printed: numbers within 1e-5 (relative for large
//! ones), everything else exactly. The fixture is written by
//! tests/fixtures/tf/make_gradient_reference.py.

use crate::common::cells::{self as tf_common, difference};

#[test]
fn every_cell_matches_tensorflow() {
    let failures = tf_common::reference_failures("tests/fixtures/tf/gradient_reference.json", 10);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_comparison_sees_a_difference() {
    // The check above passes vacuously if the comparison never fails; prove it can.
    assert!(difference("g float32 [2] 1.0 2.0", "g float32 [2] 1.0 2.0001").is_some());
    assert!(difference(
        "tf.Tensor([2. 4.], shape=(2,))",
        "tf.Tensor([2. 4.], shape=(3,))"
    )
    .is_some());
    assert!(difference("x 1.0", "x 1.0\ny").is_some());
    assert!(difference("[[2. 4.]", "[2. 4.]").is_some());
    assert!(difference("g float32 [1] 1000.0", "g float32 [1] 1000.005").is_none());
}
