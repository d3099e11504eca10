//! Element-wise arithmetic, comparison and logic with broadcasting and numpy 2's type
//! promotion (NEP 50 weak Python scalars), unary math functions, `where`, `clip` and
//! matrix products. Operands are cast to the operation's dtype first, as numpy's ufunc
//! loops do, then computed in a wide kind (f64, i64 or bool) and cast to the result dtype.

use ndarray::{ArrayD, Ix2, IxDyn, Zip};

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

impl Operand<'_> {
    fn shape(&self) -> Vec<usize> {
        match self {
            Operand::Arr(a) => a.shape().to_vec(),
            Operand::Weak(_) => vec![],
        }
    }
    /// The operand as an array of `dt` (weak scalars become 0-d arrays).
    fn cast(&self, dt: DType) -> TResult<NdArray> {
        match self {
            Operand::Arr(a) => Ok(a.astype(dt)),
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
                    return NdArray::from_i64(&[], vec![*i]);
                }
                Ok(arr)
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
        .broadcast(sh)
        .ok_or_else(|| TensorError::Broadcast(shape_str(x.shape()), shape_str(y.shape())))?;
    Ok(Zip::from(&bx).and(&by).map_collect(|&p, &q| f(p, q)))
}

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

/// Element-wise functions of one array.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnaryFn {
    Neg,
    Abs,
    Sqrt,
    Exp,
    Log,
    Log10,
    Log2,
    Sin,
    Cos,
    Tan,
    Tanh,
    Floor,
    Ceil,
    Sign,
    Square,
    /// `round(decimals)`, half to even as numpy rounds.
    Round(i32),
    LogicalNot,
    Invert,
    IsNan,
    IsInf,
    IsFinite,
}

fn round_half_even(x: f64, decimals: i32) -> f64 {
    if decimals == 0 {
        return x.round_ties_even();
    }
    let scale = 10f64.powi(decimals);
    (x * scale).round_ties_even() / scale
}

/// `f(a)`, with numpy's result dtypes (math on integers gives float64).
pub fn unary(a: &NdArray, f: UnaryFn) -> TResult<NdArray> {
    use UnaryFn::*;
    let dt = a.dtype();
    match f {
        IsNan | IsInf | IsFinite => {
            let x = a.to_f64_array();
            let g: fn(f64) -> bool = match f {
                IsNan => f64::is_nan,
                IsInf => f64::is_infinite,
                _ => f64::is_finite,
            };
            return Ok(NdArray::new(Data::Bool(x.mapv(g))));
        }
        LogicalNot => return Ok(NdArray::new(Data::Bool(a.to_bool_array().mapv(|v| !v)))),
        Invert => {
            return match &a.data {
                Data::Bool(x) => Ok(NdArray::new(Data::Bool(x.mapv(|v| !v)))),
                _ if dt.is_int() => {
                    Ok(NdArray::new(Data::I64(a.to_i64_array().mapv(|v| !v))).astype(dt))
                }
                _ => Err(TensorError::Type(
                    "ufunc 'invert' not supported for the input types, and the inputs could \
                     not be safely coerced to any supported types according to the casting \
                     rule ''safe''"
                        .into(),
                )),
            };
        }
        _ => {}
    }
    if dt == DType::Bool && f == Neg {
        return Err(TensorError::Type(
            "The numpy boolean negative, the `-` operator, is not supported, use the `~` \
             operator or the logical_not function instead."
                .into(),
        ));
    }
    let keeps_int = matches!(f, Neg | Abs | Sign | Square | Round(_) | Floor | Ceil);
    if keeps_int && !dt.is_float() {
        let x = a.to_i64_array();
        let out = x.mapv(|v| match f {
            Neg => v.wrapping_neg(),
            Abs => v.wrapping_abs(),
            Sign => v.signum(),
            Square => v.wrapping_mul(v),
            Round(d) if d < 0 => {
                let p = 10i64.pow((-d) as u32);
                (round_half_even(v as f64 / p as f64, 0) as i64) * p
            }
            _ => v,
        });
        let out_dt = if dt == DType::Bool && f != Round(0) {
            DType::I64
        } else {
            dt
        };
        return Ok(NdArray::new(Data::I64(out)).astype(out_dt));
    }
    let work = if dt.is_float() { dt } else { DType::F64 };
    let x = a.to_f64_array();
    let g = |v: f64| -> f64 {
        match f {
            Neg => -v,
            Abs => v.abs(),
            Sqrt => v.sqrt(),
            Exp => v.exp(),
            Log => v.ln(),
            Log10 => v.log10(),
            Log2 => v.log2(),
            Sin => v.sin(),
            Cos => v.cos(),
            Tan => v.tan(),
            Tanh => v.tanh(),
            Floor => v.floor(),
            Ceil => v.ceil(),
            Sign => {
                if v.is_nan() {
                    v
                } else if v > 0.0 {
                    1.0
                } else if v < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            Square => v * v,
            Round(d) => round_half_even(v, d),
            _ => v,
        }
    };
    if work == DType::F32 {
        // Float32 math rounds each result to float32, as numpy's float32 loops do.
        return Ok(NdArray::new(Data::F32(x.mapv(|v| g(v) as f32))));
    }
    Ok(NdArray::new(Data::F64(x.mapv(g))))
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

fn mm2<T>(x: &ArrayD<T>, y: &ArrayD<T>) -> TResult<ArrayD<T>>
where
    T: ndarray::LinalgScalar,
{
    let xv = x
        .view()
        .into_dimensionality::<Ix2>()
        .map_err(|e| TensorError::Value(e.to_string()))?;
    let yv = y
        .view()
        .into_dimensionality::<Ix2>()
        .map_err(|e| TensorError::Value(e.to_string()))?;
    Ok(xv.dot(&yv).into_dyn())
}

/// `a @ b` for 1-D and 2-D operands (numpy's `matmul`), with batched leading axes.
pub fn matmul(a: &NdArray, b: &NdArray) -> TResult<NdArray> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(TensorError::Value(
            "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core \
             with signature (n?,k),(k,m?)->(n?,m?) requires 1)"
                .into(),
        ));
    }
    let dt = DType::promote(a.dtype(), b.dtype());
    let (a1, b1) = (a.ndim() == 1, b.ndim() == 1);
    let x = if a1 {
        a.reshape(&[1, a.size() as i64])?
    } else {
        a.clone()
    };
    let y = if b1 {
        b.reshape(&[b.size() as i64, 1])?
    } else {
        b.clone()
    };
    let (xs, ys) = (x.shape().to_vec(), y.shape().to_vec());
    let (n, k) = (xs[xs.len() - 2], xs[xs.len() - 1]);
    let (k2, m) = (ys[ys.len() - 2], ys[ys.len() - 1]);
    if k != k2 {
        return Err(TensorError::Value(format!(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc \
             signature (n?,k),(k,m?)->(n?,m?) (size {k2} is different from {k})"
        )));
    }
    let batch = broadcast_shapes(&xs[..xs.len() - 2], &ys[..ys.len() - 2])?;
    let nb: usize = batch.iter().product();
    let mut full_x = batch.clone();
    full_x.extend([n, k]);
    let mut full_y = batch.clone();
    full_y.extend([k, m]);
    let mut out_shape = batch.clone();
    out_shape.extend([n, m]);
    super::check_alloc(&out_shape, dt)?;
    let work = if dt.is_float() { dt } else { DType::F64 };
    macro_rules! run {
        ($xa:expr, $ya:expr) => {{
            let xa = $xa;
            let ya = $ya;
            let bx = xa.broadcast(IxDyn(&full_x)).map(|v| v.to_owned());
            let by = ya.broadcast(IxDyn(&full_y)).map(|v| v.to_owned());
            let (bx, by) = match (bx, by) {
                (Some(p), Some(q)) => (p, q),
                _ => return Err(TensorError::Broadcast(shape_str(&xs), shape_str(&ys))),
            };
            let bx = bx.into_shape_with_order(IxDyn(&[nb, n, k]));
            let by = by.into_shape_with_order(IxDyn(&[nb, k, m]));
            let (bx, by) = match (bx, by) {
                (Ok(p), Ok(q)) => (p, q),
                _ => return Err(TensorError::Value("matmul: bad layout".into())),
            };
            let mut out = Vec::with_capacity(nb * n * m);
            for i in 0..nb {
                let p = bx.index_axis(ndarray::Axis(0), i).to_owned();
                let q = by.index_axis(ndarray::Axis(0), i).to_owned();
                out.extend(mm2(&p, &q)?.iter().copied());
            }
            out
        }};
    }
    let arr = if work == DType::F32 {
        let v = run!(
            x.astype(DType::F32).to_f32_array(),
            y.astype(DType::F32).to_f32_array()
        );
        NdArray::from_f32(&out_shape, v)?
    } else {
        let v = run!(x.to_f64_array(), y.to_f64_array());
        NdArray::from_f64(&out_shape, v)?.astype(dt)
    };
    let mut fin: Vec<i64> = batch.iter().map(|&d| d as i64).collect();
    if !a1 {
        fin.push(n as i64);
    }
    if !b1 {
        fin.push(m as i64);
    }
    arr.reshape(&fin)
}

impl NdArray {
    fn to_f32_array(&self) -> ArrayD<f32> {
        match &self.data {
            Data::F32(a) => a.clone(),
            _ => self.to_f64_array().mapv(|v| v as f32),
        }
    }
}
