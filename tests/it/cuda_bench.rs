//! The GPU benchmark as a test binary, so `scripts/gpu-check.sh` can run it before the CLI's
//! `bench` command is wired: it prints one `key=value` line per measurement. It runs only
//! when `MIRROR_GPU_BENCH=1` (a benchmark is not a test) and on a machine with a CUDA GPU;
//! otherwise it says why in one line and returns. Speed is reported, never asserted.

use mirror_kernel::device::cuda::bench::{all_reduce_bandwidth, mlp_train};
use mirror_kernel::device::cuda::gpu_count;

#[test]
fn gpu_bench() {
    if std::env::var("MIRROR_GPU_BENCH").as_deref() != Ok("1") {
        eprintln!("skipped: set MIRROR_GPU_BENCH=1 to run the GPU benchmark");
        return;
    }
    let gpus = gpu_count();
    if gpus == 0 {
        eprintln!("skipped: no CUDA GPU");
        return;
    }
    for replicas in [1, gpus] {
        let r = mlp_train(replicas, 128, 60_000).expect("the benchmark trains");
        println!(
            "bench replicas={} samples_per_sec={:.0} step_ms={:.3} last_loss={:.4} all_reduce={}",
            r.replicas, r.samples_per_sec, r.step_ms, r.last_loss, r.all_reduce
        );
        assert!(r.last_loss.is_finite(), "the loss stayed finite");
        if gpus == 1 {
            break;
        }
    }
    if gpus >= 2 {
        let a = all_reduce_bandwidth(gpus, 64 << 20, 20).expect("the all-reduce runs");
        println!(
            "allreduce algorithm={} replicas={} bytes={} time_ms={:.3} bus_gb_per_s={:.1}",
            a.algorithm, a.replicas, a.bytes, a.time_ms, a.bus_gb_per_s
        );
    } else {
        println!("allreduce skipped: one GPU");
    }
}
