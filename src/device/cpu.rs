//! The host implementation of [`Device`](super::Device): f32 buffers in plain vectors,
//! matrix products on our AVX-512 kernel (`cpu/sgemm.rs`) where the CPU has it and on a
//! fast GEMM crate elsewhere, everything else in tight vectorized loops. One
//! `CpuDevice` serves one replica and runs on that replica's thread; it splits its work over
//! a budget of threads (`cpu/par.rs`): every core for a lone device, the cores left to each
//! replica when a strategy runs several, so replicas never oversubscribe the machine.
//! The element-wise maths lives in `cpu/math.rs`, losses in `cpu/loss.rs`, optimizer rules
//! in `cpu/opt.rs`, windowed operations (im2col, pooling) in
//! `cpu/window.rs`, convolutions a few images at a time in `cpu/conv.rs`, and the run-time choice of vector width in `cpu/simd.rs`; this file
//! only checks shapes and dispatches. It must not know about layers or models.

mod conv;
mod loss;
pub(crate) mod math;
mod opt;
pub mod par;
pub mod ring;
mod sgemm;
pub mod simd;
pub(crate) mod spin;
mod window;

pub use math::{dropout_uniform, grad_from_output};
pub use ring::RingAllReduce;

use super::{
    same_len, Activation, Buffer, DResult, DTensor, Device, DeviceError, LossKind, OptStep, Window,
};

/// A CPU replica's device (`CPU:0`, or a logical CPU device `CPU:1`, ...).
pub struct CpuDevice {
    pub index: usize,
    /// How many threads its operations may split over (at least 1).
    threads: usize,
}

impl CpuDevice {
    /// A device that uses every core, or the share [`par::set_thread_budget`] gave the
    /// thread that makes it.
    pub fn new(index: usize) -> Self {
        CpuDevice::with_threads(index, par::current_budget())
    }

    /// A device that splits its work over `threads` threads (1: all on the caller's).
    pub fn with_threads(index: usize, threads: usize) -> Self {
        CpuDevice {
            index,
            threads: threads.max(1),
        }
    }

    /// The threads its operations split over.
    pub fn threads(&self) -> usize {
        self.threads
    }
}

/// Borrows the host vector of a tensor, refusing tensors that live elsewhere.
pub(crate) fn host(t: &DTensor) -> DResult<&[f32]> {
    match &t.buf {
        Buffer::Host(v) => Ok(v.as_slice()),
        Buffer::Cuda(_) => Err(DeviceError::WrongDevice("CUDA memory")),
    }
}

/// Mutable counterpart of [`host`].
pub(crate) fn host_mut(t: &mut DTensor) -> DResult<&mut [f32]> {
    match &mut t.buf {
        Buffer::Host(v) => Ok(v.as_mut_slice()),
        Buffer::Cuda(_) => Err(DeviceError::WrongDevice("CUDA memory")),
    }
}

impl Device for CpuDevice {
    fn name(&self) -> String {
        format!("CPU:{}", self.index)
    }

    fn upload(&self, data: &[f32], shape: &[usize]) -> DResult<DTensor> {
        same_len("upload", data.len(), shape.iter().product())?;
        Ok(DTensor {
            shape: shape.to_vec(),
            buf: Buffer::Host(data.to_vec()),
        })
    }

    fn download(&self, t: &DTensor) -> DResult<Vec<f32>> {
        Ok(host(t)?.to_vec())
    }

    fn zeros(&self, shape: &[usize]) -> DResult<DTensor> {
        let n: usize = shape.iter().product();
        Ok(DTensor {
            shape: shape.to_vec(),
            buf: Buffer::Host(vec![0.0; n]),
        })
    }

    fn copy(&self, src: &DTensor, dst: &mut DTensor) -> DResult<()> {
        let s = host(src)?;
        let d = host_mut(dst)?;
        same_len("copy", s.len(), d.len())?;
        d.copy_from_slice(s);
        Ok(())
    }

    fn write(&self, data: &[f32], dst: &mut DTensor) -> DResult<()> {
        let d = host_mut(dst)?;
        same_len("write", data.len(), d.len())?;
        d.copy_from_slice(data);
        Ok(())
    }

    fn gather_rows(
        &self,
        src: &[f32],
        row_len: usize,
        rows: &[usize],
        dst: &mut DTensor,
    ) -> DResult<()> {
        let d = host_mut(dst)?;
        same_len("gather_rows", d.len(), rows.len() * row_len)?;
        let outside = |r: usize| {
            r.checked_add(1)
                .and_then(|e| e.checked_mul(row_len))
                .is_none_or(|e| e > src.len())
        };
        if let Some(&bad) = rows.iter().find(|&&r| outside(r)) {
            return Err(super::row_error(bad));
        }
        let min = (par::MIN_PARALLEL_ELEMS / row_len.max(1)).max(1);
        par::for_chunks(self.threads, d, row_len, min, |first, part| {
            for (dst, &r) in part.chunks_exact_mut(row_len.max(1)).zip(&rows[first..]) {
                dst.copy_from_slice(&src[r * row_len..(r + 1) * row_len]);
            }
        });
        Ok(())
    }

    fn copy_range(
        &self,
        src: &DTensor,
        src_offset: usize,
        dst: &mut DTensor,
        dst_offset: usize,
        len: usize,
    ) -> DResult<()> {
        let s = host(src)?;
        let d = host_mut(dst)?;
        let (Some(se), Some(de)) = (src_offset.checked_add(len), dst_offset.checked_add(len))
        else {
            return Err(range_error(len));
        };
        match (s.get(src_offset..se), d.get_mut(dst_offset..de)) {
            (Some(s), Some(d)) => {
                d.copy_from_slice(s);
                Ok(())
            }
            _ => Err(range_error(len)),
        }
    }

    fn gemm(
        &self,
        a: &DTensor,
        trans_a: bool,
        b: &DTensor,
        trans_b: bool,
        c: &mut DTensor,
        alpha: f32,
        beta: f32,
    ) -> DResult<()> {
        let (ar, ac) = a.rows_cols();
        let (br, bc) = b.rows_cols();
        let (cr, cc) = c.rows_cols();
        let (m, k) = if trans_a { (ac, ar) } else { (ar, ac) };
        let (k2, n) = if trans_b { (bc, br) } else { (br, bc) };
        if k != k2 || m != cr || n != cc {
            return Err(DeviceError::Shape {
                op: "gemm",
                detail: format!(
                    "op(a) is {m}x{k}, op(b) is {k2}x{n}, c is {cr}x{cc} (a {:?}, b {:?})",
                    a.shape, b.shape
                ),
            });
        }
        let av = host(a)?;
        let bv = host(b)?;
        let cv = host_mut(c)?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        if k == 0 {
            // An empty inner dimension contributes nothing; only the scaling of `c` remains.
            cv.iter_mut()
                .for_each(|x| *x = if beta == 0.0 { 0.0 } else { *x * beta });
            return Ok(());
        }
        if sgemm::available() {
            sgemm::gemm(
                m,
                n,
                k,
                av,
                trans_a,
                bv,
                trans_b,
                cv,
                alpha,
                beta,
                sgemm::Post::NONE,
                self.threads,
            );
            return Ok(());
        }
        // Strides (row, column) of op(a) and op(b) over their row-major storage.
        let (a_rs, a_cs) = if trans_a { (1, ac) } else { (ac, 1) };
        let (b_rs, b_cs) = if trans_b { (1, bc) } else { (bc, 1) };
        // SAFETY: the shape checks above guarantee that every index the kernel touches
        // (m x k of a, k x n of b, m x n of c, with the strides computed from the stored
        // row-major shapes) lies inside the three vectors, and `c` is borrowed mutably and
        // does not alias `a` or `b`.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                cv.as_mut_ptr(),
                1,
                n as isize,
                beta != 0.0,
                av.as_ptr(),
                a_cs as isize,
                a_rs as isize,
                bv.as_ptr(),
                b_cs as isize,
                b_rs as isize,
                beta,
                alpha,
                false,
                false,
                false,
                // The crate splits the output into tiles over the threads and never splits
                // a dot product, so the bits do not depend on the thread count.
                if self.threads > 1 {
                    gemm::Parallelism::Rayon(self.threads)
                } else {
                    gemm::Parallelism::None
                },
            );
        }
        Ok(())
    }

    fn gemm_bias_act(
        &self,
        a: &DTensor,
        b: &DTensor,
        c: &mut DTensor,
        bias: Option<&DTensor>,
        act: Activation,
    ) -> DResult<()> {
        let (m, k) = a.rows_cols();
        let (k2, n) = b.rows_cols();
        let (cr, cc) = c.rows_cols();
        let shapes_fit = k > 0 && k == k2 && m == cr && n == cc;
        let relu = act == Activation::Relu;
        if !sgemm::available() || !shapes_fit || !(relu || act == Activation::Linear) {
            // The GEMM crate, another activation, or the shape error the product reports.
            return super::gemm_then_bias_act(self, a, b, c, bias, act);
        }
        let bv = bias_host(bias, n)?;
        let (av, bm) = (host(a)?, host(b)?);
        let cv = host_mut(c)?;
        let post = sgemm::Post { bias: bv, relu };
        sgemm::gemm(
            m,
            n,
            k,
            av,
            false,
            bm,
            false,
            cv,
            1.0,
            0.0,
            post,
            self.threads,
        );
        Ok(())
    }

    fn add_bias(&self, x: &mut DTensor, bias: &DTensor) -> DResult<()> {
        self.bias_activate(Activation::Linear, x, Some(bias))
    }

    fn sum_rows(&self, x: &DTensor, out: &mut DTensor, beta: f32) -> DResult<()> {
        let (_, cols) = x.rows_cols();
        let o = host_mut(out)?;
        same_len("sum_rows", cols, o.len())?;
        math::sum_rows(host(x)?, o, beta, self.threads);
        Ok(())
    }

    fn activate(&self, act: Activation, x: &DTensor, y: &mut DTensor) -> DResult<()> {
        let xv = host(x)?;
        let yv = host_mut(y)?;
        same_len("activate", xv.len(), yv.len())?;
        math::activate(act, xv, yv, self.threads);
        Ok(())
    }

    fn bias_activate(
        &self,
        act: Activation,
        x: &mut DTensor,
        bias: Option<&DTensor>,
    ) -> DResult<()> {
        let (_, cols) = x.rows_cols();
        let b = match bias {
            Some(b) => {
                let b = host(b)?;
                same_len("add_bias", cols, b.len())?;
                b
            }
            None => &[],
        };
        math::bias_activate(act, host_mut(x)?, b, self.threads);
        Ok(())
    }

    fn activate_grad(
        &self,
        act: Activation,
        x: &DTensor,
        y: &DTensor,
        dy: &DTensor,
        dx: &mut DTensor,
    ) -> DResult<()> {
        let (xv, yv, dyv) = (host(x)?, host(y)?, host(dy)?);
        let dxv = host_mut(dx)?;
        same_len("activate_grad", xv.len(), yv.len())?;
        same_len("activate_grad", xv.len(), dyv.len())?;
        same_len("activate_grad", xv.len(), dxv.len())?;
        math::activate_grad(act, xv, yv, dyv, dxv, self.threads);
        Ok(())
    }

    fn softmax_rows(&self, x: &DTensor, y: &mut DTensor, log: bool) -> DResult<()> {
        let (_, cols) = x.rows_cols();
        let xv = host(x)?;
        let yv = host_mut(y)?;
        same_len("softmax_rows", xv.len(), yv.len())?;
        math::softmax_rows(xv, yv, cols, log, self.threads);
        Ok(())
    }

    fn softmax_rows_grad(
        &self,
        y: &DTensor,
        dy: &DTensor,
        dx: &mut DTensor,
        log: bool,
    ) -> DResult<()> {
        let (_, cols) = y.rows_cols();
        let (yv, dyv) = (host(y)?, host(dy)?);
        let dxv = host_mut(dx)?;
        same_len("softmax_rows_grad", yv.len(), dyv.len())?;
        same_len("softmax_rows_grad", yv.len(), dxv.len())?;
        math::softmax_rows_grad(yv, dyv, dxv, cols, log, self.threads);
        Ok(())
    }

    fn loss(
        &self,
        kind: LossKind,
        pred: &DTensor,
        target: &DTensor,
        per_example: &mut DTensor,
        grad: &mut DTensor,
        grad_scale: f32,
    ) -> DResult<()> {
        let (rows, cols) = pred.rows_cols();
        let (p, t) = (host(pred)?, host(target)?);
        let pe = host_mut(per_example)?;
        same_len("loss (per-example output)", rows, pe.len())?;
        let g = host_mut(grad)?;
        same_len("loss (gradient)", p.len(), g.len())?;
        let want = match kind {
            LossKind::SparseCategoricalCrossentropy { .. } => rows,
            _ => p.len(),
        };
        same_len("loss (targets)", t.len(), want)?;
        loss::compute(kind, p, t, cols, pe, g, grad_scale)
    }

    fn axpby(&self, alpha: f32, x: &DTensor, beta: f32, y: &mut DTensor) -> DResult<()> {
        let xv = host(x)?;
        let yv = host_mut(y)?;
        same_len("axpby", xv.len(), yv.len())?;
        math::axpby(alpha, xv, beta, yv, self.threads);
        Ok(())
    }

    fn mul(&self, a: &DTensor, b: &DTensor, out: &mut DTensor) -> DResult<()> {
        let (av, bv) = (host(a)?, host(b)?);
        let o = host_mut(out)?;
        same_len("mul", av.len(), bv.len())?;
        same_len("mul", av.len(), o.len())?;
        math::mul(av, bv, o, self.threads);
        Ok(())
    }

    fn sum(&self, x: &DTensor) -> DResult<f64> {
        Ok(host(x)?.iter().map(|v| f64::from(*v)).sum())
    }

    fn dropout_mask(&self, seed: u64, rate: f32, mask: &mut DTensor) -> DResult<()> {
        math::dropout_mask(seed, rate, host_mut(mask)?, self.threads);
        Ok(())
    }

    fn im2col(&self, x: &DTensor, w: &Window, cols: &mut DTensor) -> DResult<()> {
        window::im2col(host(x)?, w, host_mut(cols)?, self.threads)
    }

    fn col2im(&self, cols: &DTensor, w: &Window, dx: &mut DTensor) -> DResult<()> {
        window::col2im(host(cols)?, w, host_mut(dx)?, self.threads)
    }

    fn conv2d(
        &self,
        x: &DTensor,
        w: &Window,
        kernel: &DTensor,
        cols: &mut DTensor,
        z: &mut DTensor,
    ) -> DResult<()> {
        self.conv2d_bias_act(x, w, kernel, cols, z, None, Activation::Linear)
    }

    fn conv2d_bias_act(
        &self,
        x: &DTensor,
        w: &Window,
        kernel: &DTensor,
        cols: &mut DTensor,
        z: &mut DTensor,
        bias: Option<&DTensor>,
        act: Activation,
    ) -> DResult<()> {
        let relu = act == Activation::Relu;
        let (Some(n), true) = (
            conv_filters(w, kernel, z),
            relu || act == Activation::Linear,
        ) else {
            // Another activation, no AVX-512 product, or a shape error reported as usual.
            self.im2col(x, w, cols)?;
            return self.gemm_bias_act(cols, kernel, z, bias, act);
        };
        let bv = bias_host(bias, n)?;
        let (xv, kv) = (host(x)?, host(kernel)?);
        same_len(
            "conv2d (input)",
            xv.len(),
            w.batch * w.height * w.width * w.channels,
        )?;
        same_len("conv2d (columns)", cols.len(), conv_cols(w))?;
        let (cv, zv) = (host_mut(cols)?, host_mut(z)?);
        let post = sgemm::Post { bias: bv, relu };
        conv::forward(xv, w, kv, n, cv, zv, post, self.threads)
    }

    fn conv2d_input_grad(
        &self,
        dz: &DTensor,
        kernel: &DTensor,
        w: &Window,
        dcols: &mut DTensor,
        dx: &mut DTensor,
    ) -> DResult<()> {
        let Some(n) = conv_filters(w, kernel, dz) else {
            self.gemm(dz, false, kernel, true, dcols, 1.0, 0.0)?;
            return self.col2im(dcols, w, dx);
        };
        same_len("conv2d (columns)", dcols.len(), conv_cols(w))?;
        same_len(
            "col2im (input)",
            dx.len(),
            w.batch * w.height * w.width * w.channels,
        )?;
        let (dzv, kv) = (host(dz)?, host(kernel)?);
        let (dcv, dxv) = (host_mut(dcols)?, host_mut(dx)?);
        conv::input_grad(dzv, kv, n, w, dcv, dxv, self.threads)
    }

    fn maxpool(
        &self,
        x: &DTensor,
        w: &Window,
        y: &mut DTensor,
        argmax: &mut DTensor,
    ) -> DResult<()> {
        window::maxpool(host(x)?, w, host_mut(y)?, host_mut(argmax)?, self.threads)
    }

    fn maxpool_grad(&self, dy: &DTensor, argmax: &DTensor, dx: &mut DTensor) -> DResult<()> {
        window::maxpool_grad(host(dy)?, host(argmax)?, host_mut(dx)?)
    }

    fn maxpool_backward(
        &self,
        x: &DTensor,
        w: &Window,
        dy: &DTensor,
        dx: &mut DTensor,
        relu: bool,
    ) -> DResult<()> {
        window::maxpool_backward(host(x)?, w, host(dy)?, host_mut(dx)?, relu, self.threads)
    }

    fn avgpool(&self, x: &DTensor, w: &Window, y: &mut DTensor) -> DResult<()> {
        window::avgpool(host(x)?, w, host_mut(y)?, self.threads)
    }

    fn avgpool_backward(&self, w: &Window, dy: &DTensor, dx: &mut DTensor) -> DResult<()> {
        window::avgpool_backward(w, host(dy)?, host_mut(dx)?, self.threads)
    }

    fn optimizer_step(
        &self,
        opt: &OptStep,
        param: &mut DTensor,
        grad: &DTensor,
        slots: &mut [DTensor],
    ) -> DResult<()> {
        let g = host(grad)?;
        let p = host_mut(param)?;
        same_len("optimizer_step", p.len(), g.len())?;
        if slots.len() != opt.slots() {
            return Err(DeviceError::Shape {
                op: "optimizer_step",
                detail: format!(
                    "{} slots given, the rule keeps {}",
                    slots.len(),
                    opt.slots()
                ),
            });
        }
        let mut views = Vec::with_capacity(slots.len());
        for s in slots.iter_mut() {
            let v = host_mut(s)?;
            same_len("optimizer_step (slot)", p.len(), v.len())?;
            views.push(v);
        }
        opt::step(opt, p, g, &mut views);
        Ok(())
    }
}

/// The filter count of a convolution whose kernel is `kernel` (`patch x n`) and output (or
/// output gradient) `z` (`batch * out_h * out_w x n`), when the shapes agree, the patch is
/// not empty and our AVX-512 product runs it; `None` sends the caller to the unsliced path,
/// which reports any shape error.
fn conv_filters(w: &Window, kernel: &DTensor, z: &DTensor) -> Option<usize> {
    let (kr, n) = kernel.rows_cols();
    let patch = w.kernel_h * w.kernel_w * w.channels;
    let rows = w.batch * w.out_h * w.out_w;
    let fits = sgemm::available() && patch > 0 && n > 0 && rows > 0 && kr == patch;
    (fits && z.rows_cols() == (rows, n)).then_some(n)
}

/// A layer's bias on the host, checked against its `n` columns.
fn bias_host(bias: Option<&DTensor>, n: usize) -> DResult<Option<&[f32]>> {
    bias.map(|t| {
        let v = host(t)?;
        same_len("add_bias", n, v.len())?;
        Ok(v)
    })
    .transpose()
}

/// Elements of a convolution's unfolded input.
fn conv_cols(w: &Window) -> usize {
    w.batch * w.out_h * w.out_w * w.kernel_h * w.kernel_w * w.channels
}

fn range_error(len: usize) -> DeviceError {
    DeviceError::Shape {
        op: "copy_range",
        detail: format!("a range of {len} elements does not fit"),
    }
}
