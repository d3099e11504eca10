//! `MultiWorkerMirroredStrategy` across processes, as TensorFlow's multi-worker tutorial runs
//! it: the same script started as two worker processes on 127.0.0.1, each with its own
//! `TF_CONFIG` and two logical CPU replicas, trains the MLP with `fit`. The weights must be
//! bit-identical on both workers and equal (1e-5) those of one worker with four replicas on
//! the same global batches. With the `gloo` feature off, such a cluster is a clear error that
//! names the feature. The scripts run through `mirror-kernel exec`, so each worker is a real
//! process with its own environment.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The training script every process runs: a fixed seed, fixed data, `fit` without
/// shuffling, and the initial and final weights written as JSON to the path in `sys.argv[1]`.
const SCRIPT: &str = r#"import sys, json
import numpy as np
import tensorflow as tf
tf.keras.utils.set_random_seed(7)
x = np.array([[((i * 7 + j * 3) % 11) / 11.0 - 0.4 for j in range(4)] for i in range(96)], dtype="float32")
y = np.array([(i * 5) % 3 for i in range(96)], dtype="int64")
strategy = tf.distribute.MultiWorkerMirroredStrategy()
print("replicas", strategy.num_replicas_in_sync, "chief", strategy.extended.should_checkpoint)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.1), loss="sparse_categorical_crossentropy")
initial = [w.ravel().tolist() for w in model.get_weights()]
model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
with open(sys.argv[1], "w") as f:
    json.dump({"initial": initial, "final": [w.ravel().tolist() for w in model.get_weights()]}, f)
print("done")
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mirror-kernel-workers-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    std::fs::write(dir.join("worker.py"), SCRIPT).expect("script written");
    dir
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().expect("its address").port()
}

fn tf_config(ports: &[u16], index: usize) -> String {
    let workers: Vec<String> = ports.iter().map(|p| format!("\"127.0.0.1:{p}\"")).collect();
    format!(
        "{{\"cluster\": {{\"worker\": [{}]}}, \"task\": {{\"type\": \"worker\", \"index\": {index}}}}}",
        workers.join(", ")
    )
}

/// Starts `mirror-kernel exec worker.py OUT` with `replicas` logical CPUs and `tf_config`.
fn start(dir: &Path, out: &str, replicas: usize, tf_config: Option<&str>) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mirror-kernel"));
    cmd.current_dir(dir)
        .args(["exec", "worker.py", out])
        .env("MIRROR_LOGICAL_CPUS", replicas.to_string())
        .env("CUDA_VISIBLE_DEVICES", "")
        .env_remove("TF_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(c) = tf_config {
        cmd.env("TF_CONFIG", c);
    }
    cmd.spawn().expect("mirror-kernel starts")
}

/// Waits for a process at most `limit`, killing it past that; returns (success, output).
fn finish(mut child: Child, limit: Duration) -> (bool, String) {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => break,
        }
    }
    match child.wait_with_output() {
        Ok(o) => (
            o.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        ),
        Err(e) => (false, e.to_string()),
    }
}

#[cfg(feature = "gloo")]
fn weights(path: &Path, which: &str) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_value(doc[which].clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[cfg(feature = "gloo")]
#[test]
fn two_workers_of_two_replicas_train_as_one_worker_of_four() {
    let dir = scratch("fit");
    let ports = [free_port(), free_port()];
    let limit = Duration::from_secs(240);
    let w0 = start(&dir, "w0.json", 2, Some(&tf_config(&ports, 0)));
    let w1 = start(&dir, "w1.json", 2, Some(&tf_config(&ports, 1)));
    let (ok0, out0) = finish(w0, limit);
    let (ok1, out1) = finish(w1, limit);
    assert!(ok0 && ok1, "worker 0:\n{out0}\nworker 1:\n{out1}");
    assert!(out0.contains("replicas 4 chief True"), "{out0}");
    assert!(out1.contains("replicas 4 chief False"), "{out1}");
    let (ok, out) = finish(start(&dir, "one.json", 4, None), limit);
    assert!(ok, "{out}");
    assert!(out.contains("replicas 4 chief True"), "{out}");

    let file = |name: &str| dir.join(name);
    let (a, b, one) = (
        weights(&file("w0.json"), "final"),
        weights(&file("w1.json"), "final"),
        weights(&file("one.json"), "final"),
    );
    // The same bits on both workers (the values are float32s, exact in f64).
    assert_eq!(a, b, "the workers' weights differ");
    assert_eq!(a.len(), one.len());
    let largest_gap = |p: &[Vec<f64>], q: &[Vec<f64>]| {
        p.iter()
            .flatten()
            .zip(q.iter().flatten())
            .map(|(x, y)| (x - y).abs())
            .fold(0f64, f64::max)
    };
    let gap = largest_gap(&a, &one);
    assert!(gap <= 1e-5, "two workers differ from one by {gap}");
    // Both started from the same weights, and training moved them: a comparison of
    // untrained copies would prove nothing.
    let start0 = weights(&file("w0.json"), "initial");
    assert_eq!(start0, weights(&file("one.json"), "initial"));
    assert!(
        largest_gap(&start0, &a) > 1e-3,
        "the training did not move the weights"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(not(feature = "gloo"))]
#[test]
fn a_cluster_without_the_gloo_feature_is_an_error_naming_it() {
    let dir = scratch("nofeature");
    let ports = [free_port(), free_port()];
    let (ok, out) = finish(
        start(&dir, "w0.json", 1, Some(&tf_config(&ports, 0))),
        Duration::from_secs(120),
    );
    assert!(!ok, "{out}");
    assert!(out.contains("RuntimeError"), "{out}");
    assert!(out.contains("`gloo` cargo feature"), "{out}");
    assert!(out.contains("replicas 2 chief True"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
