//! `collections`' dict subclasses: `Counter` (counts, `most_common`, `update`/`subtract`,
//! `elements`, `total`, multiset arithmetic), `defaultdict` (a factory for missing keys) and
//! `OrderedDict` (`move_to_end`, `popitem(last=)`). Each is a real dict carrying a
//! [`DictKind`], so the rest of the language (`isinstance(c, dict)`, `json.dumps`, `dict(c)`,
//! iteration, `len`, `in`) sees a dict; the kind adds CPython's `__missing__`, repr, methods
//! and operators. One method table per kind drives its `getattr` and `dir()`.

use std::cell::RefCell;
use std::rc::Rc;

use super::f;
use crate::bindings::common::{arg, ItemIter};
use crate::lang::{Args, BinOp, CmpOp, Ctx, Dict, DictKind, NativeClass, PyErr, PyResult, Value};

/// A new, empty dict of `kind` (a plain dict for `None`).
pub fn empty_dict(kind: Option<Rc<dyn DictKind>>) -> Rc<RefCell<Dict>> {
    let mut d = Dict::default();
    d.kind = kind;
    Rc::new(RefCell::new(d))
}

fn new_dict(kind: Rc<dyn DictKind>) -> Value {
    Value::Dict(empty_dict(Some(kind)))
}

/// A copy of `this`'s entries under `kind`.
fn copy_as(this: &Value, kind: Rc<dyn DictKind>) -> Value {
    let out = new_dict(kind);
    if let (Value::Dict(from), Value::Dict(to)) = (this, &out) {
        to.borrow_mut().map = from.borrow().map.clone();
    }
    out
}

fn entries(v: &Value) -> Vec<(Value, Value)> {
    match v {
        Value::Dict(d) => d
            .borrow()
            .items()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        _ => vec![],
    }
}

fn get(this: &Value, k: &Value) -> PyResult<Option<Value>> {
    match this {
        Value::Dict(d) => d.borrow().get(k),
        _ => Ok(None),
    }
}

fn set(this: &Value, k: Value, v: Value) -> PyResult<()> {
    match this {
        Value::Dict(d) => d.borrow_mut().insert(k, v),
        _ => Ok(()),
    }
}

/// The key-value pairs of a mapping (a dict or anything with `keys()`), or `None` for
/// another iterable.
fn mapping_pairs(src: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Vec<(Value, Value)>>> {
    if let Value::Dict(_) = src {
        return Ok(Some(entries(src)));
    }
    let keys = match ctx.getattr(src, "keys") {
        Ok(k) => k,
        Err(_) => return Ok(None),
    };
    let keys = ctx.call(&keys, Args::default())?;
    let mut out = vec![];
    for k in ctx.iterate(&keys)? {
        let v = ctx.getitem(src, &k)?;
        out.push((k, v));
    }
    Ok(Some(out))
}

/// Fills `this` as `dict(*args, **kwargs)` does, with CPython's texts for bad pairs.
fn fill(
    this: &Value,
    src: Option<&Value>,
    kw: &[(String, Value)],
    ctx: &mut dyn Ctx,
) -> PyResult<()> {
    if let Some(src) = src {
        match mapping_pairs(src, ctx)? {
            Some(pairs) => {
                for (k, v) in pairs {
                    set(this, k, v)?;
                }
            }
            None => {
                for (i, item) in ctx.iterate(src)?.into_iter().enumerate() {
                    let kv = ctx.iterate(&item).map_err(|_| {
                        PyErr::type_error(format!(
                            "cannot convert dictionary update sequence element #{i} to a sequence"
                        ))
                    })?;
                    if kv.len() != 2 {
                        return Err(PyErr::value_error(format!(
                            "dictionary update sequence element #{i} has length {}; 2 is required",
                            kv.len()
                        )));
                    }
                    set(this, kv[0].clone(), kv[1].clone())?;
                }
            }
        }
    }
    for (k, v) in kw {
        set(this, Value::str(k), v.clone())?;
    }
    Ok(())
}

/// The one positional argument a dict-like constructor or `update` takes.
fn one_source<'a>(a: &'a Args, func: &str) -> PyResult<Option<&'a Value>> {
    if a.pos.len() > 1 {
        return Err(PyErr::type_error(format!(
            "{func} expected at most 1 argument, got {}",
            a.pos.len()
        )));
    }
    Ok(a.pos.first())
}

/// A method of the kind's table bound to the dict `this`.
fn bound(
    this: &Value,
    name: &str,
    body: fn(&Value, &Args, &mut dyn Ctx) -> PyResult<Value>,
) -> Value {
    let me = this.clone();
    f(name, "", move |a, ctx| body(&me, a, ctx))
}

type Method = (
    &'static str,
    fn(&Value, &Args, &mut dyn Ctx) -> PyResult<Value>,
);

fn lookup(table: &[Method], this: &Value, name: &str) -> Option<Value> {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, body)| bound(this, n, *body))
}

fn names(table: &[Method]) -> Vec<String> {
    table.iter().map(|(n, _)| n.to_string()).collect()
}

// ---- Counter ----

#[derive(Debug)]
struct Counter;

fn counter_kind() -> Rc<dyn DictKind> {
    Rc::new(Counter)
}

fn is_counter(v: &Value) -> bool {
    Dict::kind_of(v).is_some_and(|k| k.type_name() == "Counter")
}

/// `self[elem]` for a Counter: 0 when absent.
fn count(this: &Value, k: &Value) -> PyResult<Value> {
    Ok(get(this, k)?.unwrap_or(Value::Int(0)))
}

/// `update` and `subtract` (and the constructor, `func` `__init__`): counts from a mapping,
/// an iterable of elements and keywords, added or taken away by `sign`.
fn counter_update(
    this: &Value,
    func: &str,
    a: &Args,
    ctx: &mut dyn Ctx,
    sign: BinOp,
) -> PyResult<()> {
    if a.pos.len() > 1 {
        return Err(PyErr::type_error(format!(
            "Counter.{func}() takes from 1 to 2 positional arguments but {} were given",
            a.pos.len() + 1
        )));
    }
    if let Some(src) = a.pos.first() {
        match mapping_pairs(src, ctx)? {
            Some(pairs) => {
                for (k, n) in pairs {
                    let old = count(this, &k)?;
                    let new = ctx.binop(sign, &old, &n)?;
                    set(this, k, new)?;
                }
            }
            None => {
                for k in ctx.iterate(src)? {
                    let old = count(this, &k)?;
                    let new = ctx.binop(sign, &old, &Value::Int(1))?;
                    set(this, k, new)?;
                }
            }
        }
    }
    for (k, n) in &a.kw {
        let k = Value::str(k);
        let old = count(this, &k)?;
        let new = ctx.binop(sign, &old, n)?;
        set(this, k, new)?;
    }
    Ok(())
}

/// The items from the most common down; equal counts keep insertion order, as
/// `sorted(..., reverse=True)` and `heapq.nlargest` keep it.
fn most_common(this: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<(Value, Value)>> {
    let mut items = entries(this);
    // A stable insertion sort through the interpreter's `<`, so that any orderable counts
    // sort and unorderable ones raise CPython's TypeError.
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 {
            let lt = ctx.compare(CmpOp::Lt, &items[j - 1].1, &items[j].1)?;
            if !ctx.truthy(&lt)? {
                break;
            }
            items.swap(j - 1, j);
            j -= 1;
        }
    }
    Ok(items)
}

fn positive(ctx: &mut dyn Ctx, v: &Value) -> PyResult<bool> {
    let gt = ctx.compare(CmpOp::Gt, v, &Value::Int(0))?;
    ctx.truthy(&gt)
}

const COUNTER_METHODS: &[Method] = &[
    ("most_common", |this, a, ctx| {
        let s = a.bind("most_common", &["n"], 0)?;
        let mut items = most_common(this, ctx)?;
        if let Some(n) = s[0].as_ref().filter(|n| !matches!(n, Value::None)) {
            // `heapq.nlargest` first compares `n` with the size, which names its type.
            ctx.compare(CmpOp::Ge, n, &Value::Int(items.len() as i64))?;
            let n = n.as_int()?.max(0) as usize;
            items.truncate(n);
        }
        Ok(Value::list(
            items
                .into_iter()
                .map(|(k, v)| Value::tuple(vec![k, v]))
                .collect(),
        ))
    }),
    ("update", |this, a, ctx| {
        counter_update(this, "update", a, ctx, BinOp::Add)?;
        Ok(Value::None)
    }),
    ("subtract", |this, a, ctx| {
        counter_update(this, "subtract", a, ctx, BinOp::Sub)?;
        Ok(Value::None)
    }),
    ("elements", |this, a, _| {
        a.bind("elements", &[], 0)?;
        let mut out = vec![];
        for (k, n) in entries(this) {
            for _ in 0..n.as_int()?.max(0) {
                out.push(k.clone());
            }
        }
        Ok(ItemIter::value("itertools.chain", out))
    }),
    ("total", |this, a, ctx| {
        a.bind("total", &[], 0)?;
        let mut sum = Value::Int(0);
        for (_, n) in entries(this) {
            sum = ctx.binop(BinOp::Add, &sum, &n)?;
        }
        Ok(sum)
    }),
    ("copy", |this, a, _| {
        a.bind("copy", &[], 0)?;
        Ok(copy_as(this, counter_kind()))
    }),
    ("fromkeys", |_, _, _| Err(counter_fromkeys())),
];

fn counter_fromkeys() -> PyErr {
    PyErr::new(
        "NotImplementedError",
        "Counter.fromkeys() is undefined.  Use Counter(iterable) instead.",
    )
}

impl DictKind for Counter {
    fn type_name(&self) -> &str {
        "Counter"
    }
    fn missing(&self, _: &Value, _: &Value, _: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(Value::Int(0)))
    }
    fn repr(&self, this: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
        if entries(this).is_empty() {
            return Ok("Counter()".into());
        }
        // CPython shows the most common first, or insertion order when counts do not sort.
        let items = match most_common(this, ctx) {
            Ok(items) => items,
            Err(_) => entries(this),
        };
        let mut d = Dict::default();
        for (k, v) in items {
            d.insert(k, v)?;
        }
        let plain = Value::Dict(Rc::new(RefCell::new(d)));
        Ok(format!("Counter({})", ctx.repr(&plain)?))
    }
    fn getattr(&self, this: &Value, name: &str, _: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(lookup(COUNTER_METHODS, this, name))
    }
    fn dir(&self) -> Vec<String> {
        names(COUNTER_METHODS)
    }
    fn binop(
        &self,
        op: BinOp,
        this: &Value,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        if !is_counter(other)
            || !matches!(op, BinOp::Add | BinOp::Sub | BinOp::BitOr | BinOp::BitAnd)
        {
            return Ok(None);
        }
        let (x, y) = if reflected {
            (other, this)
        } else {
            (this, other)
        };
        let out = new_dict(counter_kind());
        for (k, n) in entries(x) {
            let m = count(y, &k)?;
            let new = match op {
                BinOp::Add => ctx.binop(BinOp::Add, &n, &m)?,
                BinOp::Sub => ctx.binop(BinOp::Sub, &n, &m)?,
                _ => {
                    let lt = ctx.compare(CmpOp::Lt, &n, &m)?;
                    let n_smaller = ctx.truthy(&lt)?;
                    // `|` keeps the larger count, `&` the smaller.
                    if n_smaller == (op == BinOp::BitOr) {
                        m
                    } else {
                        n
                    }
                }
            };
            if positive(ctx, &new)? {
                set(&out, k, new)?;
            }
        }
        if op != BinOp::BitAnd {
            for (k, m) in entries(y) {
                if get(x, &k)?.is_some() {
                    continue;
                }
                let new = if op == BinOp::Sub {
                    ctx.binop(BinOp::Sub, &Value::Int(0), &m)?
                } else {
                    m
                };
                if positive(ctx, &new)? {
                    set(&out, k, new)?;
                }
            }
        }
        Ok(Some(out))
    }
}

fn counter(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let c = new_dict(counter_kind());
    counter_update(&c, "__init__", a, ctx, BinOp::Add)?;
    Ok(c)
}

// ---- defaultdict ----

#[derive(Debug)]
struct DefaultDict {
    factory: Value,
}

const DEFAULTDICT_METHODS: &[Method] = &[("copy", |this, a, ctx| {
    a.bind("copy", &[], 0)?;
    let factory = match Dict::kind_of(this) {
        Some(k) => k.getattr(this, "default_factory", ctx)?,
        None => None,
    };
    let factory = factory.unwrap_or(Value::None);
    Ok(copy_as(this, Rc::new(DefaultDict { factory })))
})];

impl DictKind for DefaultDict {
    fn type_name(&self) -> &str {
        "defaultdict"
    }
    fn missing(&self, this: &Value, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if let Value::None = self.factory {
            return Ok(None);
        }
        let v = ctx.call(&self.factory, Args::default())?;
        set(this, key.clone(), v.clone())?;
        Ok(Some(v))
    }
    fn repr(&self, this: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
        let plain = empty_dict(None);
        if let Value::Dict(d) = this {
            plain.borrow_mut().map = d.borrow().map.clone();
        }
        let plain = Value::Dict(plain);
        Ok(format!(
            "defaultdict({}, {})",
            ctx.repr(&self.factory)?,
            ctx.repr(&plain)?
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "default_factory" {
            return Ok(Some(self.factory.clone()));
        }
        Ok(lookup(DEFAULTDICT_METHODS, this, name))
    }
    fn dir(&self) -> Vec<String> {
        let mut d = names(DEFAULTDICT_METHODS);
        d.push("default_factory".into());
        d
    }
}

fn defaultdict(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let factory = a.pos.first().cloned().unwrap_or(Value::None);
    // Functions, classes and other objects may be called; numbers, strings and
    // containers may not.
    if !matches!(factory, Value::None | Value::Obj(_) | Value::Native(_)) {
        return Err(PyErr::type_error("first argument must be callable or None"));
    }
    if a.pos.len() > 2 {
        return Err(PyErr::type_error(format!(
            "dict expected at most 1 argument, got {}",
            a.pos.len() - 1
        )));
    }
    let d = new_dict(Rc::new(DefaultDict { factory }));
    fill(&d, a.pos.get(1), &a.kw, ctx)?;
    Ok(d)
}

// ---- OrderedDict ----

#[derive(Debug)]
struct OrderedDict;

const ORDEREDDICT_METHODS: &[Method] = &[
    ("move_to_end", |this, a, ctx| {
        let s = a.bind("move_to_end", &["key", "last"], 1)?;
        let key = arg(&s, 0);
        let last = match &s[1] {
            Some(v) => ctx.truthy(v)?,
            None => true,
        };
        let Value::Dict(d) = this else {
            return Ok(Value::None);
        };
        let mut d = d.borrow_mut();
        let h = crate::lang::HashKey::of(key)?;
        let Some(i) = d.map.get_index_of(&h) else {
            drop(d);
            return Err(PyErr::key_error(ctx.repr(key)?));
        };
        let to = if last { d.map.len() - 1 } else { 0 };
        d.map.move_index(i, to);
        Ok(Value::None)
    }),
    ("popitem", |this, a, ctx| {
        let s = a.bind("popitem", &["last"], 0)?;
        let last = match &s[0] {
            Some(v) => ctx.truthy(v)?,
            None => true,
        };
        let Value::Dict(d) = this else {
            return Ok(Value::None);
        };
        let mut d = d.borrow_mut();
        let item = if last {
            d.map.pop().map(|(_, kv)| kv)
        } else {
            d.map.shift_remove_index(0).map(|(_, kv)| kv)
        };
        match item {
            Some((k, v)) => Ok(Value::tuple(vec![k, v])),
            None => Err(PyErr::key_error("'dictionary is empty'")),
        }
    }),
    ("copy", |this, a, _| {
        a.bind("copy", &[], 0)?;
        Ok(copy_as(this, Rc::new(OrderedDict)))
    }),
];

impl DictKind for OrderedDict {
    fn type_name(&self) -> &str {
        "OrderedDict"
    }
    fn repr(&self, this: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
        let items = entries(this);
        if items.is_empty() {
            return Ok("OrderedDict()".into());
        }
        let pairs = Value::list(
            items
                .into_iter()
                .map(|(k, v)| Value::tuple(vec![k, v]))
                .collect(),
        );
        Ok(format!("OrderedDict({})", ctx.repr(&pairs)?))
    }
    fn getattr(&self, this: &Value, name: &str, _: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(lookup(ORDEREDDICT_METHODS, this, name))
    }
    fn dir(&self) -> Vec<String> {
        names(ORDEREDDICT_METHODS)
    }
}

fn ordered_dict(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let d = new_dict(Rc::new(OrderedDict));
    fill(&d, one_source(a, "OrderedDict")?, &a.kw, ctx)?;
    Ok(d)
}

/// The three classes, as `collections` exports them.
pub fn classes() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Counter",
            NativeClass::new(
                "Counter",
                "collections",
                "Counter(iterable=None, /, **kwds)\nDict subclass for counting hashable items.",
            )
            .base("dict")
            .constructor(counter)
            .static_attr("fromkeys", f("fromkeys", "", |_, _| Err(counter_fromkeys())))
            .into_value(),
        ),
        (
            "defaultdict",
            NativeClass::new(
                "defaultdict",
                "collections",
                "defaultdict(default_factory=None, /, [...])\nA dict that calls default_factory for missing keys.",
            )
            .base("dict")
            .constructor(defaultdict)
            .into_value(),
        ),
        (
            "OrderedDict",
            NativeClass::new(
                "OrderedDict",
                "collections",
                "OrderedDict(mapping=(), /, **kwargs)\nDictionary that remembers insertion order.",
            )
            .base("dict")
            .constructor(ordered_dict)
            .into_value(),
        ),
    ]
}
