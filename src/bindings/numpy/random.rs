//! `np.random`: numpy's legacy global `RandomState` (MT19937) kept in the session state,
//! so `np.random.seed(0)` followed by any of these calls reproduces numpy's numbers
//! exactly. Scalars come back as Python floats and ints, as the legacy API returns them.

use std::rc::Rc;

use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyErr, PyResult, Value};
use crate::tensor::{DType, IndexItem, NdArray, RandomState};

use super::convert::{array_value, dims_arg, dtype_arg, err, float_of, int_of, to_array, wrap};
use super::ndarray::PyArray;

/// The session's global generator; unseeded sessions start from the clock, as numpy does.
struct GlobalRng(RandomState);

impl Default for GlobalRng {
    fn default() -> Self {
        GlobalRng(RandomState::from_entropy())
    }
}

fn rng(ctx: &mut dyn Ctx) -> &mut RandomState {
    &mut ctx.state().get::<GlobalRng>().0
}

/// The output shape from `size=` (`None` means one Python scalar).
fn size_arg(v: Option<&Value>) -> PyResult<Option<Vec<usize>>> {
    match v {
        None | Some(Value::None) => Ok(None),
        Some(v) => dims_arg(v).map(Some),
    }
}

fn fill_f64(
    ctx: &mut dyn Ctx,
    size: Option<Vec<usize>>,
    mut draw: impl FnMut(&mut RandomState) -> f64,
) -> PyResult<Value> {
    match size {
        None => Ok(Value::Float(draw(rng(ctx)))),
        Some(shape) => {
            crate::tensor::check_alloc(&shape, DType::F64).map_err(err)?;
            let n: usize = shape.iter().product();
            let r = rng(ctx);
            let v: Vec<f64> = (0..n).map(|_| draw(r)).collect();
            NdArray::from_f64(&shape, v).map(array_value).map_err(err)
        }
    }
}

/// Dimensions given as separate arguments (`rand(2, 3)`); none means a scalar.
fn dims_of(args: &Args) -> PyResult<Option<Vec<usize>>> {
    if args.pos.is_empty() {
        return Ok(None);
    }
    args.pos
        .iter()
        .map(|v| {
            let d = int_of(v)?;
            usize::try_from(d)
                .map_err(|_| PyErr::value_error("negative dimensions are not allowed"))
        })
        .collect::<PyResult<Vec<_>>>()
        .map(Some)
}

fn seed(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("seed", &["seed"], 0)?;
    match s[0].as_ref() {
        None | Some(Value::None) => ctx.state().get::<GlobalRng>().0 = RandomState::from_entropy(),
        Some(v) => seed_global(int_of(v)?, ctx)?,
    }
    Ok(Value::None)
}

/// `np.random.seed(x)` for an integer `x` (also what `keras.utils.set_random_seed` calls).
pub fn seed_global(x: i64, ctx: &mut dyn Ctx) -> PyResult<()> {
    let x =
        u32::try_from(x).map_err(|_| PyErr::value_error("Seed must be between 0 and 2**32 - 1"))?;
    ctx.state().get::<GlobalRng>().0 = RandomState::new(x);
    Ok(())
}

fn randint(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("randint", &["low", "high", "size", "dtype"], 1)?;
    let a = int_of(s[0].as_ref().unwrap_or(&Value::None))?;
    let (low, high) = match s[1].as_ref() {
        None | Some(Value::None) => (0, a),
        Some(h) => (a, int_of(h)?),
    };
    if low >= high {
        return Err(PyErr::value_error("high <= low"));
    }
    let dt = match s[3].as_ref() {
        Some(d) => dtype_arg(d, ctx)?.unwrap_or(DType::I64),
        None => DType::I64,
    };
    match size_arg(s[2].as_ref())? {
        None => Ok(Value::Int(rng(ctx).randint(low, high))),
        Some(shape) => {
            crate::tensor::check_alloc(&shape, DType::I64).map_err(err)?;
            let n: usize = shape.iter().product();
            let r = rng(ctx);
            let v: Vec<i64> = (0..n).map(|_| r.randint(low, high)).collect();
            Ok(array_value(
                NdArray::from_i64(&shape, v).map_err(err)?.astype(dt),
            ))
        }
    }
}

fn shuffled_rows(a: &NdArray, r: &mut RandomState) -> PyResult<NdArray> {
    let n = a.shape().first().copied().unwrap_or(0);
    let mut order: Vec<i64> = (0..n as i64).collect();
    r.shuffle_with(n, |i, j| order.swap(i, j));
    let idx = NdArray::from_i64(&[n], order).map_err(err)?;
    a.get(&[IndexItem::Array(idx)]).map_err(err)
}

fn shuffle(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("shuffle", &["x"], 1)?;
    let x = s[0].clone().unwrap_or(Value::None);
    if let Value::List(l) = &x {
        let n = l.borrow().len();
        let r = rng(ctx);
        let mut items = l.borrow_mut();
        r.shuffle_with(n, |i, j| items.swap(i, j));
        return Ok(Value::None);
    }
    let p = x
        .downcast::<PyArray>()
        .ok_or_else(|| PyErr::type_error("shuffle() expects a list or an ndarray"))?;
    let out = shuffled_rows(&p.get(), rng(ctx))?;
    p.replace(out)?;
    Ok(Value::None)
}

fn permutation(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("permutation", &["x"], 1)?;
    let x = s[0].clone().unwrap_or(Value::None);
    if let Value::Int(n) = x {
        let n = usize::try_from(n)
            .map_err(|_| PyErr::value_error("negative dimensions are not allowed"))?;
        let v = rng(ctx).permutation(n);
        return NdArray::from_i64(&[n], v).map(array_value).map_err(err);
    }
    let a = to_array(&x, None, ctx)?;
    shuffled_rows(&a, rng(ctx)).map(array_value)
}

fn choice(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("choice", &["a", "size", "replace", "p"], 1)?;
    let a = s[0].clone().unwrap_or(Value::None);
    let pool: Rc<NdArray> = match &a {
        Value::Int(n) => {
            Rc::new(NdArray::from_i64(&[(*n).max(0) as usize], (0..*n).collect()).map_err(err)?)
        }
        other => to_array(other, None, ctx)?,
    };
    let n = pool.shape().first().copied().unwrap_or(0);
    if n == 0 {
        return Err(PyErr::value_error(
            "'a' cannot be empty unless no samples are taken",
        ));
    }
    let size = size_arg(s[1].as_ref())?;
    let replace = s[2]
        .as_ref()
        .map(|v| v.as_bool_strict())
        .transpose()?
        .unwrap_or(true);
    let shape = size.clone().unwrap_or_default();
    let count: usize = shape.iter().product();
    let idx: Vec<i64> = if let Some(p) = s[3].as_ref().filter(|v| !v.is_none()) {
        let p = to_array(p, Some(DType::F64), ctx)?.to_f64_vec().1;
        if p.len() != n {
            return Err(PyErr::value_error("'a' and 'p' must have same size"));
        }
        let mut cdf: Vec<f64> = p
            .iter()
            .scan(0.0, |acc, v| {
                *acc += v;
                Some(*acc)
            })
            .collect();
        let last = cdf.last().copied().unwrap_or(1.0);
        cdf.iter_mut().for_each(|c| *c /= last);
        let r = rng(ctx);
        (0..count)
            .map(|_| {
                let u = r.next_f64();
                cdf.iter().take_while(|&&c| c <= u).count() as i64
            })
            .collect()
    } else if replace {
        let r = rng(ctx);
        (0..count).map(|_| r.randint(0, n as i64)).collect()
    } else {
        if count > n {
            return Err(PyErr::value_error(
                "Cannot take a larger sample than population when 'replace=False'",
            ));
        }
        rng(ctx).permutation(n)[..count].to_vec()
    };
    let ia = NdArray::from_i64(&shape, idx).map_err(err)?;
    let out = pool.get(&[IndexItem::Array(ia)]).map_err(err)?;
    Ok(if size.is_none() {
        wrap(out)
    } else {
        array_value(out)
    })
}

pub fn module() -> Value {
    let m = NativeModule::new("numpy.random", "numpy's legacy random number generation.");
    m.set("seed", NativeFn::value("seed", "seed(seed=None)", seed));
    for name in ["random", "random_sample", "sample", "ranf"] {
        m.set(
            name,
            NativeFn::value(name, "random(size=None)", |args, ctx| {
                let s = args.bind("random", &["size"], 0)?;
                fill_f64(ctx, size_arg(s[0].as_ref())?, |r| r.next_f64())
            }),
        );
    }
    m.set(
        "rand",
        NativeFn::value("rand", "rand(d0, d1, ..., dn)", |args, ctx| {
            fill_f64(ctx, dims_of(args)?, |r| r.next_f64())
        }),
    );
    m.set(
        "randn",
        NativeFn::value("randn", "randn(d0, d1, ..., dn)", |args, ctx| {
            fill_f64(ctx, dims_of(args)?, |r| r.gauss())
        }),
    );
    m.set(
        "standard_normal",
        NativeFn::value(
            "standard_normal",
            "standard_normal(size=None)",
            |args, ctx| {
                let s = args.bind("standard_normal", &["size"], 0)?;
                fill_f64(ctx, size_arg(s[0].as_ref())?, |r| r.gauss())
            },
        ),
    );
    m.set(
        "normal",
        NativeFn::value(
            "normal",
            "normal(loc=0.0, scale=1.0, size=None)",
            |args, ctx| {
                let s = args.bind("normal", &["loc", "scale", "size"], 0)?;
                let loc = s[0].as_ref().map(float_of).transpose()?.unwrap_or(0.0);
                let scale = s[1].as_ref().map(float_of).transpose()?.unwrap_or(1.0);
                if scale < 0.0 {
                    return Err(PyErr::value_error("scale < 0"));
                }
                fill_f64(ctx, size_arg(s[2].as_ref())?, |r| loc + scale * r.gauss())
            },
        ),
    );
    m.set(
        "uniform",
        NativeFn::value(
            "uniform",
            "uniform(low=0.0, high=1.0, size=None)",
            |args, ctx| {
                let s = args.bind("uniform", &["low", "high", "size"], 0)?;
                let lo = s[0].as_ref().map(float_of).transpose()?.unwrap_or(0.0);
                let hi = s[1].as_ref().map(float_of).transpose()?.unwrap_or(1.0);
                fill_f64(ctx, size_arg(s[2].as_ref())?, |r| {
                    lo + (hi - lo) * r.next_f64()
                })
            },
        ),
    );
    m.set(
        "randint",
        NativeFn::value(
            "randint",
            "randint(low, high=None, size=None, dtype=int)",
            randint,
        ),
    );
    m.set(
        "choice",
        NativeFn::value(
            "choice",
            "choice(a, size=None, replace=True, p=None)",
            choice,
        ),
    );
    m.set("shuffle", NativeFn::value("shuffle", "shuffle(x)", shuffle));
    m.set(
        "permutation",
        NativeFn::value("permutation", "permutation(x)", permutation),
    );
    m.into_value()
}
