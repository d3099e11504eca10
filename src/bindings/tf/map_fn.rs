//! `tf.map_fn(fn, elems, fn_output_signature=None)`: `elems` (a tensor, or a tuple or list
//! of tensors with one leading length) is unstacked along axis 0 by the op library, `fn`
//! runs on each row (a tuple or list of rows for several tensors), and the results are
//! stacked again, so a tape or a `tf.function` trace sees the unstack and stack ops and
//! the gradient flows through them. The result's dtypes are `fn_output_signature`'s, or
//! `elems`'s when it is not given; a result of another dtype or shape is refused with
//! TensorFlow's texts.

use super::convert::{dtype_arg, tensor_of};
use super::eager::{run, wrap};
use super::function::spec::TensorSpec;
use super::ops::arg;
use super::{given, TfError};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::ops::{self, Tensor};
use crate::tensor::{shape_str, DType};

/// The dtype one part of `fn_output_signature` names: a dtype or a `tf.TensorSpec`.
fn signature_dtype(v: &Value, ctx: &mut dyn Ctx) -> PyResult<DType> {
    if let Some(spec) = v.downcast::<TensorSpec>() {
        return Ok(spec.dtype);
    }
    Ok(dtype_arg(Some(v), ctx)?.unwrap_or(DType::F32))
}

pub fn map_fn(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "map_fn",
        &[
            "fn",
            "elems",
            "dtype",
            "parallel_iterations",
            "back_prop",
            "swap_memory",
            "infer_shape",
            "name",
            "fn_output_signature",
        ],
        2,
    )?;
    let f = arg(&s, 0).clone();
    let elems = arg(&s, 1).clone();
    // Several tensors come as a tuple or list, and `fn` gets the same kind of sequence.
    let (parts, as_list) = match &elems {
        Value::Tuple(t) => (t.to_vec(), Some(false)),
        Value::List(l) => (l.borrow().clone(), Some(true)),
        v => (vec![v.clone()], None),
    };
    let tensors = parts
        .iter()
        .map(|p| tensor_of(p, ctx))
        .collect::<PyResult<Vec<_>>>()?;
    if tensors.is_empty() || tensors.iter().any(|t| t.ndim() == 0) {
        return Err(TfError::Value(
            "Elements in elems must be 1+ dimensional Tensors, not scalars".into(),
        )
        .into());
    }
    let signature = given(&s[8]).or(given(&s[2])).cloned();
    let (wanted, several) = match &signature {
        None => (
            tensors.iter().map(|t| t.dtype()).collect::<Vec<_>>(),
            as_list.is_some(),
        ),
        Some(Value::Tuple(t)) => (
            t.iter()
                .map(|v| signature_dtype(v, ctx))
                .collect::<PyResult<Vec<_>>>()?,
            true,
        ),
        Some(v) => (vec![signature_dtype(v, ctx)?], false),
    };
    let rows = tensors
        .iter()
        .map(|t| run(ctx, |e| ops::unstack(e, t, 0)))
        .collect::<PyResult<Vec<_>>>()?;
    let n = rows.first().map_or(0, |r| r.len());
    let mut outputs: Vec<Vec<Tensor>> = vec![Vec::with_capacity(n); wanted.len()];
    for i in 0..n {
        let row: Vec<Value> = rows
            .iter()
            .map(|r| r.get(i).cloned().map(wrap).unwrap_or(Value::None))
            .collect();
        let arg = match as_list {
            None => row.into_iter().next().unwrap_or(Value::None),
            Some(false) => Value::tuple(row),
            Some(true) => Value::list(row),
        };
        let out = ctx.call(&f, Args::new(vec![arg]))?;
        let got = match (&out, several) {
            (Value::Tuple(t), true) => t.to_vec(),
            (Value::List(l), true) => l.borrow().clone(),
            (v, _) => vec![v.clone()],
        };
        if got.len() != wanted.len() {
            return Err(TfError::Value(
                "The two structures don't have the same nested structure.".into(),
            )
            .into());
        }
        for ((slot, v), want) in outputs.iter_mut().zip(got).zip(&wanted) {
            let t = tensor_of(&v, ctx)?;
            if t.dtype() != *want {
                return Err(PyErr::new(
                    "InvalidArgumentError",
                    format!(
                        "TensorArray dtype is {} but Op is trying to write dtype {} ",
                        want.name(),
                        t.dtype().name()
                    ),
                ));
            }
            if let Some(first) = slot.first().filter(|f| f.shape() != t.shape()) {
                return Err(TfError::Value(format!(
                    "Incompatible shape for value ({}), expected ({})",
                    shape_str(t.shape()),
                    shape_str(first.shape())
                ))
                .into());
            }
            slot.push(t);
        }
    }
    let mut stacked = Vec::with_capacity(wanted.len());
    for (slot, want) in outputs.iter().zip(&wanted) {
        stacked.push(if slot.is_empty() {
            // No rows: TF gives an empty vector of the wanted dtype.
            wrap(run(ctx, |_| Tensor::full(&[0], 0.0, *want))?)
        } else {
            wrap(run(ctx, |e| ops::stack(e, slot, 0))?)
        });
    }
    Ok(if several {
        Value::tuple(stacked)
    } else {
        stacked.into_iter().next().unwrap_or(Value::None)
    })
}
