//! Losses as ops: Keras's loss functions (`mean_squared_error`, `mean_absolute_error`,
//! `huber`, `binary_crossentropy`, `categorical_crossentropy`,
//! `sparse_categorical_crossentropy`, each with `from_logits` where Keras has it) and TF's
//! `tf.nn.*_cross_entropy_with_logits`. Inputs are `[target, prediction]`; the output is
//! the loss per example (the prediction's shape without its last axis; element-wise for
//! `sigmoid_cross_entropy_with_logits`). float32 values come from the device's `loss`
//! kernel, the one `fit` uses; float64 uses the same formulas on the host (Keras 3 on
//! TensorFlow: probabilities clipped to `[1e-7, 1 - 1e-7]`, categorical ones renormalised
//! first). Gradients are written in ops, as TensorFlow differentiates Keras's composite
//! definitions (so the clip passes gradient only inside its range, ends included), and
//! can be differentiated again.

use super::activation::{activate, softmax, Activation};
use super::device_io::{download_as, upload};
use super::eager::Eager;
use super::elementwise::{
    binary, cast, clip_by_value, div, mul, neg, scale, sub, unary, Binary, Unary,
};
use super::error::{dims, ErrorClass, OpError, OpResult, FLOAT};
use super::index::one_hot;
use super::op::{inputs, node_inputs, Op};
use super::reduce::reduce_sum;
use super::shape::expand_dims;
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::{Device, LossKind};
use crate::tensor::{DType, NdArray};

/// Keras's `backend.epsilon()`.
const EPS: f64 = 1e-7;

/// A loss function.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loss {
    MeanSquaredError,
    MeanAbsoluteError,
    Huber {
        delta: f64,
    },
    BinaryCrossentropy {
        from_logits: bool,
    },
    CategoricalCrossentropy {
        from_logits: bool,
    },
    /// Targets are integer class indices, one per row.
    SparseCategoricalCrossentropy {
        from_logits: bool,
    },
    /// `tf.nn.sigmoid_cross_entropy_with_logits`: element-wise, no mean.
    SigmoidCrossEntropyWithLogits,
    /// `tf.nn.softmax_cross_entropy_with_logits` (same values as Keras's categorical
    /// cross-entropy from logits).
    SoftmaxCrossEntropyWithLogits,
    /// `tf.nn.sparse_softmax_cross_entropy_with_logits`.
    SparseSoftmaxCrossEntropyWithLogits,
}

impl Loss {
    pub fn name(self) -> &'static str {
        match self {
            Loss::MeanSquaredError => "MeanSquaredError",
            Loss::MeanAbsoluteError => "MeanAbsoluteError",
            Loss::Huber { .. } => "Huber",
            Loss::BinaryCrossentropy { .. } => "BinaryCrossentropy",
            Loss::CategoricalCrossentropy { .. } => "CategoricalCrossentropy",
            Loss::SparseCategoricalCrossentropy { .. } => "SparseCategoricalCrossentropy",
            Loss::SigmoidCrossEntropyWithLogits => "SigmoidCrossEntropyWithLogits",
            Loss::SoftmaxCrossEntropyWithLogits => "SoftmaxCrossEntropyWithLogits",
            Loss::SparseSoftmaxCrossEntropyWithLogits => "SparseSoftmaxCrossEntropyWithLogits",
        }
    }

    /// Whether the targets are class indices, one per row.
    pub fn sparse(self) -> bool {
        matches!(
            self,
            Loss::SparseCategoricalCrossentropy { .. } | Loss::SparseSoftmaxCrossEntropyWithLogits
        )
    }

    /// The loss a compiled Keras model's device kernel computes.
    pub fn from_device(kind: LossKind) -> Loss {
        match kind {
            LossKind::MeanSquaredError => Loss::MeanSquaredError,
            LossKind::MeanAbsoluteError => Loss::MeanAbsoluteError,
            LossKind::Huber { delta } => Loss::Huber {
                delta: f64::from(delta),
            },
            LossKind::BinaryCrossentropy { from_logits } => {
                Loss::BinaryCrossentropy { from_logits }
            }
            LossKind::CategoricalCrossentropy { from_logits } => {
                Loss::CategoricalCrossentropy { from_logits }
            }
            LossKind::SparseCategoricalCrossentropy { from_logits } => {
                Loss::SparseCategoricalCrossentropy { from_logits }
            }
        }
    }

    /// The device kernel computing this loss per row, where there is one.
    fn device_kind(self) -> Option<LossKind> {
        Some(match self {
            Loss::MeanSquaredError => LossKind::MeanSquaredError,
            Loss::MeanAbsoluteError => LossKind::MeanAbsoluteError,
            Loss::Huber { delta } => LossKind::Huber {
                delta: delta as f32,
            },
            Loss::BinaryCrossentropy { from_logits } => {
                LossKind::BinaryCrossentropy { from_logits }
            }
            Loss::CategoricalCrossentropy { from_logits } => {
                LossKind::CategoricalCrossentropy { from_logits }
            }
            Loss::SoftmaxCrossEntropyWithLogits => {
                LossKind::CategoricalCrossentropy { from_logits: true }
            }
            Loss::SparseCategoricalCrossentropy { from_logits } => {
                LossKind::SparseCategoricalCrossentropy { from_logits }
            }
            Loss::SparseSoftmaxCrossEntropyWithLogits => {
                LossKind::SparseCategoricalCrossentropy { from_logits: true }
            }
            Loss::SigmoidCrossEntropyWithLogits => return None,
        })
    }

    fn check(self, dev: &str, t: &NdArray, p: &NdArray) -> OpResult<()> {
        let op = self.name();
        if !p.dtype().is_float() {
            return Err(OpError::attr_dtype(
                op,
                "features:T, labels:Tlabels -> loss:T, backprop:T",
                p.dtype(),
                FLOAT,
            ));
        }
        if p.ndim() == 0 && self != Loss::SigmoidCrossEntropyWithLogits {
            return Err(OpError::new(
                ErrorClass::Value,
                format!(
                    "Argument `output` must be at least rank 1. Received: output.shape={}",
                    crate::tensor::shape_str(p.shape())
                ),
            ));
        }
        if self.sparse() {
            if !t.dtype().is_int() {
                return Err(OpError::attr_dtype(
                    op,
                    "features:T, labels:Tlabels -> loss:T, backprop:T",
                    t.dtype(),
                    super::error::Allowed("int32, int64", "DT_INT32, DT_INT64"),
                ));
            }
            if t.shape() != &p.shape()[..p.ndim() - 1] {
                return Err(OpError::kernel(
                    op,
                    dev,
                    &format!(
                        "logits and labels must have the same first dimension, got logits shape {} and labels shape {}",
                        dims(p.shape()),
                        dims(t.shape())
                    ),
                ));
            }
            let cols = p.shape()[p.ndim() - 1];
            let (_, labels) = t.to_i64_vec();
            if let Some(bad) = labels.iter().find(|&&l| l < 0 || l >= cols as i64) {
                let listed: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
                return Err(OpError::kernel(
                    op,
                    dev,
                    &format!(
                        "Received a label value of {bad} which is outside the valid range of [0, {cols}).  Label values: {}",
                        listed.join(" ")
                    ),
                ));
            }
            return Ok(());
        }
        if t.dtype() != p.dtype() {
            return Err(OpError::input_dtype(op, 1, t.dtype(), p.dtype()));
        }
        if t.shape() != p.shape() {
            return Err(OpError::new(
                ErrorClass::Value,
                format!(
                    "Arguments `target` and `output` must have the same shape. Received: target.shape={}, output.shape={}",
                    shape_text(t.shape()),
                    shape_text(p.shape())
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn forward(self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let op = self.name();
        let [t, p] = inputs::<2>(op, given)?;
        let dn = dev.name();
        self.check(&dn, t, p)?;
        let tensor = |e| OpError::from_tensor(op, &dn, e);
        if self == Loss::SigmoidCrossEntropyWithLogits {
            let (_, x) = p.to_f64_vec();
            let (_, z) = t.to_f64_vec();
            let out: Vec<f64> = x.iter().zip(&z).map(|(&x, &z)| sigmoid_ce(x, z)).collect();
            return Ok(vec![NdArray::from_f64(p.shape(), out)
                .map_err(tensor)?
                .astype(p.dtype())]);
        }
        let out_shape = &p.shape()[..p.ndim() - 1];
        let cols = p.shape()[p.ndim() - 1];
        let rows: usize = out_shape.iter().product();
        if let (DType::F32, Some(kind)) = (p.dtype(), self.device_kind()) {
            let pt = upload(dev, p, &[rows, cols])?;
            let tshape: Vec<usize> = if self.sparse() {
                vec![rows]
            } else {
                vec![rows, cols]
            };
            let tt = upload(dev, t, &tshape)?;
            let mut per = dev.zeros(&[rows])?;
            let mut grad = dev.zeros(&[rows, cols])?;
            dev.loss(kind, &pt, &tt, &mut per, &mut grad, 1.0)?;
            return Ok(vec![download_as(dev, per, out_shape, op)?]);
        }
        let (_, pv) = p.to_f64_vec();
        let (_, tv) = t.to_f64_vec();
        let mut out = Vec::with_capacity(rows);
        if cols > 0 {
            for (r, pr) in pv.chunks_exact(cols).enumerate() {
                let tr = if self.sparse() {
                    &tv[r..r + 1]
                } else {
                    &tv[r * cols..(r + 1) * cols]
                };
                out.push(self.row(pr, tr));
            }
        } else {
            out.resize(rows, 0.0);
        }
        Ok(vec![NdArray::from_f64(out_shape, out)
            .map_err(tensor)?
            .astype(p.dtype())])
    }

    /// One example's loss in float64 (`t` holds one label for the sparse losses); the
    /// host formula the float64 path runs, which the engine's metrics reuse.
    pub fn row(self, p: &[f64], t: &[f64]) -> f64 {
        let k = p.len() as f64;
        let clip = |v: f64| v.clamp(EPS, 1.0 - EPS);
        match self {
            Loss::MeanSquaredError => {
                p.iter().zip(t).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / k
            }
            Loss::MeanAbsoluteError => p.iter().zip(t).map(|(a, b)| (a - b).abs()).sum::<f64>() / k,
            Loss::Huber { delta } => {
                p.iter()
                    .zip(t)
                    .map(|(a, b)| {
                        let e = (a - b).abs();
                        if e <= delta {
                            0.5 * e * e
                        } else {
                            delta * e - 0.5 * delta * delta
                        }
                    })
                    .sum::<f64>()
                    / k
            }
            Loss::BinaryCrossentropy { from_logits: true } => {
                p.iter()
                    .zip(t)
                    .map(|(&x, &z)| sigmoid_ce(x, z))
                    .sum::<f64>()
                    / k
            }
            Loss::BinaryCrossentropy { from_logits: false } => {
                p.iter()
                    .zip(t)
                    .map(|(&x, &z)| {
                        let q = clip(x);
                        -(z * q.ln() + (1.0 - z) * (1.0 - q).ln())
                    })
                    .sum::<f64>()
                    / k
            }
            Loss::CategoricalCrossentropy { from_logits: true }
            | Loss::SoftmaxCrossEntropyWithLogits => {
                let lse = log_sum_exp(p);
                -p.iter().zip(t).map(|(&x, &z)| z * (x - lse)).sum::<f64>()
            }
            Loss::CategoricalCrossentropy { from_logits: false } => {
                let total: f64 = p.iter().sum();
                -p.iter()
                    .zip(t)
                    .map(|(&x, &z)| z * clip(x / total).ln())
                    .sum::<f64>()
            }
            Loss::SparseCategoricalCrossentropy { from_logits: true }
            | Loss::SparseSoftmaxCrossEntropyWithLogits => {
                let l = t.first().copied().unwrap_or(0.0) as usize;
                log_sum_exp(p) - p.get(l).copied().unwrap_or(0.0)
            }
            Loss::SparseCategoricalCrossentropy { from_logits: false } => {
                let l = t.first().copied().unwrap_or(0.0) as usize;
                let total: f64 = p.iter().map(|&x| clip(x)).sum();
                total.ln() - clip(p.get(l).copied().unwrap_or(EPS)).ln()
            }
            Loss::SigmoidCrossEntropyWithLogits => 0.0,
        }
    }

    pub(crate) fn vjp(
        self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let [t, p] = node_inputs::<2>(node)?;
        let dy = grads
            .first()
            .ok_or_else(|| OpError::internal("loss node has no output gradient"))?;
        let dt = p.dtype();
        let c = |v: f64| Tensor::scalar(v, dt);
        if self == Loss::SigmoidCrossEntropyWithLogits {
            let s = activate(e, Activation::Sigmoid, p)?;
            let d = sub(e, &s, t)?;
            let gp = mul(e, &d, dy)?;
            let np = neg(e, p)?;
            let gt = mul(e, &np, dy)?;
            return Ok(vec![Some(gt), Some(gp)]);
        }
        let k = p.shape().last().copied().unwrap_or(1).max(1) as f64;
        let dy_e = expand_dims(e, dy, -1)?;
        let (gt, gp) = match self {
            Loss::MeanSquaredError => {
                let d = sub(e, p, t)?;
                let g = scale(e, &d, 2.0 / k)?;
                let gp = mul(e, &g, &dy_e)?;
                (Some(neg(e, &gp)?), gp)
            }
            Loss::MeanAbsoluteError => {
                let d = sub(e, p, t)?;
                let s = unary(e, Unary::Sign, &d)?;
                let g = scale(e, &s, 1.0 / k)?;
                let gp = mul(e, &g, &dy_e)?;
                (Some(neg(e, &gp)?), gp)
            }
            Loss::Huber { delta } => {
                let d = sub(e, p, t)?;
                let a = unary(e, Unary::Abs, &d)?;
                let m = binary(e, Binary::LessEqual, &a, &c(delta))?;
                let s = unary(e, Unary::Sign, &d)?;
                let lin = scale(e, &s, delta)?;
                let g = super::elementwise::select(e, &m, &d, &lin)?;
                let g = scale(e, &g, 1.0 / k)?;
                let gp = mul(e, &g, &dy_e)?;
                (Some(neg(e, &gp)?), gp)
            }
            Loss::BinaryCrossentropy { from_logits: true } => {
                let s = activate(e, Activation::Sigmoid, p)?;
                let d = sub(e, &s, t)?;
                let d = scale(e, &d, 1.0 / k)?;
                let gp = mul(e, &d, &dy_e)?;
                let x = scale(e, p, -1.0 / k)?;
                (Some(mul(e, &x, &dy_e)?), gp)
            }
            Loss::BinaryCrossentropy { from_logits: false } => {
                let (q, pass) = clipped(e, p)?;
                let zq = div(e, t, &q)?;
                let one_z = sub(e, &c(1.0), t)?;
                let one_q = sub(e, &c(1.0), &q)?;
                let r = div(e, &one_z, &one_q)?;
                let dq = sub(e, &r, &zq)?;
                let g = mul(e, &pass, &dq)?;
                let g = scale(e, &g, 1.0 / k)?;
                let gp = mul(e, &g, &dy_e)?;
                let lq = unary(e, Unary::Log, &q)?;
                let l1q = unary(e, Unary::Log, &one_q)?;
                let d = sub(e, &lq, &l1q)?;
                let d = scale(e, &d, -1.0 / k)?;
                (Some(mul(e, &d, &dy_e)?), gp)
            }
            Loss::CategoricalCrossentropy { from_logits: true }
            | Loss::SoftmaxCrossEntropyWithLogits => {
                // TF's kernel: softmax - labels (exact for labels that sum to one).
                let sm = softmax(e, p, -1, false)?;
                let d = sub(e, &sm, t)?;
                let gp = mul(e, &d, &dy_e)?;
                let ls = softmax(e, p, -1, true)?;
                let nls = neg(e, &ls)?;
                (Some(mul(e, &nls, &dy_e)?), gp)
            }
            Loss::CategoricalCrossentropy { from_logits: false } => {
                let s = reduce_sum(e, p, Some(vec![-1]), true)?;
                let o = div(e, p, &s)?;
                let (q, pass) = clipped(e, &o)?;
                let tq = div(e, t, &q)?;
                let gq = neg(e, &tq)?;
                let go = mul(e, &pass, &gq)?;
                let goo = mul(e, &go, &o)?;
                let dot = reduce_sum(e, &goo, Some(vec![-1]), true)?;
                let d = sub(e, &go, &dot)?;
                let d = div(e, &d, &s)?;
                let gp = mul(e, &d, &dy_e)?;
                let lq = unary(e, Unary::Log, &q)?;
                let nlq = neg(e, &lq)?;
                (Some(mul(e, &nlq, &dy_e)?), gp)
            }
            Loss::SparseCategoricalCrossentropy { from_logits: true }
            | Loss::SparseSoftmaxCrossEntropyWithLogits => {
                let sm = softmax(e, p, -1, false)?;
                let oh = one_hot(e, t, k as usize, 1.0, 0.0, -1, dt)?;
                let d = sub(e, &sm, &oh)?;
                (None, mul(e, &d, &dy_e)?)
            }
            Loss::SparseCategoricalCrossentropy { from_logits: false } => {
                let (q, pass) = clipped(e, p)?;
                let total = reduce_sum(e, &q, Some(vec![-1]), true)?;
                let inv = div(e, &c(1.0), &total)?;
                let oh = one_hot(e, t, k as usize, 1.0, 0.0, -1, dt)?;
                let ohq = div(e, &oh, &q)?;
                let gq = sub(e, &inv, &ohq)?;
                let g = mul(e, &pass, &gq)?;
                (None, mul(e, &g, &dy_e)?)
            }
            Loss::SigmoidCrossEntropyWithLogits => (None, dy.clone()),
        };
        Ok(vec![gt, Some(gp)])
    }
}

/// `clip(x, eps, 1 - eps)` and the indicator of where the clip lets gradient through
/// (inside the range, ends included, as TF's minimum/maximum pass ties).
fn clipped(e: &mut Eager, x: &Tensor) -> OpResult<(Tensor, Tensor)> {
    let dt = x.dtype();
    let q = clip_by_value(
        e,
        x,
        &Tensor::scalar(EPS, dt),
        &Tensor::scalar(1.0 - EPS, dt),
    )?;
    let same = binary(e, Binary::Equal, &q, x)?;
    let pass = cast(e, &same, dt)?;
    Ok((q, pass))
}

/// TF's stable `max(x, 0) - x z + log(1 + exp(-|x|))`.
fn sigmoid_ce(x: f64, z: f64) -> f64 {
    x.max(0.0) - x * z + (-x.abs()).exp().ln_1p()
}

fn log_sum_exp(x: &[f64]) -> f64 {
    let max = x.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
    max + x.iter().map(|v| (v - max).exp()).sum::<f64>().ln()
}

/// A shape as Keras prints it in these messages: a Python tuple.
fn shape_text(shape: &[usize]) -> String {
    crate::tensor::shape_str(shape)
}

/// Runs a loss: `target` and `prediction` in Keras's order (`labels`, `logits` for TF's).
pub fn loss(e: &mut Eager, kind: Loss, target: &Tensor, prediction: &Tensor) -> OpResult<Tensor> {
    e.execute1(Op::Loss(kind), &[target.clone(), prediction.clone()])
}
