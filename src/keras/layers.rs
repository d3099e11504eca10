//! The arithmetic of every layer on a device: forward, the loss at the output, and
//! backward into per-variable gradients, over preallocated [`Buffers`] so a steady-state
//! step allocates nothing on the device. Dense is one GEMM plus bias; Conv2D is im2col then
//! GEMM against the kernel viewed as a `(kh*kw*in, filters)` matrix; the activation follows
//! the core operation. Replica state (weights, slots, step counter) is `replica.rs`'s.

use super::compile::CompileConfig;
use super::config::{Act, LayerKind, ModelConfig, Padding, Plan};
use super::error::KResult;
use super::replica::StepStats;
use crate::device::{DResult, DTensor, Device, LossKind, Window};

/// Where the loss reads its input. Keras's TensorFlow backend computes a cross-entropy on
/// a softmax (or sigmoid) output from the logits underneath it; so do we, which is both
/// what Keras computes and numerically safer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fuse {
    /// The loss reads the model output.
    None,
    /// The last layer's pre-activation (Dense/Conv2D with softmax or sigmoid).
    PreActivation,
    /// The input of a final `Activation`/`Softmax` layer.
    ActivationLayer,
}

/// Scratch tensors for one batch size.
pub struct Buffers {
    pub batch: usize,
    pub fuse: Fuse,
    /// `acts[0]` is the input, `acts[i + 1]` layer i's output.
    acts: Vec<DTensor>,
    dacts: Vec<DTensor>,
    /// Core output before a non-linear activation (Dense/Conv2D only).
    pre: Vec<Option<DTensor>>,
    dpre: Vec<Option<DTensor>>,
    cols: Vec<Option<DTensor>>,
    dcols: Vec<Option<DTensor>>,
    /// Pooling argmax or dropout mask.
    aux: Vec<Option<DTensor>>,
    windows: Vec<Option<Window>>,
    target: DTensor,
    per_example: DTensor,
}

fn with_batch(batch: usize, shape: &[usize]) -> Vec<usize> {
    let mut s = vec![batch];
    s.extend(shape);
    s
}

fn make_window(
    batch: usize,
    input: &[usize],
    k: (usize, usize),
    s: (usize, usize),
    p: Padding,
) -> Window {
    let (h, w, c) = match input {
        [h, w, c] => (*h, *w, *c),
        _ => (0, 0, 0),
    };
    let (out_h, pad_top) = p.out_and_pad(h, k.0, s.0).unwrap_or((0, 0));
    let (out_w, pad_left) = p.out_and_pad(w, k.1, s.1).unwrap_or((0, 0));
    Window {
        batch,
        height: h,
        width: w,
        channels: c,
        kernel_h: k.0,
        kernel_w: k.1,
        stride_h: s.0,
        stride_w: s.1,
        pad_top,
        pad_left,
        out_h,
        out_w,
    }
}

impl Buffers {
    pub fn new(
        dev: &dyn Device,
        config: &ModelConfig,
        plan: &Plan,
        batch: usize,
        fuse: Fuse,
        loss: Option<LossKind>,
    ) -> KResult<Buffers> {
        let n = config.layers.len();
        let mut b = Buffers {
            batch,
            fuse,
            acts: vec![dev.zeros(&with_batch(batch, &config.input_shape))?],
            dacts: vec![dev.zeros(&[0])?],
            pre: Vec::with_capacity(n),
            dpre: Vec::with_capacity(n),
            cols: Vec::with_capacity(n),
            dcols: Vec::with_capacity(n),
            aux: Vec::with_capacity(n),
            windows: Vec::with_capacity(n),
            target: dev.zeros(&[0])?,
            per_example: dev.zeros(&[0])?,
        };
        for (i, l) in config.layers.iter().enumerate() {
            let (ins, outs) = (&plan.in_shapes[i], &plan.out_shapes[i]);
            let out = with_batch(batch, outs);
            b.acts.push(dev.zeros(&out)?);
            b.dacts.push(dev.zeros(&out)?);
            let has_pre = matches!(l.kind, LayerKind::Dense { .. } | LayerKind::Conv2D { .. })
                && l.kind.activation().is_some_and(|a| !a.is_linear());
            b.pre.push(if has_pre {
                Some(dev.zeros(&out)?)
            } else {
                None
            });
            b.dpre.push(if has_pre {
                Some(dev.zeros(&out)?)
            } else {
                None
            });
            let (mut cols, mut dcols, mut aux, mut win) = (None, None, None, None);
            match &l.kind {
                LayerKind::Conv2D {
                    kernel_size,
                    strides,
                    padding,
                    ..
                } => {
                    let w = make_window(batch, ins, *kernel_size, *strides, *padding);
                    let shape = [
                        batch * w.out_h * w.out_w,
                        w.kernel_h * w.kernel_w * w.channels,
                    ];
                    cols = Some(dev.zeros(&shape)?);
                    if i > 0 {
                        dcols = Some(dev.zeros(&shape)?);
                    }
                    win = Some(w);
                }
                LayerKind::MaxPooling2D {
                    pool_size,
                    strides,
                    padding,
                } => {
                    win = Some(make_window(batch, ins, *pool_size, *strides, *padding));
                    aux = Some(dev.zeros(&out)?);
                }
                LayerKind::Dropout { .. } => aux = Some(dev.zeros(&with_batch(batch, ins))?),
                _ => {}
            }
            b.cols.push(cols);
            b.dcols.push(dcols);
            b.aux.push(aux);
            b.windows.push(win);
        }
        if let Some(kind) = loss {
            let (rows, _) = b.output().rows_cols();
            b.target = match kind {
                LossKind::SparseCategoricalCrossentropy { .. } => dev.zeros(&[rows])?,
                _ => dev.zeros(&with_batch(batch, plan.output_shape()))?,
            };
            b.per_example = dev.zeros(&[rows])?;
        }
        Ok(b)
    }

    /// The model's output for the last forward pass.
    pub fn output(&self) -> &DTensor {
        // `acts` always holds the input, so `last` exists.
        &self.acts[self.acts.len() - 1]
    }
}

fn act_forward(dev: &dyn Device, act: Act, x: &DTensor, y: &mut DTensor) -> DResult<()> {
    match act {
        Act::Elem(a) => dev.activate(a, x, y),
        Act::Softmax => dev.softmax_rows(x, y, false),
        Act::LogSoftmax => dev.softmax_rows(x, y, true),
    }
}

fn act_backward(
    dev: &dyn Device,
    act: Act,
    x: &DTensor,
    y: &DTensor,
    dy: &DTensor,
    dx: &mut DTensor,
) -> DResult<()> {
    match act {
        Act::Elem(a) => dev.activate_grad(a, x, y, dy, dx),
        Act::Softmax => dev.softmax_rows_grad(y, dy, dx, false),
        Act::LogSoftmax => dev.softmax_rows_grad(y, dy, dx, true),
    }
}

fn mix(seed: u64, layer: usize) -> u64 {
    seed ^ (layer as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)
}

#[allow(clippy::too_many_arguments)]
pub fn forward(
    dev: &dyn Device,
    config: &ModelConfig,
    plan: &Plan,
    params: &[DTensor],
    b: &mut Buffers,
    x: &[f32],
    training: bool,
    seed: u64,
) -> KResult<()> {
    dev.write(x, &mut b.acts[0])?;
    for (i, l) in config.layers.iter().enumerate() {
        let (before, after) = b.acts.split_at_mut(i + 1);
        let (x, y) = (&before[i], &mut after[0]);
        let (k, bias) = plan.layer_vars[i];
        match &l.kind {
            LayerKind::Dense { activation, .. } | LayerKind::Conv2D { activation, .. } => {
                let z = match b.pre[i].as_mut() {
                    Some(z) => z,
                    None => &mut *y,
                };
                let Some(k) = k.and_then(|k| params.get(k)) else {
                    continue;
                };
                match (b.cols[i].as_mut(), b.windows[i].as_ref()) {
                    (Some(cols), Some(w)) => {
                        dev.im2col(x, w, cols)?;
                        dev.gemm(cols, false, k, false, z, 1.0, 0.0)?;
                    }
                    _ => dev.gemm(x, false, k, false, z, 1.0, 0.0)?,
                }
                if let Some(bias) = bias.and_then(|v| params.get(v)) {
                    dev.add_bias(z, bias)?;
                }
                if let Some(z) = b.pre[i].as_ref() {
                    act_forward(dev, *activation, z, y)?;
                }
            }
            LayerKind::MaxPooling2D { .. } => {
                if let (Some(w), Some(arg)) = (b.windows[i].as_ref(), b.aux[i].as_mut()) {
                    dev.maxpool(x, w, y, arg)?;
                }
            }
            LayerKind::Flatten | LayerKind::Reshape { .. } => dev.copy(x, y)?,
            LayerKind::Dropout { rate, seed: own } => match b.aux[i].as_mut() {
                Some(mask) if training && *rate > 0.0 => {
                    dev.dropout_mask(mix(seed ^ own.unwrap_or(0), i), *rate, mask)?;
                    dev.mul(x, mask, y)?;
                }
                _ => dev.copy(x, y)?,
            },
            LayerKind::Activation(a) => act_forward(dev, *a, x, y)?,
            LayerKind::Softmax => act_forward(dev, Act::Softmax, x, y)?,
        }
    }
    Ok(())
}

fn logits_kind(kind: LossKind) -> LossKind {
    match kind {
        LossKind::BinaryCrossentropy { .. } => LossKind::BinaryCrossentropy { from_logits: true },
        LossKind::CategoricalCrossentropy { .. } => {
            LossKind::CategoricalCrossentropy { from_logits: true }
        }
        LossKind::SparseCategoricalCrossentropy { .. } => {
            LossKind::SparseCategoricalCrossentropy { from_logits: true }
        }
        other => other,
    }
}

/// Computes the loss of the last forward pass against `y`, leaving its gradient (times
/// `scale`) where backward starts, and returns the loss and metric sums.
pub fn loss(
    dev: &dyn Device,
    compile: &CompileConfig,
    b: &mut Buffers,
    y: &[f32],
    batch: usize,
    scale: f32,
) -> KResult<StepStats> {
    dev.write(y, &mut b.target)?;
    let last = b.acts.len() - 1;
    let (kind, pred, grad) = match b.fuse {
        Fuse::None => (compile.loss, &b.acts[last], &mut b.dacts[last]),
        Fuse::PreActivation => match (b.pre[last - 1].as_ref(), b.dpre[last - 1].as_mut()) {
            (Some(p), Some(g)) => (logits_kind(compile.loss), p, g),
            _ => (compile.loss, &b.acts[last], &mut b.dacts[last]),
        },
        Fuse::ActivationLayer => (
            logits_kind(compile.loss),
            &b.acts[last - 1],
            &mut b.dacts[last - 1],
        ),
    };
    let (rows, _) = pred.rows_cols();
    // Outputs with more than one row per example (Dense on a sequence) average over them.
    let per = (rows / batch.max(1)).max(1) as f32;
    dev.loss(kind, pred, &b.target, &mut b.per_example, grad, scale / per)?;
    let loss_sum = dev.sum(&b.per_example)? / f64::from(per);
    let mut metric_sums = Vec::with_capacity(compile.metrics.len());
    if !compile.metrics.is_empty() {
        let out = dev.download(b.output())?;
        let (_, cols) = b.output().rows_cols();
        for (_, m) in &compile.metrics {
            metric_sums.push(m.batch_sum(&out, y, cols) / f64::from(per));
        }
    }
    Ok(StepStats {
        loss_sum,
        metric_sums,
        count: batch,
    })
}

pub fn backward(
    dev: &dyn Device,
    config: &ModelConfig,
    plan: &Plan,
    params: &[DTensor],
    grads: &mut [DTensor],
    b: &mut Buffers,
) -> KResult<()> {
    let n = config.layers.len();
    for (i, l) in config.layers.iter().enumerate().rev() {
        let last = i + 1 == n;
        if last && b.fuse == Fuse::ActivationLayer {
            // The loss already wrote the gradient of this layer's input.
            continue;
        }
        let (kv, bv) = plan.layer_vars[i];
        let (dbefore, dafter) = b.dacts.split_at_mut(i + 1);
        let (dx, dy) = (&mut dbefore[i], &dafter[0]);
        let (x, y) = (&b.acts[i], &b.acts[i + 1]);
        match &l.kind {
            LayerKind::Dense { activation, .. } | LayerKind::Conv2D { activation, .. } => {
                let dz: &DTensor = match (b.pre[i].as_ref(), b.dpre[i].as_mut()) {
                    (Some(z), Some(dz)) => {
                        if !(last && b.fuse == Fuse::PreActivation) {
                            act_backward(dev, *activation, z, y, dy, dz)?;
                        }
                        dz
                    }
                    _ => dy,
                };
                let input = b.cols[i].as_ref().unwrap_or(x);
                if let Some(k) = kv {
                    dev.gemm(input, true, dz, false, &mut grads[k], 1.0, 0.0)?;
                }
                if let Some(bi) = bv {
                    dev.sum_rows(dz, &mut grads[bi], 0.0)?;
                }
                if i > 0 {
                    let Some(k) = kv.and_then(|k| params.get(k)) else {
                        continue;
                    };
                    match (b.dcols[i].as_mut(), b.windows[i].as_ref()) {
                        (Some(dcols), Some(w)) => {
                            dev.gemm(dz, false, k, true, dcols, 1.0, 0.0)?;
                            dev.col2im(dcols, w, dx)?;
                        }
                        _ => dev.gemm(dz, false, k, true, dx, 1.0, 0.0)?,
                    }
                }
            }
            _ if i == 0 => {}
            LayerKind::MaxPooling2D { .. } => {
                if let Some(arg) = b.aux[i].as_ref() {
                    dev.maxpool_grad(dy, arg, dx)?;
                }
            }
            LayerKind::Flatten | LayerKind::Reshape { .. } => dev.copy(dy, dx)?,
            LayerKind::Dropout { rate, .. } => match b.aux[i].as_ref() {
                Some(mask) if *rate > 0.0 => dev.mul(dy, mask, dx)?,
                _ => dev.copy(dy, dx)?,
            },
            LayerKind::Activation(a) => act_backward(dev, *a, x, y, dy, dx)?,
            LayerKind::Softmax => act_backward(dev, Act::Softmax, x, y, dy, dx)?,
        }
    }
    Ok(())
}
