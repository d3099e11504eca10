//! [`CudaDevice`]: one replica on one GPU. It owns a handle on the GPU's primary context, one
//! stream, one cuBLAS handle bound to that stream and the loaded kernels; every buffer it
//! creates belongs to that stream, and it refuses buffers of any other replica. This file
//! holds construction, memory transfers and the element-wise and row-wise operations; the
//! rest of the [`Device`] trait is forwarded to `ops.rs` and `blas.rs`.

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, DriverError, LaunchArgs, LaunchConfig, PushKernelArg,
};

use super::detect::{gpu_count, physical_device_name};
use super::kernels::ActCode;
use super::load::{Kernels, BLOCK, K};
use super::CudaBuffer;
use crate::device::{
    same_len, Activation, Buffer, DResult, DTensor, Device, DeviceError, LossKind, OptStep, Window,
};

/// One GPU replica (`GPU:0`, or logical GPU `GPU:3` on physical GPU 1).
pub struct CudaDevice {
    pub(crate) index: usize,
    pub(crate) ordinal: usize,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) blas: cudarc::cublas::CudaBlas,
    pub(crate) k: Arc<Kernels>,
}

/// Turns a cudarc error into the device error, recognising out-of-memory.
pub(crate) fn cu_err(device: &str, e: impl std::fmt::Display) -> DeviceError {
    let detail = e.to_string();
    if detail.contains("OUT_OF_MEMORY") {
        DeviceError::OutOfMemory {
            device: device.to_string(),
            detail: format!("{detail}; try a smaller batch or model"),
        }
    } else {
        DeviceError::Cuda(format!("{device}: {detail}"))
    }
}

pub(crate) fn shape_err(op: &'static str, detail: String) -> DeviceError {
    DeviceError::Shape { op, detail }
}

/// A grid for a grid-stride loop over `n` elements.
pub(crate) fn flat(n: usize) -> LaunchConfig {
    let blocks = n.div_ceil(BLOCK as usize).clamp(1, 65_535) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A grid with one warp per row.
pub(crate) fn per_row(rows: usize) -> DResult<LaunchConfig> {
    let blocks = u32::try_from(rows.div_ceil((BLOCK / 32) as usize).max(1))
        .map_err(|_| shape_err("row kernel", format!("{rows} rows is too many")))?;
    Ok(LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    })
}

impl CudaDevice {
    /// The replica on physical GPU `ordinal`, named `GPU:{ordinal}`.
    pub fn new(ordinal: usize) -> DResult<CudaDevice> {
        Self::logical(ordinal, ordinal)
    }

    /// A replica on physical GPU `ordinal` named `GPU:{index}`: how logical GPUs (several
    /// replicas sharing one GPU) are made. Each gets its own stream and cuBLAS handle.
    pub fn logical(ordinal: usize, index: usize) -> DResult<CudaDevice> {
        let count = gpu_count();
        if ordinal >= count {
            return Err(DeviceError::Unavailable(format!(
                "{} (this machine has {count} CUDA GPU{})",
                physical_device_name(ordinal),
                if count == 1 { "" } else { "s" }
            )));
        }
        let name = format!("GPU:{index}");
        let ctx = CudaContext::new(ordinal).map_err(|e| cu_err(&name, e))?;
        // SAFETY: this context object serves this replica only, and every buffer is used on
        // the replica's single stream; the one cross-stream use (the single-GPU all-reduce)
        // orders itself with explicit events. cudarc's per-buffer event tracking would only
        // add two event records per kernel argument. It is turned off before any allocation.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(|e| cu_err(&name, e))?;
        let blas = cudarc::cublas::CudaBlas::new(stream.clone()).map_err(|e| cu_err(&name, e))?;
        let k = Kernels::load(&ctx)?;
        Ok(CudaDevice {
            index,
            ordinal,
            ctx,
            stream,
            blas,
            k,
        })
    }

    /// The CUDA ordinal of the physical GPU.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Waits until every operation queued on this replica's stream has finished.
    pub fn synchronize(&self) -> DResult<()> {
        self.stream.synchronize().map_err(|e| self.err(e))
    }

    pub(crate) fn err(&self, e: impl std::fmt::Display) -> DeviceError {
        cu_err(&self.name(), e)
    }

    /// The slice of a tensor this device owns.
    pub(crate) fn buf<'a>(&self, t: &'a DTensor) -> DResult<&'a CudaSlice<f32>> {
        match &t.buf {
            Buffer::Cuda(b) if Arc::ptr_eq(b.slice.stream(), &self.stream) => {
                same_len("tensor", t.len(), b.len)?;
                Ok(&b.slice)
            }
            Buffer::Cuda(_) => Err(DeviceError::WrongDevice("another GPU replica's memory")),
            Buffer::Host(_) => Err(DeviceError::WrongDevice("host memory")),
        }
    }

    pub(crate) fn buf_mut<'a>(&self, t: &'a mut DTensor) -> DResult<&'a mut CudaSlice<f32>> {
        let len = t.len();
        match &mut t.buf {
            Buffer::Cuda(b) if Arc::ptr_eq(b.slice.stream(), &self.stream) => {
                same_len("tensor", len, b.len)?;
                Ok(&mut b.slice)
            }
            Buffer::Cuda(_) => Err(DeviceError::WrongDevice("another GPU replica's memory")),
            Buffer::Host(_) => Err(DeviceError::WrongDevice("host memory")),
        }
    }

    pub(crate) fn alloc(&self, len: usize) -> DResult<CudaSlice<f32>> {
        self.stream
            .alloc_zeros::<f32>(len.max(1))
            .map_err(|e| self.err(e))
    }

    pub(crate) fn launcher(&self, k: K) -> LaunchArgs<'_> {
        self.stream.launch_builder(self.k.get(k))
    }

    pub(crate) fn run(&self, mut args: LaunchArgs<'_>, cfg: LaunchConfig) -> DResult<()> {
        // SAFETY: every launch site passes arguments in the order and with the types its
        // kernel declares, and lengths were checked against the buffers before launching.
        let r: Result<_, DriverError> = unsafe { args.launch(cfg) };
        r.map(|_| ()).map_err(|e| self.err(e))
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        // The cuBLAS handle and the stream are destroyed right after this, possibly on a
        // thread that has no current context; cuBLAS needs this GPU's.
        super::make_current(&self.ctx);
    }
}

/// The kernels' code for `act`, and its parameter (leaky relu's slope).
fn act_code(act: Activation) -> (i32, f32) {
    let (code, p) = match act {
        Activation::Linear => (ActCode::Linear, 0.0),
        Activation::Relu => (ActCode::Relu, 0.0),
        Activation::Sigmoid => (ActCode::Sigmoid, 0.0),
        Activation::Tanh => (ActCode::Tanh, 0.0),
        Activation::Elu => (ActCode::Elu, 0.0),
        Activation::Selu => (ActCode::Selu, 0.0),
        Activation::Gelu => (ActCode::Gelu, 0.0),
        Activation::Swish => (ActCode::Swish, 0.0),
        Activation::Softplus => (ActCode::Softplus, 0.0),
        Activation::LeakyRelu(slope) => (ActCode::LeakyRelu, slope),
    };
    (code as i32, p)
}

impl Device for CudaDevice {
    fn name(&self) -> String {
        format!("GPU:{}", self.index)
    }

    fn upload(&self, data: &[f32], shape: &[usize]) -> DResult<DTensor> {
        let mut t = self.zeros(shape)?;
        self.write(data, &mut t)?;
        Ok(t)
    }

    fn download(&self, t: &DTensor) -> DResult<Vec<f32>> {
        let s = self.buf(t)?;
        if t.is_empty() {
            return Ok(Vec::new());
        }
        let mut out = vec![0.0f32; t.len()];
        self.stream
            .memcpy_dtoh(&s.slice(0..t.len()), &mut out)
            .map_err(|e| self.err(e))?;
        self.synchronize()?;
        Ok(out)
    }

    fn zeros(&self, shape: &[usize]) -> DResult<DTensor> {
        let len = shape
            .iter()
            .try_fold(1usize, |a, d| a.checked_mul(*d))
            .ok_or_else(|| shape_err("zeros", format!("shape {shape:?} is too large")))?;
        let slice = self.alloc(len)?;
        Ok(DTensor {
            shape: shape.to_vec(),
            buf: Buffer::Cuda(CudaBuffer { slice, len }),
        })
    }

    fn copy(&self, src: &DTensor, dst: &mut DTensor) -> DResult<()> {
        same_len("copy", src.len(), dst.len())?;
        let s = self.buf(src)?;
        let d = self.buf_mut(dst)?;
        self.stream.memcpy_dtod(s, d).map_err(|e| self.err(e))
    }

    fn write(&self, data: &[f32], dst: &mut DTensor) -> DResult<()> {
        same_len("write", data.len(), dst.len())?;
        if data.is_empty() {
            return Ok(());
        }
        let d = self.buf_mut(dst)?;
        self.stream.memcpy_htod(data, d).map_err(|e| self.err(e))
    }

    fn copy_range(
        &self,
        src: &DTensor,
        src_offset: usize,
        dst: &mut DTensor,
        dst_offset: usize,
        len: usize,
    ) -> DResult<()> {
        let fits = |off: usize, total: usize| off.checked_add(len).is_some_and(|e| e <= total);
        if !fits(src_offset, src.len()) || !fits(dst_offset, dst.len()) {
            return Err(shape_err(
                "copy_range",
                format!("a range of {len} elements does not fit"),
            ));
        }
        if len == 0 {
            return Ok(());
        }
        let s = self.buf(src)?;
        let d = self.buf_mut(dst)?;
        let from = s.slice(src_offset..src_offset + len);
        let mut to = d.slice_mut(dst_offset..dst_offset + len);
        self.stream
            .memcpy_dtod(&from, &mut to)
            .map_err(|e| self.err(e))
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
        super::blas::gemm(self, a, trans_a, b, trans_b, c, alpha, beta)
    }

    fn add_bias(&self, x: &mut DTensor, bias: &DTensor) -> DResult<()> {
        let (rows, cols) = x.rows_cols();
        same_len("add_bias", bias.len(), cols)?;
        let n = (rows * cols) as i64;
        let cols = cols as i64;
        if n == 0 {
            return Ok(());
        }
        let b = self.buf(bias)?;
        let xs = self.buf_mut(x)?;
        let mut l = self.launcher(K::AddBias);
        l.arg(xs).arg(b).arg(&n).arg(&cols);
        self.run(l, flat(n as usize))
    }

    fn bias_activate(
        &self,
        act: Activation,
        x: &mut DTensor,
        bias: Option<&DTensor>,
    ) -> DResult<()> {
        let (rows, cols) = x.rows_cols();
        let n = (rows * cols) as i64;
        let (code, p) = act_code(act);
        let (b, cols) = match bias {
            Some(b) => {
                same_len("add_bias", b.len(), cols)?;
                (Some(self.buf(b)?), cols as i64)
            }
            None => (None, 0i64),
        };
        if n == 0 {
            return Ok(());
        }
        let null: u64 = 0;
        let xs = self.buf_mut(x)?;
        let mut l = self.launcher(K::BiasAct);
        l.arg(&code).arg(&p).arg(xs);
        match b {
            Some(b) => l.arg(b),
            None => l.arg(&null),
        };
        l.arg(&n).arg(&cols);
        self.run(l, flat(n as usize))
    }

    fn sum_rows(&self, x: &DTensor, out: &mut DTensor, beta: f32) -> DResult<()> {
        let (rows, cols) = x.rows_cols();
        same_len("sum_rows", out.len(), cols)?;
        if cols == 0 {
            return Ok(());
        }
        let (r, c) = (rows as i64, cols as i64);
        let xs = self.buf(x)?;
        let o = self.buf_mut(out)?;
        let mut l = self.launcher(K::SumRows);
        l.arg(xs).arg(o).arg(&r).arg(&c).arg(&beta);
        self.run(l, flat(cols))
    }

    fn activate(&self, act: Activation, x: &DTensor, y: &mut DTensor) -> DResult<()> {
        same_len("activate", x.len(), y.len())?;
        let n = x.len() as i64;
        if n == 0 {
            return Ok(());
        }
        let (code, p) = act_code(act);
        let xs = self.buf(x)?;
        let ys = self.buf_mut(y)?;
        let mut l = self.launcher(K::ActFwd);
        l.arg(&code).arg(&p).arg(xs).arg(ys).arg(&n);
        self.run(l, flat(n as usize))
    }

    fn activate_grad(
        &self,
        act: Activation,
        x: &DTensor,
        y: &DTensor,
        dy: &DTensor,
        dx: &mut DTensor,
    ) -> DResult<()> {
        let n = x.len();
        same_len("activate_grad (y)", y.len(), n)?;
        same_len("activate_grad (dy)", dy.len(), n)?;
        same_len("activate_grad (dx)", dx.len(), n)?;
        if n == 0 {
            return Ok(());
        }
        let n64 = n as i64;
        let (code, p) = act_code(act);
        let (xs, ys, gs) = (self.buf(x)?, self.buf(y)?, self.buf(dy)?);
        let ds = self.buf_mut(dx)?;
        let mut l = self.launcher(K::ActBwd);
        l.arg(&code)
            .arg(&p)
            .arg(xs)
            .arg(ys)
            .arg(gs)
            .arg(ds)
            .arg(&n64);
        self.run(l, flat(n))
    }

    fn softmax_rows(&self, x: &DTensor, y: &mut DTensor, log: bool) -> DResult<()> {
        same_len("softmax", x.len(), y.len())?;
        let (rows, cols) = x.rows_cols();
        if rows * cols == 0 {
            return Ok(());
        }
        let (r, c, lg) = (rows as i64, cols as i64, i32::from(log));
        let xs = self.buf(x)?;
        let ys = self.buf_mut(y)?;
        let mut l = self.launcher(K::Softmax);
        l.arg(xs).arg(ys).arg(&r).arg(&c).arg(&lg);
        self.run(l, per_row(rows)?)
    }

    fn softmax_rows_grad(
        &self,
        y: &DTensor,
        dy: &DTensor,
        dx: &mut DTensor,
        log: bool,
    ) -> DResult<()> {
        same_len("softmax_grad (dy)", y.len(), dy.len())?;
        same_len("softmax_grad (dx)", y.len(), dx.len())?;
        let (rows, cols) = y.rows_cols();
        if rows * cols == 0 {
            return Ok(());
        }
        let (r, c, lg) = (rows as i64, cols as i64, i32::from(log));
        let (ys, gs) = (self.buf(y)?, self.buf(dy)?);
        let ds = self.buf_mut(dx)?;
        let mut l = self.launcher(K::SoftmaxGrad);
        l.arg(ys).arg(gs).arg(ds).arg(&r).arg(&c).arg(&lg);
        self.run(l, per_row(rows)?)
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
        super::ops::loss(self, kind, pred, target, per_example, grad, grad_scale)
    }

    fn axpby(&self, alpha: f32, x: &DTensor, beta: f32, y: &mut DTensor) -> DResult<()> {
        same_len("axpby", x.len(), y.len())?;
        let n = x.len() as i64;
        if n == 0 {
            return Ok(());
        }
        let xs = self.buf(x)?;
        let ys = self.buf_mut(y)?;
        let mut l = self.launcher(K::Axpby);
        l.arg(&alpha).arg(xs).arg(&beta).arg(ys).arg(&n);
        self.run(l, flat(n as usize))
    }

    fn mul(&self, a: &DTensor, b: &DTensor, out: &mut DTensor) -> DResult<()> {
        same_len("mul", a.len(), b.len())?;
        same_len("mul", a.len(), out.len())?;
        let n = a.len() as i64;
        if n == 0 {
            return Ok(());
        }
        let (as_, bs) = (self.buf(a)?, self.buf(b)?);
        let os = self.buf_mut(out)?;
        let mut l = self.launcher(K::Mul);
        l.arg(as_).arg(bs).arg(os).arg(&n);
        self.run(l, flat(n as usize))
    }

    fn sum(&self, x: &DTensor) -> DResult<f64> {
        super::ops::sum(self, x)
    }

    fn dropout_mask(&self, seed: u64, rate: f32, mask: &mut DTensor) -> DResult<()> {
        super::ops::dropout_mask(self, seed, rate, mask)
    }

    fn im2col(&self, x: &DTensor, w: &Window, cols: &mut DTensor) -> DResult<()> {
        super::ops::im2col(self, x, w, cols)
    }

    fn col2im(&self, cols: &DTensor, w: &Window, dx: &mut DTensor) -> DResult<()> {
        super::ops::col2im(self, cols, w, dx)
    }

    fn maxpool(
        &self,
        x: &DTensor,
        w: &Window,
        y: &mut DTensor,
        argmax: &mut DTensor,
    ) -> DResult<()> {
        super::ops::maxpool(self, x, w, y, argmax)
    }

    fn maxpool_grad(&self, dy: &DTensor, argmax: &DTensor, dx: &mut DTensor) -> DResult<()> {
        super::ops::maxpool_grad(self, dy, argmax, dx)
    }

    fn maxpool_backward(
        &self,
        x: &DTensor,
        w: &Window,
        dy: &DTensor,
        dx: &mut DTensor,
        relu: bool,
    ) -> DResult<()> {
        super::ops::maxpool_backward(self, x, w, dy, dx, relu)
    }

    fn avgpool(&self, x: &DTensor, w: &Window, y: &mut DTensor) -> DResult<()> {
        super::ops::avgpool(self, x, w, y)
    }

    fn avgpool_backward(&self, w: &Window, dy: &DTensor, dx: &mut DTensor) -> DResult<()> {
        super::ops::avgpool_backward(self, w, dy, dx)
    }

    fn optimizer_step(
        &self,
        opt: &OptStep,
        param: &mut DTensor,
        grad: &DTensor,
        slots: &mut [DTensor],
    ) -> DResult<()> {
        super::ops::optimizer_step(self, opt, param, grad, slots)
    }
}
