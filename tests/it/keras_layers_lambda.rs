//! Keras's Lambda layer seen from a notebook, against real TensorFlow 2.21 / Keras 3.15:
//! every cell of tests/fixtures/keras/layers_lambda_reference.json (attributes, calls with
//! `arguments`, `training` and masks, output shapes on `keras.Input` traced, given as a
//! tuple or as a function, and for a list of inputs; `get_config()` of a named function;
//! Keras's errors; tape gradients through a Lambda between Dense layers; `summary()` rows,
//! the weights after the first step and after two more epochs of `fit` with SGD, Adam and
//! momentum in Sequential and functional models; a two-replica MirroredStrategy beside one
//! device) runs through a real session, each in a fresh one, and must print what Keras
//! printed: numbers within 1e-5 (relative for large ones), everything else exactly. The
//! fixture is written by tests/fixtures/keras/make_layers_lambda_reference.py. Keras
//! saves a Python lambda as CPython bytecode, which this interpreter does not have: that
//! is refused by name rather than written some other way.

use crate::common::cells::{every_layer_cell_matches, ok, session};

#[test]
fn every_cell_matches_keras() {
    every_layer_cell_matches("tests/fixtures/keras/layers_lambda_reference.json");
}

#[test]
fn a_python_lambda_is_not_serialized_here() {
    let s = session();
    let out = ok(
        &s,
        "import tensorflow as tf\n\
l = tf.keras.layers.Lambda(lambda t: t * 2.0)\n\
try:\n    l.get_config()\nexcept NotImplementedError as e:\n    print(e)\n",
    );
    assert_eq!(
        out,
        "serializing a Lambda layer whose function is a Python lambda is not supported here: \
Keras writes the lambda's CPython bytecode; use a named function (def) instead\n"
    );
}
