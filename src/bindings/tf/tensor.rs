//! `tf.Tensor` (TF's EagerTensor): an op-library tensor (a value with an identity) with
//! TF's printing (`tf.Tensor(..., shape=..., dtype=...)` as str, `<tf.Tensor: shape=...,
//! dtype=..., numpy=...>` as repr), `.numpy()`, `.shape` as a `TensorShape`, indexing and
//! iteration over the first axis, and the operators. Operators, indexing and iteration run
//! ops of the op library through the session's execution context (`eager.rs`), so a
//! gradient tape records them; operands convert by TF's rules (`convert.rs`). While a
//! `tf.function` traces, a tensor it made prints as a graph tensor and reports reads of its
//! value (`function/trace.rs`).

use std::any::Any;

use super::convert::{numpy_value, tensor_as, tensor_of, tf_dtype, variable_of};
use super::eager::{apply, run, wrap};
use super::function::concrete::{symbolic_repr, symbolic_str};
use super::function::trace;
use super::shape::TensorShape;
use super::{bound, TfError};
use crate::bindings::common::ItemIter;
use crate::bindings::numpy::convert::python_scalar;
use crate::lang::{BinOp, CmpOp, Ctx, Object, PyErr, PyResult, UnaryOp, Value};
use crate::ops::{self, Binary, Eager, OpResult, SliceItem, Unary};
use crate::tensor::{repr_array, str_array, DType, NdArray};

/// An eager tensor.
pub struct Tensor {
    pub tensor: ops::Tensor,
    /// Keras's mask (`_keras_mask`, bool `(batch, time)`) when a layer that makes or passes
    /// one produced this tensor; the next layer's call reads it as TF's Keras does.
    pub keras_mask: Option<ops::Tensor>,
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

/// Whether a value can be the other operand of a tensor operator.
fn is_operand(v: &Value) -> bool {
    matches!(
        v,
        Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::List(_) | Value::Tuple(_)
    ) || super::convert::holds_array(v)
}

/// TF's `truediv`: integers are divided as floats (int32 and int64 as float64, narrower
/// ones as float32), floats directly.
pub fn true_divide(e: &mut Eager, a: &ops::Tensor, b: &ops::Tensor) -> OpResult<ops::Tensor> {
    let to = match a.dtype() {
        DType::I32 | DType::I64 => Some(DType::F64),
        DType::U8 => Some(DType::F32),
        _ => None,
    };
    match to {
        Some(d) if a.dtype() == b.dtype() => {
            let (x, y) = (ops::cast(e, a, d)?, ops::cast(e, b, d)?);
            ops::div(e, &x, &y)
        }
        _ => ops::div(e, a, b),
    }
}

/// `a op b` on two converted operands, as TF's operator overloads compute it.
fn operator(
    e: &mut Eager,
    op: BinOp,
    a: &ops::Tensor,
    b: &ops::Tensor,
) -> OpResult<Option<ops::Tensor>> {
    let boolean = a.dtype() == DType::Bool;
    let binary = |e: &mut Eager, op| ops::binary(e, op, a, b).map(Some);
    match op {
        BinOp::Add => binary(e, Binary::Add),
        BinOp::Sub => binary(e, Binary::Sub),
        BinOp::Mul => binary(e, Binary::Mul),
        BinOp::Div => true_divide(e, a, b).map(Some),
        BinOp::FloorDiv => binary(e, Binary::FloorDiv),
        BinOp::Mod => binary(e, Binary::FloorMod),
        BinOp::Pow => binary(e, Binary::Pow),
        BinOp::MatMul => ops::matmul(e, a, b, false, false).map(Some),
        BinOp::BitAnd if boolean => binary(e, Binary::LogicalAnd),
        BinOp::BitOr if boolean => binary(e, Binary::LogicalOr),
        BinOp::BitXor if boolean => {
            // TF's logical_xor: (a or b) and not (a and b).
            let or = ops::binary(e, Binary::LogicalOr, a, b)?;
            let and = ops::binary(e, Binary::LogicalAnd, a, b)?;
            let nand = ops::unary(e, Unary::LogicalNot, &and)?;
            ops::binary(e, Binary::LogicalAnd, &or, &nand).map(Some)
        }
        BinOp::BitAnd => binary(e, Binary::BitwiseAnd),
        BinOp::BitOr => binary(e, Binary::BitwiseOr),
        BinOp::BitXor => binary(e, Binary::BitwiseXor),
        BinOp::LShift | BinOp::RShift => Ok(None),
    }
}

/// The operator protocol shared by tensors and variables: `mine op other` (or, reflected,
/// `other op mine`), with `other` converted to `mine`'s dtype by TF's rules.
pub fn tensor_binop(
    mine: ops::Tensor,
    op: BinOp,
    other: &Value,
    reflected: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    if !is_operand(other) {
        return Ok(None);
    }
    let theirs = tensor_as(other, mine.dtype(), ctx)?;
    let (a, b) = if reflected {
        (theirs, mine)
    } else {
        (mine, theirs)
    };
    Ok(run(ctx, |e| operator(e, op, &a, &b))?.map(wrap))
}

pub fn tensor_compare(
    mine: ops::Tensor,
    op: CmpOp,
    other: &Value,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    let bop = match op {
        CmpOp::Eq => Binary::Equal,
        CmpOp::Ne => Binary::NotEqual,
        CmpOp::Lt => Binary::Less,
        CmpOp::Le => Binary::LessEqual,
        CmpOp::Gt => Binary::Greater,
        CmpOp::Ge => Binary::GreaterEqual,
    };
    let out = if is_operand(other) {
        match tensor_as(other, mine.dtype(), ctx) {
            Ok(theirs) => run(ctx, |e| ops::binary(e, bop, &mine, &theirs)).map(|t| Some(wrap(t))),
            Err(err) => Err(err),
        }
    } else {
        Ok(None)
    };
    match out {
        // TF answers `==` with False (and `!=` with True) when the other side cannot be
        // compared with this tensor; ordering comparisons raise.
        Err(_) | Ok(None) if matches!(op, CmpOp::Eq | CmpOp::Ne) => {
            Ok(Some(Value::Bool(op == CmpOp::Ne)))
        }
        other => other,
    }
}

pub fn tensor_unary(t: ops::Tensor, op: UnaryOp, ctx: &mut dyn Ctx) -> PyResult<Value> {
    match op {
        UnaryOp::Pos => Ok(wrap(t)),
        UnaryOp::Neg => apply(ctx, |e| ops::neg(e, &t)),
        UnaryOp::Invert if t.dtype() == DType::Bool => {
            apply(ctx, |e| ops::unary(e, Unary::LogicalNot, &t))
        }
        UnaryOp::Invert => apply(ctx, |e| ops::unary(e, Unary::Invert, &t)),
    }
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

fn opt_int(v: Value, ctx: &mut dyn Ctx) -> PyResult<Option<i64>> {
    match v {
        Value::None => Ok(None),
        other => index_int(&other, ctx).map(Some),
    }
}

/// An integer index: a Python int, or a scalar integer tensor or numpy integer.
fn index_int(v: &Value, ctx: &mut dyn Ctx) -> PyResult<i64> {
    if let Value::Int(i) = v {
        return Ok(*i);
    }
    if let Some(t) = v.downcast::<Tensor>() {
        trace::value_read(ctx, &t.tensor, "a tensor as an index");
    }
    match super::convert::held_array(v) {
        Some(a) if a.ndim() == 0 && a.dtype().is_int() => {
            Ok(a.scalar_at(0).map_or(0, |s| s.as_i64()))
        }
        _ => {
            let shown = ctx.repr(v)?;
            Err(PyErr::type_error(format!(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and \
                 scalar tf.int32/tf.int64 tensors are valid indices, got {shown}"
            )))
        }
    }
}

fn slice_item(v: &Value, ctx: &mut dyn Ctx) -> PyResult<SliceItem> {
    match v {
        Value::None => Ok(SliceItem::NewAxis),
        _ if v.type_name() == "slice" => {
            let start = opt_int(ctx.getattr(v, "start")?, ctx)?;
            let stop = opt_int(ctx.getattr(v, "stop")?, ctx)?;
            let step = opt_int(ctx.getattr(v, "step")?, ctx)?;
            Ok(SliceItem::Range(start, stop, step))
        }
        _ if matches!(v.type_name().as_str(), "ellipsis" | "EllipsisType") => {
            Ok(SliceItem::Ellipsis)
        }
        other => index_int(other, ctx).map(SliceItem::Index),
    }
}

/// A boolean mask used as the whole index (`t[t > 0]`), if the key is one.
fn bool_mask(key: &Value) -> Option<std::sync::Arc<NdArray>> {
    super::convert::held_array(key).filter(|a| a.dtype() == DType::Bool && a.ndim() > 0)
}

/// `t[key]` as TF computes it: a strided slice for integers, slices, `tf.newaxis`, `...`
/// and scalar integer tensors (a Python list of them counts as a tuple, as in TF), a
/// boolean mask for a bool tensor.
pub fn tensor_getitem(t: ops::Tensor, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if let Some(mask) = bool_mask(key) {
        if let Some(k) = key.downcast::<Tensor>() {
            trace::value_read(ctx, &k.tensor, "a boolean mask");
        }
        return super::select::boolean_mask(&t, &mask, 0, ctx);
    }
    let items = match key {
        Value::Tuple(_) | Value::List(_) => key.as_seq().unwrap_or_default(),
        other => vec![other.clone()],
    };
    let spec: Vec<SliceItem> = items
        .iter()
        .map(|k| slice_item(k, ctx))
        .collect::<PyResult<_>>()?;
    apply(ctx, |e| ops::strided_slice(e, &t, &spec))
}

/// Iterating a tensor yields `t[0]`, `t[1]`, ... (slices the tape can see).
pub fn tensor_iter(t: ops::Tensor, ctx: &mut dyn Ctx) -> PyResult<Value> {
    trace::shape_read(ctx, &t);
    let Some(&n) = t.shape().first() else {
        return Err(PyErr::type_error("Cannot iterate over a scalar tensor."));
    };
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let spec = [SliceItem::Index(i as i64)];
        rows.push(apply(ctx, |e| ops::strided_slice(e, &t, &spec))?);
    }
    Ok(ItemIter::list(rows))
}

/// Attributes shared by tensors and variables (`shape`, `dtype`, `numpy`, ...). `read`
/// gives the operand for `abs()`, which tapes see.
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
        "__abs__" => {
            let me = this.clone();
            crate::lang::NativeFn::value("__abs__", "", move |_, ctx| {
                let t = tensor_of(&me, ctx)?;
                apply(ctx, |e| ops::unary(e, Unary::Abs, &t))
            })
        }
        _ => return None,
    })
}

impl Object for Tensor {
    fn type_name(&self) -> String {
        "EagerTensor".into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        if let Some((name, shape)) = trace::symbol(ctx, &self.tensor) {
            return Ok(symbolic_repr(&name, &shape, self.tensor.dtype()));
        }
        let a = self.tensor.value();
        Ok(format!(
            "<tf.Tensor: shape={}, dtype={}, numpy={}>",
            shape_text(a),
            a.dtype().name(),
            numpy_text(a, true)
        ))
    }
    fn str(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        if let Some((name, shape)) = trace::symbol(ctx, &self.tensor) {
            return Ok(symbolic_str(&name, &shape, self.tensor.dtype()));
        }
        let a = self.tensor.value();
        Ok(format!(
            "tf.Tensor({}, shape={}, dtype={})",
            numpy_text(a, false),
            shape_text(a),
            a.dtype().name()
        ))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if trace::active(ctx) {
            // A graph tensor: TF's static shape, no `numpy`, and its value read noted.
            if let Some((_, shape)) = trace::symbol(ctx, &self.tensor) {
                match name {
                    "shape" => return Ok(Some(Value::native(TensorShape { dims: shape }))),
                    "numpy" if trace::is_dynamic(ctx, &self.tensor) => {
                        return Err(trace::no_numpy())
                    }
                    "__float__" | "__int__" | "__index__" => {
                        trace::value_read(ctx, &self.tensor, &format!("{name}(tensor)"))
                    }
                    _ => {}
                }
            }
        }
        if name == "_keras_mask" {
            // TF's EagerTensor has the attribute only once Keras set it.
            return Ok(self.keras_mask.clone().map(wrap));
        }
        Ok(array_attr::<Tensor>(this, self.tensor.value(), name, |t| {
            t.tensor.value().clone()
        }))
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        tensor_binop(self.tensor.clone(), op, other, reflected, ctx)
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        tensor_compare(self.tensor.clone(), op, other, ctx)
    }
    fn unary(&self, op: UnaryOp, ctx: &mut dyn Ctx) -> PyResult<Value> {
        tensor_unary(self.tensor.clone(), op, ctx)
    }
    fn truthy(&self, ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        trace::value_read(ctx, &self.tensor, "bool(tensor)");
        array_truthy(self.tensor.value())
    }
    fn len(&self, ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        trace::shape_read(ctx, &self.tensor);
        match self.tensor.shape().first() {
            Some(n) => Ok(Some(*n)),
            None => Err(PyErr::type_error("Scalar tensor has no `len()`")),
        }
    }
    fn getitem(&self, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        tensor_getitem(self.tensor.clone(), key, ctx)
    }
    fn iter(&self, _this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        tensor_iter(self.tensor.clone(), ctx)
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

/// Whether a value is a tensor or a variable (what `tf.is_tensor` and TF's operand rule
/// count as tensors).
pub fn is_tensor(v: &Value) -> bool {
    v.downcast::<Tensor>().is_some() || variable_of(v).is_some()
}
