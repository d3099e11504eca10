//! The loss functions of `tf.keras.losses` (`mse`/`MSE`, `mae`/`MAE`, `huber`,
//! `binary_crossentropy`,
//! `categorical_crossentropy`, `sparse_categorical_crossentropy`): Keras 3's argument
//! handling (the target converted to the prediction's dtype, ranks matched by squeezing or
//! expanding a trailing axis of one, label smoothing, `ignore_class`), then the op
//! library's loss ops, run in the session's execution context so a tape records them.
//! Each returns the loss per example.

use super::super::convert::tensor_of;
use super::super::eager::{apply, run};
use super::super::ops::{arg, flag};
use super::super::{given, TfError};
use crate::lang::{Ctx, NativeFn, NativeModule, PyResult, Value};
use crate::ops::{self, Eager, Loss, OpResult, Tensor};
use crate::tensor::DType;

/// Keras's `squeeze_or_expand_to_same_rank`: ranks that differ by one are matched at a
/// trailing axis of length one.
fn same_rank(e: &mut Eager, t: Tensor, p: Tensor) -> OpResult<(Tensor, Tensor)> {
    let (rt, rp) = (t.ndim(), p.ndim());
    if rt == rp + 1 && t.shape().last() == Some(&1) {
        if rp == 1 {
            return Ok((t, ops::expand_dims(e, &p, -1)?));
        }
        return Ok((ops::squeeze(e, &t, &[-1])?, p));
    }
    if rp == rt + 1 && p.shape().last() == Some(&1) {
        if rt == 1 {
            return Ok((ops::expand_dims(e, &t, -1)?, p));
        }
        return Ok((t, ops::squeeze(e, &p, &[-1])?));
    }
    Ok((t, p))
}

fn cast_to(e: &mut Eager, t: &Tensor, d: DType) -> OpResult<Tensor> {
    if t.dtype() == d {
        Ok(t.clone())
    } else {
        ops::cast(e, t, d)
    }
}

/// `y_true * (1 - s) + s * k`.
fn smooth(e: &mut Eager, t: &Tensor, s: f64, k: f64) -> OpResult<Tensor> {
    let kept = ops::scale(e, t, 1.0 - s)?;
    ops::add(e, &kept, &Tensor::scalar(s * k, t.dtype()))
}

fn only_last_axis(name: &str, v: Option<&Value>) -> PyResult<()> {
    match v {
        None | Some(Value::Int(-1)) => Ok(()),
        Some(other) => Err(TfError::Value(format!(
            "{name}: only axis=-1 is supported here. Received: axis={}",
            other
                .as_int()
                .map_or_else(|_| other.type_name(), |a| a.to_string())
        ))
        .into()),
    }
}

/// `mean_squared_error(y_true, y_pred)` and the other regression losses.
fn regression(name: &'static str, kind: fn(f64) -> Loss, delta_arg: bool) -> Value {
    NativeFn::value(name, "loss(y_true, y_pred)", move |args, ctx| {
        let names: &[&str] = if delta_arg {
            &["y_true", "y_pred", "delta"]
        } else {
            &["y_true", "y_pred"]
        };
        let s = args.bind(name, names, 2)?;
        let delta = if delta_arg {
            given(&s[2]).map_or(Ok(1.0), |v| v.as_float())?
        } else {
            1.0
        };
        let p = tensor_of(arg(&s, 1), ctx)?;
        let t = super::super::convert::tensor_as(arg(&s, 0), p.dtype(), ctx)?;
        apply(ctx, |e| {
            let t = cast_to(e, &t, p.dtype())?;
            let (t, p) = same_rank(e, t, p)?;
            ops::loss(e, kind(delta), &t, &p)
        })
    })
}

/// `binary_crossentropy` or `categorical_crossentropy(y_true, y_pred, from_logits=False,
/// label_smoothing=0.0, axis=-1)`: the target cast to the prediction's dtype and smoothed
/// towards `1/2` (binary) or `1/classes` (categorical).
fn crossentropy(name: &'static str, categorical: bool) -> Value {
    NativeFn::value(
        name,
        "loss(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1)",
        move |args, ctx| {
            let s = args.bind(
                name,
                &["y_true", "y_pred", "from_logits", "label_smoothing", "axis"],
                2,
            )?;
            only_last_axis(name, given(&s[4]))?;
            let from_logits = flag(&s, 2, false)?;
            let ls = given(&s[3]).map_or(Ok(0.0), |v| v.as_float())?;
            let p = tensor_of(arg(&s, 1), ctx)?;
            let t = tensor_of(arg(&s, 0), ctx)?;
            let (kind, toward) = if categorical {
                let k = p.shape().last().copied().unwrap_or(1).max(1) as f64;
                (Loss::CategoricalCrossentropy { from_logits }, 1.0 / k)
            } else {
                (Loss::BinaryCrossentropy { from_logits }, 0.5)
            };
            apply(ctx, |e| {
                let mut t = cast_to(e, &t, p.dtype())?;
                if ls != 0.0 {
                    t = smooth(e, &t, ls, toward)?;
                }
                ops::loss(e, kind, &t, &p)
            })
        },
    )
}

fn sparse_categorical_crossentropy(args: &crate::lang::Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "sparse_categorical_crossentropy",
        &["y_true", "y_pred", "from_logits", "ignore_class", "axis"],
        2,
    )?;
    only_last_axis("sparse_categorical_crossentropy", given(&s[4]))?;
    let kind = Loss::SparseCategoricalCrossentropy {
        from_logits: flag(&s, 2, false)?,
    };
    let ignore = given(&s[3]).map(|v| v.as_int()).transpose()?;
    let p = tensor_of(arg(&s, 1), ctx)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let (t, p) = run(ctx, |e| {
        // Keras casts the labels to int64 and drops a trailing axis of one.
        let mut t = cast_to(e, &t, DType::I64)?;
        if t.ndim() == p.ndim() && t.shape().last() == Some(&1) {
            t = ops::squeeze(e, &t, &[-1])?;
        }
        Ok((t, p))
    })?;
    if t.shape() != &p.shape()[..p.ndim().saturating_sub(1)] {
        return Err(TfError::Value(format!(
            "Argument `output` must have rank (ndim) `target.ndim - 1`. Received: target.shape={}, output.shape={}",
            crate::tensor::shape_str(t.shape()),
            crate::tensor::shape_str(p.shape())
        ))
        .into());
    }
    let Some(ignore) = ignore else {
        return apply(ctx, |e| ops::loss(e, kind, &t, &p));
    };
    // Keras's ignore_class: those examples count as class 0 with a zeroed prediction,
    // and their loss is zero.
    apply(ctx, |e| {
        let ig = Tensor::scalar(ignore as f64, DType::I64);
        let valid = ops::binary(e, ops::Binary::NotEqual, &t, &ig)?;
        let zeros_t = ops::zeros_like(e, &t)?;
        let t = ops::select(e, &valid, &t, &zeros_t)?;
        let valid_e = ops::expand_dims(e, &valid, -1)?;
        let zeros_p = ops::zeros_like(e, &p)?;
        let p = ops::select(e, &valid_e, &p, &zeros_p)?;
        let l = ops::loss(e, kind, &t, &p)?;
        let zeros_l = ops::zeros_like(e, &l)?;
        ops::select(e, &valid, &l, &zeros_l)
    })
}

/// Adds the loss functions to `tf.keras.losses`, under the names TF 2.21's `tf.keras` has.
pub fn register(losses: &NativeModule) {
    // tf.keras (Keras 3's TF namespace) exports these two under their short names only.
    let mse = regression("mean_squared_error", |_| Loss::MeanSquaredError, false);
    let mae = regression("mean_absolute_error", |_| Loss::MeanAbsoluteError, false);
    for n in ["mse", "MSE"] {
        losses.set(n, mse.clone());
    }
    for n in ["mae", "MAE"] {
        losses.set(n, mae.clone());
    }
    losses.set(
        "huber",
        regression("huber", |delta| Loss::Huber { delta }, true),
    );
    losses.set(
        "binary_crossentropy",
        crossentropy("binary_crossentropy", false),
    );
    losses.set(
        "categorical_crossentropy",
        crossentropy("categorical_crossentropy", true),
    );
    losses.set(
        "sparse_categorical_crossentropy",
        super::super::func(
            "sparse_categorical_crossentropy",
            "sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1)",
            sparse_categorical_crossentropy,
        ),
    );
}
