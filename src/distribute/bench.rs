//! The training benchmark behind `mirror-kernel bench train`: the MNIST-sized MLP (Dense
//! 784→128 relu, Dense 10 softmax, sparse categorical cross-entropy, Adam; 101,770
//! parameters) trained for one epoch over 60,000 synthetic samples at batch 128, first on one
//! CPU replica and then on two, in the same process. It prints samples/s for each, the
//! speed-up, and the share of step time spent in the all-reduce, plus two micro-measurements:
//! the cost of one empty dispatch to every replica and of one bare ring all-reduce of the
//! gradient.
//! The model is the Keras engine's own, on the devices a caller's factory makes
//! ([`cpu_factory`](super::strategy::cpu_factory) for `bench train`).
//! Timings are printed, never asserted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::model::{BoxError, Dataset, NoObserver, ReplicaModel};
use super::pool::ReplicaPool;
use super::ring::RingAllReduce;
use super::strategy::{logical_cpu_devices, DeviceFactory, DeviceSpec, MirroredStrategy};
use super::train::FitOptions;
use super::{DistributeError, Result};
use crate::device::Device;
use crate::keras::{initial_weights, CompileConfig, KResult, LayerKind, ModelConfig, Replica};

/// Builds one replica's model (`rank`, device) for the benchmark.
pub type ModelBuilder = Arc<
    dyn Fn(usize, &dyn Device) -> std::result::Result<Box<dyn ReplicaModel>, BoxError>
        + Send
        + Sync,
>;

/// The engine's MNIST MLP: Dense(784→128, relu) → Dense(10, softmax), compiled with Adam and
/// sparse categorical cross-entropy (plus accuracy), from seeded Keras initial weights; the
/// same weights on every replica.
pub fn mnist_mlp_builder(
    factory: DeviceFactory,
    devices: Vec<DeviceSpec>,
) -> KResult<ModelBuilder> {
    let config = ModelConfig::sequential(
        &[784],
        vec![
            LayerKind::dense(128, "relu")?,
            LayerKind::dense(10, "softmax")?,
        ],
    )?;
    let weights = initial_weights(&config.plan()?, 42);
    let compile =
        CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &["accuracy"])?;
    Ok(Arc::new(move |rank, _| {
        let spec = devices.get(rank).ok_or("no device for this replica")?;
        let mut replica = Replica::new(&config, &weights, factory(spec)?)?;
        replica.compile(&compile)?;
        Ok(Box::new(replica) as Box<dyn ReplicaModel>)
    }))
}

/// One line of the benchmark: a replica count and what one epoch measured.
#[derive(Debug, Clone)]
pub struct BenchRow {
    pub replicas: usize,
    pub samples_per_second: f64,
    pub all_reduce_share: f64,
    pub compute_share: f64,
    pub update_share: f64,
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
    x: &[f32],
    y: &[f32],
    batch: usize,
) -> Result<BenchRow> {
    let devices = logical_cpu_devices(replicas);
    let strategy = MirroredStrategy::new(devices.clone(), factory.clone())?;
    let b = mnist_mlp_builder(factory.clone(), devices).map_err(|e| DistributeError::Model {
        rank: 0,
        source: Box::new(e),
    })?;
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
        update_share: stats.update_share(),
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
pub fn run_train_bench(factory: DeviceFactory, samples: usize) -> Result<String> {
    let (x, y) = synthetic_mnist(samples, 7);
    let one = train_epoch(1, &factory, &x, &y, 128)?;
    let two = train_epoch(2, &factory, &x, &y, 128)?;
    let dispatch = dispatch_cost(2, 2000)?;
    let reduce = all_reduce_cost(2, 101_770, 500)?;
    let step_two = Duration::from_secs_f64(128.0 / two.samples_per_second.max(1e-9));
    let mut out = String::new();
    for r in [&one, &two] {
        out.push_str(&format!(
            "train MLP 784-128-10 adam, {samples} samples, batch 128, {} CPU replica(s): {:.0} samples/s \
             (compute {:.1}%, all-reduce incl. wait {:.1}%, update {:.1}%, final loss {:.4})\n",
            r.replicas, r.samples_per_second, 100.0 * r.compute_share, 100.0 * r.all_reduce_share, 100.0 * r.update_share, r.final_loss
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
