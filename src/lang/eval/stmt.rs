//! Executing statements: control flow (as a [`Flow`] value rather than Rust unwinding),
//! assignment forms, function and class definitions, `try`/`with`/`raise`, `del`, imports
//! and IPython escapes. Each statement records its line in the environment so a traceback
//! can point at it.

use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use super::vm::{Env, Vm};
use crate::lang::syntax::ast::*;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::runtime::{Class, Function};
use crate::lang::values::value::Value;

pub enum Flow {
    Normal,
    Break,
    Continue,
    Return(Value),
}

impl Vm<'_> {
    pub fn exec_block(&mut self, body: &[Stmt], env: &Env) -> PyResult<Flow> {
        for s in body {
            match self.exec(s, env)? {
                // Forgotten rather than dropped: see `fast::split_int`.
                f @ Flow::Normal => std::mem::forget(f),
                Flow::Return(v) => return Ok(Flow::Return(super::fast::relay(v))),
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    /// Every statement form; `fast::exec` handles the hot ones and sends the rest here.
    #[inline(never)]
    pub fn exec_slow(&mut self, s: &Stmt, env: &Env) -> PyResult<Flow> {
        match &s.kind {
            StmtKind::Expr(e) => {
                self.eval(e, env)?;
            }
            StmtKind::Assign(targets, value) => {
                let v = self.eval(value, env)?;
                match targets.as_slice() {
                    [t] => self.assign(t, v, env)?,
                    many => {
                        for t in many {
                            self.assign(t, v.clone(), env)?;
                        }
                    }
                }
            }
            StmtKind::AugAssign(target, op, value) => self.aug_assign(target, *op, value, env)?,
            StmtKind::Annotated {
                target,
                value,
                name,
                annotation,
            } => {
                if let Some(value) = value {
                    let v = self.eval(value, env)?;
                    self.assign(target, v, env)?;
                }
                let a = self.eval(annotation, env)?;
                self.record_annotation(name, a, env);
            }
            StmtKind::If(test, body, orelse) => {
                let t = self.eval(test, env)?;
                return if self.truthy(&t)? {
                    self.exec_block(body, env)
                } else {
                    self.exec_block(orelse, env)
                };
            }
            StmtKind::While(test, body, orelse) => loop {
                self.check_interrupt_fast()?;
                let t = self.eval(test, env)?;
                if !self.truthy(&t)? {
                    return self.exec_block(orelse, env);
                }
                match self.exec_block(body, env)? {
                    Flow::Break => break,
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    _ => {}
                }
            },
            StmtKind::For(target, iter, body, orelse) => {
                let it = self.eval(iter, env)?;
                return self.exec_for(target, it, body, orelse, env);
            }
            StmtKind::FuncDef(def, decos, target) => {
                let mut f = self.make_function(def, env)?;
                for d in decos.iter().rev() {
                    let d = self.eval(d, env)?;
                    f = self.call_value(&d, crate::lang::values::object::Args::new(vec![f]))?;
                }
                self.store_name(target, f, env)?;
            }
            StmtKind::ClassDef {
                name,
                bases,
                body,
                decorators,
                target,
            } => {
                let mut c = self.make_class(name, bases, body, env)?;
                for d in decorators.iter().rev() {
                    let d = self.eval(d, env)?;
                    c = self.call_value(&d, crate::lang::values::object::Args::new(vec![c]))?;
                }
                self.store_name(target, c, env)?;
            }
            StmtKind::Return(v) => {
                let v = match v {
                    Some(e) => self.eval(e, env)?,
                    None => Value::None,
                };
                return Ok(Flow::Return(v));
            }
            StmtKind::Pass | StmtKind::Nop => {}
            StmtKind::Break => return Ok(Flow::Break),
            StmtKind::Continue => return Ok(Flow::Continue),
            StmtKind::Raise(exc, cause) => return Err(self.raise(exc, cause, env)),
            StmtKind::Try {
                body,
                handlers,
                orelse,
                finally,
            } => return self.exec_try(body, handlers, orelse, finally, env),
            StmtKind::With(items, body) => return self.exec_with(items, body, env),
            StmtKind::Assert(test, msg) => {
                let t = self.eval(test, env)?;
                if !self.truthy(&t)? {
                    let args = match msg {
                        Some(m) => vec![self.eval(m, env)?],
                        None => vec![],
                    };
                    let cls = self.exc_class("AssertionError");
                    return Err(self.err_from_instance(
                        crate::lang::values::exceptions::exc_instance(cls, args),
                    ));
                }
            }
            StmtKind::Del(targets) => {
                for t in targets {
                    self.delete(t, env)?;
                }
            }
            StmtKind::Import(path, alias, bind) => {
                let v = self.import(path)?;
                match alias {
                    Some(_) => self.store_name(bind, v, env)?,
                    None => {
                        let top = path.split('.').next().unwrap_or("");
                        let topv = self.import(top)?;
                        self.store_name(bind, topv, env)?;
                    }
                }
            }
            StmtKind::ImportFrom(module, names) => {
                let m = self.import(module)?;
                for (n, bind) in names {
                    let v = match self.get_attr(&m, n) {
                        Ok(v) => v,
                        Err(_) => match self.import(&format!("{module}.{n}")) {
                            Ok(v) => v,
                            Err(_) => {
                                return Err(PyErr::new(
                                    "ImportError",
                                    format!("cannot import name '{n}' from '{module}'"),
                                ))
                            }
                        },
                    };
                    self.store_name(bind, v, env)?;
                }
            }
            StmtKind::ImportStar(module) => {
                let m = self.import(module)?;
                for n in self.dir_of(&m) {
                    if n.starts_with('_') {
                        continue;
                    }
                    if let Ok(v) = self.get_attr(&m, &n) {
                        self.core
                            .globals
                            .borrow_mut()
                            .insert(Rc::from(n.as_str()), v);
                    }
                }
            }
            StmtKind::Escape(kind, text) => self.escape(kind, text, env)?,
        }
        Ok(Flow::Normal)
    }

    fn exec_for(
        &mut self,
        target: &Expr,
        it: Value,
        body: &[Stmt],
        orelse: &[Stmt],
        env: &Env,
    ) -> PyResult<Flow> {
        // Ranges and lists iterate in place; everything else is collected first.
        if let Some(r) = it.downcast::<crate::lang::values::runtime::Range>() {
            let r = *r;
            let mut i = r.start;
            while (r.step > 0 && i < r.stop) || (r.step < 0 && i > r.stop) {
                self.check_interrupt_fast()?;
                self.bind_loop_target(target, Value::Int(i), env)?;
                match self.exec_block(body, env)? {
                    Flow::Break => return Ok(Flow::Normal),
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    _ => {}
                }
                // The last step may pass the end of i64; the loop is over then.
                match i.checked_add(r.step) {
                    Some(n) => i = n,
                    None => break,
                }
            }
            return self.exec_block(orelse, env);
        }
        if let Value::List(l) = &it {
            let mut i = 0;
            loop {
                let item = match l.borrow().get(i) {
                    Some(v) => v.clone(),
                    None => break,
                };
                i += 1;
                self.check_interrupt_fast()?;
                self.bind_loop_target(target, item, env)?;
                match self.exec_block(body, env)? {
                    Flow::Break => return Ok(Flow::Normal),
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    _ => {}
                }
            }
            return self.exec_block(orelse, env);
        }
        let iter = self.get_iter(&it)?;
        let line = env.line.get();
        loop {
            let item = match self.next_item(&iter) {
                Ok(Some(item)) => item,
                Ok(None) => break,
                // An iterator that fails (a generator's body) fails at the `for` line.
                Err(e) => {
                    env.line.set(line);
                    return Err(e);
                }
            };
            self.check_interrupt_fast()?;
            self.bind_loop_target(target, item, env)?;
            match self.exec_block(body, env)? {
                Flow::Break => return Ok(Flow::Normal),
                Flow::Return(v) => return Ok(Flow::Return(v)),
                _ => {}
            }
        }
        self.exec_block(orelse, env)
    }

    /// Stores a loop's next item: straight into the slot for a local name.
    #[inline(always)]
    fn bind_loop_target(&mut self, target: &Expr, v: Value, env: &Env) -> PyResult<()> {
        match (target, &env.frame) {
            (Expr::Name(Name::Local(slot, _)), Some(f)) => {
                super::fast::set_slot(f, *slot, v);
                Ok(())
            }
            _ => self.assign(target, v, env),
        }
    }

    fn aug_assign(
        &mut self,
        target: &Expr,
        op: crate::lang::values::object::BinOp,
        value: &Expr,
        env: &Env,
    ) -> PyResult<()> {
        match target {
            Expr::Name(n) => {
                let cur = self.load(n, env)?;
                let rhs = self.eval(value, env)?;
                let v = self.inplace(op, &cur, &rhs)?;
                self.store_name(n, v, env)
            }
            Expr::Attr(obj, name) => {
                let o = self.eval(obj, env)?;
                let cur = self.get_attr(&o, name)?;
                let rhs = self.eval(value, env)?;
                let v = self.inplace(op, &cur, &rhs)?;
                self.set_attr(&o, name, v)
            }
            Expr::Sub(obj, key) => {
                let o = self.eval(obj, env)?;
                let k = self.eval(key, env)?;
                let cur = self.get_item(&o, &k)?;
                let rhs = self.eval(value, env)?;
                let v = self.inplace(op, &cur, &rhs)?;
                self.set_item(&o, &k, v)
            }
            _ => Err(PyErr::new(
                "SyntaxError",
                "'expression' is an illegal expression for augmented assignment",
            )),
        }
    }

    /// `+=` on a list extends it in place (other holders see the change), as in Python.
    /// A failed operation names the augmented operator (`+=`), as CPython does.
    pub fn inplace(
        &mut self,
        op: crate::lang::values::object::BinOp,
        a: &Value,
        b: &Value,
    ) -> PyResult<Value> {
        if let (crate::lang::values::object::BinOp::Add, Value::List(l)) = (op, a) {
            let items = self.iter_values(b)?;
            l.borrow_mut().extend(items);
            return Ok(a.clone());
        }
        self.binop(op, a, b).map_err(|mut e| {
            let plain = format!(
                "unsupported operand type(s) for {}:",
                crate::lang::datamodel::ops::op_symbol(op)
            );
            if e.0.value.is_none() && e.0.type_name == "TypeError" {
                if let Some(rest) = e.0.message.strip_prefix(&plain) {
                    e.0.message = format!("{}=:{rest}", &plain[..plain.len() - 1]);
                }
            }
            e
        })
    }

    fn delete(&mut self, t: &Expr, env: &Env) -> PyResult<()> {
        match t {
            Expr::Name(n) => self.delete_name(n, env),
            Expr::Sub(obj, key) => {
                let o = self.eval(obj, env)?;
                let k = self.eval(key, env)?;
                self.del_item(&o, &k)
            }
            Expr::Attr(obj, name) => {
                let o = self.eval(obj, env)?;
                self.del_attr(&o, name)
            }
            Expr::Tuple(items) | Expr::List(items) => {
                for i in items {
                    self.delete(i, env)?;
                }
                Ok(())
            }
            _ => Err(PyErr::new("SyntaxError", "cannot delete expression")),
        }
    }

    fn make_class(
        &mut self,
        name: &Rc<str>,
        bases: &[Expr],
        body: &[Stmt],
        env: &Env,
    ) -> PyResult<Value> {
        let mut base = None;
        for b in bases {
            let v = self.eval(b, env)?;
            if base.is_none() {
                base = Some(v);
            }
        }
        let base = match base {
            Some(b)
                if b.downcast::<crate::lang::values::runtime::BuiltinType>()
                    .is_some() =>
            {
                None
            }
            other => other,
        };
        let ns = Rc::new(RefCell::new(IndexMap::new()));
        ns.borrow_mut()
            .insert("__module__".to_string(), Value::str("__main__"));
        let cenv = Env {
            frame: env.frame.clone(),
            class_ns: Some(ns.clone()),
            line: std::cell::Cell::new(env.line.get()),
            owner: None,
        };
        if let Some(Stmt {
            kind: StmtKind::Expr(Expr::Const(Value::Str(doc))),
            ..
        }) = body.first()
        {
            ns.borrow_mut()
                .insert("__doc__".into(), Value::Str(doc.clone()));
        }
        self.exec_block(body, &cenv)?;
        let dict: IndexMap<_, _, _> = ns
            .borrow()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let properties = dict
            .values()
            .any(crate::lang::builtins::wrappers::is_property);
        let cls = Value::Obj(Rc::new(Class {
            name: name.to_string(),
            module: "__main__".into(),
            base,
            dict: RefCell::new(dict),
            builtin: false,
            properties: std::cell::Cell::new(properties),
        }));
        // Methods learn their class so zero-argument `super()` can find it.
        if let Some(c) = cls.downcast::<Class>() {
            let mut d = c.dict.borrow_mut();
            for (k, v) in d.iter_mut() {
                if let Some(f) = v.downcast::<Function>() {
                    *f.owner.borrow_mut() = Some(cls.clone());
                }
                if let Some(w) = v.downcast::<crate::lang::builtins::wrappers::Wrapper>() {
                    w.name.borrow_mut().get_or_insert_with(|| k.clone());
                    if let Some(f) = w.func.downcast::<Function>() {
                        *f.owner.borrow_mut() = Some(cls.clone());
                    }
                }
            }
        }
        Ok(cls)
    }

    fn raise(&mut self, exc: &Option<Expr>, cause: &Option<Expr>, env: &Env) -> PyErr {
        let _ = cause;
        let Some(exc) = exc else {
            return match self.handling.last() {
                Some(e) => e.clone(),
                None => PyErr::runtime_error("No active exception to reraise"),
            };
        };
        let v = match self.eval(exc, env) {
            Ok(v) => v,
            Err(e) => return e,
        };
        if crate::lang::values::exceptions::is_exception_class(&v) {
            return match self.call_value(&v, crate::lang::values::object::Args::default()) {
                Ok(inst) => self.err_from_instance(inst),
                Err(e) => e,
            };
        }
        if let Some(i) = v.downcast::<crate::lang::values::runtime::Instance>() {
            if crate::lang::values::exceptions::is_exception_class(&i.class) {
                return self.err_from_instance(v);
            }
        }
        PyErr::type_error("exceptions must derive from BaseException")
    }

    pub fn err_from_instance(&mut self, inst: Value) -> PyErr {
        let name = inst.type_name();
        let msg = self.exc_message(&inst);
        let mut e = PyErr::new(&name, "");
        // A user's own message is kept whole, "Hint:" lines included.
        e.0.message = msg;
        e.0.value = Some(inst);
        e
    }
}

impl Vm<'_> {
    /// Records `name: annotation` in the `__annotations__` dict of the class being defined,
    /// or of the module (the session's globals), making the dict on first use as CPython
    /// does.
    fn record_annotation(&mut self, name: &Rc<str>, annotation: Value, env: &Env) {
        let existing = match &env.class_ns {
            Some(ns) => ns.borrow().get("__annotations__").cloned(),
            None => self.core.globals.borrow().get("__annotations__").cloned(),
        };
        let dict = match existing {
            Some(d @ Value::Dict(_)) => d,
            _ => {
                let d = Value::dict_from(vec![]);
                match &env.class_ns {
                    Some(ns) => {
                        ns.borrow_mut()
                            .insert("__annotations__".to_string(), d.clone());
                    }
                    None => {
                        self.core
                            .globals
                            .borrow_mut()
                            .insert(Rc::from("__annotations__"), d.clone());
                    }
                }
                d
            }
        };
        if let Value::Dict(d) = dict {
            d.borrow_mut().insert_str(name, annotation);
        }
    }
}
