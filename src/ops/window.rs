//! Windowed ops over NHWC images: `Conv2D` (with its two backprop ops, as TF has them),
//! max pooling (`MaxPool`, `MaxPoolGrad`, `MaxPoolGradGrad`) and average pooling
//! (`AvgPool`, `AvgPoolGrad`), with TF's `SAME`/`VALID` geometry. float32 convolutions and
//! max pooling run on the device's `im2col`/`col2im`, GEMM and `maxpool` kernels, the
//! ones the compiled Conv2D and MaxPooling2D layers use; float64 and average pooling run
//! as direct loops on the host. Each gradient op's own gradient is another op of this
//! file, so second derivatives work through a CNN.

use super::device_io::{download_as, upload};
use super::eager::Eager;
use super::error::{dims, ErrorClass, OpError, OpResult, FLOAT};
use super::op::{first, inputs, node_inputs, Op};
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::{Device, Window};
use crate::tensor::{DType, NdArray};

/// TF's padding schemes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    Valid,
    Same,
}

impl Padding {
    /// `'SAME'`/`'VALID'` in any case, as TF accepts them.
    pub fn parse(s: &str) -> Option<Padding> {
        match s.to_ascii_uppercase().as_str() {
            "VALID" => Some(Padding::Valid),
            "SAME" => Some(Padding::Same),
            _ => None,
        }
    }

    /// Output size and padding before, as TensorFlow computes them; `Err` holds the
    /// negative size `VALID` would give.
    fn out_and_pad(self, size: usize, k: usize, stride: usize) -> Result<(usize, usize), i64> {
        let stride = stride.max(1);
        match self {
            Padding::Valid if size < k => {
                Err((size as i64 - k as i64 + stride as i64) / stride as i64)
            }
            Padding::Valid => Ok(((size - k) / stride + 1, 0)),
            Padding::Same => {
                let out = size.div_ceil(stride);
                let total = (out.saturating_sub(1) * stride + k).saturating_sub(size);
                Ok((out, total / 2))
            }
        }
    }
}

/// A convolution's strides and padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv {
    pub strides: (usize, usize),
    pub padding: Padding,
}

/// A pooling window, its strides and padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    pub ksize: (usize, usize),
    pub strides: (usize, usize),
    pub padding: Padding,
}

/// The windowed ops.
#[derive(Debug, Clone, PartialEq)]
pub enum WindowOp {
    /// Inputs `[x, filter]`; filter is `[kh, kw, in, out]`.
    Conv2D(Conv),
    /// Inputs `[filter, dy]`: the gradient with respect to an input of `input_shape`.
    Conv2DBackpropInput {
        conv: Conv,
        input_shape: Vec<usize>,
    },
    /// Inputs `[x, dy]`: the gradient with respect to a filter of `filter_shape`.
    Conv2DBackpropFilter {
        conv: Conv,
        filter_shape: Vec<usize>,
    },
    MaxPool(Pool),
    /// Inputs `[x, y, dy]`.
    MaxPoolGrad(Pool),
    /// Inputs `[x, y, g]`: `g` (shaped like `x`) read at each window's maximum.
    MaxPoolGradGrad(Pool),
    AvgPool(Pool),
    /// Input `[dy]`: the gradient with respect to an input of `input_shape`.
    AvgPoolGrad {
        pool: Pool,
        input_shape: Vec<usize>,
    },
}

fn nhwc(op: &str, dev: &str, what: &str, shape: &[usize]) -> OpResult<[usize; 4]> {
    <[usize; 4]>::try_from(shape).map_err(|_| {
        OpError::kernel(
            op,
            dev,
            &format!("{what} must be 4-dimensional{}", dims(shape)),
        )
    })
}

/// The window geometry of `op` over an NHWC input, with TF's error for an empty output.
fn geometry(
    op: &str,
    dev: &str,
    input: [usize; 4],
    k: (usize, usize),
    s: (usize, usize),
    p: Padding,
) -> OpResult<Window> {
    let [n, h, w, c] = input;
    if s.0 == 0 || s.1 == 0 || k.0 == 0 || k.1 == 0 {
        return Err(OpError::kernel(
            op,
            dev,
            "Sliding window ksize and strides must be positive.",
        ));
    }
    let neg = |size: usize, k: usize, stride: usize, out: i64| {
        OpError::kernel(
            op,
            dev,
            &format!(
                "Computed output size would be negative: {out} [input_size: {size}, \
                 effective_filter_size: {k}, stride: {stride}]"
            ),
        )
    };
    let (out_h, pad_top) = p
        .out_and_pad(h, k.0, s.0)
        .map_err(|o| neg(h, k.0, s.0, o))?;
    let (out_w, pad_left) = p
        .out_and_pad(w, k.1, s.1)
        .map_err(|o| neg(w, k.1, s.1, o))?;
    Ok(Window {
        batch: n,
        height: h,
        width: w,
        channels: c,
        kernel_h: k.0,
        kernel_w: k.1,
        stride_h: s.0,
        stride_w: s.1,
        pad_top,
        pad_left,
        out_h,
        out_w,
    })
}

/// Calls `f(out_pos, taps)` for every output position `(n, oy, ox)` in row-major order,
/// with the input pixels `(n, iy, ix)` its window covers (padding skipped), each with its
/// kernel position `ky * kernel_w + kx`.
fn for_each_window(w: &Window, mut f: impl FnMut(usize, &[(usize, usize)])) {
    let mut taps = Vec::with_capacity(w.kernel_h * w.kernel_w);
    let src = |o: usize, k: usize, stride: usize, pad: usize, size: usize| {
        (o * stride + k).checked_sub(pad).filter(|v| *v < size)
    };
    for n in 0..w.batch {
        for oy in 0..w.out_h {
            for ox in 0..w.out_w {
                taps.clear();
                for ky in 0..w.kernel_h {
                    let Some(iy) = src(oy, ky, w.stride_h, w.pad_top, w.height) else {
                        continue;
                    };
                    for kx in 0..w.kernel_w {
                        if let Some(ix) = src(ox, kx, w.stride_w, w.pad_left, w.width) {
                            taps.push(((n * w.height + iy) * w.width + ix, ky * w.kernel_w + kx));
                        }
                    }
                }
                f((n * w.out_h + oy) * w.out_w + ox, &taps);
            }
        }
    }
}

fn from_f64(op: &str, dev: &str, shape: &[usize], v: Vec<f64>, dt: DType) -> OpResult<NdArray> {
    NdArray::from_f64(shape, v)
        .map(|a| a.astype(dt))
        .map_err(|e| OpError::from_tensor(op, dev, e))
}

fn check_float(op: &str, sig: &str, xs: &[&NdArray]) -> OpResult<DType> {
    let dt = xs.first().map_or(DType::F32, |x| x.dtype());
    if !dt.is_float() {
        return Err(OpError::attr_dtype(op, sig, dt, FLOAT));
    }
    for (i, x) in xs.iter().enumerate().skip(1) {
        if x.dtype() != dt {
            return Err(OpError::input_dtype(op, i, dt, x.dtype()));
        }
    }
    Ok(dt)
}

/// The window of a convolution of `input` by `filter`, after TF's shape checks.
fn conv_window(
    op: &str,
    dev: &str,
    conv: Conv,
    input: &[usize],
    filter: &[usize],
) -> OpResult<(Window, usize)> {
    let x = nhwc(op, dev, "input", input)?;
    let [kh, kw, cin, cout] = nhwc(op, dev, "filter", filter)?;
    if cin == 0 || x[3] % cin != 0 {
        return Err(OpError::kernel(
            op,
            dev,
            &format!(
                "input depth must be evenly divisible by filter depth: {} vs {cin}",
                x[3]
            ),
        ));
    }
    if x[3] != cin {
        return Err(OpError::new(
            ErrorClass::Unimplemented,
            format!(
                "Grouped convolutions (input depth {} with filter depth {cin}) are not supported.",
                x[3]
            ),
        ));
    }
    let w = geometry(op, dev, x, (kh, kw), conv.strides, conv.padding)?;
    Ok((w, cout))
}

fn check_dy(op: &str, dev: &str, dy: &NdArray, want: &[usize]) -> OpResult<()> {
    if dy.shape() == want {
        return Ok(());
    }
    Err(OpError::kernel(
        op,
        dev,
        &format!(
            "Expected out_backprop of shape {}, got {}",
            dims(want),
            dims(dy.shape())
        ),
    ))
}

fn pool_window(op: &str, dev: &str, pool: Pool, input: &[usize]) -> OpResult<Window> {
    let x = nhwc(op, dev, "input", input)?;
    geometry(op, dev, x, pool.ksize, pool.strides, pool.padding)
}

impl WindowOp {
    pub fn name(&self) -> &'static str {
        match self {
            WindowOp::Conv2D(_) => "Conv2D",
            WindowOp::Conv2DBackpropInput { .. } => "Conv2DBackpropInput",
            WindowOp::Conv2DBackpropFilter { .. } => "Conv2DBackpropFilter",
            WindowOp::MaxPool(_) => "MaxPool",
            WindowOp::MaxPoolGrad(_) => "MaxPoolGrad",
            WindowOp::MaxPoolGradGrad(_) => "MaxPoolGradGrad",
            WindowOp::AvgPool(_) => "AvgPool",
            WindowOp::AvgPoolGrad { .. } => "AvgPoolGrad",
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let op = self.name();
        let dn = dev.name();
        Ok(vec![match self {
            WindowOp::Conv2D(conv) => {
                let [x, f] = inputs::<2>(op, given)?;
                let dt = check_float(op, "input:T, filter:T -> output:T", &[x, f])?;
                let (w, cout) = conv_window(op, &dn, *conv, x.shape(), f.shape())?;
                conv2d(dev, op, &w, cout, x, f, dt)?
            }
            WindowOp::Conv2DBackpropInput { conv, input_shape } => {
                let [f, dy] = inputs::<2>(op, given)?;
                let sig = "input_sizes:int32, filter:T, out_backprop:T -> output:T";
                let dt = check_float(op, sig, &[f, dy])?;
                let (w, cout) = conv_window(op, &dn, *conv, input_shape, f.shape())?;
                check_dy(op, &dn, dy, &[w.batch, w.out_h, w.out_w, cout])?;
                conv2d_input(dev, op, &w, cout, f, dy, dt)?
            }
            WindowOp::Conv2DBackpropFilter { conv, filter_shape } => {
                let [x, dy] = inputs::<2>(op, given)?;
                let sig = "input:T, filter_sizes:int32, out_backprop:T -> output:T";
                let dt = check_float(op, sig, &[x, dy])?;
                let (w, cout) = conv_window(op, &dn, *conv, x.shape(), filter_shape)?;
                check_dy(op, &dn, dy, &[w.batch, w.out_h, w.out_w, cout])?;
                conv2d_filter(dev, op, &w, cout, x, dy, dt)?
            }
            WindowOp::MaxPool(pool) => {
                let [x] = inputs::<1>(op, given)?;
                let dt = check_float(op, "input:T -> output:T", &[x])?;
                let w = pool_window(op, &dn, *pool, x.shape())?;
                max_pool(dev, op, &w, x, dt)?.0
            }
            WindowOp::MaxPoolGrad(pool) => {
                let [x, _y, dy] = inputs::<3>(op, given)?;
                let sig = "orig_input:T, orig_output:T, grad:T -> output:T";
                let dt = check_float(op, sig, &[x, dy])?;
                let w = pool_window(op, &dn, *pool, x.shape())?;
                check_dy(op, &dn, dy, &[w.batch, w.out_h, w.out_w, w.channels])?;
                let (_, argmax) = max_pool(dev, op, &w, x, dt)?;
                let (_, g) = dy.to_f64_vec();
                let mut dx = vec![0.0; x.size()];
                for (a, gv) in argmax.iter().zip(g) {
                    if let Some(slot) = a.and_then(|a| dx.get_mut(a)) {
                        *slot += gv;
                    }
                }
                from_f64(op, &dn, x.shape(), dx, dt)?
            }
            WindowOp::MaxPoolGradGrad(pool) => {
                let [x, _y, g] = inputs::<3>(op, given)?;
                let sig = "orig_input:T, orig_output:T, grad:T -> output:T";
                let dt = check_float(op, sig, &[x, g])?;
                let w = pool_window(op, &dn, *pool, x.shape())?;
                check_dy(op, &dn, g, x.shape())?;
                let (_, argmax) = max_pool(dev, op, &w, x, dt)?;
                let (_, gv) = g.to_f64_vec();
                let out: Vec<f64> = argmax
                    .iter()
                    .map(|a| a.and_then(|a| gv.get(a)).copied().unwrap_or(0.0))
                    .collect();
                from_f64(op, &dn, &[w.batch, w.out_h, w.out_w, w.channels], out, dt)?
            }
            WindowOp::AvgPool(pool) => {
                let [x] = inputs::<1>(op, given)?;
                let dt = check_float(op, "value:T -> output:T", &[x])?;
                let w = pool_window(op, &dn, *pool, x.shape())?;
                let (_, xv) = x.to_f64_vec();
                let c = w.channels;
                let mut out = vec![0.0; w.batch * w.out_h * w.out_w * c];
                for_each_window(&w, |o, taps| {
                    let n = taps.len().max(1) as f64;
                    for ch in 0..c {
                        let s: f64 = taps.iter().map(|&(p, _)| xv[p * c + ch]).sum();
                        out[o * c + ch] = s / n;
                    }
                });
                from_f64(op, &dn, &[w.batch, w.out_h, w.out_w, c], out, dt)?
            }
            WindowOp::AvgPoolGrad { pool, input_shape } => {
                let [dy] = inputs::<1>(op, given)?;
                let sig = "orig_input_shape:int32, grad:T -> output:T";
                let dt = check_float(op, sig, &[dy])?;
                let w = pool_window(op, &dn, *pool, input_shape)?;
                check_dy(op, &dn, dy, &[w.batch, w.out_h, w.out_w, w.channels])?;
                let (_, g) = dy.to_f64_vec();
                let c = w.channels;
                let mut dx = vec![0.0; input_shape.iter().product()];
                for_each_window(&w, |o, taps| {
                    let n = taps.len().max(1) as f64;
                    for &(p, _) in taps {
                        for ch in 0..c {
                            dx[p * c + ch] += g[o * c + ch] / n;
                        }
                    }
                });
                from_f64(op, &dn, input_shape, dx, dt)?
            }
        }])
    }

    pub(crate) fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        let (_, dy) = first(node, grads)?;
        let run = |e: &mut Eager, op: WindowOp, ins: &[Tensor]| e.execute1(Op::Window(op), ins);
        Ok(match self {
            WindowOp::Conv2D(conv) => {
                let [x, f] = node_inputs::<2>(node)?;
                let input = WindowOp::Conv2DBackpropInput {
                    conv: *conv,
                    input_shape: x.shape().to_vec(),
                };
                let filter = WindowOp::Conv2DBackpropFilter {
                    conv: *conv,
                    filter_shape: f.shape().to_vec(),
                };
                let dx = run(e, input, &[f.clone(), dy.clone()])?;
                let df = run(e, filter, &[x.clone(), dy.clone()])?;
                vec![Some(dx), Some(df)]
            }
            WindowOp::Conv2DBackpropInput { conv, .. } => {
                // dx = B_in(f, d) is bilinear: <g, B_in(f, d)> = <conv(g, f), d>.
                let [f, d] = node_inputs::<2>(node)?;
                let filter = WindowOp::Conv2DBackpropFilter {
                    conv: *conv,
                    filter_shape: f.shape().to_vec(),
                };
                let df = run(e, filter, &[dy.clone(), d.clone()])?;
                let dd = run(e, WindowOp::Conv2D(*conv), &[dy.clone(), f.clone()])?;
                vec![Some(df), Some(dd)]
            }
            WindowOp::Conv2DBackpropFilter { conv, .. } => {
                // df = B_f(x, d): <g, B_f(x, d)> = <conv(x, g), d>.
                let [x, d] = node_inputs::<2>(node)?;
                let input = WindowOp::Conv2DBackpropInput {
                    conv: *conv,
                    input_shape: x.shape().to_vec(),
                };
                let dx = run(e, input, &[dy.clone(), d.clone()])?;
                let dd = run(e, WindowOp::Conv2D(*conv), &[x.clone(), dy.clone()])?;
                vec![Some(dx), Some(dd)]
            }
            WindowOp::MaxPool(pool) => {
                let [x] = node_inputs::<1>(node)?;
                let (y, _) = first(node, grads)?;
                let ins = [x.clone(), y.clone(), dy.clone()];
                vec![Some(run(e, WindowOp::MaxPoolGrad(*pool), &ins)?)]
            }
            WindowOp::MaxPoolGrad(pool) => {
                let [x, y, _] = node_inputs::<3>(node)?;
                let ins = [x.clone(), y.clone(), dy.clone()];
                vec![
                    None,
                    None,
                    Some(run(e, WindowOp::MaxPoolGradGrad(*pool), &ins)?),
                ]
            }
            WindowOp::MaxPoolGradGrad(pool) => {
                let [x, y, _] = node_inputs::<3>(node)?;
                let ins = [x.clone(), y.clone(), dy.clone()];
                vec![
                    None,
                    None,
                    Some(run(e, WindowOp::MaxPoolGrad(*pool), &ins)?),
                ]
            }
            WindowOp::AvgPool(pool) => {
                let [x] = node_inputs::<1>(node)?;
                let op = WindowOp::AvgPoolGrad {
                    pool: *pool,
                    input_shape: x.shape().to_vec(),
                };
                vec![Some(run(e, op, std::slice::from_ref(dy))?)]
            }
            WindowOp::AvgPoolGrad { pool, .. } => {
                vec![Some(run(
                    e,
                    WindowOp::AvgPool(*pool),
                    std::slice::from_ref(dy),
                )?)]
            }
        })
    }
}

fn conv2d(
    dev: &dyn Device,
    op: &str,
    w: &Window,
    cout: usize,
    x: &NdArray,
    f: &NdArray,
    dt: DType,
) -> OpResult<NdArray> {
    let patch = w.patch_len();
    let rows = w.batch * w.out_pixels();
    let out_shape = [w.batch, w.out_h, w.out_w, cout];
    if dt == DType::F32 {
        let xt = upload(dev, x, x.shape())?;
        let mut cols = dev.zeros(&[rows, patch])?;
        dev.im2col(&xt, w, &mut cols)?;
        let ft = upload(dev, f, &[patch, cout])?;
        let mut out = dev.zeros(&[rows, cout])?;
        dev.gemm(&cols, false, &ft, false, &mut out, 1.0, 0.0)?;
        return download_as(dev, out, &out_shape, op);
    }
    let (_, xv) = x.to_f64_vec();
    let (_, fv) = f.to_f64_vec();
    let c = w.channels;
    let mut out = vec![0.0; rows * cout];
    for_each_window(w, |o, taps| {
        let dst = &mut out[o * cout..(o + 1) * cout];
        for &(p, kp) in taps {
            for ch in 0..c {
                let xval = xv[p * c + ch];
                let frow = &fv[(kp * c + ch) * cout..(kp * c + ch + 1) * cout];
                dst.iter_mut().zip(frow).for_each(|(d, &k)| *d += xval * k);
            }
        }
    });
    from_f64(op, &dev.name(), &out_shape, out, dt)
}

fn conv2d_input(
    dev: &dyn Device,
    op: &str,
    w: &Window,
    cout: usize,
    f: &NdArray,
    dy: &NdArray,
    dt: DType,
) -> OpResult<NdArray> {
    let patch = w.patch_len();
    let rows = w.batch * w.out_pixels();
    let in_shape = [w.batch, w.height, w.width, w.channels];
    if dt == DType::F32 {
        let dyt = upload(dev, dy, &[rows, cout])?;
        let ft = upload(dev, f, &[patch, cout])?;
        let mut dcols = dev.zeros(&[rows, patch])?;
        dev.gemm(&dyt, false, &ft, true, &mut dcols, 1.0, 0.0)?;
        let mut dx = dev.zeros(&in_shape)?;
        dev.col2im(&dcols, w, &mut dx)?;
        return download_as(dev, dx, &in_shape, op);
    }
    let (_, fv) = f.to_f64_vec();
    let (_, gv) = dy.to_f64_vec();
    let c = w.channels;
    let mut dx = vec![0.0; in_shape.iter().product()];
    for_each_window(w, |o, taps| {
        let g = &gv[o * cout..(o + 1) * cout];
        for &(p, kp) in taps {
            for ch in 0..c {
                let frow = &fv[(kp * c + ch) * cout..(kp * c + ch + 1) * cout];
                dx[p * c + ch] += g.iter().zip(frow).map(|(a, b)| a * b).sum::<f64>();
            }
        }
    });
    from_f64(op, &dev.name(), &in_shape, dx, dt)
}

fn conv2d_filter(
    dev: &dyn Device,
    op: &str,
    w: &Window,
    cout: usize,
    x: &NdArray,
    dy: &NdArray,
    dt: DType,
) -> OpResult<NdArray> {
    let patch = w.patch_len();
    let rows = w.batch * w.out_pixels();
    let f_shape = [w.kernel_h, w.kernel_w, w.channels, cout];
    if dt == DType::F32 {
        let xt = upload(dev, x, x.shape())?;
        let mut cols = dev.zeros(&[rows, patch])?;
        dev.im2col(&xt, w, &mut cols)?;
        let dyt = upload(dev, dy, &[rows, cout])?;
        let mut df = dev.zeros(&[patch, cout])?;
        dev.gemm(&cols, true, &dyt, false, &mut df, 1.0, 0.0)?;
        return download_as(dev, df, &f_shape, op);
    }
    let (_, xv) = x.to_f64_vec();
    let (_, gv) = dy.to_f64_vec();
    let c = w.channels;
    let mut df = vec![0.0; patch * cout];
    for_each_window(w, |o, taps| {
        let g = &gv[o * cout..(o + 1) * cout];
        for &(p, kp) in taps {
            for ch in 0..c {
                let xval = xv[p * c + ch];
                let drow = &mut df[(kp * c + ch) * cout..(kp * c + ch + 1) * cout];
                drow.iter_mut().zip(g).for_each(|(d, &gg)| *d += xval * gg);
            }
        }
    });
    from_f64(op, &dev.name(), &f_shape, df, dt)
}

/// Max pooling: the output and, per output element, the flat input index of its maximum
/// (`None` for a window that covers only padding). float32 runs on the device.
fn max_pool(
    dev: &dyn Device,
    op: &str,
    w: &Window,
    x: &NdArray,
    dt: DType,
) -> OpResult<(NdArray, Vec<Option<usize>>)> {
    let out_shape = [w.batch, w.out_h, w.out_w, w.channels];
    if dt == DType::F32 {
        let xt = upload(dev, x, x.shape())?;
        let mut y = dev.zeros(&out_shape)?;
        let mut arg = dev.zeros(&out_shape)?;
        dev.maxpool(&xt, w, &mut y, &mut arg)?;
        let argmax = dev
            .download(&arg)?
            .into_iter()
            .map(|a| (a >= 0.0).then_some(a as usize))
            .collect();
        return Ok((download_as(dev, y, &out_shape, op)?, argmax));
    }
    let (_, xv) = x.to_f64_vec();
    let c = w.channels;
    let total: usize = out_shape.iter().product();
    let mut y = vec![0.0; total];
    let mut argmax = vec![None; total];
    for_each_window(w, |o, taps| {
        for ch in 0..c {
            let mut best: Option<(f64, usize)> = None;
            for &(p, _) in taps {
                let i = p * c + ch;
                if best.is_none_or(|(b, _)| xv[i] > b) {
                    best = Some((xv[i], i));
                }
            }
            if let Some((b, i)) = best {
                y[o * c + ch] = b;
                argmax[o * c + ch] = Some(i);
            }
        }
    });
    Ok((from_f64(op, &dev.name(), &out_shape, y, dt)?, argmax))
}

/// `tf.nn.conv2d(x, filters, strides, padding)`.
pub fn conv2d_op(e: &mut Eager, x: &Tensor, filters: &Tensor, conv: Conv) -> OpResult<Tensor> {
    e.execute1(
        Op::Window(WindowOp::Conv2D(conv)),
        &[x.clone(), filters.clone()],
    )
}

/// `tf.nn.max_pool2d` (`max`) or `tf.nn.avg_pool2d`.
pub fn pool(e: &mut Eager, x: &Tensor, pool: Pool, max: bool) -> OpResult<Tensor> {
    let op = if max {
        WindowOp::MaxPool(pool)
    } else {
        WindowOp::AvgPool(pool)
    };
    e.execute1(Op::Window(op), std::slice::from_ref(x))
}
