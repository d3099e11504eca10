//! Python's `random` module with CPython's streams: the MT19937 generator of
//! `tensor::RandomState` seeded by `init_by_array` over the 32-bit words of the seed, and
//! CPython's samplers on top of it (53-bit `random()`, `getrandbits`, integers by
//! `_randbelow`'s rejection, its `shuffle`, `sample`, `choices`, `gauss` with its cached
//! second value, `normalvariate`), so `random.seed(0); random.random()` prints CPython's
//! number. The module's functions are the methods of a hidden session instance, as in
//! CPython; `random.Random(seed)` makes independent ones. It holds no numerics of its own
//! beyond those samplers and never touches numpy's or TensorFlow's generators.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::lang::{Args, Ctx, NativeClass, NativeFn, NativeModule, Object, PyErr, PyResult, Value};
use crate::tensor::RandomState;

/// One `random.Random` instance.
pub struct PyRandom {
    mt: RefCell<RandomState>,
    /// `gauss`'s second value of a pair, returned by the next call.
    gauss_next: Cell<Option<f64>>,
}

impl PyRandom {
    /// `random.Random(seed)` for an integer seed.
    pub fn new(seed: i64) -> PyRandom {
        PyRandom {
            mt: RefCell::new(words_state(seed.unsigned_abs())),
            gauss_next: Cell::new(None),
        }
    }

    /// Seeds from the magnitude `n` (`None`: the clock).
    fn reseed(&self, seed: Option<u64>) {
        *self.mt.borrow_mut() = match seed {
            Some(n) => words_state(n),
            None => RandomState::from_key(&entropy_key()),
        };
        self.gauss_next.set(None);
    }

    fn next_u32(&self) -> u32 {
        self.mt.borrow_mut().next_u32()
    }

    /// `random()`: 53 bits from two draws.
    pub fn random(&self) -> f64 {
        self.mt.borrow_mut().next_f64()
    }

    /// `getrandbits(k)` for `k <= 64`: whole words, least significant first, the last one
    /// cut to the bits still wanted.
    fn bits(&self, k: u32) -> u64 {
        if k <= 32 {
            return if k == 0 {
                0
            } else {
                (self.next_u32() >> (32 - k)) as u64
            };
        }
        let lo = self.next_u32() as u64;
        let hi = (self.next_u32() >> (64 - k)) as u64;
        lo | (hi << 32)
    }

    /// CPython's `_randbelow(n)`: `getrandbits(n.bit_length())` until below `n`.
    pub fn below(&self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let k = 64 - n.leading_zeros();
        loop {
            let r = self.bits(k);
            if r < n {
                return r;
            }
        }
    }

    /// `randint(a, b)`: `randrange(a, b + 1)`, an integer in `[a, b]`.
    pub fn randint(&self, a: i64, b: i64) -> PyResult<i64> {
        randrange(self, a, Some(b.saturating_add(1)), 1)
    }

    fn gauss(&self) -> f64 {
        if let Some(z) = self.gauss_next.take() {
            return z;
        }
        let x2pi = self.random() * std::f64::consts::TAU;
        let g2rad = (-2.0 * (1.0 - self.random()).ln()).sqrt();
        self.gauss_next.set(Some(x2pi.sin() * g2rad));
        x2pi.cos() * g2rad
    }
}

/// The generator CPython seeds from a magnitude: `init_by_array` over the words of `n`.
fn words_state(n: u64) -> RandomState {
    let key: Vec<u32> = if n >> 32 == 0 {
        vec![n as u32]
    } else {
        vec![n as u32, (n >> 32) as u32]
    };
    RandomState::from_key(&key)
}

fn entropy_key() -> Vec<u32> {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    vec![
        t as u32,
        (t >> 32) as u32,
        (t >> 64) as u32,
        std::process::id(),
    ]
}

/// CPython's `hash(x)` of a float, which `seed` uses for float seeds: the value modulo the
/// Mersenne prime 2**61 - 1. `None` for NaN, whose hash is its identity in CPython.
fn float_hash(v: f64) -> Option<i64> {
    const BITS: i32 = 61;
    const P: u64 = (1 << BITS) - 1;
    if v.is_nan() {
        return None;
    }
    if v.is_infinite() {
        return Some(if v > 0.0 { 314159 } else { -314159 });
    }
    let (mut m, mut e) = libm::frexp(v);
    let sign = if m < 0.0 { -1 } else { 1 };
    m = m.abs();
    let mut x: u64 = 0;
    while m != 0.0 {
        x = ((x << 28) & P) | (x >> (BITS - 28));
        m *= 268_435_456.0;
        e -= 28;
        let y = m as u64;
        m -= y as f64;
        x += y;
        if x >= P {
            x -= P;
        }
    }
    let e = if e >= 0 {
        e % BITS
    } else {
        BITS - 1 - ((-1 - e) % BITS)
    };
    x = ((x << e) & P) | (x >> (BITS - e));
    let h = x as i64 * sign;
    Some(if h == -1 { -2 } else { h })
}

/// CPython 3.11's `randrange(start, stop, step)`, with its errors.
fn randrange(r: &PyRandom, start: i64, stop: Option<i64>, step: i64) -> PyResult<i64> {
    let Some(stop) = stop else {
        if start > 0 {
            return Ok(r.below(start as u64) as i64);
        }
        return Err(PyErr::value_error("empty range for randrange()"));
    };
    let width = stop as i128 - start as i128;
    if step == 1 {
        if width > 0 {
            return Ok((start as i128 + r.below(width as u64) as i128) as i64);
        }
        return Err(PyErr::value_error(format!(
            "empty range for randrange() ({start}, {stop}, {width})"
        )));
    }
    let st = step as i128;
    let n = match step {
        0 => return Err(PyErr::value_error("zero step for randrange()")),
        s if s > 0 => (width + st - 1).div_euclid(st),
        _ => (width + st + 1).div_euclid(st),
    };
    if n <= 0 {
        return Err(PyErr::value_error("empty range for randrange()"));
    }
    Ok((start as i128 + st * r.below(n as u64) as i128) as i64)
}

/// An argument of `randrange` (`which`: "arg 1", "stop", "step"): an integer, or (as
/// CPython 3.11 still allows) a float with an integral value.
fn range_arg(v: &Value, which: &str) -> PyResult<i64> {
    match v {
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Ok(*f as i64),
        Value::Float(_) => Err(PyErr::value_error(format!(
            "non-integer {which} for randrange()"
        ))),
        _ => index(v),
    }
}

/// An integer argument as CPython's `_index` takes it (no floats).
fn index(v: &Value) -> PyResult<i64> {
    v.as_int()
}

fn float(v: &Option<Value>, default: f64) -> PyResult<f64> {
    v.as_ref().map_or(Ok(default), |v| v.as_float())
}

/// The items of a sequence argument; sets and dicts are refused, as CPython refuses them.
fn population(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
    let name = v.type_name();
    if matches!(name.as_str(), "set" | "frozenset" | "dict") || matches!(v, Value::Dict(_)) {
        return Err(PyErr::type_error(
            "Population must be a sequence.  For dicts or sets, use sorted(d).",
        ));
    }
    ctx.iterate(v)
}

type Method = fn(&PyRandom, &Args, &mut dyn Ctx) -> PyResult<Value>;

/// Every method of `Random`, which the module also offers as functions: the one table
/// behind dispatch, `dir()` and `hasattr`.
const METHODS: &[(&str, &str, Method)] = &[
    ("seed", "seed(a=None)\nInitialize internal state from a seed.", |r, a, _| {
        let s = a.bind("seed", &["a", "version"], 0)?;
        let seed = match &s[0] {
            None | Some(Value::None) => None,
            // CPython seeds a float by its hash, taken as an unsigned machine word.
            Some(Value::Float(f)) => float_hash(*f).map(|h| h as u64),
            Some(v @ (Value::Int(_) | Value::Bool(_))) => Some(index(v)?.unsigned_abs()),
            Some(Value::Str(_)) => {
                return Err(PyErr::new(
                    "NotImplementedError",
                    "random.seed() of a str is not supported by this kernel; seed with an int",
                ))
            }
            Some(_) => {
                return Err(PyErr::type_error(
                    "The only supported seed types are: None,\nint, float, str, bytes, and bytearray.",
                ))
            }
        };
        r.reseed(seed);
        Ok(Value::None)
    }),
    ("random", "random()\nx in the interval [0, 1).", |r, a, _| {
        a.bind("random", &[], 0)?;
        Ok(Value::Float(r.random()))
    }),
    ("uniform", "uniform(a, b)\nGet a random number in the range [a, b) or [a, b].", |r, a, _| {
        let s = a.bind("uniform", &["a", "b"], 2)?;
        let (lo, hi) = (float(&s[0], 0.0)?, float(&s[1], 0.0)?);
        Ok(Value::Float(lo + (hi - lo) * r.random()))
    }),
    ("randint", "randint(a, b)\nReturn random integer in range [a, b], including both end points.", |r, a, _| {
        let s = a.bind("randint", &["a", "b"], 2)?;
        let lo = range_arg(s[0].as_ref().unwrap_or(&Value::None), "arg 1")?;
        let hi = range_arg(s[1].as_ref().unwrap_or(&Value::None), "stop")?;
        r.randint(lo, hi).map(Value::Int)
    }),
    ("randrange", "randrange(start, stop=None, step=1)\nChoose a random item from range(start, stop[, step]).", |r, a, _| {
        let s = a.bind("randrange", &["start", "stop", "step"], 1)?;
        let start = range_arg(s[0].as_ref().unwrap_or(&Value::None), "arg 1")?;
        let stop = match &s[1] {
            None | Some(Value::None) => None,
            Some(v) => Some(range_arg(v, "stop")?),
        };
        let step = match &s[2] {
            None => 1,
            Some(v) => range_arg(v, "step")?,
        };
        // CPython tests `step is not _ONE`; a literal 1 is that same small int.
        if stop.is_none() && step != 1 {
            return Err(PyErr::type_error("Missing a non-None stop argument"));
        }
        randrange(r, start, stop, step).map(Value::Int)
    }),
    ("getrandbits", "getrandbits(k)\nGenerates an int with k random bits.", |r, a, _| {
        let s = a.bind("getrandbits", &["k"], 1)?;
        let k = index(s[0].as_ref().unwrap_or(&Value::None))?;
        if k < 0 {
            return Err(PyErr::value_error("number of bits must be non-negative"));
        }
        if k > 63 {
            return Err(PyErr::new(
                "OverflowError",
                "getrandbits(k) with k > 63 needs integers wider than this kernel's 64 bits",
            ));
        }
        Ok(Value::Int(r.bits(k as u32) as i64))
    }),
    ("choice", "choice(seq)\nChoose a random element from a non-empty sequence.", |r, a, ctx| {
        let s = a.bind("choice", &["seq"], 1)?;
        let items = population(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
        if items.is_empty() {
            return Err(PyErr::index_error("Cannot choose from an empty sequence"));
        }
        let i = r.below(items.len() as u64) as usize;
        Ok(items.get(i).cloned().unwrap_or(Value::None))
    }),
    ("shuffle", "shuffle(x)\nShuffle list x in place, and return None.", |r, a, _| {
        let s = a.bind("shuffle", &["x"], 1)?;
        let Some(Value::List(l)) = &s[0] else {
            let t = s[0].as_ref().map_or("NoneType".into(), |v| v.type_name());
            return Err(PyErr::type_error(format!(
                "'{t}' object does not support item assignment"
            )));
        };
        let mut v = l.borrow_mut();
        for i in (1..v.len()).rev() {
            let j = r.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
        Ok(Value::None)
    }),
    ("sample", "sample(population, k, *, counts=None)\nChooses k unique random elements from a population sequence.", |r, a, ctx| {
        let s = a.bind("sample", &["population", "k"], 2)?;
        let pop = population(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
        let k = index(s[1].as_ref().unwrap_or(&Value::None))?;
        let n = pop.len();
        if k < 0 || k as usize > n {
            return Err(PyErr::value_error("Sample larger than population or is negative"));
        }
        let k = k as usize;
        // CPython keeps a pool for small populations and a set of taken indices for
        // large ones; the two consume the stream differently.
        let mut setsize = 21usize;
        if k > 5 {
            setsize += 4usize.pow(((k * 3) as f64).log(4.0).ceil() as u32);
        }
        let mut out = Vec::with_capacity(k);
        if n <= setsize {
            let mut pool = pop.clone();
            for i in 0..k {
                let j = r.below((n - i) as u64) as usize;
                out.push(pool[j].clone());
                pool[j] = pool[n - i - 1].clone();
            }
        } else {
            let mut taken = std::collections::HashSet::new();
            for _ in 0..k {
                let mut j = r.below(n as u64) as usize;
                while taken.contains(&j) {
                    j = r.below(n as u64) as usize;
                }
                taken.insert(j);
                out.push(pop[j].clone());
            }
        }
        Ok(Value::list(out))
    }),
    ("choices", "choices(population, weights=None, *, cum_weights=None, k=1)\nReturn a k sized list of population elements chosen with replacement.", |r, a, ctx| {
        let s = a.bind("choices", &["population", "weights", "cum_weights", "k"], 1)?;
        let pop = population(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
        let k = s[3].as_ref().map_or(Ok(1), index)?.max(0) as usize;
        let n = pop.len();
        let given = |v: &Option<Value>| v.as_ref().filter(|v| !v.is_none()).cloned();
        let cum: Vec<f64> = match (given(&s[1]), given(&s[2])) {
            (None, None) => {
                return Ok(Value::list(
                    (0..k)
                        .map(|_| {
                            let i = (r.random() * n as f64).floor() as usize;
                            pop.get(i).cloned().ok_or_else(|| {
                                PyErr::index_error("list index out of range")
                            })
                        })
                        .collect::<PyResult<_>>()?,
                ))
            }
            (Some(_), Some(_)) => {
                return Err(PyErr::type_error(
                    "Cannot specify both weights and cumulative weights",
                ))
            }
            (Some(w), None) => {
                let mut acc = 0.0;
                ctx.iterate(&w)?
                    .iter()
                    .map(|v| {
                        acc += v.as_float()?;
                        Ok(acc)
                    })
                    .collect::<PyResult<_>>()?
            }
            (None, Some(c)) => ctx
                .iterate(&c)?
                .iter()
                .map(|v| v.as_float())
                .collect::<PyResult<_>>()?,
        };
        if cum.len() != n {
            return Err(PyErr::value_error(
                "The number of weights does not match the population",
            ));
        }
        let total = cum.last().copied().unwrap_or(0.0);
        if total <= 0.0 {
            return Err(PyErr::value_error("Total of weights must be greater than zero"));
        }
        if !total.is_finite() {
            return Err(PyErr::value_error("Total of weights must be finite"));
        }
        let hi = n - 1;
        Ok(Value::list(
            (0..k)
                .map(|_| {
                    let x = r.random() * total;
                    // bisect_right over cum[..hi]
                    let i = cum[..hi].partition_point(|&c| c <= x);
                    pop[i].clone()
                })
                .collect(),
        ))
    }),
    ("gauss", "gauss(mu=0.0, sigma=1.0)\nGaussian distribution.", |r, a, _| {
        let s = a.bind("gauss", &["mu", "sigma"], 0)?;
        let (mu, sigma) = (float(&s[0], 0.0)?, float(&s[1], 1.0)?);
        Ok(Value::Float(mu + r.gauss() * sigma))
    }),
    ("normalvariate", "normalvariate(mu=0.0, sigma=1.0)\nNormal distribution.", |r, a, _| {
        let s = a.bind("normalvariate", &["mu", "sigma"], 0)?;
        let (mu, sigma) = (float(&s[0], 0.0)?, float(&s[1], 1.0)?);
        // Kinderman and Monahan's ratio method, as CPython.
        let magic = 4.0 * (-0.5f64).exp() / 2f64.sqrt();
        loop {
            let u1 = r.random();
            let u2 = 1.0 - r.random();
            let z = magic * (u1 - 0.5) / u2;
            if z * z / 4.0 <= -u2.ln() {
                return Ok(Value::Float(mu + z * sigma));
            }
        }
    }),
    ("expovariate", "expovariate(lambd=1.0)\nExponential distribution.", |r, a, _| {
        let s = a.bind("expovariate", &["lambd"], 0)?;
        let l = float(&s[0], 1.0)?;
        if l == 0.0 {
            return Err(PyErr::new("ZeroDivisionError", "float division by zero"));
        }
        Ok(Value::Float(-(1.0 - r.random()).ln() / l))
    }),
    ("getstate", "getstate()\nReturn internal state; can be passed to setstate() later.", |r, a, _| {
        a.bind("getstate", &[], 0)?;
        let (words, pos) = r.mt.borrow().words();
        let mut items: Vec<Value> = words.into_iter().map(|w| Value::Int(w as i64)).collect();
        items.push(Value::Int(pos as i64));
        Ok(Value::tuple(vec![
            Value::Int(3),
            Value::tuple(items),
            r.gauss_next.get().map_or(Value::None, Value::Float),
        ]))
    }),
    ("setstate", "setstate(state)\nRestore internal state from object returned by getstate().", |r, a, ctx| {
        let s = a.bind("setstate", &["state"], 1)?;
        let bad = || PyErr::type_error("state vector must be a tuple");
        let parts = s[0].as_ref().and_then(|v| v.as_seq()).ok_or_else(bad)?;
        let [version, words, gauss] = &parts[..] else {
            return Err(bad());
        };
        if index(version)? != 3 {
            return Err(PyErr::value_error(format!(
                "state with version {} passed to Random.setstate() of version 3",
                index(version)?
            )));
        }
        let mut w = ctx
            .iterate(words)?
            .iter()
            .map(|v| index(v).map(|i| i as u32))
            .collect::<PyResult<Vec<u32>>>()?;
        let pos = w.pop().unwrap_or(0) as usize;
        let state = RandomState::from_words(&w, pos)
            .ok_or_else(|| PyErr::value_error("state vector is the wrong size"))?;
        *r.mt.borrow_mut() = state;
        r.gauss_next
            .set(if gauss.is_none() { None } else { Some(gauss.as_float()?) });
        Ok(Value::None)
    }),
];

fn method(r: Rc<PyRandom>, name: &str) -> Option<Value> {
    let (n, doc, body) = METHODS.iter().find(|(n, _, _)| *n == name)?;
    let body = *body;
    Some(NativeFn::value(n, doc, move |a, ctx| body(&r, a, ctx)))
}

/// A `Random` instance as a value: the generator behind an `Rc`, so bound methods share it.
struct Instance(Rc<PyRandom>);

impl Object for Instance {
    fn type_name(&self) -> String {
        "Random".into()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["Random".into()]
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<random.Random object at {:#x}>",
            Rc::as_ptr(&self.0) as usize
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(method(self.0.clone(), name))
    }
    fn dir(&self) -> Vec<String> {
        METHODS.iter().map(|(n, _, _)| n.to_string()).collect()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The session's hidden instance behind the module's functions, seeded from the clock.
struct Global(Rc<PyRandom>);

impl Default for Global {
    fn default() -> Self {
        let r = PyRandom::new(0);
        r.reseed(None);
        Global(Rc::new(r))
    }
}

fn random_class() -> Value {
    NativeClass::new(
        "Random",
        "random",
        "Random(x=None)\nRandom number generator base class used by bound module functions.",
    )
    .constructor(|a, ctx| {
        let s = a.bind("Random", &["x"], 0)?;
        let r = Rc::new(PyRandom::new(0));
        // Seeding goes through `seed` itself, so the constructor takes what it takes.
        if let Some((_, _, seed)) = METHODS.iter().find(|(n, _, _)| *n == "seed") {
            seed(
                &r,
                &Args::new(vec![s[0].clone().unwrap_or(Value::None)]),
                ctx,
            )?;
        }
        Ok(Value::native(Instance(r)))
    })
    .into_value()
}

/// The `random` module.
pub fn module(ctx: &mut dyn Ctx) -> PyResult<Value> {
    let global = ctx.state().get::<Global>().0.clone();
    let m = NativeModule::new("random", "Random variable generators (CPython's streams).");
    for (name, _, _) in METHODS {
        if let Some(f) = method(global.clone(), name) {
            m.set(name, f);
        }
    }
    m.set("Random", random_class());
    Ok(m.into_value())
}
