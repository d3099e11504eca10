//! Data parallelism on GPUs: N replicas, each on its share of the global batch with a
//! gradient all-reduce every step, must train the same weights as one replica on the whole
//! batch (within 1e-4), and the replicas' copies must stay bit-identical (the mirror
//! invariant). Covered: logical GPUs on one GPU (own reduce kernel), host staging, and NCCL
//! across GPUs. Every test skips with a one-line reason when its hardware is missing.

use mirror_kernel::device::cuda::{
    gpu_count, nccl_library, CudaDevice, HostStagedReduce, LocalGpuReduce, NcclAllReduce,
};
use mirror_kernel::device::AllReduce;
use mirror_kernel::device::{Activation, DTensor, Device, LossKind, OptStep};

const IN: usize = 6;
const HID: usize = 16;
const OUT: usize = 3;
const GLOBAL: usize = 24;
const STEPS: usize = 6;

struct Rng(u64);
impl Rng {
    fn f(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / 16_777_216.0
    }
}

struct Data {
    init: Vec<Vec<f32>>,
    x: Vec<f32>,
    y: Vec<f32>,
}

fn data() -> Data {
    let mut r = Rng(11);
    let mut v = |n: usize, s: f32| (0..n).map(|_| (r.f() * 2.0 - 1.0) * s).collect::<Vec<_>>();
    let init = vec![
        v(IN * HID, 0.5),
        v(HID, 0.1),
        v(HID * OUT, 0.5),
        v(OUT, 0.1),
    ];
    let x = v(STEPS * GLOBAL * IN, 1.0);
    let y = (0..STEPS * GLOBAL).map(|i| (i % OUT) as f32).collect();
    Data { init, x, y }
}

const SHAPES: [&[usize]; 4] = [&[IN, HID], &[HID], &[HID, OUT], &[OUT]];

struct Replica {
    dev: CudaDevice,
    params: Vec<DTensor>,
    slots: Vec<Vec<DTensor>>,
}

impl Replica {
    fn new(dev: CudaDevice, d: &Data) -> Replica {
        let params = SHAPES
            .iter()
            .zip(&d.init)
            .map(|(s, v)| dev.upload(v, s).unwrap())
            .collect();
        let slots = SHAPES.iter().map(|s| vec![dev.zeros(s).unwrap()]).collect();
        Replica { dev, params, slots }
    }

    /// One training step on rows `x` (local batch) of the global batch.
    fn step(&mut self, x: &[f32], y: &[f32], ar: Option<(&dyn AllReduce, usize)>) {
        let d = &self.dev;
        let b = y.len();
        let xt = d.upload(x, &[b, IN]).unwrap();
        let yt = d.upload(y, &[b]).unwrap();
        let mut h = d.zeros(&[b, HID]).unwrap();
        let mut a = d.zeros(&[b, HID]).unwrap();
        let mut z = d.zeros(&[b, OUT]).unwrap();
        d.gemm(&xt, false, &self.params[0], false, &mut h, 1.0, 0.0)
            .unwrap();
        d.add_bias(&mut h, &self.params[1]).unwrap();
        d.activate(Activation::Tanh, &h, &mut a).unwrap();
        d.gemm(&a, false, &self.params[2], false, &mut z, 1.0, 0.0)
            .unwrap();
        d.add_bias(&mut z, &self.params[3]).unwrap();
        let mut pe = d.zeros(&[b]).unwrap();
        let mut dz = d.zeros(&[b, OUT]).unwrap();
        let kind = LossKind::SparseCategoricalCrossentropy { from_logits: true };
        d.loss(kind, &z, &yt, &mut pe, &mut dz, 1.0 / GLOBAL as f32)
            .unwrap();
        let mut grads: Vec<DTensor> = SHAPES.iter().map(|s| d.zeros(s).unwrap()).collect();
        d.gemm(&a, true, &dz, false, &mut grads[2], 1.0, 0.0)
            .unwrap();
        d.sum_rows(&dz, &mut grads[3], 0.0).unwrap();
        let mut da = d.zeros(&[b, HID]).unwrap();
        d.gemm(&dz, false, &self.params[2], true, &mut da, 1.0, 0.0)
            .unwrap();
        let mut dh = d.zeros(&[b, HID]).unwrap();
        d.activate_grad(Activation::Tanh, &h, &a, &da, &mut dh)
            .unwrap();
        d.gemm(&xt, true, &dh, false, &mut grads[0], 1.0, 0.0)
            .unwrap();
        d.sum_rows(&dh, &mut grads[1], 0.0).unwrap();
        if let Some((ar, rank)) = ar {
            for g in grads.iter_mut() {
                ar.all_reduce_sum(rank, g, d).unwrap();
            }
        }
        // SGD with momentum keeps the update linear in the gradient, so the rounding
        // differences of a differently ordered sum stay at rounding size (Adam's
        // normalisation would magnify them on components whose gradient is nearly zero).
        let opt = OptStep::Sgd {
            lr: 0.1,
            momentum: 0.9,
            nesterov: false,
        };
        for ((p, g), s) in self
            .params
            .iter_mut()
            .zip(&grads)
            .zip(self.slots.iter_mut())
        {
            d.optimizer_step(&opt, p, g, s).unwrap();
        }
    }

    fn weights(&self) -> Vec<Vec<f32>> {
        self.params
            .iter()
            .map(|p| self.dev.download(p).unwrap())
            .collect()
    }
}

/// Trains `devices.len()` replicas on their shares of every global batch.
fn train(devices: Vec<CudaDevice>, ar: Option<&dyn AllReduce>, d: &Data) -> Vec<Vec<Vec<f32>>> {
    let n = devices.len();
    let local = GLOBAL / n;
    let mut reps: Vec<Replica> = devices
        .into_iter()
        .map(|dev| Replica::new(dev, d))
        .collect();
    std::thread::scope(|s| {
        for (rank, rep) in reps.iter_mut().enumerate() {
            s.spawn(move || {
                for step in 0..STEPS {
                    let row = step * GLOBAL + rank * local;
                    let x = &d.x[row * IN..(row + local) * IN];
                    let y = &d.y[row..row + local];
                    rep.step(x, y, ar.map(|a| (a, rank)));
                }
            });
        }
    });
    reps.iter().map(|r| r.weights()).collect()
}

fn assert_equivalent(what: &str, replicas: &[Vec<Vec<f32>>], single: &[Vec<f32>]) {
    for (r, w) in replicas.iter().enumerate() {
        assert!(
            w == &replicas[0],
            "{what}: replica {r} differs from replica 0"
        );
    }
    for (t, (a, b)) in replicas[0].iter().zip(single).enumerate() {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            let tol = 1e-6 + 1e-4 * x.abs().max(y.abs());
            assert!(
                (x - y).abs() <= tol,
                "{what}: tensor {t}[{i}] {x} vs one replica {y}"
            );
        }
    }
}

fn single(d: &Data) -> Vec<Vec<f32>> {
    train(vec![CudaDevice::new(0).unwrap()], None, d).remove(0)
}

#[test]
fn logical_gpus_match_one_replica() {
    if gpu_count() == 0 {
        eprintln!("skipped: no CUDA GPU");
        return;
    }
    let d = data();
    let one = single(&d);
    for n in [2, 3] {
        let devs: Vec<CudaDevice> = (0..n).map(|i| CudaDevice::logical(0, i).unwrap()).collect();
        let ar = LocalGpuReduce::new(&devs[0], n).unwrap();
        let w = train(devs, Some(&ar), &d);
        assert_equivalent(&format!("{n} logical GPUs"), &w, &one);
    }
}

#[test]
fn host_staged_reduce_matches_one_replica() {
    if gpu_count() == 0 {
        eprintln!("skipped: no CUDA GPU");
        return;
    }
    let d = data();
    let one = single(&d);
    let n = gpu_count().clamp(2, 4);
    // Spread replicas over the GPUs there are (all on GPU 0 on a one-GPU machine).
    let devs: Vec<CudaDevice> = (0..n)
        .map(|i| CudaDevice::logical(i % gpu_count(), i).unwrap())
        .collect();
    let ar = HostStagedReduce::new(n);
    let w = train(devs, Some(&ar), &d);
    assert_equivalent("host-staged", &w, &one);
}

#[test]
fn nccl_across_gpus_matches_one_replica() {
    if gpu_count() < 2 {
        eprintln!("skipped: NCCL needs at least 2 CUDA GPUs");
        return;
    }
    if nccl_library().is_none() {
        eprintln!("skipped: NCCL (libnccl.so.2) is not installed");
        return;
    }
    let d = data();
    let one = single(&d);
    let n = if gpu_count() >= 4 { 4 } else { 2 };
    let devs: Vec<CudaDevice> = (0..n).map(|g| CudaDevice::new(g).unwrap()).collect();
    let ordinals: Vec<usize> = (0..n).collect();
    let ar = NcclAllReduce::new(&ordinals).unwrap();
    let w = train(devs, Some(&ar), &d);
    assert_equivalent(&format!("NCCL over {n} GPUs"), &w, &one);
}
