//! GPU replicas through the strategy, as a notebook's `MirroredStrategy` makes them: each
//! replica's `CudaDevice` made on its own thread by the kind-dispatching factory, the
//! all-reduce chosen by how the replicas sit on the GPUs, and `keras::fit` on top. Checked:
//! two logical GPUs on one physical GPU (the own reduce kernel) train the same weights as one
//! GPU replica; one replica on every GPU (NCCL, or host staging without it) does too when
//! there are several GPUs; every replica's copy is bit-identical after every batch; and one
//! GPU replica trains as one CPU replica does (within 1e-4 relative). Each test skips with
//! one line when the GPUs it needs are missing.

use crate::common::strategy as strategy_support;

use mirror_kernel::device::cuda::gpu_count;
use mirror_kernel::device::DeviceSpec;
use mirror_kernel::distribute::strategy::logical_cpu_devices;
use strategy_support::{assert_same_training, train_on};

fn gpus_or_skip(need: usize) -> bool {
    let have = gpu_count();
    if have < need {
        println!("skipped: needs {need} CUDA GPU(s), found {have}");
        return false;
    }
    true
}

#[test]
fn two_logical_gpus_on_one_gpu_train_as_one_replica() {
    if !gpus_or_skip(1) {
        return;
    }
    for opt in ["adam", "sgd"] {
        let one = train_on(vec![DeviceSpec::gpu(0, 0)], opt);
        let two = train_on(vec![DeviceSpec::gpu(0, 0), DeviceSpec::gpu(1, 0)], opt);
        assert_eq!(two.all_reduce, "gpu-reduce");
        assert_same_training(&one, &two, 1e-4, &format!("{opt}: 2 logical GPUs vs 1"));
        let four = train_on((0..4).map(|i| DeviceSpec::gpu(i, 0)).collect(), opt);
        assert_same_training(&one, &four, 1e-4, &format!("{opt}: 4 logical GPUs vs 1"));
    }
}

#[test]
fn one_replica_per_gpu_trains_as_one_replica() {
    if !gpus_or_skip(2) {
        return;
    }
    let n = gpu_count();
    let one = train_on(vec![DeviceSpec::gpu(0, 0)], "adam");
    let all = train_on((0..n).map(|g| DeviceSpec::gpu(g, g)).collect(), "adam");
    assert!(
        all.all_reduce == "nccl" || all.all_reduce == "host-staged",
        "{}",
        all.all_reduce
    );
    assert_same_training(&one, &all, 1e-4, &format!("{n} GPUs vs 1"));
}

/// Plain SGD here: Adam divides by the root of tiny second moments, which turns rounding
/// differences between two kinds of hardware into visible ones where a gradient is near 0.
#[test]
fn a_gpu_replica_trains_as_a_cpu_replica() {
    if !gpus_or_skip(1) {
        return;
    }
    let cpu = train_on(logical_cpu_devices(1), "sgd");
    let gpu = train_on(vec![DeviceSpec::gpu(0, 0)], "sgd");
    assert_eq!(gpu.all_reduce, "none");
    assert_same_training(&cpu, &gpu, 1e-4, "1 GPU replica vs 1 CPU replica");
}
