//! Keras layers that own their weights, seen from a notebook, against real TensorFlow 2.21
//! / Keras 3.15: every cell of tests/fixtures/keras/layers_reference.json (`layer(x)` on
//! tensors, weight names, paths and shapes, `built`, a layer shared by two models,
//! `model.trainable_variables`, gradients of `layer(x)` and of a subclassed model under
//! `tf.GradientTape`, a subclassed Layer with `add_weight`, `tf.Module` variable
//! collection, `fit` keeping `layer.kernel` current, a subclassed model trained by `fit` on
//! one device and on a two-replica MirroredStrategy, `summary()` and `get_layer`,
//! input-spec errors, initializer objects, and a user's layer inside a Sequential trained
//! by `fit`) runs through a real session, each in a fresh one, and must print what Keras
//! printed: numbers within 1e-5 (relative for large ones), everything else exactly. The
//! fixture is written by tests/fixtures/keras/make_layers_reference.py.

use crate::common::cells::every_layer_cell_matches;

#[test]
fn every_cell_matches_keras() {
    every_layer_cell_matches("tests/fixtures/keras/layers_reference.json");
}
