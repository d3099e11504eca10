//! Keras's layers without variables seen from a notebook, against real TensorFlow 2.21 /
//! Keras 3.15: every cell of tests/fixtures/keras/layers_shaping_reference.json
//! (GlobalAveragePooling1D/2D, GlobalMaxPooling1D/2D with and without `keepdims`,
//! AveragePooling1D/2D with their windows, strides and paddings, ReLU with `max_value`,
//! `negative_slope` and `threshold`, LeakyReLU, ELU, Rescaling, RepeatVector, Permute:
//! outputs and gradients under `tf.GradientTape`, `get_config()`, attributes, Keras's
//! errors for bad arguments and inputs, `summary()` rows of models holding them, and two
//! epochs of `fit` with SGD and with Adam) runs through a real session, each in a fresh
//! one, and must print what Keras printed: numbers within 1e-5 (relative for large ones),
//! everything else exactly. The fixture is written by
//! tests/fixtures/keras/make_layers_shaping_reference.py.

use crate::common::cells::every_layer_cell_matches;

#[test]
fn every_cell_matches_keras() {
    every_layer_cell_matches("tests/fixtures/keras/layers_shaping_reference.json");
}
