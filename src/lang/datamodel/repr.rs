//! `repr`, `str` and the display bundle of values, with CPython's spellings: floats as the
//! shortest round-trip form (exponent form below 1e-4 and from 1e16), strings quoted the
//! way CPython chooses, containers recursively, user `__repr__`/`__str__` honoured.

use crate::display::MimeBundle;
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::PyResult;
use crate::lang::values::memory;
use crate::lang::values::object::{Args, Ctx};
use crate::lang::values::runtime::*;
use crate::lang::values::value::{Dict, Value};

/// What CPython's `RecursionError` says when a repr nests too deeply.
pub const REPR_CONTEXT: &str = " while getting the repr of an object";

/// `repr(float)` exactly as CPython prints it.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits; lay them out CPython's way.
    let e = format!("{x:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if neg { "-" } else { "" };
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let m = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let es = if exp < 0 {
            format!("-{:02}", -exp)
        } else {
            format!("+{exp:02}")
        };
        return format!("{sign}{m}e{es}");
    }
    let n = digits.len() as i32;
    if exp < 0 {
        format!("{sign}0.{}{}", "0".repeat((-exp - 1) as usize), digits)
    } else if exp + 1 >= n {
        format!("{sign}{}{}.0", digits, "0".repeat((exp + 1 - n) as usize))
    } else {
        let (a, b) = digits.split_at((exp + 1) as usize);
        format!("{sign}{a}.{b}")
    }
}

pub fn str_repr(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// The `i`th entry of a list, tuple or dict (a dict's with its key), read afresh on each
/// call so that a `__repr__` that changes the container cannot leave a stale borrow; `None`
/// past the end or for any other value.
pub fn entry_at(v: &Value, i: usize) -> Option<(Option<Value>, Value)> {
    match v {
        Value::List(l) => l.borrow().get(i).map(|x| (None, x.clone())),
        Value::Tuple(t) => t.get(i).map(|x| (None, x.clone())),
        Value::Dict(d) => d
            .borrow()
            .map
            .get_index(i)
            .map(|(_, (k, x))| (Some(k.clone()), x.clone())),
        _ => None,
    }
}

impl Vm<'_> {
    pub fn repr_of(&mut self, v: &Value) -> PyResult<String> {
        Ok(match v {
            Value::None => "None".into(),
            Value::Bool(b) => if *b { "True" } else { "False" }.into(),
            Value::Int(i) => i.to_string(),
            Value::Float(x) => float_repr(*x),
            Value::Str(s) => str_repr(s),
            Value::Dict(d) if d.borrow().kind.is_some() => match Dict::kind_of(v) {
                Some(kind) => kind.repr(v, self)?,
                None => "{}".into(),
            },
            Value::List(_) | Value::Tuple(_) | Value::Dict(_) => {
                if !self.repr_enter(v) {
                    return Ok(match v {
                        Value::List(_) => "[...]",
                        Value::Dict(_) => "{...}",
                        _ => "(...)",
                    }
                    .into());
                }
                let r = self.nested(REPR_CONTEXT, |vm| vm.container_repr(v));
                self.repr_leave(v);
                r?
            }
            Value::Native(o) => {
                let o = o.clone();
                o.repr(self)?
            }
            Value::Obj(o) => {
                let any = o.as_any();
                if let Some(s) = any.downcast_ref::<Set>() {
                    let mut items: Vec<Value> = s.ordered();
                    if self.pretty_types {
                        // IPython's pretty printer shows sets sorted when they can be.
                        if let Ok(sorted) = self.sort_values(items.clone(), None, false) {
                            items = sorted;
                        }
                    }
                    let name = if s.frozen { "frozenset" } else { "set" };
                    return Ok(if items.is_empty() {
                        format!("{name}()")
                    } else if s.frozen {
                        format!("frozenset({{{}}})", self.join_reprs(&items)?)
                    } else {
                        format!("{{{}}}", self.join_reprs(&items)?)
                    });
                }
                if let Some(i) = any.downcast_ref::<Instance>() {
                    if let Some(m) = self.try_attr(v, "__repr__")? {
                        let r = self.call_value(&m, Args::default())?;
                        return match r {
                            Value::Str(s) => Ok(s.to_string()),
                            other => Err(crate::lang::values::exc::PyErr::type_error(format!(
                                "__repr__ returned non-string (type {})",
                                other.type_name()
                            ))),
                        };
                    }
                    if crate::lang::values::exceptions::is_exception_class(&i.class) {
                        let args = i
                            .attrs
                            .borrow()
                            .get("args")
                            .cloned()
                            .unwrap_or(Value::tuple(vec![]));
                        let inner = match &args {
                            Value::Tuple(t) if t.len() == 1 => self.repr_of(&t[0])?,
                            Value::Tuple(t) => self.join_reprs(t)?,
                            other => self.repr_of(other)?,
                        };
                        return Ok(format!("{}({inner})", v.type_name()));
                    }
                    let module = i.class().map(|c| c.module.clone()).unwrap_or_default();
                    return Ok(format!(
                        "<{module}.{} object at 0x{:x}>",
                        v.type_name(),
                        std::rc::Rc::as_ptr(o) as *const u8 as usize
                    ));
                }
                if self.pretty_types {
                    if let Some(t) = any.downcast_ref::<BuiltinType>() {
                        return Ok(t.name.to_string());
                    }
                    if let Some(c) = any.downcast_ref::<Class>() {
                        return Ok(if c.builtin {
                            c.name.clone()
                        } else {
                            format!("{}.{}", c.module, c.name)
                        });
                    }
                }
                if let Some(b) = any.downcast_ref::<BoundMethod>() {
                    let f = b.func.clone();
                    let fname = self
                        .try_attr(&f, "__name__")?
                        .map(|n| self.str_of(&n))
                        .transpose()?
                        .unwrap_or_default();
                    let this = b.this.clone();
                    let owner = this.type_name();
                    let r = self.repr_of(&this)?;
                    return Ok(format!("<bound method {owner}.{fname} of {r}>"));
                }
                let o = o.clone();
                o.repr(self)?
            }
        })
    }

    /// The repr of a list, tuple or dict, one level in: the items are read by index as
    /// they are printed (a `__repr__` may change the container meanwhile, as in CPython),
    /// into one buffer that grows within the memory bound, checking for an interrupt.
    fn container_repr(&mut self, v: &Value) -> PyResult<String> {
        let mut out = String::new();
        let (open, close) = match v {
            Value::List(_) => ("[", "]"),
            Value::Dict(_) => ("{", "}"),
            _ => ("(", ")"),
        };
        out.push_str(open);
        let mut i = 0;
        loop {
            let Some((key, item)) = entry_at(v, i) else {
                break;
            };
            if i > 0 {
                memory::reserve_str(&mut out, 2)?;
                out.push_str(", ");
            }
            if let Some(k) = key {
                let k = self.repr_of(&k)?;
                memory::reserve_str(&mut out, k.len() + 2)?;
                out.push_str(&k);
                out.push_str(": ");
            }
            let r = self.repr_of(&item)?;
            memory::reserve_str(&mut out, r.len())?;
            out.push_str(&r);
            i += 1;
            if i % 1024 == 0 {
                Ctx::check_interrupt(self)?;
            }
        }
        if i == 1 && matches!(v, Value::Tuple(_)) {
            out.push(',');
        }
        memory::reserve_str(&mut out, 1)?;
        out.push_str(close);
        Ok(out)
    }

    /// The items' reprs joined with `", "`.
    fn join_reprs(&mut self, items: &[Value]) -> PyResult<String> {
        self.nested(REPR_CONTEXT, |vm| {
            let mut out = String::new();
            for (i, x) in items.iter().enumerate() {
                let r = vm.repr_of(x)?;
                memory::reserve_str(&mut out, r.len() + 2)?;
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&r);
                if i % 1024 == 1023 {
                    Ctx::check_interrupt(vm)?;
                }
            }
            Ok(out)
        })
    }

    pub fn str_of(&mut self, v: &Value) -> PyResult<String> {
        match v {
            Value::Str(s) => Ok(s.to_string()),
            Value::Native(o) => {
                let o = o.clone();
                o.str(self)
            }
            Value::Obj(_) => {
                if let Some(i) = v.downcast::<Instance>() {
                    if let Some(m) = self.try_attr(v, "__str__")? {
                        let r = self.call_value(&m, Args::default())?;
                        return self.str_of(&r);
                    }
                    if crate::lang::values::exceptions::is_exception_class(&i.class)
                        && self.try_attr(v, "__repr__")?.is_none()
                    {
                        return self.exc_message(v).pipe_ok();
                    }
                }
                self.repr_of(v)
            }
            other => self.repr_of(other),
        }
    }

    /// `str(e)` of an exception instance: its single argument, or its argument tuple.
    pub fn exc_message(&mut self, inst: &Value) -> String {
        if inst.downcast::<Instance>().is_some() {
            if let Ok(Some(m)) = self.try_attr(inst, "__str__") {
                if let Ok(r) = self.call_value(&m, Args::default()) {
                    if let Ok(s) = self.str_of(&r) {
                        return s;
                    }
                }
            }
        }
        let args = inst
            .downcast::<Instance>()
            .and_then(|i| i.attrs.borrow().get("args").cloned())
            .unwrap_or(Value::tuple(vec![]));
        match &args {
            Value::Tuple(t) if t.is_empty() => String::new(),
            Value::Tuple(t) if t.len() == 1 => {
                let x = t[0].clone();
                if inst.type_name() == "KeyError" {
                    self.repr_of(&x).unwrap_or_default()
                } else {
                    self.str_of(&x).unwrap_or_default()
                }
            }
            other => self.repr_of(other).unwrap_or_default(),
        }
    }

    pub fn rich_of(&mut self, v: &Value) -> PyResult<MimeBundle> {
        let mut bundle = match v {
            Value::Native(o) => {
                let o = o.clone();
                o.rich(self)?.unwrap_or_default()
            }
            _ => {
                if v.downcast::<Instance>().is_some() {
                    let mut b = MimeBundle::new();
                    for (meth, mime) in [
                        ("_repr_html_", "text/html"),
                        ("_repr_markdown_", "text/markdown"),
                        ("_repr_svg_", "image/svg+xml"),
                        ("_repr_latex_", "text/latex"),
                    ] {
                        if let Some(m) = self.try_attr(v, meth)? {
                            let r = self.call_value(&m, Args::default())?;
                            if let Value::Str(s) = r {
                                b.insert(mime.into(), serde_json::Value::String(s.to_string()));
                            }
                        }
                    }
                    b
                } else {
                    MimeBundle::new()
                }
            }
        };
        if !bundle.contains_key("text/plain") {
            let text = self.pretty(v)?;
            bundle.insert("text/plain".into(), serde_json::Value::String(text));
        }
        Ok(bundle)
    }
}

trait PipeOk {
    fn pipe_ok(self) -> PyResult<String>;
}
impl PipeOk for String {
    fn pipe_ok(self) -> PyResult<String> {
        Ok(self)
    }
}
