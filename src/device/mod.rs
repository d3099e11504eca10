//! Where the numbers are computed. [`Device`] is the small, f32-centred set of operations
//! the Keras layers, losses and optimizers need; [`cpu::CpuDevice`] implements it on the
//! host (a fast GEMM crate, one thread per replica) and [`cuda::CudaDevice`] on an NVIDIA
//! GPU (cuBLAS and NVRTC kernels). Tensors on a device are [`DTensor`]s: a shape and a
//! buffer that only the owning device reads. Only `device::cuda` knows cudarc; everything
//! above this module calls the trait and never asks which device it has.
//!
//! Shapes are row-major. Two-dimensional operations treat a tensor of shape `[.., k]` as a
//! matrix of `len / k` rows and `k` columns.

pub mod collective;
pub mod cpu;
pub mod cuda;
pub mod formulas;

pub use collective::{AllReduce, DeviceKind, DeviceSpec};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum DeviceError {
    #[error("shape mismatch in {op}: {detail}")]
    Shape { op: &'static str, detail: String },
    #[error("out of memory on {device}: {detail}")]
    OutOfMemory { device: String, detail: String },
    #[error("CUDA error: {0}")]
    Cuda(String),
    #[error("{0} is not available on this machine")]
    Unavailable(String),
    #[error("a tensor of {0} was handed to a device that does not own it")]
    WrongDevice(&'static str),
    /// The collective across worker processes failed (a worker died or timed out).
    #[error("{0}")]
    Collective(String),
}

pub type DResult<T> = Result<T, DeviceError>;

/// Storage of a device tensor. Host buffers are plain vectors; CUDA buffers are opaque here.
pub enum Buffer {
    Host(Vec<f32>),
    Cuda(cuda::CudaBuffer),
}

/// A tensor that lives on one device.
pub struct DTensor {
    pub shape: Vec<usize>,
    pub buf: Buffer,
}

impl DTensor {
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Rows and columns when viewed as a matrix with the last axis as columns.
    pub fn rows_cols(&self) -> (usize, usize) {
        let cols = self.shape.last().copied().unwrap_or(1);
        match self.len().checked_div(cols) {
            Some(rows) => (rows, cols),
            None => (0, 0),
        }
    }
}

/// Element-wise activations applied by `activate`/`activate_grad`. Row-wise ones (softmax,
/// log-softmax) go through `softmax_rows`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Activation {
    Linear,
    Relu,
    Sigmoid,
    Tanh,
    Elu,
    Selu,
    /// Keras's default `gelu` (approximate = False: the erf form).
    Gelu,
    Swish,
    Softplus,
    LeakyRelu(f32),
}

/// Losses computed per example by `loss`. `from_logits` means the predictions are logits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossKind {
    MeanSquaredError,
    MeanAbsoluteError,
    Huber {
        delta: f32,
    },
    BinaryCrossentropy {
        from_logits: bool,
    },
    CategoricalCrossentropy {
        from_logits: bool,
    },
    /// Targets are class indices stored as f32, one per row.
    SparseCategoricalCrossentropy {
        from_logits: bool,
    },
}

impl LossKind {
    /// The same loss taking logits (a cross-entropy given `from_logits=True`, or a softmax
    /// or sigmoid output layer folded into the loss); the others are unchanged.
    pub fn with_logits(self) -> LossKind {
        match self {
            LossKind::BinaryCrossentropy { .. } => {
                LossKind::BinaryCrossentropy { from_logits: true }
            }
            LossKind::CategoricalCrossentropy { .. } => {
                LossKind::CategoricalCrossentropy { from_logits: true }
            }
            LossKind::SparseCategoricalCrossentropy { .. } => {
                LossKind::SparseCategoricalCrossentropy { from_logits: true }
            }
            other => other,
        }
    }
}

/// One optimizer update rule with its hyper-parameters. `step` counts from 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptStep {
    Sgd {
        lr: f32,
        momentum: f32,
        nesterov: bool,
    },
    Adam {
        lr: f32,
        beta_1: f32,
        beta_2: f32,
        epsilon: f32,
        step: u64,
    },
    AdamW {
        lr: f32,
        beta_1: f32,
        beta_2: f32,
        epsilon: f32,
        weight_decay: f32,
        step: u64,
    },
    RmsProp {
        lr: f32,
        rho: f32,
        momentum: f32,
        epsilon: f32,
        centered: bool,
    },
    Adagrad {
        lr: f32,
        epsilon: f32,
    },
}

impl OptStep {
    /// Adam's learning rate with both bias corrections folded in, in float32 as Keras
    /// computes it (`lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)`); every device uses this one
    /// value, so they update bit for bit alike.
    pub fn adam_rate(lr: f32, beta_1: f32, beta_2: f32, step: u64) -> f32 {
        let t = step.max(1) as f32;
        lr * (1.0 - beta_2.powf(t)).sqrt() / (1.0 - beta_1.powf(t))
    }

    /// `1 - b` for a decay rate `b` as Keras computes it: Python subtracts the float the
    /// user wrote in float64, and the product with a float32 tensor rounds the difference to
    /// float32. `b` arrives as float32, so the decimal is recovered as the shortest one that
    /// rounds to it (`0.999f32` is `0.999`, whose complement rounds to `0.001f32`, where
    /// `1.0f32 - 0.999f32` would be `0.00099998713`).
    pub fn complement(b: f32) -> f32 {
        let decimal: f64 = format!("{b}").parse().unwrap_or(f64::from(b));
        (1.0 - decimal) as f32
    }

    /// How many slot tensors (same shape as the parameter) the rule keeps.
    pub fn slots(&self) -> usize {
        match self {
            OptStep::Sgd { momentum, .. } => usize::from(*momentum != 0.0),
            OptStep::Adam { .. } | OptStep::AdamW { .. } => 2,
            OptStep::RmsProp {
                momentum, centered, ..
            } => 1 + usize::from(*momentum != 0.0) + usize::from(*centered),
            OptStep::Adagrad { .. } => 1,
        }
    }
}

/// Geometry of a 2-D convolution or pooling window over NHWC input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub batch: usize,
    pub height: usize,
    pub width: usize,
    pub channels: usize,
    pub kernel_h: usize,
    pub kernel_w: usize,
    pub stride_h: usize,
    pub stride_w: usize,
    /// Zero padding before the first row/column ("same" padding); after is derived.
    pub pad_top: usize,
    pub pad_left: usize,
    pub out_h: usize,
    pub out_w: usize,
}

impl Window {
    /// Values in one patch: the kernel's window across every channel (one row of `im2col`).
    pub fn patch_len(&self) -> usize {
        self.kernel_h * self.kernel_w * self.channels
    }

    /// Output positions of one image (the rows `im2col` makes per image).
    pub fn out_pixels(&self) -> usize {
        self.out_h * self.out_w
    }

    /// Values of one input image.
    pub fn image_len(&self) -> usize {
        self.height * self.width * self.channels
    }
}

/// Fails with a shape error unless `a == b`; `op` names the operation. Every device checks
/// lengths with it, so their messages match.
pub(crate) fn same_len(op: &'static str, a: usize, b: usize) -> DResult<()> {
    if a == b {
        Ok(())
    } else {
        Err(DeviceError::Shape {
            op,
            detail: format!("{a} elements against {b}"),
        })
    }
}

/// [`Device::gemm_bias_act`] unfused: the product, then the bias and activation pass.
pub(crate) fn gemm_then_bias_act<D: Device + ?Sized>(
    dev: &D,
    a: &DTensor,
    b: &DTensor,
    c: &mut DTensor,
    bias: Option<&DTensor>,
    act: Activation,
) -> DResult<()> {
    dev.gemm(a, false, b, false, c, 1.0, 0.0)?;
    if bias.is_some() || act != Activation::Linear {
        dev.bias_activate(act, c, bias)?;
    }
    Ok(())
}

/// The error of a row index past the end of a gathered matrix.
pub(crate) fn row_error(row: usize) -> DeviceError {
    DeviceError::Shape {
        op: "gather_rows",
        detail: format!("row {row} is outside the data"),
    }
}

/// A host copy of a device tensor, for the default methods that compute on the host.
fn host_copy<D: Device + ?Sized>(dev: &D, t: &DTensor) -> DResult<DTensor> {
    Ok(DTensor {
        shape: t.shape.clone(),
        buf: Buffer::Host(dev.download(t)?),
    })
}

/// The operations the engine needs. Every method checks shapes and returns
/// `DeviceError::Shape` rather than panicking. Outputs are written into tensors the caller
/// allocated with `zeros`, so steady-state training allocates nothing.
pub trait Device: Send {
    /// `CPU:0`, `GPU:1`, as TensorFlow names devices.
    fn name(&self) -> String;

    fn upload(&self, data: &[f32], shape: &[usize]) -> DResult<DTensor>;
    fn download(&self, t: &DTensor) -> DResult<Vec<f32>>;
    fn zeros(&self, shape: &[usize]) -> DResult<DTensor>;
    /// Overwrites `dst` with `src` (same length).
    fn copy(&self, src: &DTensor, dst: &mut DTensor) -> DResult<()>;
    /// Overwrites `dst` with host data (same length): batches in, without reallocating.
    fn write(&self, data: &[f32], dst: &mut DTensor) -> DResult<()>;

    /// Fills `dst` with the rows `rows` of the row-major host matrix `src` (`row_len` values
    /// per row), in order: a shuffled batch gathered straight from the data set. A row
    /// outside `src` is a shape error. The default gathers on the host, then writes.
    fn gather_rows(
        &self,
        src: &[f32],
        row_len: usize,
        rows: &[usize],
        dst: &mut DTensor,
    ) -> DResult<()> {
        let mut batch = Vec::with_capacity(rows.len() * row_len);
        for &r in rows {
            match src.get(r * row_len..(r + 1) * row_len) {
                Some(row) => batch.extend_from_slice(row),
                None => return Err(row_error(r)),
            }
        }
        self.write(&batch, dst)
    }

    /// Copies `len` elements from `src[src_offset..]` into `dst[dst_offset..]`: how the
    /// training step packs per-variable gradients into one flat buffer for the all-reduce
    /// and unpacks them again. The default goes through the host; devices override it.
    fn copy_range(
        &self,
        src: &DTensor,
        src_offset: usize,
        dst: &mut DTensor,
        dst_offset: usize,
        len: usize,
    ) -> DResult<()> {
        let s = self.download(src)?;
        let mut d = self.download(dst)?;
        let (Some(se), Some(de)) = (src_offset.checked_add(len), dst_offset.checked_add(len))
        else {
            return Err(DeviceError::Shape {
                op: "copy_range",
                detail: format!("a range of {len} elements overflows"),
            });
        };
        match (s.get(src_offset..se), d.get_mut(dst_offset..de)) {
            (Some(s), Some(d)) => d.copy_from_slice(s),
            _ => {
                return Err(DeviceError::Shape {
                    op: "copy_range",
                    detail: format!("a range of {len} elements does not fit"),
                })
            }
        }
        self.write(&d, dst)
    }

    /// `c = alpha * op(a) @ op(b) + beta * c`, where `op` transposes when asked. `a` and `b`
    /// are viewed as matrices (`rows_cols`).
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &self,
        a: &DTensor,
        trans_a: bool,
        b: &DTensor,
        trans_b: bool,
        c: &mut DTensor,
        alpha: f32,
        beta: f32,
    ) -> DResult<()>;

    /// `c = act(a @ b + bias)` for row-major `a` and `b` (`bias` one value per column, or
    /// none): a layer's product, bias and activation, fused where the device can (the CPU
    /// adds the bias and applies ReLU as it stores each tile of the product, so the largest
    /// tensor of a convolution is written once instead of three times). The default runs
    /// [`Device::gemm`] and [`Device::bias_activate`] one after the other.
    fn gemm_bias_act(
        &self,
        a: &DTensor,
        b: &DTensor,
        c: &mut DTensor,
        bias: Option<&DTensor>,
        act: Activation,
    ) -> DResult<()> {
        gemm_then_bias_act(self, a, b, c, bias, act)
    }

    /// `x[r, :] += bias` for every row.
    fn add_bias(&self, x: &mut DTensor, bias: &DTensor) -> DResult<()>;
    /// `out[j] = beta * out[j] + sum_r x[r, j]` (the bias gradient).
    fn sum_rows(&self, x: &DTensor, out: &mut DTensor, beta: f32) -> DResult<()>;

    fn activate(&self, act: Activation, x: &DTensor, y: &mut DTensor) -> DResult<()>;
    /// `x[r, :] = act(x[r, :] + bias)` in place for every row (no bias when `None`): a
    /// layer's bias and activation in one pass over its output.
    /// The default goes through the host; devices override it.
    fn bias_activate(
        &self,
        act: Activation,
        x: &mut DTensor,
        bias: Option<&DTensor>,
    ) -> DResult<()> {
        let mut h = host_copy(self, x)?;
        let b = bias.map(|b| host_copy(self, b)).transpose()?;
        cpu::CpuDevice::with_threads(0, 1).bias_activate(act, &mut h, b.as_ref())?;
        self.write(cpu::host(&h)?, x)
    }
    /// `dx = dy * act'(x)`; `y = act(x)` is passed too since some derivatives use it.
    fn activate_grad(
        &self,
        act: Activation,
        x: &DTensor,
        y: &DTensor,
        dy: &DTensor,
        dx: &mut DTensor,
    ) -> DResult<()>;

    /// Row-wise softmax (or log-softmax) over the last axis.
    fn softmax_rows(&self, x: &DTensor, y: &mut DTensor, log: bool) -> DResult<()>;
    /// Backward of `softmax_rows` given its output `y`.
    fn softmax_rows_grad(
        &self,
        y: &DTensor,
        dy: &DTensor,
        dx: &mut DTensor,
        log: bool,
    ) -> DResult<()>;

    /// Per-example loss (`per_example[r]`) and its gradient with respect to `pred`, each
    /// example's gradient multiplied by `grad_scale` (the training loop passes 1/global batch).
    fn loss(
        &self,
        kind: LossKind,
        pred: &DTensor,
        target: &DTensor,
        per_example: &mut DTensor,
        grad: &mut DTensor,
        grad_scale: f32,
    ) -> DResult<()>;

    /// `y = alpha * x + beta * y`.
    fn axpby(&self, alpha: f32, x: &DTensor, beta: f32, y: &mut DTensor) -> DResult<()>;
    /// `out = a * b` element-wise.
    fn mul(&self, a: &DTensor, b: &DTensor, out: &mut DTensor) -> DResult<()>;
    /// Sum of all elements, read back to the host.
    fn sum(&self, x: &DTensor) -> DResult<f64>;

    /// A dropout mask: `0` with probability `rate`, else `1 / (1 - rate)`, from a
    /// counter-based generator so that the same `seed` gives the same mask on every device.
    fn dropout_mask(&self, seed: u64, rate: f32, mask: &mut DTensor) -> DResult<()>;

    /// Unfolds NHWC input into rows of patches: `cols` is `[batch*out_h*out_w,
    /// kernel_h*kernel_w*channels]`.
    fn im2col(&self, x: &DTensor, w: &Window, cols: &mut DTensor) -> DResult<()>;
    /// The adjoint of `im2col`: accumulates patch gradients back into `dx` (overwritten).
    fn col2im(&self, cols: &DTensor, w: &Window, dx: &mut DTensor) -> DResult<()>;
    /// 2-D convolution `z = conv(x, kernel)` over NHWC `x`, with `kernel` viewed as a
    /// `(kernel_h * kernel_w * channels, filters)` matrix and `z` as `(batch * out_h * out_w,
    /// filters)`. `cols` is scratch of im2col's shape that the device may fill with the
    /// unfolded input; the backward passes must get it unchanged. The default is im2col and
    /// one GEMM; a device may convolve directly where that is faster.
    fn conv2d(
        &self,
        x: &DTensor,
        w: &Window,
        kernel: &DTensor,
        cols: &mut DTensor,
        z: &mut DTensor,
    ) -> DResult<()> {
        self.im2col(x, w, cols)?;
        self.gemm(cols, false, kernel, false, z, 1.0, 0.0)
    }
    /// `z = act(conv(x, kernel) + bias)`: a convolution layer's product, bias and activation,
    /// with the same `cols` contract as [`Device::conv2d`] (the backward passes get the
    /// unfolded input). The default is im2col and [`Device::gemm_bias_act`]; the CPU unfolds
    /// and multiplies a few images at a time, so that the columns are read back from its
    /// cache rather than from memory.
    #[allow(clippy::too_many_arguments)]
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
        self.im2col(x, w, cols)?;
        self.gemm_bias_act(cols, kernel, z, bias, act)
    }
    /// The kernel gradient of [`Device::conv2d`] (overwrites `dkernel`), given the forward
    /// input `x` and the `cols` the forward pass left.
    fn conv2d_filter_grad(
        &self,
        x: &DTensor,
        w: &Window,
        cols: &DTensor,
        dz: &DTensor,
        dkernel: &mut DTensor,
    ) -> DResult<()> {
        let _ = (x, w);
        self.gemm(cols, true, dz, false, dkernel, 1.0, 0.0)
    }
    /// The input gradient of [`Device::conv2d`] (overwrites `dx`), through the scratch
    /// `dcols` of im2col's shape.
    fn conv2d_input_grad(
        &self,
        dz: &DTensor,
        kernel: &DTensor,
        w: &Window,
        dcols: &mut DTensor,
        dx: &mut DTensor,
    ) -> DResult<()> {
        self.gemm(dz, false, kernel, true, dcols, 1.0, 0.0)?;
        self.col2im(dcols, w, dx)
    }
    /// Max pooling; padded positions never win and the first of equal values does.
    /// `argmax` records, per output element, the flat input index it came from; pass an
    /// empty tensor when nothing needs it ([`Device::maxpool_backward`] does not).
    fn maxpool(
        &self,
        x: &DTensor,
        w: &Window,
        y: &mut DTensor,
        argmax: &mut DTensor,
    ) -> DResult<()>;
    fn maxpool_grad(&self, dy: &DTensor, argmax: &DTensor, dx: &mut DTensor) -> DResult<()>;
    /// The backward pass of max pooling from the forward input, as TensorFlow's
    /// `MaxPoolGrad`: each output's gradient goes to the input [`Device::maxpool`] picked
    /// (`dx` is overwritten). Deterministic also where windows overlap. With `relu`, `x` is
    /// the output of a ReLU under the pooling and `dx` also gets that ReLU's gradient: zero
    /// wherever `x` is not positive, the bits [`Device::activate_grad`] would give
    /// afterwards, in the same pass. The default goes through the host; devices override it.
    fn maxpool_backward(
        &self,
        x: &DTensor,
        w: &Window,
        dy: &DTensor,
        dx: &mut DTensor,
        relu: bool,
    ) -> DResult<()> {
        let (hx, hdy) = (host_copy(self, x)?, host_copy(self, dy)?);
        let mut hdx = host_copy(self, dx)?;
        cpu::CpuDevice::with_threads(0, 1).maxpool_backward(&hx, w, &hdy, &mut hdx, relu)?;
        self.write(cpu::host(&hdx)?, dx)
    }
    /// Average pooling over the window's positions inside the input (padding is not
    /// counted, as in TensorFlow). The default goes through the host.
    fn avgpool(&self, x: &DTensor, w: &Window, y: &mut DTensor) -> DResult<()> {
        let hx = host_copy(self, x)?;
        let mut hy = host_copy(self, y)?;
        cpu::CpuDevice::with_threads(0, 1).avgpool(&hx, w, &mut hy)?;
        self.write(cpu::host(&hy)?, y)
    }
    /// The backward pass of [`Device::avgpool`] (`dx` is overwritten). The default goes
    /// through the host.
    fn avgpool_backward(&self, w: &Window, dy: &DTensor, dx: &mut DTensor) -> DResult<()> {
        let hdy = host_copy(self, dy)?;
        let mut hdx = host_copy(self, dx)?;
        cpu::CpuDevice::with_threads(0, 1).avgpool_backward(w, &hdy, &mut hdx)?;
        self.write(cpu::host(&hdx)?, dx)
    }

    /// Applies one optimizer update to `param` in place; `slots` holds `opt.slots()` tensors.
    fn optimizer_step(
        &self,
        opt: &OptStep,
        param: &mut DTensor,
        grad: &DTensor,
        slots: &mut [DTensor],
    ) -> DResult<()>;
}
