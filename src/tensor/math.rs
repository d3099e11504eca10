//! Element-wise functions of one array (`exp`, `sqrt`, `round`, `~`, `isnan`, ...) with
//! numpy's result dtypes: math on integers gives float64, float32 stays float32 with each
//! result rounded to float32, and rounding is half to even.

use super::array::{Data, NdArray};
use super::dtype::DType;
use super::{TResult, TensorError};

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
