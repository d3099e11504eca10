//! Executing `try`/`except`/`else`/`finally` and `with` statements: the two statement forms
//! that guard a block, matching exceptions against `except` clauses and calling a context
//! manager's `__enter__`/`__exit__` (which may swallow the error) in CPython's order.

use super::stmt::Flow;
use super::vm::{Env, Vm};
use crate::lang::syntax::ast::*;
use crate::lang::values::exc::PyResult;

impl Vm<'_> {
    pub(in crate::lang) fn exec_try(
        &mut self,
        body: &[Stmt],
        handlers: &[Handler],
        orelse: &[Stmt],
        finally: &[Stmt],
        env: &Env,
    ) -> PyResult<Flow> {
        let mut result = self.exec_block(body, env);
        if let Err(e) = &result {
            let e = e.clone();
            for h in handlers {
                let matched = match &h.ty {
                    None => true,
                    Some(t) => {
                        let spec = self.eval(t, env)?;
                        self.err_matches(&e, &spec)
                    }
                };
                if matched {
                    env.line.set(h.line);
                    if let Some(n) = &h.name {
                        let v = self.err_value(&e);
                        self.store_name(n, v, env)?;
                    }
                    self.handling.push(e.clone());
                    result = self.exec_block(&h.body, env);
                    self.handling.pop();
                    break;
                }
            }
        } else if let Ok(Flow::Normal) = result {
            result = self.exec_block(orelse, env);
        }
        if !finally.is_empty() {
            match self.exec_block(finally, env)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        result
    }

    pub(in crate::lang) fn exec_with(
        &mut self,
        items: &[(Expr, Option<Expr>)],
        body: &[Stmt],
        env: &Env,
    ) -> PyResult<Flow> {
        let Some(((ctx_expr, target), rest)) = items.split_first() else {
            return self.exec_block(body, env);
        };
        let mgr = self.eval(ctx_expr, env)?;
        let entered = self.ctx_enter(&mgr)?;
        if let Some(t) = target {
            self.assign(t, entered, env)?;
        }
        let result = if rest.is_empty() {
            self.exec_block(body, env)
        } else {
            self.exec_with(rest, body, env)
        };
        let err = result.as_ref().err().cloned();
        let swallow = self.ctx_exit(&mgr, err.as_ref())?;
        match result {
            Err(_) if swallow => Ok(Flow::Normal),
            other => other,
        }
    }
}
