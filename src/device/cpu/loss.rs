//! Per-example losses and their gradients on the host, with Keras 3's formulas on its
//! TensorFlow backend: regression losses average over the last axis, probability-space
//! cross-entropies clip to `[1e-7, 1 - 1e-7]` (and categorical ones first renormalise each
//! row, as Keras does), logit-space ones go through a stable log-softmax or log-sigmoid.
//! The gradient of a clipped probability is zero outside the clip range, as TensorFlow's
//! `clip_by_value` gradient is.

use super::simd::vectorized;
use crate::device::{DResult, DeviceError, LossKind};

const EPS: f32 = 1e-7;

#[inline(always)]
fn clip(p: f32) -> (f32, f32) {
    // Returns the clipped value and whether the gradient flows through (1) or not (0).
    if p < EPS {
        (EPS, 0.0)
    } else if p > 1.0 - EPS {
        (1.0 - EPS, 0.0)
    } else {
        (p, 1.0)
    }
}

/// Each example's loss into `per_example` and its gradient (times `scale`) into `grad`,
/// compiled for the widest vectors the CPU has.
pub fn compute(
    kind: LossKind,
    p: &[f32],
    t: &[f32],
    cols: usize,
    per_example: &mut [f32],
    grad: &mut [f32],
    scale: f32,
) -> DResult<()> {
    vectorized(
        #[inline(always)]
        || compute_rows(kind, p, t, cols, per_example, grad, scale),
    )
}

#[inline(always)]
fn compute_rows(
    kind: LossKind,
    p: &[f32],
    t: &[f32],
    cols: usize,
    per_example: &mut [f32],
    grad: &mut [f32],
    scale: f32,
) -> DResult<()> {
    if cols == 0 {
        per_example.fill(0.0);
        return Ok(());
    }
    let inv_k = 1.0 / cols as f32;
    let rows = p.chunks_exact(cols).zip(grad.chunks_exact_mut(cols));
    for (r, ((pr, gr), pe)) in rows.zip(per_example.iter_mut()).enumerate() {
        let tr = match kind {
            LossKind::SparseCategoricalCrossentropy { .. } => &t[r..r + 1],
            _ => &t[r * cols..(r + 1) * cols],
        };
        *pe = match kind {
            LossKind::MeanSquaredError => {
                let mut s = 0.0;
                for i in 0..cols {
                    let e = pr[i] - tr[i];
                    s += e * e;
                    gr[i] = 2.0 * e * inv_k * scale;
                }
                s * inv_k
            }
            LossKind::MeanAbsoluteError => {
                let mut s = 0.0;
                for i in 0..cols {
                    let e = pr[i] - tr[i];
                    s += e.abs();
                    gr[i] = sign(e) * inv_k * scale;
                }
                s * inv_k
            }
            LossKind::Huber { delta } => {
                let mut s = 0.0;
                for i in 0..cols {
                    let e = pr[i] - tr[i];
                    if e.abs() <= delta {
                        s += 0.5 * e * e;
                        gr[i] = e * inv_k * scale;
                    } else {
                        s += delta * e.abs() - 0.5 * delta * delta;
                        gr[i] = delta * sign(e) * inv_k * scale;
                    }
                }
                s * inv_k
            }
            LossKind::BinaryCrossentropy { from_logits } => {
                let mut s = 0.0;
                for i in 0..cols {
                    let (x, z) = (pr[i], tr[i]);
                    if from_logits {
                        // max(x, 0) - x z + log(1 + exp(-|x|)), TensorFlow's stable form.
                        s += x.max(0.0) - x * z + (-x.abs()).exp().ln_1p();
                        let sig = 1.0 / (1.0 + (-x).exp());
                        gr[i] = (sig - z) * inv_k * scale;
                    } else {
                        let (q, pass) = clip(x);
                        s += -(z * q.ln() + (1.0 - z) * (1.0 - q).ln());
                        gr[i] = pass * (-z / q + (1.0 - z) / (1.0 - q)) * inv_k * scale;
                    }
                }
                s * inv_k
            }
            LossKind::CategoricalCrossentropy { from_logits: true } => {
                // TensorFlow's softmax cross-entropy kernel (which Keras reaches from logits
                // and from a softmax output) takes softmax - labels as the gradient, whatever
                // the labels sum to; the op library's rule is the same.
                let (max, lse) = log_sum_exp(pr);
                let mut s = 0.0;
                for i in 0..cols {
                    let logp = pr[i] - max - lse;
                    s -= tr[i] * logp;
                    gr[i] = (logp.exp() - tr[i]) * scale;
                }
                s
            }
            LossKind::CategoricalCrossentropy { from_logits: false } => {
                // loss = -sum t_i log(clip(p_i / S)); d/dp_j = (sum_i t_i pass_i - t_j
                // pass_j / q_j) / S with q = p / S.
                let total: f32 = pr.iter().sum();
                let mut s = 0.0;
                let mut tpass = 0.0;
                for i in 0..cols {
                    let (q, pass) = clip(pr[i] / total);
                    s -= tr[i] * q.ln();
                    tpass += tr[i] * pass;
                    gr[i] = pass * tr[i] / q;
                }
                for g in gr.iter_mut() {
                    *g = (tpass - *g) / total * scale;
                }
                s
            }
            LossKind::SparseCategoricalCrossentropy { from_logits } => {
                let label = tr[0];
                let l = label as usize;
                if !(label >= 0.0 && label.fract() == 0.0 && l < cols) {
                    return Err(DeviceError::Shape {
                        op: "sparse_categorical_crossentropy",
                        detail: format!("label {label} is outside [0, {cols})"),
                    });
                }
                if from_logits {
                    let (max, lse) = log_sum_exp(pr);
                    for i in 0..cols {
                        gr[i] = (pr[i] - max - lse).exp() * scale;
                    }
                    gr[l] -= scale;
                    -(pr[l] - max - lse)
                } else {
                    // Keras clips, takes the log and feeds it to the logits kernel, which
                    // renormalises: loss = log(sum q) - log q_l over clipped q.
                    let mut total = 0.0;
                    for i in 0..cols {
                        let (q, pass) = clip(pr[i]);
                        total += q;
                        gr[i] = pass;
                    }
                    let ql = clip(pr[l]).0;
                    for i in 0..cols {
                        let q = clip(pr[i]).0;
                        let d = if i == l { 1.0 / q } else { 0.0 };
                        gr[i] *= (1.0 / total - d) * scale;
                    }
                    total.ln() - ql.ln()
                }
            }
        };
    }
    Ok(())
}

#[inline(always)]
fn sign(e: f32) -> f32 {
    if e > 0.0 {
        1.0
    } else if e < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// The row maximum and `log(sum(exp(x - max)))`.
#[inline(always)]
fn log_sum_exp(x: &[f32]) -> (f32, f32) {
    let max = x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v));
    let s: f32 = x.iter().map(|v| (v - max).exp()).sum();
    (max, s.ln())
}
