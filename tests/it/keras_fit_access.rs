//! What a Keras callback may read or set while `fit` runs (the optimizer's learning rate,
//! `stop_training`, `get_weights()`), the key order of `evaluate(..., return_dict=True)`
//! and error texts that stay TensorFlow's own (a teaching hint goes to the traceback, not
//! into `str(e)`), against what TensorFlow 2.21 / Keras 3.15 printed for the same cells
//! (tests/fixtures/keras/fit_access_reference.json, written by
//! make_fit_access_reference.py beside it).

use crate::common::cells::{every_cell_matches, run, stdout, Fixture};
use mirror_kernel::cell::Output;
use mirror_kernel::session::Session;

#[test]
fn every_cell_matches_keras() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/keras/fit_access_reference.json",
        tol: 1e-5,
        warnings: "WARNING:tensorflow:",
        printed: stdout,
    });
}

/// The hint of an uncaught error is the last line of its traceback and no part of its
/// `evalue`.
#[test]
fn a_hint_follows_the_traceback() {
    let s = Session::start().expect("session starts");
    let shown = run(
        &s,
        "import tensorflow as tf\ncpu = tf.config.list_physical_devices('CPU')[0]\n\
         tf.config.list_logical_devices()\n\
         tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)",
    );
    assert_eq!(
        shown.error,
        Some((
            "RuntimeError".into(),
            "Virtual devices cannot be modified after being initialized".into()
        ))
    );
    let tb = shown.outputs.iter().find_map(|o| match o {
        Output::Error(e) => Some(e.traceback.clone()),
        _ => None,
    });
    let last = tb.and_then(|t| t.last().cloned()).unwrap_or_default();
    assert!(last.starts_with("Hint: "), "last traceback line: {last:?}");
    // A message a user raises is theirs, whole.
    let shown = run(&s, "raise ValueError('bad input\\nHint: mine')");
    assert_eq!(
        shown.error,
        Some(("ValueError".into(), "bad input\nHint: mine".into()))
    );
}
