//! Counting and order statistics with numpy's semantics: `unique` with its index, inverse
//! and count arrays, `bincount`, `histogram`, `percentile`/`quantile`/`median`,
//! `digitize`, `interp`, `diff` and the NaN-ignoring reductions. Printing and argument
//! parsing belong to the caller; this file only computes.

use super::array::norm_axis;
use super::build::from_scalars;
use super::{DType, NdArray, Reduction, Scalar, TResult, TensorError};

/// Everything `np.unique(..., return_index, return_inverse, return_counts)` can answer:
/// the sorted distinct values, the first position of each, the position of each input
/// element among the values (in the input's shape) and how often each occurs.
pub struct Unique {
    pub values: NdArray,
    pub index: NdArray,
    pub inverse: NdArray,
    pub counts: NdArray,
}

pub fn unique_all(a: &NdArray) -> TResult<Unique> {
    let vals = a.ravel().scalars();
    let key = |s: &Scalar| s.as_f64();
    let mut order: Vec<usize> = (0..vals.len()).collect();
    // A stable sort keeps the first occurrence first among equal values, which is the
    // position numpy reports; NaN sorts last as in numpy.
    order.sort_by(|&i, &j| {
        let (x, y) = (key(&vals[i]), key(&vals[j]));
        x.partial_cmp(&y)
            .unwrap_or_else(|| x.is_nan().cmp(&y.is_nan()))
    });
    let mut distinct: Vec<Scalar> = Vec::new();
    let mut first = Vec::new();
    let mut counts: Vec<i64> = Vec::new();
    let mut inverse = vec![0i64; vals.len()];
    for &i in &order {
        let x = key(&vals[i]);
        let same = distinct
            .last()
            .is_some_and(|d| key(d) == x || (key(d).is_nan() && x.is_nan()));
        if !same {
            distinct.push(vals[i]);
            first.push(i as i64);
            counts.push(0);
        }
        if let Some(c) = counts.last_mut() {
            *c += 1;
        }
        inverse[i] = distinct.len() as i64 - 1;
    }
    let n = distinct.len();
    let dims: Vec<i64> = a.shape().iter().map(|&d| d as i64).collect();
    Ok(Unique {
        values: from_scalars(&[n], &distinct, a.dtype())?,
        index: NdArray::from_i64(&[n], first)?,
        inverse: NdArray::from_i64(&[vals.len()], inverse)?.reshape(&dims)?,
        counts: NdArray::from_i64(&[n], counts)?,
    })
}

/// `np.bincount(x, weights, minlength)`: how often each non-negative integer occurs (or
/// the sum of its weights).
pub fn bincount(x: &NdArray, weights: Option<&NdArray>, minlength: usize) -> TResult<NdArray> {
    if x.ndim() > 1 {
        return Err(TensorError::Value(
            "object too deep for desired array".into(),
        ));
    }
    if x.dtype().is_float() {
        return Err(TensorError::Type(
            "Cannot cast array data from dtype('float64') to dtype('int64') according to the rule 'safe'"
                .into(),
        ));
    }
    let xs: Vec<i64> = x.to_i64_array().iter().copied().collect();
    if xs.iter().any(|&v| v < 0) {
        return Err(TensorError::Value(
            "'list' argument must have no negative elements".into(),
        ));
    }
    let len = xs
        .iter()
        .map(|&v| v as usize + 1)
        .max()
        .unwrap_or(0)
        .max(minlength);
    match weights {
        None => {
            let mut out = vec![0i64; len];
            for &v in &xs {
                out[v as usize] += 1;
            }
            NdArray::from_i64(&[len], out)
        }
        Some(w) => {
            if w.size() != xs.len() {
                return Err(TensorError::Value(
                    "The weights and list don't have the same length.".into(),
                ));
            }
            let mut out = vec![0f64; len];
            for (&v, &wt) in xs.iter().zip(w.to_f64_array().iter()) {
                out[v as usize] += wt;
            }
            NdArray::from_f64(&[len], out)
        }
    }
}

/// The bins of `np.histogram`: a count of equal-width bins over a range, or the edges.
pub enum Bins {
    Count(usize, Option<(f64, f64)>),
    Edges(NdArray),
}

/// `np.histogram(a, bins, range)`: the counts per bin and the bin edges. Every bin is
/// half open except the last, which holds its right edge too.
pub fn histogram(a: &NdArray, bins: Bins) -> TResult<(NdArray, NdArray)> {
    let xs: Vec<f64> = a.to_f64_array().iter().copied().collect();
    let edges = match bins {
        Bins::Edges(e) => {
            let v: Vec<f64> = e.to_f64_array().iter().copied().collect();
            if v.windows(2).any(|w| w[1] < w[0]) {
                return Err(TensorError::Value(
                    "`bins` must increase monotonically, when an array".into(),
                ));
            }
            e.ravel()
        }
        Bins::Count(n, range) => {
            if n == 0 {
                return Err(TensorError::Value(
                    "`bins` must be positive, when an integer".into(),
                ));
            }
            let (mut lo, mut hi) = match range {
                Some(r) => {
                    if r.0 > r.1 {
                        return Err(TensorError::Value(
                            "max must be larger than min in range parameter.".into(),
                        ));
                    }
                    r
                }
                None if xs.is_empty() => (0.0, 1.0),
                None => (
                    xs.iter().copied().fold(f64::INFINITY, f64::min),
                    xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ),
            };
            if lo == hi {
                lo -= 0.5;
                hi += 0.5;
            }
            super::build::linspace(lo, hi, n + 1, true)?
        }
    };
    let e: Vec<f64> = edges.to_f64_array().iter().copied().collect();
    let nb = e.len().saturating_sub(1);
    let mut counts = vec![0i64; nb];
    if let (Some(&lo), Some(&hi)) = (e.first(), e.last()) {
        for &x in &xs {
            if x < lo || x > hi || x.is_nan() {
                continue;
            }
            let k = e.partition_point(|&b| b <= x).saturating_sub(1).min(nb - 1);
            counts[k] += 1;
        }
    }
    Ok((NdArray::from_i64(&[nb], counts)?, edges))
}

/// numpy's linear interpolation between two neighbours, written as numpy writes it so the
/// last bit agrees.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let d = b - a;
    if t >= 0.5 {
        b - d * (1.0 - t)
    } else {
        a + d * t
    }
}

/// One quantile of sorted values (the 'linear' method).
fn quantile_of(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    if sorted.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    lerp(sorted[lo], sorted[hi], pos - lo as f64)
}

/// The lanes of `a` along `axis` (all elements when none), each as sorted floats, and
/// the shape the per-lane results take.
fn sorted_lanes(a: &NdArray, axis: Option<i64>) -> TResult<(Vec<Vec<f64>>, Vec<usize>)> {
    let (moved, rest) = match axis {
        None => (a.ravel(), vec![]),
        Some(ax) => {
            let k = norm_axis(ax, a.ndim())?;
            let mut perm: Vec<i64> = (0..a.ndim() as i64).filter(|&d| d != k as i64).collect();
            perm.push(k as i64);
            let rest: Vec<usize> = (0..a.ndim())
                .filter(|&d| d != k)
                .map(|d| a.shape()[d])
                .collect();
            (a.transpose(Some(&perm))?.standard(), rest)
        }
    };
    let vals: Vec<f64> = moved.to_f64_array().iter().copied().collect();
    let lane = moved.shape().last().copied().unwrap_or(1).max(1);
    let lanes = vals
        .chunks(lane)
        .map(|c| {
            let mut v = c.to_vec();
            v.sort_by(|x, y| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal));
            v
        })
        .collect();
    Ok((lanes, rest))
}

/// `np.quantile(a, qs, axis)` with `qs` in [0, 1]: the result has the shape of `qs`
/// (when given as a sequence) followed by the remaining axes of `a`.
pub fn quantile(a: &NdArray, qs: &[f64], axis: Option<i64>) -> TResult<NdArray> {
    let (lanes, rest) = sorted_lanes(a, axis)?;
    let mut out = Vec::with_capacity(qs.len() * lanes.len());
    for &q in qs {
        out.extend(lanes.iter().map(|l| quantile_of(l, q)));
    }
    let mut shape = vec![qs.len()];
    shape.extend(rest);
    let r = NdArray::from_f64(&shape, out)?;
    Ok(if a.dtype() == DType::F32 {
        r.astype(DType::F32)
    } else {
        r
    })
}

/// `np.median(a, axis)`: the middle value, or the mean of the two middle ones.
pub fn median(a: &NdArray, axis: Option<i64>) -> TResult<NdArray> {
    let (lanes, rest) = sorted_lanes(a, axis)?;
    let out = lanes
        .iter()
        .map(|l| {
            let n = l.len();
            if n == 0 || l.iter().any(|x| x.is_nan()) {
                f64::NAN
            } else if n % 2 == 1 {
                l[n / 2]
            } else {
                (l[n / 2 - 1] + l[n / 2]) / 2.0
            }
        })
        .collect();
    NdArray::from_f64(&rest, out)
}

/// `np.digitize(x, bins, right)` for increasing bins: the index of the bin each value
/// falls in (0 below the first edge, `len(bins)` above the last).
pub fn digitize(x: &NdArray, bins: &NdArray, right: bool) -> TResult<NdArray> {
    let b: Vec<f64> = bins.to_f64_array().iter().copied().collect();
    if b.windows(2).any(|w| w[1] < w[0]) {
        return Err(TensorError::Value(
            "bins must be monotonically increasing or decreasing".into(),
        ));
    }
    let out: Vec<i64> = x
        .to_f64_array()
        .iter()
        .map(|&v| {
            if right {
                b.partition_point(|&e| e < v) as i64
            } else {
                b.partition_point(|&e| e <= v) as i64
            }
        })
        .collect();
    NdArray::from_i64(x.shape(), out)
}

/// `np.interp(x, xp, fp, left, right)`: piecewise-linear interpolation, computed as
/// numpy's C loop does (slope times offset plus left value).
pub fn interp(
    x: &NdArray,
    xp: &NdArray,
    fp: &NdArray,
    left: Option<f64>,
    right: Option<f64>,
) -> TResult<NdArray> {
    let xp: Vec<f64> = xp.to_f64_array().iter().copied().collect();
    let fp: Vec<f64> = fp.to_f64_array().iter().copied().collect();
    if xp.len() != fp.len() {
        return Err(TensorError::Value(
            "fp and xp are not of the same length.".into(),
        ));
    }
    let (Some(&x0), Some(&xn), Some(&f0), Some(&fnl)) =
        (xp.first(), xp.last(), fp.first(), fp.last())
    else {
        return Err(TensorError::Value("array of sample points is empty".into()));
    };
    let (left, right) = (left.unwrap_or(f0), right.unwrap_or(fnl));
    let out = x
        .to_f64_array()
        .iter()
        .map(|&v| {
            if v.is_nan() {
                v
            } else if v < x0 {
                left
            } else if v > xn {
                right
            } else if v == xn {
                fnl
            } else {
                let j = xp.partition_point(|&e| e <= v).saturating_sub(1);
                if v == xp[j] {
                    fp[j]
                } else {
                    let slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
                    slope * (v - xp[j]) + fp[j]
                }
            }
        })
        .collect();
    NdArray::from_f64(x.shape(), out)
}

/// `np.diff(a, n, axis)`: the n-th discrete difference along an axis.
pub fn diff(a: &NdArray, n: usize, axis: i64) -> TResult<NdArray> {
    if a.ndim() == 0 {
        return Err(TensorError::Value(
            "diff requires input that is at least one dimensional".into(),
        ));
    }
    let k = norm_axis(axis, a.ndim())?;
    let mut cur = a.clone();
    for _ in 0..n {
        let len = cur.shape()[k];
        if len == 0 {
            break;
        }
        let slice = |from: usize, to: usize| -> TResult<NdArray> {
            let items: Vec<super::IndexItem> = (0..cur.ndim())
                .map(|d| {
                    if d == k {
                        super::IndexItem::Slice(Some(from as i64), Some(to as i64), None)
                    } else {
                        super::IndexItem::Slice(None, None, None)
                    }
                })
                .collect();
            cur.get(&items)
        };
        let (hi, lo) = (slice(1, len)?, slice(0, len - 1)?);
        let op = if cur.dtype() == DType::Bool {
            super::BinaryOp::Ne
        } else {
            super::BinaryOp::Sub
        };
        cur = super::ops::binary(
            super::ops::Operand::Arr(&hi),
            super::ops::Operand::Arr(&lo),
            op,
        )?;
    }
    Ok(cur)
}

/// The NaN-ignoring reductions (`np.nansum`, `nanmean`, `nanmax`, `nanmin`).
pub fn nan_reduce(
    a: &NdArray,
    r: Reduction,
    axes: Option<&[i64]>,
    keepdims: bool,
) -> TResult<NdArray> {
    if !a.dtype().is_float() {
        return a.reduce(r, axes, keepdims, 0.0);
    }
    let dt = a.dtype();
    let x = a.to_f64_array();
    let replaced = |fill: f64| -> TResult<NdArray> {
        let v: Vec<f64> = x
            .iter()
            .map(|&v| if v.is_nan() { fill } else { v })
            .collect();
        NdArray::from_f64(a.shape(), v)
    };
    let out = match r {
        Reduction::Max => replaced(f64::NEG_INFINITY)?.reduce(r, axes, keepdims, 0.0)?,
        Reduction::Min => replaced(f64::INFINITY)?.reduce(r, axes, keepdims, 0.0)?,
        Reduction::Mean => {
            let sum = replaced(0.0)?.reduce(Reduction::Sum, axes, keepdims, 0.0)?;
            let present: Vec<f64> = x
                .iter()
                .map(|v| if v.is_nan() { 0.0 } else { 1.0 })
                .collect();
            let count = NdArray::from_f64(a.shape(), present)?.reduce(
                Reduction::Sum,
                axes,
                keepdims,
                0.0,
            )?;
            super::ops::binary(
                super::ops::Operand::Arr(&sum),
                super::ops::Operand::Arr(&count),
                super::BinaryOp::Div,
            )?
        }
        other => replaced(0.0)?.reduce(other, axes, keepdims, 0.0)?,
    };
    Ok(out.astype(dt))
}
