//! Activations and softmax. float32 values and their gradients are computed by the
//! device's `activate`/`activate_grad` and `softmax_rows`/`softmax_rows_grad`, the kernels
//! the compiled Keras layers use, so a hand-written training loop does `fit`'s arithmetic;
//! float64 runs the same formulas (`device::formulas`) on the host. A gradient is an op of its own
//! (`ReluGrad`, `SoftmaxGrad`, ... as in TF), whose gradient is written in ops, so second
//! derivatives work through every activation.

use super::device_io::{download, upload};
use super::eager::Eager;
use super::elementwise::{
    add, binary, cast, mul, neg, square, sub, unary, zeros_like, Binary, Unary,
};
use super::error::{OpError, OpResult, FLOAT, FLOAT_COMPLEX};
use super::op::{first, inputs, node_inputs, Op};
use super::reduce::reduce_sum;
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::formulas::{self as f, GELU_A, GELU_C, INV_SQRT_2PI};
use crate::device::{Activation as DevAct, Device};
use crate::tensor::{DType, NdArray};

/// Element-wise activations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Activation {
    Relu,
    Sigmoid,
    Tanh,
    Softplus,
    Elu,
    Selu,
    /// `approximate` selects the tanh form (`tf.nn.gelu(x, approximate=True)`).
    Gelu {
        approximate: bool,
    },
    /// `x * sigmoid(x)` (`tf.nn.silu`, Keras's `swish`).
    Swish,
    LeakyRelu {
        alpha: f32,
    },
}

impl Activation {
    pub fn name(self) -> &'static str {
        match self {
            Activation::Relu => "Relu",
            Activation::Sigmoid => "Sigmoid",
            Activation::Tanh => "Tanh",
            Activation::Softplus => "Softplus",
            Activation::Elu => "Elu",
            Activation::Selu => "Selu",
            Activation::Gelu { .. } => "Gelu",
            Activation::Swish => "Swish",
            Activation::LeakyRelu { .. } => "LeakyRelu",
        }
    }

    pub fn grad_name(self) -> &'static str {
        match self {
            Activation::Relu => "ReluGrad",
            Activation::Sigmoid => "SigmoidGrad",
            Activation::Tanh => "TanhGrad",
            Activation::Softplus => "SoftplusGrad",
            Activation::Elu => "EluGrad",
            Activation::Selu => "SeluGrad",
            Activation::Gelu { .. } => "GeluGrad",
            Activation::Swish => "SwishGrad",
            Activation::LeakyRelu { .. } => "LeakyReluGrad",
        }
    }

    /// The op for a device activation (what a compiled Keras layer applies); `None` for
    /// the identity, which needs no op.
    pub fn from_device(a: DevAct) -> Option<Activation> {
        Some(match a {
            DevAct::Linear => return None,
            DevAct::Relu => Activation::Relu,
            DevAct::Sigmoid => Activation::Sigmoid,
            DevAct::Tanh => Activation::Tanh,
            DevAct::Softplus => Activation::Softplus,
            DevAct::Elu => Activation::Elu,
            DevAct::Selu => Activation::Selu,
            DevAct::Gelu => Activation::Gelu { approximate: false },
            DevAct::Swish => Activation::Swish,
            DevAct::LeakyRelu(alpha) => Activation::LeakyRelu { alpha },
        })
    }

    /// The device's kernel for this activation, where it has one.
    fn device(self) -> Option<DevAct> {
        Some(match self {
            Activation::Relu => DevAct::Relu,
            Activation::Sigmoid => DevAct::Sigmoid,
            Activation::Tanh => DevAct::Tanh,
            Activation::Softplus => DevAct::Softplus,
            Activation::Elu => DevAct::Elu,
            Activation::Selu => DevAct::Selu,
            Activation::Gelu { approximate: false } => DevAct::Gelu,
            Activation::Gelu { approximate: true } => return None,
            Activation::Swish => DevAct::Swish,
            Activation::LeakyRelu { alpha } => DevAct::LeakyRelu(alpha),
        })
    }

    fn value(self, x: f64) -> f64 {
        match self {
            Activation::Relu => f::relu(x),
            Activation::Sigmoid => f::sigmoid(x),
            Activation::Tanh => x.tanh(),
            Activation::Softplus => f::softplus(x),
            Activation::Elu => f::elu(x),
            Activation::Selu => f::selu(x),
            Activation::Gelu { approximate: false } => f::gelu(x),
            Activation::Gelu { approximate: true } => f::gelu_tanh(x),
            Activation::Swish => f::swish(x),
            Activation::LeakyRelu { alpha } => f::leaky_relu(x, f64::from(alpha)),
        }
    }

    /// `act'(x)`, given `y = act(x)` where the formula uses it.
    fn deriv(self, x: f64, y: f64) -> f64 {
        match self {
            Activation::Relu => f::relu_deriv(x),
            Activation::Sigmoid => f::sigmoid_deriv(y),
            Activation::Tanh => f::tanh_deriv(y),
            Activation::Softplus => f::sigmoid(x),
            Activation::Elu => f::elu_deriv(x, y),
            Activation::Selu => f::selu_deriv(x, y),
            Activation::Gelu { approximate: false } => f::gelu_deriv(x),
            Activation::Gelu { approximate: true } => f::gelu_tanh_deriv(x),
            Activation::Swish => f::swish_deriv(x),
            Activation::LeakyRelu { alpha } => f::leaky_relu_deriv(x, f64::from(alpha)),
        }
    }

    fn check(self, op: &str, dt: DType) -> OpResult<()> {
        let ok = match self {
            // TF's Relu also takes integers.
            Activation::Relu => dt != DType::Bool,
            _ => dt.is_float(),
        };
        if ok {
            return Ok(());
        }
        let allowed = match self {
            Activation::Sigmoid | Activation::Tanh => FLOAT_COMPLEX,
            _ => FLOAT,
        };
        let sig = if op.ends_with("Grad") {
            "gradients:T, features:T -> backprops:T"
        } else {
            "features:T -> activations:T"
        };
        Err(OpError::attr_dtype(op, sig, dt, allowed))
    }

    pub(crate) fn forward(self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let [x] = inputs::<1>(self.name(), given)?;
        self.check(self.name(), x.dtype())?;
        if let (DType::F32, Some(act)) = (x.dtype(), self.device()) {
            let shape = x.shape();
            let xt = upload(dev, x, shape)?;
            let mut yt = dev.zeros(shape)?;
            dev.activate(act, &xt, &mut yt)?;
            return Ok(vec![download(dev, yt, self.name())?]);
        }
        if x.dtype().is_int() {
            let out = x.to_i64_array().mapv(|v| v.max(0));
            return Ok(vec![
                NdArray::new(crate::tensor::Data::I64(out)).astype(x.dtype())
            ]);
        }
        let out = x.to_f64_array().mapv(|v| self.value(v));
        Ok(vec![
            NdArray::new(crate::tensor::Data::F64(out)).astype(x.dtype())
        ])
    }

    pub(crate) fn vjp(
        self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let [x] = node_inputs::<1>(node)?;
        let (y, dy) = first(node, grads)?;
        if !x.is_float() {
            return Ok(vec![None]);
        }
        let g = e.execute1(
            Op::ActivationGrad(self),
            &[x.clone(), y.clone(), dy.clone()],
        )?;
        Ok(vec![Some(g)])
    }

    /// `dy * act'(x)` from inputs `[x, y, dy]`.
    pub(crate) fn grad_forward(
        self,
        dev: &dyn Device,
        given: &[&NdArray],
    ) -> OpResult<Vec<NdArray>> {
        let op = self.grad_name();
        let [x, y, dy] = inputs::<3>(op, given)?;
        self.check(op, x.dtype())?;
        for (i, t) in [y, dy].iter().enumerate() {
            if t.dtype() != x.dtype() {
                return Err(OpError::input_dtype(op, i + 1, x.dtype(), t.dtype()));
            }
            if t.shape() != x.shape() {
                return Err(OpError::kernel(
                    op,
                    &dev.name(),
                    &format!(
                        "gradients and features must have the same shape: {} vs. {}",
                        super::error::dims(t.shape()),
                        super::error::dims(x.shape())
                    ),
                ));
            }
        }
        if let (DType::F32, Some(act)) = (x.dtype(), self.device()) {
            let shape = x.shape();
            let xt = upload(dev, x, shape)?;
            let yt = upload(dev, y, shape)?;
            let gt = upload(dev, dy, shape)?;
            let mut dx = dev.zeros(shape)?;
            dev.activate_grad(act, &xt, &yt, &gt, &mut dx)?;
            return Ok(vec![download(dev, dx, op)?]);
        }
        let (xs, ys, gs) = (x.to_f64_array(), y.to_f64_array(), dy.to_f64_array());
        let out: Vec<f64> = xs
            .iter()
            .zip(ys.iter())
            .zip(gs.iter())
            .map(|((&a, &b), &g)| g * self.deriv(a, b))
            .collect();
        let out = NdArray::from_f64(x.shape(), out)
            .map_err(|e| OpError::from_tensor(op, &dev.name(), e))?;
        Ok(vec![out.astype(x.dtype())])
    }

    /// The gradient of `ActivationGrad(x, y, dy)`: linear in `dy`, and through the
    /// derivative's own dependence on `x` or `y` (written in ops, so it can be
    /// differentiated again).
    pub(crate) fn grad_vjp(
        self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let [x, y, dy] = node_inputs::<3>(node)?;
        let (_, g) = first(node, grads)?;
        let dt = x.dtype();
        let c = |v: f64| Tensor::scalar(v, dt);
        let g_dy = e.execute1(Op::ActivationGrad(self), &[x.clone(), y.clone(), g.clone()])?;
        let gd = mul(e, g, dy)?;
        let (gx, gy) = match self {
            Activation::Relu | Activation::LeakyRelu { .. } => (None, None),
            Activation::Sigmoid => {
                // d/dy [y (1 - y)] = 1 - 2y.
                let two_y = mul(e, &c(2.0), y)?;
                let t = sub(e, &c(1.0), &two_y)?;
                (None, Some(mul(e, &gd, &t)?))
            }
            Activation::Tanh => {
                let t = mul(e, &c(-2.0), y)?;
                (None, Some(mul(e, &gd, &t)?))
            }
            Activation::Elu | Activation::Selu => {
                // The derivative is y + const where x <= 0.
                let zero = zeros_like(e, x)?;
                let m = binary(e, Binary::LessEqual, x, &zero)?;
                let m = cast(e, &m, dt)?;
                (None, Some(mul(e, &gd, &m)?))
            }
            Activation::Softplus => {
                let s = e.execute1(Op::Activation(Activation::Sigmoid), std::slice::from_ref(x))?;
                let one_m = sub(e, &c(1.0), &s)?;
                let t = mul(e, &s, &one_m)?;
                (Some(mul(e, &gd, &t)?), None)
            }
            Activation::Swish => {
                // s (1 - s) (2 + x (1 - 2 s)).
                let s = e.execute1(Op::Activation(Activation::Sigmoid), std::slice::from_ref(x))?;
                let one_m = sub(e, &c(1.0), &s)?;
                let ss = mul(e, &s, &one_m)?;
                let two_s = mul(e, &c(2.0), &s)?;
                let inner = sub(e, &c(1.0), &two_s)?;
                let xi = mul(e, x, &inner)?;
                let k = add(e, &c(2.0), &xi)?;
                let t = mul(e, &ss, &k)?;
                (Some(mul(e, &gd, &t)?), None)
            }
            Activation::Gelu { approximate: false } => {
                // pdf(x) (2 - x^2).
                let x2 = square(e, x)?;
                let h = mul(e, &c(-0.5), &x2)?;
                let ex = unary(e, Unary::Exp, &h)?;
                let pdf = mul(e, &c(INV_SQRT_2PI), &ex)?;
                let k = sub(e, &c(2.0), &x2)?;
                let t = mul(e, &pdf, &k)?;
                (Some(mul(e, &gd, &t)?), None)
            }
            Activation::Gelu { approximate: true } => {
                // (1 - t^2) [u' + x/2 (u'' - 2 t u'^2)] with u = c (x + a x^3).
                let x2 = square(e, x)?;
                let x3 = mul(e, &x2, x)?;
                let ax3 = mul(e, &c(GELU_A), &x3)?;
                let inner = add(e, x, &ax3)?;
                let u = mul(e, &c(GELU_C), &inner)?;
                let t = e.execute1(Op::Activation(Activation::Tanh), &[u])?;
                let t2 = square(e, &t)?;
                let sech2 = sub(e, &c(1.0), &t2)?;
                let k = mul(e, &c(3.0 * GELU_A), &x2)?;
                let k = add(e, &c(1.0), &k)?;
                let du = mul(e, &c(GELU_C), &k)?;
                let ddu = mul(e, &c(6.0 * GELU_A * GELU_C), x)?;
                let du2 = square(e, &du)?;
                let tdu2 = mul(e, &t, &du2)?;
                let tdu2 = mul(e, &c(2.0), &tdu2)?;
                let diff = sub(e, &ddu, &tdu2)?;
                let half_x = mul(e, &c(0.5), x)?;
                let hx = mul(e, &half_x, &diff)?;
                let br = add(e, &du, &hx)?;
                let d2 = mul(e, &sech2, &br)?;
                (Some(mul(e, &gd, &d2)?), None)
            }
        };
        Ok(vec![gx, gy, Some(g_dy)])
    }
}

/// Softmax (or log-softmax) along one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Softmax {
    pub axis: i64,
    pub log: bool,
}

/// Moves axis `k` of a rank-`n` array last (and back: the permutation is its own inverse
/// only for a swap, which is what this is).
fn swap_to_last(k: usize, n: usize) -> Vec<i64> {
    let mut p: Vec<i64> = (0..n as i64).collect();
    p.swap(k, n - 1);
    p
}

impl Softmax {
    pub fn name(self) -> &'static str {
        if self.log {
            "LogSoftmax"
        } else {
            "Softmax"
        }
    }

    pub fn grad_name(self) -> &'static str {
        if self.log {
            "LogSoftmaxGrad"
        } else {
            "SoftmaxGrad"
        }
    }

    fn resolve(self, op: &str, dev: &str, x: &NdArray) -> OpResult<usize> {
        let n = x.ndim();
        if n == 0 {
            return Err(OpError::kernel(
                op,
                dev,
                "logits must have >= 1 dimension, got shape []",
            ));
        }
        let k = if self.axis < 0 {
            self.axis + n as i64
        } else {
            self.axis
        };
        if k < 0 || k >= n as i64 {
            return Err(OpError::new(
                super::error::ErrorClass::InvalidArgument,
                format!(
                    "`axis` must be in the range [{}, {}) where {} is the number of dimensions in the input. Received: axis={}",
                    -(n as i64),
                    n,
                    n,
                    self.axis
                ),
            ));
        }
        Ok(k as usize)
    }

    /// Runs `rows` (a function of arrays whose last axis is the softmax axis) with the
    /// axis moved last and back.
    fn along(
        op: &str,
        dev: &str,
        k: usize,
        arrays: &[&NdArray],
        rows: impl Fn(&[NdArray]) -> OpResult<NdArray>,
    ) -> OpResult<NdArray> {
        let n = arrays.first().map_or(0, |a| a.ndim());
        if k + 1 == n {
            let owned: Vec<NdArray> = arrays.iter().map(|&a| a.clone()).collect();
            return rows(&owned);
        }
        let p = swap_to_last(k, n);
        let moved: Vec<NdArray> = arrays
            .iter()
            .map(|a| a.transpose(Some(&p)))
            .collect::<Result<_, _>>()
            .map_err(|e| OpError::from_tensor(op, dev, e))?;
        rows(&moved)?
            .transpose(Some(&p))
            .map_err(|e| OpError::from_tensor(op, dev, e))
    }

    pub(crate) fn forward(self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let op = self.name();
        let [x] = inputs::<1>(op, given)?;
        let dn = dev.name();
        if !x.dtype().is_float() {
            let sig = if self.log {
                "logits:T -> logsoftmax:T"
            } else {
                "logits:T -> softmax:T"
            };
            return Err(OpError::attr_dtype(op, sig, x.dtype(), FLOAT));
        }
        let k = self.resolve(op, &dn, x)?;
        let out = Softmax::along(op, &dn, k, &[x], |a| {
            let x = &a[0];
            if x.dtype() == DType::F32 {
                let xt = upload(dev, x, x.shape())?;
                let mut yt = dev.zeros(x.shape())?;
                dev.softmax_rows(&xt, &mut yt, self.log)?;
                return download(dev, yt, op);
            }
            let (shape, v) = x.to_f64_vec();
            let cols = shape.last().copied().unwrap_or(1);
            let mut out = vec![0.0; v.len()];
            if cols > 0 {
                for (xr, yr) in v.chunks_exact(cols).zip(out.chunks_exact_mut(cols)) {
                    let max = xr.iter().fold(f64::NEG_INFINITY, |m, &q| m.max(q));
                    let sum: f64 = xr.iter().map(|q| (q - max).exp()).sum();
                    for (y, q) in yr.iter_mut().zip(xr) {
                        *y = if self.log {
                            q - max - sum.ln()
                        } else {
                            (q - max).exp() / sum
                        };
                    }
                }
            }
            NdArray::from_f64(&shape, out)
                .map(|r| r.astype(x.dtype()))
                .map_err(|e| OpError::from_tensor(op, &dn, e))
        })?;
        Ok(vec![out])
    }

    pub(crate) fn vjp(
        self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let (y, dy) = first(node, grads)?;
        let g = e.execute1(Op::SoftmaxGrad(self), &[y.clone(), dy.clone()])?;
        Ok(vec![Some(g)])
    }

    /// From `[y, dy]`: `y * (dy - sum(dy * y))`, or `dy - exp(y) * sum(dy)` for log-softmax.
    pub(crate) fn grad_forward(
        self,
        dev: &dyn Device,
        given: &[&NdArray],
    ) -> OpResult<Vec<NdArray>> {
        let op = self.grad_name();
        let [y, dy] = inputs::<2>(op, given)?;
        let dn = dev.name();
        if y.dtype() != dy.dtype() {
            return Err(OpError::input_dtype(op, 1, y.dtype(), dy.dtype()));
        }
        if y.shape() != dy.shape() {
            return Err(OpError::kernel(
                op,
                &dn,
                "gradient and output shapes differ",
            ));
        }
        let k = self.resolve(op, &dn, y)?;
        let out = Softmax::along(op, &dn, k, &[y, dy], |a| {
            let (y, dy) = (&a[0], &a[1]);
            if y.dtype() == DType::F32 {
                let yt = upload(dev, y, y.shape())?;
                let gt = upload(dev, dy, y.shape())?;
                let mut dx = dev.zeros(y.shape())?;
                dev.softmax_rows_grad(&yt, &gt, &mut dx, self.log)?;
                return download(dev, dx, op);
            }
            let (shape, yv) = y.to_f64_vec();
            let (_, gv) = dy.to_f64_vec();
            let cols = shape.last().copied().unwrap_or(1);
            let mut out = vec![0.0; yv.len()];
            if cols > 0 {
                let rows = yv.chunks_exact(cols).zip(gv.chunks_exact(cols));
                for ((yr, gr), dr) in rows.zip(out.chunks_exact_mut(cols)) {
                    if self.log {
                        let s: f64 = gr.iter().sum();
                        for i in 0..cols {
                            dr[i] = gr[i] - yr[i].exp() * s;
                        }
                    } else {
                        let dot: f64 = yr.iter().zip(gr).map(|(p, q)| p * q).sum();
                        for i in 0..cols {
                            dr[i] = yr[i] * (gr[i] - dot);
                        }
                    }
                }
            }
            NdArray::from_f64(&shape, out)
                .map(|r| r.astype(y.dtype()))
                .map_err(|e| OpError::from_tensor(op, &dn, e))
        })?;
        Ok(vec![out])
    }

    /// The gradient of `SoftmaxGrad(y, dy)` with respect to both inputs, in ops.
    pub(crate) fn grad_vjp(
        self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let [y, dy] = node_inputs::<2>(node)?;
        let (_, g) = first(node, grads)?;
        let k = self.axis;
        if self.log {
            // dx = dy - exp(y) S with S = sum(dy).
            let ey = unary(e, Unary::Exp, y)?;
            let gey = mul(e, g, &ey)?;
            let sg = reduce_sum(e, &gey, Some(vec![k]), true)?;
            let g_dy = sub(e, g, &sg)?;
            let s = reduce_sum(e, dy, Some(vec![k]), true)?;
            let t = mul(e, &gey, &s)?;
            Ok(vec![Some(neg(e, &t)?), Some(g_dy)])
        } else {
            // dx = y (dy - s) with s = sum(dy y).
            let g_dy = e.execute1(Op::SoftmaxGrad(self), &[y.clone(), g.clone()])?;
            let dyy = mul(e, dy, y)?;
            let s = reduce_sum(e, &dyy, Some(vec![k]), true)?;
            let d = sub(e, dy, &s)?;
            let t1 = mul(e, g, &d)?;
            let gy = mul(e, g, y)?;
            let sg = reduce_sum(e, &gy, Some(vec![k]), true)?;
            let t2 = mul(e, dy, &sg)?;
            Ok(vec![Some(sub(e, &t1, &t2)?), Some(g_dy)])
        }
    }
}

/// `tf.nn.<activation>(x)`.
pub fn activate(e: &mut Eager, act: Activation, x: &Tensor) -> OpResult<Tensor> {
    e.execute1(Op::Activation(act), std::slice::from_ref(x))
}

/// `tf.nn.softmax(x, axis)` or `tf.nn.log_softmax(x, axis)`.
pub fn softmax(e: &mut Eager, x: &Tensor, axis: i64, log: bool) -> OpResult<Tensor> {
    e.execute1(Op::Softmax(Softmax { axis, log }), std::slice::from_ref(x))
}
