//! Evaluating expressions: names through their resolved slots, operators, calls with
//! starred arguments, containers, comprehensions (in their own frame), f-strings, and the
//! assignment targets that statements and loops store into.

use std::rc::Rc;

use indexmap::IndexMap;

use super::call::{plain_method, positional_fits};
use super::vm::{Env, Vm};
use crate::lang::syntax::ast::*;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::{Args, CmpOp};
use crate::lang::values::runtime::{Function, Set, Slice};
use crate::lang::values::value::{Dict, HashKey, Value};

impl Vm<'_> {
    pub fn load(&mut self, n: &Name, env: &Env) -> PyResult<Value> {
        match n {
            Name::Local(i, name) => {
                if let Some(f) = &env.frame {
                    if let Some(Some(v)) = f.slots.borrow().get(*i as usize) {
                        return Ok(v.clone());
                    }
                }
                Err(PyErr::new(
                    "UnboundLocalError",
                    format!("cannot access local variable '{name}' where it is not associated with a value"),
                ))
            }
            Name::Outer(d, i, name) => {
                let f = env.frame.as_ref().and_then(|f| f.up(*d));
                if let Some(f) = f {
                    if let Some(Some(v)) = f.slots.borrow().get(*i as usize) {
                        return Ok(v.clone());
                    }
                }
                Err(PyErr::new(
                    "NameError",
                    format!("cannot access free variable '{name}' where it is not associated with a value in enclosing scope"),
                ))
            }
            Name::Global(name, at) => self.global_at(name, at).ok_or_else(|| name_error(name)),
            Name::Class(name) => {
                if let Some(ns) = &env.class_ns {
                    if let Some(v) = ns.borrow().get(&**name) {
                        return Ok(v.clone());
                    }
                }
                self.global(name).ok_or_else(|| name_error(name))
            }
        }
    }

    pub fn store_name(&mut self, n: &Name, v: Value, env: &Env) -> PyResult<()> {
        match n {
            Name::Local(i, _) => {
                if let Some(f) = &env.frame {
                    if let Some(slot) = f.slots.borrow_mut().get_mut(*i as usize) {
                        *slot = Some(v);
                    }
                }
            }
            Name::Outer(d, i, _) => {
                if let Some(f) = env.frame.as_ref().and_then(|f| f.up(*d)) {
                    if let Some(slot) = f.slots.borrow_mut().get_mut(*i as usize) {
                        *slot = Some(v);
                    }
                }
            }
            Name::Global(name, at) => {
                // The index cached at this use site saves hashing the name when it
                // still holds the same key (see `global_at`).
                let mut g = self.core.globals.borrow_mut();
                if let Some((k, slot)) = g.get_index_mut(at.get() as usize) {
                    if Rc::ptr_eq(k, name) || **k == **name {
                        *slot = v;
                        return Ok(());
                    }
                }
                let (i, _) = g.insert_full(name.clone(), v);
                at.set(u32::try_from(i).unwrap_or(u32::MAX));
            }
            Name::Class(name) => match &env.class_ns {
                Some(ns) => {
                    ns.borrow_mut().insert(name.to_string(), v);
                }
                None => {
                    self.core.globals.borrow_mut().insert(name.clone(), v);
                }
            },
        }
        Ok(())
    }

    pub fn delete_name(&mut self, n: &Name, env: &Env) -> PyResult<()> {
        match n {
            Name::Local(i, _) | Name::Outer(_, i, _) => {
                let f = match n {
                    Name::Outer(d, _, _) => env.frame.as_ref().and_then(|f| f.up(*d)),
                    _ => env.frame.clone(),
                };
                if let Some(f) = f {
                    if let Some(slot) = f.slots.borrow_mut().get_mut(*i as usize) {
                        *slot = None;
                    }
                }
                Ok(())
            }
            Name::Global(name, _) | Name::Class(name) => {
                let removed = match (&env.class_ns, n) {
                    (Some(ns), Name::Class(_)) => ns.borrow_mut().shift_remove(&**name).is_some(),
                    _ => self
                        .core
                        .globals
                        .borrow_mut()
                        .shift_remove(&**name)
                        .is_some(),
                };
                if removed {
                    Ok(())
                } else {
                    Err(name_error(name))
                }
            }
        }
    }

    /// Every expression form; `fast::eval` handles the hot ones inline and sends the
    /// rest here, which keeps the recursive hot path's stack frame small.
    #[inline(never)]
    pub fn eval_slow(&mut self, e: &Expr, env: &Env) -> PyResult<Value> {
        match e {
            Expr::Const(v) => Ok(v.clone()),
            Expr::Name(n) => self.load(n, env),
            Expr::Bin(op, a, b) => {
                let a = self.eval(a, env)?;
                let b = self.eval(b, env)?;
                self.binop(*op, &a, &b)
            }
            Expr::Compare(first, rest) => {
                let mut left = self.eval(first, env)?;
                let mut result = Value::Bool(true);
                for (i, (op, e)) in rest.iter().enumerate() {
                    let right = self.eval(e, env)?;
                    result = self.compare(*op, &left, &right)?;
                    // Only a chain (`a < b < c`) asks for a truth value between its links; a
                    // single comparison returns its result as is, so `arr > 0` stays an array.
                    if i + 1 < rest.len() && !self.truthy(&result)? {
                        return Ok(result);
                    }
                    left = right;
                }
                Ok(result)
            }
            Expr::Call(f, args) => self.eval_call(f, args, env),
            Expr::Attr(v, name) => {
                let v = self.eval(v, env)?;
                self.get_attr(&v, name)
            }
            Expr::Sub(v, k) => {
                let v = self.eval(v, env)?;
                let k = self.eval(k, env)?;
                self.get_item(&v, &k)
            }
            Expr::Slice(a, b, c) => {
                let g = |x: &Option<Box<Expr>>, vm: &mut Self| -> PyResult<Value> {
                    match x {
                        Some(x) => vm.eval(x, env),
                        None => Ok(Value::None),
                    }
                };
                let lo = g(a, self)?;
                let hi = g(b, self)?;
                let step = g(c, self)?;
                Ok(Value::Obj(Rc::new(Slice { lo, hi, step })))
            }
            Expr::Unary(op, v) => {
                let v = self.eval(v, env)?;
                self.unary(*op, &v)
            }
            Expr::Not(v) => {
                let v = self.eval(v, env)?;
                Ok(Value::Bool(!self.truthy(&v)?))
            }
            Expr::And(a, b) => {
                let a = self.eval(a, env)?;
                if !self.truthy(&a)? {
                    return Ok(a);
                }
                self.eval(b, env)
            }
            Expr::Or(a, b) => {
                let a = self.eval(a, env)?;
                if self.truthy(&a)? {
                    return Ok(a);
                }
                self.eval(b, env)
            }
            Expr::IfExp(t, a, b) => {
                let t = self.eval(t, env)?;
                if self.truthy(&t)? {
                    self.eval(a, env)
                } else {
                    self.eval(b, env)
                }
            }
            Expr::List(items) => Ok(Value::list(self.eval_items(items, env)?)),
            Expr::Tuple(items) => Ok(Value::tuple(self.eval_items(items, env)?)),
            Expr::Set(items) => {
                let items = self.eval_items(items, env)?;
                let mut m = IndexMap::new();
                for v in items {
                    crate::lang::values::memory::map_room_for_one(&mut m)?;
                    m.insert(HashKey::of(&v)?, v);
                }
                Ok(Set::value(m, false))
            }
            Expr::Dict(pairs) => {
                let mut d = Dict::default();
                for (k, v) in pairs {
                    match k {
                        Some(k) => {
                            let k = self.eval(k, env)?;
                            let v = self.eval(v, env)?;
                            d.insert(k, v)?;
                        }
                        None => {
                            let m = self.eval(v, env)?;
                            for (k, v) in self.mapping_items(&m)? {
                                d.insert(k, v)?;
                            }
                        }
                    }
                }
                Ok(Value::Dict(Rc::new(std::cell::RefCell::new(d))))
            }
            Expr::Starred(_) => Err(PyErr::new(
                "SyntaxError",
                "can't use starred expression here",
            )),
            Expr::Lambda(def) => self.make_function(def, env),
            Expr::Comp(c) => self.eval_comp(c, env),
            Expr::FStr(parts) => Ok(Value::from(self.eval_fparts(parts, env)?)),
            Expr::Walrus(n, v) => {
                let v = self.eval(v, env)?;
                self.store_name(n, v.clone(), env)?;
                Ok(v)
            }
            Expr::Yield(v, from) => {
                let v = match v {
                    Some(e) => self.eval(e, env)?,
                    None => Value::None,
                };
                if *from {
                    self.yield_from(v)
                } else {
                    self.yield_value(v)
                }
            }
            Expr::Unsupported("integers beyond 64 bits") => Err(PyErr::new(
                "OverflowError",
                "int literal too large for this kernel's 64-bit int",
            )),
            Expr::Unsupported(what) => Err(PyErr::not_implemented(format!(
                "{what} is not supported by this kernel"
            ))),
        }
    }

    fn eval_items(&mut self, items: &[Expr], env: &Env) -> PyResult<Vec<Value>> {
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            match it {
                Expr::Starred(inner) => {
                    let v = self.eval(inner, env)?;
                    out.extend(self.iter_values(&v)?);
                }
                other => out.push(self.eval(other, env)?),
            }
        }
        Ok(out)
    }

    fn eval_fparts(&mut self, parts: &[FPart], env: &Env) -> PyResult<String> {
        let mut s = String::new();
        for p in parts {
            match p {
                FPart::Lit(l) => s.push_str(l),
                FPart::Value { expr, conv, spec } => {
                    let v = self.eval(expr, env)?;
                    let v = match conv {
                        Some('r') => Value::from(self.repr_of(&v)?),
                        Some('a') => Value::from(crate::lang::builtins::format::ascii_escape(
                            &self.repr_of(&v)?,
                        )),
                        Some('s') => Value::from(self.str_of(&v)?),
                        _ => v,
                    };
                    let spec = self.eval_fparts(spec, env)?;
                    let piece = self.format_value(&v, &spec)?;
                    crate::lang::values::memory::reserve_str(&mut s, piece.len())?;
                    s.push_str(&piece);
                }
            }
        }
        Ok(s)
    }

    pub fn eval_call(&mut self, f: &Expr, args: &[Arg], env: &Env) -> PyResult<Value> {
        if let Expr::Name(Name::Global(n, _)) = f {
            if &**n == "super" && args.is_empty() {
                return self.make_super(env);
            }
        }
        // Method calls on builtin containers skip building a bound-method object.
        if let Expr::Attr(obj, name) = f {
            let o = self.eval_operand(obj, env)?;
            // `xs.append(v)` is the commonest call in loops: push without an argument list.
            if let (Value::List(l), "append", [Arg::Pos(e)]) = (&o, &**name, args) {
                let v = self.eval_operand(e, env)?;
                let mut lb = l.borrow_mut();
                crate::lang::values::memory::room_for_one(&mut lb)?;
                lb.push(super::fast::relay(v));
                drop(lb);
                super::fast::discard(o);
                return Ok(Value::None);
            }
            if let Some(m) = plain_method(&o, name) {
                if let Some(func) = m.downcast::<Function>() {
                    if positional_fits(func, args, 1) {
                        let r = self.call_positional(func, Some(o), args, env);
                        super::fast::discard(m);
                        return r.map(super::fast::relay);
                    }
                }
            }
            // A dict subclass's own methods are found through `getattr`.
            let plain_dict = matches!(&o, Value::Dict(d) if d.borrow().kind.is_none());
            if plain_dict || matches!(o, Value::List(_) | Value::Str(_)) {
                let a = self.eval_args(args, env)?;
                return self.call_method(&o, name, a);
            }
            let fv = self.get_attr(&o, name)?;
            let a = self.eval_args(args, env)?;
            return self.call_value(&fv, a);
        }
        // A global callee is read through its cached index directly.
        let fv = match f {
            Expr::Name(Name::Global(n, at)) => match self.global_at(n, at) {
                Some(v) => v,
                None => return Err(name_error(n)),
            },
            _ => self.eval(f, env)?,
        };
        if let Value::Obj(o) = &fv {
            if let Some(func) = o.as_any().downcast_ref::<Function>() {
                if positional_fits(func, args, 0) {
                    let r = self.call_positional(func, None, args, env);
                    super::fast::discard(fv);
                    return r.map(super::fast::relay);
                }
            }
        }
        let a = self.eval_args(args, env)?;
        self.call_value(&fv, a)
    }

    fn eval_args(&mut self, args: &[Arg], env: &Env) -> PyResult<Args> {
        let mut a = Args::default();
        for arg in args {
            match arg {
                Arg::Pos(e) => a.pos.push(self.eval(e, env)?),
                Arg::Star(e) => {
                    let v = self.eval(e, env)?;
                    a.pos.extend(self.iter_values(&v)?);
                }
                Arg::Kw(k, e) => a.kw.push((k.to_string(), self.eval(e, env)?)),
                Arg::StarStar(e) => {
                    let m = self.eval(e, env)?;
                    for (k, v) in self.mapping_items(&m)? {
                        let k = match k {
                            Value::Str(s) => s.to_string(),
                            _ => return Err(PyErr::type_error("keywords must be strings")),
                        };
                        a.kw.push((k, v));
                    }
                }
            }
        }
        Ok(a)
    }

    pub fn make_function(&mut self, def: &Rc<FuncDef>, env: &Env) -> PyResult<Value> {
        let mut defaults = Vec::with_capacity(def.params.len());
        for p in &def.params {
            defaults.push(match &p.default {
                Some(d) => Some(self.eval(d, env)?),
                None => None,
            });
        }
        let qualname = def.qualname.to_string();
        Ok(Value::Obj(Rc::new(Function {
            def: def.clone(),
            defaults,
            closure: env.frame.clone(),
            qualname,
            attrs: Default::default(),
            owner: Default::default(),
        })))
    }

    /// Stores into an assignment target: a name, attribute, subscript, or a (nested,
    /// possibly starred) tuple/list pattern.
    pub fn assign(&mut self, target: &Expr, v: Value, env: &Env) -> PyResult<()> {
        match target {
            Expr::Name(n) => self.store_name(n, v, env),
            Expr::Attr(obj, name) => {
                let o = self.eval(obj, env)?;
                self.set_attr(&o, name, v)
            }
            Expr::Sub(obj, key) => {
                let o = self.eval(obj, env)?;
                let k = self.eval(key, env)?;
                self.set_item(&o, &k, v)
            }
            Expr::Tuple(items) | Expr::List(items) => {
                let vals = self.iter_values(&v)?;
                let star = items.iter().position(|e| matches!(e, Expr::Starred(_)));
                match star {
                    None => {
                        if vals.len() != items.len() {
                            return Err(unpack_error(items.len(), vals.len()));
                        }
                        for (t, v) in items.iter().zip(vals) {
                            self.assign(t, v, env)?;
                        }
                    }
                    Some(si) => {
                        let after = items.len() - si - 1;
                        if vals.len() < items.len() - 1 {
                            return Err(PyErr::value_error(format!(
                                "not enough values to unpack (expected at least {}, got {})",
                                items.len() - 1,
                                vals.len()
                            )));
                        }
                        let mid_end = vals.len() - after;
                        for (t, v) in items[..si].iter().zip(vals[..si].iter()) {
                            self.assign(t, v.clone(), env)?;
                        }
                        if let Expr::Starred(inner) = &items[si] {
                            self.assign(inner, Value::list(vals[si..mid_end].to_vec()), env)?;
                        }
                        for (t, v) in items[si + 1..].iter().zip(vals[mid_end..].iter()) {
                            self.assign(t, v.clone(), env)?;
                        }
                    }
                }
                Ok(())
            }
            Expr::Starred(inner) => self.assign(inner, v, env),
            _ => Err(PyErr::new("SyntaxError", "cannot assign to expression")),
        }
    }

    pub fn compare(&mut self, op: Cmp, a: &Value, b: &Value) -> PyResult<Value> {
        match op {
            Cmp::Op(o) => self.rich_compare(o, a, b),
            Cmp::Is => Ok(Value::Bool(a.is(b))),
            Cmp::IsNot => Ok(Value::Bool(!a.is(b))),
            Cmp::In => Ok(Value::Bool(self.contains(b, a)?)),
            Cmp::NotIn => Ok(Value::Bool(!self.contains(b, a)?)),
        }
    }

    pub fn eq(&mut self, a: &Value, b: &Value) -> PyResult<bool> {
        let r = self.rich_compare(CmpOp::Eq, a, b)?;
        self.truthy(&r)
    }
}

pub fn name_error(name: &str) -> PyErr {
    PyErr::new("NameError", format!("name '{name}' is not defined"))
}

fn unpack_error(want: usize, got: usize) -> PyErr {
    if got > want {
        PyErr::value_error(format!("too many values to unpack (expected {want})"))
    } else {
        PyErr::value_error(format!(
            "not enough values to unpack (expected {want}, got {got})"
        ))
    }
}
