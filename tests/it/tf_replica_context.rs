//! Replicas of `strategy.run` that meet inside the replica function: `all_reduce` (SUM and
//! MEAN, nested structures, chained), `merge_call`, and `apply_gradients` followed by a read
//! of the updated variable, on 1, 2, 3 and 4 replicas, eager and inside `tf.function`
//! (whose replay runs the replicas at once and meets them in the ring all-reduce), with
//! TensorFlow's errors when replicas disagree or one raises. Against real TensorFlow 2.21:
//! every cell of tests/fixtures/tf/replica_context_reference.json (written by
//! tests/fixtures/tf/make_replica_context_reference.py) prints what TensorFlow printed.
//! Against the kernel's own promises: deep recursion inside a replica is a RecursionError
//! and an interrupt ends a run whose replicas wait at a meeting, and either way the session
//! runs the next `strategy.run` normally.

use std::time::Duration;

use crate::common::cells::{every_cell_matches, ok, run, session, stdout_and_displays, Fixture};

#[test]
fn replica_context_cells_match_tensorflow() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/tf/replica_context_reference.json",
        tol: 1e-6,
        warnings: "UserWarning:",
        printed: stdout_and_displays,
    });
}

const TWO_REPLICAS: &str = r#"import tensorflow as tf
cpu = tf.config.list_physical_devices('CPU')[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy()
def total():
    ctx = tf.distribute.get_replica_context()
    i = tf.cast(ctx.replica_id_in_sync_group, tf.float32)
    return ctx.all_reduce("SUM", i + 1.0)
"#;

#[test]
fn deep_recursion_in_a_replica_is_a_recursion_error() {
    let s = session();
    ok(&s, TWO_REPLICAS);
    // Replica 1 recurses without end after the meeting, on its own coroutine stack.
    let shown = run(
        &s,
        "def down(n):\n    return down(n + 1)\n\
         def fn():\n    t = total()\n    if tf.distribute.get_replica_context().replica_id_in_sync_group == 1:\n        down(0)\n    return t\n\
         strategy.run(fn)",
    );
    let (ename, evalue) = shown.error.expect("the run raised");
    assert_eq!(ename, "RecursionError", "{evalue}");
    assert_eq!(evalue, "maximum recursion depth exceeded");
    let after = ok(&s, "print(strategy.run(total))\ndef d(n):\n    return n if n == 0 else d(n - 1)\nprint(d(900))");
    assert!(
        after.contains("numpy=3.0") || after.contains("tf.Tensor(3.0"),
        "{after}"
    );
    assert!(after.trim_end().ends_with('0'), "{after}");
}

#[test]
fn an_interrupt_ends_replicas_waiting_at_a_meeting() {
    let s = session();
    ok(&s, TWO_REPLICAS);
    let flag = s.interrupt_flag();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    // Replica 0 waits at the meeting while replica 1 loops until interrupted.
    let shown = run(
        &s,
        "def fn():\n    if tf.distribute.get_replica_context().replica_id_in_sync_group == 1:\n        while True:\n            pass\n    return total()\n\
         strategy.run(fn)",
    );
    t.join().expect("the interrupting thread");
    assert_eq!(
        shown.error.map(|e| e.0).as_deref(),
        Some("KeyboardInterrupt")
    );
    let after = ok(&s, "r = strategy.run(total)\nprint(r.values[0].numpy(), r.values[1].numpy(), tf.distribute.in_cross_replica_context())");
    assert_eq!(after, "3.0 3.0 False\n");
}

#[test]
fn a_replica_that_catches_the_stop_is_still_ended() {
    let s = session();
    ok(&s, TWO_REPLICAS);
    // Replica 0 waits at a meeting and swallows the stop; replica 1 raises.
    let shown = run(
        &s,
        "def fn():\n    r = tf.distribute.get_replica_context().replica_id_in_sync_group\n    if r == 1:\n        raise KeyError('one')\n    try:\n        total()\n    except BaseException:\n        total()\n    return 1\n\
         strategy.run(fn)",
    );
    assert_eq!(shown.error.map(|e| e.0).as_deref(), Some("KeyError"));
    let after = ok(&s, "print(strategy.run(total).values[1].numpy())");
    assert_eq!(after, "3.0\n");
}
