//! Random ops: dropout, uniform and normal samples, and the stateful seed stream they
//! draw from. A random op takes its seed as an input tensor produced by `NextSeed`, an op
//! with shared state: run again (eagerly, or as a node of a traced graph replayed on a
//! later step) it yields the next seed, so every call draws fresh values while a fixed
//! starting seed makes a whole run reproducible.
//!
//! Dropout masks come from the device's counter-based generator (`dropout_uniform`), the
//! one the compiled Dropout layer uses; `Uniform` and `Normal` samples from numpy's MT19937
//! stream seeded per call (the layers' noise). `tf.random`'s ops are `Philox`: TF's own
//! generator and samplers, fed by a Philox stream (`SeedStream::philox`) whose `NextSeed`
//! yields the generator's key and counter and moves the counter on as TF's kernel does
//! (256 blocks per output element), so seeded calls give TensorFlow's numbers.

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
use crate::tensor::{
    philox_categorical, philox_floats, philox_ints, philox_permutation, DType, NdArray, Philox,
    PhiloxDist, RandomState,
};

/// A shared, advancing source of seeds: mixed 64-bit seeds, or the places of a Philox
/// generator that each draw reserves `reserve` blocks of.
#[derive(Debug, Clone)]
pub struct SeedStream(Arc<SeedState>, Option<PhiloxPlace>);

/// A Philox generator's key and the high half of its counter; the stream counts the low half.
#[derive(Debug, Clone, Copy)]
struct PhiloxPlace {
    key: u64,
    counter_hi: u64,
    reserve: u64,
}

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
        SeedStream(
            Arc::new(SeedState {
                base,
                next: AtomicU64::new(0),
            }),
            None,
        )
    }

    /// The stream of a Philox generator at `key` with counter `(counter_lo, counter_hi)`,
    /// as TF's stateful random kernels hold one.
    pub fn philox(key: u64, counter_lo: u64, counter_hi: u64) -> SeedStream {
        SeedStream(
            Arc::new(SeedState {
                base: counter_lo,
                next: AtomicU64::new(0),
            }),
            Some(PhiloxPlace {
                key,
                counter_hi,
                reserve: 0,
            }),
        )
    }

    /// This Philox stream (sharing its counter) where each draw reserves `blocks` blocks.
    pub fn reserving(&self, blocks: u64) -> SeedStream {
        let place = self.1.map(|p| PhiloxPlace {
            reserve: blocks,
            ..p
        });
        SeedStream(self.0.clone(), place)
    }

    /// How many blocks this Philox stream has handed out since it started.
    pub fn used(&self) -> u64 {
        self.0.next.load(Ordering::Relaxed)
    }

    /// The next value of the stream: a seed, or for a Philox stream `[key, counter_lo,
    /// counter_hi]` as 64-bit words.
    fn next_words(&self) -> Vec<i64> {
        match self.1 {
            Some(p) => {
                let at = self.0.next.fetch_add(p.reserve, Ordering::Relaxed);
                vec![
                    p.key as i64,
                    self.0.base.wrapping_add(at) as i64,
                    p.counter_hi as i64,
                ]
            }
            None => vec![self.next() as i64],
        }
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
    /// Input `[key, counter_lo, counter_hi]` (int64): TF's Philox sample of `dist`, then
    /// `x * mul + add`, in float32 arithmetic for float32 outputs (float64 otherwise).
    Philox {
        shape: Vec<usize>,
        dtype: DType,
        dist: PhiloxDist,
        mul: f64,
        add: f64,
    },
    /// Input `[key, counter_lo, counter_hi]`: the int64 permutation of `0..n` that TF's
    /// `RandomShuffle` applies to the rows.
    PhiloxPermutation { n: usize },
    /// Inputs `[logits, state]` (`[batch, classes]` logits): `num_samples` class indices
    /// per row, as TF's `Multinomial`.
    PhiloxCategorical { num_samples: usize, dtype: DType },
    /// Input `[key, counter_lo, counter_hi]`: integers in `[lo, hi)` as TF's
    /// `RandomUniformInt`.
    PhiloxInt {
        shape: Vec<usize>,
        dtype: DType,
        lo: i64,
        hi: i64,
    },
}

fn philox_of(op: &str, s: &NdArray) -> OpResult<Philox> {
    match s.to_i64_vec().1[..] {
        [key, lo, hi] if s.dtype().is_int() => Ok(Philox::new(key as u64, lo as u64, hi as u64)),
        _ => Err(OpError::new(
            ErrorClass::InvalidArgument,
            format!("{op} expects a Philox state of three int64 words"),
        )),
    }
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
            RandomOp::Philox { dist, .. } => match dist {
                PhiloxDist::Uniform => "RandomUniform",
                PhiloxDist::Normal => "RandomStandardNormal",
                PhiloxDist::TruncatedNormal => "TruncatedNormal",
            },
            RandomOp::PhiloxInt { .. } => "RandomUniformInt",
            RandomOp::PhiloxPermutation { .. } => "RandomShuffle",
            RandomOp::PhiloxCategorical { .. } => "Multinomial",
        }
    }

    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let op = self.name();
        let dn = dev.name();
        let tensor = |e| OpError::from_tensor(op, &dn, e);
        Ok(vec![match self {
            RandomOp::NextSeed(stream) => {
                inputs::<0>(op, given)?;
                let words = stream.next_words();
                let shape: &[usize] = if words.len() == 1 { &[] } else { &[3] };
                NdArray::from_i64(shape, words).map_err(tensor)?
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
                    download(dev, y, op)?
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
            RandomOp::Philox {
                shape,
                dtype,
                dist,
                mul,
                add,
            } => {
                let [s] = inputs::<1>(op, given)?;
                let gen = philox_of(op, s)?;
                crate::tensor::check_alloc(shape, *dtype).map_err(tensor)?;
                let n: usize = shape.iter().product();
                let wide = *dtype == DType::F64;
                let v: Vec<f64> = philox_floats(gen, *dist, wide, n)
                    .into_iter()
                    .map(|x| {
                        if wide {
                            x * mul + add
                        } else {
                            ((x as f32) * (*mul as f32) + (*add as f32)) as f64
                        }
                    })
                    .collect();
                NdArray::from_f64(shape, v).map_err(tensor)?.astype(*dtype)
            }
            RandomOp::PhiloxInt {
                shape,
                dtype,
                lo,
                hi,
            } => {
                let [s] = inputs::<1>(op, given)?;
                let gen = philox_of(op, s)?;
                if lo >= hi {
                    return Err(OpError::kernel(
                        op,
                        &dn,
                        &format!("Need minval < maxval, got {lo} >= {hi}"),
                    ));
                }
                crate::tensor::check_alloc(shape, *dtype).map_err(tensor)?;
                let n: usize = shape.iter().product();
                let v = philox_ints(gen, *lo, *hi, *dtype == DType::I64, n);
                NdArray::from_i64(shape, v).map_err(tensor)?.astype(*dtype)
            }
            RandomOp::PhiloxPermutation { n } => {
                let [s] = inputs::<1>(op, given)?;
                let perm = philox_permutation(philox_of(op, s)?, *n);
                NdArray::from_i64(&[*n], perm).map_err(tensor)?
            }
            RandomOp::PhiloxCategorical { num_samples, dtype } => {
                let [logits, s] = inputs::<2>(op, given)?;
                let (shape, v) = logits.to_f64_vec();
                let [batch, classes] = shape[..] else {
                    return Err(OpError::new(
                        ErrorClass::InvalidArgument,
                        format!("logits should be a matrix, got shape {shape:?}"),
                    ));
                };
                if classes == 0 {
                    return Err(OpError::new(
                        ErrorClass::InvalidArgument,
                        "num_classes should be positive, got 0",
                    ));
                }
                let out = [batch, *num_samples];
                crate::tensor::check_alloc(&out, *dtype).map_err(tensor)?;
                let idx = philox_categorical(philox_of(op, s)?, &v, classes, *num_samples);
                NdArray::from_i64(&out, idx).map_err(tensor)?.astype(*dtype)
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
