//! The custom-training-loop bench: the bench's MLP (784-128-10, batch 128) trained by a
//! hand-written loop with a `tf.GradientTape` and Adam written out in tf ops (`m`, `v`
//! and the variables assigned through the execution context), run eagerly and under
//! `tf.function` in this interpreter, and reported as fractions of `keras::fit`'s
//! samples/s on the same model, batch and machine in the same run.
//!
//! The loop's Python goes through a real `Interpreter`, so the eager row pays for the
//! interpreter and the op path per op, and the `tf.function` row for one graph replay
//! per step (the Python loop over batches remains, as in a notebook).

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

/// Rounds over the synthetic examples for each variant.
const ROUNDS: usize = 4;

/// Runs the loop in a fresh interpreter; returns (eager, tf.function) samples/s.
fn run_loop(samples: usize) -> Result<(f64, f64), String> {
    let mut interp =
        crate::lang::Interpreter::new(Default::default(), crate::bindings::load_module);
    let sink = CollectSink::default();
    let code = LOOP
        .replace("{rounds}", &ROUNDS.to_string())
        .replace("{samples}", &samples.to_string());
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
    let rate = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<f64>().ok())
            .ok_or_else(|| format!("the loop printed no {name} rate: {text}"))
    };
    Ok((rate("eager ")?, rate("function ")?))
}

/// The rows: each variant's samples/s and its fraction of `fit`'s.
pub fn bench_custom_loop(samples: usize) -> Result<String, String> {
    let (eager, function) = run_loop(samples)?;
    let fit = crate::keras::bench::bench_train(samples * ROUNDS, 128)
        .map_err(|e| e.to_string())?
        .samples_per_sec;
    Ok(format!(
        "custom loop (GradientTape, Adam in tf ops), MLP 784-128-10, batch 128: keras fit \
         {fit:.0} samples/s\n  eager: {eager:.0} samples/s, {:.2} of fit\n  under \
         tf.function: {function:.0} samples/s, {:.2} of fit\n",
        eager / fit,
        function / fit
    ))
}
