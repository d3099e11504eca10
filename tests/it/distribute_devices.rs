//! The strategy's device wiring, on any machine: `MirroredStrategy::for_devices` makes each
//! replica's device with the factory that dispatches on the device kind and picks the
//! all-reduce by kind. On CPU devices it must train exactly as the CPU ring did (N replicas
//! against one, mirror invariant after every batch); a GPU that does not exist and a list
//! mixing CPUs and GPUs must be clean errors, never a panic or a line on stderr.

use crate::common::strategy as strategy_support;

use mirror_kernel::device::cuda::gpu_count;
use mirror_kernel::device::DeviceSpec;
use mirror_kernel::distribute::strategy::{
    all_reduce_for, check_one_kind, device_factory, logical_cpu_devices,
};
use mirror_kernel::distribute::{DistributeError, MirroredStrategy};
use strategy_support::{assert_same_training, train_on};

#[test]
fn the_factory_makes_cpu_devices_for_cpu_specs() {
    let make = device_factory();
    let dev = make(&DeviceSpec::cpu(2)).unwrap();
    assert_eq!(dev.name(), "CPU:2");
    let t = dev.upload(&[1.0, 2.0, 3.0], &[3]).unwrap();
    assert_eq!(dev.download(&t).unwrap(), vec![1.0, 2.0, 3.0]);
}

#[test]
fn the_factory_refuses_a_gpu_that_does_not_exist() {
    // One past the last GPU: missing on every machine, with or without CUDA.
    let missing = gpu_count();
    let make = device_factory();
    let err = make(&DeviceSpec::gpu(missing, missing)).err().unwrap();
    let text = err.to_string();
    assert!(
        text.contains(&format!("/physical_device:GPU:{missing}")),
        "{text}"
    );
    assert!(text.contains("CUDA GPU"), "{text}");
}

#[test]
fn cpu_replicas_train_as_one_through_the_dispatching_factory() {
    let one = train_on(logical_cpu_devices(1), "adam");
    for n in [2, 3] {
        let many = train_on(logical_cpu_devices(n), "adam");
        assert_eq!(many.all_reduce, "ring");
        assert_same_training(&one, &many, 1e-4, &format!("{n} CPU replicas vs 1"));
    }
    let sgd_one = train_on(logical_cpu_devices(1), "sgd");
    let sgd_two = train_on(logical_cpu_devices(2), "sgd");
    assert_same_training(&sgd_one, &sgd_two, 1e-4, "sgd, 2 CPU replicas vs 1");
}

#[test]
fn cpu_devices_get_the_ring_without_a_note() {
    let s = MirroredStrategy::for_devices(logical_cpu_devices(2)).unwrap();
    assert_eq!(s.all_reduce_name(), "ring");
    assert_eq!(s.all_reduce_note(), None);
    assert_eq!(s.num_replicas_in_sync(), 2);
    let names: Vec<String> = s
        .run(|r| r.device.name())
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(names, vec!["CPU:0", "CPU:1"]);
}

#[test]
fn mixing_cpu_and_gpu_devices_is_refused_before_any_device_opens() {
    let mixed = vec![DeviceSpec::cpu(0), DeviceSpec::gpu(0, 0)];
    let err = check_one_kind(&mixed).err().unwrap();
    assert!(matches!(err, DistributeError::InvalidInput(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("cannot mix CPU and GPU devices"), "{text}");
    assert!(text.contains("CPU:0 and GPU:0"), "{text}");
    let err = MirroredStrategy::for_devices(mixed).err().unwrap();
    assert!(err.to_string().contains("cannot mix"), "{err}");
    assert!(matches!(
        all_reduce_for(&[]).err(),
        Some(DistributeError::NoReplicas)
    ));
}

#[test]
fn a_strategy_on_a_missing_gpu_is_an_error_not_a_panic() {
    let missing = gpu_count();
    let specs = vec![
        DeviceSpec::gpu(missing, missing),
        DeviceSpec::gpu(missing + 1, missing + 1),
    ];
    let err = MirroredStrategy::for_devices(specs).err().unwrap();
    let text = err.to_string();
    assert!(matches!(err, DistributeError::Device { .. }), "{text}");
    assert!(text.contains("is not available on this machine"), "{text}");
}
