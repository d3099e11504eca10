//! Element-wise arithmetic, comparison and logic with broadcasting and numpy 2's type
//! promotion (NEP 50 weak Python scalars), unary math functions, `where`, `clip` and
//! matrix products. Operands are cast to the operation's dtype first, as numpy's ufunc
//! loops do, then computed in a wide kind (f64, i64 or bool) and cast to the result dtype.

use std::borrow::Cow;

use ndarray::{ArrayD, IxDyn, Zip};

use super::array::{Data, NdArray};
use super::dtype::{DType, WeakScalar};
use super::{shape_str, TResult, TensorError};

/// One side of a binary operation: an array (numpy scalars are 0-d arrays) or a Python
/// scalar, which is "weak" and adopts the array's dtype.
#[derive(Debug, Clone, Copy)]
pub enum Operand<'a> {
    Arr(&'a NdArray),
    Weak(WeakScalar),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    And,
    Or,
    Xor,
    Maximum,
    Minimum,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinaryOp {
    fn is_compare(self) -> bool {
        use BinaryOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
    fn ufunc(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Sub => "subtract",
            Mul => "multiply",
            Div => "divide",
            FloorDiv => "floor_divide",
            Mod => "remainder",
            Pow => "power",
            And => "bitwise_and",
            Or => "bitwise_or",
            Xor => "bitwise_xor",
            Maximum => "maximum",
            Minimum => "minimum",
            Eq => "equal",
            Ne => "not_equal",
            Lt => "less",
            Le => "less_equal",
            Gt => "greater",
            Ge => "greater_equal",
        }
    }
}

/// The broadcast shape of two shapes, or numpy's error naming both.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> TResult<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for (i, o) in out.iter_mut().enumerate() {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        *o = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(TensorError::Broadcast(shape_str(a), shape_str(b)));
        };
    }
    Ok(out)
}

impl<'a> Operand<'a> {
    fn shape(&self) -> Vec<usize> {
        match self {
            Operand::Arr(a) => a.shape().to_vec(),
            Operand::Weak(_) => vec![],
        }
    }
    /// The operand as an array of `dt` (weak scalars become 0-d arrays); borrowed, with
    /// no copy, when it already has that dtype.
    fn cast(&self, dt: DType) -> TResult<Cow<'a, NdArray>> {
        match self {
            Operand::Arr(a) if a.dtype() == dt => Ok(Cow::Borrowed(*a)),
            Operand::Arr(a) => Ok(Cow::Owned(a.astype(dt))),
            Operand::Weak(s) => {
                if let WeakScalar::Int(v) = s {
                    if dt.is_int() && !dt.holds_int(*v) {
                        return Err(TensorError::Overflow(format!(
                            "Python integer {v} out of bounds for {}",
                            dt.name()
                        )));
                    }
                }
                let v = match s {
                    WeakScalar::Bool(b) => *b as u8 as f64,
                    WeakScalar::Int(i) => *i as f64,
                    WeakScalar::Float(x) => *x,
                };
                let arr = NdArray::full(&[], v, dt)?;
                // Large int64 values lose precision through f64; build them directly.
                if let (WeakScalar::Int(i), DType::I64) = (s, dt) {
                    return NdArray::from_i64(&[], vec![*i]).map(Cow::Owned);
                }
                Ok(Cow::Owned(arr))
            }
        }
    }
}

/// The common dtype of two operands under NEP 50.
pub fn result_dtype(a: &Operand, b: &Operand) -> DType {
    match (a, b) {
        (Operand::Arr(x), Operand::Arr(y)) => DType::promote(x.dtype(), y.dtype()),
        (Operand::Arr(x), Operand::Weak(s)) | (Operand::Weak(s), Operand::Arr(x)) => {
            DType::promote_weak(x.dtype(), *s)
        }
        (Operand::Weak(s), Operand::Weak(t)) => {
            DType::promote(DType::of_scalar(*s), DType::of_scalar(*t))
        }
    }
}

fn zip_map<T: Copy, U>(
    x: &ArrayD<T>,
    y: &ArrayD<T>,
    shape: &[usize],
    f: impl Fn(T, T) -> U,
) -> TResult<ArrayD<U>> {
    let sh = IxDyn(shape);
    let bx = x
        .broadcast(sh.clone())
        .ok_or_else(|| TensorError::Broadcast(shape_str(x.shape()), shape_str(y.shape())))?;
    let by = y
        .broadcast(sh.clone())
        .ok_or_else(|| TensorError::Broadcast(shape_str(x.shape()), shape_str(y.shape())))?;
    let total: usize = shape.iter().product();
    if total < LONG_OPERATION {
        return Ok(Zip::from(&bx).and(&by).map_collect(|&p, &q| f(p, q)));
    }
    // A large result is computed a piece at a time, checking for an interrupt in between.
    let mut out = Vec::with_capacity(total);
    let mut pairs = bx.iter().zip(by.iter());
    while out.len() < total {
        out.extend(pairs.by_ref().take(PIECE).map(|(&p, &q)| f(p, q)));
        super::interrupt::check()?;
    }
    ArrayD::from_shape_vec(sh, out).map_err(|e| TensorError::Value(e.to_string()))
}

/// Element-wise results at least this large are computed in pieces of [`PIECE`] values with
/// an interrupt check between pieces: each piece takes milliseconds.
const LONG_OPERATION: usize = 1 << 24;
const PIECE: usize = 1 << 20;

fn py_fmod(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
        r + b
    } else {
        r
    }
}

fn float_op(op: BinaryOp, a: f64, b: f64) -> f64 {
    use BinaryOp::*;
    match op {
        Add => a + b,
        Sub => a - b,
        Mul => a * b,
        Div => a / b,
        FloorDiv => {
            if b == 0.0 {
                a / b
            } else {
                ((a - py_fmod(a, b)) / b).round()
            }
        }
        Mod => {
            if b == 0.0 {
                f64::NAN
            } else {
                py_fmod(a, b)
            }
        }
        Pow => a.powf(b),
        Maximum => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        }
        Minimum => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.min(b)
            }
        }
        _ => f64::NAN,
    }
}

fn int_op(op: BinaryOp, a: i64, b: i64) -> i64 {
    use BinaryOp::*;
    match op {
        Add => a.wrapping_add(b),
        Sub => a.wrapping_sub(b),
        Mul => a.wrapping_mul(b),
        FloorDiv => {
            if b == 0 {
                0
            } else {
                let q = a.wrapping_div(b);
                if (a % b != 0) && ((a < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                }
            }
        }
        Mod => {
            if b == 0 {
                0
            } else {
                let r = a.wrapping_rem(b);
                if r != 0 && ((r < 0) != (b < 0)) {
                    r + b
                } else {
                    r
                }
            }
        }
        Pow => a.wrapping_pow(b.clamp(0, u32::MAX as i64) as u32),
        And => a & b,
        Or => a | b,
        Xor => a ^ b,
        Maximum => a.max(b),
        Minimum => a.min(b),
        _ => 0,
    }
}

fn compare<T: PartialOrd>(op: BinaryOp, a: T, b: T) -> bool {
    use BinaryOp::*;
    match op {
        Eq => a == b,
        Ne => a != b,
        Lt => a < b,
        Le => a <= b,
        Gt => a > b,
        _ => a >= b,
    }
}

/// `a op b` with broadcasting.
pub fn binary(a: Operand, b: Operand, op: BinaryOp) -> TResult<NdArray> {
    use BinaryOp::*;
    let common = result_dtype(&a, &b);
    let shape = broadcast_shapes(&a.shape(), &b.shape())?;
    super::check_alloc(&shape, common)?;
    // The operands are converted to a wide type (8 bytes a value) before the result is
    // made: the working set must fit as well as the result.
    let values = |o: &Operand| o.shape().iter().product::<usize>() as u128;
    let working =
        (values(&a) + values(&b)) * 16 + shape.iter().map(|&d| d as u128).product::<u128>() * 8;
    if !crate::memory::fits(working) {
        return Err(TensorError::Memory(format!(
            "Unable to allocate {} for the operands and result of an operation with shape {} and data type {}",
            crate::memory::size_string(working),
            shape_str(&shape),
            common.name()
        )));
    }
    let unsupported = || {
        TensorError::Type(format!(
            "ufunc '{}' not supported for the input types, and the inputs could not be \
             safely coerced to any supported types according to the casting rule ''safe''",
            op.ufunc()
        ))
    };
    if op.is_compare() {
        let out = if common.is_float() {
            let (x, y) = (
                a.cast(common)?.to_f64_array(),
                b.cast(common)?.to_f64_array(),
            );
            zip_map(&x, &y, &shape, |p, q| compare(op, p, q))?
        } else {
            let (x, y) = (
                a.cast(common)?.to_i64_array(),
                b.cast(common)?.to_i64_array(),
            );
            zip_map(&x, &y, &shape, |p, q| compare(op, p, q))?
        };
        return Ok(NdArray::new(Data::Bool(out)));
    }
    if common == DType::Bool {
        let (x, y) = (
            a.cast(common)?.to_bool_array(),
            b.cast(common)?.to_bool_array(),
        );
        let f: fn(bool, bool) -> bool = match op {
            Add | Or | Maximum => |p, q| p | q,
            Mul | And | Minimum => |p, q| p & q,
            Xor => |p, q| p ^ q,
            Sub => {
                return Err(TensorError::Type(
                    "numpy boolean subtract, the `-` operator, is not supported, use the \
                     bitwise_xor, the `^` operator, or the logical_xor function instead."
                        .into(),
                ))
            }
            _ => {
                // Division and powers of booleans compute on integers, as numpy's loops do.
                let (xi, yi) = (a.cast(DType::I64)?, b.cast(DType::I64)?);
                return binary(Operand::Arr(&xi), Operand::Arr(&yi), op).map(|r| {
                    if op == Div {
                        r
                    } else {
                        r.astype(DType::I64)
                    }
                });
            }
        };
        return Ok(NdArray::new(Data::Bool(zip_map(&x, &y, &shape, f)?)));
    }
    let float = common.is_float() || op == Div;
    if common.is_float() && matches!(op, And | Or | Xor) {
        return Err(unsupported());
    }
    if float {
        let work = if common.is_float() {
            common
        } else {
            DType::F64
        };
        if work == DType::F32 && matches!(op, Add | Sub | Mul | Div) {
            // float32 +-*/ rounded once from float64 equals the float32 operation, so the
            // hot path (normalizing images, scaling weights) computes in float32 directly.
            let (x, y) = (a.cast(work)?, b.cast(work)?);
            if let (Data::F32(x), Data::F32(y)) = (&x.data, &y.data) {
                let f: fn(f32, f32) -> f32 = match op {
                    Add => |p, q| p + q,
                    Sub => |p, q| p - q,
                    Mul => |p, q| p * q,
                    _ => |p, q| p / q,
                };
                return Ok(NdArray::new(Data::F32(zip_map(x, y, &shape, f)?)));
            }
        }
        let (x, y) = (a.cast(work)?.to_f64_array(), b.cast(work)?.to_f64_array());
        let out = zip_map(&x, &y, &shape, |p, q| float_op(op, p, q))?;
        return Ok(NdArray::new(Data::F64(out)).astype(work));
    }
    let (x, y) = (
        a.cast(common)?.to_i64_array(),
        b.cast(common)?.to_i64_array(),
    );
    if op == Pow && y.iter().any(|&v| v < 0) {
        return Err(TensorError::Value(
            "Integers to negative integer powers are not allowed.".into(),
        ));
    }
    let out = zip_map(&x, &y, &shape, |p, q| int_op(op, p, q))?;
    Ok(NdArray::new(Data::I64(out)).astype(common))
}

/// `np.where(cond, x, y)`.
pub fn where_(cond: &NdArray, x: Operand, y: Operand) -> TResult<NdArray> {
    let dt = result_dtype(&x, &y);
    let s1 = broadcast_shapes(cond.shape(), &x.shape())?;
    let shape = broadcast_shapes(&s1, &y.shape())?;
    let c = cond.to_bool_array();
    let c = c
        .broadcast(IxDyn(&shape))
        .ok_or_else(|| TensorError::Broadcast(shape_str(cond.shape()), shape_str(&shape)))?;
    let (xa, ya) = (x.cast(dt)?, y.cast(dt)?);
    let pick = |xv: &ArrayD<f64>, yv: &ArrayD<f64>| -> TResult<ArrayD<f64>> {
        let bx = xv
            .broadcast(IxDyn(&shape))
            .ok_or_else(|| TensorError::Broadcast(shape_str(xv.shape()), shape_str(&shape)))?;
        let by = yv
            .broadcast(IxDyn(&shape))
            .ok_or_else(|| TensorError::Broadcast(shape_str(yv.shape()), shape_str(&shape)))?;
        Ok(Zip::from(&c)
            .and(&bx)
            .and(&by)
            .map_collect(|&k, &p, &q| if k { p } else { q }))
    };
    if dt == DType::I64 {
        let (xi, yi) = (xa.to_i64_array(), ya.to_i64_array());
        let bx = xi.broadcast(IxDyn(&shape));
        let by = yi.broadcast(IxDyn(&shape));
        if let (Some(bx), Some(by)) = (bx, by) {
            let out = Zip::from(&c)
                .and(&bx)
                .and(&by)
                .map_collect(|&k, &p, &q| if k { p } else { q });
            return Ok(NdArray::new(Data::I64(out)));
        }
    }
    let out = pick(&xa.to_f64_array(), &ya.to_f64_array())?;
    Ok(NdArray::new(Data::F64(out)).astype(dt))
}

/// `np.clip(a, lo, hi)`; either bound may be absent.
pub fn clip(a: &NdArray, lo: Option<Operand>, hi: Option<Operand>) -> TResult<NdArray> {
    let mut out = a.clone();
    if let Some(lo) = lo {
        out = binary(Operand::Arr(&out), lo, BinaryOp::Maximum)?;
    }
    if let Some(hi) = hi {
        out = binary(Operand::Arr(&out), hi, BinaryOp::Minimum)?;
    }
    Ok(out)
}
