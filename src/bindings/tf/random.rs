//! `tf.random`: `set_seed`, `uniform` and `normal`, and the seeds `tf.nn.dropout` draws.
//! Seeding follows TF's rules: with a global seed (`tf.random.set_seed`) and an op seed
//! (`seed=`), a run is reproducible and successive calls still differ; setting the global
//! seed again restarts every sequence; without any seed, values differ between sessions.
//! The values are not TensorFlow's (its Philox streams are not reproduced), only their
//! distributions, shapes and dtypes. The state is the session's (`RandomState` inside
//! `TfState`), never a global.

use std::collections::HashMap;

use super::convert::dtype_arg;
use super::eager::apply;
use super::ops::{arg, shape_dims};
use super::{func, given, TfError, TfState};
use crate::lang::{Args, Ctx, NativeModule, PyResult, Value};
use crate::ops::{self, RandomOp, SeedStream};
use crate::tensor::DType;

/// The session's random seeding.
#[derive(Default)]
pub struct RandomState {
    /// `tf.random.set_seed`'s seed (`None` until a cell sets one).
    pub global: Option<u64>,
    /// One advancing stream per op seed (`None`: calls without one).
    streams: HashMap<Option<i64>, SeedStream>,
    /// Where unseeded sessions start, drawn once from the clock.
    entropy: Option<u64>,
}

/// The seed stream for an op with `op_seed`, created on first use.
pub fn seeds(ctx: &mut dyn Ctx, op_seed: Option<i64>) -> SeedStream {
    let st = &mut ctx.state().get::<TfState>().random;
    let base = match st.global {
        Some(g) => g,
        None => *st.entropy.get_or_insert_with(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        }),
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

/// `tf.random.set_seed(seed)`: the global seed every later op and initializer draws from.
pub fn set_global_seed(seed: Option<u64>, ctx: &mut dyn Ctx) {
    let st = ctx.state().get::<TfState>();
    st.random.global = seed;
    st.random.streams.clear();
    // Layers' initial weights count from here again (see `next_weight_seed`).
    st.keras.seed = 0;
}

fn float_dtype(v: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<DType> {
    dtype_arg(v, ctx).map(|d| d.unwrap_or(DType::F32))
}

fn op_seed(v: Option<&Value>) -> PyResult<Option<i64>> {
    v.filter(|v| !v.is_none()).map(|v| v.as_int()).transpose()
}

fn uniform(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "uniform",
        &["shape", "minval", "maxval", "dtype", "seed", "name"],
        1,
    )?;
    let shape = shape_dims(arg(&s, 0), ctx)?;
    let dtype = float_dtype(s[3].as_ref(), ctx)?;
    let minval = given(&s[1]).map_or(Ok(0.0), |v| v.as_float())?;
    let maxval = match given(&s[2]) {
        Some(v) => v.as_float()?,
        None if dtype.is_int() => {
            return Err(TfError::Value(format!(
                "Must specify maxval for integer dtype {}",
                dtype.name()
            ))
            .into())
        }
        None => 1.0,
    };
    let seeds = seeds(ctx, op_seed(s[4].as_ref())?);
    let op = RandomOp::Uniform {
        shape,
        dtype,
        minval,
        maxval,
    };
    apply(ctx, |e| ops::sample(e, op, &seeds))
}

fn normal(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "normal",
        &["shape", "mean", "stddev", "dtype", "seed", "name"],
        1,
    )?;
    let shape = shape_dims(arg(&s, 0), ctx)?;
    let dtype = float_dtype(s[3].as_ref(), ctx)?;
    if !dtype.is_float() {
        return Err(TfError::Type(format!(
            "Invalid dtype {} for tf.random.normal; use a floating dtype",
            dtype.name()
        ))
        .into());
    }
    let mean = given(&s[1]).map_or(Ok(0.0), |v| v.as_float())?;
    let stddev = given(&s[2]).map_or(Ok(1.0), |v| v.as_float())?;
    let seeds = seeds(ctx, op_seed(s[4].as_ref())?);
    let op = RandomOp::Normal {
        shape,
        dtype,
        mean,
        stddev,
    };
    apply(ctx, |e| ops::sample(e, op, &seeds))
}

/// The `tf.random` module.
pub fn module() -> Value {
    NativeModule::new("tensorflow.random", "Random tensors and seeding.")
        .with("set_seed", func("set_seed", "set_seed(seed)", set_seed))
        .with(
            "uniform",
            func(
                "uniform",
                "uniform(shape, minval=0, maxval=None, dtype=tf.float32, seed=None, name=None)",
                uniform,
            ),
        )
        .with(
            "normal",
            func(
                "normal",
                "normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None)",
                normal,
            ),
        )
        .into_value()
}
