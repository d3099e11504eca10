//! `statistics`: `mean`, `fmean`, `median` (and `_low`/`_high`), `mode`, `variance`,
//! `pvariance`, `stdev` and `pstdev` over ints, bools and floats, with CPython 3.11's
//! results bit for bit: sums are exact (every float is an integer times a power of two,
//! summed in big integers by `exact`), an all-int mean or variance stays an int when it
//! is whole, and standard deviations are the correctly rounded square root of the exact
//! ratio. Errors are `StatisticsError` (a ValueError) with CPython's texts. Fractions and
//! Decimals are not numbers here, and are refused as other non-numbers are.

mod exact;

use exact::{ratio_to_f64, sqrt_ratio_to_f64, Nat};

use super::f;
use crate::lang::{exception_class, Args, BinOp, CmpOp, Ctx, NativeModule, PyErr, PyResult, Value};

fn stats_error(msg: &str) -> PyErr {
    PyErr::new("StatisticsError", msg)
}

/// The data, as exact numbers over one power of two: `sum` is the signed sum of the
/// points, `squares` the sum of their squares, both scaled by `2 ** scale` per factor.
struct Exact {
    count: usize,
    /// Whether any point is a float (the result is then a float: CPython's `_coerce`).
    float: bool,
    negative: bool,
    sum: Nat,
    squares: Nat,
    scale: u64,
    /// The sum of the infinities and NaNs, in data order, if there were any.
    non_finite: Option<f64>,
}

/// One point as `±mantissa * 2 ** exponent`, or a non-finite float.
enum Point {
    Exact(bool, u64, i64),
    NonFinite(f64),
}

fn point(v: &Value) -> PyResult<(Point, bool)> {
    Ok(match v {
        Value::Bool(b) => (Point::Exact(false, *b as u64, 0), false),
        Value::Int(i) => (Point::Exact(*i < 0, i.unsigned_abs(), 0), false),
        Value::Float(x) if !x.is_finite() => (Point::NonFinite(*x), true),
        Value::Float(x) => {
            let bits = x.to_bits();
            let (frac, biased) = (bits & ((1 << 52) - 1), ((bits >> 52) & 0x7ff) as i64);
            let (mut mant, mut exp) = if biased == 0 {
                (frac, -1074)
            } else {
                (frac | 1 << 52, biased - 1075)
            };
            if mant != 0 {
                let tz = mant.trailing_zeros();
                mant >>= tz;
                exp += tz as i64;
            }
            (Point::Exact(bits >> 63 == 1, mant, exp), true)
        }
        other => {
            return Err(PyErr::type_error(format!(
                "can't convert type '{}' to numerator/denominator",
                other.type_name()
            )))
        }
    })
}

fn exact(items: &[Value]) -> PyResult<Exact> {
    let mut points = vec![];
    let mut float = false;
    let mut non_finite: Option<f64> = None;
    for v in items {
        let (p, is_float) = point(v)?;
        float |= is_float;
        match p {
            Point::Exact(neg, mant, exp) => points.push((neg, mant, exp)),
            Point::NonFinite(x) => non_finite = Some(non_finite.unwrap_or(0.0) + x),
        }
    }
    let scale = points.iter().map(|p| -p.2).max().unwrap_or(0).max(0) as u64;
    let (mut pos, mut neg, mut squares) = (Nat::zero(), Nat::zero(), Nat::zero());
    for (negative, mant, exp) in points {
        let n = Nat::from_u128(mant as u128).shl((scale as i64 + exp) as u64);
        squares = squares.add(&n.mul(&n));
        if negative {
            neg = neg.add(&n);
        } else {
            pos = pos.add(&n);
        }
    }
    let negative = neg > pos;
    let sum = if negative {
        neg.sub(&pos)
    } else {
        pos.sub(&neg)
    };
    Ok(Exact {
        count: items.len(),
        float,
        negative,
        sum,
        squares,
        scale,
        non_finite,
    })
}

/// CPython's `_convert(n / d, T)` for a non-negative ratio: an int when every point was
/// an int and the ratio is whole, else the correctly rounded float.
fn convert(negative: bool, n: &Nat, d: &Nat, float: bool) -> PyResult<Value> {
    let sign = if negative { -1.0 } else { 1.0 };
    if !float {
        let (q, r) = n.div_rem(d);
        if r.is_zero() {
            let q = q
                .to_u128()
                .and_then(|q| i64::try_from(q).ok())
                .ok_or_else(|| PyErr::new("OverflowError", "int too large for this kernel"))?;
            return Ok(Value::Int(if negative { -q } else { q }));
        }
    }
    Ok(Value::Float(sign * ratio_to_f64(n, d)?))
}

fn nat(n: usize) -> Nat {
    Nat::from_u128(n as u128)
}

fn data(a: &Args, func: &str, names: &[&str], ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
    let s = a.bind(func, names, 1)?;
    let v = s[0].clone().unwrap_or(Value::None);
    ctx.iterate(&v)
}

fn mean(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let e = exact(&data(a, "mean", &["data"], ctx)?)?;
    if e.count < 1 {
        return Err(stats_error("mean requires at least one data point"));
    }
    if let Some(x) = e.non_finite {
        return Ok(Value::Float(x / e.count as f64));
    }
    convert(e.negative, &e.sum, &nat(e.count).shl(e.scale), e.float)
}

fn fmean(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let e = exact(&data(a, "fmean", &["data"], ctx)?)?;
    if e.count < 1 {
        return Err(stats_error("fmean requires at least one data point"));
    }
    // `fsum(data) / n`: the exact sum rounded once, then divided.
    let total = match e.non_finite {
        Some(x) => x,
        None => {
            let t = ratio_to_f64(&e.sum, &Nat::from_u128(1).shl(e.scale))?;
            if e.negative {
                -t
            } else {
                t
            }
        }
    };
    Ok(Value::Float(total / e.count as f64))
}

/// The sum of squared deviations over what divides it (`n - 1` or `n`), as an exact
/// ratio, or the non-finite float it is. With `c` given, the squares are Python's own
/// `(x - c) * (x - c)`, summed exactly (CPython's `_ss(data, c)`).
enum Spread {
    Ratio(Nat, Nat, bool),
    NonFinite(f64),
}

fn spread(a: &Args, func: &str, center: &str, sample: bool, ctx: &mut dyn Ctx) -> PyResult<Spread> {
    let s = a.bind(func, &["data", center], 1)?;
    let items = ctx.iterate(&s[0].clone().unwrap_or(Value::None))?;
    let (min, needed) = if sample {
        (2, "two data points")
    } else {
        (1, "one data point")
    };
    let center = s[1].clone().filter(|c| !matches!(c, Value::None));
    let e = match &center {
        Some(c) => {
            let mut squares = Vec::with_capacity(items.len());
            for x in &items {
                let d = ctx.binop(BinOp::Sub, x, c)?;
                squares.push(ctx.binop(BinOp::Mul, &d, &d)?);
            }
            exact(&squares)?
        }
        None => exact(&items)?,
    };
    if e.count < min {
        return Err(stats_error(&format!("{func} requires at least {needed}")));
    }
    let by = if sample { e.count - 1 } else { e.count };
    if let Some(x) = e.non_finite {
        return Ok(Spread::NonFinite(x / by as f64));
    }
    if center.is_some() {
        // The squares were summed already: their sum over `by`.
        return Ok(Spread::Ratio(e.sum, nat(by).shl(e.scale), e.float));
    }
    // (n * sum(x**2) - sum(x)**2) / (n * by), over the squared scale.
    let num = nat(e.count).mul(&e.squares).sub(&e.sum.mul(&e.sum));
    let den = nat(e.count).mul(&nat(by)).shl(2 * e.scale);
    Ok(Spread::Ratio(num, den, e.float))
}

fn variance_like(
    a: &Args,
    func: &str,
    center: &str,
    sample: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    match spread(a, func, center, sample, ctx)? {
        Spread::Ratio(n, d, float) => convert(false, &n, &d, float),
        Spread::NonFinite(x) => Ok(Value::Float(x)),
    }
}

fn stdev_like(
    a: &Args,
    func: &str,
    center: &str,
    sample: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    match spread(a, func, center, sample, ctx)? {
        Spread::Ratio(n, d, _) => Ok(Value::Float(sqrt_ratio_to_f64(&n, &d)?)),
        // CPython reads `.numerator` of the float the ratio became.
        Spread::NonFinite(_) => Err(PyErr::attribute_error(
            "'float' object has no attribute 'numerator'",
        )),
    }
}

/// The data in `<` order, sorted by the interpreter's own `list.sort`.
fn sorted(a: &Args, func: &str, ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
    let items = data(a, func, &["data"], ctx)?;
    let list = Value::list(items);
    let sort = ctx.getattr(&list, "sort")?;
    ctx.call(&sort, Args::default())?;
    ctx.iterate(&list)
}

fn median(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let d = sorted(a, "median", ctx)?;
    let n = d.len();
    match (d.get(n / 2), (n / 2).checked_sub(1).and_then(|i| d.get(i))) {
        (None, _) => Err(stats_error("no median for empty data")),
        (Some(hi), Some(lo)) if n % 2 == 0 => {
            let s = ctx.binop(BinOp::Add, lo, hi)?;
            ctx.binop(BinOp::Div, &s, &Value::Int(2))
        }
        (Some(mid), _) => Ok(mid.clone()),
    }
}

fn median_end(a: &Args, func: &str, high: bool, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let d = sorted(a, func, ctx)?;
    let n = d.len();
    let at = if high || n % 2 == 1 {
        n / 2
    } else {
        (n / 2).saturating_sub(1)
    };
    d.get(at)
        .cloned()
        .ok_or_else(|| stats_error("no median for empty data"))
}

/// The most common value, the first seen among equals (CPython's `Counter` order).
fn mode(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let items = data(a, "mode", &["data"], ctx)?;
    let mut counts: Vec<(Value, usize)> = vec![];
    for x in items {
        let mut found = false;
        for (k, c) in counts.iter_mut() {
            let eq = ctx.compare(CmpOp::Eq, k, &x)?;
            if ctx.truthy(&eq)? {
                *c += 1;
                found = true;
                break;
            }
        }
        if !found {
            counts.push((x, 1));
        }
    }
    let mut best: Option<(Value, usize)> = None;
    for (k, c) in counts {
        if best.as_ref().is_none_or(|(_, b)| c > *b) {
            best = Some((k, c));
        }
    }
    best.map(|(k, _)| k)
        .ok_or_else(|| stats_error("no mode for empty data"))
}

type Body = fn(&Args, &mut dyn Ctx) -> PyResult<Value>;

/// The functions: signature and doc (the text before `(` is the name), body.
const FUNCTIONS: &[(&str, Body)] = &[
    ("mean(data)\nSample arithmetic mean of data.", mean),
    ("fmean(data)\nMean of data as a float.", fmean),
    ("median(data)\nMedian (middle value) of data.", median),
    ("median_low(data)\nLow median of data.", |a, ctx| {
        median_end(a, "median_low", false, ctx)
    }),
    ("median_high(data)\nHigh median of data.", |a, ctx| {
        median_end(a, "median_high", true, ctx)
    }),
    ("mode(data)\nMost common data point.", mode),
    ("variance(data, xbar=None)\nSample variance.", |a, ctx| {
        variance_like(a, "variance", "xbar", true, ctx)
    }),
    (
        "pvariance(data, mu=None)\nPopulation variance.",
        |a, ctx| variance_like(a, "pvariance", "mu", false, ctx),
    ),
    (
        "stdev(data, xbar=None)\nSample standard deviation.",
        |a, ctx| stdev_like(a, "stdev", "xbar", true, ctx),
    ),
    (
        "pstdev(data, mu=None)\nPopulation standard deviation.",
        |a, ctx| stdev_like(a, "pstdev", "mu", false, ctx),
    ),
];

pub fn module(ctx: &mut dyn Ctx) -> Value {
    let m = NativeModule::new("statistics", "Mathematical statistics functions.");
    m.set("StatisticsError", exception_class(ctx, "StatisticsError"));
    for (doc, body) in FUNCTIONS {
        let name = doc.split_once('(').map_or(*doc, |(name, _)| name);
        m.set(name, f(name, doc, *body));
    }
    m.into_value()
}
