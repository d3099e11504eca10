//! Keras's recurrent layers (SimpleRNN, LSTM, GRU with either reset placement) seen from a
//! notebook, against real TensorFlow 2.21 / Keras 3.15: every cell of
//! tests/fixtures/keras/layers_recurrent_reference.json (weights' names, paths and shapes;
//! outputs and tape gradients with set weights for the last step, the sequence, backwards,
//! other activations and without a bias; `initial_state` and `return_state`; a call and
//! its gradient inside `tf.function`; `get_config()` and attributes; Keras's errors;
//! `summary()` rows and two epochs of `fit` with SGD, momentum and Adam; an Embedding +
//! LSTM classifier under a two-replica MirroredStrategy beside one device) runs through a
//! real session, each in a fresh one, and must print what Keras printed: numbers within
//! 1e-5 (relative for large ones), everything else exactly. The fixture is written by
//! tests/fixtures/keras/make_layers_recurrent_reference.py. A model holding an LSTM saved
//! here loads back with its weights and trains on as the original does.

use crate::common::cells::{every_layer_cell_matches, ok, saved_and_loaded_back, session};

#[test]
fn every_cell_matches_keras() {
    every_layer_cell_matches("tests/fixtures/keras/layers_recurrent_reference.json");
}

#[test]
fn a_recurrent_model_saved_here_loads_back_and_trains_on_exactly() {
    let s = session();
    ok(
        &s,
        "import tensorflow as tf\nimport numpy as np\n\
np.random.seed(0)\n\
x = np.random.uniform(-1, 1, size=(12, 5, 3)).astype('float32')\n\
y = np.random.uniform(-1, 1, size=(12, 2)).astype('float32')\n\
m = tf.keras.Sequential([tf.keras.Input((5, 3)), tf.keras.layers.GRU(4, return_sequences=True), \
tf.keras.layers.LSTM(3), tf.keras.layers.Dense(2)])\n\
m.compile(optimizer='adam', loss='mse')\n\
m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)\n",
    );
    for (file, out) in saved_and_loaded_back(
        &s,
        "keras-recurrent",
        "print([type(l).__name__ for l in a.layers], a.layers[0].units, a.layers[0].return_sequences)",
    ) {
        assert_eq!(out, "['GRU', 'LSTM', 'Dense'] 4 True\nTrue True\nTrue\n", "{file}");
    }
}

#[test]
fn refused_options_say_so() {
    let s = session();
    let out = ok(
        &s,
        "import tensorflow as tf\n\
for make in [lambda: tf.keras.layers.LSTM(3, stateful=True), \
lambda: tf.keras.layers.GRU(3, dropout=0.2), \
lambda: tf.keras.layers.SimpleRNN(3, kernel_regularizer='l2')]:\n    try:\n        make()\n    except NotImplementedError as e:\n        print(e)\n",
    );
    assert_eq!(
        out,
        "LSTM(stateful=True) is not supported here: the layer starts every call from zeros or initial_state\n\
GRU(dropout=...) other than 0 is not supported here\n\
SimpleRNN(kernel_regularizer=...) is not supported here\n"
    );
}
