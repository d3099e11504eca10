//! Conversions between language values and arrays: Python scalars, lists, tuples,
//! numpy scalars and arrays into [`NdArray`] (or a weak operand), index expressions into
//! [`IndexItem`]s, argument parsing helpers (axis, dtype), and array results back into
//! values (0-d results of ufuncs and reductions become numpy scalars, as in numpy).

use std::rc::Rc;

use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::tensor::build::{from_nested, Nested};
use crate::tensor::dtype::WeakScalar;
use crate::tensor::{DType, IndexItem, NdArray, Scalar, TensorError};

use super::dtype::PyDType;
use super::ndarray::PyArray;
use super::scalar::PyScalar;

/// A tensor error as the Python exception numpy raises.
pub fn err(e: TensorError) -> PyErr {
    PyErr::new(e.py_type(), e.to_string())
}

/// Wraps an array result: 0-d becomes a numpy scalar, as numpy's ufuncs return.
pub fn wrap(a: NdArray) -> Value {
    if a.ndim() == 0 {
        if let Some(s) = a.scalar_at(0) {
            return Value::native(PyScalar(s));
        }
    }
    Value::native(PyArray::new(a))
}

/// Wraps an array that must stay an array (constructors, `reshape`, `astype`).
pub fn array_value(a: NdArray) -> Value {
    Value::native(PyArray::new(a))
}

/// The array a value stands for, when it is an array or numpy scalar already.
pub fn as_array(v: &Value) -> Option<Rc<NdArray>> {
    if let Some(a) = v.downcast::<PyArray>() {
        return Some(a.get());
    }
    v.downcast::<PyScalar>()
        .map(|s| Rc::new(NdArray::from_scalar(s.0)))
}

fn nested(v: &Value, ctx: &mut dyn Ctx, depth: usize) -> PyResult<Nested> {
    if depth > 64 {
        return Err(PyErr::value_error("array is nested too deeply"));
    }
    Ok(match v {
        Value::Bool(b) => Nested::Py(WeakScalar::Bool(*b)),
        Value::Int(i) => Nested::Py(WeakScalar::Int(*i)),
        Value::Float(x) => Nested::Py(WeakScalar::Float(*x)),
        Value::List(_) | Value::Tuple(_) => {
            let items = v.as_seq().unwrap_or_default();
            Nested::List(
                items
                    .iter()
                    .map(|i| nested(i, ctx, depth + 1))
                    .collect::<PyResult<_>>()?,
            )
        }
        other => match as_array(other) {
            Some(a) => Nested::Arr((*a).clone()),
            None => {
                // Other array-likes (tf tensors) offer `.numpy()`.
                let conv = ctx
                    .getattr(other, "numpy")
                    .and_then(|f| ctx.call(&f, Args::default()));
                match conv.ok().as_ref().and_then(as_array) {
                    Some(a) => Nested::Arr((*a).clone()),
                    None => {
                        return Err(PyErr::type_error(format!(
                            "float() argument must be a string or a real number, not '{}'",
                            other.type_name()
                        )))
                    }
                }
            }
        },
    })
}

/// `np.asarray(v, dtype)`.
pub fn to_array(v: &Value, dtype: Option<DType>, ctx: &mut dyn Ctx) -> PyResult<Rc<NdArray>> {
    if let Some(a) = as_array(v) {
        return Ok(match dtype {
            Some(d) if d != a.dtype() => Rc::new(a.astype(d)),
            _ => a,
        });
    }
    let n = nested(v, ctx, 0)?;
    from_nested(&n, dtype).map(Rc::new).map_err(err)
}

/// An operand for arithmetic: Python scalars stay weak (NEP 50).
pub enum Opnd {
    Arr(Rc<NdArray>),
    Weak(WeakScalar),
}

impl Opnd {
    pub fn of(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Opnd>> {
        Ok(Some(match v {
            Value::Bool(b) => Opnd::Weak(WeakScalar::Bool(*b)),
            Value::Int(i) => Opnd::Weak(WeakScalar::Int(*i)),
            Value::Float(x) => Opnd::Weak(WeakScalar::Float(*x)),
            Value::List(_) | Value::Tuple(_) => Opnd::Arr(to_array(v, None, ctx)?),
            other => match as_array(other) {
                Some(a) => Opnd::Arr(a),
                None => return Ok(None),
            },
        }))
    }

    pub fn operand(&self) -> crate::tensor::ops::Operand<'_> {
        match self {
            Opnd::Arr(a) => crate::tensor::ops::Operand::Arr(a),
            Opnd::Weak(w) => crate::tensor::ops::Operand::Weak(*w),
        }
    }
}

/// A dtype argument: `np.float32`, `'float32'`, `float`, `int`, `bool`, or a dtype object.
pub fn dtype_arg(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<DType>> {
    match v {
        Value::None => Ok(None),
        Value::Str(s) => DType::parse(s)
            .map(Some)
            .ok_or_else(|| PyErr::type_error(format!("data type '{s}' not understood"))),
        other => {
            if let Some(d) = other.downcast::<PyDType>() {
                return Ok(Some(d.dt));
            }
            let name = ctx
                .getattr(other, "__name__")
                .ok()
                .and_then(|n| n.as_str().ok().map(|s| s.to_string()));
            match name.as_deref().and_then(DType::parse) {
                Some(d) => Ok(Some(d)),
                None => Err(PyErr::type_error(format!(
                    "Cannot interpret '{}' as a data type",
                    other.type_name()
                ))),
            }
        }
    }
}

/// An `axis` argument: `None`, an int, or a tuple of ints.
pub fn axis_arg(v: Option<&Value>) -> PyResult<Option<Vec<i64>>> {
    match v {
        None | Some(Value::None) => Ok(None),
        Some(Value::Tuple(t)) => Ok(Some(t.iter().map(int_of).collect::<PyResult<_>>()?)),
        Some(v) => Ok(Some(vec![int_of(v)?])),
    }
}

/// An integer argument that may also be a numpy integer scalar.
pub fn int_of(v: &Value) -> PyResult<i64> {
    if let Some(s) = v.downcast::<PyScalar>() {
        if !s.0.dtype().is_float() {
            return Ok(s.0.as_i64());
        }
    }
    v.as_int()
}

/// A real-number argument that may also be a numpy scalar.
pub fn float_of(v: &Value) -> PyResult<f64> {
    if let Some(s) = v.downcast::<PyScalar>() {
        return Ok(s.0.as_f64());
    }
    v.as_float()
}

/// A shape argument: an int or a sequence of ints.
pub fn shape_arg(v: &Value) -> PyResult<Vec<i64>> {
    match v.as_seq() {
        Some(items) => items.iter().map(int_of).collect(),
        None => Ok(vec![int_of(v)?]),
    }
}

/// A non-negative shape (creation functions).
pub fn dims_arg(v: &Value) -> PyResult<Vec<usize>> {
    shape_arg(v)?
        .into_iter()
        .map(|d| {
            usize::try_from(d)
                .map_err(|_| PyErr::value_error("negative dimensions are not allowed"))
        })
        .collect()
}

fn opt_int(v: Value) -> PyResult<Option<i64>> {
    match v {
        Value::None => Ok(None),
        other => int_of(&other).map(Some),
    }
}

fn index_item(v: &Value, ctx: &mut dyn Ctx) -> PyResult<IndexItem> {
    match v {
        Value::None => return Ok(IndexItem::NewAxis),
        Value::Int(i) => return Ok(IndexItem::Int(*i)),
        Value::Bool(b) => {
            return Ok(IndexItem::Array(NdArray::from_scalar(Scalar::Bool(*b))));
        }
        Value::List(_) | Value::Tuple(_) => {
            return Ok(IndexItem::Array((*to_array(v, None, ctx)?).clone()));
        }
        _ => {}
    }
    if let Some(s) = v.downcast::<PyScalar>() {
        if !s.0.dtype().is_float() && s.0.dtype() != DType::Bool {
            return Ok(IndexItem::Int(s.0.as_i64()));
        }
    }
    if let Some(a) = v.downcast::<PyArray>() {
        return Ok(IndexItem::Array((*a.get()).clone()));
    }
    match v.type_name().as_str() {
        "slice" => {
            let start = opt_int(ctx.getattr(v, "start")?)?;
            let stop = opt_int(ctx.getattr(v, "stop")?)?;
            let step = opt_int(ctx.getattr(v, "step")?)?;
            Ok(IndexItem::Slice(start, stop, step))
        }
        "ellipsis" | "EllipsisType" => Ok(IndexItem::Ellipsis),
        other => Err(PyErr::index_error(format!(
            "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and \
             integer or boolean arrays are valid indices (got '{other}')"
        ))),
    }
}

/// An index expression (`a[key]`) as index items.
pub fn index_items(key: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<IndexItem>> {
    match key {
        Value::Tuple(t) => t.iter().map(|k| index_item(k, ctx)).collect(),
        other => Ok(vec![index_item(other, ctx)?]),
    }
}

/// A Python value for one element (`tolist`, `item`).
pub fn py_scalar(s: Scalar) -> Value {
    match s {
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::F32(x) => Value::Float(x as f64),
        Scalar::F64(x) => Value::Float(x),
        other => Value::Int(other.as_i64()),
    }
}

/// `a.tolist()`: nested lists of Python scalars.
pub fn tolist(a: &NdArray) -> Value {
    fn rec(vals: &[Scalar], shape: &[usize]) -> Value {
        match shape.split_first() {
            None => vals.first().map(|s| py_scalar(*s)).unwrap_or(Value::None),
            Some((&n, rest)) => {
                let stride: usize = rest.iter().product();
                Value::list(
                    (0..n)
                        .map(|i| rec(&vals[i * stride..(i + 1) * stride], rest))
                        .collect(),
                )
            }
        }
    }
    rec(&a.scalars(), a.shape())
}

/// `float(a)`, `int(a)` and `operator.index(a)` (`kind` is the dunder name) as numpy 2
/// does them, which TF's eager tensors defer to: only 0-dimensional arrays convert; `int`
/// truncates floats toward zero and refuses NaN and infinities as Python's `int` does.
pub fn python_scalar(a: &NdArray, kind: &str) -> PyResult<Value> {
    if a.ndim() != 0 {
        return Err(PyErr::type_error(
            "only 0-dimensional arrays can be converted to Python scalars",
        ));
    }
    let item = a.item().map_err(|e| PyErr::value_error(e.to_string()))?;
    let float = item.dtype().is_float();
    match kind {
        "__float__" => Ok(Value::Float(item.as_f64())),
        "__index__" if float => Err(PyErr::type_error(
            "only integer scalar arrays can be converted to a scalar index",
        )),
        _ if float => {
            let x = item.as_f64();
            if x.is_nan() {
                Err(PyErr::value_error("cannot convert float NaN to integer"))
            } else if x.is_infinite() {
                Err(PyErr::new(
                    "OverflowError",
                    "cannot convert float infinity to integer",
                ))
            } else if x.abs() >= 9.2e18 {
                Err(PyErr::new(
                    "OverflowError",
                    "this kernel's int() holds 64-bit integers only",
                ))
            } else {
                Ok(Value::Int(x.trunc() as i64))
            }
        }
        _ => Ok(Value::Int(item.as_i64())),
    }
}
