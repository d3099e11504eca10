//! Keras's normalization layers seen from a notebook, against real TensorFlow 2.21 / Keras
//! 3.15: every cell of tests/fixtures/keras/layers_more_reference.json (BatchNormalization
//! and LayerNormalization: weight names, paths, shapes and trainability, outputs in
//! training and inference with set weights, the moving statistics a training call moves,
//! `trainable = False`, another feature axis, `center`/`scale` off, gradients under
//! `tf.GradientTape`, `summary()` rows, one `fit` step with SGD and with Adam, and a `fit`
//! under a two-replica MirroredStrategy, where each replica normalizes its own half of the
//! batch and keeps its own copy of the moving statistics, as TensorFlow does; Keras's
//! `ValueError` for keyword arguments a layer does not know) runs through a
//! real session, each in a fresh one, and must print what Keras printed: numbers within
//! 1e-5 (relative for large ones), everything else exactly. The fixture is written by
//! tests/fixtures/keras/make_layers_more_reference.py.

use crate::common::cells::every_layer_cell_matches;

#[test]
fn every_cell_matches_keras() {
    every_layer_cell_matches("tests/fixtures/keras/layers_more_reference.json");
}
