//! `np.split`, `np.array_split` and `np.take`: pieces of an array along one axis, cut by
//! numpy's slicing rules (bounds clamp, crossing bounds give an empty piece), with
//! numpy's errors. Built on the indexing path (`NdArray::get`), so dtypes are kept and
//! an index out of bounds reads exactly as it does for `a[i]`.

use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::tensor::array::norm_axis;
use crate::tensor::{IndexItem, NdArray};

use super::convert::{array_value, as_array, err, int_of, to_array, wrap};

/// `a[(:,) * axis + (start:stop,)]`.
fn piece(a: &NdArray, axis: usize, start: i64, stop: i64) -> PyResult<Value> {
    let mut items = vec![IndexItem::Slice(None, None, None); axis];
    items.push(IndexItem::Slice(Some(start), Some(stop), None));
    a.get(&items).map(array_value).map_err(err)
}

/// An int (Python or numpy) stands for a number of sections; anything with a length
/// for the split points.
fn sections(v: &Value) -> Option<i64> {
    if as_array(v).is_some_and(|a| a.ndim() > 0) {
        return None;
    }
    int_of(v).ok()
}

/// `np.split` (`equal`: the sections must divide the axis) and `np.array_split`.
pub fn split_fn(func: &str, equal: bool, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(func, &["ary", "indices_or_sections", "axis"], 2)?;
    let a = to_array(s[0].as_ref().unwrap_or(&Value::None), None, ctx)?;
    let how = s[1].clone().unwrap_or(Value::None);
    let axis = s[2].as_ref().map(int_of).transpose()?.unwrap_or(0);
    // numpy reads `ary.shape[axis]` first: a bad axis is the tuple's IndexError.
    let ndim = a.ndim() as i64;
    let axis = if axis < 0 { axis + ndim } else { axis };
    let len = usize::try_from(axis)
        .ok()
        .and_then(|k| a.shape().get(k).copied())
        .ok_or_else(|| PyErr::index_error("tuple index out of range"))? as i64;
    let axis = axis as usize;
    let bounds: Vec<i64> = match sections(&how) {
        Some(n) => {
            if equal && n == 0 {
                return Err(PyErr::new("ZeroDivisionError", "integer modulo by zero"));
            }
            if equal && len % n != 0 {
                return Err(PyErr::value_error(
                    "array split does not result in an equal division",
                ));
            }
            if n <= 0 {
                return Err(PyErr::value_error("number sections must be larger than 0."));
            }
            // The first `len % n` sections are one longer.
            let (each, extra) = (len / n, len % n);
            let mut b = vec![0];
            for i in 0..n {
                b.push(b[i as usize] + each + i64::from(i < extra));
            }
            b
        }
        None => {
            let mut b = vec![0];
            for v in ctx.iterate(&how)? {
                b.push(int_of(&v)?);
            }
            b.push(len);
            b
        }
    };
    let pieces = bounds
        .windows(2)
        .map(|w| piece(&a, axis, w[0], w[1]))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Value::list(pieces))
}

/// `np.take(a, indices, axis=None, mode='raise')`: without an axis, from the flattened
/// array; `mode` 'clip' and 'wrap' bring each index into range first.
pub fn take_fn(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("take", &["a", "indices", "axis", "out", "mode"], 2)?;
    let a = to_array(s[0].as_ref().unwrap_or(&Value::None), None, ctx)?;
    if s[3].as_ref().is_some_and(|o| !matches!(o, Value::None)) {
        return Err(PyErr::not_implemented(
            "np.take(..., out=...) is not supported",
        ));
    }
    let (a, axis) = match s[2].as_ref().filter(|v| !matches!(v, Value::None)) {
        None => (a.ravel(), 0),
        Some(ax) => {
            let k = norm_axis(int_of(ax)?, a.ndim()).map_err(err)?;
            ((*a).clone(), k)
        }
    };
    let n = a.shape().get(axis).copied().unwrap_or(0) as i64;
    let mode = match &s[4] {
        Some(m) => m.as_str()?.to_string(),
        None => "raise".into(),
    };
    let fix = |i: i64| -> PyResult<i64> {
        Ok(match mode.as_str() {
            "raise" => i,
            "clip" => i.clamp(0, (n - 1).max(0)),
            "wrap" if n > 0 => i.rem_euclid(n),
            "wrap" => i,
            other => {
                return Err(PyErr::value_error(format!(
                    "clipmode must be one of 'clip', 'raise', or 'wrap' (got '{other}')"
                )))
            }
        })
    };
    let idx = s[1].clone().unwrap_or(Value::None);
    let mut items = vec![IndexItem::Slice(None, None, None); axis];
    match sections(&idx) {
        Some(i) if !matches!(idx, Value::List(_) | Value::Tuple(_)) => {
            items.push(IndexItem::Int(fix(i)?))
        }
        _ => {
            let ix = to_array(&idx, None, ctx)?;
            let (shape, vals) = ix.to_i64_vec();
            let vals = vals.into_iter().map(fix).collect::<PyResult<Vec<_>>>()?;
            items.push(IndexItem::Array(
                NdArray::from_i64(&shape, vals).map_err(err)?,
            ));
        }
    }
    a.get(&items).map(wrap).map_err(err)
}
