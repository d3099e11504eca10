//! Keras's Embedding layer seen from a notebook, against real TensorFlow 2.21 / Keras 3.15:
//! every cell of tests/fixtures/keras/layers_sequence_reference.json (outputs on integer
//! and float indices with set weights, the embeddings' gradient under `tf.GradientTape`,
//! `get_config()`, attributes and weights, Keras's errors for bad sizes and unknown
//! arguments and TensorFlow's for an index out of range, `summary()` rows, two epochs of
//! `fit` of an Embedding + GlobalAveragePooling1D + Dense classifier with SGD and with
//! Adam, and the same classifier under a two-replica MirroredStrategy beside one device)
//! runs through a real session, each in a fresh one, and must print what Keras printed:
//! numbers within 1e-5 (relative for large ones), everything else exactly. The fixture is
//! written by tests/fixtures/keras/make_layers_sequence_reference.py. A model holding an
//! Embedding saved here loads back with its weights and Adam's state.

use crate::common::cells::{every_layer_cell_matches, ok, saved_and_loaded_back, session};

#[test]
fn every_cell_matches_keras() {
    every_layer_cell_matches("tests/fixtures/keras/layers_sequence_reference.json");
}

#[test]
fn a_text_classifier_saved_here_loads_back_and_trains_on_exactly() {
    let s = session();
    ok(
        &s,
        "import tensorflow as tf\nimport numpy as np\n\
np.random.seed(0)\n\
x = np.random.randint(0, 20, size=(12, 6))\n\
y = np.random.randint(0, 2, size=(12,))\n\
m = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Embedding(20, 3), \
tf.keras.layers.GlobalAveragePooling1D(), tf.keras.layers.Dense(1, activation='sigmoid')])\n\
m.compile(optimizer='adam', loss='binary_crossentropy')\n\
m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)\n",
    );
    for (file, out) in saved_and_loaded_back(
        &s,
        "keras-embedding",
        "print(type(a.layers[0]).__name__, a.layers[0].input_dim, a.layers[0].output_dim)",
    ) {
        assert_eq!(out, "Embedding 20 3\nTrue True\nTrue\n", "{file}");
    }
}
