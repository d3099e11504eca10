//! Test support for the distribution tests: a device that owns nothing but host buffers (the
//! ring reads host buffers directly, so no device op is needed) and a small two-layer
//! classifier written directly on host vectors, with SGD (momentum) and Adam, so that
//! N-replica training can be checked against one replica independently of the engine.

use mirror_kernel::device::{
    Activation, Buffer, DResult, DTensor, Device, DeviceError, LossKind, OptStep, Window,
};
use mirror_kernel::distribute::{BatchSums, BoxError, ReduceHook, ReplicaModel};

/// A device that computes nothing: every op is `Unavailable`. Host tensors need no device.
pub struct HostOnly(pub usize);

fn none<T>() -> DResult<T> {
    Err(DeviceError::Unavailable(
        "a device op in the host-only test device".into(),
    ))
}

impl Device for HostOnly {
    fn name(&self) -> String {
        format!("CPU:{}", self.0)
    }
    fn upload(&self, data: &[f32], shape: &[usize]) -> DResult<DTensor> {
        Ok(DTensor {
            shape: shape.to_vec(),
            buf: Buffer::Host(data.to_vec()),
        })
    }
    fn download(&self, t: &DTensor) -> DResult<Vec<f32>> {
        match &t.buf {
            Buffer::Host(v) => Ok(v.clone()),
            Buffer::Cuda(_) => Err(DeviceError::WrongDevice("a CUDA buffer")),
        }
    }
    fn zeros(&self, shape: &[usize]) -> DResult<DTensor> {
        Ok(DTensor {
            shape: shape.to_vec(),
            buf: Buffer::Host(vec![0.0; shape.iter().product()]),
        })
    }
    fn copy(&self, _: &DTensor, _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn write(&self, _: &[f32], _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn gemm(
        &self,
        _: &DTensor,
        _: bool,
        _: &DTensor,
        _: bool,
        _: &mut DTensor,
        _: f32,
        _: f32,
    ) -> DResult<()> {
        none()
    }
    fn add_bias(&self, _: &mut DTensor, _: &DTensor) -> DResult<()> {
        none()
    }
    fn sum_rows(&self, _: &DTensor, _: &mut DTensor, _: f32) -> DResult<()> {
        none()
    }
    fn activate(&self, _: Activation, _: &DTensor, _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn activate_grad(
        &self,
        _: Activation,
        _: &DTensor,
        _: &DTensor,
        _: &DTensor,
        _: &mut DTensor,
    ) -> DResult<()> {
        none()
    }
    fn softmax_rows(&self, _: &DTensor, _: &mut DTensor, _: bool) -> DResult<()> {
        none()
    }
    fn softmax_rows_grad(&self, _: &DTensor, _: &DTensor, _: &mut DTensor, _: bool) -> DResult<()> {
        none()
    }
    fn loss(
        &self,
        _: LossKind,
        _: &DTensor,
        _: &DTensor,
        _: &mut DTensor,
        _: &mut DTensor,
        _: f32,
    ) -> DResult<()> {
        none()
    }
    fn axpby(&self, _: f32, _: &DTensor, _: f32, _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn mul(&self, _: &DTensor, _: &DTensor, _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn sum(&self, _: &DTensor) -> DResult<f64> {
        none()
    }
    fn dropout_mask(&self, _: u64, _: f32, _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn im2col(&self, _: &DTensor, _: &Window, _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn col2im(&self, _: &DTensor, _: &Window, _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn maxpool(&self, _: &DTensor, _: &Window, _: &mut DTensor, _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn maxpool_grad(&self, _: &DTensor, _: &DTensor, _: &mut DTensor) -> DResult<()> {
        none()
    }
    fn optimizer_step(
        &self,
        _: &OptStep,
        _: &mut DTensor,
        _: &DTensor,
        _: &mut [DTensor],
    ) -> DResult<()> {
        none()
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Opt {
    Sgd { lr: f32, momentum: f32 },
    Adam { lr: f32 },
}

/// Dense(input -> hidden, tanh) -> Dense(hidden -> classes), softmax and sparse categorical
/// cross-entropy, with the gradient of each example scaled by 1/global batch.
pub struct HostMlp {
    pub input: usize,
    pub hidden: usize,
    pub classes: usize,
    pub params: Vec<f32>,
    grad: DTensor,
    opt: Opt,
    slot_m: Vec<f32>,
    slot_v: Vec<f32>,
    step: u64,
    /// When set, `compute_gradients` fails at this many calls (error-path tests).
    pub fail_at: Option<u64>,
    /// When set, `train_step` panics at this many calls.
    pub panic_at: Option<u64>,
    calls: u64,
}

impl HostMlp {
    /// Weights from a small deterministic generator seeded by `seed`.
    pub fn new(input: usize, hidden: usize, classes: usize, opt: Opt, seed: u64) -> Self {
        let n = input * hidden + hidden + hidden * classes + classes;
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let params = (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 33) as f32 / (1u64 << 31) as f32 - 0.5) * 0.8
            })
            .collect();
        HostMlp {
            input,
            hidden,
            classes,
            params,
            grad: DTensor {
                shape: vec![n],
                buf: Buffer::Host(vec![0.0; n]),
            },
            opt,
            slot_m: vec![0.0; n],
            slot_v: vec![0.0; n],
            step: 0,
            fail_at: None,
            panic_at: None,
            calls: 0,
        }
    }

    fn offsets(&self) -> [usize; 4] {
        let w1 = 0;
        let b1 = w1 + self.input * self.hidden;
        let w2 = b1 + self.hidden;
        let b2 = w2 + self.hidden * self.classes;
        [w1, b1, w2, b2]
    }

    /// Hidden activations and class probabilities of one example.
    fn forward(&self, x: &[f32]) -> (Vec<f32>, Vec<f32>) {
        let [w1, b1, w2, b2] = self.offsets();
        let p = &self.params;
        let h: Vec<f32> = (0..self.hidden)
            .map(|j| {
                let z: f32 = p[b1 + j]
                    + (0..self.input)
                        .map(|i| x[i] * p[w1 + i * self.hidden + j])
                        .sum::<f32>();
                z.tanh()
            })
            .collect();
        let logits: Vec<f32> = (0..self.classes)
            .map(|k| {
                p[b2 + k]
                    + (0..self.hidden)
                        .map(|j| h[j] * p[w2 + j * self.classes + k])
                        .sum::<f32>()
            })
            .collect();
        let max = logits.iter().cloned().fold(f32::MIN, f32::max);
        let e: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
        let s: f32 = e.iter().sum();
        (h, e.iter().map(|v| v / s).collect())
    }

    fn sums(&self, x: &[f32], y: &[f32], rows: usize) -> BatchSums {
        let mut loss = 0.0f64;
        let mut acc = 0.0f64;
        for r in 0..rows {
            let (_, prob) = self.forward(&x[r * self.input..(r + 1) * self.input]);
            let t = y[r] as usize;
            loss -= (prob[t].max(1e-7) as f64).ln();
            let arg = (0..self.classes)
                .max_by(|a, b| prob[*a].total_cmp(&prob[*b]))
                .unwrap_or(0);
            acc += f64::from(u8::from(arg == t));
        }
        BatchSums {
            examples: rows,
            values: vec![loss, acc],
        }
    }

    fn grad_mut(&mut self) -> &mut Vec<f32> {
        match &mut self.grad.buf {
            Buffer::Host(v) => v,
            Buffer::Cuda(_) => unreachable!("the test model keeps host gradients"),
        }
    }
}

impl HostMlp {
    /// Gradient of the summed loss of `rows` examples divided by `global` (zero for none).
    fn compute_gradients(&mut self, x: &[f32], y: &[f32], rows: usize, global: usize) -> BatchSums {
        let [w1, b1, w2, b2] = self.offsets();
        let (inp, hid, cls) = (self.input, self.hidden, self.classes);
        let mut g = vec![0.0f32; self.params.len()];
        for r in 0..rows {
            let xr = &x[r * inp..(r + 1) * inp];
            let (h, prob) = self.forward(xr);
            let t = y[r] as usize;
            let dl: Vec<f32> = (0..cls)
                .map(|k| (prob[k] - f32::from(u8::from(k == t))) / global as f32)
                .collect();
            let mut dh = vec![0.0f32; hid];
            for j in 0..hid {
                for k in 0..cls {
                    g[w2 + j * cls + k] += h[j] * dl[k];
                    dh[j] += self.params[w2 + j * cls + k] * dl[k];
                }
            }
            for k in 0..cls {
                g[b2 + k] += dl[k];
            }
            for j in 0..hid {
                let dz = dh[j] * (1.0 - h[j] * h[j]);
                g[b1 + j] += dz;
                for i in 0..inp {
                    g[w1 + i * hid + j] += xr[i] * dz;
                }
            }
        }
        let sums = self.sums(x, y, rows);
        *self.grad_mut() = g;
        sums
    }

    fn apply_gradients(&mut self) -> Result<(), BoxError> {
        let g = match &self.grad.buf {
            Buffer::Host(v) => v.clone(),
            Buffer::Cuda(_) => return Err("host gradients expected".into()),
        };
        self.step += 1;
        match self.opt {
            Opt::Sgd { lr, momentum } => {
                for ((p, m), g) in self.params.iter_mut().zip(&mut self.slot_m).zip(&g) {
                    *m = momentum * *m - lr * g;
                    *p += *m;
                }
            }
            Opt::Adam { lr } => {
                let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-7f32);
                let t = self.step as i32;
                let alpha = lr * (1.0 - b2.powi(t)).sqrt() / (1.0 - b1.powi(t));
                let slots = self.slot_m.iter_mut().zip(&mut self.slot_v);
                for ((p, (m, v)), g) in self.params.iter_mut().zip(slots).zip(&g) {
                    *m += (1.0 - b1) * (g - *m);
                    *v += (1.0 - b2) * (g * g - *v);
                    *p -= alpha * *m / (v.sqrt() + eps);
                }
            }
        }
        Ok(())
    }
}

impl ReplicaModel for HostMlp {
    fn metric_names(&self) -> Vec<String> {
        vec!["loss".into(), "accuracy".into()]
    }

    fn gradient_len(&self) -> usize {
        self.params.len()
    }

    fn train_step(
        &mut self,
        device: &dyn Device,
        x: &[f32],
        y: &[f32],
        rows: usize,
        global: usize,
        reduce: &mut ReduceHook<'_>,
    ) -> Result<BatchSums, BoxError> {
        self.calls += 1;
        if self.fail_at == Some(self.calls) {
            return Err("the test model was told to fail".into());
        }
        if self.panic_at == Some(self.calls) {
            panic!("the test model was told to panic");
        }
        let sums = self.compute_gradients(x, y, rows, global);
        reduce(std::slice::from_mut(&mut self.grad), device)?;
        self.apply_gradients()?;
        Ok(sums)
    }

    fn evaluate_batch(
        &mut self,
        _: &dyn Device,
        x: &[f32],
        y: &[f32],
        rows: usize,
    ) -> Result<BatchSums, BoxError> {
        Ok(self.sums(x, y, rows))
    }

    fn predict_batch(
        &mut self,
        _: &dyn Device,
        x: &[f32],
        rows: usize,
    ) -> Result<Vec<f32>, BoxError> {
        Ok((0..rows)
            .flat_map(|r| self.forward(&x[r * self.input..(r + 1) * self.input]).1)
            .collect())
    }

    fn variables(&self, _: &dyn Device) -> Result<Vec<Vec<f32>>, BoxError> {
        let [w1, b1, w2, b2] = self.offsets();
        let p = &self.params;
        Ok(vec![
            p[w1..b1].to_vec(),
            p[b1..w2].to_vec(),
            p[w2..b2].to_vec(),
            p[b2..].to_vec(),
        ])
    }

    fn set_variables(&mut self, _: &dyn Device, values: &[Vec<f32>]) -> Result<(), BoxError> {
        let flat: Vec<f32> = values.iter().flatten().copied().collect();
        if flat.len() != self.params.len() {
            return Err(
                format!("expected {} values, got {}", self.params.len(), flat.len()).into(),
            );
        }
        self.params = flat;
        Ok(())
    }
}

/// A small labelled data set: `n` rows of `input` features, labels from a fixed rule.
pub fn dataset(n: usize, input: usize, classes: usize) -> (Vec<f32>, Vec<f32>) {
    let mut x = Vec::with_capacity(n * input);
    let mut y = Vec::with_capacity(n);
    for r in 0..n {
        let row: Vec<f32> = (0..input)
            .map(|i| (((r * 31 + i * 17) % 23) as f32 / 11.0) - 1.0)
            .collect();
        let score: f32 = row
            .iter()
            .enumerate()
            .map(|(i, v)| v * (i as f32 - 1.5))
            .sum();
        y.push(((score.abs() * 3.0) as usize % classes) as f32);
        x.extend(row);
    }
    (x, y)
}
