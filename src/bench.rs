//! `mirror-kernel bench`: gathers the benchmarks each part of the crate provides and prints
//! them as ratios measured in one run, never as pass/fail timings. `train` runs the
//! MNIST-sized MLP for one epoch on one CPU replica and on two (or on the GPUs: the device
//! layer alone, then `keras::fit` on a `MirroredStrategy` of GPU replicas as a notebook
//! trains, on one GPU, on every GPU and on two logical GPUs of GPU 0, and the CNN below on
//! one GPU and on every GPU), the classroom's CNN
//! on one CPU device with every core (samples/s and the fraction of the GEMM peak its
//! convolutions reach), and the "notebook path": the same MLP trained from NumPy arrays
//! through the Python binding, as a fraction of the engine trained directly. It ends with
//! the machine-readable line `samples_per_s=… gemm_peak_gflops=… fraction_of_peak=…`;
//! `interp` times the interpreter against `python3` on the same machine.

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
    let cnn_samples = (samples / 5).max(BATCH);
    let cnn = crate::keras::bench::bench_cnn(cnn_samples, 3).map_err(|e| e.to_string())?;
    out.push_str(&format!(
        "train CNN Conv32-Pool-Conv64-Pool-Dense10 on 28x28x1, adam, batch {BATCH}, {} samples, one \
         CPU device ({} threads): {:.0} samples/s (fastest of 3 epochs); convolutions at {:.1} \
         GFLOP/s = {:.2} of the {:.1} GFLOP/s GEMM peak; peak RSS {:.0} MiB; final loss {:.4}\n",
        cnn.samples,
        cnn.threads,
        cnn.samples_per_sec,
        cnn.conv_gflops,
        cnn.fraction_of_peak,
        cnn.gemm_peak_gflops,
        cnn.peak_rss_mib,
        cnn.final_loss
    ));
    let (notebook, engine) = notebook_path(samples)?;
    out.push_str(&format!(
        "notebook path: the MLP fit from NumPy arrays through the Python binding: {notebook:.0} \
         samples/s = {:.2} of the engine's {engine:.0} samples/s on the same device (fastest of \
         3 epochs each; goal >= 0.9)\n",
        notebook / engine.max(1e-9)
    ));
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
        out.push_str(&keras_fit_line(Model::Mlp, physical, devices, samples)?);
    }
    // The classroom's CNN on one GPU and, where there are several, on every GPU.
    out.push_str(&keras_fit_line(
        Model::Cnn,
        1,
        vec![DeviceSpec::gpu(0, 0)],
        samples,
    )?);
    if gpus > 1 {
        let all = (0..gpus).map(|g| DeviceSpec::gpu(g, g)).collect();
        out.push_str(&keras_fit_line(Model::Cnn, gpus, all, samples)?);
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

/// The models of the GPU bench.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Model {
    /// Dense 784-128-10.
    Mlp,
    /// Conv32-Pool-Conv64-Pool-Dense10 on 28x28x1.
    Cnn,
}

/// One epoch of a benchmark model through `keras::fit` on a `MirroredStrategy` over
/// `devices` (each replica gets a local batch of 128), as one report line.
fn keras_fit_line(
    model: Model,
    physical: usize,
    devices: Vec<DeviceSpec>,
    samples: usize,
) -> Result<String, String> {
    use crate::keras::{fit, initial_weights, Data, FitOptions};
    let replicas = devices.len();
    let global = BATCH * replicas;
    let (config, compile) = match model {
        Model::Mlp => crate::keras::bench::bench_model(),
        Model::Cnn => crate::keras::bench::cnn_model(),
    }
    .map_err(|e| e.to_string())?;
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
    let name = match model {
        Model::Mlp => "MLP",
        Model::Cnn => "CNN",
    };
    Ok(format!(
        "keras fit {name} on MirroredStrategy, {replicas} GPU replica(s) on {physical} GPU(s), \
         global batch {global}: {:.0} samples/s, all-reduce {} ({:.0}% of the step), last loss \
         {loss:.4}\n",
        samples as f64 / seconds,
        strategy.all_reduce_name(),
        100.0 * stats.all_reduce_share()
    ))
}

/// The MLP trained as a notebook trains it (a cell builds it and calls `model.fit` on NumPy
/// arrays, timed inside the cell) and as the engine trains it (`keras::fit` on a replica),
/// each the fastest of 3 one-epoch runs: `(notebook, engine)` samples/s.
fn notebook_path(samples: usize) -> Result<(f64, f64), String> {
    use crate::cell::{CollectSink, ExecuteRequest, Output};
    use crate::keras::{fit, initial_weights, Data, FitOptions, Replica};
    use crate::session::Session;
    let (config, compile) = crate::keras::bench::bench_model().map_err(|e| e.to_string())?;
    let weights = initial_weights(&config.plan().map_err(|e| e.to_string())?, 1);
    let device = crate::device::cpu::CpuDevice::new(0);
    let mut replica =
        Replica::new(&config, &weights, Box::new(device)).map_err(|e| e.to_string())?;
    replica.compile(&compile).map_err(|e| e.to_string())?;
    let (x, y) = crate::keras::bench::synthetic_data(samples, 7);
    let opts = FitOptions {
        epochs: 1,
        batch_size: BATCH,
        ..FitOptions::default()
    };
    let mut engine = 0.0f64;
    for _ in 0..3 {
        let start = Instant::now();
        fit(
            &mut replica,
            Data { x: &x, y: &y },
            None,
            &opts,
            &mut [],
            None,
        )
        .map_err(|e| e.to_string())?;
        engine = engine.max(samples as f64 / start.elapsed().as_secs_f64().max(1e-9));
    }
    drop((x, y, replica));
    let code = format!(
        "import time\n\
         import numpy as np\n\
         import tensorflow as tf\n\
         np.random.seed(7)\n\
         x = np.random.rand({samples}, 784).astype('float32')\n\
         y = np.random.randint(0, 10, size=({samples},))\n\
         model = tf.keras.Sequential([tf.keras.layers.Input(shape=(784,)),\n\
             tf.keras.layers.Dense(128, activation='relu'),\n\
             tf.keras.layers.Dense(10, activation='softmax')])\n\
         model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])\n\
         best = 0.0\n\
         for _ in range(3):\n\
         \x20   start = time.perf_counter()\n\
         \x20   model.fit(x, y, batch_size={BATCH}, epochs=1, verbose=0)\n\
         \x20   best = max(best, {samples} / (time.perf_counter() - start))\n\
         print(best)\n"
    );
    let session = Session::start().map_err(|e| e.to_string())?;
    let sink = Arc::new(CollectSink::default());
    let request = ExecuteRequest {
        code,
        silent: false,
        store_history: true,
        allow_stdin: false,
        user_expressions: vec![],
    };
    let reply = session.execute_blocking(request, Box::new(sink.clone()));
    if let Err(e) = reply.result {
        return Err(format!(
            "the notebook bench cell failed: {}: {}",
            e.ename, e.evalue
        ));
    }
    let printed: String = sink
        .take()
        .into_iter()
        .filter_map(|o| match o {
            Output::Stream { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    let notebook = printed
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("the notebook bench cell printed {printed:?}"))?;
    Ok((notebook, engine))
}

/// The interpreter-overhead bench (a loop of integer arithmetic, calls and appends).
pub fn interp() -> String {
    interp::bench_interpreter()
}
