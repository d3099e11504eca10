//! The CPU device's operations against plain reference loops: GEMM in every transpose
//! combination with alpha/beta, im2col/col2im as adjoints, max pooling, softmax, bias and
//! row sums, copy_range, and shape errors instead of panics. The CUDA device is checked
//! against this one.

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::device::{Activation, DTensor, Device, DeviceError, Window};

fn vals(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (((i + seed) * 7919) % 23) as f32 / 23.0 - 0.5)
        .collect()
}

fn up(dev: &dyn Device, shape: &[usize], seed: usize) -> DTensor {
    dev.upload(&vals(shape.iter().product(), seed), shape)
        .expect("upload")
}

#[test]
fn gemm_matches_the_textbook_product_in_every_layout() {
    let dev = CpuDevice::new(0);
    let (m, k, n) = (5, 7, 3);
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        let (sa, sb) = (
            if ta { [k, m] } else { [m, k] },
            if tb { [n, k] } else { [k, n] },
        );
        let (a, b) = (up(&dev, &sa, 1), up(&dev, &sb, 2));
        let c0 = vals(m * n, 3);
        let mut c = dev.upload(&c0, &[m, n]).expect("c");
        dev.gemm(&a, ta, &b, tb, &mut c, 0.5, 2.0).expect("gemm");
        let (av, bv, cv) = (
            dev.download(&a).expect("a"),
            dev.download(&b).expect("b"),
            dev.download(&c).expect("c"),
        );
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0f64;
                for p in 0..k {
                    let x = if ta { av[p * m + i] } else { av[i * k + p] };
                    let y = if tb { bv[j * k + p] } else { bv[p * n + j] };
                    s += f64::from(x) * f64::from(y);
                }
                let want = 0.5 * s + 2.0 * f64::from(c0[i * n + j]);
                assert!(
                    (f64::from(cv[i * n + j]) - want).abs() < 1e-5,
                    "{ta} {tb} ({i},{j})"
                );
            }
        }
    }
    let a = up(&dev, &[2, 3], 0);
    let mut c = dev.zeros(&[2, 2]).expect("c");
    let err = dev
        .gemm(&a, false, &a, false, &mut c, 1.0, 0.0)
        .expect_err("3 vs 2");
    assert!(matches!(err, DeviceError::Shape { op: "gemm", .. }));
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

#[test]
fn col2im_is_the_adjoint_of_im2col() {
    let dev = CpuDevice::new(0);
    let w = Window {
        batch: 2,
        height: 5,
        width: 4,
        channels: 3,
        kernel_h: 3,
        kernel_w: 2,
        stride_h: 2,
        stride_w: 1,
        pad_top: 1,
        pad_left: 0,
        out_h: 3,
        out_w: 3,
    };
    let x = up(&dev, &[2, 5, 4, 3], 4);
    let rows = 2 * 3 * 3;
    let mut cols = dev.zeros(&[rows, 3 * 2 * 3]).expect("cols");
    dev.im2col(&x, &w, &mut cols).expect("im2col");
    let c = up(&dev, &[rows, 18], 9);
    let mut back = dev.zeros(&[2, 5, 4, 3]).expect("dx");
    dev.col2im(&c, &w, &mut back).expect("col2im");
    let lhs = dot(
        &dev.download(&cols).expect("d"),
        &dev.download(&c).expect("d"),
    );
    let rhs = dot(
        &dev.download(&x).expect("d"),
        &dev.download(&back).expect("d"),
    );
    assert!((lhs - rhs).abs() < 1e-4, "{lhs} vs {rhs}");
    let mut wrong = dev.zeros(&[3]).expect("z");
    assert!(dev.im2col(&x, &w, &mut wrong).is_err());
}

#[test]
fn maxpool_softmax_bias_and_copy_range_match_reference_loops() {
    let dev = CpuDevice::new(0);
    let w = Window {
        batch: 1,
        height: 4,
        width: 4,
        channels: 2,
        kernel_h: 2,
        kernel_w: 2,
        stride_h: 2,
        stride_w: 2,
        pad_top: 0,
        pad_left: 0,
        out_h: 2,
        out_w: 2,
    };
    let x = up(&dev, &[1, 4, 4, 2], 1);
    let xv = dev.download(&x).expect("x");
    let mut y = dev.zeros(&[1, 2, 2, 2]).expect("y");
    let mut arg = dev.zeros(&[1, 2, 2, 2]).expect("arg");
    dev.maxpool(&x, &w, &mut y, &mut arg).expect("pool");
    let yv = dev.download(&y).expect("y");
    for oy in 0..2 {
        for ox in 0..2 {
            for c in 0..2 {
                let mut m = f32::NEG_INFINITY;
                for dy in 0..2 {
                    for dx in 0..2 {
                        m = m.max(xv[((oy * 2 + dy) * 4 + ox * 2 + dx) * 2 + c]);
                    }
                }
                assert_eq!(yv[(oy * 2 + ox) * 2 + c], m);
            }
        }
    }
    let mut dx = dev.zeros(&[1, 4, 4, 2]).expect("dx");
    dev.maxpool_grad(&y, &arg, &mut dx).expect("grad");
    assert!((dev.sum(&dx).expect("sum") - dev.sum(&y).expect("sum")).abs() < 1e-6);

    let logits = up(&dev, &[3, 4], 2);
    let mut p = dev.zeros(&[3, 4]).expect("p");
    dev.softmax_rows(&logits, &mut p, false).expect("softmax");
    for row in dev.download(&p).expect("p").chunks(4) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
    let mut b = up(&dev, &[3, 4], 0);
    let before = dev.download(&b).expect("b");
    let bias = up(&dev, &[4], 5);
    dev.add_bias(&mut b, &bias).expect("bias");
    let mut sums = dev.zeros(&[4]).expect("s");
    dev.sum_rows(&b, &mut sums, 0.0).expect("sum_rows");
    let bv = dev.download(&bias).expect("b");
    for (j, s) in dev.download(&sums).expect("s").iter().enumerate() {
        let want: f32 = (0..3).map(|r| before[r * 4 + j] + bv[j]).sum();
        assert!((s - want).abs() < 1e-5);
    }
    let mut flat = dev.zeros(&[10]).expect("flat");
    dev.copy_range(&bias, 1, &mut flat, 6, 3)
        .expect("copy_range");
    let fv = dev.download(&flat).expect("f");
    assert_eq!(&fv[6..9], &bv[1..4]);
    assert!(dev.copy_range(&bias, 2, &mut flat, 0, 3).is_err());
    let mut out = dev.zeros(&[3, 4]).expect("o");
    let err = dev
        .activate(Activation::Relu, &logits, &mut flat)
        .expect_err("12 vs 10");
    assert!(matches!(err, DeviceError::Shape { .. }));
    dev.activate(Activation::Relu, &logits, &mut out)
        .expect("relu");
}
