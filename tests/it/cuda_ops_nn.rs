//! Windowed operations (im2col, col2im, convolution, max and average pooling forward and
//! backward), the fused bias and activation, and optimizer updates of the CUDA device
//! against the CPU device on the same random inputs, within 1e-4 relative. Every test skips
//! with a one-line reason without a CUDA GPU.

use crate::common::cuda as cuda_support;

use cuda_support::{pair, Rng};
use mirror_kernel::device::{Activation, DTensor, Device, OptStep, Window};

fn window(pad: bool) -> Window {
    let (h, w, k, s): (usize, usize, usize, usize) = (7, 6, 3, 2);
    let (out_h, out_w, pt, pl) = if pad {
        // TensorFlow's "same": 1 padded row before (of 2), none before the columns (of 1).
        (h.div_ceil(s), w.div_ceil(s), 1, 0)
    } else {
        ((h - k) / s + 1, (w - k) / s + 1, 0, 0)
    };
    Window {
        batch: 2,
        height: h,
        width: w,
        channels: 3,
        kernel_h: k,
        kernel_w: k,
        stride_h: s,
        stride_w: s,
        pad_top: pt,
        pad_left: pl,
        out_h,
        out_w,
    }
}

#[test]
fn windows_match() {
    let Some(p) = pair() else { return };
    let mut r = Rng(8);
    for pad in [false, true] {
        let w = window(pad);
        let n_in = w.batch * w.height * w.width * w.channels;
        let rows = w.batch * w.out_h * w.out_w;
        let patch = w.kernel_h * w.kernel_w * w.channels;
        let x = p.up(
            &r.vec(n_in, -1.0, 1.0),
            &[w.batch, w.height, w.width, w.channels],
        );
        let mut cols = p.zeros(&[rows, patch]);
        p.cpu.im2col(&x.0, &w, &mut cols.0).unwrap();
        p.gpu.im2col(&x.1, &w, &mut cols.1).unwrap();
        p.check(&format!("im2col pad={pad}"), &cols);
        let gcols = p.up(&r.vec(rows * patch, -1.0, 1.0), &[rows, patch]);
        let mut dx = p.up(&r.vec(n_in, -1.0, 1.0), &[n_in]);
        p.cpu.col2im(&gcols.0, &w, &mut dx.0).unwrap();
        p.gpu.col2im(&gcols.1, &w, &mut dx.1).unwrap();
        p.check(&format!("col2im pad={pad}"), &dx);
        let n_out = rows * w.channels;
        let mut y = p.zeros(&[n_out]);
        let mut am = p.zeros(&[n_out]);
        p.cpu.maxpool(&x.0, &w, &mut y.0, &mut am.0).unwrap();
        p.gpu.maxpool(&x.1, &w, &mut y.1, &mut am.1).unwrap();
        p.check(&format!("maxpool pad={pad}"), &y);
        p.check(&format!("maxpool argmax pad={pad}"), &am);
        let dy = p.up(&r.vec(n_out, -1.0, 1.0), &[n_out]);
        let mut dx = p.up(&r.vec(n_in, -1.0, 1.0), &[n_in]);
        p.cpu.maxpool_grad(&dy.0, &am.0, &mut dx.0).unwrap();
        p.gpu.maxpool_grad(&dy.1, &am.1, &mut dx.1).unwrap();
        p.check(&format!("maxpool grad pad={pad}"), &dx);
        // Without an argmax, and the backward pass read from the input.
        let mut y2 = p.zeros(&[n_out]);
        let mut none = p.zeros(&[0]);
        p.cpu.maxpool(&x.0, &w, &mut y2.0, &mut none.0).unwrap();
        p.gpu.maxpool(&x.1, &w, &mut y2.1, &mut none.1).unwrap();
        p.check(&format!("maxpool without argmax pad={pad}"), &y2);
        for relu in [false, true] {
            let mut dx = p.zeros(&[n_in]);
            p.cpu
                .maxpool_backward(&x.0, &w, &dy.0, &mut dx.0, relu)
                .unwrap();
            p.gpu
                .maxpool_backward(&x.1, &w, &dy.1, &mut dx.1, relu)
                .unwrap();
            p.check(&format!("maxpool backward relu={relu} pad={pad}"), &dx);
        }
        let mut ya = p.zeros(&[n_out]);
        p.cpu.avgpool(&x.0, &w, &mut ya.0).unwrap();
        p.gpu.avgpool(&x.1, &w, &mut ya.1).unwrap();
        p.check(&format!("avgpool pad={pad}"), &ya);
        let mut dx = p.zeros(&[n_in]);
        p.cpu.avgpool_backward(&w, &dy.0, &mut dx.0).unwrap();
        p.gpu.avgpool_backward(&w, &dy.1, &mut dx.1).unwrap();
        p.check(&format!("avgpool backward pad={pad}"), &dx);
        // The convolution and its gradients.
        let filters = 5;
        let k = p.up(&r.vec(patch * filters, -1.0, 1.0), &[patch, filters]);
        let mut scratch = p.zeros(&[rows, patch]);
        let mut z = p.zeros(&[rows, filters]);
        p.cpu
            .conv2d(&x.0, &w, &k.0, &mut scratch.0, &mut z.0)
            .unwrap();
        p.gpu
            .conv2d(&x.1, &w, &k.1, &mut scratch.1, &mut z.1)
            .unwrap();
        p.check(&format!("conv2d pad={pad}"), &z);
        let dz = p.up(&r.vec(rows * filters, -1.0, 1.0), &[rows, filters]);
        let mut dk = p.zeros(&[patch, filters]);
        p.cpu
            .conv2d_filter_grad(&x.0, &w, &scratch.0, &dz.0, &mut dk.0)
            .unwrap();
        p.gpu
            .conv2d_filter_grad(&x.1, &w, &scratch.1, &dz.1, &mut dk.1)
            .unwrap();
        p.check(&format!("conv2d filter gradient pad={pad}"), &dk);
        let mut dcols = p.zeros(&[rows, patch]);
        let mut dx = p.zeros(&[n_in]);
        p.cpu
            .conv2d_input_grad(&dz.0, &k.0, &w, &mut dcols.0, &mut dx.0)
            .unwrap();
        p.gpu
            .conv2d_input_grad(&dz.1, &k.1, &w, &mut dcols.1, &mut dx.1)
            .unwrap();
        p.check(&format!("conv2d input gradient pad={pad}"), &dx);
    }
}

#[test]
fn bias_activations_match() {
    let Some(p) = pair() else { return };
    let mut r = Rng(10);
    let acts = [
        Activation::Linear,
        Activation::Relu,
        Activation::Sigmoid,
        Activation::Tanh,
        Activation::Gelu,
        Activation::LeakyRelu(0.2),
    ];
    for act in acts {
        let b = p.up(&r.vec(7, -1.0, 1.0), &[7]);
        let mut x = p.up(&r.vec(5 * 7, -2.0, 2.0), &[5, 7]);
        p.cpu.bias_activate(act, &mut x.0, Some(&b.0)).unwrap();
        p.gpu.bias_activate(act, &mut x.1, Some(&b.1)).unwrap();
        p.check(&format!("bias_activate {act:?}"), &x);
        p.cpu.bias_activate(act, &mut x.0, None).unwrap();
        p.gpu.bias_activate(act, &mut x.1, None).unwrap();
        p.check(&format!("activate in place {act:?}"), &x);
        let a = p.up(&r.vec(5 * 9, -1.0, 1.0), &[5, 9]);
        let k = p.up(&r.vec(9 * 7, -1.0, 1.0), &[9, 7]);
        let mut c = p.zeros(&[5, 7]);
        p.cpu
            .gemm_bias_act(&a.0, &k.0, &mut c.0, Some(&b.0), act)
            .unwrap();
        p.gpu
            .gemm_bias_act(&a.1, &k.1, &mut c.1, Some(&b.1), act)
            .unwrap();
        p.check(&format!("gemm_bias_act {act:?}"), &c);
    }
}

#[test]
fn optimizer_steps_match() {
    let Some(p) = pair() else { return };
    let mut r = Rng(9);
    let rules = [
        OptStep::Sgd {
            lr: 0.1,
            momentum: 0.0,
            nesterov: false,
        },
        OptStep::Sgd {
            lr: 0.1,
            momentum: 0.9,
            nesterov: false,
        },
        OptStep::Sgd {
            lr: 0.1,
            momentum: 0.9,
            nesterov: true,
        },
        OptStep::Adam {
            lr: 1e-2,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            step: 1,
        },
        OptStep::AdamW {
            lr: 1e-2,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            weight_decay: 0.004,
            step: 1,
        },
        OptStep::RmsProp {
            lr: 1e-2,
            rho: 0.9,
            momentum: 0.0,
            epsilon: 1e-7,
            centered: false,
        },
        OptStep::RmsProp {
            lr: 1e-2,
            rho: 0.9,
            momentum: 0.5,
            epsilon: 1e-7,
            centered: true,
        },
        OptStep::Adagrad {
            lr: 1e-2,
            epsilon: 1e-7,
        },
    ];
    let n = 1031;
    for rule in rules {
        let mut param = p.up(&r.vec(n, -1.0, 1.0), &[n]);
        // Equal non-zero slots: every rule's state starts away from zero, and RMSprop's
        // centred variance (velocity - average^2) stays well above zero, as it does in
        // training, instead of cancelling to rounding noise.
        let mut slots: (Vec<DTensor>, Vec<DTensor>) = (0..rule.slots())
            .map(|_| p.up(&vec![0.05; n], &[n]))
            .unzip();
        for step in 1..=3u64 {
            let rule = match rule {
                OptStep::Adam {
                    lr,
                    beta_1,
                    beta_2,
                    epsilon,
                    ..
                } => OptStep::Adam {
                    lr,
                    beta_1,
                    beta_2,
                    epsilon,
                    step,
                },
                OptStep::AdamW {
                    lr,
                    beta_1,
                    beta_2,
                    epsilon,
                    weight_decay,
                    ..
                } => OptStep::AdamW {
                    lr,
                    beta_1,
                    beta_2,
                    epsilon,
                    weight_decay,
                    step,
                },
                other => other,
            };
            let g = p.up(&r.vec(n, -1.0, 1.0), &[n]);
            p.cpu
                .optimizer_step(&rule, &mut param.0, &g.0, &mut slots.0)
                .unwrap();
            p.gpu
                .optimizer_step(&rule, &mut param.1, &g.1, &mut slots.1)
                .unwrap();
        }
        p.check(&format!("{rule:?} parameter"), &param);
        for (i, (c, g)) in slots.0.into_iter().zip(slots.1).enumerate() {
            p.check(&format!("{rule:?} slot {i}"), &(c, g));
        }
    }
}
