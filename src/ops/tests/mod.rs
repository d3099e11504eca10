//! Tests of the op library. Every gradient is checked against central finite differences
//! in float64 (`gradients.rs` per op, `second.rs` for second derivatives through nested
//! tapes); `device.rs` checks that the float32 device kernels agree with the float64 host
//! formulas; `tape.rs` checks what a tape records and answers. The helpers here build
//! inputs and run the checks.

mod device;
mod gradients;
mod second;
mod tape;

use super::{lock, mul, reduce_sum, Activation, Eager, Node, OpResult, Source, Tape, Tensor};
use crate::tensor::{NdArray, RandomState};

/// Every activation, each family's tests run over all of them.
pub(super) const ACTIVATIONS: [Activation; 10] = [
    Activation::Relu,
    Activation::Sigmoid,
    Activation::Tanh,
    Activation::Softplus,
    Activation::Elu,
    Activation::Selu,
    Activation::Gelu { approximate: false },
    Activation::Gelu { approximate: true },
    Activation::Swish,
    Activation::LeakyRelu { alpha: 0.2 },
];

/// Uniform values in `[lo, hi)` from a fixed seed.
pub(super) fn uniform(shape: &[usize], seed: u32, lo: f64, hi: f64) -> NdArray {
    let mut g = RandomState::new(seed);
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|_| lo + (hi - lo) * g.next_f64()).collect();
    NdArray::from_f64(shape, v).unwrap_or_else(|e| panic!("{e}"))
}

/// Values of either sign at least 0.2 away from zero, for ops with a kink there.
pub(super) fn away(shape: &[usize], seed: u32) -> NdArray {
    let mut g = RandomState::new(seed);
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|_| {
            let m = 0.2 + 0.8 * g.next_f64();
            if g.next_f64() < 0.5 {
                -m
            } else {
                m
            }
        })
        .collect();
    NdArray::from_f64(shape, v).unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn ints(shape: &[usize], v: Vec<i64>) -> NdArray {
    NdArray::from_i64(shape, v).unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn values(t: &Tensor) -> Vec<f64> {
    t.value().to_f64_vec().1
}

type Build<'a> = &'a dyn Fn(&mut Eager, &[Tensor]) -> OpResult<Vec<Tensor>>;

/// `sum_i <ys_i, ws_i>`: a scalar whose gradient exercises every output element with a
/// different weight.
fn weighted(e: &mut Eager, ys: &[Tensor], ws: &[Tensor]) -> OpResult<Tensor> {
    let mut total: Option<Tensor> = None;
    for (y, w) in ys.iter().zip(ws) {
        if !y.is_float() {
            continue;
        }
        let p = mul(e, y, w)?;
        let s = reduce_sum(e, &p, None, false)?;
        total = Some(match total {
            Some(t) => super::add(e, &t, &s)?,
            None => s,
        });
    }
    total.ok_or_else(|| super::OpError::internal("no float output"))
}

fn weights_for(e: &mut Eager, xs: &[Tensor], f: Build, seed: u32) -> Vec<Tensor> {
    let ys = f(e, xs).unwrap_or_else(|err| panic!("forward failed: {err}"));
    ys.iter()
        .enumerate()
        .map(|(i, y)| Tensor::new(uniform(y.shape(), seed + i as u32, -1.0, 1.0).astype(y.dtype())))
        .collect()
}

/// The gradients of `weighted(f(xs), ws)` with respect to the inputs marked in `diff`.
fn first_grads(
    e: &mut Eager,
    xs: &[Tensor],
    diff: &[bool],
    f: Build,
    ws: &[Tensor],
) -> Vec<Option<Tensor>> {
    let tape = Tape::new(false, true).shared();
    e.push_tape(tape.clone());
    for (x, d) in xs.iter().zip(diff) {
        if *d {
            lock(&tape).watch(x);
        }
    }
    let ys = f(e, xs).unwrap_or_else(|err| panic!("forward failed: {err}"));
    let l = weighted(e, &ys, ws).unwrap_or_else(|err| panic!("{err}"));
    e.pop_tape(&tape);
    let sources: Vec<Source> = xs.iter().map(|x| Source::Tensor(x.clone())).collect();
    e.gradient(&tape, &[l], &sources, None, super::Unconnected::None)
        .unwrap_or_else(|err| panic!("gradient failed: {err}"))
}

fn scalar_of(t: &Tensor) -> f64 {
    values(t).first().copied().unwrap_or(f64::NAN)
}

/// `xs` with element `j` of input `i` moved by `h`.
fn nudged(xs: &[Tensor], i: usize, j: usize, h: f64) -> Vec<Tensor> {
    let mut out = xs.to_vec();
    let (shape, mut v) = xs[i].value().to_f64_vec();
    v[j] += h;
    out[i] = Tensor::new(NdArray::from_f64(&shape, v).unwrap_or_else(|e| panic!("{e}")));
    out
}

fn assert_close(what: &str, analytic: &[f64], numeric: &[f64], tol: f64) {
    assert_eq!(analytic.len(), numeric.len(), "{what}: sizes differ");
    for (k, (a, n)) in analytic.iter().zip(numeric).enumerate() {
        let err = (a - n).abs();
        assert!(
            err <= tol * (1.0 + n.abs()),
            "{what}[{k}]: analytic {a} vs finite differences {n}\nanalytic {analytic:?}\nnumeric {numeric:?}"
        );
    }
}

const H: f64 = 1e-6;

/// Checks the gradient of `f` with respect to every input marked in `diff` against
/// central differences (inputs are float64).
pub(super) fn check(name: &str, inputs: Vec<NdArray>, diff: &[bool], f: Build) {
    let mut e = Eager::default();
    let xs: Vec<Tensor> = inputs.into_iter().map(Tensor::new).collect();
    let ws = weights_for(&mut e, &xs, f, 1000);
    let grads = first_grads(&mut e, &xs, diff, f, &ws);
    for (i, d) in diff.iter().enumerate() {
        if !d {
            continue;
        }
        let n = xs[i].size();
        let mut numeric = Vec::with_capacity(n);
        let at = |e: &mut Eager, h: f64, j: usize| -> f64 {
            let ys = f(e, &nudged(&xs, i, j, h)).unwrap_or_else(|err| panic!("{err}"));
            scalar_of(&weighted(e, &ys, &ws).unwrap_or_else(|err| panic!("{err}")))
        };
        for j in 0..n {
            numeric.push((at(&mut e, H, j) - at(&mut e, -H, j)) / (2.0 * H));
        }
        let analytic = match &grads[i] {
            Some(g) => {
                assert_eq!(
                    g.shape(),
                    xs[i].shape(),
                    "{name}: gradient {i} has the wrong shape"
                );
                values(g)
            }
            None => vec![0.0; n],
        };
        assert_close(&format!("{name} d/dx{i}"), &analytic, &numeric, 1e-6);
    }
}

/// Checks second derivatives: the gradient (through an outer tape) of the first
/// gradients, weighted, against central differences of the first gradients.
pub(super) fn check_second(name: &str, inputs: Vec<NdArray>, diff: &[bool], f: Build) {
    let mut e = Eager::default();
    let xs: Vec<Tensor> = inputs.into_iter().map(Tensor::new).collect();
    let ws = weights_for(&mut e, &xs, f, 2000);
    let ws2: Vec<Tensor> = xs
        .iter()
        .enumerate()
        .map(|(i, x)| Tensor::new(uniform(x.shape(), 3000 + i as u32, -1.0, 1.0)))
        .collect();
    let second = |e: &mut Eager, xs: &[Tensor]| -> f64 {
        let gs = first_grads(e, xs, diff, f, &ws);
        let mut total = 0.0;
        for (g, w) in gs.iter().zip(&ws2) {
            if let Some(g) = g {
                total += values(g)
                    .iter()
                    .zip(values(w))
                    .map(|(a, b)| a * b)
                    .sum::<f64>();
            }
        }
        total
    };
    let outer = Tape::new(false, true).shared();
    e.push_tape(outer.clone());
    for (x, d) in xs.iter().zip(diff) {
        if *d {
            lock(&outer).watch(x);
        }
    }
    let gs = first_grads(&mut e, &xs, diff, f, &ws);
    let present: Vec<Tensor> = gs.iter().flatten().cloned().collect();
    let wpresent: Vec<Tensor> = gs
        .iter()
        .zip(&ws2)
        .filter(|(g, _)| g.is_some())
        .map(|(_, w)| w.clone())
        .collect();
    let l2 = weighted(&mut e, &present, &wpresent).unwrap_or_else(|err| panic!("{err}"));
    e.pop_tape(&outer);
    let sources: Vec<Source> = xs.iter().map(|x| Source::Tensor(x.clone())).collect();
    let hv = e
        .gradient(&outer, &[l2], &sources, None, super::Unconnected::None)
        .unwrap_or_else(|err| panic!("{name}: second gradient failed: {err}"));
    for (i, d) in diff.iter().enumerate() {
        if !d {
            continue;
        }
        let n = xs[i].size();
        let numeric: Vec<f64> = (0..n)
            .map(|j| {
                (second(&mut e, &nudged(&xs, i, j, H)) - second(&mut e, &nudged(&xs, i, j, -H)))
                    / (2.0 * H)
            })
            .collect();
        let analytic = hv[i].as_ref().map_or(vec![0.0; n], values);
        assert_close(&format!("{name} second d/dx{i}"), &analytic, &numeric, 1e-5);
    }
}

/// Records `f` on a fresh tape watching `xs` and returns the tape's nodes.
pub(super) fn recorded(e: &mut Eager, xs: &[Tensor], f: Build) -> Vec<std::sync::Arc<Node>> {
    let tape = Tape::new(true, true).shared();
    e.push_tape(tape.clone());
    for x in xs {
        lock(&tape).watch(x);
    }
    f(e, xs).unwrap_or_else(|err| panic!("{err}"));
    e.pop_tape(&tape);
    let nodes = lock(&tape).nodes().to_vec();
    nodes
}
