//! Keras's Conv1D and one-dimensional poolings (MaxPooling1D, AveragePooling1D,
//! GlobalMax/AveragePooling1D) seen from a notebook, against real TensorFlow 2.21 / Keras
//! 3.15: every cell of tests/fixtures/keras/layers_conv1d_reference.json (weights' names,
//! paths and shapes; outputs and tape gradients with set weights under valid, same and
//! causal padding, strides and dilation rates; a call and its gradient inside
//! `tf.function`; `get_config()` and attributes; Keras's errors; `summary()` rows and two
//! epochs of `fit` with SGD, momentum and Adam in Sequential and functional models; an
//! Embedding + Conv1D classifier under a two-replica MirroredStrategy beside one device)
//! runs through a real session, each in a fresh one, and must print what Keras printed:
//! numbers within 1e-5 (relative for large ones), everything else exactly. The fixture is
//! written by tests/fixtures/keras/make_layers_conv1d_reference.py. A model holding
//! Conv1D and MaxPooling1D saved here loads back with its weights and trains on as the
//! original does.

use crate::common::cells::{every_layer_cell_matches, ok, saved_and_loaded_back, session};

#[test]
fn every_cell_matches_keras() {
    every_layer_cell_matches("tests/fixtures/keras/layers_conv1d_reference.json");
}

#[test]
fn a_conv1d_model_saved_here_loads_back_and_trains_on_exactly() {
    let s = session();
    ok(
        &s,
        "import tensorflow as tf\nimport numpy as np\n\
np.random.seed(0)\n\
x = np.random.uniform(-1, 1, size=(12, 9, 3)).astype('float32')\n\
y = np.random.uniform(-1, 1, size=(12, 2)).astype('float32')\n\
m = tf.keras.Sequential([tf.keras.Input((9, 3)), \
tf.keras.layers.Conv1D(4, 3, padding='causal', dilation_rate=2, activation='relu'), \
tf.keras.layers.MaxPooling1D(), tf.keras.layers.Conv1D(2, 2, strides=2, padding='same'), \
tf.keras.layers.GlobalAveragePooling1D(), tf.keras.layers.Dense(2)])\n\
m.compile(optimizer='adam', loss='mse')\n\
m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)\n",
    );
    for (file, out) in saved_and_loaded_back(
        &s,
        "keras-conv1d",
        "print([type(l).__name__ for l in a.layers], a.layers[0].padding, a.layers[0].dilation_rate, a.layers[2].strides)",
    ) {
        assert_eq!(
            out,
            "['Conv1D', 'MaxPooling1D', 'Conv1D', 'GlobalAveragePooling1D', 'Dense'] causal (2,) (2,)\nTrue True\nTrue\n",
            "{file}"
        );
    }
}

#[test]
fn refused_options_say_so() {
    let s = session();
    let out = ok(
        &s,
        "import tensorflow as tf\n\
for make in [lambda: tf.keras.layers.Conv1D(4, 3, groups=2), \
lambda: tf.keras.layers.Conv1D(4, 3, kernel_regularizer='l2'), \
lambda: tf.keras.layers.Conv1D(4, 3, data_format='channels_first')]:\n    try:\n        make()\n    except NotImplementedError as e:\n        print(e)\n",
    );
    assert_eq!(
        out,
        "Conv1D(groups=2) is not supported here: only groups=1 is\n\
Conv1D(kernel_regularizer=...) is not supported here\n\
data_format='channels_first' is not supported here\n"
    );
}
