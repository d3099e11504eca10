//! The CUDA device's losses, reductions, dropout, windowed operations (im2col, col2im,
//! max and average pooling forward and backward) and optimizer updates: shape checks on the host, then one kernel launch
//! each (see `kernels.rs` for the formulas). Called from `device.rs`'s `Device` impl only.

use cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};

use super::device::{flat, per_row, shape_err, CudaDevice};
use super::load::{BLOCK, K};
use crate::device::same_len;
use crate::device::{DResult, DTensor, DeviceError, LossKind, OptStep, Window};

/// Reads a device error flag written by a kernel (0 = fine); waits for the stream.
fn flag_set(dev: &CudaDevice, flag: &cudarc::driver::CudaSlice<i32>) -> DResult<bool> {
    let v = dev.stream.clone_dtoh(flag).map_err(|e| dev.err(e))?;
    dev.synchronize()?;
    Ok(v.first().copied().unwrap_or(0) != 0)
}

pub(super) fn loss(
    dev: &CudaDevice,
    kind: LossKind,
    pred: &DTensor,
    target: &DTensor,
    per_example: &mut DTensor,
    grad: &mut DTensor,
    scale: f32,
) -> DResult<()> {
    let (rows, cols) = pred.rows_cols();
    let sparse = matches!(kind, LossKind::SparseCategoricalCrossentropy { .. });
    let want_target = if sparse { rows } else { pred.len() };
    same_len("loss (target)", target.len(), want_target)?;
    same_len("loss (per-example)", per_example.len(), rows)?;
    same_len("loss (gradient)", grad.len(), pred.len())?;
    if rows == 0 {
        return Ok(());
    }
    if cols == 0 {
        return Err(shape_err("loss", "predictions have no columns".into()));
    }
    let (code, delta) = match kind {
        LossKind::MeanSquaredError => (0, 0.0),
        LossKind::MeanAbsoluteError => (1, 0.0),
        LossKind::Huber { delta } => (2, delta),
        LossKind::BinaryCrossentropy { from_logits } => (if from_logits { 4 } else { 3 }, 0.0),
        LossKind::CategoricalCrossentropy { from_logits } => (if from_logits { 6 } else { 5 }, 0.0),
        LossKind::SparseCategoricalCrossentropy { from_logits } => {
            (if from_logits { 8 } else { 7 }, 0.0)
        }
    };
    let code: i32 = code;
    let (r, c) = (rows as i64, cols as i64);
    let mut bad = dev.stream.alloc_zeros::<i32>(1).map_err(|e| dev.err(e))?;
    {
        let (ps, ts) = (dev.buf(pred)?, dev.buf(target)?);
        let es = dev.buf_mut(per_example)?;
        let gs = dev.buf_mut(grad)?;
        let mut l = dev.launcher(K::Loss);
        l.arg(&code).arg(&delta).arg(ps).arg(ts).arg(es).arg(gs);
        l.arg(&r).arg(&c).arg(&scale).arg(&mut bad);
        dev.run(l, per_row(rows)?)?;
    }
    // Only the sparse losses can meet a bad label; checking costs a wait for the stream,
    // which the training loop pays anyway when it reads the loss back.
    if sparse && flag_set(dev, &bad)? {
        return Err(shape_err(
            "sparse_categorical_crossentropy",
            format!("a label is not an integer in [0, {cols})"),
        ));
    }
    Ok(())
}

pub(super) fn sum(dev: &CudaDevice, x: &DTensor) -> DResult<f64> {
    let n = x.len();
    if n == 0 {
        return Ok(0.0);
    }
    let xs = dev.buf(x)?;
    let blocks = n.div_ceil(BLOCK as usize).clamp(1, 1024);
    let mut partial = dev
        .stream
        .alloc_zeros::<f64>(blocks)
        .map_err(|e| dev.err(e))?;
    let n64 = n as i64;
    let mut l = dev.launcher(K::SumPartial);
    l.arg(xs).arg(&n64).arg(&mut partial);
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    dev.run(l, cfg)?;
    let parts = dev.stream.clone_dtoh(&partial).map_err(|e| dev.err(e))?;
    dev.synchronize()?;
    Ok(parts.iter().sum())
}

pub(super) fn dropout_mask(
    dev: &CudaDevice,
    seed: u64,
    rate: f32,
    mask: &mut DTensor,
) -> DResult<()> {
    let n = mask.len();
    if n == 0 {
        return Ok(());
    }
    let keep: f32 = if rate < 1.0 { 1.0 / (1.0 - rate) } else { 0.0 };
    let n64 = n as i64;
    let ms = dev.buf_mut(mask)?;
    let mut l = dev.launcher(K::Dropout);
    l.arg(&seed).arg(&rate).arg(&keep).arg(ms).arg(&n64);
    dev.run(l, flat(n))
}

/// The window geometry as the kernels take it (`struct Win` in kernels.rs: twelve ints).
#[repr(C)]
#[derive(Clone, Copy)]
struct Win([i32; 12]);

// SAFETY: a plain array of i32 with C layout, matching `struct Win` field for field.
unsafe impl DeviceRepr for Win {}

fn win(op: &'static str, w: &Window) -> DResult<Win> {
    if w.stride_h == 0 || w.stride_w == 0 || w.kernel_h == 0 || w.kernel_w == 0 {
        return Err(shape_err(
            op,
            "strides and kernel sizes must be at least 1".into(),
        ));
    }
    let f = [
        w.batch, w.height, w.width, w.channels, w.kernel_h, w.kernel_w, w.stride_h, w.stride_w,
        w.pad_top, w.pad_left, w.out_h, w.out_w,
    ];
    let mut v = [0i32; 12];
    for (d, s) in v.iter_mut().zip(f) {
        *d =
            i32::try_from(s).map_err(|_| shape_err(op, format!("window size {s} is too large")))?;
    }
    Ok(Win(v))
}

fn input_len(w: &Window) -> usize {
    w.batch * w.height * w.width * w.channels
}

/// The window of an unfolding (`im2col`) or folding (`col2im`) after checking that the
/// image and the columns have the lengths the window implies.
fn unfold_window(ops: [&'static str; 3], image: usize, cols: usize, w: &Window) -> DResult<Win> {
    let g = win(ops[0], w)?;
    same_len(ops[1], image, input_len(w))?;
    let patch = w.patch_len();
    same_len(ops[2], cols, w.batch * w.out_h * w.out_w * patch)?;
    Ok(g)
}

pub(super) fn im2col(dev: &CudaDevice, x: &DTensor, w: &Window, cols: &mut DTensor) -> DResult<()> {
    let ops = ["im2col", "im2col (input)", "im2col (columns)"];
    let g = unfold_window(ops, x.len(), cols.len(), w)?;
    if cols.is_empty() {
        return Ok(());
    }
    let n = cols.len();
    let xs = dev.buf(x)?;
    let cs = dev.buf_mut(cols)?;
    let mut l = dev.launcher(K::Im2col);
    l.arg(xs).arg(cs).arg(&g);
    dev.run(l, flat(n))
}

pub(super) fn col2im(
    dev: &CudaDevice,
    cols: &DTensor,
    w: &Window,
    dx: &mut DTensor,
) -> DResult<()> {
    let ops = ["col2im", "col2im (input)", "col2im (columns)"];
    let g = unfold_window(ops, dx.len(), cols.len(), w)?;
    if dx.is_empty() {
        return Ok(());
    }
    let n = dx.len();
    let cs = dev.buf(cols)?;
    let ds = dev.buf_mut(dx)?;
    let mut l = dev.launcher(K::Col2im);
    l.arg(cs).arg(ds).arg(&g);
    dev.run(l, flat(n))
}

pub(super) fn maxpool(
    dev: &CudaDevice,
    x: &DTensor,
    w: &Window,
    y: &mut DTensor,
    argmax: &mut DTensor,
) -> DResult<()> {
    let g = win("maxpool", w)?;
    same_len("maxpool (input)", x.len(), input_len(w))?;
    let out = output_len(w);
    same_len("maxpool (output)", y.len(), out)?;
    // An empty argmax: nothing reads the indices, so the kernel gets a null pointer.
    let keep = !argmax.is_empty();
    if keep {
        same_len("maxpool (argmax)", argmax.len(), out)?;
    }
    if out == 0 {
        return Ok(());
    }
    let null: u64 = 0;
    let xs = dev.buf(x)?;
    let ys = dev.buf_mut(y)?;
    let mut l = dev.launcher(K::Maxpool);
    l.arg(xs).arg(ys);
    if keep {
        l.arg(dev.buf_mut(argmax)?);
    } else {
        l.arg(&null);
    }
    l.arg(&g);
    dev.run(l, flat(out))
}

fn output_len(w: &Window) -> usize {
    w.batch * w.out_h * w.out_w * w.channels
}

pub(super) fn maxpool_backward(
    dev: &CudaDevice,
    x: &DTensor,
    w: &Window,
    dy: &DTensor,
    dx: &mut DTensor,
    relu: bool,
) -> DResult<()> {
    let g = win("maxpool_backward", w)?;
    same_len("maxpool_backward (input)", x.len(), input_len(w))?;
    same_len("maxpool_backward (input gradient)", dx.len(), input_len(w))?;
    same_len(
        "maxpool_backward (output gradient)",
        dy.len(),
        output_len(w),
    )?;
    let n = dx.len();
    if n == 0 {
        return Ok(());
    }
    let (xs, gs) = (dev.buf(x)?, dev.buf(dy)?);
    let ds = dev.buf_mut(dx)?;
    let relu = i32::from(relu);
    let mut l = dev.launcher(K::MaxpoolBwd);
    l.arg(xs).arg(gs).arg(ds).arg(&relu).arg(&g);
    dev.run(l, flat(n))
}

pub(super) fn avgpool(dev: &CudaDevice, x: &DTensor, w: &Window, y: &mut DTensor) -> DResult<()> {
    let g = win("avgpool", w)?;
    same_len("avgpool (input)", x.len(), input_len(w))?;
    same_len("avgpool (output)", y.len(), output_len(w))?;
    let n = y.len();
    if n == 0 {
        return Ok(());
    }
    let xs = dev.buf(x)?;
    let ys = dev.buf_mut(y)?;
    let mut l = dev.launcher(K::Avgpool);
    l.arg(xs).arg(ys).arg(&g);
    dev.run(l, flat(n))
}

pub(super) fn avgpool_backward(
    dev: &CudaDevice,
    w: &Window,
    dy: &DTensor,
    dx: &mut DTensor,
) -> DResult<()> {
    let g = win("avgpool_backward", w)?;
    same_len("avgpool_backward (input gradient)", dx.len(), input_len(w))?;
    same_len(
        "avgpool_backward (output gradient)",
        dy.len(),
        output_len(w),
    )?;
    let n = dx.len();
    if n == 0 {
        return Ok(());
    }
    let gs = dev.buf(dy)?;
    let ds = dev.buf_mut(dx)?;
    let mut l = dev.launcher(K::AvgpoolBwd);
    l.arg(gs).arg(ds).arg(&g);
    dev.run(l, flat(n))
}

pub(super) fn maxpool_grad(
    dev: &CudaDevice,
    dy: &DTensor,
    argmax: &DTensor,
    dx: &mut DTensor,
) -> DResult<()> {
    same_len("maxpool_grad", argmax.len(), dy.len())?;
    let (n_out, n_in) = (dy.len() as i64, dx.len() as i64);
    let mut bad = dev.stream.alloc_zeros::<i32>(1).map_err(|e| dev.err(e))?;
    {
        let ds = dev.buf_mut(dx)?;
        dev.stream.memset_zeros(ds).map_err(|e| dev.err(e))?;
        if n_out == 0 {
            return Ok(());
        }
        let (gs, am) = (dev.buf(dy)?, dev.buf(argmax)?);
        let mut l = dev.launcher(K::MaxpoolGrad);
        l.arg(gs)
            .arg(am)
            .arg(ds)
            .arg(&n_out)
            .arg(&n_in)
            .arg(&mut bad);
        dev.run(l, flat(n_out as usize))?;
    }
    if flag_set(dev, &bad)? {
        return Err(shape_err(
            "maxpool_grad",
            "an argmax index is outside the input".into(),
        ));
    }
    Ok(())
}

pub(super) fn optimizer_step(
    dev: &CudaDevice,
    opt: &OptStep,
    param: &mut DTensor,
    grad: &DTensor,
    slots: &mut [DTensor],
) -> DResult<()> {
    let n = param.len();
    same_len("optimizer (gradient)", grad.len(), n)?;
    if slots.len() != opt.slots() {
        return Err(shape_err(
            "optimizer",
            format!(
                "{} slot tensors where the rule keeps {}",
                slots.len(),
                opt.slots()
            ),
        ));
    }
    for s in slots.iter() {
        same_len("optimizer (slot)", s.len(), n)?;
    }
    if n == 0 {
        return Ok(());
    }
    let n64 = n as i64;
    let null: u64 = 0;
    let gs = dev.buf(grad)?;
    let mut it = slots.iter_mut();
    let mut next = || -> DResult<_> {
        let t = it.next().ok_or_else(|| DeviceError::Shape {
            op: "optimizer",
            detail: "missing slot".into(),
        })?;
        dev.buf_mut(t)
    };
    match *opt {
        OptStep::Sgd {
            lr,
            momentum,
            nesterov,
        } => {
            let nest = i32::from(nesterov);
            if momentum != 0.0 {
                let m = next()?;
                let ps = dev.buf_mut(param)?;
                let mut l = dev.launcher(K::Sgd);
                l.arg(ps)
                    .arg(gs)
                    .arg(m)
                    .arg(&n64)
                    .arg(&lr)
                    .arg(&momentum)
                    .arg(&nest);
                dev.run(l, flat(n))
            } else {
                let ps = dev.buf_mut(param)?;
                let mut l = dev.launcher(K::Sgd);
                l.arg(ps)
                    .arg(gs)
                    .arg(&null)
                    .arg(&n64)
                    .arg(&lr)
                    .arg(&momentum)
                    .arg(&nest);
                dev.run(l, flat(n))
            }
        }
        OptStep::Adam {
            lr,
            beta_1,
            beta_2,
            epsilon,
            step,
        } => adam(
            dev,
            param,
            gs,
            next()?,
            next()?,
            n,
            lr,
            beta_1,
            beta_2,
            epsilon,
            step,
            0.0,
        ),
        OptStep::AdamW {
            lr,
            beta_1,
            beta_2,
            epsilon,
            weight_decay,
            step,
        } => {
            let decay = weight_decay * lr;
            adam(
                dev,
                param,
                gs,
                next()?,
                next()?,
                n,
                lr,
                beta_1,
                beta_2,
                epsilon,
                step,
                decay,
            )
        }
        OptStep::RmsProp {
            lr,
            rho,
            momentum,
            epsilon,
            centered,
        } => {
            let vel = next()?;
            let mom = if momentum != 0.0 { Some(next()?) } else { None };
            let avg = if centered { Some(next()?) } else { None };
            let ps = dev.buf_mut(param)?;
            let mut l = dev.launcher(K::RmsProp);
            l.arg(ps).arg(gs).arg(vel);
            match mom {
                Some(m) => l.arg(m),
                None => l.arg(&null),
            };
            match avg {
                Some(a) => l.arg(a),
                None => l.arg(&null),
            };
            let c = OptStep::complement(rho);
            l.arg(&n64)
                .arg(&lr)
                .arg(&rho)
                .arg(&c)
                .arg(&momentum)
                .arg(&epsilon);
            dev.run(l, flat(n))
        }
        OptStep::Adagrad { lr, epsilon } => {
            let acc = next()?;
            let ps = dev.buf_mut(param)?;
            let mut l = dev.launcher(K::Adagrad);
            l.arg(ps).arg(gs).arg(acc).arg(&n64).arg(&lr).arg(&epsilon);
            dev.run(l, flat(n))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn adam(
    dev: &CudaDevice,
    param: &mut DTensor,
    gs: &cudarc::driver::CudaSlice<f32>,
    m: &mut cudarc::driver::CudaSlice<f32>,
    v: &mut cudarc::driver::CudaSlice<f32>,
    n: usize,
    lr: f32,
    b1: f32,
    b2: f32,
    eps: f32,
    step: u64,
    decay: f32,
) -> DResult<()> {
    // Keras folds both bias corrections into the learning rate; the rate and the
    // complements of the betas are the values the CPU device uses, bit for bit.
    let lr_t = OptStep::adam_rate(lr, b1, b2, step);
    let (c1, c2) = (OptStep::complement(b1), OptStep::complement(b2));
    let n64 = n as i64;
    let ps = dev.buf_mut(param)?;
    let mut l = dev.launcher(K::Adam);
    l.arg(ps).arg(gs).arg(m).arg(v).arg(&n64);
    l.arg(&lr_t).arg(&c1).arg(&c2).arg(&eps).arg(&decay);
    dev.run(l, flat(n))
}
