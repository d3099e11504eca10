//! `functools`: `reduce`, `partial`, `lru_cache`/`cache` (with `cache_info` and
//! `cache_clear`) and `cmp_to_key`, behaving as CPython's: the same results, cache
//! statistics, reprs where they hold no address, and errors.

use std::any::Any;
use std::cell::{Cell, RefCell};

use indexmap::IndexMap;

use super::f;
use super::record::Record;
use crate::bindings::common::arg;
use crate::lang::{Args, CmpOp, Ctx, HashKey, NativeModule, Object, PyErr, PyResult, Value};

fn reduce(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if !a.kw.is_empty() {
        return Err(PyErr::type_error("reduce() takes no keyword arguments"));
    }
    let (func, seq, initial) = match a.pos.as_slice() {
        [f, s] => (f, s, None),
        [f, s, i] => (f, s, Some(i.clone())),
        other => {
            return Err(PyErr::type_error(format!(
                "reduce expected at {} 3 arguments, got {}",
                if other.len() < 2 { "least" } else { "most" },
                other.len()
            )))
        }
    };
    let it = ctx
        .get_iter(seq)
        .map_err(|_| PyErr::type_error("reduce() arg 2 must support iteration"))?;
    let mut acc = initial;
    while let Some(v) = ctx.next_item(&it)? {
        acc = Some(match acc {
            None => v,
            Some(prev) => ctx.call(func, Args::new(vec![prev, v]))?,
        });
    }
    acc.ok_or_else(|| PyErr::type_error("reduce() of empty iterable with no initial value"))
}

/// `functools.partial`: a callable with some arguments filled in.
struct Partial {
    func: Value,
    args: Vec<Value>,
    kw: Vec<(String, Value)>,
}

impl Object for Partial {
    fn type_name(&self) -> String {
        "partial".into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let mut parts = vec![ctx.repr(&self.func)?];
        for v in &self.args {
            parts.push(ctx.repr(v)?);
        }
        for (k, v) in &self.kw {
            parts.push(format!("{k}={}", ctx.repr(v)?));
        }
        Ok(format!("functools.partial({})", parts.join(", ")))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let mut pos = self.args.clone();
        pos.extend(args.pos);
        let mut kw = self.kw.clone();
        for (k, v) in args.kw {
            match kw.iter_mut().find(|(n, _)| *n == k) {
                Some(slot) => slot.1 = v,
                None => kw.push((k, v)),
            }
        }
        ctx.call(&self.func, Args { pos, kw })
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "func" => Some(self.func.clone()),
            "args" => Some(Value::tuple(self.args.clone())),
            "keywords" => {
                let mut d = crate::lang::Dict::default();
                for (k, v) in &self.kw {
                    d.insert_str(k, v.clone());
                }
                Some(Value::Dict(std::rc::Rc::new(RefCell::new(d))))
            }
            _ => None,
        })
    }
    fn dir(&self) -> Vec<String> {
        vec!["func".into(), "args".into(), "keywords".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn partial(a: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some(func) = a.pos.first() else {
        return Err(PyErr::type_error(
            "type 'partial' takes at least one argument",
        ));
    };
    // A partial of a partial flattens, as CPython's does.
    let (func, mut args, mut kw) = match func.downcast::<Partial>() {
        Some(p) => (p.func.clone(), p.args.clone(), p.kw.clone()),
        None => (func.clone(), vec![], vec![]),
    };
    args.extend(a.pos[1..].iter().cloned());
    for (k, v) in &a.kw {
        match kw.iter_mut().find(|(n, _)| n == k) {
            Some(slot) => slot.1 = v.clone(),
            None => kw.push((k.clone(), v.clone())),
        }
    }
    Ok(Value::native(Partial { func, args, kw }))
}

/// The function `lru_cache` wraps, with its cache: least recently used first.
struct Cached {
    func: Value,
    maxsize: Option<usize>,
    cache: RefCell<IndexMap<HashKey, Value>>,
    hits: Cell<i64>,
    misses: Cell<i64>,
}

impl Cached {
    fn info(&self) -> Value {
        Record::value(
            "CacheInfo",
            &["hits", "misses", "maxsize", "currsize"],
            vec![
                Value::Int(self.hits.get()),
                Value::Int(self.misses.get()),
                self.maxsize
                    .map(|m| Value::Int(m as i64))
                    .unwrap_or(Value::None),
                Value::Int(self.cache.borrow().len() as i64),
            ],
        )
    }
}

impl Object for Cached {
    fn type_name(&self) -> String {
        "_lru_cache_wrapper".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok("<functools._lru_cache_wrapper object>".into())
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        if self.maxsize == Some(0) {
            self.misses.set(self.misses.get() + 1);
            return ctx.call(&self.func, args);
        }
        // The key: the positional arguments, then a marker and each keyword pair.
        let mut parts = args.pos.clone();
        if !args.kw.is_empty() {
            parts.push(Value::str("\u{0}kwd_mark"));
            for (k, v) in &args.kw {
                parts.push(Value::str(k));
                parts.push(v.clone());
            }
        }
        // CPython keys a lone int or str argument by itself, anything else by a tuple, so
        // `f(4)` and `f(4.0)` are cached apart.
        let key = match parts.as_slice() {
            [v @ (Value::Int(_) | Value::Str(_))] => HashKey::of(v)?,
            _ => HashKey::of(&Value::tuple(parts))?,
        };
        let hit = self.cache.borrow_mut().shift_remove(&key);
        if let Some(v) = hit {
            self.hits.set(self.hits.get() + 1);
            self.cache.borrow_mut().insert(key, v.clone());
            return Ok(v);
        }
        self.misses.set(self.misses.get() + 1);
        let v = ctx.call(&self.func, args)?;
        let mut cache = self.cache.borrow_mut();
        cache.insert(key, v.clone());
        if let Some(max) = self.maxsize {
            while cache.len() > max {
                cache.shift_remove_index(0);
            }
        }
        Ok(v)
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let me = this.clone();
        Ok(match name {
            "cache_info" => Some(f(
                "cache_info",
                "cache_info()\nReport cache statistics.",
                move |_, _| {
                    Ok(me
                        .downcast::<Cached>()
                        .map(|c| c.info())
                        .unwrap_or(Value::None))
                },
            )),
            "cache_clear" => Some(f(
                "cache_clear",
                "cache_clear()\nClear the cache and cache statistics.",
                move |_, _| {
                    if let Some(c) = me.downcast::<Cached>() {
                        c.cache.borrow_mut().clear();
                        c.hits.set(0);
                        c.misses.set(0);
                    }
                    Ok(Value::None)
                },
            )),
            "__wrapped__" => Some(self.func.clone()),
            "__name__" | "__doc__" | "__qualname__" | "__module__" => {
                Some(ctx.getattr(&self.func, name)?)
            }
            _ => None,
        })
    }
    fn dir(&self) -> Vec<String> {
        vec![
            "cache_info".into(),
            "cache_clear".into(),
            "__wrapped__".into(),
        ]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn cached(func: Value, maxsize: Option<usize>) -> Value {
    Value::native(Cached {
        func,
        maxsize,
        cache: RefCell::new(IndexMap::new()),
        hits: Cell::new(0),
        misses: Cell::new(0),
    })
}

fn is_callable(v: &Value) -> bool {
    matches!(v, Value::Obj(_) | Value::Native(_))
}

fn lru_cache(a: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("lru_cache", &["maxsize", "typed"], 0)?;
    let maxsize = match s[0].clone() {
        None => Some(128),
        Some(Value::None) => None,
        Some(Value::Int(n)) => Some(n.max(0) as usize),
        Some(v) if is_callable(&v) => return Ok(cached(v, Some(128))),
        Some(_) => {
            return Err(PyErr::type_error(
                "Expected first argument to be an integer, a callable, or None",
            ))
        }
    };
    Ok(f(
        "decorating_function",
        "decorating_function(user_function)",
        move |a, _| {
            let s = a.bind("decorating_function", &["user_function"], 1)?;
            Ok(cached(arg(&s, 0).clone(), maxsize))
        },
    ))
}

/// `cmp_to_key`'s key objects: ordered by the comparison function's sign.
struct CmpKey {
    cmp: Value,
    obj: Value,
}

impl Object for CmpKey {
    fn type_name(&self) -> String {
        "functools.KeyWrapper".into()
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let Some(o) = other.downcast::<CmpKey>() else {
            return Err(PyErr::type_error("other argument must be K instance"));
        };
        let r = ctx.call(&self.cmp, Args::new(vec![self.obj.clone(), o.obj.clone()]))?;
        ctx.compare(op, &r, &Value::Int(0)).map(Some)
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok((name == "obj").then(|| self.obj.clone()))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

pub fn module() -> Value {
    NativeModule::new("functools", "Tools for working with functions and callable objects.")
        .with("reduce", f("reduce", "reduce(function, iterable[, initial], /)\nApply a function of two arguments cumulatively to the items of an iterable, from left to right.", reduce))
        .with("partial", f("partial", "partial(func, /, *args, **keywords)\nNew function with partial application of the given arguments and keywords.", partial))
        .with("lru_cache", f("lru_cache", "lru_cache(maxsize=128, typed=False)\nLeast-recently-used cache decorator.", lru_cache))
        .with("cache", f("cache", "cache(user_function, /)\nSimple lightweight unbounded cache.  Sometimes called \"memoize\".", |a, _| {
            let s = a.bind("cache", &["user_function"], 1)?;
            Ok(cached(arg(&s, 0).clone(), None))
        }))
        .with("cmp_to_key", f("cmp_to_key", "cmp_to_key(mycmp)\nConvert a cmp= function into a key= function.", |a, _| {
            let s = a.bind("cmp_to_key", &["mycmp"], 1)?;
            let cmp = arg(&s, 0).clone();
            Ok(f("K", "K(obj)", move |a, _| {
                let s = a.bind("K", &["obj"], 1)?;
                Ok(Value::native(CmpKey { cmp: cmp.clone(), obj: arg(&s, 0).clone() }))
            }))
        }))
        .into_value()
}
