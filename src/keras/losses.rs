//! Keras 3's losses on the op library: the loss functions (`mean_squared_error`,
//! `huber`, `kl_divergence`, the hinges, the cross-entropies, ...) with Keras's argument
//! handling (the target cast to the prediction's dtype, ranks matched at a trailing axis
//! of one, label smoothing, `ignore_class`), and what a `Loss` object adds when called:
//! both inputs converted to float32, the sample weights and the mask merged, and the
//! reduction (`sum_over_batch_size`, `sum`, `mean`, `mean_with_sample_weight`, none),
//! divided by the replicas in sync as Keras divides under a strategy. Every value is
//! computed by ops run through the caller's execution context, so a tape records the loss
//! and its gradient is the gradient of the ops Keras composes. The six losses with a fused
//! op (`ops::Loss`, the device kernel `fit` uses) run it when the shapes match exactly;
//! the others, and those with broadcasting shapes, are compositions of ops as Keras
//! writes them. It must not touch the language or the bindings.

use crate::ops::{self, Activation, Binary, Eager, ErrorClass, Loss, OpError, OpResult};
use crate::ops::{ReduceKind, Tensor, Unary};
use crate::tensor::DType;

/// Keras's `backend.epsilon()`.
pub const EPSILON: f64 = 1e-7;

/// A Keras loss function with its arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossFn {
    MeanSquaredError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
    Huber {
        delta: f64,
    },
    LogCosh,
    BinaryCrossentropy {
        from_logits: bool,
        label_smoothing: f64,
    },
    CategoricalCrossentropy {
        from_logits: bool,
        label_smoothing: f64,
    },
    SparseCategoricalCrossentropy {
        from_logits: bool,
        ignore_class: Option<i64>,
    },
    KlDivergence,
    Hinge,
    SquaredHinge,
    CategoricalHinge,
    Poisson,
    CosineSimilarity {
        axis: i64,
    },
}

impl LossFn {
    /// The binary (`binary`) or categorical cross-entropy: one constructor for the loss
    /// functions and the loss classes, which both choose between them by a flag.
    pub fn crossentropy(binary: bool, from_logits: bool, label_smoothing: f64) -> LossFn {
        if binary {
            LossFn::BinaryCrossentropy {
                from_logits,
                label_smoothing,
            }
        } else {
            LossFn::CategoricalCrossentropy {
                from_logits,
                label_smoothing,
            }
        }
    }

    /// The Keras class (`keras.losses.MeanSquaredError`).
    pub fn class_name(&self) -> &'static str {
        match self {
            LossFn::MeanSquaredError => "MeanSquaredError",
            LossFn::MeanAbsoluteError => "MeanAbsoluteError",
            LossFn::MeanAbsolutePercentageError => "MeanAbsolutePercentageError",
            LossFn::MeanSquaredLogarithmicError => "MeanSquaredLogarithmicError",
            LossFn::Huber { .. } => "Huber",
            LossFn::LogCosh => "LogCosh",
            LossFn::BinaryCrossentropy { .. } => "BinaryCrossentropy",
            LossFn::CategoricalCrossentropy { .. } => "CategoricalCrossentropy",
            LossFn::SparseCategoricalCrossentropy { .. } => "SparseCategoricalCrossentropy",
            LossFn::KlDivergence => "KLDivergence",
            LossFn::Hinge => "Hinge",
            LossFn::SquaredHinge => "SquaredHinge",
            LossFn::CategoricalHinge => "CategoricalHinge",
            LossFn::Poisson => "Poisson",
            LossFn::CosineSimilarity { .. } => "CosineSimilarity",
        }
    }

    /// The Python function a loss object wraps (`mean_squared_error`, `log_cosh`).
    pub fn function_name(&self) -> &'static str {
        match self {
            LossFn::MeanSquaredError => "mean_squared_error",
            LossFn::MeanAbsoluteError => "mean_absolute_error",
            LossFn::MeanAbsolutePercentageError => "mean_absolute_percentage_error",
            LossFn::MeanSquaredLogarithmicError => "mean_squared_logarithmic_error",
            LossFn::Huber { .. } => "huber",
            LossFn::LogCosh => "log_cosh",
            LossFn::BinaryCrossentropy { .. } => "binary_crossentropy",
            LossFn::CategoricalCrossentropy { .. } => "categorical_crossentropy",
            LossFn::SparseCategoricalCrossentropy { .. } => "sparse_categorical_crossentropy",
            LossFn::KlDivergence => "kl_divergence",
            LossFn::Hinge => "hinge",
            LossFn::SquaredHinge => "squared_hinge",
            LossFn::CategoricalHinge => "categorical_hinge",
            LossFn::Poisson => "poisson",
            LossFn::CosineSimilarity { .. } => "cosine_similarity",
        }
    }

    /// The name a loss object gets by default (`Huber()` is `huber_loss`).
    pub fn default_name(&self) -> &'static str {
        match self {
            LossFn::Huber { .. } => "huber_loss",
            other => other.function_name(),
        }
    }

    /// The fused op computing this loss per example, where there is one.
    fn fused(&self) -> Option<Loss> {
        Some(match *self {
            LossFn::MeanSquaredError => Loss::MeanSquaredError,
            LossFn::MeanAbsoluteError => Loss::MeanAbsoluteError,
            LossFn::Huber { delta } => Loss::Huber { delta },
            LossFn::BinaryCrossentropy { from_logits, .. } => {
                Loss::BinaryCrossentropy { from_logits }
            }
            LossFn::CategoricalCrossentropy { from_logits, .. } => {
                Loss::CategoricalCrossentropy { from_logits }
            }
            LossFn::SparseCategoricalCrossentropy { from_logits, .. } => {
                Loss::SparseCategoricalCrossentropy { from_logits }
            }
            _ => return None,
        })
    }
}

/// Per-example losses, and for `ignore_class` the mask of the examples that count.
#[derive(Debug, Clone)]
pub struct PerExample {
    pub values: Tensor,
    pub mask: Option<Tensor>,
}

/// Keras's `squeeze_or_expand_to_same_rank`: ranks that differ by one are matched at a
/// trailing axis of length one (expanding a rank-1 operand when `expand_rank_1`).
pub fn same_rank(
    e: &mut Eager,
    a: Tensor,
    b: Tensor,
    expand_rank_1: bool,
) -> OpResult<(Tensor, Tensor)> {
    let (ra, rb) = (a.ndim(), b.ndim());
    if ra == rb + 1 && a.shape().last() == Some(&1) {
        if rb == 1 && expand_rank_1 {
            return Ok((a, ops::expand_dims(e, &b, -1)?));
        }
        return Ok((ops::squeeze(e, &a, &[-1])?, b));
    }
    if rb == ra + 1 && b.shape().last() == Some(&1) {
        if ra == 1 && expand_rank_1 {
            return Ok((ops::expand_dims(e, &a, -1)?, b));
        }
        return Ok((a, ops::squeeze(e, &b, &[-1])?));
    }
    Ok((a, b))
}

/// `t` as `d`, cast when it is not already.
pub fn cast_to(e: &mut Eager, t: &Tensor, d: DType) -> OpResult<Tensor> {
    if t.dtype() == d {
        Ok(t.clone())
    } else {
        ops::cast(e, t, d)
    }
}

fn c(v: f64, like: &Tensor) -> Tensor {
    Tensor::scalar(v, like.dtype())
}

fn mean_last(e: &mut Eager, x: &Tensor) -> OpResult<Tensor> {
    ops::reduce_mean(e, x, Some(vec![-1]), false)
}

/// `a / b`, and zero where `b` is zero (TF's `div_no_nan`), with a gradient that stays
/// finite there.
pub fn div_no_nan(e: &mut Eager, a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
    let zero = c(0.0, b);
    let is_zero = ops::binary(e, Binary::Equal, b, &zero)?;
    let one = ops::ones_like(e, b)?;
    let safe = ops::select(e, &is_zero, &one, b)?;
    let q = ops::div(e, a, &safe)?;
    let zeros = ops::zeros_like(e, &q)?;
    ops::select(e, &is_zero, &zeros, &q)
}

/// Keras's `normalize(x, axis, order=2)`: `x * min(rsqrt(sum(x^2)), 1/epsilon)`.
fn l2_normalize(e: &mut Eager, x: &Tensor, axis: i64) -> OpResult<Tensor> {
    let sq = ops::square(e, x)?;
    let s = ops::reduce_sum(e, &sq, Some(vec![axis]), true)?;
    let inv = ops::unary(e, Unary::Rsqrt, &s)?;
    let inv = ops::binary(e, Binary::Minimum, &inv, &c(1.0 / EPSILON, x))?;
    ops::mul(e, x, &inv)
}

/// Hinge targets given as 0/1 become -1/1 (Keras converts only when every label is 0 or
/// 1; the decision is taken on the values at hand).
fn hinge_labels(e: &mut Eager, t: &Tensor) -> OpResult<Tensor> {
    let (_, v) = t.value().to_f64_vec();
    if v.iter().all(|&x| x == 0.0 || x == 1.0) {
        let twice = ops::scale(e, t, 2.0)?;
        ops::sub(e, &twice, &c(1.0, t))
    } else {
        Ok(t.clone())
    }
}

fn only_last_axis(name: &str, axis: i64) -> OpResult<()> {
    if axis == -1 {
        Ok(())
    } else {
        Err(OpError::new(
            ErrorClass::Value,
            format!("{name}: only axis=-1 is supported here. Received: axis={axis}"),
        ))
    }
}

/// The loss function `f(y_true, y_pred)` as `tf.keras.losses.<name>` computes it: the
/// losses per example (the prediction's shape without its last axis).
pub fn per_example(e: &mut Eager, f: LossFn, t: &Tensor, p: &Tensor) -> OpResult<PerExample> {
    let values = match f {
        LossFn::SparseCategoricalCrossentropy {
            from_logits,
            ignore_class,
        } => return sparse_categorical(e, from_logits, ignore_class, t, p),
        LossFn::BinaryCrossentropy {
            label_smoothing, ..
        }
        | LossFn::CategoricalCrossentropy {
            label_smoothing, ..
        } => {
            let mut t = cast_to(e, t, p.dtype())?;
            if label_smoothing != 0.0 {
                let toward = match f {
                    LossFn::BinaryCrossentropy { .. } => 0.5,
                    _ => 1.0 / t.shape().last().copied().unwrap_or(1).max(1) as f64,
                };
                let kept = ops::scale(e, &t, 1.0 - label_smoothing)?;
                t = ops::add(e, &kept, &c(label_smoothing * toward, &kept))?;
            }
            let kind = f
                .fused()
                .ok_or_else(|| OpError::internal("no fused loss"))?;
            ops::loss(e, kind, &t, p)?
        }
        LossFn::KlDivergence => {
            let t = cast_to(e, t, p.dtype())?;
            let (lo, hi) = (c(EPSILON, p), c(1.0, p));
            let t = ops::clip_by_value(e, &t, &lo, &hi)?;
            let q = ops::clip_by_value(e, p, &lo, &hi)?;
            let r = ops::div(e, &t, &q)?;
            let l = ops::unary(e, Unary::Log, &r)?;
            let x = ops::mul(e, &t, &l)?;
            ops::reduce_sum(e, &x, Some(vec![-1]), false)?
        }
        LossFn::Poisson => {
            let t = cast_to(e, t, p.dtype())?;
            let pe = ops::add(e, p, &c(EPSILON, p))?;
            let l = ops::unary(e, Unary::Log, &pe)?;
            let tl = ops::mul(e, &t, &l)?;
            let d = ops::sub(e, p, &tl)?;
            mean_last(e, &d)?
        }
        LossFn::Hinge | LossFn::SquaredHinge => {
            let t = cast_to(e, t, p.dtype())?;
            let t = hinge_labels(e, &t)?;
            let tp = ops::mul(e, &t, p)?;
            let m = ops::sub(e, &c(1.0, &tp), &tp)?;
            let mut h = ops::binary(e, Binary::Maximum, &m, &c(0.0, &m))?;
            if f == LossFn::SquaredHinge {
                h = ops::square(e, &h)?;
            }
            mean_last(e, &h)?
        }
        LossFn::CategoricalHinge => {
            let t = cast_to(e, t, p.dtype())?;
            let tp = ops::mul(e, &t, p)?;
            let pos = ops::reduce_sum(e, &tp, Some(vec![-1]), false)?;
            let one_t = ops::sub(e, &c(1.0, &t), &t)?;
            let np = ops::mul(e, &one_t, p)?;
            let neg = ops::reduce(e, &np, ReduceKind::Max, Some(vec![-1]), false)?;
            let d = ops::sub(e, &neg, &pos)?;
            let d = ops::add(e, &d, &c(1.0, &d))?;
            ops::binary(e, Binary::Maximum, &d, &c(0.0, &d))?
        }
        _ => {
            let t = cast_to(e, t, p.dtype())?;
            let (t, p) = same_rank(e, t, p.clone(), true)?;
            regression(e, f, &t, &p)?
        }
    };
    Ok(PerExample { values, mask: None })
}

/// The regression losses, after the ranks are matched.
fn regression(e: &mut Eager, f: LossFn, t: &Tensor, p: &Tensor) -> OpResult<Tensor> {
    if let Some(kind) = f.fused() {
        if t.shape() == p.shape() && p.ndim() > 0 {
            return ops::loss(e, kind, t, p);
        }
    }
    match f {
        LossFn::MeanSquaredError => {
            let d = ops::sub(e, t, p)?;
            let s = ops::square(e, &d)?;
            mean_last(e, &s)
        }
        LossFn::MeanAbsoluteError => {
            let d = ops::sub(e, t, p)?;
            let a = ops::unary(e, Unary::Abs, &d)?;
            mean_last(e, &a)
        }
        LossFn::Huber { delta } => {
            let err = ops::sub(e, p, t)?;
            let abs = ops::unary(e, Unary::Abs, &err)?;
            let small = ops::binary(e, Binary::LessEqual, &abs, &c(delta, &abs))?;
            let sq = ops::square(e, &err)?;
            let quad = ops::scale(e, &sq, 0.5)?;
            let lin = ops::scale(e, &abs, delta)?;
            let lin = ops::sub(e, &lin, &c(0.5 * delta * delta, &lin))?;
            let h = ops::select(e, &small, &quad, &lin)?;
            mean_last(e, &h)
        }
        LossFn::MeanAbsolutePercentageError => {
            let d = ops::sub(e, t, p)?;
            let at = ops::unary(e, Unary::Abs, t)?;
            let den = ops::binary(e, Binary::Maximum, &at, &c(EPSILON, &at))?;
            let q = ops::div(e, &d, &den)?;
            let a = ops::unary(e, Unary::Abs, &q)?;
            let m = mean_last(e, &a)?;
            ops::scale(e, &m, 100.0)
        }
        LossFn::MeanSquaredLogarithmicError => {
            let mut logs = Vec::with_capacity(2);
            for x in [p, t] {
                let m = ops::binary(e, Binary::Maximum, x, &c(EPSILON, x))?;
                let m = ops::add(e, &m, &c(1.0, &m))?;
                logs.push(ops::unary(e, Unary::Log, &m)?);
            }
            let d = ops::sub(e, &logs[0], &logs[1])?;
            let s = ops::square(e, &d)?;
            mean_last(e, &s)
        }
        LossFn::LogCosh => {
            let x = ops::sub(e, p, t)?;
            let m2 = ops::scale(e, &x, -2.0)?;
            let sp = ops::activate(e, Activation::Softplus, &m2)?;
            let y = ops::add(e, &x, &sp)?;
            let y = ops::sub(e, &y, &c(std::f64::consts::LN_2, &y))?;
            mean_last(e, &y)
        }
        LossFn::CosineSimilarity { axis } => {
            let pn = l2_normalize(e, p, axis)?;
            let tn = l2_normalize(e, t, axis)?;
            let prod = ops::mul(e, &tn, &pn)?;
            let s = ops::reduce_sum(e, &prod, Some(vec![axis]), false)?;
            ops::neg(e, &s)
        }
        other => Err(OpError::internal(format!(
            "{} is not a regression loss",
            other.function_name()
        ))),
    }
}

/// `sparse_categorical_crossentropy(y_true, y_pred, from_logits, ignore_class)`: the
/// labels as int64 without a trailing axis of one; with `ignore_class`, those examples
/// count as class 0 against a zeroed prediction, lose nothing, and are masked out.
fn sparse_categorical(
    e: &mut Eager,
    from_logits: bool,
    ignore_class: Option<i64>,
    t: &Tensor,
    p: &Tensor,
) -> OpResult<PerExample> {
    let kind = Loss::SparseCategoricalCrossentropy { from_logits };
    let mut t = cast_to(e, t, DType::I64)?;
    if t.ndim() == p.ndim() && t.shape().last() == Some(&1) {
        t = ops::squeeze(e, &t, &[-1])?;
    }
    if t.shape() != &p.shape()[..p.ndim().saturating_sub(1)] {
        return Err(OpError::new(
            ErrorClass::Value,
            format!(
                "Argument `output` must have rank (ndim) `target.ndim - 1`. Received: target.shape={}, output.shape={}",
                crate::tensor::shape_str(t.shape()),
                crate::tensor::shape_str(p.shape())
            ),
        ));
    }
    let Some(ignore) = ignore_class else {
        return Ok(PerExample {
            values: ops::loss(e, kind, &t, p)?,
            mask: None,
        });
    };
    let ig = Tensor::scalar(ignore as f64, DType::I64);
    let valid = ops::binary(e, Binary::NotEqual, &t, &ig)?;
    let zeros_t = ops::zeros_like(e, &t)?;
    let t = ops::select(e, &valid, &t, &zeros_t)?;
    let valid_e = ops::expand_dims(e, &valid, -1)?;
    let zeros_p = ops::zeros_like(e, p)?;
    let p = ops::select(e, &valid_e, p, &zeros_p)?;
    let l = ops::loss(e, kind, &t, &p)?;
    let zeros_l = ops::zeros_like(e, &l)?;
    Ok(PerExample {
        values: ops::select(e, &valid, &l, &zeros_l)?,
        mask: Some(valid),
    })
}

/// How a loss object reduces the weighted losses of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// `'none'` or `None`: the losses as they are.
    None,
    Sum,
    SumOverBatchSize,
    Mean,
    MeanWithSampleWeight,
}

/// Keras's `apply_mask`: the mask folded into the sample weights (for the mean
/// reductions, the examples that count are weighted up so the mean is over them).
fn apply_mask(
    e: &mut Eager,
    weight: Option<Tensor>,
    mask: Option<&Tensor>,
    dtype: DType,
    reduction: Reduction,
) -> OpResult<Option<Tensor>> {
    let Some(mask) = mask else {
        return Ok(weight);
    };
    let fmask = cast_to(e, mask, dtype)?;
    let float_mask = if matches!(reduction, Reduction::Mean | Reduction::SumOverBatchSize) {
        let total = Tensor::scalar(mask.size() as f64, dtype);
        let valid = ops::reduce_sum(e, &fmask, None, false)?;
        let w = div_no_nan(e, &total, &valid)?;
        let zero = Tensor::scalar(0.0, dtype);
        let bmask = cast_to(e, mask, DType::Bool)?;
        ops::select(e, &bmask, &w, &zero)?
    } else {
        fmask
    };
    Ok(Some(match weight {
        Some(w) => {
            let w = cast_to(e, &w, dtype)?;
            let (m, w) = same_rank(e, float_mask, w, true)?;
            ops::mul(e, &w, &m)?
        }
        None => float_mask,
    }))
}

/// Keras's `reduce_weighted_values`: losses times the (masked) sample weights, then the
/// reduction; the mean reductions are divided by `replicas` when more than one replica
/// is in sync, as Keras scales a loss for distribution.
pub fn reduce_weighted(
    e: &mut Eager,
    values: &Tensor,
    sample_weight: Option<&Tensor>,
    mask: Option<&Tensor>,
    reduction: Reduction,
    replicas: usize,
) -> OpResult<Tensor> {
    let dtype = values.dtype();
    let weight = match sample_weight {
        Some(w) => Some(cast_to(e, w, dtype)?),
        None => None,
    };
    let weight = apply_mask(e, weight, mask, dtype, reduction)?;
    let mut values = values.clone();
    if let Some(w) = &weight {
        let (v, w) = same_rank(e, values, w.clone(), true)?;
        values = ops::mul(e, &v, &w)?;
    }
    if reduction == Reduction::None || values.ndim() == 0 || values.shape() == [0] {
        return Ok(values);
    }
    let total = ops::reduce_sum(e, &values, None, false)?;
    if reduction == Reduction::Sum {
        return Ok(total);
    }
    let divisor = match (&weight, reduction) {
        (Some(w), Reduction::MeanWithSampleWeight) => ops::reduce_sum(e, w, None, false)?,
        _ => Tensor::scalar(values.size() as f64, dtype),
    };
    let loss = div_no_nan(e, &total, &divisor)?;
    if replicas > 1 {
        return ops::mul(e, &loss, &Tensor::scalar(1.0 / replicas as f64, dtype));
    }
    Ok(loss)
}

/// Calling a loss object: `loss(y_true, y_pred, sample_weight)` as Keras's `Loss.__call__`
/// computes it (inputs converted to the loss's dtype, float32 by default, ranks matched,
/// the function, the reduction).
#[allow(clippy::too_many_arguments)]
pub fn call(
    e: &mut Eager,
    f: LossFn,
    reduction: Reduction,
    t: &Tensor,
    p: &Tensor,
    sample_weight: Option<&Tensor>,
    dtype: DType,
    replicas: usize,
) -> OpResult<Tensor> {
    let p = cast_to(e, p, dtype)?;
    let t = cast_to(e, t, dtype)?;
    let (t, p) = same_rank(e, t, p, true)?;
    let per = per_example(e, f, &t, &p)?;
    let values = cast_to(e, &per.values, dtype)?;
    reduce_weighted(
        e,
        &values,
        sample_weight,
        per.mask.as_ref(),
        reduction,
        replicas,
    )
}

/// Checks that a cross-entropy's `axis` is the last one (the only one computed here).
pub fn check_axis(name: &str, axis: i64) -> OpResult<()> {
    only_last_axis(name, axis)
}
