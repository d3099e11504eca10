//! `BackupAndRestore` against the kernel's own promise for an interrupted `fit`: a `fit`
//! stopped by the kernel's interrupt (the flag a Jupyter interrupt raises) in the middle of
//! an epoch, then run again in a fresh model with the same callback, resumes from the last
//! backed-up epoch and ends with exactly the weights of an uninterrupted run, without a
//! strategy and under a MirroredStrategy of two CPU replicas; the session lives on. Keras's
//! own behaviour (files, metadata, resumed epochs, optimizer state, errors) is checked
//! against real Keras in `keras_callbacks` (callbacks_reference.json).

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::common::cells::{ok, run, session};

/// The model, data and callbacks the cells share; `{dir}` is the backup folder and `{mark}`
/// the file the stalling callback writes when it starts to wait for the interrupt.
const SETUP: &str = r#"import os
import numpy as np
import tensorflow as tf
{strategy}
x = (np.arange(96, dtype="float32").reshape(32, 3) % 7) / 7.0
y = (np.arange(32, dtype="float32") % 5).reshape(32, 1) / 5.0
def make():
    with scope():
        m = tf.keras.Sequential([
            tf.keras.Input((3,)),
            tf.keras.layers.Dense(6, activation="tanh",
                                  kernel_initializer=tf.keras.initializers.Constant(0.1)),
            tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.Constant(-0.3)),
        ])
        m.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=0.02), loss="mse")
    return m
class Stall(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 2:
            open("{mark}", "w").close()
            while True:
                pass
def train(m, *callbacks):
    return m.fit(x, y, batch_size=8, epochs=6, shuffle=False, verbose=0, callbacks=list(callbacks))
"#;

fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mk-backup-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

fn interrupted_fit_resumes(name: &str, strategy: &str) {
    let dir = folder(name);
    let backup = dir.join("backup");
    let mark = dir.join("stalled");
    let s = session();
    let setup = SETUP
        .replace("{strategy}", strategy)
        .replace("{mark}", &mark.display().to_string());
    ok(&s, &setup);
    ok(&s, &format!("backup = '{}'", backup.display()));
    let flag = s.interrupt_flag();
    let waiter = std::thread::spawn(move || {
        let start = Instant::now();
        while !mark.exists() && start.elapsed() < Duration::from_secs(120) {
            std::thread::sleep(Duration::from_millis(20));
        }
        flag.store(true, Ordering::SeqCst);
    });
    let shown = run(
        &s,
        "train(make(), tf.keras.callbacks.BackupAndRestore(backup), Stall())",
    );
    waiter.join().expect("the interrupting thread");
    assert_eq!(
        shown.error.map(|e| e.0).as_deref(),
        Some("KeyboardInterrupt")
    );
    // The backup of the third epoch's end was written before the next callback stalled.
    let meta = std::fs::read_to_string(backup.join("training_metadata.json")).expect("metadata");
    assert_eq!(meta, "{\"epoch\": 3, \"batch\": 0}");
    let resumed = ok(
        &s,
        "m = make()\nh = train(m, tf.keras.callbacks.BackupAndRestore(backup))\n\
         print(h.epoch, int(m.optimizer.iterations), os.path.exists(backup))",
    );
    assert_eq!(resumed, "[3, 4, 5] 24 False\n");
    let same = ok(
        &s,
        "whole = make()\ntrain(whole)\n\
         print(all(np.array_equal(a, b) for a, b in zip(m.get_weights(), whole.get_weights())))",
    );
    assert_eq!(same, "True\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_interrupted_fit_resumes_to_the_uninterrupted_weights() {
    interrupted_fit_resumes("plain", "import contextlib\nscope = contextlib.nullcontext");
}

#[test]
fn an_interrupted_mirrored_fit_resumes_to_the_uninterrupted_weights() {
    interrupted_fit_resumes(
        "mirrored",
        "cpu = tf.config.list_physical_devices('CPU')[0]\n\
         tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)\n\
         strategy = tf.distribute.MirroredStrategy()\nscope = strategy.scope",
    );
}
