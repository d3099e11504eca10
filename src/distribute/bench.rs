//! The training benchmark behind `mirror-kernel bench train`: the MNIST-sized MLP (Dense
//! 784→128 relu, Dense 10 softmax, sparse categorical cross-entropy, Adam; 101,770
//! parameters) trained for one epoch over 60,000 synthetic samples at batch 128, first on one
//! CPU replica and then on two, in the same process. It prints samples/s for each, the
//! speed-up, and the share of step time spent in the all-reduce, plus two micro-measurements:
//! the cost of one empty dispatch to every replica and of one bare ring all-reduce of the
//! gradient. The model is built by a caller-supplied builder so the engine's own Keras model
//! can be measured; [`HostMlp`] is the plain host implementation used when none is given.
//! Timings are printed, never asserted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::model::{BatchSums, BoxError, Dataset, NoObserver, ReduceHook, ReplicaModel};
use super::pool::ReplicaPool;
use super::ring::RingAllReduce;
use super::strategy::{logical_cpu_devices, DeviceFactory, MirroredStrategy};
use super::train::FitOptions;
use super::{DistributeError, Result};
use crate::device::{Buffer, DTensor, Device};

/// Builds one replica's model (`rank`, device) for the benchmark.
pub type ModelBuilder = Arc<
    dyn Fn(usize, &dyn Device) -> std::result::Result<Box<dyn ReplicaModel>, BoxError>
        + Send
        + Sync,
>;

/// `c (m×n) = op(a) · op(b)`, plus `c` when `accumulate`, on one thread. `a` is `m×k` (stored
/// `k×m` when `ta`), `b` is `k×n` (stored `n×k` when `tb`); all row-major.
#[allow(clippy::too_many_arguments)]
fn matmul(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    ta: bool,
    b: &[f32],
    tb: bool,
    c: &mut [f32],
    accumulate: bool,
) {
    if a.len() < m * k || b.len() < k * n || c.len() < m * n || m == 0 || n == 0 {
        return;
    }
    let (a_rs, a_cs) = if ta { (1, m as isize) } else { (k as isize, 1) };
    let (b_rs, b_cs) = if tb { (1, k as isize) } else { (n as isize, 1) };
    // SAFETY: the lengths were checked above against the strides used, and `c` does not alias
    // `a` or `b` (it is a distinct `&mut`).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            a.as_ptr(),
            a_cs,
            a_rs,
            b.as_ptr(),
            b_cs,
            b_rs,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Dense(input→hidden, relu) → Dense(hidden→classes, softmax), sparse categorical
/// cross-entropy, Adam (Keras defaults but `learning_rate`), on host vectors.
pub struct HostMlp {
    input: usize,
    hidden: usize,
    classes: usize,
    params: Vec<f32>,
    grad: DTensor,
    m: Vec<f32>,
    v: Vec<f32>,
    step: i32,
    lr: f32,
    /// Activations and their gradients, reused between steps.
    h: Vec<f32>,
    z: Vec<f32>,
    dh: Vec<f32>,
}

impl HostMlp {
    /// Glorot-uniform weights from a fixed seed, zero biases (as Keras initialises Dense).
    pub fn new(input: usize, hidden: usize, classes: usize, lr: f32, seed: u64) -> Self {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut params = Vec::with_capacity(input * hidden + hidden + hidden * classes + classes);
        let l1 = (6.0 / (input + hidden) as f32).sqrt();
        params.extend((0..input * hidden).map(|_| rng.gen_range(-l1..l1)));
        params.extend(std::iter::repeat_n(0.0, hidden));
        let l2 = (6.0 / (hidden + classes) as f32).sqrt();
        params.extend((0..hidden * classes).map(|_| rng.gen_range(-l2..l2)));
        params.extend(std::iter::repeat_n(0.0, classes));
        let n = params.len();
        HostMlp {
            input,
            hidden,
            classes,
            params,
            grad: DTensor {
                shape: vec![n],
                buf: Buffer::Host(vec![0.0; n]),
            },
            m: vec![0.0; n],
            v: vec![0.0; n],
            step: 0,
            lr,
            h: Vec::new(),
            z: Vec::new(),
            dh: Vec::new(),
        }
    }

    /// The benchmark's builder: the same seed on every replica.
    pub fn builder(input: usize, hidden: usize, classes: usize) -> ModelBuilder {
        Arc::new(move |_, _| {
            Ok(Box::new(HostMlp::new(input, hidden, classes, 1e-3, 42)) as Box<dyn ReplicaModel>)
        })
    }

    fn split(&self) -> [usize; 3] {
        let b1 = self.input * self.hidden;
        let w2 = b1 + self.hidden;
        [b1, w2, w2 + self.hidden * self.classes]
    }

    /// Fills `self.h` (relu) and `self.z` (softmax probabilities) for `rows` examples.
    fn forward(&mut self, x: &[f32], rows: usize) {
        let [b1, w2, b2] = self.split();
        let (hid, cls) = (self.hidden, self.classes);
        self.h.resize(rows * hid, 0.0);
        self.z.resize(rows * cls, 0.0);
        matmul(
            rows,
            hid,
            self.input,
            x,
            false,
            &self.params[..b1],
            false,
            &mut self.h,
            false,
        );
        for row in self.h.chunks_mut(hid) {
            for (h, b) in row.iter_mut().zip(&self.params[b1..w2]) {
                *h = (*h + b).max(0.0);
            }
        }
        matmul(
            rows,
            cls,
            hid,
            &self.h,
            false,
            &self.params[w2..b2],
            false,
            &mut self.z,
            false,
        );
        for row in self.z.chunks_mut(cls) {
            for (z, b) in row.iter_mut().zip(&self.params[b2..]) {
                *z += b;
            }
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut s = 0.0;
            for z in row.iter_mut() {
                *z = (*z - max).exp();
                s += *z;
            }
            row.iter_mut().for_each(|z| *z /= s);
        }
    }

    fn sums(&self, y: &[f32], rows: usize) -> BatchSums {
        let (mut loss, mut acc) = (0.0f64, 0.0f64);
        for (row, t) in self.z.chunks(self.classes).zip(y).take(rows) {
            let t = *t as usize;
            loss -= f64::from(row.get(t).copied().unwrap_or(0.0).max(1e-7)).ln();
            let arg = (0..row.len())
                .max_by(|a, b| row[*a].total_cmp(&row[*b]))
                .unwrap_or(0);
            acc += f64::from(u8::from(arg == t));
        }
        BatchSums {
            examples: rows,
            values: vec![loss, acc],
        }
    }
}

impl HostMlp {
    /// Forward and backward for `rows` (at least one) examples into the gradient buffer.
    pub fn compute_gradients(
        &mut self,
        x: &[f32],
        y: &[f32],
        rows: usize,
        global: usize,
    ) -> std::result::Result<BatchSums, BoxError> {
        self.forward(x, rows);
        let sums = self.sums(y, rows);
        let [b1, w2, b2] = self.split();
        let (inp, hid, cls) = (self.input, self.hidden, self.classes);
        // dZ = (P - onehot) / global batch, in place in `z`.
        for (row, t) in self.z.chunks_mut(cls).zip(y) {
            if let Some(p) = row.get_mut(*t as usize) {
                *p -= 1.0;
            }
            row.iter_mut().for_each(|p| *p /= global as f32);
        }
        let mut grad = std::mem::take(host(&mut self.grad)?);
        let (gw1, rest) = grad.split_at_mut(b1);
        let (gb1, rest) = rest.split_at_mut(w2 - b1);
        let (gw2, gb2) = rest.split_at_mut(b2 - w2);
        matmul(hid, cls, rows, &self.h, true, &self.z, false, gw2, false);
        gb2.iter_mut().for_each(|g| *g = 0.0);
        for row in self.z.chunks(cls) {
            gb2.iter_mut().zip(row).for_each(|(g, d)| *g += d);
        }
        self.dh.resize(rows * hid, 0.0);
        matmul(
            rows,
            hid,
            cls,
            &self.z,
            false,
            &self.params[w2..b2],
            true,
            &mut self.dh,
            false,
        );
        for (d, h) in self.dh.iter_mut().zip(&self.h) {
            if *h <= 0.0 {
                *d = 0.0;
            }
        }
        matmul(inp, hid, rows, x, true, &self.dh, false, gw1, false);
        gb1.iter_mut().for_each(|g| *g = 0.0);
        for row in self.dh.chunks(hid) {
            gb1.iter_mut().zip(row).for_each(|(g, d)| *g += d);
        }
        *host(&mut self.grad)? = grad;
        Ok(sums)
    }

    /// The flat gradient buffer.
    pub fn gradient(&self) -> &DTensor {
        &self.grad
    }

    /// The Adam update with the gradient buffer.
    pub fn apply_gradients(&mut self) -> std::result::Result<(), BoxError> {
        let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-7f32);
        self.step += 1;
        let alpha = self.lr * (1.0 - b2.powi(self.step)).sqrt() / (1.0 - b1.powi(self.step));
        let Buffer::Host(g) = &self.grad.buf else {
            return Err("the host MLP keeps its gradient on the host".into());
        };
        let slots = self.m.iter_mut().zip(self.v.iter_mut());
        for ((p, (m, v)), g) in self.params.iter_mut().zip(slots).zip(g) {
            *m += (1.0 - b1) * (g - *m);
            *v += (1.0 - b2) * (g * g - *v);
            *p -= alpha * *m / (v.sqrt() + eps);
        }
        Ok(())
    }
}

fn host(t: &mut DTensor) -> std::result::Result<&mut Vec<f32>, BoxError> {
    match &mut t.buf {
        Buffer::Host(v) => Ok(v),
        Buffer::Cuda(_) => Err("the host MLP keeps its gradient on the host".into()),
    }
}

impl ReplicaModel for HostMlp {
    fn metric_names(&self) -> Vec<String> {
        vec!["loss".into(), "accuracy".into()]
    }

    fn gradient_len(&self) -> usize {
        self.params.len()
    }

    fn train_step(
        &mut self,
        device: &dyn Device,
        x: &[f32],
        y: &[f32],
        rows: usize,
        global: usize,
        reduce: &mut ReduceHook<'_>,
    ) -> std::result::Result<BatchSums, BoxError> {
        let sums = if rows == 0 {
            host(&mut self.grad)?.iter_mut().for_each(|g| *g = 0.0);
            BatchSums::default()
        } else {
            self.compute_gradients(x, y, rows, global)?
        };
        reduce(&mut self.grad, device)?;
        self.apply_gradients()?;
        Ok(sums)
    }

    fn evaluate_batch(
        &mut self,
        _: &dyn Device,
        x: &[f32],
        y: &[f32],
        rows: usize,
    ) -> std::result::Result<BatchSums, BoxError> {
        self.forward(x, rows);
        Ok(self.sums(y, rows))
    }

    fn predict_batch(
        &mut self,
        _: &dyn Device,
        x: &[f32],
        rows: usize,
    ) -> std::result::Result<Vec<f32>, BoxError> {
        self.forward(x, rows);
        Ok(self.z.clone())
    }

    fn variables(&self, _: &dyn Device) -> std::result::Result<Vec<Vec<f32>>, BoxError> {
        let [b1, w2, b2] = self.split();
        let p = &self.params;
        Ok(vec![
            p[..b1].to_vec(),
            p[b1..w2].to_vec(),
            p[w2..b2].to_vec(),
            p[b2..].to_vec(),
        ])
    }

    fn set_variables(
        &mut self,
        _: &dyn Device,
        values: &[Vec<f32>],
    ) -> std::result::Result<(), BoxError> {
        let flat: Vec<f32> = values.iter().flatten().copied().collect();
        if flat.len() != self.params.len() {
            return Err(
                format!("expected {} values, got {}", self.params.len(), flat.len()).into(),
            );
        }
        self.params = flat;
        Ok(())
    }
}

/// One line of the benchmark: a replica count and what one epoch measured.
#[derive(Debug, Clone)]
pub struct BenchRow {
    pub replicas: usize,
    pub samples_per_second: f64,
    pub all_reduce_share: f64,
    pub compute_share: f64,
    pub final_loss: f64,
}

/// Synthetic MNIST-shaped data: `n` rows of 784 values in [0, 1) and labels 0..9 that depend
/// on the pixels, so the model has something to learn.
pub fn synthetic_mnist(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let x: Vec<f32> = (0..n * 784).map(|_| rng.gen::<f32>()).collect();
    let y = x
        .chunks(784)
        .map(|r| ((r[0] + r[1] + r[2]) * 3.3) as usize as f32 % 10.0)
        .collect();
    (x, y)
}

/// Trains one epoch on `replicas` replicas and returns its row.
pub fn train_epoch(
    replicas: usize,
    factory: &DeviceFactory,
    build: &ModelBuilder,
    x: &[f32],
    y: &[f32],
    batch: usize,
) -> Result<BenchRow> {
    let strategy = MirroredStrategy::new(logical_cpu_devices(replicas), factory.clone())?;
    let b = build.clone();
    let id = strategy.build_model(move |rank, dev| b(rank, dev))?;
    let data = Dataset {
        x,
        x_width: 784,
        y,
        y_width: 1,
    };
    let opts = FitOptions {
        epochs: 1,
        batch_size: batch,
        ..FitOptions::default()
    };
    let history = strategy.fit(id, data, None, &opts, &mut NoObserver)?;
    let stats = strategy
        .last_fit_stats()
        .ok_or(DistributeError::NoReplicas)?;
    Ok(BenchRow {
        replicas,
        samples_per_second: stats.samples_per_second(),
        all_reduce_share: stats.all_reduce_share(),
        compute_share: stats.compute_share(),
        final_loss: history
            .get("loss")
            .and_then(|l| l.last().copied())
            .unwrap_or(f64::NAN),
    })
}

/// Mean time of one empty dispatch to `n` replicas.
pub fn dispatch_cost(n: usize, iters: usize) -> Result<Duration> {
    let pool = ReplicaPool::new(n, |_| Ok::<_, DistributeError>(()))?;
    let start = Instant::now();
    for _ in 0..iters {
        pool.run(|rank, _| rank);
    }
    Ok(start.elapsed() / iters.max(1) as u32)
}

/// Mean time of one bare ring all-reduce of `len` values over `n` replicas (no compute).
pub fn all_reduce_cost(n: usize, len: usize, iters: usize) -> Result<Duration> {
    let pool = ReplicaPool::new(n, move |_| Ok::<_, DistributeError>(vec![1.0f32; len]))?;
    let ring = RingAllReduce::new(n);
    let start = Instant::now();
    for _ in 0..iters {
        let results = pool.run(|rank, buf| {
            ring.all_reduce_host(rank, buf)
                .map_err(|source| DistributeError::Device { rank, source })
        });
        for r in results {
            r??;
        }
    }
    Ok(start.elapsed() / iters.max(1) as u32)
}

/// The whole benchmark: returns the report text (the CLI prints it).
pub fn run_train_bench(
    factory: DeviceFactory,
    build: Option<ModelBuilder>,
    samples: usize,
) -> Result<String> {
    let build = build.unwrap_or_else(|| HostMlp::builder(784, 128, 10));
    let (x, y) = synthetic_mnist(samples, 7);
    let one = train_epoch(1, &factory, &build, &x, &y, 128)?;
    let two = train_epoch(2, &factory, &build, &x, &y, 128)?;
    let dispatch = dispatch_cost(2, 2000)?;
    let reduce = all_reduce_cost(2, 101_770, 500)?;
    let step_two = Duration::from_secs_f64(128.0 / two.samples_per_second.max(1e-9));
    let mut out = String::new();
    for r in [&one, &two] {
        out.push_str(&format!(
            "train MLP 784-128-10 adam, {samples} samples, batch 128, {} CPU replica(s): {:.0} samples/s \
             (compute {:.1}%, all-reduce incl. wait {:.1}%, final loss {:.4})\n",
            r.replicas, r.samples_per_second, 100.0 * r.compute_share, 100.0 * r.all_reduce_share, r.final_loss
        ));
    }
    out.push_str(&format!(
        "speed-up 2 vs 1 replica: {:.2}x (goal >= 1.6x)\n",
        two.samples_per_second / one.samples_per_second.max(1e-9)
    ));
    out.push_str(&format!(
        "bare ring all-reduce of 101,770 floats over 2 replicas: {:.1} us = {:.1}% of a {:.2} ms step (goal < 5%)\n",
        reduce.as_secs_f64() * 1e6,
        100.0 * reduce.as_secs_f64() / step_two.as_secs_f64(),
        step_two.as_secs_f64() * 1e3
    ));
    out.push_str(&format!(
        "empty dispatch to 2 replicas: {:.1} us\n",
        dispatch.as_secs_f64() * 1e6
    ));
    Ok(out)
}
