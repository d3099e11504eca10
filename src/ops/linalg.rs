//! Matrix products: `MatMul` (two matrices) and `BatchMatMulV2` (leading batch axes,
//! broadcast), each with optional transposes (the adjoint of a real matrix is its
//! transpose). float32 runs on the device's GEMM, the kernel the compiled Keras models
//! use for Dense layers, one call per batch matrix; other dtypes use the tensor part's
//! matmul. The gradient is TF's `_MatMulGrad`: two more products, with broadcast batch
//! axes summed away.

use super::eager::Eager;
use super::error::{dims, OpError, OpResult, NUMBER};
use super::op::{first, inputs, node_inputs, Op};
use super::reduce::sum_to;
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::Device;
use crate::tensor::ops::broadcast_shapes;
use crate::tensor::{DType, NdArray};

/// A matrix product of the last two axes of each input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatMul {
    pub transpose_a: bool,
    pub transpose_b: bool,
    /// `BatchMatMulV2` (either input has more than two axes) rather than `MatMul`.
    pub batched: bool,
}

/// `x` with its last two axes swapped.
fn swap_last(x: &NdArray) -> crate::tensor::TResult<NdArray> {
    let n = x.ndim() as i64;
    let mut axes: Vec<i64> = (0..n).collect();
    axes.swap((n - 2) as usize, (n - 1) as usize);
    x.transpose(Some(&axes))
}

/// The flat index into a broadcast input's batch for output batch position `flat`.
fn source_batch(flat: usize, out: &[usize], input: &[usize]) -> usize {
    let lead = out.len() - input.len();
    let mut rem = flat;
    let mut idx = 0usize;
    let mut stride = 1usize;
    let mut coords = vec![0usize; out.len()];
    for (i, &d) in out.iter().enumerate().rev() {
        coords[i] = if d == 0 { 0 } else { rem % d };
        rem = rem.checked_div(d).unwrap_or(0);
    }
    for (j, &d) in input.iter().enumerate().rev() {
        let c = if d == 1 { 0 } else { coords[lead + j] };
        idx += c * stride;
        stride *= d;
    }
    idx
}

impl MatMul {
    pub fn name(&self) -> &'static str {
        if self.batched {
            "BatchMatMulV2"
        } else {
            "MatMul"
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let op = self.name();
        let [a, b] = inputs::<2>(op, given)?;
        let dn = dev.name();
        if a.dtype() != b.dtype() {
            return Err(OpError::input_dtype(op, 1, a.dtype(), b.dtype()));
        }
        if a.dtype() == DType::Bool {
            return Err(OpError::attr_dtype(
                op,
                "a:T, b:T -> product:T",
                a.dtype(),
                NUMBER,
            ));
        }
        let kernel = |m: String| OpError::kernel(op, &dn, &m);
        if self.batched {
            for (i, x) in [a, b].iter().enumerate() {
                if x.ndim() < 2 {
                    return Err(kernel(format!("In[{i}] ndims must be >= 2: {}", x.ndim())));
                }
            }
        } else if a.ndim() != b.ndim() {
            return Err(kernel(format!(
                "In[0] and In[1] has different ndims: {} vs. {}",
                dims(a.shape()),
                dims(b.shape())
            )));
        } else if a.ndim() != 2 {
            return Err(kernel(format!(
                "In[0] is not a matrix. Instead it has shape {}",
                dims(a.shape())
            )));
        }
        let (ra, ca) = (a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]);
        let (rb, cb) = (b.shape()[b.ndim() - 2], b.shape()[b.ndim() - 1]);
        let (m, k) = if self.transpose_a { (ca, ra) } else { (ra, ca) };
        let (k2, n) = if self.transpose_b { (cb, rb) } else { (rb, cb) };
        if k != k2 {
            return Err(kernel(format!(
                "Matrix size-incompatible: In[0]: {}, In[1]: {}",
                dims(a.shape()),
                dims(b.shape())
            )));
        }
        let (ba, bb) = (&a.shape()[..a.ndim() - 2], &b.shape()[..b.ndim() - 2]);
        let batch = broadcast_shapes(ba, bb).map_err(|_| {
            kernel(format!(
                "In[0] and In[1] must have compatible batch dimensions: {} vs. {}",
                dims(a.shape()),
                dims(b.shape())
            ))
        })?;
        let mut out_shape = batch.clone();
        out_shape.extend([m, n]);
        crate::tensor::check_alloc(&out_shape, a.dtype())
            .map_err(|e| OpError::from_tensor(op, &dn, e))?;
        if a.dtype() == DType::F32 {
            return Ok(vec![self.gemm(dev, a, b, &batch, (m, n), &out_shape)?]);
        }
        let tensor = |e| OpError::from_tensor(op, &dn, e);
        let x = if self.transpose_a {
            swap_last(a).map_err(tensor)?
        } else {
            a.clone()
        };
        let y = if self.transpose_b {
            swap_last(b).map_err(tensor)?
        } else {
            b.clone()
        };
        let out = crate::tensor::linalg::matmul(&x, &y).map_err(tensor)?;
        Ok(vec![out.astype(a.dtype())])
    }

    /// float32 products on the device's GEMM, one call per output batch matrix.
    fn gemm(
        &self,
        dev: &dyn Device,
        a: &NdArray,
        b: &NdArray,
        batch: &[usize],
        (m, n): (usize, usize),
        out_shape: &[usize],
    ) -> OpResult<NdArray> {
        // Contiguous float32 inputs are read in place; only others are laid out first.
        let (a_own, b_own);
        let av: &[f32] = match a.as_f32_slice() {
            Some(v) => v,
            None => {
                a_own = a.to_f32_vec().1;
                &a_own
            }
        };
        let bv: &[f32] = match b.as_f32_slice() {
            Some(v) => v,
            None => {
                b_own = b.to_f32_vec().1;
                &b_own
            }
        };
        let a_mat = [a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]];
        let b_mat = [b.shape()[b.ndim() - 2], b.shape()[b.ndim() - 1]];
        let (sa, sb) = (a_mat[0] * a_mat[1], b_mat[0] * b_mat[1]);
        let (ba, bb) = (&a.shape()[..a.ndim() - 2], &b.shape()[..b.ndim() - 2]);
        let nb: usize = batch.iter().product();
        let mut out = Vec::with_capacity(nb * m * n);
        for i in 0..nb {
            let ia = source_batch(i, batch, ba);
            let ib = source_batch(i, batch, bb);
            let (Some(ax), Some(bx)) = (
                av.get(ia * sa..(ia + 1) * sa),
                bv.get(ib * sb..(ib + 1) * sb),
            ) else {
                return Err(OpError::internal("matmul batch index out of range"));
            };
            let ta = dev.upload(ax, &a_mat)?;
            let tb = dev.upload(bx, &b_mat)?;
            let mut tc = dev.zeros(&[m, n])?;
            dev.gemm(
                &ta,
                self.transpose_a,
                &tb,
                self.transpose_b,
                &mut tc,
                1.0,
                0.0,
            )?;
            let c = super::device_io::into_host(dev, tc)?;
            if nb == 1 {
                // One product: its buffer is the output, not copied into another.
                out = c;
            } else {
                out.extend(c);
            }
        }
        NdArray::from_f32(out_shape, out)
            .map_err(|e| OpError::from_tensor(self.name(), &dev.name(), e))
    }

    pub(crate) fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let [a, b] = node_inputs::<2>(node)?;
        let (_, dy) = first(node, grads)?;
        let (ga, gb) = match (self.transpose_a, self.transpose_b) {
            (false, false) => (
                matmul(e, dy, b, false, true)?,
                matmul(e, a, dy, true, false)?,
            ),
            (false, true) => (
                matmul(e, dy, b, false, false)?,
                matmul(e, dy, a, true, false)?,
            ),
            (true, false) => (
                matmul(e, b, dy, false, true)?,
                matmul(e, a, dy, false, false)?,
            ),
            (true, true) => (matmul(e, b, dy, true, true)?, matmul(e, dy, a, true, true)?),
        };
        Ok(vec![
            Some(sum_to(e, ga, a.shape())?),
            Some(sum_to(e, gb, b.shape())?),
        ])
    }
}

/// `tf.matmul(a, b, transpose_a, transpose_b)`: `BatchMatMulV2` when either input has
/// more than two axes, as TF's Python wrapper chooses.
pub fn matmul(
    e: &mut Eager,
    a: &Tensor,
    b: &Tensor,
    transpose_a: bool,
    transpose_b: bool,
) -> OpResult<Tensor> {
    let op = MatMul {
        transpose_a,
        transpose_b,
        batched: a.ndim() > 2 || b.ndim() > 2,
    };
    e.execute1(Op::MatMul(op), &[a.clone(), b.clone()])
}
