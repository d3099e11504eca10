//! Matrix products through cuBLAS SGEMM. cuBLAS is column-major and the engine row-major; a
//! row-major matrix is its own transpose read column-major, so `C = op(A) op(B)` is computed
//! as `C^T = op(B)^T op(A)^T` by swapping the operands, with no copies. cuBLAS's default math
//! mode keeps full f32 (no TF32), so products match the CPU device to rounding.

use std::ffi::c_int;

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{Gemm, GemmConfig};

use super::device::{shape_err, CudaDevice};
use crate::device::{DResult, DTensor, Device};

fn int(what: &str, v: usize) -> DResult<c_int> {
    c_int::try_from(v).map_err(|_| shape_err("gemm", format!("{what} {v} exceeds cuBLAS's limit")))
}

#[allow(clippy::too_many_arguments)]
pub(super) fn gemm(
    dev: &CudaDevice,
    a: &DTensor,
    trans_a: bool,
    b: &DTensor,
    trans_b: bool,
    c: &mut DTensor,
    alpha: f32,
    beta: f32,
) -> DResult<()> {
    let (ra, ca) = a.rows_cols();
    let (rb, cb) = b.rows_cols();
    let (m, k) = if trans_a { (ca, ra) } else { (ra, ca) };
    let (kb, n) = if trans_b { (cb, rb) } else { (rb, cb) };
    if k != kb {
        return Err(shape_err(
            "gemm",
            format!("inner dimensions differ: {m}x{k} times {kb}x{n}"),
        ));
    }
    if c.rows_cols() != (m, n) {
        return Err(shape_err(
            "gemm",
            format!("the output has shape {:?}, the product is {m}x{n}", c.shape),
        ));
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        // An empty inner dimension leaves beta * C; cuBLAS would reject lda = 0 here.
        let copy = dev.zeros(&c.shape)?;
        return dev.axpby(0.0, &copy, beta, c);
    }
    let transa = if trans_b {
        cublasOperation_t::CUBLAS_OP_T
    } else {
        cublasOperation_t::CUBLAS_OP_N
    };
    let transb = if trans_a {
        cublasOperation_t::CUBLAS_OP_T
    } else {
        cublasOperation_t::CUBLAS_OP_N
    };
    let cfg = GemmConfig {
        transa,
        transb,
        m: int("dimension", n)?,
        n: int("dimension", m)?,
        k: int("dimension", k)?,
        alpha,
        lda: int("leading dimension", cb)?,
        ldb: int("leading dimension", ca)?,
        beta,
        ldc: int("leading dimension", n)?,
    };
    let bs = dev.buf(b)?;
    let as_ = dev.buf(a)?;
    let cs = dev.buf_mut(c)?;
    // cuBLAS works on the calling thread's current context: bind this replica's first, since
    // the replica thread may not be the one that created the device.
    dev.ctx.bind_to_thread().map_err(|e| dev.err(e))?;
    // SAFETY: the dimensions and leading dimensions were derived from the buffers' shapes
    // above, so cuBLAS reads and writes only inside the three allocations.
    unsafe { dev.blas.gemm(cfg, bs, as_, cs) }.map_err(|e| dev.err(e))
}
