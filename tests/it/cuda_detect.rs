//! GPU detection runs on every machine: it must never panic and never print, and without the
//! CUDA libraries it must report zero GPUs. Asking for a GPU that does not exist must be a
//! clear error naming the device as TensorFlow does. These tests need no GPU.

use std::process::Command;

use mirror_kernel::device::cuda::{
    gpu_count, gpu_names, gpus, libraries_present, nccl_library, physical_device_name, CudaDevice,
};
use mirror_kernel::device::DeviceError;

const CHILD: &str = "MIRROR_CUDA_DETECT_CHILD";
const MARK: &str = "detected-gpus=";

/// Run in a child process by `detection_is_silent`: detects, then prints one marker line.
#[test]
fn detect_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let n = gpu_count();
    let names = gpu_names();
    let _ = nccl_library();
    println!("{MARK}{n} names={}", names.len());
}

#[test]
fn detection_is_silent() {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let out = Command::new(exe)
        .args([
            "--exact",
            "cuda_detect::detect_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {stdout}\n{stderr}");
    assert!(
        stderr.trim().is_empty(),
        "detection wrote to stderr: {stderr}"
    );
    // Everything on stdout is the test harness's own lines or the marker (which may share a
    // line with the harness's "test detect_child ... " prefix).
    let marker = stdout
        .lines()
        .find_map(|l| l.find(MARK).map(|at| &l[at..]))
        .expect("the child printed its marker");
    for line in stdout.lines() {
        let line = line.split(MARK).next().unwrap_or("");
        let harness = line.trim().is_empty()
            || line.trim() == "ok"
            || line.starts_with("running ")
            || line.starts_with("test ")
            || line.starts_with("successes:")
            || line.starts_with("    ");
        assert!(harness, "unexpected output: {line:?}");
    }
    let mut parts = marker.trim_start_matches(MARK).split(" names=");
    let n: usize = parts.next().and_then(|s| s.parse().ok()).expect("a count");
    let names: usize = parts
        .next()
        .and_then(|s| s.parse().ok())
        .expect("a name count");
    assert_eq!(n, names, "every GPU has a name");
    if !libraries_present() {
        assert_eq!(n, 0, "no CUDA libraries means no GPU");
    }
}

#[test]
fn detection_is_consistent() {
    assert_eq!(gpu_count(), gpus().len());
    assert_eq!(gpu_count(), gpu_names().len());
    for (i, g) in gpus().iter().enumerate() {
        assert_eq!(g.index, i);
        assert_eq!(g.tf_name(), format!("/physical_device:GPU:{i}"));
        assert_eq!(
            g.tf_repr(),
            format!("PhysicalDevice(name='/physical_device:GPU:{i}', device_type='GPU')")
        );
    }
    if !libraries_present() {
        assert_eq!(gpu_count(), 0);
    }
}

#[test]
fn missing_gpu_is_a_clear_error() {
    let missing = gpu_count();
    match CudaDevice::new(missing) {
        Err(DeviceError::Unavailable(msg)) => {
            assert!(msg.contains(&physical_device_name(missing)), "{msg}");
            let shown = DeviceError::Unavailable(msg).to_string();
            assert!(
                shown.contains("is not available on this machine"),
                "{shown}"
            );
        }
        Err(e) => panic!("expected Unavailable, got {e}"),
        Ok(_) => panic!("GPU {missing} should not exist"),
    }
}
