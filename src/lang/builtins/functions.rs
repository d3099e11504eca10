//! The builtin functions (`print`, `len`, `range`, `sorted`, `isinstance`, ...) and the
//! builtin types' constructors (`int("3")`, `list(x)`, `dict(a=1)`). Builtins are
//! `Builtin` objects dispatched by name with full access to the running `Vm`.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::wrappers::{WrapKind, Wrapper};
use crate::cell::StreamName;
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::{Args, Object};
use crate::lang::values::runtime::*;
use crate::lang::values::value::{HashKey, Value};

pub struct Builtin {
    pub name: &'static str,
}

impl Object for Builtin {
    fn type_name(&self) -> String {
        "builtin_function_or_method".into()
    }
    fn repr(&self, _ctx: &mut dyn crate::lang::values::object::Ctx) -> PyResult<String> {
        Ok(format!("<built-in function {}>", self.name))
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const Builtin as usize as u64)
    }
    fn doc(&self) -> Option<String> {
        Some(crate::lang::ipython::help::builtin_doc(self.name))
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

pub fn make_builtins(
    exc: &HashMap<String, Value>,
) -> HashMap<String, Value, crate::lang::eval::vm::FastHash> {
    let mut m = HashMap::default();
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
            "len" => {
                if a.pos.len() + a.kw.len() != 1 {
                    return Err(PyErr::type_error(format!(
                        "len() takes exactly one argument ({} given)",
                        a.pos.len() + a.kw.len()
                    )));
                }
                Value::Int(self.len_of(one(&a, name)?)? as i64)
            }
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
                    self.check_interrupt_fast()?;
                    acc = self.binop(crate::lang::values::object::BinOp::Add, &acc, &x)?;
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
            "property" => {
                // property(fget=None, fset=None, fdel=None, doc=None)
                let arg = |i: usize, k: &str| a.pos.get(i).cloned().or_else(|| kw(&a, k).cloned());
                let none = |v: Option<Value>| v.filter(|v| !matches!(v, Value::None));
                Value::Obj(Rc::new(Wrapper {
                    kind: WrapKind::Property,
                    func: arg(0, "fget").unwrap_or(Value::None),
                    setter: RefCell::new(none(arg(1, "fset"))),
                    name: RefCell::new(None),
                }))
            }
            "staticmethod" | "classmethod" => {
                let kind = match name {
                    "staticmethod" => WrapKind::Static,
                    _ => WrapKind::ClassMethod,
                };
                Value::Obj(Rc::new(Wrapper {
                    kind,
                    func: one(&a, name)?.clone(),
                    setter: RefCell::new(None),
                    name: RefCell::new(None),
                }))
            }
            "exit" | "quit" => return Err(PyErr::new("SystemExit", "")),
            "super" => return Err(PyErr::runtime_error("super(): __class__ cell not found")),
            _ => return self.call_builtin_more(name, a),
        })
    }
}

/// How many values one generator call may produce. Generators run to completion when
/// called (see the module doc), so an endless one must stop somewhere: 2^20 values take
/// about a second and 25 MB, far beyond what a notebook's generator functions yield.
pub const GENERATOR_MAX: usize = 1 << 20;

impl Vm<'_> {
    /// Collects values a running generator yields, ending an endless generator with an
    /// error that says why, rather than running the session out of memory.
    pub fn push_yielded(&mut self, items: Vec<Value>) -> PyResult<()> {
        match self.yields.last_mut() {
            Some(y) if y.len() + items.len() > GENERATOR_MAX => Err(PyErr::not_implemented(format!(
                "this generator yielded more than {GENERATOR_MAX} values: generator functions run to \
                 completion when called in this kernel, so an endless generator cannot be consumed \
                 lazily by next(), zip() or islice(); give its loop an end, or yield inside a bounded loop"
            ))),
            Some(y) => {
                y.extend(items);
                Ok(())
            }
            None => Err(PyErr::new("SyntaxError", "'yield' outside function")),
        }
    }
}
