//! `mirror-kernel bench train`: one epoch of the classic MNIST-sized MLP (Dense 784→128
//! relu, Dense 10 softmax, Adam, sparse categorical cross-entropy, batch 128) on 60,000
//! synthetic samples on one CPU device, and epochs of the classroom's first CNN
//! (Conv32-Pool-Conv64-Pool-Dense10 on 28x28x1 images), through the same `fit` users call.
//! In the same run it measures this machine's GEMM peak with the device's threads, so the
//! report can say what fraction of the peak the training step reaches (for the CNN, counting
//! the convolutions' FLOPs). The distribute part adds the multi-replica figures by passing
//! its own [`Trainer`].

use super::compile::CompileConfig;
use super::config::{LayerKind, ModelConfig};
use super::error::KResult;
use super::fit::{fit, Data, FitOptions};
use super::init::initial_weights;
use super::replica::Replica;
use super::trainer::Trainer;
use crate::device::cpu::CpuDevice;
use crate::device::Device;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Instant;

#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    pub samples: usize,
    pub seconds: f64,
    pub samples_per_sec: f64,
    /// FLOPs the step must do (the matrix products of forward and backward) per second.
    pub useful_gflops: f64,
    /// Best GEMM throughput (with the device's threads) measured on a training-shaped product.
    pub gemm_peak_gflops: f64,
    pub fraction_of_peak: f64,
    /// Peak resident memory of the process, in MiB (0 where the OS does not tell).
    pub peak_rss_mib: f64,
    pub final_loss: f64,
}

/// The benchmark model, compiled as the bench specifies.
pub fn bench_model() -> KResult<(ModelConfig, CompileConfig)> {
    let cfg = ModelConfig::sequential(
        &[784],
        vec![
            LayerKind::dense(128, "relu")?,
            LayerKind::dense(10, "softmax")?,
        ],
    )?;
    let compile =
        CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &["accuracy"])?;
    Ok((cfg, compile))
}

/// Synthetic MNIST-shaped data: pixels in [0, 1), labels 0..9 tied weakly to the pixels so
/// the loss has something to learn.
pub fn synthetic_data(samples: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut x = Vec::with_capacity(samples * 784);
    let mut y = Vec::with_capacity(samples);
    for _ in 0..samples {
        let label = rng.gen_range(0..10usize);
        for p in 0..784 {
            let bump = if p % 10 == label { 0.5 } else { 0.0 };
            x.push(rng.gen::<f32>() * 0.5 + bump);
        }
        y.push(label as f32);
    }
    (x, y)
}

/// Matrix-product FLOPs of one training example of the bench model: forward (two
/// products), weight gradients (two), and the input gradient of the second layer only
/// (nothing needs the gradient of the data).
pub fn flops_per_sample() -> f64 {
    let (a, b) = (784.0 * 128.0, 128.0 * 10.0);
    2.0 * (a + b) + 2.0 * (a + b) + 2.0 * b
}

/// Best GFLOP/s of a `(batch x 784) @ (784 x 128)` product on a CPU device with every core,
/// the shape that dominates the MLP's step.
pub fn gemm_peak_gflops(batch: usize) -> KResult<f64> {
    gemm_peak(batch, 784, 128)
}

/// Best GFLOP/s of an `(m x k) @ (k x n)` product on a CPU device with every core.
pub fn gemm_peak(m: usize, k: usize, n: usize) -> KResult<f64> {
    let dev = CpuDevice::new(0);
    let a = dev.upload(&vec![0.5; m * k], &[m, k])?;
    let b = dev.upload(&vec![0.25; k * n], &[k, n])?;
    let mut c = dev.zeros(&[m, n])?;
    let flops = 2.0 * (m * k * n) as f64;
    let mut best = 0.0f64;
    // About a second of products in all, whatever the shape.
    let reps = ((2.6e8 / flops) as usize).clamp(2, 50);
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reps {
            dev.gemm(&a, false, &b, false, &mut c, 1.0, 0.0)?;
        }
        let s = t.elapsed().as_secs_f64();
        best = best.max(flops * reps as f64 / s.max(1e-9) / 1e9);
    }
    Ok(best)
}

/// Peak resident set size from `/proc/self/status` (`VmHWM`), in MiB.
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Runs one epoch on `trainer` over the given data and reports throughput.
pub fn run_epoch(
    trainer: &mut dyn Trainer,
    x: &[f32],
    y: &[f32],
    batch: usize,
) -> KResult<BenchReport> {
    let samples = y.len();
    let opts = FitOptions {
        epochs: 1,
        batch_size: batch,
        ..FitOptions::default()
    };
    let t = Instant::now();
    let h = fit(trainer, Data { x, y }, None, &opts, &mut [], None)?;
    let seconds = t.elapsed().as_secs_f64();
    let peak = gemm_peak_gflops(batch)?;
    let sps = samples as f64 / seconds.max(1e-9);
    let useful = sps * flops_per_sample() / 1e9;
    Ok(BenchReport {
        samples,
        seconds,
        samples_per_sec: sps,
        useful_gflops: useful,
        gemm_peak_gflops: peak,
        fraction_of_peak: useful / peak.max(1e-9),
        peak_rss_mib: peak_rss_mib(),
        final_loss: h
            .history
            .get("loss")
            .and_then(|l| l.last())
            .copied()
            .unwrap_or(f64::NAN),
    })
}

/// The CNN of the bench, compiled as the MLP is: Conv2D(32, 3x3, relu), MaxPooling2D(2),
/// Conv2D(64, 3x3, relu), MaxPooling2D(2), Flatten, Dense(10, softmax) on 28x28x1.
pub fn cnn_model() -> KResult<(ModelConfig, CompileConfig)> {
    let cfg = ModelConfig::sequential(
        &[28, 28, 1],
        vec![
            LayerKind::conv2d(32, (3, 3), "relu")?,
            LayerKind::max_pool((2, 2)),
            LayerKind::conv2d(64, (3, 3), "relu")?,
            LayerKind::max_pool((2, 2)),
            LayerKind::Flatten,
            LayerKind::dense(10, "softmax")?,
        ],
    )?;
    let compile =
        CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &["accuracy"])?;
    Ok((cfg, compile))
}

/// Convolution FLOPs of one training example of the CNN: each convolution's forward
/// product and kernel gradient, and the input gradient of the second (nothing needs the
/// gradient of the images).
pub fn cnn_conv_flops_per_sample() -> f64 {
    let conv1 = 2.0 * (26.0 * 26.0) * (3.0 * 3.0 * 1.0) * 32.0;
    let conv2 = 2.0 * (11.0 * 11.0) * (3.0 * 3.0 * 32.0) * 64.0;
    2.0 * conv1 + 3.0 * conv2
}

/// What the CNN bench measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CnnReport {
    pub samples: usize,
    /// The fastest of the timed epochs.
    pub samples_per_sec: f64,
    /// Convolution FLOPs per second at that speed.
    pub conv_gflops: f64,
    /// The GEMM peak of the second convolution's forward product, with every core.
    pub gemm_peak_gflops: f64,
    pub fraction_of_peak: f64,
    pub peak_rss_mib: f64,
    pub final_loss: f64,
    pub threads: usize,
}

/// The CNN on one CPU device with every core: `epochs` epochs of `samples` synthetic
/// 28x28x1 images at batch 128, keeping the fastest.
pub fn bench_cnn(samples: usize, epochs: usize) -> KResult<CnnReport> {
    let (cfg, compile) = cnn_model()?;
    let w = initial_weights(&cfg.plan()?, 1);
    let dev = CpuDevice::new(0);
    let threads = dev.threads();
    let mut r = Replica::new(&cfg, &w, Box::new(dev))?;
    r.compile(&compile)?;
    let (x, y) = synthetic_data(samples, 7);
    let mut best = f64::INFINITY;
    let mut final_loss = f64::NAN;
    for _ in 0..epochs.max(1) {
        let opts = FitOptions {
            epochs: 1,
            batch_size: 128,
            ..FitOptions::default()
        };
        let t = Instant::now();
        let h = fit(&mut r, Data { x: &x, y: &y }, None, &opts, &mut [], None)?;
        best = best.min(t.elapsed().as_secs_f64());
        final_loss = h
            .history
            .get("loss")
            .and_then(|l| l.last())
            .copied()
            .unwrap_or(f64::NAN);
    }
    let sps = samples as f64 / best.max(1e-9);
    let conv_gflops = sps * cnn_conv_flops_per_sample() / 1e9;
    // The product that dominates: 128 images' 11x11 patches of 3x3x32 against 64 filters.
    let peak = gemm_peak(128 * 121, 288, 64)?;
    Ok(CnnReport {
        samples,
        samples_per_sec: sps,
        conv_gflops,
        gemm_peak_gflops: peak,
        fraction_of_peak: conv_gflops / peak.max(1e-9),
        peak_rss_mib: peak_rss_mib(),
        final_loss,
        threads,
    })
}

/// The single-replica bench: `samples` synthetic examples (60,000 in the CLI), batch 128.
pub fn bench_train(samples: usize, batch: usize) -> KResult<BenchReport> {
    let (cfg, compile) = bench_model()?;
    let w = initial_weights(&cfg.plan()?, 1);
    let mut r = Replica::new(&cfg, &w, Box::new(CpuDevice::new(0)))?;
    r.compile(&compile)?;
    let (x, y) = synthetic_data(samples, 7);
    run_epoch(&mut r, &x, &y, batch)
}
