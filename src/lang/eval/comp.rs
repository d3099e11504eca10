//! Comprehensions and generator expressions: each runs in a frame of its own, its first
//! iterable evaluated in the enclosing scope; a generator expression makes a generator
//! (see `generator`) whose body pulls one item at a time from its iterables.

use std::rc::Rc;

use indexmap::IndexMap;

use super::vm::{Env, Vm};
use crate::lang::syntax::ast::*;
use crate::lang::values::exc::PyResult;
use crate::lang::values::runtime::Set;
use crate::lang::values::value::{Dict, HashKey, Value};

impl Vm<'_> {
    pub fn eval_comp(&mut self, c: &Rc<CompDef>, env: &Env) -> PyResult<Value> {
        let first = self.eval(&c.first_iter, env)?;
        if c.kind == CompKind::Gen {
            return self.gen_expr(c, first, env);
        }
        let frame = self.new_frame(c.nlocals, env.frame.clone());
        let mut inner = Env {
            frame: Some(frame),
            class_ns: None,
            line: std::cell::Cell::new(env.line.get()),
            owner: env.owner.clone(),
        };
        let mut out = vec![];
        let mut dict = Dict::default();
        self.comp_level(c, 0, first, &inner, &mut out, &mut dict)?;
        if let Some(f) = inner.frame.take() {
            self.release_frame(f);
        }
        Ok(match c.kind {
            CompKind::List | CompKind::Gen => Value::list(out),
            CompKind::Set => {
                let mut m = IndexMap::new();
                for v in out {
                    crate::lang::values::memory::map_room_for_one(&mut m)?;
                    m.insert(HashKey::of(&v)?, v);
                }
                Set::value(m, false)
            }
            CompKind::Dict => Value::Dict(Rc::new(std::cell::RefCell::new(dict))),
        })
    }

    fn comp_level(
        &mut self,
        c: &CompDef,
        level: usize,
        iterable: Value,
        env: &Env,
        out: &mut Vec<Value>,
        dict: &mut Dict,
    ) -> PyResult<()> {
        let Some(g) = c.gens.get(level) else {
            return Ok(());
        };
        let items = self.iter_values(&iterable)?;
        'outer: for item in items {
            self.check_interrupt_fast()?;
            self.assign(&g.target, item, env)?;
            for cond in &g.ifs {
                let t = self.eval(cond, env)?;
                if !self.truthy(&t)? {
                    continue 'outer;
                }
            }
            if level + 1 < c.gens.len() {
                let next = self.eval(&c.gens[level + 1].iter, env)?;
                self.comp_level(c, level + 1, next, env, out, dict)?;
            } else if let Some(v) = &c.value {
                let k = self.eval(&c.elt, env)?;
                let v = self.eval(v, env)?;
                dict.insert(k, v)?;
            } else {
                let v = self.eval(&c.elt, env)?;
                out.push(v);
            }
        }
        Ok(())
    }
}

impl Vm<'_> {
    /// A generator expression: the first iterable's iterator is taken now (so a value
    /// that is not iterable fails here, as in CPython), the rest when the body runs.
    fn gen_expr(&mut self, c: &Rc<CompDef>, first: Value, env: &Env) -> PyResult<Value> {
        let first = self.get_iter(&first)?;
        let frame = self.new_frame(c.nlocals, env.frame.clone());
        let (c, line, owner) = (c.clone(), env.line.get(), env.owner.clone());
        let body = Box::new(move |vm: &mut Vm<'static>| {
            let inner = Env {
                frame: Some(frame),
                class_ns: None,
                line: std::cell::Cell::new(line),
                owner,
            };
            vm.gen_level(&c, 0, first, &inner)?;
            Ok(Value::None)
        });
        super::generator::Generator::value("<genexpr>", "<genexpr>", body)
    }

    /// One `for` of a generator expression, pulling its items one at a time and yielding
    /// each element of the innermost.
    fn gen_level(&mut self, c: &CompDef, level: usize, iterable: Value, env: &Env) -> PyResult<()> {
        let Some(g) = c.gens.get(level) else {
            return Ok(());
        };
        let it = self.get_iter(&iterable)?;
        'outer: while let Some(item) = self.next_item(&it)? {
            self.check_interrupt_fast()?;
            self.assign(&g.target, item, env)?;
            for cond in &g.ifs {
                let t = self.eval(cond, env)?;
                if !self.truthy(&t)? {
                    continue 'outer;
                }
            }
            if level + 1 < c.gens.len() {
                let next = self.eval(&c.gens[level + 1].iter, env)?;
                self.gen_level(c, level + 1, next, env)?;
            } else {
                let v = self.eval(&c.elt, env)?;
                self.yield_value(v)?;
            }
        }
        Ok(())
    }
}
