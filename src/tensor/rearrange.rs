//! Functions that move elements without computing new ones: `tile`, `repeat`, `flip`,
//! `roll`, `pad`, `diag`, `meshgrid` and `column_stack`, with numpy's shapes, dtypes and
//! errors. Each builds its result by gathering source positions ([`gather`]), so the
//! dtype of the input is kept exactly. Arithmetic belongs to `ops`, not here.

use super::array::norm_axis;
use super::build::{concatenate, from_scalars};
use super::{NdArray, Scalar, TResult, TensorError};

/// Row-major strides of a shape, in elements.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// The array of `shape` whose element at each index is the source element `src` names
/// (a multi-index into `a`), or `fill` where it names none.
fn gather(
    a: &NdArray,
    shape: &[usize],
    fill: Scalar,
    src: impl Fn(&[usize]) -> Option<Vec<usize>>,
) -> TResult<NdArray> {
    let vals = a.scalars();
    let st = strides(a.shape());
    let n: usize = shape.iter().product();
    let mut idx = vec![0usize; shape.len()];
    let mut out = Vec::with_capacity(n);
    for flat in 0..n {
        let mut r = flat;
        for d in (0..shape.len()).rev() {
            idx[d] = r % shape[d];
            r /= shape[d];
        }
        let v = src(&idx).and_then(|s| {
            let p: usize = s.iter().zip(&st).map(|(i, k)| i * k).sum();
            vals.get(p).copied()
        });
        out.push(v.unwrap_or(fill));
    }
    from_scalars(shape, &out, a.dtype())
}

/// The fill of positions no source names; `from_scalars` casts it to the array's dtype.
const ZERO: Scalar = Scalar::I64(0);

/// `np.tile(a, reps)`.
pub fn tile(a: &NdArray, reps: &[i64]) -> TResult<NdArray> {
    if reps.iter().any(|&r| r < 0) {
        return Err(TensorError::Value(
            "negative dimensions are not allowed".into(),
        ));
    }
    let d = reps.len().max(a.ndim());
    let mut shape = vec![1usize; d - a.ndim()];
    shape.extend_from_slice(a.shape());
    let mut r = vec![1usize; d - reps.len()];
    r.extend(reps.iter().map(|&x| x as usize));
    let src = a.reshape(&shape.iter().map(|&x| x as i64).collect::<Vec<_>>())?;
    let out: Vec<usize> = shape.iter().zip(&r).map(|(s, k)| s * k).collect();
    gather(&src, &out, ZERO, |i| {
        Some(i.iter().zip(&shape).map(|(x, s)| x % s).collect())
    })
}

/// `np.repeat(a, repeats, axis)`: `repeats` is one count or one per element along the
/// axis; no axis repeats the flattened array.
pub fn repeat(a: &NdArray, repeats: &[i64], axis: Option<i64>) -> TResult<NdArray> {
    let (a, k) = match axis {
        Some(ax) => (a.clone(), norm_axis(ax, a.ndim())?),
        None => (a.ravel(), 0),
    };
    if a.ndim() == 0 {
        return repeat(&a.reshape(&[1])?, repeats, None);
    }
    let len = a.shape()[k];
    if repeats.len() != 1 && repeats.len() != len {
        return Err(TensorError::Value(format!(
            "operands could not be broadcast together with shape ({len},) ({},)",
            repeats.len()
        )));
    }
    if repeats.iter().any(|&r| r < 0) {
        return Err(TensorError::Value(
            "repeats may not contain negative values.".into(),
        ));
    }
    let counts = |i: usize| repeats.get(i).or(repeats.first()).copied().unwrap_or(0) as usize;
    let from: Vec<usize> = (0..len).flat_map(|i| vec![i; counts(i)]).collect();
    let mut shape = a.shape().to_vec();
    shape[k] = from.len();
    gather(&a, &shape, ZERO, |i| {
        let mut s = i.to_vec();
        s[k] = *from.get(i[k])?;
        Some(s)
    })
}

/// `np.flip(a, axis)`: reversed along the given axes, or all of them.
pub fn flip(a: &NdArray, axes: Option<&[i64]>) -> TResult<NdArray> {
    let ks: Vec<usize> = match axes {
        Some(ax) => ax
            .iter()
            .map(|&x| norm_axis(x, a.ndim()))
            .collect::<TResult<_>>()?,
        None => (0..a.ndim()).collect(),
    };
    let shape = a.shape().to_vec();
    gather(a, &shape, ZERO, |i| {
        let mut s = i.to_vec();
        for &k in &ks {
            s[k] = shape[k] - 1 - i[k];
        }
        Some(s)
    })
}

/// `np.roll(a, shift, axis)`: without an axis the flattened array rolls, then takes the
/// original shape back.
pub fn roll(a: &NdArray, shift: i64, axis: Option<i64>) -> TResult<NdArray> {
    let Some(ax) = axis else {
        let dims: Vec<i64> = a.shape().iter().map(|&d| d as i64).collect();
        return roll(&a.ravel(), shift, Some(0))?.reshape(&dims);
    };
    let k = norm_axis(ax, a.ndim())?;
    let shape = a.shape().to_vec();
    let n = shape[k] as i64;
    gather(a, &shape, ZERO, |i| {
        let mut s = i.to_vec();
        s[k] = (i[k] as i64 - shift).rem_euclid(n.max(1)) as usize;
        Some(s)
    })
}

/// How `np.pad` fills the border.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PadMode {
    Constant(f64),
    Edge,
}

/// `np.pad(a, widths, mode)`: `widths` holds (before, after) for every axis.
pub fn pad(a: &NdArray, widths: &[(usize, usize)], mode: PadMode) -> TResult<NdArray> {
    if widths.len() != a.ndim() {
        return Err(TensorError::Value(format!(
            "operands could not be broadcast together with remapped shapes [original->remapped]: ({},2)  and requested shape ({},2)",
            widths.len(),
            a.ndim()
        )));
    }
    let shape: Vec<usize> = a
        .shape()
        .iter()
        .zip(widths)
        .map(|(s, (b, e))| s + b + e)
        .collect();
    let src_shape = a.shape().to_vec();
    if mode == PadMode::Edge && src_shape.contains(&0) && shape != src_shape {
        return Err(TensorError::Value(
            "can't extend empty axis 0 using modes other than 'constant' or 'empty'".into(),
        ));
    }
    let fill = match mode {
        PadMode::Constant(c) => Scalar::F64(c),
        PadMode::Edge => ZERO,
    };
    gather(a, &shape, fill, |i| {
        i.iter()
            .zip(widths)
            .zip(&src_shape)
            .map(|((&x, &(b, _)), &n)| {
                let p = x as i64 - b as i64;
                match mode {
                    PadMode::Constant(_) => (p >= 0 && p < n as i64).then_some(p as usize),
                    PadMode::Edge => Some(p.clamp(0, n as i64 - 1) as usize),
                }
            })
            .collect()
    })
}

/// `np.diag(v, k)`: a 1-D array becomes a square matrix with it on diagonal `k`; a 2-D
/// array gives its diagonal `k`.
pub fn diag(a: &NdArray, k: i64) -> TResult<NdArray> {
    match a.ndim() {
        1 => {
            let n = a.size() + k.unsigned_abs() as usize;
            gather(a, &[n, n], ZERO, |i| {
                let (r, c) = (i[0] as i64, i[1] as i64);
                (c - r == k).then_some(vec![(r.min(c) as usize)])
            })
        }
        2 => {
            let (rows, cols) = (a.shape()[0] as i64, a.shape()[1] as i64);
            let len = if k >= 0 {
                rows.min(cols - k)
            } else {
                (rows + k).min(cols)
            }
            .max(0) as usize;
            gather(a, &[len], ZERO, |i| {
                let t = i[0] as i64;
                let (r, c) = if k >= 0 { (t, t + k) } else { (t - k, t) };
                Some(vec![r as usize, c as usize])
            })
        }
        _ => Err(TensorError::Value("Input must be 1- or 2-d.".into())),
    }
}

/// `np.meshgrid(*xs, indexing)`: every input flattened, then spread over the grid. With
/// 'xy' indexing the first two axes are swapped, as for plotting.
pub fn meshgrid(xs: &[NdArray], xy: bool) -> TResult<Vec<NdArray>> {
    let flat: Vec<NdArray> = xs.iter().map(|x| x.ravel()).collect();
    let mut shape: Vec<usize> = flat.iter().map(|x| x.size()).collect();
    if xy && shape.len() > 1 {
        shape.swap(0, 1);
    }
    flat.iter()
        .enumerate()
        .map(|(j, x)| {
            let axis = match (xy, j) {
                (true, 0) if shape.len() > 1 => 1,
                (true, 1) => 0,
                _ => j,
            };
            gather(x, &shape, ZERO, |i| Some(vec![i[axis]]))
        })
        .collect()
}

/// `np.column_stack(arrays)`: 1-D arrays become columns, then all join along axis 1.
pub fn column_stack(arrays: &[NdArray]) -> TResult<NdArray> {
    let cols: Vec<NdArray> = arrays
        .iter()
        .map(|a| {
            if a.ndim() < 2 {
                a.reshape(&[-1, 1])
            } else {
                Ok(a.clone())
            }
        })
        .collect::<TResult<_>>()?;
    concatenate(&cols, 1)
}
