//! `collections`: `deque` (with `maxlen`, both ends, `rotate`) and `namedtuple` (classes
//! whose instances are [`Record`]s: fields by name and index, `_fields`, `_asdict`,
//! `_replace`, `_make`, defaults), with CPython's reprs and error texts. The dict
//! subclasses (`Counter`, `defaultdict`, `OrderedDict`) are in `mappings`.

use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use super::f;
use super::record::{position, Record};
use crate::bindings::common::{arg, ItemIter};
use crate::lang::{
    Args, CmpOp, Ctx, Dict, NativeClass, NativeModule, Object, PyErr, PyResult, Value,
};

/// `collections.deque`.
pub struct Deque {
    items: RefCell<VecDeque<Value>>,
    maxlen: Option<usize>,
}

impl Deque {
    /// Adds at one end, dropping from the other past `maxlen`.
    fn push(&self, v: Value, left: bool) {
        let mut d = self.items.borrow_mut();
        if self.maxlen == Some(0) {
            return;
        }
        if left {
            d.push_front(v);
        } else {
            d.push_back(v);
        }
        if let Some(m) = self.maxlen {
            while d.len() > m {
                if left {
                    d.pop_back();
                } else {
                    d.pop_front();
                }
            }
        }
    }

    fn index_of(&self, key: &Value) -> PyResult<usize> {
        let len = self.items.borrow().len();
        position(key, len, "deque index out of range", |t| {
            format!("sequence index must be integer, not '{t}'")
        })
    }

    /// The position of the first item equal to `x`, or CPython's ValueError.
    fn find(&self, x: &Value, ctx: &mut dyn Ctx) -> PyResult<usize> {
        let items: Vec<Value> = self.items.borrow().iter().cloned().collect();
        for (i, v) in items.iter().enumerate() {
            let eq = ctx.compare(CmpOp::Eq, v, x)?;
            if ctx.truthy(&eq)? {
                return Ok(i);
            }
        }
        Err(PyErr::value_error(format!(
            "{} is not in deque",
            ctx.repr(x)?
        )))
    }

    fn method(&self, this: &Value, name: &str, a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let one = |a: &Args| -> PyResult<Value> {
            let s = a.bind(name, &["x"], 1)?;
            Ok(arg(&s, 0).clone())
        };
        match name {
            "append" | "appendleft" => self.push(one(a)?, name == "appendleft"),
            "extend" | "extendleft" => {
                let src = one(a)?;
                let items = if src.is(this) {
                    self.items.borrow().iter().cloned().collect()
                } else {
                    ctx.iterate(&src)?
                };
                for v in items {
                    self.push(v, name == "extendleft");
                }
            }
            "pop" | "popleft" => {
                a.bind(name, &[], 0)?;
                let mut d = self.items.borrow_mut();
                let v = if name == "pop" {
                    d.pop_back()
                } else {
                    d.pop_front()
                };
                return v.ok_or_else(|| PyErr::index_error("pop from an empty deque"));
            }
            "rotate" => {
                let s = a.bind(name, &["n"], 0)?;
                let n = match &s[0] {
                    Some(v) => v.as_int()?,
                    None => 1,
                };
                let mut d = self.items.borrow_mut();
                let len = d.len() as i64;
                if len > 0 {
                    let k = n.rem_euclid(len) as usize;
                    d.rotate_right(k);
                }
            }
            "clear" => self.items.borrow_mut().clear(),
            "reverse" => {
                let mut d = self.items.borrow_mut();
                let v: Vec<Value> = d.drain(..).rev().collect();
                d.extend(v);
            }
            "count" => {
                let x = one(a)?;
                let items: Vec<Value> = self.items.borrow().iter().cloned().collect();
                let mut n = 0;
                for v in &items {
                    let eq = ctx.compare(CmpOp::Eq, v, &x)?;
                    n += ctx.truthy(&eq)? as i64;
                }
                return Ok(Value::Int(n));
            }
            "index" => return Ok(Value::Int(self.find(&one(a)?, ctx)? as i64)),
            "remove" => {
                let i = self.find(&one(a)?, ctx)?;
                self.items.borrow_mut().remove(i);
            }
            "copy" => {
                return Ok(Value::native(Deque {
                    items: RefCell::new(self.items.borrow().clone()),
                    maxlen: self.maxlen,
                }))
            }
            _ => {}
        }
        Ok(Value::None)
    }
}

const DEQUE_METHODS: &[&str] = &[
    "append",
    "appendleft",
    "extend",
    "extendleft",
    "pop",
    "popleft",
    "rotate",
    "clear",
    "reverse",
    "count",
    "index",
    "remove",
    "copy",
];

impl Object for Deque {
    fn type_name(&self) -> String {
        "deque".into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let items: Vec<Value> = self.items.borrow().iter().cloned().collect();
        let list = ctx.repr(&Value::list(items))?;
        Ok(match self.maxlen {
            Some(m) => format!("deque({list}, maxlen={m})"),
            None => format!("deque({list})"),
        })
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "maxlen" {
            return Ok(Some(
                self.maxlen
                    .map(|m| Value::Int(m as i64))
                    .unwrap_or(Value::None),
            ));
        }
        if !DEQUE_METHODS.contains(&name) {
            return Ok(None);
        }
        let (me, name) = (this.clone(), name.to_string());
        Ok(Some(f(&name.clone(), "", move |a, ctx| {
            match me.downcast::<Deque>() {
                Some(d) => d.method(&me, &name, a, ctx),
                None => Ok(Value::None),
            }
        })))
    }
    fn dir(&self) -> Vec<String> {
        let mut d: Vec<String> = DEQUE_METHODS.iter().map(|s| s.to_string()).collect();
        d.push("maxlen".into());
        d
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        Ok(Some(self.items.borrow().len()))
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        Ok(Some(!self.items.borrow().is_empty()))
    }
    fn getitem(&self, key: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let i = self.index_of(key)?;
        Ok(self.items.borrow()[i].clone())
    }
    fn setitem(&self, key: &Value, v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        let i = self.index_of(key)?;
        self.items.borrow_mut()[i] = v;
        Ok(())
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let items: Vec<Value> = self.items.borrow().iter().cloned().collect();
        Ok(ItemIter::value("_collections._deque_iterator", items))
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let Some(o) = other.downcast::<Deque>() else {
            return Ok(None);
        };
        let mine = Value::list(self.items.borrow().iter().cloned().collect());
        let theirs = Value::list(o.items.borrow().iter().cloned().collect());
        ctx.compare(op, &mine, &theirs).map(Some)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn deque(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("deque", &["iterable", "maxlen"], 0)?;
    let maxlen = match arg(&s, 1) {
        Value::None => None,
        v => {
            let m = v.as_int()?;
            if m < 0 {
                return Err(PyErr::value_error("maxlen must be non-negative"));
            }
            Some(m as usize)
        }
    };
    let d = Deque {
        items: RefCell::new(VecDeque::new()),
        maxlen,
    };
    if let Some(src) = &s[0] {
        for v in ctx.iterate(src)? {
            d.push(v, false);
        }
    }
    Ok(Value::native(d))
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

fn check_name(n: &str) -> PyResult<()> {
    let mut chars = n.chars();
    let ident = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_');
    if !ident {
        return Err(PyErr::value_error(format!(
            "Type names and field names must be valid identifiers: {}",
            crate::lang::str_repr(n)
        )));
    }
    if KEYWORDS.contains(&n) {
        return Err(PyErr::value_error(format!(
            "Type names and field names cannot be a keyword: {}",
            crate::lang::str_repr(n)
        )));
    }
    Ok(())
}

/// "'x'", "'x' and 'y'", "'x', 'y', and 'z'", as CPython lists missing arguments.
fn listing(names: &[&String]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match q.as_slice() {
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        _ => format!(
            "{}, and {}",
            q[..q.len() - 1].join(", "),
            q.last().cloned().unwrap_or_default()
        ),
    }
}

/// Builds a record of the class from call arguments, as the generated `__new__` binds them.
fn make(name: &str, fields: &[String], defaults: &[Value], a: &Args) -> PyResult<Value> {
    let n = fields.len();
    if a.pos.len() > n {
        return Err(PyErr::type_error(format!(
            "{name}.__new__() takes {} positional arguments but {} were given",
            n + 1,
            a.pos.len() + 1
        )));
    }
    let mut slots: Vec<Option<Value>> = a.pos.iter().cloned().map(Some).collect();
    slots.resize(n, None);
    for (k, v) in &a.kw {
        match fields.iter().position(|f| f == k) {
            Some(i) if slots[i].is_some() => {
                return Err(PyErr::type_error(format!(
                    "{name}.__new__() got multiple values for argument '{k}'"
                )))
            }
            Some(i) => slots[i] = Some(v.clone()),
            None => {
                return Err(PyErr::type_error(format!(
                    "{name}.__new__() got an unexpected keyword argument '{k}'"
                )))
            }
        }
    }
    // Defaults belong to the last fields.
    let first_default = n - defaults.len();
    for (i, slot) in slots.iter_mut().enumerate() {
        if slot.is_none() && i >= first_default {
            *slot = Some(defaults[i - first_default].clone());
        }
    }
    let missing: Vec<&String> = fields
        .iter()
        .zip(&slots)
        .filter(|(_, s)| s.is_none())
        .map(|(f, _)| f)
        .collect();
    if !missing.is_empty() {
        return Err(PyErr::type_error(format!(
            "{name}.__new__() missing {} required positional argument{}: {}",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" },
            listing(&missing)
        )));
    }
    let refs: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
    Ok(Record::value(
        name,
        &refs,
        slots
            .into_iter()
            .map(|s| s.unwrap_or(Value::None))
            .collect(),
    ))
}

fn namedtuple(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind(
        "namedtuple",
        &["typename", "field_names", "rename", "defaults", "module"],
        2,
    )?;
    let name = arg(&s, 0).as_str()?.to_string();
    let fields: Vec<String> = match arg(&s, 1) {
        Value::Str(t) => t
            .replace(',', " ")
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        v => ctx
            .iterate(v)?
            .iter()
            .map(|x| ctx.str(x))
            .collect::<PyResult<_>>()?,
    };
    check_name(&name)?;
    for (i, fname) in fields.iter().enumerate() {
        check_name(fname)?;
        if fname.starts_with('_') {
            return Err(PyErr::value_error(format!(
                "Field names cannot start with an underscore: {}",
                crate::lang::str_repr(fname)
            )));
        }
        if fields[..i].contains(fname) {
            return Err(PyErr::value_error(format!(
                "Encountered duplicate field name: {}",
                crate::lang::str_repr(fname)
            )));
        }
    }
    let defaults = match arg(&s, 3) {
        Value::None => vec![],
        v => ctx.iterate(v)?,
    };
    if defaults.len() > fields.len() {
        return Err(PyErr::type_error(
            "Got more default values than field names",
        ));
    }
    let mut field_defaults = Dict::default();
    for (fname, d) in fields[fields.len() - defaults.len()..]
        .iter()
        .zip(&defaults)
    {
        field_defaults.insert_str(fname, d.clone());
    }
    let module = match arg(&s, 4) {
        Value::None => "__main__".to_string(),
        v => ctx.str(v)?,
    };
    let field_values = Value::tuple(fields.iter().map(|f| Value::str(f)).collect());
    let (n1, f1, d1) = (name.clone(), fields.clone(), defaults.clone());
    let (n2, f2) = (name.clone(), fields.clone());
    let cls = NativeClass::new(&name, &module, &format!("{name}({})", fields.join(", ")))
        .base("tuple")
        .constructor(move |a, _| make(&n1, &f1, &d1, a))
        .static_attr("_fields", field_values)
        .static_attr(
            "_field_defaults",
            Value::Dict(Rc::new(RefCell::new(field_defaults))),
        )
        .static_attr(
            "_make",
            f(
                "_make",
                "_make(iterable)\nMake a new object from a sequence or iterable",
                move |a, ctx| {
                    let s = a.bind("_make", &["iterable"], 1)?;
                    let items = ctx.iterate(arg(&s, 0))?;
                    if items.len() != f2.len() {
                        return Err(PyErr::type_error(format!(
                            "Expected {} arguments, got {}",
                            f2.len(),
                            items.len()
                        )));
                    }
                    let refs: Vec<&str> = f2.iter().map(|s| s.as_str()).collect();
                    Ok(Record::value(&n2, &refs, items))
                },
            ),
        );
    Ok(cls.into_value())
}

pub fn module() -> Value {
    let mut m = NativeModule::new("collections", "Specialized container datatypes: deque, namedtuple, Counter, defaultdict and OrderedDict.")
        .with("deque", f("deque", "deque([iterable[, maxlen]])\nA list-like sequence optimized for data accesses near its endpoints.", deque))
        .with("namedtuple", f("namedtuple", "namedtuple(typename, field_names, *, rename=False, defaults=None, module=None)\nReturns a new subclass of tuple with named fields.", namedtuple));
    for (name, class) in super::mappings::classes() {
        m = m.with(name, class);
    }
    m.into_value()
}
