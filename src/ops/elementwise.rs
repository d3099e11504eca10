//! Element-wise ops: math of one tensor ([`Unary`]), arithmetic, comparison and logic of
//! two broadcast tensors ([`Binary`]), and the pointwise ops that are neither
//! ([`Pointwise`]: cast, select, AddN, zeros/ones-like, identity, stop-gradient and
//! variable reads). Values are computed by the tensor part with numpy's arithmetic on the
//! inputs' common dtype (TF never promotes: both inputs must already share it); the
//! gradients follow TensorFlow's `math_grad.py`, with broadcast gradients summed back to
//! each input's shape.

use super::eager::Eager;
use super::error::{
    dims, Allowed, ErrorClass, OpError, OpResult, FLOAT, FLOAT_COMPLEX, INTEGER, NUMBER,
};
use super::op::{first, inputs, node_inputs, Op};
use super::reduce::sum_to;
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::Device;
use crate::tensor::math::unary as np_unary;
use crate::tensor::ops::{binary as np_binary, broadcast_shapes, where_, Operand};
use crate::tensor::{BinaryOp, DType, NdArray, UnaryFn};

/// Element-wise functions of one tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unary {
    Neg,
    Abs,
    Sign,
    Square,
    Sqrt,
    Rsqrt,
    Reciprocal,
    Exp,
    Expm1,
    Log,
    Log1p,
    Sin,
    Cos,
    Tan,
    Erf,
    Floor,
    Ceil,
    Round,
    IsNan,
    IsInf,
    IsFinite,
    LogicalNot,
    /// Bitwise not of an integer (`~x`).
    Invert,
}

/// Computes `f` in float64 and casts back to the input's dtype (one rounding, as numpy's
/// float32 loops round each result).
fn map_f64(a: &NdArray, f: impl Fn(f64) -> f64) -> NdArray {
    NdArray::new(crate::tensor::Data::F64(a.to_f64_array().mapv(f))).astype(a.dtype())
}

impl Unary {
    pub fn name(self) -> &'static str {
        use Unary::*;
        match self {
            Neg => "Neg",
            Abs => "Abs",
            Sign => "Sign",
            Square => "Square",
            Sqrt => "Sqrt",
            Rsqrt => "Rsqrt",
            Reciprocal => "Reciprocal",
            Exp => "Exp",
            Expm1 => "Expm1",
            Log => "Log",
            Log1p => "Log1p",
            Sin => "Sin",
            Cos => "Cos",
            Tan => "Tan",
            Erf => "Erf",
            Floor => "Floor",
            Ceil => "Ceil",
            Round => "Round",
            IsNan => "IsNan",
            IsInf => "IsInf",
            IsFinite => "IsFinite",
            LogicalNot => "LogicalNot",
            Invert => "Invert",
        }
    }

    /// The dtypes TF's op definition allows, or `None` for numbers of any kind.
    fn float_only(self) -> Option<Allowed> {
        use Unary::*;
        match self {
            Sqrt | Rsqrt | Exp | Expm1 | Log | Log1p | Sin | Cos | Tan => Some(FLOAT_COMPLEX),
            Erf | Floor | Ceil | IsNan | IsInf | IsFinite => Some(FLOAT),
            _ => None,
        }
    }

    pub(crate) fn forward(self, _dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        use Unary::*;
        let [x] = inputs::<1>(self.name(), given)?;
        let dt = x.dtype();
        if self == LogicalNot {
            if dt != DType::Bool {
                return Err(OpError::input_dtype(self.name(), 0, DType::Bool, dt));
            }
            return Ok(vec![NdArray::new(crate::tensor::Data::Bool(
                x.to_bool_array().mapv(|v| !v),
            ))]);
        }
        if self == Invert {
            if !dt.is_int() {
                return Err(OpError::attr_dtype(self.name(), "x:T -> y:T", dt, INTEGER));
            }
            return Ok(vec![
                np_unary(x, UnaryFn::Invert).map_err(OpError::internal)?
            ]);
        }
        if let Some(allowed) = self.float_only() {
            if !dt.is_float() {
                return Err(OpError::attr_dtype(self.name(), "x:T -> y:T", dt, allowed));
            }
        } else if dt == DType::Bool {
            return Err(OpError::attr_dtype(self.name(), "x:T -> y:T", dt, NUMBER));
        }
        let via = |f: UnaryFn| {
            np_unary(x, f)
                .map(|r| r.astype(dt))
                .map_err(|e| OpError::from_tensor(self.name(), "CPU:0", e))
        };
        let out = match self {
            Neg => via(UnaryFn::Neg)?,
            Abs => via(UnaryFn::Abs)?,
            Sign => via(UnaryFn::Sign)?,
            Square => via(UnaryFn::Square)?,
            Sqrt => via(UnaryFn::Sqrt)?,
            Exp => via(UnaryFn::Exp)?,
            Expm1 => via(UnaryFn::Expm1)?,
            Log => via(UnaryFn::Log)?,
            Log1p => via(UnaryFn::Log1p)?,
            Sin => via(UnaryFn::Sin)?,
            Cos => via(UnaryFn::Cos)?,
            Tan => via(UnaryFn::Tan)?,
            Floor => via(UnaryFn::Floor)?,
            Ceil => via(UnaryFn::Ceil)?,
            Round => via(UnaryFn::Round(0))?,
            IsNan => via_bool(x, UnaryFn::IsNan)?,
            IsInf => via_bool(x, UnaryFn::IsInf)?,
            IsFinite => via_bool(x, UnaryFn::IsFinite)?,
            Rsqrt => map_f64(x, |v| 1.0 / v.sqrt()),
            Erf => map_f64(x, libm::erf),
            Reciprocal if dt.is_float() => map_f64(x, |v| 1.0 / v),
            // Integer reciprocal is integer division, as TF's kernel computes it.
            Reciprocal => NdArray::new(crate::tensor::Data::I64(x.to_i64_array().mapv(|v| {
                if v == 0 {
                    0
                } else {
                    1 / v
                }
            })))
            .astype(dt),
            LogicalNot | Invert => x.clone(),
        };
        Ok(vec![out])
    }

    pub(crate) fn vjp(
        self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        use Unary::*;
        let [x] = node_inputs::<1>(node)?;
        let (y, dy) = first(node, grads)?;
        let dt = x.dtype();
        let g = match self {
            Neg => neg(e, dy)?,
            Abs => {
                let s = unary(e, Sign, x)?;
                mul(e, dy, &s)?
            }
            // TF's gradient of sign is zeros: connected, but flat.
            Sign => zeros_like(e, x)?,
            Square => {
                let two_x = mul(e, &Tensor::scalar(2.0, dt), x)?;
                mul(e, dy, &two_x)?
            }
            Sqrt => {
                // SqrtGrad: dy * 0.5 / y.
                let half = mul(e, dy, &Tensor::scalar(0.5, dt))?;
                div(e, &half, y)?
            }
            Rsqrt => {
                // RsqrtGrad: dy * -0.5 * y^3.
                let y2 = square(e, y)?;
                let y3 = mul(e, y, &y2)?;
                let s = mul(e, &Tensor::scalar(-0.5, dt), &y3)?;
                mul(e, dy, &s)?
            }
            Reciprocal => {
                // ReciprocalGrad: -dy * y^2.
                let y2 = square(e, y)?;
                let d = mul(e, dy, &y2)?;
                neg(e, &d)?
            }
            Exp => mul(e, dy, y)?,
            Expm1 => {
                let ex = unary(e, Exp, x)?;
                mul(e, dy, &ex)?
            }
            Log => {
                let r = unary(e, Reciprocal, x)?;
                mul(e, dy, &r)?
            }
            Log1p => {
                let xp1 = add(e, &Tensor::scalar(1.0, dt), x)?;
                let r = unary(e, Reciprocal, &xp1)?;
                mul(e, dy, &r)?
            }
            Sin => {
                let c = unary(e, Cos, x)?;
                mul(e, dy, &c)?
            }
            Cos => {
                let s = unary(e, Sin, x)?;
                let d = mul(e, dy, &s)?;
                neg(e, &d)?
            }
            Tan => {
                let c = unary(e, Cos, x)?;
                let sec = unary(e, Reciprocal, &c)?;
                let sec2 = square(e, &sec)?;
                mul(e, dy, &sec2)?
            }
            Erf => {
                // d erf(x) = 2/sqrt(pi) exp(-x^2).
                let x2 = square(e, x)?;
                let nx2 = neg(e, &x2)?;
                let ex = unary(e, Exp, &nx2)?;
                let s = mul(
                    e,
                    &Tensor::scalar(std::f64::consts::FRAC_2_SQRT_PI, dt),
                    &ex,
                )?;
                mul(e, dy, &s)?
            }
            Floor | Ceil | Round | LogicalNot | Invert => return Ok(vec![None]),
            IsNan | IsInf | IsFinite => return Err(OpError::no_gradient(self.name())),
        };
        Ok(vec![Some(g)])
    }
}

fn via_bool(x: &NdArray, f: UnaryFn) -> OpResult<NdArray> {
    np_unary(x, f).map_err(OpError::internal)
}

/// Element-wise functions of two tensors, broadcast against each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    FloorMod,
    TruncateMod,
    Pow,
    Maximum,
    Minimum,
    SquaredDifference,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    LogicalAnd,
    LogicalOr,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
}

impl Binary {
    pub fn name(self) -> &'static str {
        use Binary::*;
        match self {
            Add => "AddV2",
            Sub => "Sub",
            Mul => "Mul",
            Div => "RealDiv",
            FloorDiv => "FloorDiv",
            FloorMod => "FloorMod",
            TruncateMod => "TruncateMod",
            Pow => "Pow",
            Maximum => "Maximum",
            Minimum => "Minimum",
            SquaredDifference => "SquaredDifference",
            Equal => "Equal",
            NotEqual => "NotEqual",
            Less => "Less",
            LessEqual => "LessEqual",
            Greater => "Greater",
            GreaterEqual => "GreaterEqual",
            LogicalAnd => "LogicalAnd",
            LogicalOr => "LogicalOr",
            BitwiseAnd => "BitwiseAnd",
            BitwiseOr => "BitwiseOr",
            BitwiseXor => "BitwiseXor",
        }
    }

    pub fn is_comparison(self) -> bool {
        use Binary::*;
        matches!(
            self,
            Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual
        )
    }

    fn numpy_op(self) -> Option<BinaryOp> {
        use Binary::*;
        Some(match self {
            Add => BinaryOp::Add,
            Sub => BinaryOp::Sub,
            Mul => BinaryOp::Mul,
            Div => BinaryOp::Div,
            FloorDiv => BinaryOp::FloorDiv,
            FloorMod => BinaryOp::Mod,
            Pow => BinaryOp::Pow,
            Maximum => BinaryOp::Maximum,
            Minimum => BinaryOp::Minimum,
            Equal => BinaryOp::Eq,
            NotEqual => BinaryOp::Ne,
            Less => BinaryOp::Lt,
            LessEqual => BinaryOp::Le,
            Greater => BinaryOp::Gt,
            GreaterEqual => BinaryOp::Ge,
            LogicalAnd | BitwiseAnd => BinaryOp::And,
            LogicalOr | BitwiseOr => BinaryOp::Or,
            BitwiseXor => BinaryOp::Xor,
            TruncateMod | SquaredDifference => return None,
        })
    }

    fn check_dtype(self, dt: DType) -> OpResult<()> {
        use Binary::*;
        let sig = "x:T, y:T -> z:T";
        match self {
            LogicalAnd | LogicalOr if dt != DType::Bool => {
                Err(OpError::input_dtype(self.name(), 0, DType::Bool, dt))
            }
            BitwiseAnd | BitwiseOr | BitwiseXor if !dt.is_int() => {
                Err(OpError::attr_dtype(self.name(), sig, dt, INTEGER))
            }
            Equal | NotEqual | LogicalAnd | LogicalOr | BitwiseAnd | BitwiseOr | BitwiseXor => {
                Ok(())
            }
            _ if dt == DType::Bool => Err(OpError::attr_dtype(self.name(), sig, dt, NUMBER)),
            _ => Ok(()),
        }
    }

    pub(crate) fn forward(self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let [a, b] = inputs::<2>(self.name(), given)?;
        let dev = dev.name();
        if a.dtype() != b.dtype() {
            return Err(OpError::input_dtype(self.name(), 1, a.dtype(), b.dtype()));
        }
        let dt = a.dtype();
        self.check_dtype(dt)?;
        let shape = broadcast_shapes(a.shape(), b.shape()).map_err(|_| {
            OpError::kernel(
                self.name(),
                &dev,
                &format!(
                    "Incompatible shapes: {} vs. {}",
                    dims(a.shape()),
                    dims(b.shape())
                ),
            )
        })?;
        let kernel = |m: &str| OpError::kernel(self.name(), &dev, m);
        let tensor_err = |e| OpError::from_tensor(self.name(), &dev, e);
        if dt.is_int() {
            let zero_divisor = b.to_i64_array().iter().any(|&v| v == 0);
            if zero_divisor
                && matches!(
                    self,
                    Binary::FloorDiv | Binary::FloorMod | Binary::TruncateMod
                )
            {
                return Err(kernel("Integer division by zero"));
            }
            if self == Binary::Pow && b.to_i64_array().iter().any(|&v| v < 0) {
                return Err(kernel(
                    "Integers to negative integer powers are not allowed",
                ));
            }
        }
        let out = match self {
            Binary::TruncateMod => truncate_mod(a, b, &shape).map_err(tensor_err)?,
            Binary::SquaredDifference => {
                let d = np_binary(Operand::Arr(a), Operand::Arr(b), BinaryOp::Sub)
                    .map_err(tensor_err)?;
                np_binary(Operand::Arr(&d), Operand::Arr(&d), BinaryOp::Mul).map_err(tensor_err)?
            }
            op => {
                let np = op
                    .numpy_op()
                    .ok_or_else(|| kernel("unsupported operation"))?;
                np_binary(Operand::Arr(a), Operand::Arr(b), np).map_err(tensor_err)?
            }
        };
        // numpy widens integer division to float64; TF's kernels keep the input dtype.
        let out = if self.is_comparison() || dt == DType::Bool {
            out
        } else {
            out.astype(dt)
        };
        Ok(vec![out])
    }

    pub(crate) fn vjp(
        self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        use Binary::*;
        let [a, b] = node_inputs::<2>(node)?;
        let (z, dy) = first(node, grads)?;
        let (ga, gb) = match self {
            Add => (dy.clone(), dy.clone()),
            Sub => (dy.clone(), neg(e, dy)?),
            Mul => (mul(e, dy, b)?, mul(e, a, dy)?),
            Div => {
                let ga = div(e, dy, b)?;
                let na = neg(e, a)?;
                let t = div(e, &na, b)?;
                let t = div(e, &t, b)?;
                (ga, mul(e, dy, &t)?)
            }
            FloorMod => {
                let q = binary(e, FloorDiv, a, b)?;
                let nq = neg(e, &q)?;
                (dy.clone(), mul(e, dy, &nq)?)
            }
            Pow => {
                let dt = a.dtype();
                let bm1 = sub(e, b, &Tensor::scalar(1.0, dt))?;
                let p = binary(e, Pow, a, &bm1)?;
                let t = mul(e, b, &p)?;
                let ga = mul(e, dy, &t)?;
                // d/db a^b = a^b log(a), taken as 0 where a <= 0 (TF masks the log).
                let zero = zeros_like(e, a)?;
                let mask = binary(e, Greater, a, &zero)?;
                let one = ones_like(e, a)?;
                let safe = select(e, &mask, a, &one)?;
                let l = unary(e, Unary::Log, &safe)?;
                let log_a = select(e, &mask, &l, &zero)?;
                let t = mul(e, z, &log_a)?;
                (ga, mul(e, dy, &t)?)
            }
            Maximum | Minimum => {
                // Ties go to the first input, as TF's selector (>= or <=) sends them.
                let sel = if self == Maximum {
                    GreaterEqual
                } else {
                    LessEqual
                };
                let m = binary(e, sel, a, b)?;
                let zero = zeros_like(e, dy)?;
                (select(e, &m, dy, &zero)?, select(e, &m, &zero, dy)?)
            }
            SquaredDifference => {
                let d = sub(e, a, b)?;
                let t = mul(e, &Tensor::scalar(2.0, a.dtype()), dy)?;
                let ga = mul(e, &t, &d)?;
                let gb = neg(e, &ga)?;
                (ga, gb)
            }
            FloorDiv | Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual
            | LogicalAnd | LogicalOr | BitwiseAnd | BitwiseOr | BitwiseXor => {
                return Ok(vec![None, None])
            }
            TruncateMod => return Err(OpError::no_gradient(self.name())),
        };
        Ok(vec![
            Some(sum_to(e, ga, a.shape())?),
            Some(sum_to(e, gb, b.shape())?),
        ])
    }
}

/// C's `fmod`: the remainder with the sign of the dividend.
fn truncate_mod(a: &NdArray, b: &NdArray, shape: &[usize]) -> crate::tensor::TResult<NdArray> {
    use ndarray::{IxDyn, Zip};
    let sh = IxDyn(shape);
    let bad = || crate::tensor::TensorError::Value("shapes do not broadcast".into());
    if a.dtype().is_float() {
        let (x, y) = (a.to_f64_array(), b.to_f64_array());
        let (x, y) = (
            x.broadcast(sh.clone()).ok_or_else(bad)?,
            y.broadcast(sh).ok_or_else(bad)?,
        );
        let out = Zip::from(&x).and(&y).map_collect(|&p, &q| p % q);
        Ok(NdArray::new(crate::tensor::Data::F64(out)).astype(a.dtype()))
    } else {
        let (x, y) = (a.to_i64_array(), b.to_i64_array());
        let (x, y) = (
            x.broadcast(sh.clone()).ok_or_else(bad)?,
            y.broadcast(sh).ok_or_else(bad)?,
        );
        let out = Zip::from(&x)
            .and(&y)
            .map_collect(|&p, &q| if q == 0 { 0 } else { p.wrapping_rem(q) });
        Ok(NdArray::new(crate::tensor::Data::I64(out)).astype(a.dtype()))
    }
}

/// Ops that act on each element without being arithmetic: dtype casts, selection,
/// summation of many tensors, constant fills and the pass-through ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Pointwise {
    Cast(DType),
    /// Inputs `[condition, x, y]`, broadcast together (TF's `SelectV2`).
    Select,
    AddN,
    ZerosLike,
    OnesLike,
    Identity,
    StopGradient,
    /// A variable read as a tape records it: an identity from the variable's handle.
    ReadVariable,
}

impl Pointwise {
    pub fn name(&self) -> &'static str {
        match self {
            Pointwise::Cast(_) => "Cast",
            Pointwise::Select => "SelectV2",
            Pointwise::AddN => "AddN",
            Pointwise::ZerosLike => "ZerosLike",
            Pointwise::OnesLike => "OnesLike",
            Pointwise::Identity => "Identity",
            Pointwise::StopGradient => "StopGradient",
            Pointwise::ReadVariable => "ReadVariableOp",
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let dev = dev.name();
        let out = match self {
            Pointwise::Cast(to) => {
                let [x] = inputs::<1>(self.name(), given)?;
                x.astype(*to)
            }
            Pointwise::Select => {
                let [c, x, y] = inputs::<3>(self.name(), given)?;
                if c.dtype() != DType::Bool {
                    return Err(OpError::input_dtype(self.name(), 0, DType::Bool, c.dtype()));
                }
                if x.dtype() != y.dtype() {
                    return Err(OpError::input_dtype(self.name(), 2, x.dtype(), y.dtype()));
                }
                let shape = broadcast_shapes(c.shape(), x.shape())
                    .and_then(|s| broadcast_shapes(&s, y.shape()));
                if shape.is_err() {
                    return Err(OpError::kernel(
                        self.name(),
                        &dev,
                        &format!(
                            "condition [{}], then [{}], and else [{}] must be broadcastable",
                            join(c.shape()),
                            join(x.shape()),
                            join(y.shape())
                        ),
                    ));
                }
                where_(c, Operand::Arr(x), Operand::Arr(y))
                    .map_err(|e| OpError::from_tensor(self.name(), &dev, e))?
                    .astype(x.dtype())
            }
            Pointwise::AddN => {
                let Some((head, rest)) = given.split_first() else {
                    return Err(OpError::new(
                        ErrorClass::Value,
                        "inputs must be a list of at least one Tensor with the same dtype and shape",
                    ));
                };
                let mut total = (*head).clone();
                for (i, t) in rest.iter().enumerate() {
                    if t.dtype() != head.dtype() {
                        return Err(OpError::input_dtype(
                            self.name(),
                            i + 1,
                            head.dtype(),
                            t.dtype(),
                        ));
                    }
                    if t.shape() != head.shape() {
                        return Err(OpError::kernel(
                            self.name(),
                            &dev,
                            &format!(
                                "Inputs to operation AddN of type AddN must have the same size and \
                                 shape.  Input 0: {} != input {}: {}",
                                dims(head.shape()),
                                i + 1,
                                dims(t.shape())
                            ),
                        ));
                    }
                    total = np_binary(Operand::Arr(&total), Operand::Arr(t), BinaryOp::Add)
                        .map_err(|e| OpError::from_tensor(self.name(), &dev, e))?
                        .astype(head.dtype());
                }
                total
            }
            Pointwise::ZerosLike | Pointwise::OnesLike => {
                let [x] = inputs::<1>(self.name(), given)?;
                let v = if *self == Pointwise::OnesLike {
                    1.0
                } else {
                    0.0
                };
                NdArray::full(x.shape(), v, x.dtype())
                    .map_err(|e| OpError::from_tensor(self.name(), &dev, e))?
            }
            Pointwise::Identity | Pointwise::StopGradient | Pointwise::ReadVariable => {
                let [x] = inputs::<1>(self.name(), given)?;
                x.clone()
            }
        };
        Ok(vec![out])
    }

    pub(crate) fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let (_, dy) = first(node, grads)?;
        Ok(match self {
            Pointwise::Cast(_) => {
                let [x] = node_inputs::<1>(node)?;
                if x.is_float() && dy.is_float() {
                    vec![Some(cast(e, dy, x.dtype())?)]
                } else {
                    vec![None]
                }
            }
            Pointwise::Select => {
                let [c, x, y] = node_inputs::<3>(node)?;
                let zero = zeros_like(e, dy)?;
                let gx = select(e, c, dy, &zero)?;
                let gy = select(e, c, &zero, dy)?;
                vec![
                    None,
                    Some(sum_to(e, gx, x.shape())?),
                    Some(sum_to(e, gy, y.shape())?),
                ]
            }
            Pointwise::AddN => vec![Some(dy.clone()); node.inputs.len()],
            Pointwise::Identity | Pointwise::ReadVariable => vec![Some(dy.clone())],
            Pointwise::ZerosLike | Pointwise::OnesLike | Pointwise::StopGradient => vec![None],
        })
    }
}

fn join(shape: &[usize]) -> String {
    shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

// Builders: each runs one op through the context (recorded on active tapes).

pub fn unary(e: &mut Eager, op: Unary, x: &Tensor) -> OpResult<Tensor> {
    e.execute1(Op::Unary(op), std::slice::from_ref(x))
}

pub fn binary(e: &mut Eager, op: Binary, a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
    e.execute1(Op::Binary(op), &[a.clone(), b.clone()])
}

pub fn add(e: &mut Eager, a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
    binary(e, Binary::Add, a, b)
}

pub fn sub(e: &mut Eager, a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
    binary(e, Binary::Sub, a, b)
}

pub fn mul(e: &mut Eager, a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
    binary(e, Binary::Mul, a, b)
}

pub fn div(e: &mut Eager, a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
    binary(e, Binary::Div, a, b)
}

pub fn neg(e: &mut Eager, x: &Tensor) -> OpResult<Tensor> {
    unary(e, Unary::Neg, x)
}

pub fn square(e: &mut Eager, x: &Tensor) -> OpResult<Tensor> {
    unary(e, Unary::Square, x)
}

/// `x * s` for a Python number `s` (taken in `x`'s dtype).
pub fn scale(e: &mut Eager, x: &Tensor, s: f64) -> OpResult<Tensor> {
    mul(e, x, &Tensor::scalar(s, x.dtype()))
}

pub fn cast(e: &mut Eager, x: &Tensor, to: DType) -> OpResult<Tensor> {
    e.execute1(Op::Pointwise(Pointwise::Cast(to)), std::slice::from_ref(x))
}

/// `tf.where(condition, x, y)`.
pub fn select(e: &mut Eager, c: &Tensor, x: &Tensor, y: &Tensor) -> OpResult<Tensor> {
    e.execute1(
        Op::Pointwise(Pointwise::Select),
        &[c.clone(), x.clone(), y.clone()],
    )
}

pub fn add_n(e: &mut Eager, xs: &[Tensor]) -> OpResult<Tensor> {
    e.execute1(Op::Pointwise(Pointwise::AddN), xs)
}

pub fn zeros_like(e: &mut Eager, x: &Tensor) -> OpResult<Tensor> {
    e.execute1(Op::Pointwise(Pointwise::ZerosLike), std::slice::from_ref(x))
}

pub fn ones_like(e: &mut Eager, x: &Tensor) -> OpResult<Tensor> {
    e.execute1(Op::Pointwise(Pointwise::OnesLike), std::slice::from_ref(x))
}

pub fn identity(e: &mut Eager, x: &Tensor) -> OpResult<Tensor> {
    e.execute1(Op::Pointwise(Pointwise::Identity), std::slice::from_ref(x))
}

pub fn stop_gradient(e: &mut Eager, x: &Tensor) -> OpResult<Tensor> {
    e.execute1(
        Op::Pointwise(Pointwise::StopGradient),
        std::slice::from_ref(x),
    )
}

/// `tf.clip_by_value(t, lo, hi)`: as TF defines it, `maximum(minimum(t, hi), lo)`, so the
/// gradient reaches `t` where it lies within the bounds (ends included) and a bound where
/// it applies.
pub fn clip_by_value(e: &mut Eager, t: &Tensor, lo: &Tensor, hi: &Tensor) -> OpResult<Tensor> {
    let m = binary(e, Binary::Minimum, t, hi)?;
    binary(e, Binary::Maximum, &m, lo)
}
