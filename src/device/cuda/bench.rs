//! The GPU part of `mirror-kernel bench`: a fixed MLP (Dense 784→128 relu → 10 softmax,
//! sparse categorical cross-entropy, Adam, global batch 128, 60,000 synthetic samples)
//! trained directly on [`CudaDevice`]s through the `Device` trait, one replica per GPU with a
//! gradient all-reduce every step, plus the all-reduce's bus bandwidth. It measures the
//! device layer alone (no Keras, no interpreter); the integrator prints the numbers.

use std::time::Instant;

use super::allreduce::gpu_all_reduce;
use super::detect::gpu_count;
use super::device::CudaDevice;
use crate::device::collective::AllReduce;
use crate::device::{Activation, DResult, DTensor, Device, DeviceError, LossKind, OptStep};

/// What one training run measured.
#[derive(Debug, Clone)]
pub struct TrainReport {
    pub replicas: usize,
    pub global_batch: usize,
    pub steps: usize,
    pub samples_per_sec: f64,
    pub step_ms: f64,
    /// The mean loss of the last step, to show the run actually learned something.
    pub last_loss: f64,
    pub all_reduce: &'static str,
}

/// What the all-reduce bandwidth run measured (NCCL's "bus bandwidth" convention).
#[derive(Debug, Clone)]
pub struct AllReduceReport {
    pub algorithm: &'static str,
    pub replicas: usize,
    pub bytes: usize,
    pub time_ms: f64,
    pub bus_gb_per_s: f64,
}

/// A tiny deterministic generator so the synthetic data costs no dependency or time.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / 16_777_216.0
    }
}

const IN: usize = 784;
const HID: usize = 128;
const OUT: usize = 10;

struct Replica {
    dev: CudaDevice,
    params: Vec<DTensor>,
    grads: Vec<DTensor>,
    slots: Vec<Vec<DTensor>>,
    x: DTensor,
    y: DTensor,
    h: DTensor,
    a: DTensor,
    logits: DTensor,
    per_ex: DTensor,
    dlogits: DTensor,
    da: DTensor,
    dh: DTensor,
}

impl Replica {
    fn new(dev: CudaDevice, batch: usize, init: &[Vec<f32>]) -> DResult<Replica> {
        let shapes: [&[usize]; 4] = [&[IN, HID], &[HID], &[HID, OUT], &[OUT]];
        let mut params = Vec::new();
        let mut grads = Vec::new();
        let mut slots = Vec::new();
        for (s, v) in shapes.iter().zip(init) {
            params.push(dev.upload(v, s)?);
            grads.push(dev.zeros(s)?);
            slots.push(vec![dev.zeros(s)?, dev.zeros(s)?]);
        }
        Ok(Replica {
            x: dev.zeros(&[batch, IN])?,
            y: dev.zeros(&[batch])?,
            h: dev.zeros(&[batch, HID])?,
            a: dev.zeros(&[batch, HID])?,
            logits: dev.zeros(&[batch, OUT])?,
            per_ex: dev.zeros(&[batch])?,
            dlogits: dev.zeros(&[batch, OUT])?,
            da: dev.zeros(&[batch, HID])?,
            dh: dev.zeros(&[batch, HID])?,
            dev,
            params,
            grads,
            slots,
        })
    }

    /// One forward/backward/all-reduce/update step; returns this replica's summed loss.
    fn step(
        &mut self,
        rank: usize,
        x: &[f32],
        y: &[f32],
        global: usize,
        ar: Option<&dyn AllReduce>,
        t: u64,
    ) -> DResult<f64> {
        let d = &self.dev;
        d.write(x, &mut self.x)?;
        d.write(y, &mut self.y)?;
        d.gemm(
            &self.x,
            false,
            &self.params[0],
            false,
            &mut self.h,
            1.0,
            0.0,
        )?;
        d.add_bias(&mut self.h, &self.params[1])?;
        d.activate(Activation::Relu, &self.h, &mut self.a)?;
        d.gemm(
            &self.a,
            false,
            &self.params[2],
            false,
            &mut self.logits,
            1.0,
            0.0,
        )?;
        d.add_bias(&mut self.logits, &self.params[3])?;
        let kind = LossKind::SparseCategoricalCrossentropy { from_logits: true };
        d.loss(
            kind,
            &self.logits,
            &self.y,
            &mut self.per_ex,
            &mut self.dlogits,
            1.0 / global as f32,
        )?;
        d.gemm(
            &self.a,
            true,
            &self.dlogits,
            false,
            &mut self.grads[2],
            1.0,
            0.0,
        )?;
        d.sum_rows(&self.dlogits, &mut self.grads[3], 0.0)?;
        d.gemm(
            &self.dlogits,
            false,
            &self.params[2],
            true,
            &mut self.da,
            1.0,
            0.0,
        )?;
        d.activate_grad(Activation::Relu, &self.h, &self.a, &self.da, &mut self.dh)?;
        d.gemm(&self.x, true, &self.dh, false, &mut self.grads[0], 1.0, 0.0)?;
        d.sum_rows(&self.dh, &mut self.grads[1], 0.0)?;
        if let Some(ar) = ar {
            for g in self.grads.iter_mut() {
                ar.all_reduce_sum(rank, g, d)?;
            }
        }
        let opt = OptStep::Adam {
            lr: 1e-3,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            step: t,
        };
        for ((p, g), s) in self
            .params
            .iter_mut()
            .zip(&self.grads)
            .zip(self.slots.iter_mut())
        {
            d.optimizer_step(&opt, p, g, s)?;
        }
        // Reading the loss back every step is what a Keras progress bar does too.
        d.sum(&self.per_ex)
    }
}

fn glorot(rng: &mut Lcg, fan_in: usize, fan_out: usize) -> Vec<f32> {
    let limit = (6.0 / (fan_in + fan_out) as f32).sqrt();
    (0..fan_in * fan_out)
        .map(|_| (rng.next() * 2.0 - 1.0) * limit)
        .collect()
}

/// Trains the benchmark MLP for one epoch of `samples` synthetic samples with one replica on
/// each of the first `replicas` GPUs (after a short warm-up that is not timed).
pub fn mlp_train(replicas: usize, global_batch: usize, samples: usize) -> DResult<TrainReport> {
    let gpus = gpu_count();
    if replicas == 0 || replicas > gpus {
        return Err(DeviceError::Unavailable(format!(
            "{replicas} GPUs ({gpus} found)"
        )));
    }
    if global_batch == 0 || !global_batch.is_multiple_of(replicas) {
        return Err(DeviceError::Shape {
            op: "bench",
            detail: format!("global batch {global_batch} does not split over {replicas} GPUs"),
        });
    }
    let local = global_batch / replicas;
    let mut rng = Lcg(42);
    let xs: Vec<f32> = (0..samples * IN).map(|_| rng.next()).collect();
    let ys: Vec<f32> = (0..samples)
        .map(|_| (rng.next() * OUT as f32).floor().min(9.0))
        .collect();
    let init = vec![
        glorot(&mut rng, IN, HID),
        vec![0.0; HID],
        glorot(&mut rng, HID, OUT),
        vec![0.0; OUT],
    ];
    let mut reps = (0..replicas)
        .map(|g| Replica::new(CudaDevice::new(g)?, local, &init))
        .collect::<DResult<Vec<_>>>()?;
    let ar: Option<Box<dyn AllReduce>> = if replicas > 1 {
        let devs: Vec<&CudaDevice> = reps.iter().map(|r| &r.dev).collect();
        Some(gpu_all_reduce(&devs)?)
    } else {
        None
    };
    let ar_name = ar.as_ref().map(|a| a.name()).unwrap_or("none");
    let steps = samples / global_batch;
    let warmup = 20.min(steps);
    let mut timed = None;
    let mut last = 0.0;
    let run = |reps: &mut Vec<Replica>, from: usize, to: usize| -> DResult<f64> {
        let results: Vec<DResult<f64>> = std::thread::scope(|s| {
            let handles: Vec<_> = reps
                .iter_mut()
                .enumerate()
                .map(|(rank, rep)| {
                    let (xs, ys, ar) = (&xs, &ys, ar.as_deref());
                    s.spawn(move || -> DResult<f64> {
                        let mut loss = 0.0;
                        for step in from..to {
                            let start = step * global_batch + rank * local;
                            let x = &xs[start * IN..(start + local) * IN];
                            let y = &ys[start..start + local];
                            loss = rep.step(rank, x, y, global_batch, ar, step as u64 + 1)?;
                        }
                        rep.dev.synchronize()?;
                        Ok(loss)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(DeviceError::Cuda("a replica thread panicked".into()))
                    })
                })
                .collect()
        });
        let mut total = 0.0;
        for r in results {
            total += r?;
        }
        Ok(total / global_batch as f64)
    };
    run(&mut reps, 0, warmup)?;
    if steps > warmup {
        let t0 = Instant::now();
        last = run(&mut reps, warmup, steps)?;
        timed = Some((t0.elapsed().as_secs_f64(), steps - warmup));
    }
    let (secs, n) = timed.unwrap_or((f64::NAN, 0));
    Ok(TrainReport {
        replicas,
        global_batch,
        steps: n,
        samples_per_sec: (n * global_batch) as f64 / secs,
        step_ms: secs * 1e3 / n.max(1) as f64,
        last_loss: last,
        all_reduce: ar_name,
    })
}

/// Times an in-place all-reduce of `bytes` per replica over the first `replicas` GPUs and
/// reports NCCL's bus bandwidth, `2 (n - 1) / n * bytes / time`.
pub fn all_reduce_bandwidth(
    replicas: usize,
    bytes: usize,
    iters: usize,
) -> DResult<AllReduceReport> {
    let gpus = gpu_count();
    if replicas < 2 || replicas > gpus {
        return Err(DeviceError::Unavailable(format!(
            "an all-reduce over {replicas} of {gpus} GPUs"
        )));
    }
    let len = (bytes / 4).max(1);
    let devs = (0..replicas)
        .map(CudaDevice::new)
        .collect::<DResult<Vec<_>>>()?;
    let refs: Vec<&CudaDevice> = devs.iter().collect();
    let ar = gpu_all_reduce(&refs)?;
    let mut bufs = devs
        .iter()
        .map(|d| d.zeros(&[len]))
        .collect::<DResult<Vec<_>>>()?;
    let iters = iters.max(1);
    let t = std::thread::scope(|s| -> DResult<f64> {
        let handles: Vec<_> = devs
            .iter()
            .zip(bufs.iter_mut())
            .enumerate()
            .map(|(rank, (d, b))| {
                let ar = ar.as_ref();
                s.spawn(move || -> DResult<f64> {
                    for _ in 0..3 {
                        ar.all_reduce_sum(rank, b, d)?;
                    }
                    d.synchronize()?;
                    let t0 = Instant::now();
                    for _ in 0..iters {
                        ar.all_reduce_sum(rank, b, d)?;
                    }
                    d.synchronize()?;
                    Ok(t0.elapsed().as_secs_f64())
                })
            })
            .collect();
        let mut worst: f64 = 0.0;
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(DeviceError::Cuda("a replica thread panicked".into())))?;
            worst = worst.max(r);
        }
        Ok(worst)
    })?;
    let per = t / iters as f64;
    let n = replicas as f64;
    let bytes = len * 4;
    Ok(AllReduceReport {
        algorithm: ar.name(),
        replicas,
        bytes,
        time_ms: per * 1e3,
        bus_gb_per_s: 2.0 * (n - 1.0) / n * bytes as f64 / per / 1e9,
    })
}
