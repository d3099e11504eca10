//! The builtin functions (`print`, `len`, `range`, `sorted`, `isinstance`, ...) and the
//! builtin types' constructors (`int("3")`, `list(x)`, `dict(a=1)`). Builtins are
//! `Builtin` objects dispatched by name with full access to the running `Vm`.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use indexmap::IndexMap;

use super::builtins_obj::{WrapKind, Wrapper};
use super::exc::{PyErr, PyResult};
use super::object::{Args, Object};
use super::runtime::*;
use super::value::{Dict, HashKey, Value};
use super::vm::Vm;
use crate::session::StreamName;

pub struct Builtin {
    pub name: &'static str,
}

impl Object for Builtin {
    fn type_name(&self) -> String {
        "builtin_function_or_method".into()
    }
    fn repr(&self, _ctx: &mut dyn super::object::Ctx) -> PyResult<String> {
        Ok(format!("<built-in function {}>", self.name))
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const Builtin as usize as u64)
    }
    fn doc(&self) -> Option<String> {
        Some(super::help::builtin_doc(self.name))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

pub const FUNCTIONS: &[&str] = &[
    "print",
    "len",
    "range",
    "enumerate",
    "zip",
    "map",
    "filter",
    "sorted",
    "reversed",
    "sum",
    "min",
    "max",
    "abs",
    "round",
    "isinstance",
    "issubclass",
    "hasattr",
    "getattr",
    "setattr",
    "delattr",
    "callable",
    "iter",
    "next",
    "repr",
    "format",
    "id",
    "hash",
    "divmod",
    "pow",
    "any",
    "all",
    "chr",
    "ord",
    "hex",
    "bin",
    "oct",
    "input",
    "open",
    "dir",
    "vars",
    "globals",
    "locals",
    "help",
    "display",
    "staticmethod",
    "classmethod",
    "property",
    "__yield__",
    "__yield_from__",
    "exit",
    "quit",
    "super",
    "object",
];

pub const TYPES: &[&str] = &[
    "int",
    "float",
    "str",
    "bool",
    "list",
    "tuple",
    "dict",
    "set",
    "frozenset",
    "type",
    "slice",
];

pub fn make_builtins(exc: &HashMap<String, Value>) -> HashMap<String, Value> {
    let mut m = HashMap::new();
    for f in FUNCTIONS {
        m.insert(f.to_string(), Value::Obj(Rc::new(Builtin { name: f })));
    }
    for t in TYPES {
        m.insert(t.to_string(), Value::Obj(Rc::new(BuiltinType { name: t })));
    }
    m.insert(
        "range".into(),
        Value::Obj(Rc::new(BuiltinType { name: "range" })),
    );
    m.insert(
        "object".into(),
        Value::Obj(Rc::new(BuiltinType { name: "object" })),
    );
    for (k, v) in exc {
        m.insert(k.clone(), v.clone());
    }
    m.insert(
        "NotImplemented".into(),
        Value::Obj(Rc::new(Singleton("NotImplemented"))),
    );
    m.insert(
        "Ellipsis".into(),
        Value::Obj(Rc::new(Singleton("Ellipsis"))),
    );
    m.insert("__name__".into(), Value::str("__main__"));
    m
}

fn kw<'a>(a: &'a Args, name: &str) -> Option<&'a Value> {
    a.kw.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn one<'a>(a: &'a Args, f: &str) -> PyResult<&'a Value> {
    a.pos
        .first()
        .ok_or_else(|| PyErr::type_error(format!("{f}() takes exactly one argument (0 given)")))
}

impl Vm<'_> {
    pub fn call_builtin(&mut self, name: &str, a: Args) -> PyResult<Value> {
        Ok(match name {
            "print" => {
                let sep = match kw(&a, "sep") {
                    Some(Value::None) | None => " ".to_string(),
                    Some(v) => self.str_of(v)?,
                };
                let end = match kw(&a, "end") {
                    Some(Value::None) | None => "\n".to_string(),
                    Some(v) => self.str_of(v)?,
                };
                let mut parts = Vec::with_capacity(a.pos.len());
                for v in &a.pos {
                    parts.push(self.str_of(v)?);
                }
                let text = format!("{}{end}", parts.join(&sep));
                match kw(&a, "file") {
                    None | Some(Value::None) => self.write(StreamName::Stdout, &text),
                    Some(f) => {
                        let w = self.get_attr(f, "write")?;
                        self.call_value(&w, Args::new(vec![Value::from(text)]))?;
                    }
                }
                if kw(&a, "flush")
                    .map(|v| matches!(v, Value::Bool(true)))
                    .unwrap_or(false)
                {
                    self.flush();
                }
                Value::None
            }
            "len" => Value::Int(self.len_of(one(&a, name)?)? as i64),
            "enumerate" => {
                let start = match (a.pos.get(1), kw(&a, "start")) {
                    (Some(v), _) | (None, Some(v)) => v.as_int()?,
                    _ => 0,
                };
                let items = self.iter_values(one(&a, name)?)?;
                SeqIter::value(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| Value::tuple(vec![Value::Int(i as i64 + start), v]))
                        .collect(),
                )
            }
            "zip" => {
                let lists = a
                    .pos
                    .iter()
                    .map(|v| self.iter_values(v))
                    .collect::<PyResult<Vec<_>>>()?;
                let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
                SeqIter::value(
                    (0..n)
                        .map(|i| Value::tuple(lists.iter().map(|l| l[i].clone()).collect()))
                        .collect(),
                )
            }
            "map" => {
                let f = one(&a, name)?.clone();
                let lists = a.pos[1..]
                    .iter()
                    .map(|v| self.iter_values(v))
                    .collect::<PyResult<Vec<_>>>()?;
                let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    out.push(
                        self.call_value(
                            &f,
                            Args::new(lists.iter().map(|l| l[i].clone()).collect()),
                        )?,
                    );
                }
                SeqIter::value(out)
            }
            "filter" => {
                let f = one(&a, name)?.clone();
                let items = self.iter_values(
                    a.pos
                        .get(1)
                        .ok_or_else(|| PyErr::type_error("filter expected 2 arguments, got 1"))?,
                )?;
                let mut out = vec![];
                for x in items {
                    let keep = if f.is_none() {
                        x.clone()
                    } else {
                        self.call_value(&f, Args::new(vec![x.clone()]))?
                    };
                    if self.truthy(&keep)? {
                        out.push(x);
                    }
                }
                SeqIter::value(out)
            }
            "sorted" => {
                let items = self.iter_values(one(&a, name)?)?;
                let key = kw(&a, "key").cloned().filter(|v| !v.is_none());
                let rev = match kw(&a, "reverse") {
                    Some(v) => self.truthy(&v.clone())?,
                    None => false,
                };
                Value::list(self.sort_values(items, key, rev)?)
            }
            "reversed" => {
                let mut items = self.iter_values(one(&a, name)?)?;
                items.reverse();
                SeqIter::value(items)
            }
            "sum" => {
                let items = self.iter_values(one(&a, name)?)?;
                let mut acc = a
                    .pos
                    .get(1)
                    .cloned()
                    .or_else(|| kw(&a, "start").cloned())
                    .unwrap_or(Value::Int(0));
                for x in items {
                    acc = self.binop(super::object::BinOp::Add, &acc, &x)?;
                }
                acc
            }
            "min" | "max" => self.min_max(name, &a)?,
            "abs" => match one(&a, name)? {
                Value::Int(i) => Value::Int(
                    i.checked_abs()
                        .ok_or_else(|| PyErr::new("OverflowError", "int too large"))?,
                ),
                Value::Bool(b) => Value::Int(*b as i64),
                Value::Float(x) => Value::Float(x.abs()),
                v => {
                    let m = self.get_attr(v, "__abs__")?;
                    self.call_value(&m, Args::default())?
                }
            },
            "round" => self.round(&a)?,
            "isinstance" => {
                let v = one(&a, name)?.clone();
                let c =
                    a.pos.get(1).cloned().ok_or_else(|| {
                        PyErr::type_error("isinstance expected 2 arguments, got 1")
                    })?;
                Value::Bool(self.isinstance(&v, &c)?)
            }
            "issubclass" => {
                let c = one(&a, name)?.clone();
                let b = a.pos.get(1).cloned().unwrap_or(Value::None);
                Value::Bool(self.issubclass(&c, &b))
            }
            "hasattr" => {
                let n = a
                    .pos
                    .get(1)
                    .map(|v| v.as_str().map(String::from))
                    .transpose()?
                    .unwrap_or_default();
                match self.try_attr(one(&a, name)?, &n) {
                    Ok(v) => Value::Bool(v.is_some()),
                    Err(e) if e.type_name() == "AttributeError" => Value::Bool(false),
                    Err(e) => return Err(e),
                }
            }
            "getattr" => {
                let n = a
                    .pos
                    .get(1)
                    .map(|v| v.as_str().map(String::from))
                    .transpose()?
                    .unwrap_or_default();
                match (self.get_attr(one(&a, name)?, &n), a.pos.get(2)) {
                    (Ok(v), _) => v,
                    (Err(e), Some(d)) if e.type_name() == "AttributeError" => d.clone(),
                    (Err(e), _) => return Err(e),
                }
            }
            "setattr" => {
                let n = a
                    .pos
                    .get(1)
                    .map(|v| v.as_str().map(String::from))
                    .transpose()?
                    .unwrap_or_default();
                self.set_attr(
                    one(&a, name)?,
                    &n,
                    a.pos.get(2).cloned().unwrap_or(Value::None),
                )?;
                Value::None
            }
            "delattr" => {
                let n = a
                    .pos
                    .get(1)
                    .map(|v| v.as_str().map(String::from))
                    .transpose()?
                    .unwrap_or_default();
                self.del_attr(one(&a, name)?, &n)?;
                Value::None
            }
            "callable" => Value::Bool(self.is_callable(one(&a, name)?)),
            "iter" => self.get_iter(one(&a, name)?)?,
            "next" => {
                let it = one(&a, name)?.clone();
                match self.next_item(&it)? {
                    Some(v) => v,
                    None => match a.pos.get(1) {
                        Some(d) => d.clone(),
                        None => return Err(PyErr::new("StopIteration", "")),
                    },
                }
            }
            "repr" => Value::from(self.repr_of(one(&a, name)?)?),
            "format" => {
                let spec = a
                    .pos
                    .get(1)
                    .map(|v| v.as_str().map(String::from))
                    .transpose()?
                    .unwrap_or_default();
                Value::from(self.format_value(one(&a, name)?, &spec)?)
            }
            "id" => Value::Int(match one(&a, name)? {
                Value::Obj(o) | Value::Native(o) => Rc::as_ptr(o) as *const u8 as usize as i64,
                Value::List(l) => Rc::as_ptr(l) as usize as i64,
                Value::Dict(d) => Rc::as_ptr(d) as usize as i64,
                Value::Str(s) => s.as_ptr() as usize as i64,
                Value::Tuple(t) => t.as_ptr() as usize as i64,
                Value::Int(i) => *i,
                other => other.type_name().len() as i64,
            }),
            "hash" => {
                use std::hash::{Hash, Hasher};
                let k = HashKey::of(one(&a, name)?)?;
                match k {
                    HashKey::Int(i) => Value::Int(if i == -1 { -2 } else { i }),
                    other => {
                        let mut h = std::collections::hash_map::DefaultHasher::new();
                        other.hash(&mut h);
                        Value::Int(h.finish() as i64 >> 1)
                    }
                }
            }
            "divmod" => {
                let x = one(&a, name)?.clone();
                let y = a.pos.get(1).cloned().unwrap_or(Value::None);
                let q = self.binop(super::object::BinOp::FloorDiv, &x, &y)?;
                let r = self.binop(super::object::BinOp::Mod, &x, &y)?;
                Value::tuple(vec![q, r])
            }
            "pow" => {
                let x = one(&a, name)?.clone();
                let y = a.pos.get(1).cloned().unwrap_or(Value::None);
                match a.pos.get(2) {
                    Some(m) => {
                        let (mut b, mut e, m) =
                            (x.as_int()? as i128, y.as_int()?, m.as_int()? as i128);
                        if m == 0 {
                            return Err(PyErr::value_error("pow() 3rd argument cannot be 0"));
                        }
                        let mut r: i128 = 1;
                        b = b.rem_euclid(m);
                        while e > 0 {
                            if e & 1 == 1 {
                                r = r * b % m;
                            }
                            b = b * b % m;
                            e >>= 1;
                        }
                        Value::Int(r.rem_euclid(m) as i64)
                    }
                    None => self.binop(super::object::BinOp::Pow, &x, &y)?,
                }
            }
            "any" | "all" => {
                let items = self.iter_values(one(&a, name)?)?;
                let want = name == "any";
                for x in items {
                    if self.truthy(&x)? == want {
                        return Ok(Value::Bool(want));
                    }
                }
                Value::Bool(!want)
            }
            "chr" => {
                let i = one(&a, name)?.as_int()?;
                Value::from(
                    char::from_u32(i as u32)
                        .ok_or_else(|| PyErr::value_error("chr() arg not in range(0x110000)"))?
                        .to_string(),
                )
            }
            "ord" => {
                let s = one(&a, name)?.as_str()?;
                let mut c = s.chars();
                match (c.next(), c.next()) {
                    (Some(ch), None) => Value::Int(ch as i64),
                    _ => {
                        return Err(PyErr::type_error(format!(
                            "ord() expected a character, but string of length {} found",
                            s.chars().count()
                        )))
                    }
                }
            }
            "hex" | "bin" | "oct" => {
                let i = one(&a, name)?.as_int()?;
                let (p, body) = match name {
                    "hex" => ("0x", format!("{:x}", i.unsigned_abs())),
                    "bin" => ("0b", format!("{:b}", i.unsigned_abs())),
                    _ => ("0o", format!("{:o}", i.unsigned_abs())),
                };
                Value::from(format!("{}{p}{body}", if i < 0 { "-" } else { "" }))
            }
            "input" => {
                let prompt = match a.pos.first() {
                    Some(v) => self.str_of(v)?,
                    None => String::new(),
                };
                Value::from(super::object::Ctx::input(self, &prompt, false)?)
            }
            "open" => super::files::open(self, &a)?,
            "dir" => match a.pos.first() {
                Some(v) => Value::list(
                    self.dir_of(&v.clone())
                        .into_iter()
                        .map(Value::from)
                        .collect(),
                ),
                None => {
                    let mut names: Vec<String> = self
                        .core
                        .globals
                        .borrow()
                        .keys()
                        .map(|k| k.to_string())
                        .collect();
                    names.sort();
                    Value::list(names.into_iter().map(Value::from).collect())
                }
            },
            "vars" => match a.pos.first() {
                Some(v) => self.get_attr(v, "__dict__")?,
                None => self.globals_dict(),
            },
            "globals" | "locals" => self.globals_dict(),
            "help" => {
                if let Some(v) = a.pos.first() {
                    let text = super::help::help_text(self, v)?;
                    self.write(StreamName::Stdout, &format!("{text}\n"));
                }
                Value::None
            }
            "display" => {
                for v in &a.pos {
                    let data = self.rich_of(v)?;
                    super::object::Ctx::emit(
                        self,
                        crate::session::Output::DisplayData {
                            data,
                            metadata: Default::default(),
                            display_id: None,
                        },
                    );
                }
                Value::None
            }
            "staticmethod" | "classmethod" | "property" => {
                let kind = match name {
                    "staticmethod" => WrapKind::Static,
                    "classmethod" => WrapKind::ClassMethod,
                    _ => WrapKind::Property,
                };
                Value::Obj(Rc::new(Wrapper {
                    kind,
                    func: one(&a, name)?.clone(),
                    setter: RefCell::new(None),
                }))
            }
            "__yield__" => {
                let v = a.pos.first().cloned().unwrap_or(Value::None);
                match self.yields.last_mut() {
                    Some(y) => y.push(v),
                    None => return Err(PyErr::new("SyntaxError", "'yield' outside function")),
                }
                Value::None
            }
            "__yield_from__" => {
                let items = self.iter_values(one(&a, name)?)?;
                match self.yields.last_mut() {
                    Some(y) => y.extend(items),
                    None => return Err(PyErr::new("SyntaxError", "'yield' outside function")),
                }
                Value::None
            }
            "exit" | "quit" => return Err(PyErr::new("SystemExit", "")),
            "super" => return Err(PyErr::runtime_error("super(): __class__ cell not found")),
            _ => return Err(PyErr::not_implemented(format!("{name}() is not available"))),
        })
    }

    pub fn globals_dict(&mut self) -> Value {
        let mut d = Dict::default();
        for (k, v) in self.core.globals.borrow().iter() {
            d.insert_str(k, v.clone());
        }
        Value::Dict(Rc::new(RefCell::new(d)))
    }

    pub fn is_callable(&mut self, v: &Value) -> bool {
        match v {
            Value::Obj(o) => {
                let any = o.as_any();
                any.is::<Function>()
                    || any.is::<BoundMethod>()
                    || any.is::<Class>()
                    || any.is::<BuiltinType>()
                    || any.is::<Builtin>()
                    || any.is::<super::builtins_obj::MethodRef>()
                    || (any.is::<Instance>()
                        && self.try_attr(v, "__call__").ok().flatten().is_some())
            }
            Value::Native(o) => {
                let any = o.as_any();
                any.is::<crate::lang::NativeFn>()
                    || any.is::<crate::lang::NativeClass>()
                    || o.doc().is_some() && !any.is::<crate::lang::NativeModule>()
            }
            _ => false,
        }
    }

    fn min_max(&mut self, name: &str, a: &Args) -> PyResult<Value> {
        let items = if a.pos.len() == 1 {
            self.iter_values(&a.pos[0])?
        } else {
            a.pos.clone()
        };
        let key = kw(a, "key").cloned().filter(|v| !v.is_none());
        if items.is_empty() {
            return match kw(a, "default") {
                Some(d) => Ok(d.clone()),
                None => Err(PyErr::value_error(format!(
                    "{name}() arg is an empty sequence"
                ))),
            };
        }
        let op = if name == "min" {
            super::object::CmpOp::Lt
        } else {
            super::object::CmpOp::Gt
        };
        let mut best = items[0].clone();
        let mut bk = match &key {
            Some(k) => self.call_value(k, Args::new(vec![best.clone()]))?,
            None => best.clone(),
        };
        for x in items.into_iter().skip(1) {
            let xk = match &key {
                Some(k) => self.call_value(k, Args::new(vec![x.clone()]))?,
                None => x.clone(),
            };
            let r = self.rich_compare(op, &xk, &bk)?;
            if self.truthy(&r)? {
                best = x;
                bk = xk;
            }
        }
        Ok(best)
    }

    fn round(&mut self, a: &Args) -> PyResult<Value> {
        let v = one(a, "round")?.clone();
        let nd = a
            .pos
            .get(1)
            .cloned()
            .or_else(|| kw(a, "ndigits").cloned())
            .filter(|v| !v.is_none());
        match (&v, nd) {
            (Value::Int(_) | Value::Bool(_), None) => Ok(Value::Int(v.as_int()?)),
            (Value::Int(i), Some(n)) => {
                let n = n.as_int()?;
                if n >= 0 {
                    return Ok(Value::Int(*i));
                }
                let p = 10i64.checked_pow((-n) as u32).unwrap_or(i64::MAX);
                let q = (*i as f64 / p as f64).round_ties_even() as i64;
                Ok(Value::Int(q.saturating_mul(p)))
            }
            (Value::Float(x), None) => {
                if !x.is_finite() {
                    return Err(PyErr::new(
                        if x.is_nan() {
                            "ValueError"
                        } else {
                            "OverflowError"
                        },
                        if x.is_nan() {
                            "cannot convert float NaN to integer"
                        } else {
                            "cannot convert float infinity to integer"
                        },
                    ));
                }
                Ok(Value::Int(x.round_ties_even() as i64))
            }
            (Value::Float(x), Some(n)) => {
                let n = n.as_int()?;
                // Round through the exact decimal text, as CPython does, so 2.675 -> 2.67.
                if n >= 0 {
                    let s = format!("{:.*}", n as usize, x);
                    Ok(Value::Float(s.parse().unwrap_or(*x)))
                } else {
                    let p = 10f64.powi((-n) as i32);
                    Ok(Value::Float((x / p).round_ties_even() * p))
                }
            }
            _ => {
                let m = self.get_attr(&v, "__round__")?;
                let args = a.pos[1..].to_vec();
                self.call_value(&m, Args::new(args))
            }
        }
    }

    pub fn isinstance(&mut self, v: &Value, c: &Value) -> PyResult<bool> {
        if let Some(items) = c.as_seq() {
            for x in items {
                if self.isinstance(v, &x)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        if let Some(t) = c.downcast::<BuiltinType>() {
            let tn = v.type_name();
            return Ok(match t.name {
                "object" => true,
                "int" => matches!(v, Value::Int(_) | Value::Bool(_)),
                "type" => {
                    v.downcast::<Class>().is_some()
                        || v.downcast::<BuiltinType>().is_some()
                        || v.downcast::<crate::lang::NativeClass>().is_some()
                }
                n => tn == n,
            });
        }
        if let Some(cls) = c.downcast::<Class>() {
            if let Some(i) = v.downcast::<Instance>() {
                if let Some(ic) = i.class() {
                    return Ok(ic.is_subclass_of(cls));
                }
            }
            return Ok(false);
        }
        if let Some(nc) = c.downcast::<crate::lang::NativeClass>() {
            let chain: Vec<String> = match v {
                Value::Native(o) => o.class_chain(),
                _ => match v
                    .downcast::<Instance>()
                    .and_then(|i| i.class())
                    .and_then(|c| c.native_base())
                {
                    Some(nb) => match nb.downcast::<crate::lang::NativeClass>() {
                        Some(n) => {
                            let mut ch = vec![n.name.clone()];
                            ch.extend(n.bases.clone());
                            ch
                        }
                        None => vec![],
                    },
                    None => vec![],
                },
            };
            return Ok(chain.contains(&nc.name));
        }
        Err(PyErr::type_error(
            "isinstance() arg 2 must be a type, a tuple of types, or a union",
        ))
    }

    fn issubclass(&mut self, c: &Value, b: &Value) -> bool {
        if let Some(items) = b.as_seq() {
            return items.iter().any(|x| self.issubclass(c, x));
        }
        match (c.downcast::<Class>(), b.downcast::<Class>()) {
            (Some(x), Some(y)) => x.is_subclass_of(y),
            _ => {
                if let (Some(x), Some(y)) =
                    (c.downcast::<BuiltinType>(), b.downcast::<BuiltinType>())
                {
                    return x.name == y.name
                        || y.name == "object"
                        || (x.name == "bool" && y.name == "int");
                }
                b.downcast::<BuiltinType>()
                    .map(|t| t.name == "object")
                    .unwrap_or(false)
            }
        }
    }

    /// Sets from any iterable.
    pub fn make_set(&mut self, v: Option<&Value>, frozen: bool) -> PyResult<Value> {
        let mut m = IndexMap::new();
        if let Some(v) = v {
            for x in self.iter_values(v)? {
                m.insert(HashKey::of(&x)?, x);
            }
        }
        Ok(Set::value(m, frozen))
    }
}
