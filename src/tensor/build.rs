//! Array creation and joining: nested Python-like data with numpy's dtype discovery,
//! `arange`, `linspace`, `eye`, `concatenate`, `stack`, `vstack`, `hstack`, `unique`,
//! and the closeness tests (`isclose`, `allclose`, `array_equal`).

use ndarray::{ArrayD, Axis, IxDyn};

use super::array::{norm_axis, Data, NdArray, Scalar};
use super::dtype::{DType, WeakScalar};
use super::{check_alloc, shape_str, TResult, TensorError};
use crate::map_data;

/// Nested data as `np.array` receives it: Python scalars, numpy scalars or arrays, and
/// lists of these.
#[derive(Debug, Clone)]
pub enum Nested {
    Py(WeakScalar),
    Arr(NdArray),
    List(Vec<Nested>),
}

fn discover(n: &Nested, dt: &mut Option<DType>) {
    let mut merge = |d: DType| {
        *dt = Some(match *dt {
            None => d,
            Some(o) => DType::promote(o, d),
        })
    };
    match n {
        Nested::Py(s) => merge(DType::of_scalar(*s)),
        Nested::Arr(a) => merge(a.dtype()),
        Nested::List(items) => {
            for it in items {
                discover(it, dt);
            }
        }
    }
}

fn shape_of(n: &Nested) -> TResult<Vec<usize>> {
    match n {
        Nested::Py(_) => Ok(vec![]),
        Nested::Arr(a) => Ok(a.shape().to_vec()),
        Nested::List(items) => {
            let mut inner: Option<Vec<usize>> = None;
            for it in items {
                let s = shape_of(it)?;
                match &inner {
                    None => inner = Some(s),
                    Some(p) if *p != s => {
                        return Err(TensorError::Value(format!(
                            "setting an array element with a sequence. The requested array \
                             has an inhomogeneous shape after 1 dimensions. The detected \
                             shape was {} + inhomogeneous part.",
                            shape_str(&[items.len()])
                        )))
                    }
                    _ => {}
                }
            }
            let mut s = vec![items.len()];
            s.extend(inner.unwrap_or_default());
            Ok(s)
        }
    }
}

fn flatten(n: &Nested, out: &mut Vec<Scalar>) {
    match n {
        Nested::Py(WeakScalar::Bool(b)) => out.push(Scalar::Bool(*b)),
        Nested::Py(WeakScalar::Int(i)) => out.push(Scalar::I64(*i)),
        Nested::Py(WeakScalar::Float(x)) => out.push(Scalar::F64(*x)),
        Nested::Arr(a) => out.extend(a.scalars()),
        Nested::List(items) => items.iter().for_each(|i| flatten(i, out)),
    }
}

/// Builds an array from scalars of any dtype, cast to `dt`.
pub fn from_scalars(shape: &[usize], vals: &[Scalar], dt: DType) -> TResult<NdArray> {
    check_alloc(shape, dt)?;
    match dt {
        DType::Bool => NdArray::from_bool(shape, vals.iter().map(|s| s.as_f64() != 0.0).collect()),
        DType::U8 => NdArray::from_u8(shape, vals.iter().map(|s| s.as_i64() as u8).collect()),
        DType::I32 => NdArray::from_i32(shape, vals.iter().map(|s| s.as_i64() as i32).collect()),
        DType::I64 => NdArray::from_i64(shape, vals.iter().map(|s| s.as_i64()).collect()),
        DType::F32 => NdArray::from_f32(shape, vals.iter().map(|s| s.as_f64() as f32).collect()),
        DType::F64 => NdArray::from_f64(shape, vals.iter().map(|s| s.as_f64()).collect()),
    }
}

/// `np.array(data, dtype)`: float64 when any float, int64 when any int, else bool;
/// an empty list is float64.
pub fn from_nested(n: &Nested, dtype: Option<DType>) -> TResult<NdArray> {
    let shape = shape_of(n)?;
    let mut dt = None;
    discover(n, &mut dt);
    let dt = dtype.or(dt).unwrap_or(DType::F64);
    let mut vals = Vec::new();
    flatten(n, &mut vals);
    from_scalars(&shape, &vals, dt)
}

/// `np.arange(start, stop, step)`; integer when all three are integers.
pub fn arange(start: f64, stop: f64, step: f64, dtype: DType) -> TResult<NdArray> {
    if step == 0.0 {
        return Err(TensorError::Value("Maximum allowed size exceeded".into()));
    }
    let n = ((stop - start) / step).ceil().max(0.0) as usize;
    check_alloc(&[n], dtype)?;
    let v: Vec<f64> = (0..n).map(|i| start + i as f64 * step).collect();
    if dtype.is_float() {
        Ok(NdArray::from_f64(&[n], v)?.astype(dtype))
    } else {
        let (s, st) = (start as i64, step as i64);
        let v: Vec<i64> = (0..n as i64).map(|i| s + i * st).collect();
        Ok(NdArray::from_i64(&[n], v)?.astype(dtype))
    }
}

/// `np.linspace(start, stop, num, endpoint)`.
pub fn linspace(start: f64, stop: f64, num: usize, endpoint: bool) -> TResult<NdArray> {
    check_alloc(&[num], DType::F64)?;
    let div = if endpoint { num.saturating_sub(1) } else { num };
    let step = if div > 0 {
        (stop - start) / div as f64
    } else {
        f64::NAN
    };
    let mut v: Vec<f64> = (0..num)
        .map(|i| {
            if div > 0 {
                i as f64 * step + start
            } else {
                start
            }
        })
        .collect();
    if endpoint && num > 1 {
        v[num - 1] = stop;
    }
    NdArray::from_f64(&[num], v)
}

/// `np.eye(n, m, k)`.
pub fn eye(n: usize, m: usize, k: i64, dtype: DType) -> TResult<NdArray> {
    let mut a = NdArray::zeros(&[n, m], DType::F64)?;
    if let Data::F64(x) = &mut a.data {
        for i in 0..n {
            let j = i as i64 + k;
            if j >= 0 && (j as usize) < m {
                x[[i, j as usize]] = 1.0;
            }
        }
    }
    Ok(a.astype(dtype))
}

/// `np.concatenate(arrays, axis)`.
pub fn concatenate(arrays: &[NdArray], axis: i64) -> TResult<NdArray> {
    let first = arrays
        .first()
        .ok_or_else(|| TensorError::Value("need at least one array to concatenate".into()))?;
    let nd = first.ndim();
    if nd == 0 {
        return Err(TensorError::Value(
            "zero-dimensional arrays cannot be concatenated".into(),
        ));
    }
    let k = norm_axis(axis, nd)?;
    let mut dt = first.dtype();
    for (i, a) in arrays.iter().enumerate() {
        if a.ndim() != nd {
            return Err(TensorError::Value(format!(
                "all the input arrays must have same number of dimensions, but the array at \
                 index 0 has {nd} dimension(s) and the array at index {i} has {} dimension(s)",
                a.ndim()
            )));
        }
        for d in 0..nd {
            if d != k && a.shape()[d] != first.shape()[d] {
                return Err(TensorError::Value(format!(
                    "all the input array dimensions except for the concatenation axis must \
                     match exactly, but along dimension {d}, the array at index 0 has size {} \
                     and the array at index {i} has size {}",
                    first.shape()[d],
                    a.shape()[d]
                )));
            }
        }
        dt = DType::promote(dt, a.dtype());
    }
    let cast: Vec<NdArray> = arrays.iter().map(|a| a.astype(dt)).collect();
    let base = cast[0].clone();
    Ok(NdArray::new(map_data!(&base.data, _b => {
        let views: Vec<_> = cast
            .iter()
            .filter_map(|c| extract(&c.data).map(|v| v.view()))
            .collect();
        ndarray::concatenate(Axis(k), &views).map_err(|e| TensorError::Value(e.to_string()))?
    })))
}

/// Borrows the inner array of the variant matching the requested element type.
trait Extract: Sized {
    fn get(d: &Data) -> Option<&ArrayD<Self>>;
}
macro_rules! extract_impl {
    ($t:ty, $v:ident) => {
        impl Extract for $t {
            fn get(d: &Data) -> Option<&ArrayD<$t>> {
                match d {
                    Data::$v(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}
extract_impl!(bool, Bool);
extract_impl!(u8, U8);
extract_impl!(i32, I32);
extract_impl!(i64, I64);
extract_impl!(f32, F32);
extract_impl!(f64, F64);
fn extract<T: Extract>(d: &Data) -> Option<&ArrayD<T>> {
    T::get(d)
}

/// `np.stack(arrays, axis)`.
pub fn stack(arrays: &[NdArray], axis: i64) -> TResult<NdArray> {
    let first = arrays
        .first()
        .ok_or_else(|| TensorError::Value("need at least one array to stack".into()))?;
    if arrays.iter().any(|a| a.shape() != first.shape()) {
        return Err(TensorError::Value(
            "all input arrays must have the same shape".into(),
        ));
    }
    let k = norm_axis(axis, first.ndim() + 1)? as i64;
    let ex: Vec<NdArray> = arrays
        .iter()
        .map(|a| a.expand_dims(k))
        .collect::<TResult<_>>()?;
    concatenate(&ex, k)
}

/// `np.vstack`: 1-D arrays become rows.
pub fn vstack(arrays: &[NdArray]) -> TResult<NdArray> {
    let ex: Vec<NdArray> = arrays
        .iter()
        .map(|a| match a.ndim() {
            0 => a.reshape(&[1, 1]),
            1 => a.expand_dims(0),
            _ => Ok(a.clone()),
        })
        .collect::<TResult<_>>()?;
    concatenate(&ex, 0)
}

/// `np.hstack`: joins 1-D arrays end to end, others along axis 1.
pub fn hstack(arrays: &[NdArray]) -> TResult<NdArray> {
    let ex: Vec<NdArray> = arrays
        .iter()
        .map(|a| {
            if a.ndim() == 0 {
                a.reshape(&[1])
            } else {
                Ok(a.clone())
            }
        })
        .collect::<TResult<_>>()?;
    let axis = if ex.first().is_some_and(|a| a.ndim() == 1) {
        0
    } else {
        1
    };
    concatenate(&ex, axis)
}

/// `np.isclose(a, b, rtol, atol)` on broadcast operands.
pub fn isclose(a: &NdArray, b: &NdArray, rtol: f64, atol: f64) -> TResult<NdArray> {
    let shape = super::ops::broadcast_shapes(a.shape(), b.shape())?;
    let (x, y) = (a.to_f64_array(), b.to_f64_array());
    let sh = IxDyn(&shape);
    let (bx, by) = match (x.broadcast(sh.clone()), y.broadcast(sh)) {
        (Some(p), Some(q)) => (p, q),
        _ => {
            return Err(TensorError::Broadcast(
                shape_str(a.shape()),
                shape_str(b.shape()),
            ))
        }
    };
    let out = ndarray::Zip::from(&bx).and(&by).map_collect(|&p, &q| {
        if p.is_infinite() || q.is_infinite() {
            p == q
        } else {
            (p - q).abs() <= atol + rtol * q.abs()
        }
    });
    Ok(NdArray::new(Data::Bool(out)))
}

pub fn allclose(a: &NdArray, b: &NdArray, rtol: f64, atol: f64) -> TResult<bool> {
    Ok(isclose(a, b, rtol, atol)?
        .to_bool_array()
        .iter()
        .all(|&v| v))
}

pub fn array_equal(a: &NdArray, b: &NdArray) -> bool {
    a.shape() == b.shape()
        && a.to_f64_array()
            .iter()
            .zip(b.to_f64_array().iter())
            .all(|(p, q)| p == q)
}

/// `np.sort(a, axis)` (or `np.argsort` when `indices`): along one axis, ascending, NaN
/// last, equal values keeping their order.
pub fn sort(a: &NdArray, axis: i64, indices: bool) -> TResult<NdArray> {
    if a.ndim() == 0 {
        return Err(TensorError::Axis(format!(
            "axis {axis} is out of bounds for array of dimension 0"
        )));
    }
    let nd = a.ndim();
    let k = norm_axis(axis, nd)?;
    // Move the axis last, sort each lane, then move it back.
    let mut perm: Vec<i64> = (0..nd as i64).filter(|&d| d != k as i64).collect();
    perm.push(k as i64);
    let moved = a.transpose(Some(&perm))?;
    let lane = a.shape()[k];
    let vals: Vec<f64> = moved.to_f64_array().iter().copied().collect();
    let ints: Vec<i64> = moved.to_i64_array().iter().copied().collect();
    let float = a.dtype().is_float();
    let mut order_all: Vec<i64> = Vec::with_capacity(vals.len());
    for start in (0..vals.len()).step_by(lane.max(1)) {
        let mut idx: Vec<usize> = (0..lane).collect();
        if float {
            idx.sort_by(|&i, &j| {
                let (x, y) = (vals[start + i], vals[start + j]);
                x.partial_cmp(&y)
                    .unwrap_or_else(|| x.is_nan().cmp(&y.is_nan()))
            });
        } else {
            idx.sort_by_key(|&i| ints[start + i]);
        }
        order_all.extend(idx.iter().map(|&i| i as i64));
    }
    let shape = moved.shape().to_vec();
    let out = if indices {
        NdArray::from_i64(&shape, order_all)?
    } else {
        let picked: Vec<Scalar> = {
            let all = moved.scalars();
            order_all
                .iter()
                .enumerate()
                .map(|(p, &i)| all[p - p % lane.max(1) + i as usize])
                .collect()
        };
        from_scalars(&shape, &picked, a.dtype())?
    };
    // Invert the permutation that moved the axis last.
    let mut back = vec![0i64; nd];
    for (pos, &d) in perm.iter().enumerate() {
        back[d as usize] = pos as i64;
    }
    out.transpose(Some(&back))
}
