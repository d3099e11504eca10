//! A NaN loss during `model.fit`, through a real session, against what Keras 3 does with
//! the same data (tests/fixtures/engine/make_nan_reference.py holds the script and its
//! output): `TerminateOnNaN` prints Keras's line and stops after that batch with the
//! epoch's NaN loss in the History; `raise_error=True` raises Keras's RuntimeError; a
//! callback setting `stop_training` in a batch hook stops after that batch. Without
//! TerminateOnNaN the kernel stops the same way and warns once on stderr.

use crate::common::cells as tf_common;

use mirror_kernel::session::Session;
use tf_common::{ok, run};

const SETUP: &str = "import tensorflow as tf\nimport numpy as np\n\
x = np.arange(40, dtype='float32').reshape(20, 2) / 40\n\
x[9, 1] = np.nan\n\
y = x.sum(axis=1, keepdims=True)\n\
def make():\n    m = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])\n    m.compile(optimizer='sgd', loss='mse')\n    return m\n";

fn session() -> Session {
    let s = Session::start().expect("session");
    ok(&s, SETUP);
    s
}

#[test]
fn terminate_on_nan_prints_keras_line_and_stops_after_that_batch() {
    let s = session();
    let r = run(
        &s,
        "m = make()\n\
h = m.fit(x, y, batch_size=4, epochs=3, verbose=0, shuffle=False, callbacks=[tf.keras.callbacks.TerminateOnNaN()])\n\
print(h.history, h.epoch, np.isnan(m.get_weights()[0]).any())\n",
    );
    assert_eq!(r.error, None);
    assert_eq!(
        r.stdout,
        "Batch 2: Invalid loss, terminating training\n{'loss': [nan]} [0] True\n"
    );
    assert_eq!(r.stderr, "", "TerminateOnNaN speaks alone");
    // The model stays usable: it predicts (NaN, as Keras's would) and trains again.
    let out = ok(
        &s,
        "print(m.predict(x[:2], verbose=0).shape)\n\
m.set_weights([np.zeros((2, 1), 'float32'), np.zeros((1,), 'float32')])\n\
h = m.fit(x[:8], y[:8], batch_size=4, epochs=2, verbose=0)\n\
print(len(h.history['loss']), bool(np.isfinite(h.history['loss'][-1])))\n",
    );
    assert_eq!(out, "(2, 1)\n2 True\n");
}

#[test]
fn raise_error_raises_keras_runtime_error() {
    let s = session();
    let r = run(
        &s,
        "m = make()\n\
m.fit(x, y, batch_size=4, epochs=3, verbose=0, shuffle=False, callbacks=[tf.keras.callbacks.TerminateOnNaN(raise_error=True)])\n",
    );
    let (ename, evalue) = r.error.expect("an error");
    assert_eq!(ename, "RuntimeError");
    assert_eq!(
        evalue,
        "NaN or Inf loss encountered at batch 2. Loss value: nan. Terminating training immediately."
    );
    assert_eq!(
        ok(&s, "print(m.predict(x[:3], verbose=0).shape)\n"),
        "(3, 1)\n"
    );
}

#[test]
fn stop_training_in_a_batch_hook_stops_after_that_batch() {
    let s = session();
    let out = ok(
        &s,
        "class S(tf.keras.callbacks.Callback):\n    n = 0\n    def on_train_batch_end(self, b, logs=None):\n        self.n += 1\n        if b == 1:\n            self.model.stop_training = True\n\
m = make()\ns = S()\n\
h = m.fit(x[:8], y[:8], batch_size=2, epochs=3, verbose=0, shuffle=False, callbacks=[s])\n\
print(s.n, len(h.history['loss']))\n",
    );
    assert_eq!(out, "2 1\n");
}

#[test]
fn without_terminate_on_nan_fit_stops_and_warns_once() {
    let s = session();
    let r = run(
        &s,
        "m = make()\n\
h = m.fit(x, y, batch_size=4, epochs=3, verbose=0, shuffle=False)\n\
print(h.history, h.epoch)\n",
    );
    assert_eq!(r.error, None, "the cell goes on: {:?}", r.error);
    assert_eq!(r.stdout, "{'loss': [nan]} [0]\n");
    assert_eq!(r.stderr.lines().count(), 1, "one line: {}", r.stderr);
    assert!(
        r.stderr
            .starts_with("UserWarning: Batch 2 of epoch 1/3: Invalid loss"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("lower learning rate"), "{}", r.stderr);
    assert!(r.stderr.contains("check the data"), "{}", r.stderr);
    // An infinite loss (an exploding learning rate) stops it the same way.
    let r = run(
        &s,
        "m = make()\nm.compile(optimizer=tf.keras.optimizers.SGD(1e30), loss='mse')\n\
h = m.fit(x[:8] * 1e10, y[:8] * 1e10, batch_size=2, epochs=5, verbose=0, shuffle=False)\n\
print(len(h.history['loss']), np.isfinite(h.history['loss'][-1]))\n",
    );
    assert_eq!(r.error, None);
    assert_eq!(r.stdout, "1 False\n");
    assert!(r.stderr.contains("Invalid loss"), "{}", r.stderr);
}
