//! Conversions between language values and the tensors behind `tf.Tensor`: Python scalars
//! and nested lists (with TF's defaults: Python floats become float32, Python ints int32),
//! numpy arrays, tensors and variables; TF's rule for the operands of one op (they take the
//! dtype of the first tensor among them); TF's dtype objects to the tensor part's dtypes;
//! and errors of array operations to TF's exception names. No arithmetic here.

use std::rc::Rc;
use std::sync::Arc;

use super::dtypes::DType as TfDType;
use super::keras::variable::KerasVariable;
use super::tensor::Tensor;
use super::variable::{MirroredVariable, Variable};
use super::TfError;
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::ops;
use crate::tensor::build::{from_nested, Nested};
use crate::tensor::dtype::WeakScalar;
use crate::tensor::{DType, NdArray, TensorError};

/// An array error as TF raises it: shape and dtype problems are `InvalidArgumentError`.
pub fn tensor_err(e: TensorError) -> PyErr {
    match e {
        TensorError::Broadcast(..) => {
            PyErr::new("InvalidArgumentError", format!("Incompatible shapes: {e}"))
        }
        other => PyErr::new(other.py_type(), other.to_string()),
    }
}

/// The tensor part's dtype for a TF dtype, or TF's error for dtypes this kernel lacks.
pub fn engine_dtype(d: &TfDType) -> PyResult<DType> {
    DType::parse(d.name).ok_or_else(|| {
        TfError::Type(format!(
            "dtype {} is not supported by this kernel (use float32, float64, int32, int64, \
             uint8 or bool)",
            d.name
        ))
        .into()
    })
}

/// The TF dtype object for an array dtype.
pub fn tf_dtype(d: DType) -> TfDType {
    TfDType::from_name(d.name()).unwrap_or(TfDType { name: "float32" })
}

/// A dtype argument (`tf.float32`, `'float32'`, `np.float32`), or `None` when absent.
pub fn dtype_arg(v: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<Option<DType>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    match TfDType::from_value(v, ctx)? {
        Some(d) => Ok(Some(engine_dtype(&d)?)),
        None => {
            let shown = ctx.repr(v)?;
            Err(TfError::Type(format!("Cannot convert {shown} to a TensorFlow DType.")).into())
        }
    }
}

/// The array inside a numpy value (an `np.ndarray` or numpy scalar).
pub fn numpy_array(v: &Value) -> Option<Rc<NdArray>> {
    crate::bindings::numpy::convert::as_array(v)
}

/// A numpy value for `.numpy()`: a numpy scalar for 0-d, else an `np.ndarray`.
pub fn numpy_value(a: NdArray) -> Value {
    crate::bindings::numpy::convert::wrap(a)
}

/// Whether a value holds an array (tensor, variable, numpy), answered without copying one.
pub fn holds_array(v: &Value) -> bool {
    v.downcast::<Tensor>().is_some() || variable_of(v).is_some() || numpy_array(v).is_some()
}

/// The array a value already holds (tensor, variable, numpy), without conversion and
/// unseen by tapes (data pipelines, Keras inputs, printing). A numpy array is copied, since
/// op-library arrays are shared across threads and numpy's are not.
pub fn held_array(v: &Value) -> Option<Arc<NdArray>> {
    if let Some(t) = v.downcast::<Tensor>() {
        return Some(t.tensor.array().clone());
    }
    if let Some(var) = variable_of(v) {
        return Some(var.snapshot());
    }
    numpy_array(v).map(|a| Arc::new((*a).clone()))
}

/// The op-library variable behind a `tf.Variable` (or a Keras variable: an optimizer's,
/// a metric's or a layer's), or behind a `MirroredVariable` its first copy (what a cell
/// outside `strategy.run` reads).
pub fn variable_of(v: &Value) -> Option<ops::Variable> {
    if let Some(var) = v.downcast::<Variable>() {
        return Some(var.var.clone());
    }
    if let Some(var) = super::keras::state_variable::state_variable_of(v) {
        return Some(var);
    }
    if let Some(k) = v.downcast::<KerasVariable>() {
        return variable_of(&k.value);
    }
    v.downcast::<MirroredVariable>()
        .and_then(|m| m.primary())
        .map(|p| p.var.clone())
}

/// [`variable_of`] as the running code sees it: inside a replica's function, a mirrored
/// variable is that replica's copy.
pub fn variable_in(v: &Value, ctx: &mut dyn Ctx) -> Option<ops::Variable> {
    if let Some(k) = v.downcast::<KerasVariable>() {
        return variable_in(&k.value, ctx);
    }
    if let Some(m) = v.downcast::<MirroredVariable>() {
        let r = super::distribute::running_replica(ctx).unwrap_or(0);
        return m
            .parts
            .get(r)
            .or(m.parts.first())
            .and_then(|p| p.downcast::<Variable>())
            .map(|p| p.var.clone());
    }
    variable_of(v)
}

/// A value as an op-library tensor, as `tf.convert_to_tensor` makes it: a tensor is itself
/// (the same identity, so a tape watching it sees this use), a variable is read through
/// the execution context (so tapes watch it and record the read), anything else becomes a
/// new constant (numpy arrays are not recorded, as in TF).
pub fn tensor_of(v: &Value, ctx: &mut dyn Ctx) -> PyResult<ops::Tensor> {
    if let Some(t) = v.downcast::<Tensor>() {
        return Ok(t.tensor.clone());
    }
    if let Some(var) = variable_in(v, ctx) {
        return Ok(super::eager::context(ctx).read(&var));
    }
    to_array(v, None, false, ctx).map(ops::Tensor::new)
}

/// Whether a value is a tensor or variable (an EagerTensor for TF's operand rule).
fn is_tensor_like(v: &Value) -> bool {
    v.downcast::<Tensor>().is_some() || variable_of(v).is_some()
}

/// Whether a Python value holds a float somewhere (it cannot become an integer tensor).
fn has_float(v: &Value) -> bool {
    match v {
        Value::Float(_) => true,
        Value::List(_) | Value::Tuple(_) => v.as_seq().unwrap_or_default().iter().any(has_float),
        _ => false,
    }
}

/// A value converted for an op whose operands share `dtype`: tensors and variables stay
/// as they are (the op reports a dtype mismatch in TF's words), numpy arrays are cast,
/// Python values take `dtype` unless they cannot (a float into an integer tensor), in
/// which case they keep their default dtype and the op refuses them, as TF 2.21 does.
pub fn tensor_as(v: &Value, dtype: DType, ctx: &mut dyn Ctx) -> PyResult<ops::Tensor> {
    if is_tensor_like(v) {
        return tensor_of(v, ctx);
    }
    if let Some(a) = numpy_array(v) {
        return Ok(ops::Tensor::new(a.astype(dtype)));
    }
    let keeps_default = !dtype.is_float() && has_float(v);
    let want = if keeps_default { None } else { Some(dtype) };
    to_array(v, want, false, ctx).map(ops::Tensor::new)
}

/// TF's rule for the operands of one op (`args_to_matching_eager`): every operand
/// converts to the dtype of the first tensor among them; without one, to the first
/// operand's own default dtype.
pub fn matching(values: &[&Value], ctx: &mut dyn Ctx) -> PyResult<Vec<ops::Tensor>> {
    let held = values.iter().find_map(|v| {
        if let Some(t) = v.downcast::<Tensor>() {
            return Some(t.tensor.dtype());
        }
        variable_of(v).map(|var| var.dtype())
    });
    let mut out = Vec::with_capacity(values.len());
    let dtype = match (held, values.first()) {
        (Some(d), _) => d,
        (None, Some(v)) => {
            let t = tensor_of(v, ctx)?;
            let d = t.dtype();
            out.push(t);
            d
        }
        (None, None) => return Ok(out),
    };
    for v in &values[out.len()..] {
        out.push(tensor_as(v, dtype, ctx)?);
    }
    Ok(out)
}

fn nested(v: &Value, depth: usize, from_arrays: &mut bool) -> PyResult<Nested> {
    if depth > 64 {
        return Err(PyErr::value_error(
            "value is nested too deeply to convert to a Tensor",
        ));
    }
    Ok(match v {
        Value::Bool(b) => Nested::Py(WeakScalar::Bool(*b)),
        Value::Int(i) => Nested::Py(WeakScalar::Int(*i)),
        Value::Float(x) => Nested::Py(WeakScalar::Float(*x)),
        Value::List(_) | Value::Tuple(_) => Nested::List(
            v.as_seq()
                .unwrap_or_default()
                .iter()
                .map(|i| nested(i, depth + 1, from_arrays))
                .collect::<PyResult<_>>()?,
        ),
        other => match held_array(other) {
            Some(a) => {
                *from_arrays = true;
                Nested::Arr((*a).clone())
            }
            None => {
                return Err(TfError::Value(format!(
                    "Attempt to convert a value of type {} to a Tensor.",
                    other.type_name()
                ))
                .into())
            }
        },
    })
}

/// TF's dtype for data written in Python: floats are float32, ints int32 when they fit.
fn python_default(a: NdArray) -> NdArray {
    match a.dtype() {
        DType::F64 => a.astype(DType::F32),
        DType::I64 => {
            let (_, vals) = a.to_i64_vec();
            if vals.iter().all(|v| i32::try_from(*v).is_ok()) {
                a.astype(DType::I32)
            } else {
                a
            }
        }
        _ => a,
    }
}

/// The array for `tf.constant(v, dtype)` / `tf.convert_to_tensor(v, dtype)`. With
/// `strict`, a tensor of another dtype is an error, as `convert_to_tensor` makes it.
pub fn to_array(
    v: &Value,
    dtype: Option<DType>,
    strict: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<NdArray> {
    if let Some(t) = v.downcast::<Tensor>() {
        // The value leaves the op path here: a trace cannot replay it.
        super::function::trace::value_read(ctx, &t.tensor, "a tensor converted to an array");
    }
    if let Some(a) = held_array(v) {
        return match dtype {
            Some(d) if d != a.dtype() => {
                if strict && v.downcast::<Tensor>().is_some() {
                    return Err(TfError::Value(format!(
                        "Tensor conversion requested dtype {} for Tensor with dtype {}",
                        d.name(),
                        a.dtype().name()
                    ))
                    .into());
                }
                Ok(a.astype(d))
            }
            _ => Ok((*a).clone()),
        };
    }
    let mut from_arrays = false;
    let n = match nested(v, 0, &mut from_arrays) {
        Ok(n) => n,
        Err(e) => {
            // Other array-likes (a numpy scalar the numpy binding wraps) offer `.numpy()`.
            let conv = ctx
                .getattr(v, "numpy")
                .and_then(|f| ctx.call(&f, Args::default()));
            match conv.ok().as_ref().and_then(numpy_array) {
                Some(a) => return Ok((*a).clone()),
                None => return Err(e),
            }
        }
    };
    let a = from_nested(&n, dtype).map_err(tensor_err)?;
    Ok(if dtype.is_none() && !from_arrays {
        python_default(a)
    } else {
        a
    })
}

/// A new tensor value (a constant) from an array.
pub fn tensor_value(a: NdArray) -> Value {
    super::eager::wrap(ops::Tensor::new(a))
}
