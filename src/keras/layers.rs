//! The arithmetic of every layer on a device: forward, the loss at the output, and
//! backward into per-variable gradients, over preallocated [`Buffers`] so a steady-state
//! step allocates nothing on the device. Dense is one GEMM; Conv2D is the device's
//! convolution (im2col then GEMM against the kernel viewed as a `(kh*kw*in, filters)`
//! matrix, unless the device convolves otherwise); bias and
//! activation follow in one pass, in place when the activation's derivative can be read
//! from its output (ReLU, sigmoid, tanh, ...), so those layers keep one tensor instead of
//! two. Max pooling's backward pass reads the forward input, as TensorFlow's does, so the
//! forward pass records nothing; when the layer under a max pooling is a ReLU layer that
//! reads its derivative from its output, the pooling's backward pass applies that ReLU's
//! gradient as well and writes straight into the layer's gradient before activation (a
//! CNN's largest tensor then takes one pass instead of two). Buffers for inference hold no
//! gradients. Replica state (weights, slots, step counter) is `replica.rs`'s.

use super::compile::CompileConfig;
use super::config::{Act, LayerKind, ModelConfig, Padding, Plan};
use super::error::{KResult, KerasError};
use super::replica::StepStats;
use crate::device::cpu::grad_from_output;
use crate::device::{Activation, DResult, DTensor, Device, LossKind, Window};

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
    /// Whether they hold what a backward pass needs (gradients), or serve inference only.
    pub train: bool,
    /// `acts[0]` is the input, `acts[i + 1]` layer i's output.
    acts: Vec<DTensor>,
    dacts: Vec<DTensor>,
    /// Core output before an activation whose derivative needs it (Dense/Conv2D only).
    pre: Vec<Option<DTensor>>,
    /// Gradient before a non-linear activation (Dense/Conv2D only).
    dpre: Vec<Option<DTensor>>,
    cols: Vec<Option<DTensor>>,
    dcols: Vec<Option<DTensor>>,
    /// Dropout mask.
    aux: Vec<Option<DTensor>>,
    windows: Vec<Option<Window>>,
    /// Per layer: a max pooling whose backward pass also takes the ReLU gradient of the
    /// layer under it ([`pool_takes_relu`]).
    pool_relu: Vec<bool>,
    target: DTensor,
    per_example: DTensor,
    /// An empty tensor: max pooling's argmax, which nothing reads.
    empty: DTensor,
}

/// Whether a Dense/Conv2D layer keeps its pre-activation output: when the derivative of
/// its activation needs it, or when the loss reads the logits under a fused softmax or
/// sigmoid (`fused_last`).
fn keeps_pre(act: Act, fused_last: bool) -> bool {
    match act {
        Act::Elem(a) => !grad_from_output(a) || (fused_last && a != Activation::Linear),
        Act::Softmax | Act::LogSoftmax => true,
    }
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
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dev: &dyn Device,
        config: &ModelConfig,
        plan: &Plan,
        batch: usize,
        fuse: Fuse,
        loss: Option<LossKind>,
        train: bool,
    ) -> KResult<Buffers> {
        let n = config.layers.len();
        let grad = |shape: &[usize]| -> DResult<DTensor> {
            if train {
                dev.zeros(shape)
            } else {
                dev.zeros(&[0])
            }
        };
        let mut b = Buffers {
            batch,
            fuse,
            train,
            acts: vec![dev.zeros(&with_batch(batch, &config.input_shape))?],
            // Nothing needs the gradient of the data, unless a lone softmax layer hands
            // the loss's gradient to its input.
            dacts: vec![if n == 1 && fuse == Fuse::ActivationLayer {
                grad(&with_batch(batch, &config.input_shape))?
            } else {
                dev.zeros(&[0])?
            }],
            pre: Vec::with_capacity(n),
            dpre: Vec::with_capacity(n),
            cols: Vec::with_capacity(n),
            dcols: Vec::with_capacity(n),
            aux: Vec::with_capacity(n),
            windows: Vec::with_capacity(n),
            pool_relu: vec![false; n],
            target: dev.zeros(&[0])?,
            per_example: dev.zeros(&[0])?,
            empty: dev.zeros(&[0])?,
        };
        for (i, l) in config.layers.iter().enumerate() {
            let (ins, outs) = (&plan.in_shapes[i], &plan.out_shapes[i]);
            let out = with_batch(batch, outs);
            b.acts.push(dev.zeros(&out)?);
            b.dacts.push(grad(&out)?);
            let core = matches!(l.kind, LayerKind::Dense { .. } | LayerKind::Conv2D { .. });
            let act = l.kind.activation().filter(|_| core);
            let fused_last = i + 1 == n && fuse == Fuse::PreActivation;
            let has_pre = act.is_some_and(|a| keeps_pre(a, fused_last));
            let has_dpre = train && act.is_some_and(|a| !a.is_linear());
            b.pre.push(if has_pre {
                Some(dev.zeros(&out)?)
            } else {
                None
            });
            b.dpre.push(if has_dpre {
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
                    if i > 0 && train {
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
                }
                LayerKind::Dropout { .. } if train => {
                    aux = Some(dev.zeros(&with_batch(batch, ins))?)
                }
                _ => {}
            }
            b.cols.push(cols);
            b.dcols.push(dcols);
            b.aux.push(aux);
            b.windows.push(win);
        }
        for i in 1..n {
            if pool_takes_relu(config, &b, i) {
                b.pool_relu[i] = true;
                // The pooling writes the layer under it's `dpre`: its own input gradient
                // is never formed.
                b.dacts[i] = dev.zeros(&[0])?;
            }
        }
        if let (Some(_), false, Some(last)) = (loss, train, n.checked_sub(1)) {
            // Inference buffers still take the loss's gradient where the loss writes it.
            let shape = |t: &DTensor| t.shape.clone();
            match fuse {
                Fuse::None => b.dacts[n] = dev.zeros(&shape(&b.acts[n]))?,
                Fuse::PreActivation => {
                    if let Some(p) = &b.pre[last] {
                        b.dpre[last] = Some(dev.zeros(&shape(p))?);
                    }
                }
                Fuse::ActivationLayer => b.dacts[last] = dev.zeros(&shape(&b.acts[last]))?,
            }
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

/// Whether layer `i`, a max pooling, takes over the ReLU gradient of layer `i - 1`: a Dense
/// or Conv2D layer with ReLU that applies it in place (no kept pre-activation) and has a
/// gradient before activation to write. Its output is the pooling's input, whose sign is
/// the ReLU's derivative, so the pooling can write that layer's `dpre` directly.
fn pool_takes_relu(config: &ModelConfig, b: &Buffers, i: usize) -> bool {
    let (Some(under), Some(pool)) = (config.layers.get(i.wrapping_sub(1)), config.layers.get(i))
    else {
        return false;
    };
    let relu = matches!(
        under.kind,
        LayerKind::Dense {
            activation: Act::Elem(Activation::Relu),
            ..
        } | LayerKind::Conv2D {
            activation: Act::Elem(Activation::Relu),
            ..
        }
    );
    relu && matches!(pool.kind, LayerKind::MaxPooling2D { .. })
        && b.pre.get(i - 1).is_some_and(|p| p.is_none())
        && b.dpre.get(i - 1).is_some_and(|d| d.is_some())
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

/// A Dense layer's matrix product or a Conv2D layer's convolution (when it has a window),
/// without bias.
fn core_forward(
    dev: &dyn Device,
    x: &DTensor,
    k: &DTensor,
    cols: Option<&mut DTensor>,
    w: Option<&Window>,
    z: &mut DTensor,
) -> DResult<()> {
    match (cols, w) {
        (Some(cols), Some(w)) => dev.conv2d(x, w, k, cols, z),
        _ => dev.gemm(x, false, k, false, z, 1.0, 0.0),
    }
}

fn mix(seed: u64, layer: usize) -> u64 {
    seed ^ (layer as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// Where a forward pass reads its examples.
#[derive(Clone, Copy)]
pub enum Input<'a> {
    /// The batch, row after row.
    Batch(&'a [f32]),
    /// The rows `idx` of a data set with `per` values per example, gathered straight into
    /// the device's input buffer.
    Rows {
        data: &'a [f32],
        per: usize,
        idx: &'a [usize],
    },
}

#[allow(clippy::too_many_arguments)]
pub fn forward(
    dev: &dyn Device,
    config: &ModelConfig,
    plan: &Plan,
    params: &[DTensor],
    b: &mut Buffers,
    x: Input<'_>,
    training: bool,
    seed: u64,
) -> KResult<()> {
    match x {
        Input::Batch(x) => dev.write(x, &mut b.acts[0])?,
        Input::Rows { data, per, idx } => dev.gather_rows(data, per, idx, &mut b.acts[0])?,
    }
    for (i, l) in config.layers.iter().enumerate() {
        let (before, after) = b.acts.split_at_mut(i + 1);
        let (x, y) = (&before[i], &mut after[0]);
        let (k, bias) = plan.layer_vars[i];
        match &l.kind {
            LayerKind::Dense { activation, .. } | LayerKind::Conv2D { activation, .. } => {
                let Some(k) = k.and_then(|k| params.get(k)) else {
                    continue;
                };
                let bias = bias.and_then(|v| params.get(v));
                let (cols, w) = (b.cols[i].as_mut(), b.windows[i].as_ref());
                match (b.pre[i].as_mut(), *activation) {
                    (Some(z), act) => {
                        core_forward(dev, x, k, cols, w, z)?;
                        if let Some(bias) = bias {
                            dev.add_bias(z, bias)?;
                        }
                        act_forward(dev, act, z, y)?;
                    }
                    // The activation's derivative reads only its output: the product, bias and
                    // activation go straight into the output.
                    (None, Act::Elem(a)) => match (cols, w) {
                        (Some(cols), Some(w)) => dev.conv2d_bias_act(x, w, k, cols, y, bias, a)?,
                        _ => dev.gemm_bias_act(x, k, y, bias, a)?,
                    },
                    (None, _) => {
                        return Err(KerasError::Value(format!(
                            "layer {i} has no buffer for its pre-activation output"
                        )))
                    }
                }
            }
            LayerKind::MaxPooling2D { .. } => {
                if let Some(w) = b.windows[i].as_ref() {
                    dev.maxpool(x, w, y, &mut b.empty)?;
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
            // The plan refuses a merge in a chain; a graph runs it elsewhere.
            LayerKind::Merge(_) => return Err(super::merge::not_a_list(&x.shape)),
            LayerKind::Norm(n) => return Err(n.not_on_engine()),
            LayerKind::Stateless(s) => return Err(s.not_on_engine()),
            LayerKind::Embedding { .. } => {
                return Err(KerasError::Value("Embedding runs on the op library".into()))
            }
            LayerKind::Recurrent(r) => return Err(r.not_on_engine()),
            LayerKind::Conv1D(c) => return Err(c.not_on_engine()),
            LayerKind::Bidirectional(b) => return Err(b.not_on_engine()),
        }
    }
    Ok(())
}

/// Computes the loss of the last forward pass against `y`, leaving its gradient (times
/// `scale`) where backward starts, and returns the loss and metric sums.
/// The loss of a batch: each example's loss (and its gradient, scaled by `scale`) from the
/// outputs and targets, and the sums a step reports. With `weights`, each example's loss
/// and gradient are multiplied by its weight, and the sum is still over the examples, as
/// Keras's `sum_over_batch_size` divides by the batch size, not by the weights' sum.
pub fn loss(
    dev: &dyn Device,
    compile: &CompileConfig,
    b: &mut Buffers,
    y: &[f32],
    weights: Option<&[f32]>,
    batch: usize,
    scale: f32,
) -> KResult<StepStats> {
    dev.write(y, &mut b.target)?;
    let last = b.acts.len() - 1;
    let (kind, pred, grad) = match b.fuse {
        Fuse::None => (compile.loss, &b.acts[last], &mut b.dacts[last]),
        Fuse::PreActivation => match (b.pre[last - 1].as_ref(), b.dpre[last - 1].as_mut()) {
            (Some(p), Some(g)) => (compile.loss.with_logits(), p, g),
            _ => (compile.loss, &b.acts[last], &mut b.dacts[last]),
        },
        Fuse::ActivationLayer => (
            compile.loss.with_logits(),
            &b.acts[last - 1],
            &mut b.dacts[last - 1],
        ),
    };
    let (rows, _) = pred.rows_cols();
    // Outputs with more than one row per example (Dense on a sequence) average over them.
    let per = (rows / batch.max(1)).max(1) as f32;
    dev.loss(kind, pred, &b.target, &mut b.per_example, grad, scale / per)?;
    let loss_sum = match weights {
        None => dev.sum(&b.per_example)? / f64::from(per),
        Some(w) => {
            let losses = dev.download(&b.per_example)?;
            let rows_per = (losses.len() / batch.max(1)).max(1);
            weigh_rows(dev, grad, w, rows_per)?;
            let weighted: f64 = losses
                .iter()
                .enumerate()
                .map(|(r, l)| {
                    f64::from(*l) * f64::from(w.get(r / rows_per).copied().unwrap_or(1.0))
                })
                .sum();
            weighted / f64::from(per)
        }
    };
    let mut metric_sums = Vec::with_capacity(compile.metrics.len());
    if !compile.metrics.is_empty() {
        let out = dev.download(b.output())?;
        let (_, cols) = b.output().rows_cols();
        let ones;
        let each = match weights {
            Some(w) => w,
            None => {
                ones = vec![1.0; batch];
                &ones
            }
        };
        for (i, (_, m)) in compile.metrics.iter().enumerate() {
            let w = compile.is_weighted(i).then_some(each);
            m.accumulate(&out, y, cols, f64::from(per), w, &mut metric_sums)?;
        }
    }
    Ok(StepStats {
        loss_sum,
        metric_sums,
        count: batch,
    })
}

/// Multiplies each row of `grad` by its example's weight (`rows_per` rows an example).
fn weigh_rows(dev: &dyn Device, grad: &mut DTensor, w: &[f32], rows_per: usize) -> KResult<()> {
    let (rows, cols) = grad.rows_cols();
    let mut host = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let v = w.get(r / rows_per.max(1)).copied().unwrap_or(1.0);
        host.extend(std::iter::repeat_n(v, cols));
    }
    let factors = dev.upload(&host, &grad.shape)?;
    let mut out = dev.zeros(&grad.shape)?;
    dev.mul(grad, &factors, &mut out)?;
    dev.copy(&out, grad)?;
    Ok(())
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
                // The loss (under a fused softmax or sigmoid) or the pooling above (taking
                // the ReLU's gradient) may have written the gradient before activation.
                let written = b.pool_relu.get(i + 1).copied().unwrap_or(false)
                    || (last && b.fuse == Fuse::PreActivation);
                let dz: &DTensor = match b.dpre[i].as_mut() {
                    Some(dz) => {
                        if !written {
                            // Without a kept pre-activation the derivative reads the output.
                            let z = b.pre[i].as_ref().unwrap_or(y);
                            act_backward(dev, *activation, z, y, dy, dz)?;
                        }
                        dz
                    }
                    None => dy,
                };
                let window = b.windows[i].as_ref();
                if let Some(k) = kv {
                    match (b.cols[i].as_ref(), window) {
                        (Some(cols), Some(w)) => {
                            dev.conv2d_filter_grad(x, w, cols, dz, &mut grads[k])?
                        }
                        _ => dev.gemm(x, true, dz, false, &mut grads[k], 1.0, 0.0)?,
                    }
                }
                if let Some(bi) = bv {
                    dev.sum_rows(dz, &mut grads[bi], 0.0)?;
                }
                if i > 0 {
                    let Some(k) = kv.and_then(|k| params.get(k)) else {
                        continue;
                    };
                    match (b.dcols[i].as_mut(), window) {
                        (Some(dcols), Some(w)) => dev.conv2d_input_grad(dz, k, w, dcols, dx)?,
                        _ => dev.gemm(dz, false, k, true, dx, 1.0, 0.0)?,
                    }
                }
            }
            _ if i == 0 => {}
            LayerKind::MaxPooling2D { .. } => {
                let Some(w) = b.windows[i].as_ref() else {
                    continue;
                };
                match b.dpre[i - 1].as_mut() {
                    Some(dz) if b.pool_relu[i] => dev.maxpool_backward(x, w, dy, dz, true)?,
                    _ => dev.maxpool_backward(x, w, dy, dx, false)?,
                }
            }
            LayerKind::Flatten | LayerKind::Reshape { .. } => dev.copy(dy, dx)?,
            LayerKind::Dropout { rate, .. } => match b.aux[i].as_ref() {
                Some(mask) if *rate > 0.0 => dev.mul(dy, mask, dx)?,
                _ => dev.copy(dy, dx)?,
            },
            LayerKind::Activation(a) => act_backward(dev, *a, x, y, dy, dx)?,
            LayerKind::Softmax => act_backward(dev, Act::Softmax, x, y, dy, dx)?,
            LayerKind::Merge(_) => return Err(super::merge::not_a_list(&x.shape)),
            LayerKind::Norm(n) => return Err(n.not_on_engine()),
            LayerKind::Stateless(s) => return Err(s.not_on_engine()),
            LayerKind::Embedding { .. } => {
                return Err(KerasError::Value("Embedding runs on the op library".into()))
            }
            LayerKind::Recurrent(r) => return Err(r.not_on_engine()),
            LayerKind::Conv1D(c) => return Err(c.not_on_engine()),
            LayerKind::Bidirectional(b) => return Err(b.not_on_engine()),
        }
    }
    Ok(())
}
