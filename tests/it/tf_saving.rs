//! Saving, loading and the small `tf.keras` namespaces seen from a notebook, through a real
//! session: `.keras` and `.weights.h5` round trips (weights, predictions and the optimizer
//! state compared with the model that was saved, by continuing training on both), loading
//! under a strategy's scope, file errors that leave the session alive, `keras.datasets`
//! from the cache formats Keras uses, callbacks that reach the model during `fit`,
//! `tf.errors`, and the GPU list on a machine without GPUs.

use crate::common::cells as tf_common;

use std::io::Write;
use std::path::{Path, PathBuf};

use mirror_kernel::session::Session;
use tf_common::{ok, run};

fn session() -> Session {
    match Session::start() {
        Ok(s) => s,
        Err(e) => panic!("session did not start: {e}"),
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tf-saving-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

const MODEL: &str = "import tensorflow as tf\nimport numpy as np\n\
np.random.seed(3)\n\
x = np.random.rand(64, 4).astype('float32')\n\
y = np.random.randint(0, 3, size=(64,))\n\
def make():\n    return tf.keras.Sequential([tf.keras.layers.Dense(5, activation='relu', input_shape=(4,)), tf.keras.layers.Dense(3, activation='softmax')])\n\
def same(a, b):\n    return len(a) == len(b) and all([(p == q).all() for p, q in zip(a, b)])\n\
m = make()\n\
m.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])\n\
m.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False)\n";

#[test]
fn keras_archive_round_trip_continues_training_identically() {
    let dir = temp_dir("archive");
    let s = session();
    ok(&s, MODEL);
    let out = ok(
        &s,
        &format!(
            "path = {:?}\n\
m.save(path)\n\
a = tf.keras.models.load_model(path)\n\
b = tf.keras.saving.load_model(path)\n\
print(same(m.get_weights(), a.get_weights()), same(m.get_weights(), b.get_weights()))\n\
print((m.predict(x, verbose=0) == a.predict(x, verbose=0)).all())\n\
print(type(a.optimizer).__name__)\n\
m.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False)\n\
a.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False)\n\
print(same(m.get_weights(), a.get_weights()))\n\
c = tf.keras.models.load_model(path, compile=False)\n\
print(c.optimizer)\n\
c.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])\n\
c.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False)\n\
print(same(c.get_weights(), a.get_weights()))\n",
            dir.join("m.keras").display().to_string()
        ),
    );
    // Adam's moments and step count came back: a fresh Adam would diverge at once.
    assert_eq!(out, "True True\nTrue\nAdam\nTrue\nNone\nFalse\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn weights_file_round_trip_and_path_errors() {
    let dir = temp_dir("weights");
    let s = session();
    ok(&s, MODEL);
    let w = dir.join("w.weights.h5").display().to_string();
    let out = ok(
        &s,
        &format!(
            "m.save_weights({w:?})\n\
n = make()\n\
n.build((None, 4))\n\
print(same(m.get_weights(), n.get_weights()))\n\
n.load_weights({w:?})\n\
print(same(m.get_weights(), n.get_weights()))\n"
        ),
    );
    assert_eq!(out, "False\nTrue\n");

    // Keras's own message for a name without the extension.
    let r = run(&s, "m.save('model.h6')");
    let (ename, evalue) = r.error.unwrap_or_default();
    assert_eq!(ename, "ValueError");
    assert!(
        evalue.starts_with("Invalid filepath extension for saving. Please add either a `.keras` extension for the native Keras format (recommended) or a `.h5` extension."),
        "{evalue}"
    );

    // Missing, corrupt and truncated archives name the path; the session goes on.
    let missing = dir.join("nope.keras").display().to_string();
    let r = run(&s, &format!("tf.keras.models.load_model({missing:?})"));
    let (ename, evalue) = r.error.unwrap_or_default();
    // Keras 3.15's words for an archive that is not there.
    assert_eq!(ename, "ValueError");
    assert!(
        evalue.starts_with(&format!("File not found: filepath={missing}.")),
        "{evalue}"
    );
    let out = ok(
        &s,
        &format!("try:\n    tf.keras.models.load_model({missing:?})\nexcept ValueError:\n    print('ValueError')\n"),
    );
    assert_eq!(out, "ValueError\n");

    let full = dir.join("full.keras");
    ok(&s, &format!("m.save({:?})", full.display().to_string()));
    let bytes = std::fs::read(&full).expect("saved archive");
    let cut = dir.join("cut.keras");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let junk = dir.join("junk.keras");
    std::fs::write(&junk, b"not a zip archive").expect("write");
    let cut_w = dir.join("cut.weights.h5");
    let wbytes = std::fs::read(&w).expect("weights");
    std::fs::write(&cut_w, &wbytes[..wbytes.len() / 2]).expect("write");
    // A cut HDF5 file is h5py's OSError; a bad archive Keras's ValueError.
    for (code, path, want) in [
        ("tf.keras.models.load_model", &cut, "ValueError"),
        ("tf.keras.models.load_model", &junk, "ValueError"),
        ("m.load_weights", &cut_w, "OSError"),
    ] {
        let p = path.display().to_string();
        let r = run(&s, &format!("{code}({p:?})"));
        let (ename, evalue) = r.error.unwrap_or_default();
        assert_eq!(ename, want, "{code}({p}): {evalue}");
        assert!(evalue.contains(&p), "{evalue}");
    }
    assert_eq!(
        ok(&s, "print(same(m.get_weights(), n.get_weights()))"),
        "True\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loading_under_a_scope_mirrors_the_model() {
    let dir = temp_dir("scope");
    let s = session();
    ok(&s, "import tensorflow as tf\ncpu = tf.config.list_physical_devices('CPU')\n\
tf.config.set_logical_device_configuration(cpu[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])\n");
    ok(&s, MODEL);
    let out = ok(
        &s,
        &format!(
            "path = {:?}\n\
m.save(path)\n\
strategy = tf.distribute.MirroredStrategy()\n\
with strategy.scope():\n    a = tf.keras.models.load_model(path)\n\
b = tf.keras.models.load_model(path)\n\
print(type(a.weights[0].value).__name__, a.distribute_strategy is strategy)\n\
print(type(b.weights[0].value).__name__ == 'MirroredVariable', type(b.distribute_strategy).__name__)\n\
print(same(a.get_weights(), m.get_weights()), (a.predict(x, verbose=0) == m.predict(x, verbose=0)).all())\n",
            dir.join("m.keras").display().to_string()
        ),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.get(1..),
        Some(
            &[
                "MirroredVariable True",
                "False _DefaultDistributionStrategy",
                "True True"
            ][..]
        ),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn idx_gz(path: &Path, shape: &[u32], data: &[u8]) {
    let mut raw = vec![0u8, 0, 8, shape.len() as u8];
    for d in shape {
        raw.extend(d.to_be_bytes());
    }
    raw.extend(data);
    let f = std::fs::File::create(path).expect("create");
    let mut enc = flate2::write::GzEncoder::new(f, flate2::Compression::default());
    enc.write_all(&raw).expect("write");
    enc.finish().expect("finish");
}

#[test]
fn datasets_load_from_keras_home() {
    let home = temp_dir("home");
    let data = home.join("datasets");
    let fashion = data.join("fashion-mnist");
    std::fs::create_dir_all(&fashion).expect("dir");
    // The npz fixture numpy wrote for the engine tests (see its generating script).
    let npz = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engine/mnist_tiny.npz");
    let _env = crate::common::env_lock();
    std::env::set_var("KERAS_HOME", &home);
    let s = session();
    let r = run(
        &s,
        "import tensorflow as tf\n(a, b), (c, d) = tf.keras.datasets.mnist.load_data()",
    );
    let (ename, evalue) = r.error.unwrap_or_default();
    assert_eq!(ename, "FileNotFoundError");
    assert!(
        evalue.contains(&data.join("mnist.npz").display().to_string()),
        "{evalue}"
    );
    std::fs::copy(&npz, data.join("mnist.npz")).expect("copy fixture");
    idx_gz(
        &fashion.join("train-images-idx3-ubyte.gz"),
        &[2, 2, 3],
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    );
    idx_gz(&fashion.join("train-labels-idx1-ubyte.gz"), &[2], &[9, 1]);
    idx_gz(
        &fashion.join("t10k-images-idx3-ubyte.gz"),
        &[1, 2, 3],
        &[6, 5, 4, 3, 2, 1],
    );
    idx_gz(&fashion.join("t10k-labels-idx1-ubyte.gz"), &[1], &[3]);
    let out = ok(
        &s,
        "(a, b), (c, d) = tf.keras.datasets.mnist.load_data()\n\
print(a.shape, a.dtype, b.tolist(), c.shape, d.tolist(), int(a[2, 3, 3]))\n\
(a, b), (c, d) = tf.keras.datasets.fashion_mnist.load_data()\n\
print(a.shape, a.dtype, a[1].tolist(), b.tolist(), c[0].tolist(), d.tolist())\n",
    );
    // CIFAR-10 in Keras 3's layout, from the batches the fixture script pickled; the pixel
    // printed is checked against what Keras made of the same files (reference.npz).
    let cifar = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engine/cifar");
    let target = data.join("cifar-10-batches-py-target/cifar-10-batches-py");
    std::fs::create_dir_all(&target).expect("dir");
    for e in std::fs::read_dir(cifar.join("extracted/cifar-10-batches-py")).expect("fixture") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), target.join(e.file_name())).expect("copy");
    }
    let cifar_out = ok(
        &s,
        "(a, b), (c, d) = tf.keras.datasets.cifar10.load_data()\n\
print(a.shape, a.dtype, b.shape, b.dtype, c.shape, d.shape, int(a[5, 31, 2, 1]), int(d[1, 0]))\n",
    );
    std::env::remove_var("KERAS_HOME");
    assert_eq!(
        out,
        "(3, 4, 4) uint8 [5, 0, 4] (2, 4, 4) [7, 2] 47\n\
         (2, 2, 3) uint8 [[7, 8, 9], [10, 11, 12]] [9, 1] [[6, 5, 4], [3, 2, 1]] [3]\n"
    );
    let reference = mirror_kernel::keras::datasets::load_npz(
        &cifar.join("reference.npz"),
        &["x_train", "y_test"],
        "reference",
    )
    .expect("reference");
    let (x, y) = (reference[0].to_f32(), reference[1].to_f32());
    let pixel = x[((5 * 32 + 31) * 32 + 2) * 3 + 1];
    assert_eq!(
        cifar_out,
        format!(
            "(6, 32, 32, 3) uint8 (6, 1) uint8 (2, 32, 32, 3) (2, 1) {pixel} {}\n",
            y[1]
        )
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn callbacks_reach_the_model_during_fit() {
    let s = session();
    ok(&s, MODEL);
    // `self.model` is the model itself; stop_training ends fit after that epoch; the
    // learning rate set from a callback is the one the optimizer then uses.
    let out = ok(
        &s,
        "class CB(tf.keras.callbacks.Callback):\n    def on_epoch_end(self, epoch, logs=None):\n        print(epoch, self.model is m, round(float(self.model.optimizer.learning_rate), 6), len(self.model.get_weights()))\n        self.model.optimizer.learning_rate = 0.25\n        if epoch == 1:\n            self.model.stop_training = True\n\
h = m.fit(x, y, epochs=5, verbose=0, callbacks=[CB()])\n\
print(len(h.history['loss']), float(m.optimizer.learning_rate))\n",
    );
    assert_eq!(out, "0 True 0.001 4\n1 True 0.25 4\n2 0.25\n");

    // EarlyStopping(restore_best_weights=True) in a real fit: with mode='max' on a falling
    // loss the best epoch is the first, so the weights must equal one epoch from the start.
    let out = ok(
        &s,
        "m.save_weights('start.weights.h5')\n\
ref = make()\nref.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss='sparse_categorical_crossentropy')\n\
m.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss='sparse_categorical_crossentropy')\n\
ref.load_weights('start.weights.h5')\n\
ref.fit(x, y, epochs=1, batch_size=16, verbose=0, shuffle=False)\n\
es = tf.keras.callbacks.EarlyStopping(monitor='loss', mode='max', patience=1, restore_best_weights=True)\n\
h = m.fit(x, y, epochs=10, batch_size=16, verbose=0, shuffle=False, callbacks=[es])\n\
print(len(h.history['loss']), h.history['loss'][1] < h.history['loss'][0], same(m.get_weights(), ref.get_weights()))\n",
    );
    assert_eq!(out, "2 True True\n");
    let _ = std::fs::remove_file("start.weights.h5");
}

#[test]
fn tf_errors_catch_engine_errors_and_no_gpus_here() {
    let s = session();
    ok(&s, MODEL);
    let out = ok(
        &s,
        "try:\n    m.fit(x, y + 7, epochs=1, verbose=0)\nexcept tf.errors.InvalidArgumentError as e:\n    print('caught', type(e).__name__, isinstance(e, tf.errors.OpError))\n\
print(issubclass(tf.errors.ResourceExhaustedError, tf.errors.OpError), tf.errors.OpError.__name__)\n",
    );
    assert_eq!(out, "caught InvalidArgumentError True\nTrue OpError\n");
    let r = run(&s, "print(tf.config.list_physical_devices('GPU'))");
    if mirror_kernel::device::cuda::gpus().is_empty() {
        assert_eq!(r.stdout, "[]\n");
    }
    assert_eq!(r.stderr, "");
    assert_eq!(r.error, None);
}
