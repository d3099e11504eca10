//! Matrix products: numpy's `matmul` for 1-D and 2-D operands with broadcast batch
//! axes. float32 and float64 run through ndarray's `general_mat_mul` (matrixmultiply) on
//! views of the operands, a block of output rows at a time with an interrupt check
//! between blocks; integers are computed in float64 and cast back.

use std::borrow::Cow;

use ndarray::linalg::general_mat_mul;
use ndarray::{s, ArrayD, ArrayViewD, ArrayViewMut2, Axis, Ix2, IxDyn};

use super::array::{Data, NdArray};
use super::dtype::DType;
use super::ops::broadcast_shapes;
use super::{shape_str, TResult, TensorError};

/// Multiply-adds per block of output rows: a block takes a few tens of milliseconds, and
/// the interrupt is checked between blocks (see `interrupt`).
const BLOCK_WORK: usize = 1 << 29;

/// Fewer rows than this per block would turn the product into slow matrix-vector products.
const MIN_BLOCK_ROWS: usize = 32;

fn f32_data(d: &Data) -> Option<&ArrayD<f32>> {
    match d {
        Data::F32(a) => Some(a),
        _ => None,
    }
}

fn f64_data(d: &Data) -> Option<&ArrayD<f64>> {
    match d {
        Data::F64(a) => Some(a),
        _ => None,
    }
}

/// The operand as an array of the working type: borrowed when it already is one, else
/// converted (a copy, checked against the memory bound first).
fn working<'a, T: Copy + 'static>(
    a: &'a NdArray,
    pick: fn(&Data) -> Option<&ArrayD<T>>,
    convert: fn(&NdArray) -> ArrayD<T>,
    dt: DType,
) -> TResult<Cow<'a, ArrayD<T>>> {
    match pick(&a.data) {
        Some(arr) => Ok(Cow::Borrowed(arr)),
        None => {
            super::check_alloc(a.shape(), dt)?;
            Ok(Cow::Owned(convert(a)))
        }
    }
}

/// The batched product of views broadcast to `full_x` and `full_y` (`[..batch, n, k]` and
/// `[..batch, k, m]`), row block by row block into one output buffer, without copying
/// the operands.
fn batched<T>(
    x: ArrayViewD<T>,
    y: ArrayViewD<T>,
    full_x: &[usize],
    full_y: &[usize],
    (xs, ys): (&[usize], &[usize]),
) -> TResult<Vec<T>>
where
    T: ndarray::LinalgScalar,
{
    let broadcast = || TensorError::Broadcast(shape_str(xs), shape_str(ys));
    let bx = x.broadcast(IxDyn(full_x)).ok_or_else(broadcast)?;
    let by = y.broadcast(IxDyn(full_y)).ok_or_else(broadcast)?;
    let batch = &full_x[..full_x.len() - 2];
    let (n, k, m) = (
        full_x[full_x.len() - 2],
        full_x[full_x.len() - 1],
        full_y[full_y.len() - 1],
    );
    let nb: usize = batch.iter().product();
    let mut out = vec![T::zero(); nb * n * m];
    let rows = (BLOCK_WORK / (k * m).max(1)).clamp(MIN_BLOCK_ROWS, n.max(MIN_BLOCK_ROWS));
    let layout = |e: ndarray::ShapeError| TensorError::Value(e.to_string());
    for (i, chunk) in out.chunks_mut((n * m).max(1)).enumerate().take(nb) {
        // The batch item's 2-D views: index every batch axis in turn (row-major order).
        let mut index = vec![0; batch.len()];
        let mut rest = i;
        for (ax, &d) in batch.iter().enumerate().rev() {
            index[ax] = rest % d;
            rest /= d;
        }
        let (mut xv, mut yv) = (bx.view(), by.view());
        for &j in &index {
            xv = xv.index_axis_move(Axis(0), j);
            yv = yv.index_axis_move(Axis(0), j);
        }
        let xv = xv.into_dimensionality::<Ix2>().map_err(layout)?;
        let yv = yv.into_dimensionality::<Ix2>().map_err(layout)?;
        let mut ov = ArrayViewMut2::from_shape((n, m), chunk).map_err(layout)?;
        let mut r0 = 0;
        while r0 < n {
            let r1 = (r0 + rows).min(n);
            general_mat_mul(
                T::one(),
                &xv.slice(s![r0..r1, ..]),
                &yv,
                T::zero(),
                &mut ov.slice_mut(s![r0..r1, ..]),
            );
            super::interrupt::check()?;
            r0 = r1;
        }
    }
    Ok(out)
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
    // Operands are read in place: a product of two large arrays must not copy them.
    let x: Cow<NdArray> = if a1 {
        Cow::Owned(a.reshape(&[1, a.size() as i64])?)
    } else {
        Cow::Borrowed(a)
    };
    let y: Cow<NdArray> = if b1 {
        Cow::Owned(b.reshape(&[b.size() as i64, 1])?)
    } else {
        Cow::Borrowed(b)
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
    let mut full_x = batch.clone();
    full_x.extend([n, k]);
    let mut full_y = batch.clone();
    full_y.extend([k, m]);
    let mut out_shape = batch.clone();
    out_shape.extend([n, m]);
    super::check_alloc(&out_shape, dt)?;
    let work = if dt.is_float() { dt } else { DType::F64 };
    let shapes = (xs.as_slice(), ys.as_slice());
    let arr = if work == DType::F32 {
        let (xa, ya) = (
            working(&x, f32_data, NdArray::to_f32_array, work)?,
            working(&y, f32_data, NdArray::to_f32_array, work)?,
        );
        let v = batched(xa.view(), ya.view(), &full_x, &full_y, shapes)?;
        NdArray::from_f32(&out_shape, v)?
    } else {
        let (xa, ya) = (
            working(&x, f64_data, NdArray::to_f64_array, work)?,
            working(&y, f64_data, NdArray::to_f64_array, work)?,
        );
        let v = batched(xa.view(), ya.view(), &full_x, &full_y, shapes)?;
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
