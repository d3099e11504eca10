//! Device lists as a notebook writes them: a strategy on a GPU that does not exist, a list
//! mixing CPUs and GPUs, and a name that is no device are `ValueError`s with a hint, the
//! session lives on, and nothing is written to stderr; explicit CPU devices still train on
//! the CPU ring; without a GPU, the GPU list is empty and `MirroredStrategy()` takes the CPU.

use crate::common::cells as tf_common;

use mirror_kernel::cell::Output;
use mirror_kernel::device::cuda::gpu_count;
use mirror_kernel::session::Session;
use tf_common::{ok, run};

fn session() -> Session {
    Session::start().expect("session starts")
}

/// The error's value, then the last line of its traceback, where the hint goes.
fn value_error(s: &Session, code: &str) -> String {
    let shown = run(s, code);
    assert_eq!(shown.stderr, "", "{code}");
    let hint = shown
        .outputs
        .iter()
        .find_map(|o| match o {
            Output::Error(e) => e.traceback.last().cloned(),
            _ => None,
        })
        .unwrap_or_default();
    let (name, value) = shown.error.unwrap_or_default();
    assert_eq!(name, "ValueError", "{code}: {value}");
    assert!(
        !value.contains("Hint:"),
        "the hint is not part of str(e): {value}"
    );
    format!("{value}\n{hint}")
}

#[test]
fn a_gpu_that_does_not_exist_is_a_value_error_with_a_hint() {
    let s = session();
    ok(&s, "import tensorflow as tf");
    let missing = gpu_count() + 3;
    let value = value_error(
        &s,
        &format!("tf.distribute.MirroredStrategy(devices=['/gpu:{missing}'])"),
    );
    assert!(
        value.starts_with(&format!(
            "Device \"/gpu:{missing}\" does not exist: this machine has {} GPU",
            gpu_count()
        )),
        "{value}"
    );
    assert!(
        value.contains("tf.config.list_physical_devices('GPU')"),
        "{value}"
    );
    let value = value_error(
        &s,
        &format!("tf.distribute.OneDeviceStrategy('/device:GPU:{missing}')"),
    );
    assert!(value.contains("does not exist"), "{value}");
    // The session lives on and still trains on the CPU.
    assert_eq!(ok(&s, "print(tf.distribute.MirroredStrategy(devices=['/cpu:0']).num_replicas_in_sync)"),
        "INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:CPU:0',)\n1\n");
}

#[test]
fn a_cpu_that_does_not_exist_names_the_split() {
    let s = session();
    ok(&s, "import tensorflow as tf");
    let value = value_error(&s, "tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:7'])");
    assert!(
        value.starts_with("Device \"/cpu:7\" does not exist (logical CPU devices: '/cpu:0')"),
        "{value}"
    );
    assert!(
        value.contains("set_logical_device_configuration"),
        "{value}"
    );
}

#[test]
fn mixing_cpu_and_gpu_devices_is_a_value_error() {
    let s = session();
    ok(&s, "import tensorflow as tf");
    let value = value_error(
        &s,
        "tf.distribute.MirroredStrategy(devices=['/cpu:0', '/gpu:0'])",
    );
    assert!(
        value.starts_with(
            "MirroredStrategy cannot mix CPU and GPU devices (\"/cpu:0\" and \"/gpu:0\")"
        ),
        "{value}"
    );
    assert!(
        value.contains("tf.config.list_logical_devices('GPU')"),
        "{value}"
    );
}

#[test]
fn names_that_are_no_device_and_duplicates_are_value_errors() {
    let s = session();
    ok(&s, "import tensorflow as tf");
    let value = value_error(&s, "tf.distribute.MirroredStrategy(devices=['/tpu:0'])");
    assert!(value.contains("is not a device name"), "{value}");
    let value = value_error(
        &s,
        "tf.distribute.MirroredStrategy(devices=['/cpu:0', 'CPU:0'])",
    );
    assert!(
        value.starts_with("No duplicates allowed in `devices` argument"),
        "{value}"
    );
}

#[test]
fn without_a_gpu_the_default_strategy_takes_the_cpu_quietly() {
    if gpu_count() > 0 {
        println!("skipped: this machine has a GPU (cuda_notebook.rs covers it)");
        return;
    }
    let s = session();
    let shown = run(
        &s,
        "import tensorflow as tf\nprint(tf.config.list_physical_devices('GPU'))\n\
         print(tf.config.list_logical_devices('GPU'))\n\
         strategy = tf.distribute.MirroredStrategy()\n\
         with strategy.scope():\n    \
         model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])\n    \
         model.compile(optimizer='sgd', loss='mse')\n\
         import numpy as np\nh = model.fit(np.ones((8, 3), 'float32'), np.zeros((8, 2), 'float32'), epochs=2, verbose=0)\n\
         print(len(h.history['loss']))",
    );
    assert_eq!(shown.error, None);
    assert_eq!(shown.stderr, "");
    assert_eq!(
        shown.stdout,
        "[]\n[]\nINFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:CPU:0',)\n2\n"
    );
}
