//! The custom-training-loop bench: the bench's MLP (784-128-10, batch 128) trained by a
//! hand-written loop with a `tf.GradientTape` and Adam written out in tf ops (`m`, `v`
//! and the variables assigned through the execution context), run eagerly and under
//! `tf.function` in this interpreter, and reported as fractions of `keras::fit`'s
//! samples/s on the same model, batch and machine in the same run.
//!
//! The loop's Python goes through a real `Interpreter`, so the eager row pays for the
//! interpreter and the op path per op, and the `tf.function` row for one graph replay
//! per step (the Python loop over batches remains, as in a notebook).
//!
//! A last row trains the same MLP under `MirroredStrategy` on two logical CPU replicas:
//! TensorFlow's custom-training tutorial loop (`strategy.run` of a `GradientTape` step
//! calling `optimizer.apply_gradients`, inside `tf.function`) against `model.fit` on the
//! same strategy, both in the same interpreter, each the fastest of 3 alternating epochs.

use crate::cell::{CollectSink, ExecuteRequest, Output};

/// The loop, with `{rounds}` epochs over `{samples}` synthetic examples; it prints
/// `eager <samples/s>` and `function <samples/s>`.
const LOOP: &str = r#"import tensorflow as tf, time
ROUNDS = {rounds}
tf.random.set_seed(0)
N = {samples}
x_all = tf.random.normal([N, 784])
y_all = tf.random.uniform([N], 0, 10, dtype=tf.int32)
w1 = tf.Variable(tf.random.normal([784, 128], stddev=0.05)); b1 = tf.Variable(tf.zeros([128]))
w2 = tf.Variable(tf.random.normal([128, 10], stddev=0.05)); b2 = tf.Variable(tf.zeros([10]))
params = [w1, b1, w2, b2]
ms = [tf.Variable(tf.zeros_like(p)) for p in params]
vs = [tf.Variable(tf.zeros_like(p)) for p in params]
t = tf.Variable(0.0)
lr, beta1, beta2, eps = 0.001, 0.9, 0.999, 1e-7
def step(x, y):
    with tf.GradientTape() as tape:
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        logits = tf.matmul(h, w2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    grads = tape.gradient(loss, params)
    t.assign_add(1.0)
    a = lr * tf.sqrt(1.0 - tf.pow(beta2, t)) / (1.0 - tf.pow(beta1, t))
    for p, g, m, v in zip(params, grads, ms, vs):
        m.assign(beta1 * m + (1.0 - beta1) * g)
        v.assign(beta2 * v + (1.0 - beta2) * g * g)
        p.assign_sub(a * m / (tf.sqrt(v) + eps))
    return loss
fstep = tf.function(step)
batches = [(x_all[i:i+128], y_all[i:i+128]) for i in range(0, N, 128)]
for name, fn in [("eager", step), ("function", fstep)]:
    fn(*batches[0])
    t0 = time.perf_counter()
    for k in range(ROUNDS):
        for x, y in batches:
            loss = fn(x, y)
    dt = time.perf_counter() - t0
    print(name, ROUNDS * N / dt)
"#;

/// The tutorial's loop under a two-replica `MirroredStrategy` and `fit` on the same
/// strategy, model and global batch, each the fastest of 3 alternating epochs (the
/// machine may be shared); it prints `fit <samples/s>` and `loop <samples/s>`.
const STRATEGY_LOOP: &str = r#"import tensorflow as tf, numpy as np, time
cpu = tf.config.list_physical_devices('CPU')[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy()
np.random.seed(7)
N = {samples}
x = np.random.rand(N, 784).astype('float32')
y = np.random.randint(0, 10, size=(N,))
def make():
    return tf.keras.Sequential([tf.keras.layers.Input(shape=(784,)),
                                tf.keras.layers.Dense(128, activation='relu'),
                                tf.keras.layers.Dense(10)])
with strategy.scope():
    fitted = make()
    fitted.compile(optimizer='adam', loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model = make()
    optimizer = tf.keras.optimizers.Adam()
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction='none')
dist = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(128))
def train_step(inputs):
    images, labels = inputs
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(loss_object(labels, model(images, training=True)), global_batch_size=128)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss
@tf.function
def distributed_train_step(inputs):
    return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(train_step, args=(inputs,)), axis=None)
fitted.fit(x[:256], y[:256], batch_size=128, epochs=1, verbose=0)
for b in dist:
    distributed_train_step(b)
    break
best_fit, best_loop = 0.0, 0.0
for _ in range(3):
    t0 = time.perf_counter()
    fitted.fit(x, y, batch_size=128, epochs=1, verbose=0)
    best_fit = max(best_fit, N / (time.perf_counter() - t0))
    t0 = time.perf_counter()
    for b in dist:
        distributed_train_step(b)
    best_loop = max(best_loop, N / (time.perf_counter() - t0))
print('fit', best_fit)
print('loop', best_loop)
"#;

/// Rounds over the synthetic examples for each variant.
const ROUNDS: usize = 4;

/// Runs the loop in a fresh interpreter; returns (eager, tf.function) samples/s.
fn run_loop(samples: usize) -> Result<(f64, f64), String> {
    let code = LOOP
        .replace("{rounds}", &ROUNDS.to_string())
        .replace("{samples}", &samples.to_string());
    let text = run_cell(code)?;
    Ok((rate(&text, "eager ")?, rate(&text, "function ")?))
}

/// The strategy loop in a fresh interpreter: (fit, custom loop) samples/s.
fn run_strategy_loop(samples: usize) -> Result<(f64, f64), String> {
    let text = run_cell(STRATEGY_LOOP.replace("{samples}", &samples.to_string()))?;
    Ok((rate(&text, "fit ")?, rate(&text, "loop ")?))
}

/// The number a cell printed after `name`.
fn rate(text: &str, name: &str) -> Result<f64, String> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse::<f64>().ok())
        .ok_or_else(|| format!("the loop printed no {name}rate: {text}"))
}

/// Runs `code` in a fresh interpreter and returns what it printed.
fn run_cell(code: String) -> Result<String, String> {
    let mut interp =
        crate::lang::Interpreter::new(Default::default(), crate::bindings::load_module);
    let sink = CollectSink::default();
    let req = ExecuteRequest {
        code,
        silent: false,
        store_history: true,
        allow_stdin: false,
        user_expressions: vec![],
    };
    let r = interp.execute(&req, &sink);
    if let Err(e) = r.result {
        return Err(format!("{}: {}", e.ename, e.evalue));
    }
    let mut text = String::new();
    for o in sink.take() {
        if let Output::Stream { text: t, .. } = o {
            text.push_str(&t);
        }
    }
    Ok(text)
}

/// The rows: each variant's samples/s and its fraction of `fit`'s.
pub fn bench_custom_loop(samples: usize) -> Result<String, String> {
    let (eager, function) = run_loop(samples)?;
    let fit = crate::keras::bench::bench_train(samples * ROUNDS, 128)
        .map_err(|e| e.to_string())?
        .samples_per_sec;
    let (fit2, loop2) = run_strategy_loop(samples)?;
    Ok(format!(
        "custom loop (GradientTape, Adam in tf ops), MLP 784-128-10, batch 128: keras fit \
         {fit:.0} samples/s\n  eager: {eager:.0} samples/s, {:.2} of fit\n  under \
         tf.function: {function:.0} samples/s, {:.2} of fit\n\
         custom loop under MirroredStrategy (2 CPU replicas, strategy.run in tf.function, \
         Adam object), same MLP, global batch 128: fit on the strategy {fit2:.0} samples/s, \
         loop {loop2:.0} samples/s, {:.2} of fit\n",
        eager / fit,
        function / fit,
        loop2 / fit2
    ))
}
