//! The evaluator's hot path, kept apart from the full expression and statement code so
//! the recursive functions every loop iteration goes through stay small: constants, local
//! slots, integer `+ - *` and comparisons, calls and simple assignments are handled here,
//! and everything else is sent to `eval_slow` / `exec_slow`. Function frames are recycled
//! through a small pool, because allocating a frame was the largest cost of a call.

use std::rc::Rc;

use super::ast::*;
use super::eval_stmt::Flow;
use super::exc::PyResult;
use super::object::{BinOp, CmpOp};
use super::runtime::Frame;
use super::value::Value;
use super::vm::{Env, Vm};

/// How many finished frames are kept for reuse; deeper recursion allocates as before.
const FRAME_POOL: usize = 64;

/// Stores into a frame slot (slot numbers come from the converter, so always in range).
#[inline(always)]
pub fn set_slot(f: &Frame, i: u32, v: Value) {
    if let Some(slot) = f.slots.borrow_mut().get_mut(i as usize) {
        if let Some(old) = slot.replace(v) {
            discard(old);
        }
    }
}

/// Drops a value, without the out-of-line drop call when it is an inline kind (None,
/// bool, int, float) that owns nothing: most values overwritten in loops are ints.
#[inline(always)]
pub fn discard(v: Value) {
    match v {
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {}
        other => drop(other),
    }
}

/// A constant or a bound local, read without a call: most operands are one of the two.
#[inline(always)]
fn leaf(e: &Expr, env: &Env) -> Option<Value> {
    match e {
        Expr::Const(v) => Some(v.clone()),
        Expr::Name(Name::Local(i, _)) => {
            env.frame.as_ref()?.slots.borrow().get(*i as usize)?.clone()
        }
        _ => None,
    }
}

/// The int held by an int constant or a bound local slot, read without cloning.
#[inline(always)]
fn peek_int(e: &Expr, env: &Env) -> Option<i64> {
    match e {
        Expr::Const(Value::Int(x)) => Some(*x),
        Expr::Name(Name::Local(i, _)) => {
            match env.frame.as_ref()?.slots.borrow().get(*i as usize) {
                Some(Some(Value::Int(x))) => Some(*x),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Int arithmetic that stays in `i64`: `None` sends the operation to the general path,
/// which overflows into the big-int handling or raises as Python does.
#[inline(always)]
fn int_op(op: BinOp, x: i64, y: i64) -> Option<i64> {
    match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        BinOp::Mul => x.checked_mul(y),
        // With a positive divisor Python's floor division and modulo are the Euclidean
        // ones; other signs take the general path.
        BinOp::Mod if y > 0 => Some(x.rem_euclid(y)),
        BinOp::FloorDiv if y > 0 => Some(x.div_euclid(y)),
        _ => None,
    }
}

#[inline(always)]
fn int_cmp(op: CmpOp, x: i64, y: i64) -> bool {
    match op {
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
    }
}

impl Vm<'_> {
    /// `eval`, with constants and locals read inline instead of through a call.
    #[inline(always)]
    pub fn eval_operand(&mut self, e: &Expr, env: &Env) -> PyResult<Value> {
        match leaf(e, env) {
            Some(v) => Ok(v),
            None => self.eval(e, env),
        }
    }

    pub fn eval(&mut self, e: &Expr, env: &Env) -> PyResult<Value> {
        match e {
            Expr::Const(v) => Ok(v.clone()),
            Expr::Name(n @ Name::Local(i, _)) => {
                if let Some(f) = &env.frame {
                    if let Some(Some(v)) = f.slots.borrow().get(*i as usize) {
                        return Ok(v.clone());
                    }
                }
                self.load(n, env)
            }
            Expr::Name(n) => self.load(n, env),
            Expr::Bin(op, a, b) => {
                // An int operand already in a slot or a constant is read in place, with
                // no clone and no drop; the left one is read before the right one runs,
                // as Python loads it first.
                let a = match peek_int(a, env) {
                    Some(x) => Value::Int(x),
                    None => self.eval(a, env)?,
                };
                let b = match peek_int(b, env) {
                    Some(y) => Value::Int(y),
                    None => self.eval(b, env)?,
                };
                match (a, b) {
                    (Value::Int(x), Value::Int(y)) => match int_op(*op, x, y) {
                        Some(r) => Ok(Value::Int(r)),
                        None => self.binop(*op, &Value::Int(x), &Value::Int(y)),
                    },
                    (a, b) => self.binop(*op, &a, &b),
                }
            }
            Expr::Compare(first, rest) if rest.len() == 1 => {
                let (op, second) = &rest[0];
                if let (Cmp::Op(o), Some(x)) = (op, peek_int(first, env)) {
                    if let Some(y) = peek_int(second, env) {
                        return Ok(Value::Bool(int_cmp(*o, x, y)));
                    }
                }
                let a = self.eval_operand(first, env)?;
                let b = self.eval_operand(second, env)?;
                if let (Cmp::Op(o), Value::Int(x), Value::Int(y)) = (op, &a, &b) {
                    return Ok(Value::Bool(int_cmp(*o, *x, *y)));
                }
                self.compare(*op, &a, &b)
            }
            Expr::Call(f, args) => self.eval_call(f, args, env),
            _ => self.eval_slow(e, env),
        }
    }

    pub fn exec(&mut self, s: &Stmt, env: &Env) -> PyResult<Flow> {
        env.line.set(s.line);
        match &s.kind {
            StmtKind::Expr(e) => {
                discard(self.eval(e, env)?);
                Ok(Flow::Normal)
            }
            StmtKind::Assign(targets, value) if targets.len() == 1 => {
                let v = self.eval_operand(value, env)?;
                match (&targets[0], &env.frame) {
                    (Expr::Name(Name::Local(i, _)), Some(f)) => set_slot(f, *i, v),
                    (t, _) => self.assign(t, v, env)?,
                }
                Ok(Flow::Normal)
            }
            StmtKind::Return(v) => Ok(Flow::Return(match v {
                Some(e) => self.eval_operand(e, env)?,
                None => Value::None,
            })),
            // `n += k` on an int local: read in place, written back to the same slot.
            StmtKind::AugAssign(target @ Expr::Name(Name::Local(slot, _)), op, value) => {
                let (Some(f), Some(x)) = (&env.frame, peek_int(target, env)) else {
                    return self.exec_slow(s, env);
                };
                let y = match peek_int(value, env) {
                    Some(y) => Value::Int(y),
                    None => self.eval(value, env)?,
                };
                let r = match y {
                    Value::Int(y) => match int_op(*op, x, y) {
                        Some(r) => Value::Int(r),
                        None => self.inplace(*op, &Value::Int(x), &Value::Int(y))?,
                    },
                    y => self.inplace(*op, &Value::Int(x), &y)?,
                };
                set_slot(f, *slot, r);
                Ok(Flow::Normal)
            }
            StmtKind::If(test, body, orelse) => {
                let t = self.eval(test, env)?;
                let t = match t {
                    Value::Bool(b) => b,
                    other => self.truthy(&other)?,
                };
                if t {
                    self.exec_block(body, env)
                } else {
                    self.exec_block(orelse, env)
                }
            }
            _ => self.exec_slow(s, env),
        }
    }

    /// A global (or builtin) read through the index cached at its use site: a check of
    /// one key instead of hashing the name, and a full lookup when the cache misses.
    #[inline]
    pub fn global_at(&self, name: &Rc<str>, at: &std::cell::Cell<u32>) -> Option<Value> {
        let g = self.core.globals.borrow();
        if let Some((k, v)) = g.get_index(at.get() as usize) {
            if Rc::ptr_eq(k, name) || **k == **name {
                return Some(v.clone());
            }
        }
        if let Some((i, _, v)) = g.get_full(&**name) {
            at.set(u32::try_from(i).unwrap_or(u32::MAX));
            return Some(v.clone());
        }
        drop(g);
        self.core.builtins.get(&**name).cloned()
    }

    /// A frame of `n` empty slots, reused from the pool when one is free.
    pub fn new_frame(&mut self, n: usize, parent: Option<Rc<Frame>>) -> Rc<Frame> {
        if let Some(mut f) = self.frame_pool.pop() {
            if let Some(m) = Rc::get_mut(&mut f) {
                m.parent = parent;
                m.slots.get_mut().resize_with(n, || None);
                return f;
            }
        }
        Frame::new(n, parent)
    }

    /// Returns a finished frame to the pool unless a closure or generator still holds it.
    pub fn release_frame(&mut self, mut f: Rc<Frame>) {
        if self.frame_pool.len() < FRAME_POOL {
            if let Some(m) = Rc::get_mut(&mut f) {
                let slots = m.slots.get_mut();
                while let Some(v) = slots.pop() {
                    if let Some(v) = v {
                        discard(v);
                    }
                }
                m.parent = None;
                self.frame_pool.push(f);
            }
        }
    }
}
