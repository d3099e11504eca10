//! `mirror-kernel bench`: gathers the benchmarks each part of the crate provides and prints
//! them as ratios measured in one run, never as pass/fail timings. `train` runs the
//! MNIST-sized MLP for one epoch on one CPU replica and on two (or on the GPUs: the device
//! layer alone, then `keras::fit` on a `MirroredStrategy` of GPU replicas as a notebook
//! trains, on one GPU, on every GPU and on two logical GPUs of GPU 0), and ends
//! with the machine-readable line `samples_per_s=… gemm_peak_gflops=… fraction_of_peak=…`;
//! `interp` times the interpreter against `python3` on the same machine; `loop` trains the
//! same MLP with a hand-written `GradientTape` loop, eagerly and under `tf.function`, and
//! reports each as a fraction of `fit`'s samples/s.

mod custom_loop;
mod interp;

use std::sync::Arc;
use std::time::Instant;

use crate::device::cuda;
use crate::device::DeviceSpec;
use crate::distribute::strategy::cpu_factory;
use crate::distribute::{MirroredStrategy, MirroredTrainer};

/// The samples of one benchmark epoch, as the bench specifies (MNIST's training set size).
pub const EPOCH_SAMPLES: usize = 60_000;
const BATCH: usize = 128;

/// Which device the training bench runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchDevice {
    Cpu,
    Gpu,
}

/// Runs the training bench and returns its report; the last line is the summary line.
pub fn train(device: BenchDevice, samples: usize) -> Result<String, String> {
    match device {
        BenchDevice::Cpu => train_cpu(samples),
        BenchDevice::Gpu => train_gpu(samples),
    }
}

fn train_cpu(samples: usize) -> Result<String, String> {
    let mut out = crate::distribute::bench::run_train_bench(cpu_factory(), samples)
        .map_err(|e| e.to_string())?;
    // The single-replica figures, measured against this run's own GEMM peak.
    let one = crate::keras::bench::bench_train(samples, BATCH).map_err(|e| e.to_string())?;
    out.push_str(&format!(
        "samples_per_s={:.0} gemm_peak_gflops={:.1} fraction_of_peak={:.3} peak_rss_mib={:.0}\n",
        one.samples_per_sec, one.gemm_peak_gflops, one.fraction_of_peak, one.peak_rss_mib
    ));
    Ok(out)
}

fn train_gpu(samples: usize) -> Result<String, String> {
    let gpus = cuda::gpu_count();
    if gpus == 0 {
        return Err("no CUDA GPU found on this machine (the CPU bench is `bench train`)".into());
    }
    let mut out = String::new();
    let mut first = None;
    for replicas in [1, gpus] {
        let r = cuda::bench::mlp_train(replicas, BATCH * replicas, samples)
            .map_err(|e| e.to_string())?;
        out.push_str(&format!(
            "{} GPU replica(s), global batch {}: {:.0} samples/s, step {:.3} ms, all-reduce {}, last loss {:.4}\n",
            r.replicas, r.global_batch, r.samples_per_sec, r.step_ms, r.all_reduce, r.last_loss
        ));
        first.get_or_insert(r.samples_per_sec);
        if gpus == 1 {
            break;
        }
    }
    // The path a notebook takes: MirroredStrategy on GPU replicas, the Keras engine, `fit`.
    let mut layouts = vec![(1, vec![DeviceSpec::gpu(0, 0)])];
    if gpus > 1 {
        layouts.push((gpus, (0..gpus).map(|g| DeviceSpec::gpu(g, g)).collect()));
    }
    // Two logical GPUs on GPU 0: the reduce-kernel path of a split GPU.
    layouts.push((1, vec![DeviceSpec::gpu(0, 0), DeviceSpec::gpu(1, 0)]));
    for (physical, devices) in layouts {
        out.push_str(&keras_fit_line(physical, devices, samples)?);
    }
    if gpus > 1 {
        let bw =
            cuda::bench::all_reduce_bandwidth(gpus, 101_770 * 4, 200).map_err(|e| e.to_string())?;
        out.push_str(&format!(
            "all-reduce ({}) of {} bytes over {} GPUs: {:.3} ms, bus bandwidth {:.1} GB/s\n",
            bw.algorithm, bw.bytes, bw.replicas, bw.time_ms, bw.bus_gb_per_s
        ));
    }
    out.push_str(&format!(
        "samples_per_s={:.0} device=gpu gpus={gpus}\n",
        first.unwrap_or(0.0)
    ));
    Ok(out)
}

/// One epoch of the benchmark MLP through `keras::fit` on a `MirroredStrategy` over
/// `devices` (each replica gets a local batch of 128), as one report line.
fn keras_fit_line(
    physical: usize,
    devices: Vec<DeviceSpec>,
    samples: usize,
) -> Result<String, String> {
    use crate::keras::{fit, initial_weights, Data, FitOptions};
    let replicas = devices.len();
    let global = BATCH * replicas;
    let (config, compile) = crate::keras::bench::bench_model().map_err(|e| e.to_string())?;
    let weights = initial_weights(&config.plan().map_err(|e| e.to_string())?, 1);
    let strategy = Arc::new(MirroredStrategy::for_devices(devices).map_err(|e| e.to_string())?);
    let mut trainer = MirroredTrainer::new(strategy.clone(), &config, &weights, Some(&compile), 0)
        .map_err(|e| e.to_string())?;
    let (x, y) = crate::keras::bench::synthetic_data(samples, 7);
    let opts = FitOptions {
        epochs: 1,
        batch_size: global,
        ..FitOptions::default()
    };
    // A short untimed warm-up compiles and loads the kernels on every replica.
    let warm = (global * 4).min(y.len());
    let warm_data = Data {
        x: &x[..warm * 784],
        y: &y[..warm],
    };
    trainer.begin_fit(global);
    fit(&mut trainer, warm_data, None, &opts, &mut [], None).map_err(|e| e.to_string())?;
    trainer.begin_fit(global);
    let start = Instant::now();
    let history = fit(
        &mut trainer,
        Data { x: &x, y: &y },
        None,
        &opts,
        &mut [],
        None,
    )
    .map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64().max(1e-9);
    let loss = history
        .history
        .get("loss")
        .and_then(|l| l.last())
        .copied()
        .unwrap_or(f64::NAN);
    let stats = strategy.last_fit_stats().unwrap_or_default();
    Ok(format!(
        "keras fit on MirroredStrategy, {replicas} GPU replica(s) on {physical} GPU(s), global \
         batch {global}: {:.0} samples/s, all-reduce {} ({:.0}% of the step), last loss {loss:.4}\n",
        samples as f64 / seconds,
        strategy.all_reduce_name(),
        100.0 * stats.all_reduce_share()
    ))
}

/// The custom-training-loop rows: the MLP trained by a hand-written `GradientTape` loop,
/// eagerly and under `tf.function`, as fractions of `fit`'s samples/s.
pub fn custom_loop(samples: usize) -> Result<String, String> {
    custom_loop::bench_custom_loop(samples)
}

/// The interpreter-overhead bench (a loop of integer arithmetic, calls and appends).
pub fn interp() -> String {
    interp::bench_interpreter()
}
