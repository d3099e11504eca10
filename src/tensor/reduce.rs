//! Reductions with numpy's axis and keepdims rules and result dtypes: sum, prod, mean,
//! std, var, max, min, argmax, argmin, plus cumsum and cumprod. Integers accumulate in
//! int64 (numpy's default integer); floats accumulate in float64 and are rounded back to
//! the array's float type.

use ndarray::{ArrayD, Axis};

use super::array::{norm_axis, Data, NdArray};
use super::dtype::DType;
use super::{TResult, TensorError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Prod,
    Mean,
    Std,
    Var,
    Max,
    Min,
    ArgMax,
    ArgMin,
    Any,
    All,
}

impl Reduction {
    fn ufunc(self) -> &'static str {
        match self {
            Reduction::Max => "maximum",
            Reduction::Min => "minimum",
            Reduction::ArgMax => "argmax",
            Reduction::ArgMin => "argmin",
            _ => "reduction",
        }
    }
}

fn result_dtype(r: Reduction, dt: DType) -> DType {
    use Reduction::*;
    match r {
        Sum | Prod => {
            if dt.is_float() {
                dt
            } else {
                DType::I64
            }
        }
        Mean | Std | Var => {
            if dt.is_float() {
                dt
            } else {
                DType::F64
            }
        }
        Max | Min => dt,
        ArgMax | ArgMin => DType::I64,
        Any | All => DType::Bool,
    }
}

fn reduce_lane_f(r: Reduction, lane: &[f64], ddof: f64) -> f64 {
    use Reduction::*;
    let n = lane.len() as f64;
    match r {
        Sum => lane.iter().sum(),
        Prod => lane.iter().product(),
        Mean => lane.iter().sum::<f64>() / n,
        Var | Std => {
            let m = lane.iter().sum::<f64>() / n;
            let v = lane.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - ddof).max(0.0);
            if r == Std {
                v.sqrt()
            } else {
                v
            }
        }
        Max => lane.iter().copied().fold(f64::NEG_INFINITY, |a, b| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        }),
        Min => lane.iter().copied().fold(f64::INFINITY, |a, b| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.min(b)
            }
        }),
        ArgMax | ArgMin => {
            let mut best = 0usize;
            for (i, &v) in lane.iter().enumerate() {
                let b = lane[best];
                if b.is_nan() {
                    break;
                }
                if v.is_nan() || (r == ArgMax && v > b) || (r == ArgMin && v < b) {
                    best = i;
                }
            }
            best as f64
        }
        Any => lane.iter().any(|&v| v != 0.0) as u8 as f64,
        All => lane.iter().all(|&v| v != 0.0) as u8 as f64,
    }
}

fn reduce_lane_i(r: Reduction, lane: &[i64]) -> i64 {
    use Reduction::*;
    match r {
        Sum => lane.iter().fold(0i64, |a, &b| a.wrapping_add(b)),
        Prod => lane.iter().fold(1i64, |a, &b| a.wrapping_mul(b)),
        Max => lane.iter().copied().max().unwrap_or(0),
        Min => lane.iter().copied().min().unwrap_or(0),
        ArgMax | ArgMin => {
            let mut best = 0usize;
            for (i, &v) in lane.iter().enumerate() {
                if (r == ArgMax && v > lane[best]) || (r == ArgMin && v < lane[best]) {
                    best = i;
                }
            }
            best as i64
        }
        Any => lane.iter().any(|&v| v != 0) as i64,
        All => lane.iter().all(|&v| v != 0) as i64,
        _ => 0,
    }
}

impl NdArray {
    /// A reduction over `axes` (all axes when `None`), keeping reduced axes as length 1
    /// when `keepdims`. `ddof` applies to std and var.
    pub fn reduce(
        &self,
        r: Reduction,
        axes: Option<&[i64]>,
        keepdims: bool,
        ddof: f64,
    ) -> TResult<NdArray> {
        let nd = self.ndim();
        let mut ax: Vec<usize> = match axes {
            None => (0..nd).collect(),
            Some(a) => a
                .iter()
                .map(|&k| norm_axis(k, nd))
                .collect::<TResult<_>>()?,
        };
        ax.sort_unstable();
        ax.dedup();
        if matches!(r, Reduction::ArgMax | Reduction::ArgMin) && ax.len() > 1 && axes.is_some() {
            return Err(TensorError::Type(
                "'tuple' object cannot be interpreted as an integer".into(),
            ));
        }
        let empty = ax.iter().any(|&k| self.shape()[k] == 0) || (nd == 0 && self.size() == 0);
        if empty && matches!(r, Reduction::Max | Reduction::Min) {
            return Err(TensorError::Value(format!(
                "zero-size array to reduction operation {} which has no identity",
                r.ufunc()
            )));
        }
        if empty && matches!(r, Reduction::ArgMax | Reduction::ArgMin) {
            return Err(TensorError::Value(format!(
                "attempt to get {} of an empty sequence",
                r.ufunc()
            )));
        }
        // Move the reduced axes last and flatten them into one lane per output element.
        let keep: Vec<usize> = (0..nd).filter(|k| !ax.contains(k)).collect();
        let mut perm = keep.clone();
        perm.extend(&ax);
        let out_shape: Vec<usize> = keep.iter().map(|&k| self.shape()[k]).collect();
        let lane: usize = ax.iter().map(|&k| self.shape()[k]).product();
        let outer: usize = out_shape.iter().product();
        let dt = self.dtype();
        let rdt = result_dtype(r, dt);
        let arranged = self.transpose(Some(&perm.iter().map(|&p| p as i64).collect::<Vec<_>>()))?;
        let int_path =
            !dt.is_float() && !matches!(r, Reduction::Mean | Reduction::Std | Reduction::Var);
        let mut res = if int_path {
            let v: Vec<i64> = arranged.to_i64_array().iter().copied().collect();
            let out: Vec<i64> = (0..outer)
                .map(|o| reduce_lane_i(r, &v[o * lane..(o + 1) * lane]))
                .collect();
            NdArray::from_i64(&out_shape, out)?.astype(rdt)
        } else {
            let v: Vec<f64> = arranged.to_f64_array().iter().copied().collect();
            let out: Vec<f64> = (0..outer)
                .map(|o| reduce_lane_f(r, &v[o * lane..(o + 1) * lane], ddof))
                .collect();
            NdArray::from_f64(&out_shape, out)?.astype(rdt)
        };
        if keepdims {
            for &k in &ax {
                res = res.expand_dims(k as i64)?;
            }
        }
        Ok(res)
    }

    /// `cumsum`/`cumprod` along `axis` (flattened first when `None`).
    pub fn cumulative(&self, prod: bool, axis: Option<i64>) -> TResult<NdArray> {
        let (src, k) = match axis {
            None => (self.ravel(), 0),
            Some(a) => (self.clone(), norm_axis(a, self.ndim())?),
        };
        let dt = self.dtype();
        if dt.is_float() {
            let mut a: ArrayD<f64> = src.to_f64_array();
            a.accumulate_axis_inplace(Axis(k), |&p, c| {
                *c = if prod { p * *c } else { p + *c };
            });
            Ok(NdArray::new(Data::F64(a)).astype(dt))
        } else {
            let mut a: ArrayD<i64> = src.to_i64_array();
            a.accumulate_axis_inplace(Axis(k), |&p, c| {
                *c = if prod {
                    p.wrapping_mul(*c)
                } else {
                    p.wrapping_add(*c)
                };
            });
            Ok(NdArray::new(Data::I64(a)))
        }
    }
}
