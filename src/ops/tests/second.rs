//! Second derivatives through nested tapes: an outer tape records the inner tape's
//! gradient computation, and its gradient is compared with finite differences of the
//! inner gradient. Covers every op family whose gradient is itself built from ops.

use super::{away, check_second, ints, uniform};
use crate::ops::*;

fn one(t: OpResult<Tensor>) -> OpResult<Vec<Tensor>> {
    t.map(|t| vec![t])
}

#[test]
fn elementwise_and_activations() {
    for op in [Unary::Exp, Unary::Sin, Unary::Erf, Unary::Square] {
        check_second(
            op.name(),
            vec![uniform(&[2, 3], 1, -1.0, 1.0)],
            &[true],
            &|e, x| one(unary(e, op, &x[0])),
        );
    }
    for op in [Unary::Log, Unary::Sqrt, Unary::Rsqrt, Unary::Reciprocal] {
        check_second(
            op.name(),
            vec![uniform(&[2, 3], 2, 0.5, 2.0)],
            &[true],
            &|e, x| one(unary(e, op, &x[0])),
        );
    }
    let ins = vec![uniform(&[2, 3], 3, 0.5, 2.0), uniform(&[3], 4, -1.0, 1.0)];
    check_second("Pow", ins.clone(), &[true, true], &|e, x| {
        one(binary(e, Binary::Pow, &x[0], &x[1]))
    });
    check_second("RealDiv", ins.clone(), &[true, true], &|e, x| {
        one(div(e, &x[1], &x[0]))
    });
    check_second("Mul", ins, &[true, true], &|e, x| one(mul(e, &x[0], &x[1])));
    for act in super::ACTIVATIONS {
        check_second(act.name(), vec![away(&[3, 4], 5)], &[true], &|e, x| {
            let y = activate(e, act, &x[0])?;
            // Times x, so that even piecewise-linear activations have a second derivative.
            one(mul(e, &y, &x[0]))
        });
    }
    for log in [false, true] {
        for axis in [-1, 0] {
            check_second(
                "Softmax",
                vec![uniform(&[3, 4], 6, -2.0, 2.0)],
                &[true],
                &|e, x| one(softmax(e, &x[0], axis, log)),
            );
        }
    }
}

#[test]
fn an_mlp_with_softmax_cross_entropy() {
    // x @ w1 -> tanh -> @ w2 -> sparse softmax cross-entropy: Hessian-vector products with
    // respect to both weight matrices.
    let ins = vec![
        uniform(&[4, 3], 1, -1.0, 1.0),
        uniform(&[3, 5], 2, -1.0, 1.0),
        uniform(&[3, 5], 3, -1.0, 1.0),
        ints(&[4], vec![0, 2, 1, 2]),
    ];
    check_second("mlp", ins, &[false, true, true, false], &|e, x| {
        let h = matmul(e, &x[0], &x[1], false, false)?;
        let h = activate(e, Activation::Tanh, &h)?;
        let z = matmul(e, &h, &x[2], false, true)?;
        let z = transpose(e, &z, &[1, 0])?;
        let z = transpose(e, &z, &[1, 0])?;
        let l = loss(e, Loss::SparseSoftmaxCrossEntropyWithLogits, &x[3], &z)?;
        one(reduce_mean(e, &l, None, false))
    });
}

#[test]
fn losses() {
    let cases: Vec<(Loss, crate::tensor::NdArray, crate::tensor::NdArray)> = vec![
        (
            Loss::MeanSquaredError,
            uniform(&[3, 4], 1, -1.0, 1.0),
            uniform(&[3, 4], 2, -1.0, 1.0),
        ),
        (
            Loss::CategoricalCrossentropy { from_logits: true },
            uniform(&[3, 4], 3, 0.0, 1.0),
            uniform(&[3, 4], 4, -2.0, 2.0),
        ),
        (
            Loss::CategoricalCrossentropy { from_logits: false },
            uniform(&[3, 4], 5, 0.0, 1.0),
            uniform(&[3, 4], 6, 0.1, 0.9),
        ),
        (
            Loss::BinaryCrossentropy { from_logits: true },
            uniform(&[3, 4], 7, 0.0, 1.0),
            uniform(&[3, 4], 8, -2.0, 2.0),
        ),
        (
            Loss::BinaryCrossentropy { from_logits: false },
            uniform(&[3, 4], 9, 0.0, 1.0),
            uniform(&[3, 4], 10, 0.1, 0.9),
        ),
    ];
    for (kind, t, p) in cases {
        check_second(kind.name(), vec![t, p], &[true, true], &|e, x| {
            one(loss(e, kind, &x[0], &x[1]))
        });
    }
    for from_logits in [true, false] {
        let kind = Loss::SparseCategoricalCrossentropy { from_logits };
        let p = if from_logits {
            uniform(&[3, 4], 11, -2.0, 2.0)
        } else {
            uniform(&[3, 4], 12, 0.1, 0.9)
        };
        check_second(
            kind.name(),
            vec![ints(&[3], vec![3, 0, 1]), p],
            &[false, true],
            &|e, x| one(loss(e, kind, &x[0], &x[1])),
        );
    }
}

#[test]
fn convolution_pooling_and_selection() {
    let conv = Conv {
        strides: (2, 1),
        padding: Padding::Same,
    };
    let ins = vec![
        uniform(&[1, 4, 3, 2], 1, -1.0, 1.0),
        uniform(&[2, 2, 2, 2], 2, -1.0, 1.0),
    ];
    check_second("Conv2D", ins, &[true, true], &|e, x| {
        let y = conv2d(e, &x[0], &x[1], conv)?;
        one(activate(e, Activation::Tanh, &y))
    });
    let distinct: Vec<f64> = (0..16).map(|i| ((i * 7) % 16) as f64 / 4.0 - 2.0).collect();
    let x =
        crate::tensor::NdArray::from_f64(&[1, 4, 4, 1], distinct).unwrap_or_else(|e| panic!("{e}"));
    let p = Pool {
        ksize: (2, 2),
        strides: (2, 2),
        padding: Padding::Valid,
    };
    check_second("MaxPool", vec![x.clone()], &[true], &|e, x| {
        let y = pool(e, &x[0], p, true)?;
        one(mul(e, &y, &y))
    });
    check_second("AvgPool", vec![x], &[true], &|e, x| {
        let y = pool(e, &x[0], p, false)?;
        one(mul(e, &y, &y))
    });
    let ins = vec![uniform(&[3, 4], 3, -1.0, 1.0), ints(&[3], vec![2, 0, 2])];
    check_second("GatherV2", ins, &[true, false], &|e, x| {
        let g = gather(e, &x[0], &x[1], 0)?;
        one(mul(e, &g, &g))
    });
    let spec = [SliceItem::Range(None, None, Some(2)), SliceItem::Index(1)];
    check_second(
        "StridedSlice",
        vec![uniform(&[3, 4], 4, -1.0, 1.0)],
        &[true],
        &|e, x| {
            let s = strided_slice(e, &x[0], &spec)?;
            one(mul(e, &s, &s))
        },
    );
    check_second("reduce_max", vec![away(&[3, 4], 5)], &[true], &|e, x| {
        let sq = mul(e, &x[0], &x[0])?;
        one(reduce(e, &sq, ReduceKind::Max, Some(vec![1]), false))
    });
}
