//! `itertools`: iterator building blocks with CPython's order of results. Every iterator
//! here is lazy (it pulls one item at a time from its source through the interpreter), so
//! the endless ones (`count`, `cycle`, `repeat` without `times`) work under `for` loops,
//! `islice`, `zip_longest` and `takewhile`. `groupby` collects each group when it is
//! reached, rather than sharing the source with the group as CPython does.

use std::any::Any;
use std::cell::{Cell, RefCell};

use super::f;
use crate::bindings::common::{arg, ItemIter};
use crate::lang::{
    Args, BinOp, CmpOp, Ctx, Lazy, NativeClass, NativeFn, NativeModule, Object, PyErr, PyResult,
    Value,
};

/// The module the lazy iterators here name in their reprs.
const IT: Option<&str> = Some("itertools");

/// `itertools.count` and `itertools.repeat`, whose reprs show their state.
struct Count {
    next: RefCell<Value>,
    step: Value,
}

impl Object for Count {
    fn type_name(&self) -> String {
        "count".into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let n = ctx.repr(&self.next.borrow().clone())?;
        Ok(match self.step {
            Value::Int(1) => format!("count({n})"),
            _ => format!("count({n}, {})", ctx.repr(&self.step)?),
        })
    }
    fn iter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn next(&self, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let cur = self.next.borrow().clone();
        let after = ctx.binop(BinOp::Add, &cur, &self.step)?;
        *self.next.borrow_mut() = after;
        Ok(Some(cur))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

struct Repeat {
    item: Value,
    /// Repetitions left; `None` repeats forever.
    left: Cell<Option<i64>>,
}

impl Object for Repeat {
    fn type_name(&self) -> String {
        "repeat".into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let item = ctx.repr(&self.item)?;
        Ok(match self.left.get() {
            Some(n) => format!("repeat({item}, {n})"),
            None => format!("repeat({item})"),
        })
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        Ok(None)
    }
    fn iter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn next(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match self.left.get() {
            Some(0) => Ok(None),
            Some(n) => {
                self.left.set(Some(n - 1));
                Ok(Some(self.item.clone()))
            }
            None => Ok(Some(self.item.clone())),
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn is_number(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_))
}

fn count(a: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("count", &["start", "step"], 0)?;
    let start = s[0].clone().unwrap_or(Value::Int(0));
    let step = s[1].clone().unwrap_or(Value::Int(1));
    if !is_number(&start) || !is_number(&step) {
        return Err(PyErr::type_error("a number is required"));
    }
    Ok(Value::native(Count {
        next: RefCell::new(start),
        step,
    }))
}

fn repeat(a: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("repeat", &["object", "times"], 1)?;
    let left = match arg(&s, 1) {
        Value::None if s[1].is_none() => None,
        v => Some(v.as_int()?.max(0)),
    };
    Ok(Value::native(Repeat {
        item: arg(&s, 0).clone(),
        left: Cell::new(left),
    }))
}

fn cycle(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("cycle", &["iterable"], 1)?;
    let src = ctx.get_iter(arg(&s, 0))?;
    let mut saved: Vec<Value> = vec![];
    let mut first_pass = true;
    let mut i = 0;
    Ok(Lazy::value(IT, "cycle", move |ctx| {
        if first_pass {
            if let Some(v) = ctx.next_item(&src)? {
                saved.push(v.clone());
                return Ok(Some(v));
            }
            first_pass = false;
        }
        if saved.is_empty() {
            return Ok(None);
        }
        let v = saved[i % saved.len()].clone();
        i += 1;
        Ok(Some(v))
    }))
}

/// Items from a sequence of iterables, one after the other.
fn chain_of(sources: Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let outer = ctx.get_iter(&sources)?;
    let mut inner: Option<Value> = None;
    Ok(Lazy::value(IT, "chain", move |ctx| loop {
        if let Some(it) = &inner {
            if let Some(v) = ctx.next_item(it)? {
                return Ok(Some(v));
            }
        }
        match ctx.next_item(&outer)? {
            Some(next) => inner = Some(ctx.get_iter(&next)?),
            None => return Ok(None),
        }
    }))
}

/// A non-negative index argument of `islice`, or `None`.
fn islice_index(v: &Value, msg: &str) -> PyResult<Option<usize>> {
    match v {
        Value::None => Ok(None),
        Value::Int(i) if *i >= 0 => Ok(Some(*i as usize)),
        Value::Bool(b) => Ok(Some(*b as usize)),
        _ => Err(PyErr::value_error(msg)),
    }
}

fn islice(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if !a.kw.is_empty() {
        return Err(PyErr::type_error("islice() takes no keyword arguments"));
    }
    let n = a.pos.len();
    if n < 2 {
        return Err(PyErr::type_error(format!(
            "islice expected at least 2 arguments, got {n}"
        )));
    }
    if n > 4 {
        return Err(PyErr::type_error(format!(
            "islice expected at most 4 arguments, got {n}"
        )));
    }
    const INDICES: &str = "Indices for islice() must be None or an integer: 0 <= x <= sys.maxsize.";
    let (start, stop, step) = if n == 2 {
        let stop = islice_index(
            &a.pos[1],
            "Stop argument for islice() must be None or an integer: 0 <= x <= sys.maxsize.",
        )?;
        (0, stop, 1)
    } else {
        let start = islice_index(&a.pos[1], INDICES)?.unwrap_or(0);
        let stop = islice_index(&a.pos[2], INDICES)?;
        let step = match a.pos.get(3) {
            None | Some(Value::None) => 1,
            Some(Value::Int(i)) if *i > 0 => *i as usize,
            Some(_) => {
                return Err(PyErr::value_error(
                    "Step for islice() must be a positive integer or None.",
                ))
            }
        };
        (start, stop, step)
    };
    let src = ctx.get_iter(&a.pos[0])?;
    let mut seen = 0usize;
    let mut want = start;
    Ok(Lazy::value(IT, "islice", move |ctx| {
        if stop.is_some_and(|s| want >= s) {
            // Consume up to `stop`, as CPython does when the step jumps past it.
            while stop.is_some_and(|s| seen < s) {
                if ctx.next_item(&src)?.is_none() {
                    break;
                }
                seen += 1;
            }
            return Ok(None);
        }
        loop {
            let Some(v) = ctx.next_item(&src)? else {
                return Ok(None);
            };
            seen += 1;
            if seen - 1 == want {
                want += step;
                return Ok(Some(v));
            }
        }
    }))
}

/// The pools of `product`: each iterable read whole, repeated `repeat` times.
fn pools(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Vec<Vec<Value>>> {
    let mut times = 1;
    for (k, v) in &a.kw {
        if k != "repeat" {
            return Err(PyErr::type_error(format!(
                "product() got an unexpected keyword argument '{k}'"
            )));
        }
        times = v.as_int()?;
    }
    if times < 0 {
        return Err(PyErr::value_error("repeat argument cannot be negative"));
    }
    let base = a
        .pos
        .iter()
        .map(|v| ctx.iterate(v))
        .collect::<PyResult<Vec<_>>>()?;
    let mut out = vec![];
    for _ in 0..times {
        out.extend(base.iter().cloned());
    }
    Ok(out)
}

fn product(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let pools = pools(a, ctx)?;
    let mut idx: Option<Vec<usize>> = if pools.iter().any(|p| p.is_empty()) {
        None
    } else {
        Some(vec![0; pools.len()])
    };
    Ok(Lazy::value(IT, "product", move |_| {
        let Some(cur) = idx.clone() else {
            return Ok(None);
        };
        let item = Value::tuple(cur.iter().zip(&pools).map(|(i, p)| p[*i].clone()).collect());
        // The rightmost index advances fastest, carrying to the left.
        let mut next = cur;
        let mut k = next.len();
        idx = loop {
            if k == 0 {
                break None;
            }
            k -= 1;
            next[k] += 1;
            if next[k] < pools[k].len() {
                break Some(next);
            }
            next[k] = 0;
        };
        Ok(Some(item))
    }))
}

/// The `r` argument of `permutations` and `combinations`.
fn r_arg(v: &Value, n: usize, default_n: bool) -> PyResult<usize> {
    match v {
        Value::None if default_n => Ok(n),
        Value::Int(r) if *r >= 0 => Ok(*r as usize),
        Value::Int(_) => Err(PyErr::value_error("r must be non-negative")),
        _ => Err(PyErr::type_error("Expected int as r")),
    }
}

fn pick(pool: &[Value], idx: &[usize]) -> Value {
    Value::tuple(idx.iter().map(|i| pool[*i].clone()).collect())
}

fn permutations(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("permutations", &["iterable", "r"], 1)?;
    let pool = ctx.iterate(arg(&s, 0))?;
    let n = pool.len();
    let r = r_arg(arg(&s, 1), n, true)?;
    // CPython's algorithm: indices and cycles, yielding in lexicographic index order.
    let mut indices: Vec<usize> = (0..n).collect();
    let mut cycles: Vec<usize> = (0..r).map(|i| n - i.min(n)).collect();
    let mut first = true;
    let mut over = r > n;
    Ok(Lazy::value(IT, "permutations", move |_| {
        if over {
            return Ok(None);
        }
        if first {
            first = false;
            return Ok(Some(pick(&pool, &indices[..r])));
        }
        for i in (0..r).rev() {
            cycles[i] -= 1;
            if cycles[i] == 0 {
                let moved = indices.remove(i);
                indices.push(moved);
                cycles[i] = n - i;
            } else {
                let j = cycles[i];
                indices.swap(i, n - j);
                return Ok(Some(pick(&pool, &indices[..r])));
            }
        }
        over = true;
        Ok(None)
    }))
}

fn combinations_of(a: &Args, ctx: &mut dyn Ctx, replace: bool) -> PyResult<Value> {
    let name = if replace {
        "combinations_with_replacement"
    } else {
        "combinations"
    };
    let s = a.bind(name, &["iterable", "r"], 1)?;
    if s[1].is_none() {
        return Err(PyErr::type_error(format!(
            "{name}() missing required argument 'r' (pos 2)"
        )));
    }
    let pool = ctx.iterate(arg(&s, 0))?;
    let n = pool.len();
    let r = r_arg(arg(&s, 1), n, false)?;
    let mut indices: Vec<usize> = if replace {
        vec![0; r]
    } else {
        (0..r).collect()
    };
    let mut first = true;
    let mut over = if replace { n == 0 && r > 0 } else { r > n };
    let type_name = if replace {
        "combinations_with_replacement"
    } else {
        "combinations"
    };
    Ok(Lazy::value(IT, type_name, move |_| {
        if over {
            return Ok(None);
        }
        if first {
            first = false;
            return Ok(Some(pick(&pool, &indices)));
        }
        // The rightmost index that can still grow.
        let top = |i: usize| if replace { n - 1 } else { i + n - r };
        let Some(i) = (0..r).rev().find(|&i| indices[i] != top(i)) else {
            over = true;
            return Ok(None);
        };
        indices[i] += 1;
        for j in i + 1..r {
            indices[j] = if replace {
                indices[i]
            } else {
                indices[j - 1] + 1
            };
        }
        Ok(Some(pick(&pool, &indices)))
    }))
}

fn accumulate(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("accumulate", &["iterable", "func", "initial"], 1)?;
    let src = ctx.get_iter(arg(&s, 0))?;
    let func = arg(&s, 1).clone();
    let mut total: Option<Value> = s[2].clone().filter(|v| !v.is_none());
    let mut pending_initial = total.is_some();
    Ok(Lazy::value(IT, "accumulate", move |ctx| {
        if pending_initial {
            pending_initial = false;
            return Ok(total.clone());
        }
        let Some(v) = ctx.next_item(&src)? else {
            return Ok(None);
        };
        let next = match &total {
            None => v,
            Some(t) if func.is_none() => ctx.binop(BinOp::Add, t, &v)?,
            Some(t) => ctx.call(&func, Args::new(vec![t.clone(), v]))?,
        };
        total = Some(next.clone());
        Ok(Some(next))
    }))
}

fn equal(a: &Value, b: &Value, ctx: &mut dyn Ctx) -> PyResult<bool> {
    let r = ctx.compare(CmpOp::Eq, a, b)?;
    ctx.truthy(&r)
}

fn groupby(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("groupby", &["iterable", "key"], 1)?;
    let src = ctx.get_iter(arg(&s, 0))?;
    let key = arg(&s, 1).clone();
    // The first item of the next group, already read, with its key.
    let mut ahead: Option<(Value, Value)> = None;
    let mut started = false;
    Ok(Lazy::value(IT, "groupby", move |ctx| {
        let keyed = |v: Value, ctx: &mut dyn Ctx| -> PyResult<(Value, Value)> {
            let k = if key.is_none() {
                v.clone()
            } else {
                ctx.call(&key, Args::new(vec![v.clone()]))?
            };
            Ok((k, v))
        };
        if !started {
            started = true;
            if let Some(v) = ctx.next_item(&src)? {
                ahead = Some(keyed(v, ctx)?);
            }
        }
        let Some((k, first)) = ahead.take() else {
            return Ok(None);
        };
        let mut group = vec![first];
        while let Some(v) = ctx.next_item(&src)? {
            let (k2, v) = keyed(v, ctx)?;
            if equal(&k2, &k, ctx)? {
                group.push(v);
            } else {
                ahead = Some((k2, v));
                break;
            }
        }
        Ok(Some(Value::tuple(vec![
            k,
            ItemIter::value("_grouper", group),
        ])))
    }))
}

fn zip_longest(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let mut fill = Value::None;
    for (k, v) in &a.kw {
        if k != "fillvalue" {
            return Err(PyErr::type_error(format!(
                "zip_longest() got an unexpected keyword argument '{k}'"
            )));
        }
        fill = v.clone();
    }
    let mut iters: Vec<Option<Value>> = a
        .pos
        .iter()
        .map(|v| ctx.get_iter(v).map(Some))
        .collect::<PyResult<_>>()?;
    Ok(Lazy::value(IT, "zip_longest", move |ctx| {
        if iters.is_empty() {
            return Ok(None);
        }
        let mut row = vec![];
        let mut live = 0;
        for slot in iters.iter_mut() {
            let got = match slot {
                Some(it) => ctx.next_item(it)?,
                None => None,
            };
            match got {
                Some(v) => {
                    live += 1;
                    row.push(v);
                }
                None => {
                    *slot = None;
                    row.push(fill.clone());
                }
            }
        }
        Ok((live > 0).then(|| Value::tuple(row)))
    }))
}

fn starmap(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("starmap", &["function", "iterable"], 2)?;
    let func = arg(&s, 0).clone();
    let src = ctx.get_iter(arg(&s, 1))?;
    Ok(Lazy::value(IT, "starmap", move |ctx| {
        let Some(v) = ctx.next_item(&src)? else {
            return Ok(None);
        };
        let args = ctx.iterate(&v)?;
        ctx.call(&func, Args::new(args)).map(Some)
    }))
}

/// `takewhile`, `dropwhile` and `filterfalse`: a predicate over the source's items.
fn with_predicate(a: &Args, ctx: &mut dyn Ctx, name: &'static str) -> PyResult<Value> {
    let s = a.bind(name, &["predicate", "iterable"], 2)?;
    let pred = arg(&s, 0).clone();
    let src = ctx.get_iter(arg(&s, 1))?;
    let mut dropping = true;
    Ok(Lazy::value(IT, name, move |ctx| loop {
        let Some(v) = ctx.next_item(&src)? else {
            return Ok(None);
        };
        let hit = if pred.is_none() {
            ctx.truthy(&v)?
        } else {
            let r = ctx.call(&pred, Args::new(vec![v.clone()]))?;
            ctx.truthy(&r)?
        };
        match name {
            "takewhile" => return Ok(hit.then_some(v)),
            "dropwhile" => {
                if !(dropping && hit) {
                    dropping = false;
                    return Ok(Some(v));
                }
            }
            _ => {
                if !hit {
                    return Ok(Some(v));
                }
            }
        }
    }))
}

fn compress(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("compress", &["data", "selectors"], 2)?;
    let data = ctx.get_iter(arg(&s, 0))?;
    let sel = ctx.get_iter(arg(&s, 1))?;
    Ok(Lazy::value(IT, "compress", move |ctx| loop {
        let (Some(v), Some(keep)) = (ctx.next_item(&data)?, ctx.next_item(&sel)?) else {
            return Ok(None);
        };
        if ctx.truthy(&keep)? {
            return Ok(Some(v));
        }
    }))
}

fn pairwise(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("pairwise", &["iterable"], 1)?;
    let src = ctx.get_iter(arg(&s, 0))?;
    let mut last: Option<Value> = None;
    Ok(Lazy::value(IT, "pairwise", move |ctx| {
        if last.is_none() {
            last = ctx.next_item(&src)?;
            if last.is_none() {
                return Ok(None);
            }
        }
        let Some(v) = ctx.next_item(&src)? else {
            return Ok(None);
        };
        let prev = last.replace(v.clone()).unwrap_or(Value::None);
        Ok(Some(Value::tuple(vec![prev, v])))
    }))
}

pub fn module() -> Value {
    let chain = NativeClass::new(
        "chain",
        "itertools",
        "chain(*iterables)\nReturn a chain object whose .__next__() method returns elements from the first iterable until it is exhausted, then elements from the next iterable, until all of the iterables are exhausted.",
    )
    .constructor(|a, ctx| {
        if !a.kw.is_empty() {
            return Err(PyErr::type_error("chain() takes no keyword arguments"));
        }
        chain_of(Value::tuple(a.pos.clone()), ctx)
    })
    .static_attr(
        "from_iterable",
        NativeFn::value(
            "from_iterable",
            "from_iterable(iterable)\nAlternative chain() constructor taking a single iterable argument that evaluates lazily.",
            |a, ctx| {
                let s = a.bind("from_iterable", &["iterable"], 1)?;
                chain_of(arg(&s, 0).clone(), ctx)
            },
        ),
    );
    NativeModule::new("itertools", "Functional tools for creating and using iterators.")
        .with("count", f("count", "count(start=0, step=1)\nReturn a count object whose .__next__() method returns consecutive values.", count))
        .with("cycle", f("cycle", "cycle(iterable)\nReturn elements from the iterable until it is exhausted. Then repeat the sequence indefinitely.", cycle))
        .with("repeat", f("repeat", "repeat(object [,times])\nCreate an iterator which returns the object for the specified number of times. If not specified, returns the object endlessly.", repeat))
        .with("chain", chain.into_value())
        .with("islice", f("islice", "islice(iterable, stop) or islice(iterable, start, stop[, step])\nReturn an iterator whose next() method returns selected values from an iterable.", islice))
        .with("product", f("product", "product(*iterables, repeat=1)\nCartesian product of input iterables. Equivalent to nested for-loops.", product))
        .with("permutations", f("permutations", "permutations(iterable, r=None)\nReturn successive r-length permutations of elements in the iterable.", permutations))
        .with("combinations", f("combinations", "combinations(iterable, r)\nReturn successive r-length combinations of elements in the iterable.", |a, ctx| combinations_of(a, ctx, false)))
        .with("combinations_with_replacement", f("combinations_with_replacement", "combinations_with_replacement(iterable, r)\nReturn successive r-length combinations of elements in the iterable allowing individual elements to have successive repeats.", |a, ctx| combinations_of(a, ctx, true)))
        .with("accumulate", f("accumulate", "accumulate(iterable, func=None, *, initial=None)\nReturn series of accumulated sums (or other binary function results).", accumulate))
        .with("groupby", f("groupby", "groupby(iterable, key=None)\nmake an iterator that returns consecutive keys and groups from the iterable", groupby))
        .with("zip_longest", f("zip_longest", "zip_longest(*iterables, fillvalue=None)\nReturn a zip_longest object whose .__next__() method returns a tuple where the i-th element comes from the i-th iterable argument.", zip_longest))
        .with("starmap", f("starmap", "starmap(function, iterable)\nReturn an iterator whose values are returned from the function evaluated with an argument tuple taken from the given sequence.", starmap))
        .with("takewhile", f("takewhile", "takewhile(predicate, iterable)\nReturn successive entries from an iterable as long as the predicate evaluates to true for each entry.", |a, ctx| with_predicate(a, ctx, "takewhile")))
        .with("dropwhile", f("dropwhile", "dropwhile(predicate, iterable)\nDrop items from the iterable while predicate(item) is true.", |a, ctx| with_predicate(a, ctx, "dropwhile")))
        .with("filterfalse", f("filterfalse", "filterfalse(function, iterable)\nReturn those items of iterable for which function(item) is false.", |a, ctx| with_predicate(a, ctx, "filterfalse")))
        .with("compress", f("compress", "compress(data, selectors)\nReturn data elements corresponding to true selector elements.", compress))
        .with("pairwise", f("pairwise", "pairwise(iterable)\nReturn an iterator of overlapping pairs taken from the input iterator.", pairwise))
        .into_value()
}
