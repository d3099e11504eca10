//! `mirror-kernel bench`: gathers the benchmarks each part of the crate provides and prints
//! them as ratios measured in one run, never as pass/fail timings. `train` runs the
//! MNIST-sized MLP for one epoch on one CPU replica and on two (or on the GPUs), and ends
//! with the machine-readable line `samples_per_s=… gemm_peak_gflops=… fraction_of_peak=…`;
//! `interp` times the interpreter against `python3` on the same machine.

use crate::device::cuda;
use crate::distribute::strategy::cpu_factory;

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

/// The interpreter-overhead bench (a loop of integer arithmetic, calls and appends).
pub fn interp() -> String {
    crate::lang::bench::bench_interpreter()
}
