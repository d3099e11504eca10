//! The `tensorflow` module seen from a notebook: cells run through a real session, and the
//! outputs are compared with what TensorFlow 2.16 / Keras 3 print for the same cells (the
//! device and strategy texts, tensor printing, the scope mistakes), plus behaviour that
//! must hold whatever the numbers (prediction shapes, mirrored variables, learning).

use crate::common::cells as tf_common;

use mirror_kernel::cell::Output;
use mirror_kernel::session::Session;
use tf_common::{ok, run};

const SPLIT_TWO: &str = "import tensorflow as tf\nimport numpy as np\n\
cpu = tf.config.list_physical_devices('CPU')\n\
tf.config.set_logical_device_configuration(cpu[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])\n";

fn session() -> Session {
    match Session::start() {
        Ok(s) => s,
        Err(e) => panic!("session did not start: {e}"),
    }
}

#[test]
fn devices_strategy_and_info_line() {
    let s = session();
    ok(&s, SPLIT_TWO);
    let out = ok(&s, "print(tf.config.list_physical_devices('GPU'))\nprint(tf.config.list_logical_devices('CPU'))\nstrategy = tf.distribute.MirroredStrategy()\nprint(strategy.num_replicas_in_sync)");
    assert_eq!(
        out,
        "[]\n[LogicalDevice(name='/device:CPU:0', device_type='CPU'), LogicalDevice(name='/device:CPU:1', device_type='CPU')]\n\
         INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:CPU:0', '/job:localhost/replica:0/task:0/device:CPU:1')\n2\n"
    );
    let r = run(&s, "tf.config.set_logical_device_configuration(cpu[0], [tf.config.LogicalDeviceConfiguration()])");
    let (ename, evalue) = r.error.unwrap_or_default();
    assert_eq!(ename, "RuntimeError");
    assert!(evalue.starts_with("Virtual devices cannot be modified after being initialized"));
    // Re-applying the same layout is allowed, as in TF.
    ok(&s, "tf.config.set_logical_device_configuration(cpu[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])");
}

#[test]
fn the_tensorflow_logger_silences_the_info_line() {
    // Tutorials quiet TF's INFO lines through its logger; the kernel's own TF log lines
    // obey it, and show again once its level allows them.
    let s = session();
    ok(&s, SPLIT_TWO);
    let out = ok(&s, "tf.get_logger().setLevel('ERROR')\nstrategy = tf.distribute.MirroredStrategy()\nprint(strategy.num_replicas_in_sync)");
    assert_eq!(out, "2\n");
    let out = ok(&s, "import logging\nlogging.getLogger('tensorflow').setLevel(logging.INFO)\nstrategy = tf.distribute.MirroredStrategy()");
    assert!(
        out.starts_with("INFO:tensorflow:Using MirroredStrategy with devices"),
        "{out}"
    );
}

#[test]
fn tensors_print_as_tf() {
    let s = session();
    let out = ok(&s, "import tensorflow as tf\nx = tf.constant([[1., 2.], [3., 4.]])\nprint(x)\nprint(repr(x))\nprint(x.shape, repr(x.shape), x.shape.as_list())\nprint(tf.reduce_sum(x))\nv = tf.Variable([1., 2.])\nprint(repr(v))");
    assert_eq!(
        out,
        "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)\n\
         <tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1., 2.],\n       [3., 4.]], dtype=float32)>\n\
         (2, 2) TensorShape([2, 2]) [2, 2]\n\
         tf.Tensor(10.0, shape=(), dtype=float32)\n\
         <tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>\n"
    );
}

#[test]
fn run_and_reduce_over_two_replicas() {
    let s = session();
    ok(&s, SPLIT_TWO);
    let out = ok(&s, "strategy = tf.distribute.MirroredStrategy()\n\
def step(x):\n    ctx = tf.distribute.get_replica_context()\n    return x * tf.cast(ctx.replica_id_in_sync_group + 1, tf.float32)\n\
r = strategy.run(step, args=(tf.constant([1.0, 2.0]),))\n\
print(strategy.reduce(tf.distribute.ReduceOp.SUM, r, axis=None))\n\
print(strategy.reduce(tf.distribute.ReduceOp.MEAN, r, axis=0))\n\
print(len(strategy.experimental_local_results(r)))\n\
with strategy.scope():\n    v = tf.Variable(1.0)\nprint(repr(v))");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.get(1),
        Some(&"tf.Tensor([3. 6.], shape=(2,), dtype=float32)")
    );
    assert_eq!(
        lines.get(2),
        Some(&"tf.Tensor(2.25, shape=(), dtype=float32)")
    );
    assert_eq!(lines.get(3), Some(&"2"));
    assert_eq!(
        lines[4..].join("\n"),
        "MirroredVariable:{\n  0: <tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>,\n  \
         1: <tf.Variable 'Variable/replica_1:0' shape=() dtype=float32, numpy=1.0>\n}"
    );
}

#[test]
fn seed_example_predicts_8_by_3_with_mirrored_weights() {
    let s = session();
    ok(&s, SPLIT_TWO);
    let out = ok(&s, "strategy = tf.distribute.MirroredStrategy()\n\
with strategy.scope():\n    model = tf.keras.Sequential([\n        tf.keras.layers.Dense(10, activation='relu', input_shape=(5,)),\n        tf.keras.layers.Dense(3, activation='softmax')\n    ])\n\
x = np.random.random((8, 5)).astype('float32')\npredictions = model(x)\nprint(predictions.shape)\n\
print(type(model.weights[0].value))\nplain = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])\nprint(type(plain.weights[0].value))");
    assert!(
        out.ends_with("(8, 3)\n<class 'MirroredVariable'>\n<class 'ResourceVariable'>\n"),
        "{out}"
    );
}

#[test]
fn mlp_learns_a_separable_task_on_two_replicas_with_callbacks() {
    let s = session();
    ok(&s, SPLIT_TWO);
    let out = ok(&s, "strategy = tf.distribute.MirroredStrategy()\nnp.random.seed(0)\n\
X = np.random.randn(512, 4).astype('float32')\ny = np.greater(X[:, 0] + X[:, 1], 0).astype('int64')\n\
class Seen(tf.keras.callbacks.Callback):\n    def on_train_begin(self, logs=None):\n        self.epochs = []\n    def on_epoch_end(self, epoch, logs=None):\n        self.epochs.append((epoch, sorted(logs)))\n\
seen = Seen()\n\
with strategy.scope():\n    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation='relu', input_shape=(4,)), tf.keras.layers.Dense(2, activation='softmax')])\n    model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])\n\
h = model.fit(X, y, epochs=20, batch_size=32, verbose=0, callbacks=[seen])\n\
print(list(h.history.keys()))\nprint(h.history['accuracy'][-1] >= 0.95)\nprint(seen.epochs[0], len(seen.epochs))\n\
print(model.predict(X[:8], verbose=0).shape)");
    assert_eq!(
        out,
        "INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:CPU:0', '/job:localhost/replica:0/task:0/device:CPU:1')\n\
         ['accuracy', 'loss']\nTrue\n(0, ['accuracy', 'loss']) 20\n(8, 2)\n"
    );
}

#[test]
fn fit_progress_is_one_display_updated_in_place() {
    let s = session();
    ok(&s, "import tensorflow as tf\nimport numpy as np\nX = np.zeros((64, 3), dtype='float32')\nY = np.zeros((64, 1), dtype='float32')\nm = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])\nm.compile(optimizer='sgd', loss='mse')");
    let r = run(&s, "h = m.fit(X, Y, epochs=1, batch_size=32)");
    assert_eq!(r.error, None);
    let mut first_id = None;
    let mut last_text = String::new();
    for o in &r.outputs {
        match o {
            Output::DisplayData { display_id, .. } => first_id = display_id.clone(),
            Output::UpdateDisplayData {
                display_id, data, ..
            } => {
                assert_eq!(Some(display_id), first_id.as_ref());
                last_text = data
                    .get("text/plain")
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string();
            }
            _ => {}
        }
    }
    assert!(first_id.is_some());
    assert!(
        last_text.starts_with("2/2 ━━━━━━━━━━━━━━━━━━━━"),
        "{last_text}"
    );
    // Keras writes an exact zero in exponent form.
    assert!(last_text.ends_with(" - loss: 0.0000e+00"), "{last_text}");
}

#[test]
fn scope_mistakes_raise_tf_errors_with_hints() {
    let s = session();
    ok(&s, SPLIT_TWO);
    ok(&s, "strategy = tf.distribute.MirroredStrategy()\nX = np.zeros((8, 4), dtype='float32')\nY = np.zeros((8, 2), dtype='float32')\n\
m = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])");
    let r = run(
        &s,
        "with strategy.scope():\n    m.compile(optimizer='sgd', loss='mse')",
    );
    assert_eq!(r.error, None);
    assert!(r.stderr.starts_with("UserWarning: "), "{}", r.stderr);
    let r = run(&s, "m.fit(X, Y, verbose=0)");
    let (ename, evalue) = r.error.unwrap_or_default();
    assert_eq!(ename, "RuntimeError");
    assert!(evalue.starts_with("Need to be inside \"with strategy.scope()\" for <tensorflow.python.distribute.mirrored_strategy.MirroredStrategy object at 0x"));
    let r = run(&s, "with strategy.scope():\n    m.fit(X, Y, verbose=0)");
    // The hint is the traceback's last line, not part of the error's value.
    let hint = r
        .outputs
        .iter()
        .find_map(|o| match o {
            mirror_kernel::cell::Output::Error(e) => e.traceback.last().cloned(),
            _ => None,
        })
        .unwrap_or_default();
    let (ename, evalue) = r.error.unwrap_or_default();
    assert_eq!(ename, "ValueError");
    assert!(!evalue.contains("Hint:"), "{evalue}");
    assert!(hint.contains("with strategy.scope():"), "{hint}");
    let r = run(&s, "other = tf.distribute.MirroredStrategy()\nwith strategy.scope():\n    m2 = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])\n    m2.compile(optimizer='sgd', loss='mse')\nwith other.scope():\n    m2.fit(X, Y, verbose=0)");
    let (ename, evalue) = r.error.unwrap_or_default();
    assert_eq!(ename, "RuntimeError");
    assert!(evalue.starts_with("Mixing different tf.distribute.Strategy objects"));
    let r = run(&s, "tf.distribute.TPUStrategy()");
    assert_eq!(r.error.map(|e| e.0).as_deref(), Some("ValueError"));
}

#[test]
fn to_categorical_and_activation_functions() {
    let s = session();
    let out = ok(&s, "import tensorflow as tf\nprint(repr(tf.keras.utils.to_categorical([0, 2, 1])))\n\
m = tf.keras.Sequential([tf.keras.layers.Dense(2, activation=tf.keras.activations.relu, input_shape=(3,))])\nprint(m.output_shape)");
    assert_eq!(
        out,
        "array([[1., 0., 0.],\n       [0., 0., 1.],\n       [0., 1., 0.]])\n(None, 2)\n"
    );
}
