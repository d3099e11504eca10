//! TensorFlow's custom training loop under `MirroredStrategy` (the loop of the custom
//! training tutorial: `strategy.run` of a step that takes a `GradientTape`'s gradients and
//! calls `optimizer.apply_gradients`, the loss from `tf.nn.compute_average_loss`, an
//! accuracy metric made in the scope). Against the kernel itself: on 1, 2, 3 and 4 replicas,
//! with global batches that split evenly and unevenly, with SGD and Adam, eager and inside
//! `tf.function`, the loop ends with the weights of the one-replica loop within 1e-5 and
//! with the weights of `fit` on the same batches; after every step every replica's copy of
//! every variable is bit-identical to the first (the mirror invariant); the traced step,
//! whose replay runs the replicas at once, ends within 1e-6 of the eager loop. Against real
//! TensorFlow 2.21: every cell of tests/fixtures/tf/strategy_run_reference.json (written
//! by tests/fixtures/tf/make_strategy_run_reference.py) prints what TensorFlow printed.

use crate::common::cells::{every_cell_matches, ok, stdout_and_displays, Fixture};

use mirror_kernel::session::Session;

#[test]
fn strategy_run_cells_match_tensorflow() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/tf/strategy_run_reference.json",
        tol: 1e-6,
        warnings: "UserWarning:",
        printed: stdout_and_displays,
    });
}

/// 30 examples of 4 features in 3 classes, and the model's starting weights: the same
/// numbers in every session, so runs on different replica counts start alike.
const SETUP: &str = r#"import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices('CPU')[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 4)
x = ((np.arange(120).reshape(30, 4) * 7919 % 97) / 48.5 - 1.0).astype('float32')
y = (np.arange(30) * 5 % 3).astype('int64')
w0 = [((np.arange(20).reshape(4, 5) * 31 % 17) / 17.0 - 0.5).astype('float32'),
      np.zeros(5, dtype='float32'),
      ((np.arange(15).reshape(5, 3) * 13 % 11) / 11.0 - 0.5).astype('float32'),
      np.zeros(3, dtype='float32')]
def create_model():
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(5, activation='relu'),
                             tf.keras.layers.Dense(3)])
    m.set_weights(w0)
    return m
def flat(model):
    return " ".join(repr(float(v)) for w in model.get_weights() for v in w.ravel())
"#;

/// The tutorial's loop on `replicas` replicas; prints `mirrored` when every copy matched
/// after every step, then the final weights (one line) and the accuracy.
fn custom_loop(replicas: usize, batch: usize, optimizer: &str, function: bool) -> String {
    let devices: Vec<String> = (0..replicas).map(|i| format!("'/cpu:{i}'")).collect();
    let decorator = if function { "@tf.function\n" } else { "" };
    format!(
        r#"strategy = tf.distribute.MirroredStrategy([{devices}])
GLOBAL_BATCH_SIZE = {batch}
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH_SIZE)
dist_ds = strategy.experimental_distribute_dataset(ds)
with strategy.scope():
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction='none')
    def compute_loss(labels, predictions, global_batch):
        per_example_loss = loss_object(labels, predictions)
        return tf.nn.compute_average_loss(per_example_loss, global_batch_size=global_batch)
    model = create_model()
    optimizer = {optimizer}
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name='train_accuracy')

def train_step(inputs, global_batch):
    images, labels = inputs
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = compute_loss(labels, predictions, global_batch)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_accuracy.update_state(labels, predictions)
    return loss

{decorator}def distributed_train_step(dataset_inputs, global_batch):
    per_replica_losses = strategy.run(train_step, args=(dataset_inputs, global_batch))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

mirrored = True
for epoch in range(2):
    for batch, (_, yb) in zip(dist_ds, ds):
        distributed_train_step(batch, len(yb))
        for w in model.trainable_variables:
            copies = [c.numpy() for c in w.value.values]
            mirrored = mirrored and len(copies) == {replicas} and all(np.array_equal(c, copies[0]) for c in copies)
print('mirrored' if mirrored else 'copies differ')
print(flat(model))
print(float(train_accuracy.result()))
"#,
        devices = devices.join(", ")
    )
}

/// `fit` on one device over the same batches, in order.
fn fit_loop(batch: usize, optimizer: &str) -> String {
    format!(
        r#"model = create_model()
model.compile(optimizer={optimizer}, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x, y, batch_size={batch}, epochs=2, shuffle=False, verbose=0)
print(flat(model))
"#
    )
}

fn numbers(line: &str) -> Vec<f64> {
    line.split_whitespace()
        .map(|t| t.parse::<f64>().unwrap_or(f64::NAN))
        .collect()
}

fn assert_close(what: &str, want: &[f64], got: &[f64]) {
    assert_eq!(want.len(), got.len(), "{what}: weight counts differ");
    for (i, (a, b)) in want.iter().zip(got).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5,
            "{what}: weight {i} is {b}, expected {a}"
        );
    }
}

/// The loop on `replicas` replicas, eager or traced, in a fresh session: its final weights
/// and accuracy, once every copy matched after every step.
fn run_loop(
    replicas: usize,
    batch: usize,
    optimizer: &str,
    function: bool,
) -> (Vec<f64>, Vec<f64>) {
    let s = Session::start().expect("session");
    ok(&s, SETUP);
    let out = ok(&s, &custom_loop(replicas, batch, optimizer, function));
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("INFO:tensorflow:"))
        .collect();
    assert_eq!(
        lines.first(),
        Some(&"mirrored"),
        "{replicas} replicas:\n{out}"
    );
    let weights = numbers(lines.get(1).copied().unwrap_or(""));
    let accuracy = numbers(lines.get(2).copied().unwrap_or(""));
    (weights, accuracy)
}

/// Runs the loop on each replica count and checks each against one replica and `fit`.
fn check(batch: usize, optimizer: &str, function: bool, counts: &[usize]) {
    let run = |replicas: usize| run_loop(replicas, batch, optimizer, function);
    let (one, one_acc) = run(1);
    let s = Session::start().expect("session");
    ok(&s, SETUP);
    let fitted = numbers(ok(&s, &fit_loop(batch, optimizer)).trim());
    assert_close(
        &format!("fit vs loop ({optimizer}, batch {batch})"),
        &fitted,
        &one,
    );
    for &n in counts {
        let (w, acc) = run(n);
        let what = format!("{n} replicas vs 1 ({optimizer}, batch {batch}, function {function})");
        assert_close(&what, &one, &w);
        assert_close(&format!("{what}: accuracy"), &one_acc, &acc);
    }
}

#[test]
fn sgd_even_split_matches_one_replica_and_fit() {
    check(8, "tf.keras.optimizers.SGD(0.1)", false, &[2, 4]);
}

#[test]
fn sgd_uneven_split_matches_one_replica_and_fit() {
    check(10, "tf.keras.optimizers.SGD(0.1)", false, &[3, 4]);
}

#[test]
fn adam_matches_one_replica_and_fit() {
    check(8, "tf.keras.optimizers.Adam(0.01)", false, &[2, 3]);
}

#[test]
fn adam_uneven_split_matches_one_replica_and_fit() {
    check(10, "tf.keras.optimizers.Adam(0.01)", false, &[4]);
}

#[test]
fn traced_step_matches_eager() {
    check(8, "tf.keras.optimizers.Adam(0.01)", true, &[2, 3]);
}

// The traced step replays each replica's part of the graph on its own thread, all
// replicas at once; the tests below hold that path to the same numbers.

#[test]
fn traced_sgd_matches_one_replica_and_fit() {
    check(8, "tf.keras.optimizers.SGD(0.1)", true, &[2, 4]);
}

#[test]
fn traced_sgd_uneven_split_matches_one_replica_and_fit() {
    check(10, "tf.keras.optimizers.SGD(0.1)", true, &[3]);
}

#[test]
fn traced_adam_uneven_split_matches_one_replica_and_fit() {
    check(10, "tf.keras.optimizers.Adam(0.01)", true, &[4]);
}

#[test]
fn traced_replicas_in_parallel_match_eager_within_1e6() {
    for (batch, optimizer) in [
        (10, "tf.keras.optimizers.Adam(0.01)"),
        (10, "tf.keras.optimizers.SGD(0.1)"),
    ] {
        for n in 1..=4 {
            let (mut eager, eager_acc) = run_loop(n, batch, optimizer, false);
            let (mut traced, traced_acc) = run_loop(n, batch, optimizer, true);
            eager.extend(eager_acc);
            traced.extend(traced_acc);
            assert_eq!(eager.len(), traced.len());
            for (i, (a, b)) in eager.iter().zip(&traced).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-6,
                    "{n} replicas, {optimizer}: value {i} is {b} traced, {a} eager"
                );
            }
        }
    }
}
