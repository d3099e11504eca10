//! `tf.random` as TensorFlow 2.21 computes it on CPU: `set_seed`, `uniform` (floats and
//! bounded ints), `normal`, `truncated_normal`, the stateless ops with `seed=[a, b]`, and
//! `Generator`; also the seeds `tf.nn.dropout` and the Keras layers draw.
//!
//! Seeds follow TF's `random_seed.get_seed`: with a global seed, an op without `seed=` takes
//! its op seed from the context's `random.Random(global_seed)` (CPython's stream, hence
//! `stdlib::random`); an op with `seed=` and no global seed pairs it with TF's default
//! graph seed. As TF's eager kernel cache does, the ops with the same (op, seeds, dtype)
//! share one Philox generator that each call moves on (256 blocks per output element),
//! so repeated calls differ and `set_seed` restarts everything. The numbers themselves are
//! TF's Philox samplers (`tensor::random`). The state is the session's (`RandomState`
//! inside `TfState`), never a global.

use std::collections::HashMap;

use super::convert::{dtype_arg, tensor_of};
use super::dtypes::DType as TfDType;
use super::eager::apply;
use super::ops::{arg, shape_dims};
use super::{given, op, set_all, Body, TfError, TfState};
use crate::bindings::stdlib::random::PyRandom;
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyErr, PyResult, Value};
use crate::ops::{self, RandomOp, SeedStream};
use crate::tensor::{DType, Philox, PhiloxDist};

/// `_MAXINT32` of TF's `random_seed`: seeds are taken modulo it.
const MAXINT32: i64 = (1 << 31) - 1;
/// TF's `DEFAULT_GRAPH_SEED`, paired with an op seed when no global seed is set.
const DEFAULT_GRAPH_SEED: i64 = 87654321;
/// The blocks TF's stateful kernels reserve per output element.
const RESERVE: u64 = 256;

/// The session's random seeding.
#[derive(Default)]
pub struct RandomState {
    /// `tf.random.set_seed`'s seed (`None` until a cell sets one).
    pub global: Option<u64>,
    /// The context's `random.Random(global seed)`, which draws op seeds.
    rng: Option<PyRandom>,
    /// The Keras layers' and dropout's streams, one per op seed.
    streams: HashMap<Option<i64>, SeedStream>,
    /// TF's eager kernel cache: one Philox generator per (op, seed, seed2, dtype).
    kernels: HashMap<(&'static str, i64, i64, DType), SeedStream>,
    /// Where unseeded sessions start, drawn once from the clock.
    entropy: Option<u64>,
}

impl RandomState {
    fn entropy(&mut self) -> u64 {
        *self.entropy.get_or_insert_with(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        })
    }

    /// TF's `get_seed(op_seed)`: the op's `(seed, seed2)`, `None` when both are unset.
    fn op_seeds(&mut self, op_seed: Option<i64>) -> Option<(i64, i64)> {
        let seeds = match self.global {
            Some(g) => {
                let op = match op_seed {
                    Some(s) => s,
                    None => {
                        let g = g as i64;
                        let rng = self.rng.get_or_insert_with(|| PyRandom::new(g));
                        rng.randint(0, MAXINT32).unwrap_or(0)
                    }
                };
                ((g as i64).rem_euclid(MAXINT32), op.rem_euclid(MAXINT32))
            }
            None => (DEFAULT_GRAPH_SEED, op_seed?.rem_euclid(MAXINT32)),
        };
        Some(if seeds == (0, 0) {
            (0, MAXINT32)
        } else {
            seeds
        })
    }

    /// The Philox stream of the kernel for `op` with `op_seed` and `dtype`.
    fn kernel(&mut self, op: &'static str, op_seed: Option<i64>, dtype: DType) -> SeedStream {
        let seeds = self.op_seeds(op_seed);
        let (s1, s2) = seeds.unwrap_or((0, 0));
        // Each unseeded kernel gets its own random key, as TF seeds each one at random.
        let fresh = self.kernels.len() as u64;
        let entropy = seeds
            .is_none()
            .then(|| self.entropy() ^ fresh.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        self.kernels
            .entry((op, s1, s2, dtype))
            .or_insert_with(|| match entropy {
                Some(e) => SeedStream::philox(e, 0, e.rotate_left(29)),
                None => SeedStream::philox(s1 as u64, 0, s2 as u64),
            })
            .clone()
    }
}

/// The seed stream for an op with `op_seed`, created on first use (the Keras layers' and
/// dropout's seeds, which are not TF's Philox streams).
pub fn seeds(ctx: &mut dyn Ctx, op_seed: Option<i64>) -> SeedStream {
    let st = &mut ctx.state().get::<TfState>().random;
    let base = match st.global {
        Some(g) => g,
        None => st.entropy(),
    };
    st.streams
        .entry(op_seed)
        .or_insert_with(|| {
            let op = op_seed.map_or(0x5EED, |s| s as u64);
            SeedStream::new(base.rotate_left(17) ^ op.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        })
        .clone()
}

fn set_seed(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("set_seed", &["seed"], 1)?;
    let seed = match given(&s[0]) {
        Some(v) => Some(v.as_int()? as u64),
        None => None,
    };
    set_global_seed(seed, ctx);
    Ok(Value::None)
}

/// `tf.random.set_seed(seed)`: the global seed every later op and initializer draws from;
/// it restarts the op-seed stream and every kernel's generator, as TF clears its caches.
pub fn set_global_seed(seed: Option<u64>, ctx: &mut dyn Ctx) {
    let st = ctx.state().get::<TfState>();
    st.random.global = seed;
    st.random.rng = seed.map(|s| PyRandom::new(s as i64));
    st.random.streams.clear();
    st.random.kernels.clear();
    // Layers' initial weights count from here again (see `next_weight_seed`).
    st.keras.seed = 0;
}

fn op_seed(v: Option<&Value>) -> PyResult<Option<i64>> {
    v.filter(|v| !v.is_none()).map(|v| v.as_int()).transpose()
}

/// `x * mul + add` in the dtype's own arithmetic, as TF's `rnd * scale + shift`.
fn affine(dtype: DType, mul: f64, add: f64) -> (f64, f64) {
    match dtype {
        DType::F32 => (mul as f32 as f64, add as f32 as f64),
        _ => (mul, add),
    }
}

/// The float dtype of a sampler, with TF's errors for others.
fn float_dtype(v: Option<&Value>, ctx: &mut dyn Ctx, what: &str) -> PyResult<DType> {
    let d = dtype_arg(v, ctx)?.unwrap_or(DType::F32);
    if d.is_float() {
        return Ok(d);
    }
    Err(TfError::Type(format!(
        "Cannot convert {what} to EagerTensor of dtype {}",
        d.name()
    ))
    .into())
}

/// TF's `ValueError` for a `dtype=` outside `names`, before the kernel's own dtype check.
fn accepted(v: Option<&Value>, names: &[&str], ctx: &mut dyn Ctx) -> PyResult<()> {
    let Some(d) = v.filter(|v| !v.is_none()) else {
        return Ok(());
    };
    match TfDType::from_value(d, ctx)? {
        Some(d) if !names.contains(&d.name) => {
            let listed: Vec<String> = names.iter().map(|n| format!("tf.{n}")).collect();
            Err(PyErr::value_error(format!(
                "Argument `dtype` got invalid value <dtype: '{}'>. Accepted dtypes are ({}).",
                d.name,
                listed.join(", ")
            )))
        }
        _ => Ok(()),
    }
}

/// Draws one Philox op from `stream`, reserving TF's share of blocks per element.
fn draw(ctx: &mut dyn Ctx, stream: SeedStream, op: RandomOp, n: usize) -> PyResult<Value> {
    let stream = stream.reserving(n as u64 * RESERVE);
    apply(ctx, |e| ops::sample(e, op, &stream))
}

fn uniform(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "uniform",
        &["shape", "minval", "maxval", "dtype", "seed", "name"],
        1,
    )?;
    let shape = shape_dims(arg(&s, 0), ctx)?;
    accepted(
        s[3].as_ref(),
        &[
            "float16", "bfloat16", "float32", "float64", "int32", "int64",
        ],
        ctx,
    )?;
    let dtype = dtype_arg(s[3].as_ref(), ctx)?.unwrap_or(DType::F32);
    let seed = op_seed(s[4].as_ref())?;
    let n: usize = shape.iter().product();
    if dtype.is_int() {
        let Some(hi) = given(&s[2]) else {
            return Err(PyErr::value_error(format!(
                "Must specify maxval for integer dtype tf.{}",
                dtype.name()
            )));
        };
        let lo = given(&s[1]).map_or(Ok(0), |v| v.as_int())?;
        let hi = hi.as_int()?;
        let stream = kernel(ctx, "RandomUniformInt", seed, dtype);
        let op = RandomOp::PhiloxInt {
            shape,
            dtype,
            lo,
            hi,
        };
        return draw(ctx, stream, op, n);
    }
    let minval = given(&s[1]).map_or(Ok(0.0), |v| v.as_float())?;
    let maxval = given(&s[2]).map_or(Ok(1.0), |v| v.as_float())?;
    let stream = kernel(ctx, "RandomUniform", seed, dtype);
    let (mul, add) = scale(dtype, maxval, minval);
    let op = RandomOp::Philox {
        shape,
        dtype,
        dist: PhiloxDist::Uniform,
        mul,
        add,
    };
    draw(ctx, stream, op, n)
}

/// `rnd * (maxval - minval) + minval`, the difference taken in the dtype's arithmetic.
fn scale(dtype: DType, maxval: f64, minval: f64) -> (f64, f64) {
    let width = match dtype {
        DType::F32 => (maxval as f32 - minval as f32) as f64,
        _ => maxval - minval,
    };
    affine(dtype, width, minval)
}

fn kernel(ctx: &mut dyn Ctx, op: &'static str, seed: Option<i64>, dtype: DType) -> SeedStream {
    ctx.state().get::<TfState>().random.kernel(op, seed, dtype)
}

/// `normal` and `truncated_normal`: TF's standard sample, times `stddev`, plus `mean`.
fn normal_like(name: &str, dist: PhiloxDist, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        name,
        &["shape", "mean", "stddev", "dtype", "seed", "name"],
        1,
    )?;
    let shape = shape_dims(arg(&s, 0), ctx)?;
    let mean = given(&s[1]).map_or(Ok(0.0), |v| v.as_float())?;
    let dtype = float_dtype(s[3].as_ref(), ctx, &format!("{mean:?}"))?;
    let stddev = given(&s[2]).map_or(Ok(1.0), |v| v.as_float())?;
    let op_name = match dist {
        PhiloxDist::TruncatedNormal => "TruncatedNormal",
        _ => "RandomStandardNormal",
    };
    let stream = kernel(ctx, op_name, op_seed(s[4].as_ref())?, dtype);
    let n: usize = shape.iter().product();
    let (mul, add) = affine(dtype, stddev, mean);
    let op = RandomOp::Philox {
        shape,
        dtype,
        dist,
        mul,
        add,
    };
    draw(ctx, stream, op, n)
}

fn shuffle(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("shuffle", &["value", "seed", "name"], 1)?;
    let x = tensor_of(arg(&s, 0), ctx)?;
    let stream = kernel(ctx, "RandomShuffle", op_seed(s[1].as_ref())?, x.dtype());
    let n = x.shape().first().copied().unwrap_or(0);
    if x.shape().is_empty() {
        return Err(PyErr::new(
            "InvalidArgumentError",
            "{{function_node __wrapped__RandomShuffle_device_/job:localhost/replica:0/task:0/device:CPU:0}} input must be at least 1-D, got shape [] [Op:RandomShuffle]",
        ));
    }
    // TF copies inputs of at most one row or element and reserves nothing for them.
    let size: usize = x.shape().iter().product();
    let blocks = if n <= 1 || size <= 1 {
        0
    } else {
        (n as u64 + 2) / 4
    };
    let stream = stream.reserving(blocks);
    apply(ctx, |e| {
        let perm = ops::sample(e, RandomOp::PhiloxPermutation { n }, &stream)?;
        ops::gather(e, &x, &perm, 0)
    })
}

fn categorical(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "categorical",
        &["logits", "num_samples", "dtype", "seed", "name"],
        2,
    )?;
    let logits = tensor_of(arg(&s, 0), ctx)?;
    let num_samples = arg(&s, 1).as_int()?;
    accepted(s[2].as_ref(), &["int32", "int64"], ctx)?;
    let dtype = dtype_arg(s[2].as_ref(), ctx)?.unwrap_or(DType::I64);
    let stream = kernel(ctx, "Multinomial", op_seed(s[3].as_ref())?, dtype);
    let num_samples = usize::try_from(num_samples).map_err(|_| {
        PyErr::new(
            "InvalidArgumentError",
            format!(
                "{{{{function_node __wrapped__Multinomial_device_/job:localhost/replica:0/task:0/device:CPU:0}}}} num_samples should be non-negative, got {num_samples} [Op:Multinomial]"
            ),
        )
    })?;
    let batch = logits.shape().first().copied().unwrap_or(0);
    // TF reserves two words per sample (a double each), rounded up to whole blocks.
    let blocks = (batch * num_samples.div_ceil(4) * 4 * 2) as u64 * RESERVE;
    let stream = stream.reserving(blocks);
    let op = RandomOp::PhiloxCategorical { num_samples, dtype };
    apply(ctx, |e| {
        let state = e.execute1(ops::Op::Random(RandomOp::NextSeed(stream.clone())), &[])?;
        e.execute1(ops::Op::Random(op), &[logits.clone(), state])
    })
}

/// The `seed=[a, b]` of a stateless op, as TF's key and counter's high half.
fn stateless_key(v: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<(u64, u64)> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Err(PyErr::type_error(
            "stateless ops need a seed: a shape [2] integer Tensor",
        ));
    };
    let items = ctx.iterate(v)?;
    let words = items
        .iter()
        .map(|x| x.as_int())
        .collect::<PyResult<Vec<i64>>>()?;
    match words[..] {
        [a, b] => Ok(Philox::stateless_key(a as u64, b as u64)),
        _ => Err(PyErr::new(
            "InvalidArgumentError",
            format!(
                "{{{{function_node __wrapped__StatelessRandomGetKeyCounter_device_/job:localhost/replica:0/task:0/device:CPU:0}}}} seed must have shape [2], not [{}] [Op:StatelessRandomGetKeyCounter]",
                words.len()
            ),
        )),
    }
}

/// `stateless_uniform` and `stateless_normal`: a fresh Philox generator at the seed's key.
fn stateless(name: &str, dist: PhiloxDist, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let names: &[&str] = match dist {
        PhiloxDist::Uniform => &["shape", "seed", "minval", "maxval", "dtype", "name", "alg"],
        _ => &["shape", "seed", "mean", "stddev", "dtype", "name", "alg"],
    };
    let s = args.bind(name, names, 2)?;
    let shape = shape_dims(arg(&s, 0), ctx)?;
    let (key, counter_hi) = stateless_key(s[1].as_ref(), ctx)?;
    let dtype = dtype_arg(s[4].as_ref(), ctx)?.unwrap_or(DType::F32);
    let stream = SeedStream::philox(key, 0, counter_hi);
    if dtype.is_int() && dist == PhiloxDist::Uniform {
        let (Some(lo), Some(hi)) = (given(&s[2]), given(&s[3])) else {
            let shown = |v: Option<&Value>, default: &str, ctx: &mut dyn Ctx| {
                v.map_or(Ok(default.to_string()), |v| ctx.repr(v))
            };
            let minval = match &s[2] {
                None => "0".to_string(),
                Some(v) => ctx.repr(v)?,
            };
            let maxval = shown(given(&s[3]), "None", ctx)?;
            return Err(PyErr::value_error(format!(
                "For integer `dtype` argument <dtype: '{}'>, argument `minval` and `maxval` \
                 must be both None or not None. Got `minval`={minval} and `maxval`={maxval}.",
                dtype.name()
            )));
        };
        let op = RandomOp::PhiloxInt {
            shape,
            dtype,
            lo: lo.as_int()?,
            hi: hi.as_int()?,
        };
        return stateless_draw(ctx, stream, op);
    }
    let dtype = if dtype.is_float() {
        dtype
    } else {
        float_dtype(s[4].as_ref(), ctx, "0")?
    };
    let (mul, add) = match dist {
        PhiloxDist::Uniform => {
            let lo = given(&s[2]).map_or(Ok(0.0), |v| v.as_float())?;
            let hi = given(&s[3]).map_or(Ok(1.0), |v| v.as_float())?;
            scale(dtype, hi, lo)
        }
        _ => {
            let mean = given(&s[2]).map_or(Ok(0.0), |v| v.as_float())?;
            let stddev = given(&s[3]).map_or(Ok(1.0), |v| v.as_float())?;
            affine(dtype, stddev, mean)
        }
    };
    let op = RandomOp::Philox {
        shape,
        dtype,
        dist,
        mul,
        add,
    };
    stateless_draw(ctx, stream, op)
}

/// A stateless draw reserves nothing: every run, replays of a trace included, starts at
/// the same counter.
fn stateless_draw(ctx: &mut dyn Ctx, stream: SeedStream, op: RandomOp) -> PyResult<Value> {
    let stream = stream.reserving(0);
    apply(ctx, |e| ops::sample(e, op, &stream))
}

/// A `tf.random.Generator`: a Philox state (counter, key) that its draws move on.
struct Generator(SeedStream);

impl Object for Generator {
    fn type_name(&self) -> String {
        "Generator".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.ops.stateful_random_ops.Generator object at {}>",
            super::address_of(self)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let dist = match name {
            "uniform" => PhiloxDist::Uniform,
            "normal" => PhiloxDist::Normal,
            "truncated_normal" => PhiloxDist::TruncatedNormal,
            _ => return Ok(None),
        };
        Ok(Some(super::bound::<Generator>(
            this,
            name,
            move |g, _, args, ctx| g.sample(dist, args, ctx),
        )))
    }
    fn dir(&self) -> Vec<String> {
        vec!["normal".into(), "truncated_normal".into(), "uniform".into()]
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Generator {
    fn sample(&self, dist: PhiloxDist, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let names: &[&str] = match dist {
            PhiloxDist::Uniform => &["shape", "minval", "maxval", "dtype", "name"],
            _ => &["shape", "mean", "stddev", "dtype", "name"],
        };
        let s = args.bind("sample", names, 1)?;
        let shape = shape_dims(arg(&s, 0), ctx)?;
        let dtype = dtype_arg(s[3].as_ref(), ctx)?.unwrap_or(DType::F32);
        let first = given(&s[1]).map_or(Ok(0.0), |v| v.as_float())?;
        let (mul, add) = match dist {
            PhiloxDist::Uniform => {
                if dtype.is_int() {
                    let Some(hi) = given(&s[2]) else {
                        return Err(PyErr::value_error(format!(
                            "Must specify maxval for integer dtype tf.{}",
                            dtype.name()
                        )));
                    };
                    let n: usize = shape.iter().product();
                    let op = RandomOp::PhiloxInt {
                        shape,
                        dtype,
                        lo: first as i64,
                        hi: hi.as_int()?,
                    };
                    return draw(ctx, self.0.clone(), op, n);
                }
                scale(
                    dtype,
                    given(&s[2]).map_or(Ok(1.0), |v| v.as_float())?,
                    first,
                )
            }
            _ => affine(
                dtype,
                given(&s[2]).map_or(Ok(1.0), |v| v.as_float())?,
                first,
            ),
        };
        let dtype = if dtype.is_float() {
            dtype
        } else {
            float_dtype(s[3].as_ref(), ctx, &format!("{first:?}"))?
        };
        let n: usize = shape.iter().product();
        let op = RandomOp::Philox {
            shape,
            dtype,
            dist,
            mul,
            add,
        };
        draw(ctx, self.0.clone(), op, n)
    }
}

fn generator_class() -> Value {
    NativeClass::new(
        "Generator",
        "tensorflow.python.ops.stateful_random_ops",
        "Random-number generator: a Philox state that its draws move on.",
    )
    .static_attr(
        "from_seed",
        op("from_seed(seed, alg=None)", |args, _| {
            let s = args.bind("from_seed", &["seed", "alg"], 1)?;
            let seed = arg(&s, 0).as_int()? as u64;
            // `create_rng_state(seed, "philox")` is `[seed, 0, 0]`: the counter's low
            // word is the seed and the key is zero.
            Ok(Value::native(Generator(SeedStream::philox(0, seed, 0))))
        })
        .1,
    )
    .into_value()
}

/// The functions of `tf.random`: signature (whose text before `(` is the name), body.
const FUNCTIONS: &[(&str, Body)] = &[
    ("set_seed(seed)", set_seed),
    ("uniform(shape, minval=0, maxval=None, dtype=tf.float32, seed=None, name=None)",
        uniform,
    ),
    ("normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None)",
        |a, ctx| normal_like("normal", PhiloxDist::Normal, a, ctx),
    ),
    ("truncated_normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None)",
        |a, ctx| normal_like("truncated_normal", PhiloxDist::TruncatedNormal, a, ctx),
    ),
    ("stateless_uniform(shape, seed, minval=0, maxval=None, dtype=tf.float32, name=None, alg='auto_select')",
        |a, ctx| stateless("stateless_uniform", PhiloxDist::Uniform, a, ctx),
    ),
    ("stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=tf.float32, name=None, alg='auto_select')",
        |a, ctx| stateless("stateless_normal", PhiloxDist::Normal, a, ctx),
    ),
    ("stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=tf.float32, name=None, alg='auto_select')",
        |a, ctx| stateless("stateless_truncated_normal", PhiloxDist::TruncatedNormal, a, ctx),
    ),
    ("shuffle(value, seed=None, name=None)", shuffle),
    ("categorical(logits, num_samples, dtype=None, seed=None, name=None)",
        categorical,
    ),
];

/// The `tf.random` module.
pub fn module() -> Value {
    let m = NativeModule::new("tensorflow.random", "Random tensors and seeding.");
    set_all(&m, FUNCTIONS);
    m.set("Generator", generator_class());
    m.into_value()
}
