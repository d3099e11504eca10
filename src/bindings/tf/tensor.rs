//! `tf.Tensor` (TF's EagerTensor): an immutable array with TF's printing (`tf.Tensor(...,
//! shape=..., dtype=...)` as str, `<tf.Tensor: shape=..., dtype=..., numpy=...>` as repr),
//! `.numpy()`, `.shape` as a `TensorShape`, indexing and iteration over the first axis, and
//! operators with tensors, numpy arrays and Python numbers under TF's dtype rules (no
//! silent promotion between tensors of different dtypes). Arithmetic is the tensor part's.

use std::any::Any;
use std::rc::Rc;

use super::convert::{held_array, numpy_value, tensor_err, tensor_value, tf_dtype, to_array};
use super::shape::TensorShape;
use super::{bound, ListIter, TfError};
use crate::bindings::numpy::convert::python_scalar;
use crate::lang::{BinOp, CmpOp, Ctx, Object, PyErr, PyResult, UnaryOp, Value};
use crate::tensor::dtype::WeakScalar;
use crate::tensor::math::unary;
use crate::tensor::ops::{binary, Operand};
use crate::tensor::{repr_array, str_array, BinaryOp, DType, NdArray, UnaryFn};

/// An eager tensor.
pub struct Tensor {
    pub array: Rc<NdArray>,
}

/// TF's own name of a dtype in kernel error messages (`float`, `double`, `int32`).
pub fn kernel_dtype_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        other => other.name(),
    }
}

/// The text TF shows for an array inside a tensor's str/repr: numpy's str (or repr), a
/// scalar as its plain value, and a leading newline when the text spans lines.
pub fn numpy_text(a: &NdArray, is_repr: bool) -> String {
    let text = if is_repr && a.ndim() > 0 {
        repr_array(a)
    } else {
        str_array(a)
    };
    if text.contains('\n') {
        format!("\n{text}")
    } else {
        text
    }
}

pub fn shape_text(a: &NdArray) -> String {
    crate::tensor::shape_str(a.shape())
}

/// TF's kernel name for an operator, used in its `InvalidArgumentError` messages.
fn op_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "AddV2",
        BinaryOp::Sub => "Sub",
        BinaryOp::Mul => "Mul",
        BinaryOp::Div => "RealDiv",
        BinaryOp::FloorDiv => "FloorDiv",
        BinaryOp::Mod => "FloorMod",
        BinaryOp::Pow => "Pow",
        BinaryOp::Maximum => "Maximum",
        BinaryOp::Minimum => "Minimum",
        BinaryOp::Eq => "Equal",
        BinaryOp::Ne => "NotEqual",
        BinaryOp::Lt => "Less",
        BinaryOp::Le => "LessEqual",
        BinaryOp::Gt => "Greater",
        BinaryOp::Ge => "GreaterEqual",
        BinaryOp::And => "BitwiseAnd",
        BinaryOp::Or => "BitwiseOr",
        BinaryOp::Xor => "BitwiseXor",
    }
}

/// The other operand of a tensor operator, converted as TF converts it: Python numbers
/// take the tensor's dtype (a float into an integer tensor is a `TypeError`), lists are
/// converted to the tensor's dtype, arrays and tensors must already have it.
pub enum Other {
    Weak(WeakScalar),
    Arr(Rc<NdArray>),
}

pub fn other_operand(
    mine: DType,
    v: &Value,
    op: BinaryOp,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Other>> {
    Ok(Some(match v {
        Value::Float(x) if !mine.is_float() => {
            return Err(TfError::Type(format!(
                "Cannot convert {} to EagerTensor of dtype {}",
                super::py_float_repr(*x),
                mine.name()
            ))
            .into())
        }
        Value::Bool(b) => Other::Weak(WeakScalar::Bool(*b)),
        Value::Int(i) => Other::Weak(WeakScalar::Int(*i)),
        Value::Float(x) => Other::Weak(WeakScalar::Float(*x)),
        Value::List(_) | Value::Tuple(_) => {
            Other::Arr(Rc::new(to_array(v, Some(mine), false, ctx)?))
        }
        other => match held_array(other) {
            Some(a) if a.dtype() == mine => Other::Arr(a),
            Some(a) => {
                let name = op_name(op);
                return Err(PyErr::new(
                    "InvalidArgumentError",
                    format!(
                        "cannot compute {name} as input #1(zero-based) was expected to be a {} \
                         tensor but is a {} tensor [Op:{name}] name: \nHint: cast one side \
                         with tf.cast(x, tf.{}) so both have the same dtype.",
                        kernel_dtype_name(mine),
                        kernel_dtype_name(a.dtype()),
                        mine.name()
                    ),
                ));
            }
            None => return Ok(None),
        },
    }))
}

/// `a op b` for a tensor `a` (reflected: `b op a`), as a new tensor.
pub fn tensor_binop(
    a: &Rc<NdArray>,
    op: BinaryOp,
    other: &Value,
    reflected: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    let Some(o) = other_operand(a.dtype(), other, op, ctx)? else {
        return Ok(None);
    };
    let mine = Operand::Arr(a);
    let theirs = match &o {
        Other::Weak(w) => Operand::Weak(*w),
        Other::Arr(x) => Operand::Arr(x),
    };
    let (l, r) = if reflected {
        (theirs, mine)
    } else {
        (mine, theirs)
    };
    let out = binary(l, r, op).map_err(tensor_err)?;
    Ok(Some(tensor_value(out)))
}

fn map_binop(op: BinOp) -> Option<BinaryOp> {
    Some(match op {
        BinOp::Add => BinaryOp::Add,
        BinOp::Sub => BinaryOp::Sub,
        BinOp::Mul => BinaryOp::Mul,
        BinOp::Div => BinaryOp::Div,
        BinOp::FloorDiv => BinaryOp::FloorDiv,
        BinOp::Mod => BinaryOp::Mod,
        BinOp::Pow => BinaryOp::Pow,
        BinOp::BitAnd => BinaryOp::And,
        BinOp::BitOr => BinaryOp::Or,
        BinOp::BitXor => BinaryOp::Xor,
        _ => return None,
    })
}

/// The operator protocol shared by tensors and variables.
pub fn array_binop(
    a: &Rc<NdArray>,
    op: BinOp,
    other: &Value,
    reflected: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    if op == BinOp::MatMul {
        let Some(b) = held_array(other).or_else(|| {
            to_array(other, Some(a.dtype()), false, ctx)
                .ok()
                .map(Rc::new)
        }) else {
            return Ok(None);
        };
        let (l, r) = if reflected { (&b, a) } else { (a, &b) };
        return super::ops::matmul_arrays(l, r, false, false).map(Some);
    }
    match map_binop(op) {
        Some(bop) => tensor_binop(a, bop, other, reflected, ctx),
        None => Ok(None),
    }
}

pub fn array_compare(
    a: &Rc<NdArray>,
    op: CmpOp,
    other: &Value,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    let bop = match op {
        CmpOp::Eq => BinaryOp::Eq,
        CmpOp::Ne => BinaryOp::Ne,
        CmpOp::Lt => BinaryOp::Lt,
        CmpOp::Le => BinaryOp::Le,
        CmpOp::Gt => BinaryOp::Gt,
        CmpOp::Ge => BinaryOp::Ge,
    };
    match tensor_binop(a, bop, other, false, ctx) {
        // TF answers `==` with False (and `!=` with True) when the other side cannot be a
        // tensor of this dtype; ordering comparisons raise.
        Err(_) | Ok(None) if matches!(op, CmpOp::Eq | CmpOp::Ne) => {
            Ok(Some(Value::Bool(op == CmpOp::Ne)))
        }
        other => other,
    }
}

pub fn array_unary(a: &NdArray, op: UnaryOp) -> PyResult<Value> {
    let out = match op {
        UnaryOp::Neg => unary(a, UnaryFn::Neg),
        UnaryOp::Pos => Ok(a.clone()),
        UnaryOp::Invert => unary(a, UnaryFn::Invert),
    };
    out.map(tensor_value).map_err(tensor_err)
}

pub fn array_truthy(a: &NdArray) -> PyResult<Option<bool>> {
    // An empty tensor is falsy in TF 2.21, where numpy would refuse it.
    if a.size() == 0 {
        return Ok(Some(false));
    }
    if a.size() != 1 {
        return Err(TfError::Value(
            "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()".into(),
        )
        .into());
    }
    Ok(a.scalar_at(0).map(|s| s.as_f64() != 0.0))
}

/// `t[key]` through numpy's indexing rules.
pub fn array_getitem(a: &NdArray, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let items = crate::bindings::numpy::convert::index_items(key, ctx)?;
    a.get(&items).map(tensor_value).map_err(tensor_err)
}

pub fn array_iter(a: &NdArray) -> PyResult<Value> {
    if a.ndim() == 0 {
        return Err(PyErr::type_error("Cannot iterate over a scalar tensor."));
    }
    let mut rows = Vec::with_capacity(a.shape()[0]);
    for i in 0..a.shape()[0] {
        rows.push(tensor_value(a.row(i).map_err(tensor_err)?));
    }
    Ok(ListIter::value(rows))
}

/// Attributes shared by tensors and variables (`shape`, `dtype`, `numpy`, ...).
pub fn array_attr<T: Object>(
    this: &Value,
    a: &NdArray,
    name: &str,
    get: fn(&T) -> NdArray,
) -> Option<Value> {
    Some(match name {
        "shape" => TensorShape::value(a.shape()),
        "dtype" => Value::native(tf_dtype(a.dtype())),
        "ndim" => Value::Int(a.ndim() as i64),
        "device" => Value::str("/job:localhost/replica:0/task:0/device:CPU:0"),
        "numpy" => bound::<T>(this, "numpy", move |t, _, _, _| Ok(numpy_value(get(t)))),
        "get_shape" => {
            let dims = a.shape().to_vec();
            crate::lang::NativeFn::value("get_shape", "", move |_, _| Ok(TensorShape::value(&dims)))
        }
        "__array_priority__" => Value::Int(100),
        "__float__" | "__int__" | "__index__" => {
            let kind = name.to_string();
            bound::<T>(this, name, move |t, _, _, _| python_scalar(&get(t), &kind))
        }
        _ => return None,
    })
}

impl Object for Tensor {
    fn type_name(&self) -> String {
        "EagerTensor".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let a = &self.array;
        Ok(format!(
            "<tf.Tensor: shape={}, dtype={}, numpy={}>",
            shape_text(a),
            a.dtype().name(),
            numpy_text(a, true)
        ))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let a = &self.array;
        Ok(format!(
            "tf.Tensor({}, shape={}, dtype={})",
            numpy_text(a, false),
            shape_text(a),
            a.dtype().name()
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(array_attr::<Tensor>(this, &self.array, name, |t| {
            (*t.array).clone()
        }))
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        array_binop(&self.array, op, other, reflected, ctx)
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        array_compare(&self.array, op, other, ctx)
    }
    fn unary(&self, op: UnaryOp, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        array_unary(&self.array, op)
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        array_truthy(&self.array)
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        match self.array.shape().first() {
            Some(n) => Ok(Some(*n)),
            None => Err(PyErr::type_error("Scalar tensor has no `len()`")),
        }
    }
    fn getitem(&self, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        array_getitem(&self.array, key, ctx)
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        array_iter(&self.array)
    }
    fn hash(&self) -> Option<u64> {
        None
    }
    fn dir(&self) -> Vec<String> {
        ["shape", "dtype", "ndim", "device", "numpy", "get_shape"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["EagerTensor".into(), "Tensor".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Makes a tensor from any argument as `tf.convert_to_tensor` does.
pub fn tensor_arg(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Rc<NdArray>> {
    if let Some(a) = held_array(v) {
        return Ok(a);
    }
    to_array(v, None, false, ctx).map(Rc::new)
}
