//! The float32 kernels of the device (the ones the compiled Keras models run) against the
//! float64 host formulas: values and gradients of every op that takes the device path
//! agree to float32 precision.

use super::{away, ints, uniform, values, ACTIVATIONS};
use crate::ops::*;
use crate::tensor::{DType, NdArray};

/// Runs `f` on float64 inputs and on the same inputs as float32, with gradients of the
/// summed outputs with respect to the float inputs, and compares.
fn agree(name: &str, inputs: Vec<NdArray>, f: &dyn Fn(&mut Eager, &[Tensor]) -> OpResult<Tensor>) {
    let run = |dt: DType| -> (Vec<f64>, Vec<Vec<f64>>) {
        let mut e = Eager::default();
        let xs: Vec<Tensor> = inputs
            .iter()
            .map(|a| {
                Tensor::new(if a.dtype().is_float() {
                    a.astype(dt)
                } else {
                    a.clone()
                })
            })
            .collect();
        let tape = Tape::new(false, true).shared();
        e.push_tape(tape.clone());
        for x in &xs {
            lock(&tape).watch(x);
        }
        let y = f(&mut e, &xs).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(y.dtype(), dt, "{name}: output dtype");
        let s = reduce_sum(&mut e, &y, None, false).unwrap_or_else(|err| panic!("{err}"));
        e.pop_tape(&tape);
        let sources: Vec<Source> = xs.iter().map(|x| Source::Tensor(x.clone())).collect();
        let g = e
            .gradient(&tape, &[s], &sources, None, Unconnected::Zero)
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        (values(&y), g.iter().flatten().map(values).collect())
    };
    let (y64, g64) = run(DType::F64);
    let (y32, g32) = run(DType::F32);
    let close = |what: &str, a: &[f64], b: &[f64]| {
        for (k, (p, q)) in a.iter().zip(b).enumerate() {
            assert!(
                (p - q).abs() <= 2e-5 * (1.0 + q.abs()),
                "{name} {what}[{k}]: float32 {p} vs float64 {q}"
            );
        }
    };
    close("value", &y32, &y64);
    for (a, b) in g32.iter().zip(&g64) {
        close("gradient", a, b);
    }
}

#[test]
fn matmul_on_the_device_gemm() {
    for (ta, tb) in [(false, false), (true, true)] {
        let ins = vec![
            uniform(&[2, 3, 4], 1, -1.0, 1.0),
            uniform(&[4, 3], 2, -1.0, 1.0),
        ];
        agree("matmul", ins, &|e, x| matmul(e, &x[0], &x[1], ta, tb));
    }
}

#[test]
fn activations_and_softmax_on_the_device() {
    // The approximate gelu has no device kernel; it runs on the host in both dtypes.
    for act in ACTIVATIONS {
        agree(act.name(), vec![away(&[4, 5], 3)], &|e, x| {
            let y = activate(e, act, &x[0])?;
            mul(e, &y, &x[0])
        });
    }
    for log in [false, true] {
        agree("softmax", vec![uniform(&[3, 5], 4, -3.0, 3.0)], &|e, x| {
            let y = softmax(e, &x[0], 0, log)?;
            mul(e, &y, &x[0])
        });
    }
}

#[test]
fn convolution_and_pooling_on_the_device() {
    let conv = Conv {
        strides: (2, 2),
        padding: Padding::Same,
    };
    let ins = vec![
        uniform(&[2, 5, 5, 3], 1, -1.0, 1.0),
        uniform(&[3, 3, 3, 4], 2, -1.0, 1.0),
    ];
    agree("conv2d", ins, &|e, x| conv2d(e, &x[0], &x[1], conv));
    let p = Pool {
        ksize: (3, 3),
        strides: (2, 2),
        padding: Padding::Same,
    };
    agree(
        "max_pool",
        vec![uniform(&[2, 5, 5, 3], 3, -1.0, 1.0)],
        &|e, x| pool(e, &x[0], p, true),
    );
}

#[test]
fn losses_on_the_device() {
    for kind in [
        Loss::MeanSquaredError,
        Loss::MeanAbsoluteError,
        Loss::Huber { delta: 0.5 },
        Loss::BinaryCrossentropy { from_logits: true },
        Loss::BinaryCrossentropy { from_logits: false },
        Loss::CategoricalCrossentropy { from_logits: true },
        Loss::CategoricalCrossentropy { from_logits: false },
    ] {
        let ins = vec![
            uniform(&[4, 3], 5, 0.0, 1.0),
            uniform(&[4, 3], 6, 0.05, 0.95),
        ];
        agree(kind.name(), ins, &|e, x| loss(e, kind, &x[0], &x[1]));
    }
    for from_logits in [true, false] {
        let kind = Loss::SparseCategoricalCrossentropy { from_logits };
        let ins = vec![
            ints(&[4], vec![2, 0, 1, 1]),
            uniform(&[4, 3], 7, 0.05, 0.95),
        ];
        agree(kind.name(), ins, &|e, x| loss(e, kind, &x[0], &x[1]));
    }
}

#[test]
fn dropout_matches_the_device_mask_in_both_dtypes() {
    let mut e = Eager::default();
    let x = NdArray::full(&[1000], 1.0, DType::F64).unwrap_or_else(|e| panic!("{e}"));
    let seed = Tensor::new(NdArray::from_i64(&[], vec![42]).unwrap_or_else(|e| panic!("{e}")));
    let op = || Op::Random(RandomOp::Dropout { rate: 0.25 });
    let y64 = e
        .execute1(op(), &[Tensor::new(x.clone()), seed.clone()])
        .unwrap_or_else(|e| panic!("{e}"));
    let y32 = e
        .execute1(op(), &[Tensor::new(x.astype(DType::F32)), seed])
        .unwrap_or_else(|e| panic!("{e}"));
    let (a, b) = (values(&y64), values(&y32));
    assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-6));
    let kept = a.iter().filter(|v| **v != 0.0).count();
    assert!(
        (700..800).contains(&kept),
        "kept {kept} of 1000 at rate 0.25"
    );
    assert!(a.iter().all(|v| *v == 0.0 || (v - 4.0 / 3.0).abs() < 1e-12));
}
