//! Shared by the CUDA-vs-CPU operation tests: a CPU device and GPU 0 side by side, the same
//! data uploaded to both, and the comparison (1e-4 relative plus 1e-6 absolute).

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::device::cuda::{gpu_count, CudaDevice};
use mirror_kernel::device::{DTensor, Device};

pub struct Pair {
    pub cpu: CpuDevice,
    pub gpu: CudaDevice,
}

pub fn pair() -> Option<Pair> {
    if gpu_count() == 0 {
        eprintln!("skipped: no CUDA GPU");
        return None;
    }
    let gpu = CudaDevice::new(0).expect("GPU 0 opens");
    Some(Pair {
        cpu: CpuDevice::new(0),
        gpu,
    })
}

/// A small deterministic generator (uniform in [lo, hi)).
pub struct Rng(pub u64);
impl Rng {
    pub fn f(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 40) as f32 / 16_777_216.0)
    }
    pub fn vec(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f(lo, hi)).collect()
    }
}

pub fn close(what: &str, gpu: &[f32], cpu: &[f32]) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: lengths");
    for (i, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        let tol = 1e-6 + 1e-4 * g.abs().max(c.abs());
        let same_nan = g.is_nan() && c.is_nan();
        assert!(
            same_nan || (g - c).abs() <= tol,
            "{what}[{i}]: GPU {g} vs CPU {c}"
        );
    }
}

impl Pair {
    /// The same host data on both devices.
    pub fn up(&self, v: &[f32], shape: &[usize]) -> (DTensor, DTensor) {
        (
            self.cpu.upload(v, shape).expect("cpu upload"),
            self.gpu.upload(v, shape).expect("gpu upload"),
        )
    }
    pub fn zeros(&self, shape: &[usize]) -> (DTensor, DTensor) {
        (
            self.cpu.zeros(shape).expect("cpu zeros"),
            self.gpu.zeros(shape).expect("gpu zeros"),
        )
    }
    pub fn check(&self, what: &str, t: &(DTensor, DTensor)) {
        let c = self.cpu.download(&t.0).expect("cpu download");
        let g = self.gpu.download(&t.1).expect("gpu download");
        close(what, &g, &c);
    }
}
