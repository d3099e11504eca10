//! A notebook on a GPU machine: cells run through a real session, as the kernel runs them.
//! `tf.config.list_physical_devices('GPU')` lists the GPUs, `MirroredStrategy()` takes all
//! of them and says so in TensorFlow's INFO line, and a model built under its scope fits
//! (the loss falls) with the replicas on the GPUs; splitting GPU 0 into two logical GPUs
//! gives two replicas on it. Each test skips with one line when there is no GPU.

use crate::common::cells as tf_common;

use mirror_kernel::device::cuda::gpu_count;
use mirror_kernel::session::Session;
use tf_common::{ok, run};

const FIT: &str = "import numpy as np\n\
np.random.seed(0)\nx = np.random.rand(256, 8).astype('float32')\n\
y = (x.sum(axis=1) > 4).astype('int32')\n\
with strategy.scope():\n    \
model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation='relu', input_shape=(8,)), tf.keras.layers.Dense(2, activation='softmax')])\n    \
model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])\n\
h = model.fit(x, y, batch_size=64, epochs=5, verbose=0)\n\
print(h.history['loss'][0] > h.history['loss'][-1])\n";

fn session_or_skip() -> Option<Session> {
    let have = gpu_count();
    if have == 0 {
        println!("skipped: no CUDA GPU, so a notebook has no GPU replicas to show");
        return None;
    }
    Some(Session::start().expect("session starts"))
}

#[test]
fn mirrored_strategy_takes_every_gpu_and_fits() {
    let Some(s) = session_or_skip() else {
        return;
    };
    let n = gpu_count();
    let out = ok(
        &s,
        "import tensorflow as tf\nprint(len(tf.config.list_physical_devices('GPU')))\n\
         strategy = tf.distribute.MirroredStrategy()\nprint(strategy.num_replicas_in_sync)",
    );
    let names: Vec<String> = (0..n)
        .map(|g| format!("'/job:localhost/replica:0/task:0/device:GPU:{g}'"))
        .collect();
    let tuple = if n == 1 {
        format!("({},)", names[0])
    } else {
        format!("({})", names.join(", "))
    };
    assert_eq!(
        out,
        format!("{n}\nINFO:tensorflow:Using MirroredStrategy with devices {tuple}\n{n}\n")
    );
    let shown = run(&s, FIT);
    assert!(shown.error.is_none(), "{:?}", shown.error);
    assert_eq!(shown.stdout, "True\n");
    // The fit ran on GPU replicas: the strategy's summary names the GPU all-reduce it used
    // (`none` for a single replica), never the CPU ring.
    let want: &[&str] = if n == 1 {
        &["none"]
    } else {
        &["nccl", "host-staged"]
    };
    assert_fit_used(&s, want);
}

/// The strategy's display after a fit names one of the `expected` all-reduces.
fn assert_fit_used(s: &Session, expected: &[&str]) {
    let shown = run(s, "strategy");
    let text = shown.result.unwrap_or_default();
    assert!(text.contains("last fit:"), "{text}");
    assert!(
        expected
            .iter()
            .any(|name| text.contains(&format!("all-reduce ({name})"))),
        "expected one of {expected:?}: {text}"
    );
}

/// The same cells on two logical CPUs, on every machine: the reference path of the GPU
/// tests, which keeps their cells valid where no GPU can run them.
#[test]
fn the_fit_cell_runs_on_cpu_replicas() {
    let s = Session::start().expect("session starts");
    ok(
        &s,
        "import tensorflow as tf\ncpu = tf.config.list_physical_devices('CPU')\n\
         tf.config.set_logical_device_configuration(cpu[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])\n\
         strategy = tf.distribute.MirroredStrategy(devices=['/cpu:0', '/cpu:1'])",
    );
    let shown = run(&s, FIT);
    assert!(shown.error.is_none(), "{:?}", shown.error);
    assert_eq!(shown.stdout, "True\n");
    assert_eq!(shown.stderr, "");
    assert_fit_used(&s, &["ring"]);
}

#[test]
fn two_logical_gpus_on_gpu_0_are_two_replicas() {
    let Some(s) = session_or_skip() else {
        return;
    };
    let out = ok(
        &s,
        "import tensorflow as tf\ngpus = tf.config.list_physical_devices('GPU')\n\
         tf.config.set_logical_device_configuration(gpus[0], [tf.config.LogicalDeviceConfiguration(memory_limit=1024), tf.config.LogicalDeviceConfiguration(memory_limit=1024)])\n\
         strategy = tf.distribute.MirroredStrategy(devices=['/gpu:0', '/gpu:1'])\nprint(strategy.num_replicas_in_sync)",
    );
    assert!(out.ends_with("\n2\n"), "{out}");
    let shown = run(&s, FIT);
    assert!(shown.error.is_none(), "{:?}", shown.error);
    assert_eq!(shown.stdout, "True\n");
    assert_eq!(
        shown.stderr, "",
        "a split GPU reduces with its own kernel, silently"
    );
    assert_fit_used(&s, &["gpu-reduce"]);
}
