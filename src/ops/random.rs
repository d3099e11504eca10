//! Random ops: dropout, uniform and normal samples, and the stateful seed stream they
//! draw from. A random op takes its seed as an input tensor produced by `NextSeed`, an op
//! with shared state: run again (eagerly, or as a node of a traced graph replayed on a
//! later step) it yields the next seed, so every call draws fresh values while a fixed
//! starting seed makes a whole run reproducible.
//!
//! Dropout masks come from the device's counter-based generator (`dropout_uniform`), the
//! one the compiled Dropout layer uses; uniform and normal samples from numpy's MT19937
//! stream seeded per call. Values are not TensorFlow's (its Philox streams are not
//! reproduced), only their distributions, shapes and dtypes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::device_io::{download, upload};
use super::eager::Eager;
use super::error::{ErrorClass, OpError, OpResult, FLOAT};
use super::op::{inputs, node_inputs, Op};
use super::tape::Node;
use super::tensor::Tensor;
use crate::device::cpu::dropout_uniform;
use crate::device::Device;
use crate::tensor::{DType, NdArray, RandomState};

/// A shared, advancing source of seeds.
#[derive(Debug, Clone)]
pub struct SeedStream(Arc<SeedState>);

#[derive(Debug)]
struct SeedState {
    base: u64,
    next: AtomicU64,
}

/// SplitMix64's finaliser, to spread consecutive counters over the seed space.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SeedStream {
    pub fn new(base: u64) -> SeedStream {
        SeedStream(Arc::new(SeedState {
            base,
            next: AtomicU64::new(0),
        }))
    }

    /// The next seed of the stream.
    pub fn next(&self) -> u64 {
        let n = self.0.next.fetch_add(1, Ordering::Relaxed);
        mix(self.0.base ^ mix(n.wrapping_add(0x9E37_79B9_7F4A_7C15)))
    }
}

/// The random ops.
#[derive(Debug, Clone)]
pub enum RandomOp {
    /// No inputs: the next seed of the stream, as an int64 scalar.
    NextSeed(SeedStream),
    /// Inputs `[x, seed]`: each element kept with probability `1 - rate` and scaled by
    /// `1 / (1 - rate)`, else zero.
    Dropout { rate: f64 },
    /// Input `[seed]`: uniform in `[minval, maxval)`.
    Uniform {
        shape: Vec<usize>,
        dtype: DType,
        minval: f64,
        maxval: f64,
    },
    /// Input `[seed]`: normal with `mean` and `stddev`.
    Normal {
        shape: Vec<usize>,
        dtype: DType,
        mean: f64,
        stddev: f64,
    },
}

fn seed_of(op: &str, s: &NdArray) -> OpResult<u64> {
    match (s.dtype().is_int(), s.scalar_at(0)) {
        (true, Some(v)) if s.size() == 1 => Ok(v.as_i64() as u64),
        _ => Err(OpError::new(
            ErrorClass::InvalidArgument,
            format!("{op} expects an integer scalar seed"),
        )),
    }
}

fn generator(seed: u64) -> RandomState {
    RandomState::new((seed ^ (seed >> 32)) as u32)
}

impl RandomOp {
    pub fn name(&self) -> &'static str {
        match self {
            RandomOp::NextSeed(_) => "NextSeed",
            RandomOp::Dropout { .. } => "Dropout",
            RandomOp::Uniform { .. } => "RandomUniform",
            RandomOp::Normal { .. } => "RandomStandardNormal",
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let op = self.name();
        let dn = dev.name();
        let tensor = |e| OpError::from_tensor(op, &dn, e);
        Ok(vec![match self {
            RandomOp::NextSeed(stream) => {
                inputs::<0>(op, given)?;
                NdArray::from_i64(&[], vec![stream.next() as i64]).map_err(tensor)?
            }
            RandomOp::Dropout { rate } => {
                let [x, s] = inputs::<2>(op, given)?;
                if !x.dtype().is_float() {
                    return Err(OpError::attr_dtype(
                        op,
                        "x:T, seed:int64 -> y:T",
                        x.dtype(),
                        FLOAT,
                    ));
                }
                let seed = seed_of(op, s)?;
                if x.dtype() == DType::F32 {
                    let xt = upload(dev, x, x.shape())?;
                    let mut mask = dev.zeros(x.shape())?;
                    dev.dropout_mask(seed, *rate as f32, &mut mask)?;
                    let mut y = dev.zeros(x.shape())?;
                    dev.mul(&xt, &mask, &mut y)?;
                    download(dev, &y, op)?
                } else {
                    let keep = 1.0 / (1.0 - rate);
                    let (shape, v) = x.to_f64_vec();
                    let out: Vec<f64> = v
                        .iter()
                        .enumerate()
                        .map(|(i, &xv)| {
                            if f64::from(dropout_uniform(seed, i as u64)) >= *rate {
                                xv * keep
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    NdArray::from_f64(&shape, out)
                        .map_err(tensor)?
                        .astype(x.dtype())
                }
            }
            RandomOp::Uniform {
                shape,
                dtype,
                minval,
                maxval,
            } => {
                let [s] = inputs::<1>(op, given)?;
                let mut g = generator(seed_of(op, s)?);
                crate::tensor::check_alloc(shape, *dtype).map_err(tensor)?;
                let n: usize = shape.iter().product();
                if dtype.is_int() {
                    let (lo, hi) = (*minval as i64, *maxval as i64);
                    if lo >= hi {
                        return Err(OpError::kernel(
                            op,
                            &dn,
                            &format!("Need minval < maxval: {lo} >= {hi}"),
                        ));
                    }
                    let v: Vec<i64> = (0..n).map(|_| g.randint(lo, hi)).collect();
                    NdArray::from_i64(shape, v).map_err(tensor)?.astype(*dtype)
                } else {
                    let v: Vec<f64> = (0..n)
                        .map(|_| minval + (maxval - minval) * g.next_f64())
                        .collect();
                    NdArray::from_f64(shape, v).map_err(tensor)?.astype(*dtype)
                }
            }
            RandomOp::Normal {
                shape,
                dtype,
                mean,
                stddev,
            } => {
                let [s] = inputs::<1>(op, given)?;
                let mut g = generator(seed_of(op, s)?);
                crate::tensor::check_alloc(shape, *dtype).map_err(tensor)?;
                let n: usize = shape.iter().product();
                let v: Vec<f64> = (0..n).map(|_| mean + stddev * g.gauss()).collect();
                NdArray::from_f64(shape, v).map_err(tensor)?.astype(*dtype)
            }
        }])
    }

    pub(crate) fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        match self {
            RandomOp::Dropout { rate } => {
                // The mask is a function of the seed alone, so dropping the gradient with
                // the same seed multiplies it by the same mask.
                let [_, seed] = node_inputs::<2>(node)?;
                let dy = grads
                    .first()
                    .ok_or_else(|| OpError::internal("dropout node has no output gradient"))?;
                let g = e.execute1(
                    Op::Random(RandomOp::Dropout { rate: *rate }),
                    &[dy.clone(), seed.clone()],
                )?;
                Ok(vec![Some(g), None])
            }
            _ => Ok(vec![None; node.inputs.len()]),
        }
    }
}

/// `tf.nn.dropout(x, rate)` with a seed drawn from `seeds`.
pub fn dropout(e: &mut Eager, x: &Tensor, rate: f64, seeds: &SeedStream) -> OpResult<Tensor> {
    let seed = e.execute1(Op::Random(RandomOp::NextSeed(seeds.clone())), &[])?;
    e.execute1(Op::Random(RandomOp::Dropout { rate }), &[x.clone(), seed])
}

/// A uniform or normal sample (`op` without its seed input) seeded from `seeds`.
pub fn sample(e: &mut Eager, op: RandomOp, seeds: &SeedStream) -> OpResult<Tensor> {
    let seed = e.execute1(Op::Random(RandomOp::NextSeed(seeds.clone())), &[])?;
    e.execute1(Op::Random(op), &[seed])
}
