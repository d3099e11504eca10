//! `tf.data` seen from a notebook: dataset cells run through a real session and their
//! printed shapes, lengths, specs and reprs are compared with what TensorFlow 2.16 prints for
//! the same cells; training on a dataset must learn a separable task, and a distributed
//! dataset must split each global batch over two logical CPUs as MirroredStrategy does.

use crate::common::cells as tf_common;

use mirror_kernel::session::Session;
use tf_common::{ok, run};

fn session() -> Session {
    match Session::start() {
        Ok(s) => s,
        Err(e) => panic!("session did not start: {e}"),
    }
}

const DATA: &str = "import tensorflow as tf\nimport numpy as np\n\
x = np.arange(20, dtype=np.float32).reshape(10, 2)\ny = np.arange(10)\n\
ds = tf.data.Dataset.from_tensor_slices((x, y))\n";

#[test]
fn slices_batch_shapes_len_and_spec() {
    let s = session();
    ok(&s, DATA);
    let out = ok(
        &s,
        "b = ds.batch(4)\nprint(len(ds), len(b), len(ds.batch(4, drop_remainder=True)))\n\
print([tuple(a.shape) for a, _ in b])\nprint(b.element_spec)\nprint(b)\n\
print(ds.batch(4, drop_remainder=True).element_spec)",
    );
    assert_eq!(
        out,
        "10 3 2\n[(4, 2), (4, 2), (2, 2)]\n\
         (TensorSpec(shape=(None, 2), dtype=tf.float32, name=None), TensorSpec(shape=(None,), dtype=tf.int64, name=None))\n\
         <_BatchDataset element_spec=(TensorSpec(shape=(None, 2), dtype=tf.float32, name=None), TensorSpec(shape=(None,), dtype=tf.int64, name=None))>\n\
         (TensorSpec(shape=(4, 2), dtype=tf.float32, name=None), TensorSpec(shape=(4,), dtype=tf.int64, name=None))\n"
    );
    let out = ok(
        &s,
        "for e in tf.data.Dataset.from_tensor_slices([1, 2, 3]).take(1):\n    print(e)\n\
print(tf.data.Dataset.from_tensor_slices({'a': [1.0, 2.0], 'b': [1, 2]}))",
    );
    assert_eq!(
        out,
        "tf.Tensor(1, shape=(), dtype=int32)\n\
         <_TensorSliceDataset element_spec={'a': TensorSpec(shape=(), dtype=tf.float32, name=None), 'b': TensorSpec(shape=(), dtype=tf.int32, name=None)}>\n"
    );
}

#[test]
fn map_take_skip_repeat_and_lengths() {
    let s = session();
    ok(&s, DATA);
    let out = ok(&s, "m = ds.batch(4).map(lambda a, c: (a * 2, c + 1))\nfirst = list(m.as_numpy_iterator())[0]\n\
print(first[0].tolist(), first[1].tolist())\n\
print(len(ds.take(3)), len(ds.skip(3)), len(ds.take(3).repeat(2)), len(list(ds.skip(8).repeat(3))))\n\
print(int(ds.repeat().cardinality().numpy()), len(list(ds.repeat().take(25))))\n\
print(len(ds.cache().prefetch(tf.data.AUTOTUNE)), [int(v.numpy()) for _, v in ds.skip(7)])");
    assert_eq!(
        out,
        "[[0.0, 2.0], [4.0, 6.0], [8.0, 10.0], [12.0, 14.0]] [1, 2, 3, 4]\n3 7 6 6\n-1 25\n10 [7, 8, 9]\n"
    );
    let r = run(&s, "len(ds.repeat())");
    assert_eq!(
        r.error,
        Some(("TypeError".into(), "The dataset is infinite.".into()))
    );
}

#[test]
fn shuffle_with_seed_is_a_repeatable_permutation() {
    let s = session();
    ok(&s, DATA);
    let out = ok(&s, "a = [int(v.numpy()) for v in tf.data.Dataset.from_tensor_slices(np.arange(50)).shuffle(10, seed=4, reshuffle_each_iteration=False)]\n\
b = [int(v.numpy()) for v in tf.data.Dataset.from_tensor_slices(np.arange(50)).shuffle(10, seed=4, reshuffle_each_iteration=False)]\n\
print(sorted(a) == list(range(50)), a == b, a != list(range(50)))");
    assert_eq!(out, "True True True\n");
}

#[test]
fn fit_on_a_dataset_learns_and_records_each_epoch() {
    let s = session();
    let out = ok(&s, "import tensorflow as tf\nimport numpy as np\nnp.random.seed(0)\n\
x = np.random.normal(size=(256, 4)).astype('float32')\ny = (x[:, 0] + x[:, 1] > 0).astype('float32')\n\
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(256, seed=3).batch(32).prefetch(tf.data.AUTOTUNE)\n\
val = tf.data.Dataset.from_tensor_slices((x[:64], y[:64])).batch(32)\n\
model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation='relu', input_shape=(4,)), tf.keras.layers.Dense(1, activation='sigmoid')])\n\
model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss='binary_crossentropy', metrics=['accuracy'])\n\
h = model.fit(ds, epochs=5, validation_data=val, verbose=0)\n\
print(len(h.history['loss']), sorted(h.history.keys()))\n\
print(model.evaluate(ds, verbose=0)[1] >= 0.9, model.predict(val, verbose=0).shape)");
    assert_eq!(
        out,
        "5 ['accuracy', 'loss', 'val_accuracy', 'val_loss']\nTrue (64, 1)\n"
    );
}

#[test]
fn distributed_dataset_splits_batches_over_two_replicas() {
    let s = session();
    ok(&s, "import tensorflow as tf\nimport numpy as np\ncpus = tf.config.list_physical_devices('CPU')\n\
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()]*2)\n\
strategy = tf.distribute.MirroredStrategy()");
    let out = ok(&s, "d = tf.data.Dataset.from_tensor_slices(np.arange(11, dtype=np.float32)).batch(4)\n\
for b in strategy.experimental_distribute_dataset(d):\n    print([tuple(t.shape) for t in strategy.experimental_local_results(b)])\n\
d2 = tf.data.Dataset.from_tensor_slices((np.ones((6, 3), np.float32), np.arange(6))).batch(3)\n\
for xb, yb in strategy.experimental_distribute_dataset(d2):\n    r = strategy.run(lambda a, b: tf.reduce_sum(a), args=(xb, yb))\n    \
print([float(t.numpy()) for t in strategy.experimental_local_results(r)])");
    assert_eq!(
        out,
        "[(2,), (2,)]\n[(2,), (2,)]\n[(2,), (1,)]\n[6.0, 3.0]\n[6.0, 3.0]\n"
    );
}
