//! Every operation of the CUDA device against the CPU device on the same random inputs:
//! results agree within 1e-4 relative (plus 1e-6 absolute for values near zero), dropout
//! masks agree bit for bit. Every test skips with a one-line reason without a CUDA GPU.
//! Windowed operations and optimizer updates are in `cuda_ops_nn.rs`.

use crate::common::cuda as cuda_support;

use cuda_support::{pair, Rng};
use mirror_kernel::device::{Activation, Device, LossKind};

#[test]
fn memory_round_trips() {
    let Some(p) = pair() else { return };
    let mut r = Rng(1);
    let v = r.vec(1000, -3.0, 3.0);
    let t = p.gpu.upload(&v, &[10, 100]).unwrap();
    assert_eq!(p.gpu.download(&t).unwrap(), v);
    let mut z = p.gpu.zeros(&[10, 100]).unwrap();
    assert!(p.gpu.download(&z).unwrap().iter().all(|x| *x == 0.0));
    p.gpu.copy(&t, &mut z).unwrap();
    assert_eq!(p.gpu.download(&z).unwrap(), v);
    let w = r.vec(1000, -1.0, 1.0);
    p.gpu.write(&w, &mut z).unwrap();
    assert_eq!(p.gpu.download(&z).unwrap(), w);
    p.gpu.copy_range(&t, 10, &mut z, 500, 300).unwrap();
    let mut want = w.clone();
    want[500..800].copy_from_slice(&v[10..310]);
    assert_eq!(p.gpu.download(&z).unwrap(), want);
    assert!(p.gpu.copy_range(&t, 900, &mut z, 0, 200).is_err());
    let empty = p.gpu.upload(&[], &[0, 4]).unwrap();
    assert!(p.gpu.download(&empty).unwrap().is_empty());
    assert!(
        p.gpu.write(&[1.0], &mut z).is_err(),
        "length mismatch is an error"
    );
    let host = p.cpu.upload(&v, &[1000]).unwrap();
    assert!(p.gpu.download(&host).is_err(), "host tensors are refused");
}

#[test]
fn gemm_matches_in_every_transpose() {
    let Some(p) = pair() else { return };
    let mut r = Rng(2);
    let (m, k, n) = (37, 53, 29);
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        let ashape = if ta { [k, m] } else { [m, k] };
        let bshape = if tb { [n, k] } else { [k, n] };
        let a = p.up(&r.vec(m * k, -1.0, 1.0), &ashape);
        let b = p.up(&r.vec(k * n, -1.0, 1.0), &bshape);
        let mut c = p.up(&r.vec(m * n, -1.0, 1.0), &[m, n]);
        p.cpu.gemm(&a.0, ta, &b.0, tb, &mut c.0, 0.7, 0.3).unwrap();
        p.gpu.gemm(&a.1, ta, &b.1, tb, &mut c.1, 0.7, 0.3).unwrap();
        p.check(&format!("gemm ta={ta} tb={tb}"), &c);
    }
    let a = p.up(&r.vec(6, 0.0, 1.0), &[2, 3]);
    let mut c = p.zeros(&[2, 2]);
    assert!(p
        .gpu
        .gemm(&a.1, false, &a.1, false, &mut c.1, 1.0, 0.0)
        .is_err());
}

#[test]
fn rows_and_elementwise_match() {
    let Some(p) = pair() else { return };
    let mut r = Rng(3);
    let (rows, cols) = (70, 33);
    let bias = p.up(&r.vec(cols, -1.0, 1.0), &[cols]);
    let mut x = p.up(&r.vec(rows * cols, -2.0, 2.0), &[rows, cols]);
    p.cpu.add_bias(&mut x.0, &bias.0).unwrap();
    p.gpu.add_bias(&mut x.1, &bias.1).unwrap();
    p.check("add_bias", &x);
    for beta in [0.0, 0.5] {
        let mut out = p.up(&r.vec(cols, -1.0, 1.0), &[cols]);
        p.cpu.sum_rows(&x.0, &mut out.0, beta).unwrap();
        p.gpu.sum_rows(&x.1, &mut out.1, beta).unwrap();
        p.check(&format!("sum_rows beta={beta}"), &out);
    }
    for beta in [0.0, -1.5] {
        let mut y = p.up(&r.vec(rows * cols, -1.0, 1.0), &[rows, cols]);
        p.cpu.axpby(0.25, &x.0, beta, &mut y.0).unwrap();
        p.gpu.axpby(0.25, &x.1, beta, &mut y.1).unwrap();
        p.check(&format!("axpby beta={beta}"), &y);
    }
    let b = p.up(&r.vec(rows * cols, -1.0, 1.0), &[rows, cols]);
    let mut out = p.zeros(&[rows, cols]);
    p.cpu.mul(&x.0, &b.0, &mut out.0).unwrap();
    p.gpu.mul(&x.1, &b.1, &mut out.1).unwrap();
    p.check("mul", &out);
    let big = p.up(&r.vec(1_000_003, -1.0, 1.0), &[1_000_003]);
    let (sc, sg) = (p.cpu.sum(&big.0).unwrap(), p.gpu.sum(&big.1).unwrap());
    assert!(
        (sc - sg).abs() <= 1e-6 * sc.abs().max(1.0),
        "sum: {sg} vs {sc}"
    );
}

#[test]
fn activations_and_derivatives_match() {
    let Some(p) = pair() else { return };
    let mut r = Rng(4);
    let n = 4099;
    let acts = [
        Activation::Linear,
        Activation::Relu,
        Activation::Sigmoid,
        Activation::Tanh,
        Activation::Elu,
        Activation::Selu,
        Activation::Gelu,
        Activation::Swish,
        Activation::Softplus,
        Activation::LeakyRelu(0.2),
    ];
    for act in acts {
        let x = p.up(&r.vec(n, -6.0, 6.0), &[n]);
        let dy = p.up(&r.vec(n, -1.0, 1.0), &[n]);
        let mut y = p.zeros(&[n]);
        p.cpu.activate(act, &x.0, &mut y.0).unwrap();
        p.gpu.activate(act, &x.1, &mut y.1).unwrap();
        p.check(&format!("{act:?}"), &y);
        let mut dx = p.zeros(&[n]);
        p.cpu
            .activate_grad(act, &x.0, &y.0, &dy.0, &mut dx.0)
            .unwrap();
        p.gpu
            .activate_grad(act, &x.1, &y.1, &dy.1, &mut dx.1)
            .unwrap();
        p.check(&format!("{act:?} derivative"), &dx);
    }
}

#[test]
fn softmax_rows_match() {
    let Some(p) = pair() else { return };
    let mut r = Rng(5);
    for (rows, cols) in [(64, 10), (5, 1000), (3, 1)] {
        for log in [false, true] {
            let x = p.up(&r.vec(rows * cols, -8.0, 8.0), &[rows, cols]);
            let dy = p.up(&r.vec(rows * cols, -1.0, 1.0), &[rows, cols]);
            let mut y = p.zeros(&[rows, cols]);
            p.cpu.softmax_rows(&x.0, &mut y.0, log).unwrap();
            p.gpu.softmax_rows(&x.1, &mut y.1, log).unwrap();
            p.check(&format!("softmax {rows}x{cols} log={log}"), &y);
            let mut dx = p.zeros(&[rows, cols]);
            p.cpu
                .softmax_rows_grad(&y.0, &dy.0, &mut dx.0, log)
                .unwrap();
            p.gpu
                .softmax_rows_grad(&y.1, &dy.1, &mut dx.1, log)
                .unwrap();
            p.check(&format!("softmax grad {rows}x{cols} log={log}"), &dx);
        }
    }
}

#[test]
fn losses_match() {
    let Some(p) = pair() else { return };
    let mut r = Rng(6);
    let (rows, cols) = (50, 7);
    let n = rows * cols;
    let probs: Vec<f32> = {
        let mut v = r.vec(n, 0.01, 1.0);
        // Exact 0 and 1 exercise the clipping (and its zero gradient).
        v[3] = 0.0;
        v[11] = 1.0;
        v
    };
    let onehot: Vec<f32> = (0..n)
        .map(|i| f32::from(i % cols == (i / cols) % cols))
        .collect();
    let labels: Vec<f32> = (0..rows).map(|i| (i % cols) as f32).collect();
    let cases: Vec<(LossKind, Vec<f32>, Vec<f32>)> = vec![
        (
            LossKind::MeanSquaredError,
            r.vec(n, -2.0, 2.0),
            r.vec(n, -2.0, 2.0),
        ),
        (
            LossKind::MeanAbsoluteError,
            r.vec(n, -2.0, 2.0),
            r.vec(n, -2.0, 2.0),
        ),
        (
            LossKind::Huber { delta: 1.0 },
            r.vec(n, -3.0, 3.0),
            r.vec(n, -3.0, 3.0),
        ),
        (
            LossKind::BinaryCrossentropy { from_logits: false },
            probs.clone(),
            r.vec(n, 0.0, 1.0),
        ),
        (
            LossKind::BinaryCrossentropy { from_logits: true },
            r.vec(n, -5.0, 5.0),
            onehot.clone(),
        ),
        (
            LossKind::CategoricalCrossentropy { from_logits: false },
            probs.clone(),
            onehot.clone(),
        ),
        (
            LossKind::CategoricalCrossentropy { from_logits: true },
            r.vec(n, -5.0, 5.0),
            onehot.clone(),
        ),
        (
            LossKind::SparseCategoricalCrossentropy { from_logits: false },
            probs.clone(),
            labels.clone(),
        ),
        (
            LossKind::SparseCategoricalCrossentropy { from_logits: true },
            r.vec(n, -5.0, 5.0),
            labels.clone(),
        ),
    ];
    for (kind, pred, target) in cases {
        let tshape = if target.len() == rows {
            vec![rows]
        } else {
            vec![rows, cols]
        };
        let pr = p.up(&pred, &[rows, cols]);
        let t = p.up(&target, &tshape);
        let mut pe = p.zeros(&[rows]);
        let mut g = p.zeros(&[rows, cols]);
        p.cpu
            .loss(kind, &pr.0, &t.0, &mut pe.0, &mut g.0, 0.125)
            .unwrap();
        p.gpu
            .loss(kind, &pr.1, &t.1, &mut pe.1, &mut g.1, 0.125)
            .unwrap();
        p.check(&format!("{kind:?} per example"), &pe);
        p.check(&format!("{kind:?} gradient"), &g);
    }
    let mut bad = labels.clone();
    bad[4] = cols as f32;
    let pr = p.up(&probs, &[rows, cols]);
    let t = p.up(&bad, &[rows]);
    let mut pe = p.zeros(&[rows]);
    let mut g = p.zeros(&[rows, cols]);
    let kind = LossKind::SparseCategoricalCrossentropy { from_logits: true };
    assert!(p
        .cpu
        .loss(kind, &pr.0, &t.0, &mut pe.0, &mut g.0, 1.0)
        .is_err());
    assert!(p
        .gpu
        .loss(kind, &pr.1, &t.1, &mut pe.1, &mut g.1, 1.0)
        .is_err());
}

#[test]
fn dropout_masks_are_identical() {
    let Some(p) = pair() else { return };
    for (seed, rate) in [(0u64, 0.5f32), (7, 0.3), (u64::MAX, 0.9), (12345, 0.0)] {
        let mut m = p.zeros(&[100_003]);
        p.cpu.dropout_mask(seed, rate, &mut m.0).unwrap();
        p.gpu.dropout_mask(seed, rate, &mut m.1).unwrap();
        let c = p.cpu.download(&m.0).unwrap();
        let g = p.gpu.download(&m.1).unwrap();
        assert!(c == g, "dropout mask differs for seed {seed} rate {rate}");
    }
}
