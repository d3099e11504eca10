//! Matrix products: numpy's `matmul` for 1-D and 2-D operands with broadcast batch
//! axes. float32 and float64 run through ndarray's `dot` (matrixmultiply); integers are
//! computed in float64 and cast back.

use ndarray::{ArrayD, Ix2, IxDyn};

use super::array::{Data, NdArray};
use super::dtype::DType;
use super::ops::broadcast_shapes;
use super::{shape_str, TResult, TensorError};

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
