//! Every differentiable op's vector-Jacobian product against central finite differences
//! in float64, including broadcast operands (whose gradients are summed back to their
//! shapes) and integer inputs (which get none).

use super::{away, check, ints, uniform};
use crate::ops::*;

fn one(t: OpResult<Tensor>) -> OpResult<Vec<Tensor>> {
    t.map(|t| vec![t])
}

#[test]
fn unary_math() {
    let pos = || uniform(&[2, 3], 1, 0.3, 2.0);
    for op in [
        Unary::Neg,
        Unary::Square,
        Unary::Exp,
        Unary::Expm1,
        Unary::Sin,
        Unary::Cos,
        Unary::Tan,
        Unary::Erf,
    ] {
        check(
            op.name(),
            vec![uniform(&[2, 3], 2, -1.0, 1.0)],
            &[true],
            &|e, x| one(unary(e, op, &x[0])),
        );
    }
    for op in [
        Unary::Sqrt,
        Unary::Rsqrt,
        Unary::Reciprocal,
        Unary::Log,
        Unary::Log1p,
    ] {
        check(op.name(), vec![pos()], &[true], &|e, x| {
            one(unary(e, op, &x[0]))
        });
    }
    check("Abs", vec![away(&[2, 3], 3)], &[true], &|e, x| {
        one(unary(e, Unary::Abs, &x[0]))
    });
    // Sign, Floor and Round are flat: zero gradient (sign) or none (floor, round).
    check("Sign", vec![away(&[4], 4)], &[true], &|e, x| {
        one(unary(e, Unary::Sign, &x[0]))
    });
    check(
        "Floor",
        vec![uniform(&[4], 5, 0.1, 0.9)],
        &[true],
        &|e, x| one(unary(e, Unary::Floor, &x[0])),
    );
}

#[test]
fn binary_arithmetic_with_broadcasting() {
    let shapes: [(&[usize], &[usize]); 4] = [
        (&[2, 3], &[2, 3]),
        (&[2, 3], &[3]),
        (&[2, 1], &[1, 3]),
        (&[], &[2, 3]),
    ];
    for (i, (sa, sb)) in shapes.iter().enumerate() {
        let seed = 10 * i as u32;
        for op in [
            Binary::Add,
            Binary::Sub,
            Binary::Mul,
            Binary::SquaredDifference,
        ] {
            let ins = vec![
                uniform(sa, seed, -1.0, 1.0),
                uniform(sb, seed + 1, -1.0, 1.0),
            ];
            check(op.name(), ins, &[true, true], &|e, x| {
                one(binary(e, op, &x[0], &x[1]))
            });
        }
        let ins = vec![
            uniform(sa, seed, -1.0, 1.0),
            uniform(sb, seed + 1, 0.5, 2.0),
        ];
        check("RealDiv", ins, &[true, true], &|e, x| {
            one(div(e, &x[0], &x[1]))
        });
        let ins = vec![
            uniform(sa, seed, 0.5, 2.0),
            uniform(sb, seed + 1, -1.5, 1.5),
        ];
        check("Pow", ins, &[true, true], &|e, x| {
            one(binary(e, Binary::Pow, &x[0], &x[1]))
        });
        // Distinct values, so no ties at the selector.
        let ins = vec![away(sa, seed + 2), uniform(sb, seed + 3, -0.15, 0.15)];
        for op in [Binary::Maximum, Binary::Minimum] {
            check(op.name(), ins.clone(), &[true, true], &|e, x| {
                one(binary(e, op, &x[0], &x[1]))
            });
        }
    }
    let ins = vec![uniform(&[5], 40, 0.1, 3.9), uniform(&[5], 41, 1.1, 1.9)];
    check("FloorMod", ins, &[true, true], &|e, x| {
        one(binary(e, Binary::FloorMod, &x[0], &x[1]))
    });
}

#[test]
fn pointwise_ops() {
    let ins = vec![uniform(&[2, 3], 1, -1.0, 1.0), uniform(&[3], 2, -1.0, 1.0)];
    check("SelectV2", ins, &[true, true], &|e, x| {
        let zero = zeros_like(e, &x[0])?;
        let c = binary(e, Binary::Greater, &x[0], &zero)?;
        one(select(e, &c, &x[0], &x[1]))
    });
    let ins = vec![
        uniform(&[2, 3], 3, -1.0, 1.0),
        uniform(&[2, 3], 4, -1.0, 1.0),
        uniform(&[2, 3], 5, -1.0, 1.0),
    ];
    check("AddN", ins, &[true, true, true], &|e, x| one(add_n(e, x)));
    check(
        "Identity",
        vec![uniform(&[3], 6, -1.0, 1.0)],
        &[true],
        &|e, x| one(identity(e, &x[0])),
    );
    let ins = vec![
        uniform(&[2, 3], 9, -2.0, 2.0),
        uniform(&[3], 10, -1.0, -0.5),
        uniform(&[], 11, 0.5, 1.0),
    ];
    check("clip_by_value", ins, &[true, true, true], &|e, x| {
        one(clip_by_value(e, &x[0], &x[1], &x[2]))
    });
}

#[test]
fn activations() {
    for act in super::ACTIVATIONS {
        check(act.name(), vec![away(&[3, 4], 7)], &[true], &|e, x| {
            one(activate(e, act, &x[0]))
        });
    }
    for log in [false, true] {
        for axis in [-1, 0] {
            check(
                "Softmax",
                vec![uniform(&[3, 4], 8, -2.0, 2.0)],
                &[true],
                &|e, x| one(softmax(e, &x[0], axis, log)),
            );
        }
    }
}

#[test]
fn matmul_all_transposes_and_batches() {
    for (ta, tb) in [(false, false), (false, true), (true, false), (true, true)] {
        let a = if ta { [3, 2] } else { [2, 3] };
        let b = if tb { [4, 3] } else { [3, 4] };
        let ins = vec![uniform(&a, 1, -1.0, 1.0), uniform(&b, 2, -1.0, 1.0)];
        check("MatMul", ins, &[true, true], &|e, x| {
            one(matmul(e, &x[0], &x[1], ta, tb))
        });
        // Batched, with the second operand broadcast over the batch.
        let ins = vec![
            uniform(&[2, a[0], a[1]], 3, -1.0, 1.0),
            uniform(&b, 4, -1.0, 1.0),
        ];
        check("BatchMatMulV2", ins, &[true, true], &|e, x| {
            one(matmul(e, &x[0], &x[1], ta, tb))
        });
    }
    let ins = vec![
        uniform(&[2, 1, 2, 3], 5, -1.0, 1.0),
        uniform(&[3, 3, 2], 6, -1.0, 1.0),
    ];
    check("BatchMatMulV2 broadcast", ins, &[true, true], &|e, x| {
        one(matmul(e, &x[0], &x[1], false, false))
    });
}

#[test]
fn reductions() {
    for kind in [
        ReduceKind::Sum,
        ReduceKind::Mean,
        ReduceKind::Prod,
        ReduceKind::Max,
        ReduceKind::Min,
    ] {
        for (axes, keep) in [
            (None, false),
            (Some(vec![1]), false),
            (Some(vec![0, 2]), true),
            (Some(vec![-1]), true),
        ] {
            let x = uniform(&[2, 3, 4], 3, 0.5, 1.5);
            check("reduce", vec![x], &[true], &|e, x| {
                one(reduce(e, &x[0], kind, axes.clone(), keep))
            });
        }
    }
    // Ties share the gradient of a max equally, as TF divides it.
    let x = crate::tensor::NdArray::from_f64(&[4], vec![1.0, 3.0, 3.0, 2.0])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut e = Eager::default();
    let xt = Tensor::new(x);
    let tape = Tape::new(false, true).shared();
    e.push_tape(tape.clone());
    lock(&tape).watch(&xt);
    let m = reduce(&mut e, &xt, ReduceKind::Max, None, false).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&tape);
    let g = e
        .gradient(&tape, &[m], &[Source::Tensor(xt)], None, Unconnected::None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        g[0].as_ref().map(super::values),
        Some(vec![0.0, 0.5, 0.5, 0.0])
    );
    // A product with a zero still has exact gradients.
    let x = crate::tensor::NdArray::from_f64(&[3], vec![2.0, 0.0, 3.0])
        .unwrap_or_else(|e| panic!("{e}"));
    check("Prod with a zero", vec![x], &[true], &|e, x| {
        one(reduce(e, &x[0], ReduceKind::Prod, None, false))
    });
}

#[test]
fn shape_ops() {
    let x = || uniform(&[2, 3, 4], 1, -1.0, 1.0);
    check("Reshape", vec![x()], &[true], &|e, x| {
        one(reshape(e, &x[0], &[4, -1]))
    });
    check("Transpose", vec![x()], &[true], &|e, x| {
        one(transpose(e, &x[0], &[2, 0, 1]))
    });
    check("ExpandDims", vec![x()], &[true], &|e, x| {
        one(expand_dims(e, &x[0], 1))
    });
    check(
        "Squeeze",
        vec![uniform(&[2, 1, 3], 2, -1.0, 1.0)],
        &[true],
        &|e, x| one(squeeze(e, &x[0], &[1])),
    );
    check(
        "BroadcastTo",
        vec![uniform(&[3, 1], 3, -1.0, 1.0)],
        &[true],
        &|e, x| one(broadcast_to(e, &x[0], &[2, 3, 4])),
    );
    let ins = vec![x(), uniform(&[2, 1, 4], 4, -1.0, 1.0)];
    check("ConcatV2", ins, &[true, true], &|e, x| one(concat(e, x, 1)));
    let ins = vec![x(), uniform(&[2, 3, 4], 5, -1.0, 1.0)];
    check("Pack", ins, &[true, true], &|e, x| one(stack(e, x, 2)));
    check("Unpack", vec![x()], &[true], &|e, x| unstack(e, &x[0], 1));
    check("Split", vec![x()], &[true], &|e, x| {
        split(e, &x[0], 2, SplitSizes::Even(2))
    });
    check("SplitV", vec![x()], &[true], &|e, x| {
        split(e, &x[0], 1, SplitSizes::Sizes(vec![1, -1]))
    });
    // Only some outputs of a split used: the others get zero gradient.
    check("Split partly used", vec![x()], &[true], &|e, x| {
        let parts = split(e, &x[0], 0, SplitSizes::Even(2))?;
        Ok(parts.into_iter().take(1).collect())
    });
}

#[test]
fn selection_ops() {
    let x = || uniform(&[3, 4], 1, -1.0, 1.0);
    let spec = [
        SliceItem::Range(Some(1), None, None),
        SliceItem::Range(None, None, Some(-2)),
    ];
    check("StridedSlice", vec![x()], &[true], &|e, x| {
        one(strided_slice(e, &x[0], &spec))
    });
    let spec = [
        SliceItem::Ellipsis,
        SliceItem::Index(-1),
        SliceItem::NewAxis,
    ];
    check("StridedSlice index", vec![x()], &[true], &|e, x| {
        one(strided_slice(e, &x[0], &spec))
    });
    check("Slice", vec![x()], &[true], &|e, x| {
        one(slice(e, &x[0], &[1, 1], &[2, -1]))
    });
    // Repeated indices add up.
    let ins = vec![x(), ints(&[2, 2], vec![2, 0, 2, 2])];
    check("GatherV2", ins.clone(), &[true, false], &|e, x| {
        one(gather(e, &x[0], &x[1], 0))
    });
    check("GatherV2 axis 1", ins, &[true, false], &|e, x| {
        one(gather(e, &x[0], &x[1], 1))
    });
}

#[test]
fn windows() {
    for padding in [Padding::Same, Padding::Valid] {
        for strides in [(1, 1), (2, 2), (1, 2)] {
            let conv = Conv { strides, padding };
            let ins = vec![
                uniform(&[2, 5, 4, 2], 1, -1.0, 1.0),
                uniform(&[3, 2, 2, 3], 2, -1.0, 1.0),
            ];
            check("Conv2D", ins, &[true, true], &|e, x| {
                one(conv2d(e, &x[0], &x[1], conv))
            });
            let p = Pool {
                ksize: (2, 3),
                strides,
                padding,
            };
            // Distinct values: no ties inside a window.
            let distinct: Vec<f64> = (0..2 * 5 * 4 * 2)
                .map(|i| ((i * 37) % 80) as f64 / 10.0)
                .collect();
            let x = crate::tensor::NdArray::from_f64(&[2, 5, 4, 2], distinct)
                .unwrap_or_else(|e| panic!("{e}"));
            check("MaxPool", vec![x], &[true], &|e, x| {
                one(pool(e, &x[0], p, true))
            });
            check(
                "AvgPool",
                vec![uniform(&[2, 5, 4, 2], 3, -1.0, 1.0)],
                &[true],
                &|e, x| one(pool(e, &x[0], p, false)),
            );
        }
    }
}

#[test]
fn losses() {
    let soft = || uniform(&[3, 4], 3, 0.0, 1.0);
    let cases: Vec<(Loss, fn() -> crate::tensor::NdArray)> = vec![
        (Loss::MeanSquaredError, || uniform(&[3, 4], 2, -2.0, 2.0)),
        (Loss::MeanAbsoluteError, || uniform(&[3, 4], 2, -2.0, 2.0)),
        (Loss::Huber { delta: 0.7 }, || {
            uniform(&[3, 4], 2, -2.0, 2.0)
        }),
        (Loss::BinaryCrossentropy { from_logits: true }, || {
            uniform(&[3, 4], 2, -2.0, 2.0)
        }),
        (Loss::BinaryCrossentropy { from_logits: false }, || {
            uniform(&[3, 4], 1, 0.05, 0.95)
        }),
        (Loss::CategoricalCrossentropy { from_logits: true }, || {
            uniform(&[3, 4], 2, -2.0, 2.0)
        }),
        (Loss::CategoricalCrossentropy { from_logits: false }, || {
            uniform(&[3, 4], 1, 0.05, 0.95)
        }),
        (Loss::SigmoidCrossEntropyWithLogits, || {
            uniform(&[3, 4], 2, -2.0, 2.0)
        }),
        (Loss::SoftmaxCrossEntropyWithLogits, || {
            uniform(&[3, 4], 2, -2.0, 2.0)
        }),
    ];
    for (kind, pred) in cases {
        // Targets are differentiable too (TF differentiates Keras's composite losses in
        // both arguments); their values stay away from the MAE and Huber kinks.
        let target = match kind {
            Loss::MeanAbsoluteError | Loss::Huber { .. } => uniform(&[3, 4], 9, 2.5, 3.0),
            // TF's kernel gradient is softmax - labels, the true derivative for labels that
            // sum to one per row (as one-hot or smoothed labels do).
            Loss::CategoricalCrossentropy { from_logits: true }
            | Loss::SoftmaxCrossEntropyWithLogits => {
                let t = soft();
                let s = t
                    .reduce(crate::tensor::Reduction::Sum, Some(&[1]), true, 0.0)
                    .unwrap_or_else(|e| panic!("{e}"));
                crate::tensor::ops::binary(
                    crate::tensor::ops::Operand::Arr(&t),
                    crate::tensor::ops::Operand::Arr(&s),
                    crate::tensor::BinaryOp::Div,
                )
                .unwrap_or_else(|e| panic!("{e}"))
            }
            _ => soft(),
        };
        check(kind.name(), vec![target, pred()], &[true, true], &|e, x| {
            one(loss(e, kind, &x[0], &x[1]))
        });
    }
    // Huber on both sides of delta.
    let ins = vec![
        uniform(&[2, 6], 4, -0.1, 0.1),
        uniform(&[2, 6], 5, -2.0, 2.0),
    ];
    check("Huber both sides", ins, &[true, true], &|e, x| {
        one(loss(e, Loss::Huber { delta: 1.0 }, &x[0], &x[1]))
    });
    // Probabilities outside the clip range get no gradient, and the loss stays finite.
    let p = crate::tensor::NdArray::from_f64(&[1, 3], vec![-0.5, 0.5, 1.5])
        .unwrap_or_else(|e| panic!("{e}"));
    let ins = vec![uniform(&[1, 3], 9, 0.0, 1.0), p];
    check("BinaryCrossentropy clipped", ins, &[true, true], &|e, x| {
        one(loss(
            e,
            Loss::BinaryCrossentropy { from_logits: false },
            &x[0],
            &x[1],
        ))
    });
    for kind in [
        Loss::SparseCategoricalCrossentropy { from_logits: true },
        Loss::SparseCategoricalCrossentropy { from_logits: false },
        Loss::SparseSoftmaxCrossEntropyWithLogits,
    ] {
        let pred = if kind == (Loss::SparseCategoricalCrossentropy { from_logits: false }) {
            uniform(&[3, 4], 1, 0.05, 0.95)
        } else {
            uniform(&[3, 4], 2, -2.0, 2.0)
        };
        let ins = vec![ints(&[3], vec![0, 3, 1]), pred];
        check(kind.name(), ins, &[false, true], &|e, x| {
            one(loss(e, kind, &x[0], &x[1]))
        });
    }
    // A batch of sequences: one loss per (example, step).
    let ins = vec![
        ints(&[2, 3], vec![0, 1, 2, 2, 1, 0]),
        uniform(&[2, 3, 3], 6, -1.0, 1.0),
    ];
    let kind = Loss::SparseCategoricalCrossentropy { from_logits: true };
    check("sparse over a sequence", ins, &[false, true], &|e, x| {
        one(loss(e, kind, &x[0], &x[1]))
    });
}

#[test]
fn dropout_uses_one_mask_forward_and_backward() {
    let seeds = SeedStream::new(7);
    let mut e = Eager::default();
    let seed = e
        .execute1(Op::Random(RandomOp::NextSeed(seeds)), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let ins = vec![uniform(&[4, 5], 1, -1.0, 1.0), seed.value().clone()];
    check("Dropout", ins, &[true, false], &|e, x| {
        one(e.execute1(Op::Random(RandomOp::Dropout { rate: 0.4 }), x))
    });
}

#[test]
fn normalization_over_the_batch_and_over_features() {
    // A batch normalization in training: moments over every axis but the features, then
    // the scale and offset of the feature axis.
    let ins = vec![
        uniform(&[4, 2, 3], 60, -1.0, 1.0),
        uniform(&[3], 61, 0.5, 1.5),
        uniform(&[3], 62, -1.0, 1.0),
    ];
    check("BatchNormalization", ins, &[true, true, true], &|e, x| {
        let (mean, var) = moments(e, &x[0], &[0, 1], false)?;
        one(batch_normalization(
            e,
            &x[0],
            &mean,
            &var,
            Some(&x[2]),
            Some(&x[1]),
            1e-3,
        ))
    });
    // A layer normalization: each example's own moments, kept for broadcasting.
    let ins = vec![uniform(&[3, 5], 63, -2.0, 2.0), uniform(&[5], 64, 0.5, 1.5)];
    check("LayerNormalization", ins, &[true, true], &|e, x| {
        let (mean, var) = moments(e, &x[0], &[1], true)?;
        one(batch_normalization(
            e,
            &x[0],
            &mean,
            &var,
            None,
            Some(&x[1]),
            1e-2,
        ))
    });
}

#[test]
fn keras_rectifiers_with_their_arguments() {
    // (negative_slope, max_value, threshold): each branch Keras's relu takes.
    let cases: [(f64, Option<f64>, f64); 6] = [
        (0.0, None, 0.0),
        (0.2, None, 0.0),
        (0.0, Some(6.0), 0.0),
        (0.0, Some(0.7), 0.0),
        (0.0, None, 0.5),
        (0.1, Some(0.9), 0.5),
    ];
    for (slope, max, threshold) in cases {
        let x = away(&[3, 4], 80);
        check("KerasRelu", vec![x], &[true], &|e, x| {
            one(keras_relu(e, &x[0], slope, max, threshold))
        });
    }
    for alpha in [1.0, 0.5] {
        check("KerasElu", vec![away(&[3, 4], 81)], &[true], &|e, x| {
            one(keras_elu(e, &x[0], alpha))
        });
    }
}

#[test]
fn global_and_one_dimensional_pooling() {
    for (max, keepdims) in [(false, false), (true, false), (false, true), (true, true)] {
        for shape in [&[2, 3, 4][..], &[2, 3, 2, 4][..]] {
            check(
                "GlobalPool",
                vec![uniform(shape, 82, -1.0, 1.0)],
                &[true],
                &|e, x| one(global_pool(e, &x[0], max, keepdims)),
            );
        }
    }
    for (size, stride, padding) in [
        (2, 2, Padding::Valid),
        (3, 2, Padding::Same),
        (3, 1, Padding::Valid),
    ] {
        for max in [false, true] {
            check(
                "Pool1D",
                vec![uniform(&[2, 7, 3], 83, -1.0, 1.0)],
                &[true],
                &|e, x| one(pool1d(e, &x[0], size, stride, padding, max)),
            );
        }
    }
}

/// The one-dimensional convolution under every padding, a stride and a dilation: the
/// gradient with respect to the input and the kernel against finite differences.
#[test]
fn one_dimensional_convolution() {
    for (stride, padding, dilation) in [
        (1, Conv1dPadding::Valid, 1),
        (2, Conv1dPadding::Same, 1),
        (1, Conv1dPadding::Causal, 2),
        (1, Conv1dPadding::Same, 3),
        (3, Conv1dPadding::Causal, 1),
    ] {
        check(
            "Conv1D",
            vec![
                uniform(&[2, 7, 3], 85, -1.0, 1.0),
                uniform(&[3, 3, 2], 86, -1.0, 1.0),
            ],
            &[true, true],
            &|e, x| one(conv1d(e, &x[0], &x[1], stride, padding, dilation)),
        );
    }
}

#[test]
fn nearest_upsampling_and_zero_padding() {
    for (rows, cols) in [(2, 2), (1, 3)] {
        check(
            "UpSampling2D",
            vec![uniform(&[2, 3, 2, 2], 84, -1.0, 1.0)],
            &[true],
            &|e, x| one(upsample_nearest(e, &x[0], rows, cols)),
        );
    }
    for (r, c) in [((1, 1), (1, 1)), ((2, 0), (0, 0)), ((1, 0), (0, 2))] {
        check(
            "ZeroPadding2D",
            vec![uniform(&[2, 3, 2, 2], 85, -1.0, 1.0)],
            &[true],
            &|e, x| one(zero_pad2d(e, &x[0], r, c)),
        );
    }
}

#[test]
fn recurrent_cells_through_time() {
    let tanh = |e: &mut Eager, x: &Tensor| activate(e, Activation::Tanh, x);
    let sigmoid = |e: &mut Eager, x: &Tensor| activate(e, Activation::Sigmoid, x);
    let cells = [
        Cell::Simple,
        Cell::Lstm,
        Cell::Gru { reset_after: true },
        Cell::Gru { reset_after: false },
    ];
    // (go_backwards, return_sequences, masked, initial states given)
    let runs = [
        (false, false, false, false),
        (true, true, false, true),
        (false, true, true, false),
        (true, false, true, true),
    ];
    for cell in cells {
        for (backwards, sequences, masked, given) in runs {
            let (units, feats, g) = (2, 3, cell.gates());
            let bias = match cell {
                Cell::Gru { reset_after: true } => vec![2, 3 * units],
                _ => vec![g * units],
            };
            let mut ins = vec![
                uniform(&[2, 3, feats], 90, -1.0, 1.0),
                uniform(&[feats, g * units], 91, -0.8, 0.8),
                uniform(&[units, g * units], 92, -0.8, 0.8),
                uniform(&bias, 93, -0.5, 0.5),
            ];
            if given {
                for s in 0..cell.states() {
                    ins.push(uniform(&[2, units], 94 + s as u32, -0.5, 0.5));
                }
            }
            let diff = vec![true; ins.len()];
            let name =
                format!("{cell:?} backwards={backwards} sequences={sequences} masked={masked}");
            check(&name, ins, &diff, &|e, x| {
                let r = Recurrence {
                    cell,
                    activation: &tanh,
                    recurrent_activation: &sigmoid,
                    go_backwards: backwards,
                    return_sequences: sequences,
                    zero_output_for_mask: false,
                };
                let w = CellWeights {
                    kernel: &x[1],
                    recurrent_kernel: &x[2],
                    bias: Some(&x[3]),
                };
                // The middle step of the first example and the first of the second are
                // masked: their states pass through unchanged.
                let mask = Tensor::new(
                    crate::tensor::NdArray::from_f64(&[2, 3], vec![1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
                        .map_err(OpError::internal)?
                        .astype(crate::tensor::DType::Bool),
                );
                let (y, states) = recurrence(e, &r, &x[0], &w, &x[4..], masked.then_some(&mask))?;
                let mut out = vec![y];
                out.extend(states);
                Ok(out)
            });
        }
    }
}
