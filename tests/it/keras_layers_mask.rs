//! Keras's masks and the Bidirectional wrapper seen from a notebook, against real
//! TensorFlow 2.21 / Keras 3.15: every cell of tests/fixtures/keras/layers_mask_reference.json
//! (`Embedding(mask_zero=True)` and `Masking` making a mask that `_keras_mask`,
//! `compute_mask` and `supports_masking` show and that Dense and Dropout pass on; SimpleRNN,
//! LSTM and GRU skipping masked steps forwards and backwards, with holes and an explicit
//! `mask=`, and their tape gradients; GlobalAveragePooling1D averaging the kept steps;
//! `Bidirectional` with every `merge_mode` and a `backward_layer`, its weights' names and
//! paths, `get_config()` and `summary()`; Sequential and functional models fitted with SGD,
//! with and without momentum, and a loss on a masked sequence; the text classifier of TensorFlow's RNN tutorial under a two-replica
//! MirroredStrategy beside one device) runs through a real session, each in a fresh one,
//! and must print what Keras printed: numbers within 1e-5 (relative for large ones),
//! everything else exactly. The fixture is written by
//! tests/fixtures/keras/make_layers_mask_reference.py, which also writes the `.weights.h5`
//! file of a Bidirectional model that a cell loads. A masked Bidirectional model saved here
//! loads back with its weights and trains on as the original does, and the tutorial's
//! classifier trained with Adam takes the same steps on two replicas as on one device.

use crate::common::cells::{every_layer_cell_matches, ok, saved_and_loaded_back, session};

#[test]
fn every_cell_matches_keras() {
    every_layer_cell_matches("tests/fixtures/keras/layers_mask_reference.json");
}

#[test]
fn a_masked_bidirectional_model_saved_here_loads_back_and_trains_on_exactly() {
    let s = session();
    ok(
        &s,
        "import tensorflow as tf\nimport numpy as np\n\
np.random.seed(0)\n\
x = np.random.randint(1, 20, size=(12, 6))\n\
x[::2, 3:] = 0\n\
y = np.random.randint(0, 2, size=(12,))\n\
m = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Embedding(20, 3, mask_zero=True), \
tf.keras.layers.Bidirectional(tf.keras.layers.GRU(4, return_sequences=True), merge_mode='sum'), \
tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(2)), tf.keras.layers.Dense(1)])\n\
m.compile(optimizer='adam', loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))\n\
m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)\n",
    );
    for (file, out) in saved_and_loaded_back(
        &s,
        "keras-mask",
        "print([type(l).__name__ for l in a.layers], a.layers[0].mask_zero, a.layers[1].merge_mode)",
    ) {
        assert_eq!(
            out,
            "['Embedding', 'Bidirectional', 'Bidirectional', 'Dense'] True sum\nTrue True\nTrue\n",
            "{file}"
        );
    }
}

#[test]
fn weights_files_keep_each_direction_in_its_own_cell() {
    let s = session();
    let dir = std::env::temp_dir().join(format!("keras-mask-weights-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join("b.weights.h5").display().to_string();
    let out = ok(
        &s,
        &format!(
            "import tensorflow as tf\nimport numpy as np\n\
def make():\n    return tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Embedding(9, 4, mask_zero=True), \
tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(3, use_bias=False), \
backward_layer=tf.keras.layers.LSTM(3, go_backwards=True)), tf.keras.layers.Dense(2)])\n\
m = make()\n\
m.save_weights({p:?})\n\
a = make()\n\
a.load_weights({p:?})\n\
print([w.shape for w in a.get_weights()])\n\
print(all((u == v).all() for u, v in zip(m.get_weights(), a.get_weights())))\n"
        ),
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        out,
        "[(9, 4), (4, 12), (3, 12), (4, 12), (3, 12), (12,), (6, 2), (2,)]\nTrue\n"
    );
}

#[test]
fn the_rnn_tutorial_classifier_trains_alike_on_two_replicas_and_one() {
    // TensorFlow's "Text classification with an RNN" model on padded token ids, with Adam
    // as the tutorial compiles it: two replicas on halves of each batch end every step
    // where one device does.
    let s = session();
    let out = ok(
        &s,
        "import tensorflow as tf\nimport numpy as np\n\
cpu = tf.config.list_physical_devices('CPU')\n\
tf.config.set_logical_device_configuration(cpu[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])\n\
strategy = tf.distribute.MirroredStrategy(devices=['/cpu:0', '/cpu:1'])\n\
np.random.seed(7)\n\
x = np.random.randint(1, 40, size=(24, 9))\n\
for i, n in enumerate(np.random.randint(2, 10, size=24)):\n    x[i, n:] = 0\n\
y = (x[:, 0] > 20).astype('float32')\n\
def make():\n    m = tf.keras.Sequential([tf.keras.Input((None,), dtype='int64'), \
tf.keras.layers.Embedding(40, 8, mask_zero=True), \
tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(8)), \
tf.keras.layers.Dense(8, activation='relu'), tf.keras.layers.Dense(1)])\n    \
m.compile(optimizer=tf.keras.optimizers.Adam(1e-2), \
loss=tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=['accuracy'])\n    return m\n\
with strategy.scope():\n    m = make()\n\
one = make()\n\
one.set_weights(m.get_weights())\n\
h = m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)\n\
g = one.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)\n\
print(np.allclose(h.history['loss'], g.history['loss'], atol=1e-6))\n\
print(all(np.allclose(a, b, atol=1e-6) for a, b in zip(m.get_weights(), one.get_weights())))\n\
print(h.history['loss'][-1] < h.history['loss'][0])\n",
    );
    // After the strategy's INFO line: the losses, the weights, and learning.
    assert!(out.ends_with("\nTrue\nTrue\nTrue\n"), "{out}");
}
