//! The evaluator's hot path, kept apart from the full expression and statement code so
//! the recursive functions every loop iteration goes through stay small: constants, local
//! slots, integer `+ - *` and comparisons, calls and simple assignments are handled here,
//! and everything else is sent to `eval_slow` / `exec_slow`. Function frames are recycled
//! through a small pool, because allocating a frame was the largest cost of a call.
//!
//! Ints are moved by their parts here (`relay`, `operand`, `set_slot`). A value just
//! written as two 8-byte stores (tag and payload) and then copied whole is read back with
//! a 16-byte load, which the CPU cannot forward from the two pending stores: it waits for
//! them to reach the cache, a stall that was the largest single cost of a loop iteration.

use std::rc::Rc;

use super::stmt::Flow;
use super::vm::{Env, Vm};
use crate::lang::syntax::ast::*;
use crate::lang::values::exc::PyResult;
use crate::lang::values::object::{BinOp, CmpOp};
use crate::lang::values::runtime::Frame;
use crate::lang::values::value::Value;

/// How many finished frames are kept for reuse; deeper recursion allocates as before.
const FRAME_POOL: usize = 64;

/// Stores into a frame slot (slot numbers come from the converter, so always in range).
#[inline(always)]
pub fn set_slot(f: &Frame, i: u32, v: Value) {
    if let Some(slot) = f.slots.borrow_mut().get_mut(i as usize) {
        if slot.as_ref().is_none_or(owns_nothing) {
            // SAFETY: the old content owns nothing (no reference count, no heap), so
            // overwriting it without running its drop loses nothing; this skips both the
            // out-of-line drop call and a whole-value read of the old content.
            unsafe { std::ptr::write(slot, Some(relay(v))) };
        } else if let Some(old) = slot.replace(v) {
            discard(old);
        }
    }
}

/// Whether `v` is an inline kind (None, bool, int, float): no reference count, no heap,
/// so it may be overwritten or forgotten without its drop.
#[inline(always)]
pub fn owns_nothing(v: &Value) -> bool {
    matches!(
        v,
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_)
    )
}

/// Stores an operand (see [`Vm::operand`]) into a frame slot.
#[inline(always)]
pub fn set_slot_operand(f: &Frame, i: u32, v: Result<i64, Value>) {
    match v {
        Ok(x) => set_slot(f, i, Value::Int(x)),
        Err(v) => set_slot(f, i, v),
    }
}

/// An operand as a value again.
#[inline(always)]
pub fn as_value(v: Result<i64, Value>) -> Value {
    match v {
        Ok(x) => Value::Int(x),
        Err(v) => v,
    }
}

/// The same value, rebuilt from its parts when it is an int, so that the move writes and
/// reads 8-byte words instead of copying the whole value (see the module note).
#[inline(always)]
pub fn relay(v: Value) -> Value {
    match split_int(v) {
        Ok(x) => Value::Int(x),
        Err(v) => v,
    }
}

/// `v`'s int, or `v` handed back. The int is copied out and `v` forgotten: matching
/// `Value::Int(x)` alone leaves `v` to its drop glue, an out-of-line call (for nothing)
/// that also forces the value out of registers onto the stack.
#[inline(always)]
pub fn split_int(v: Value) -> Result<i64, Value> {
    if let Value::Int(x) = v {
        std::mem::forget(v);
        Ok(x)
    } else {
        Err(v)
    }
}

/// `v`'s bool, or `v` handed back; forgotten when taken, as in [`split_int`].
#[inline(always)]
pub fn split_bool(v: Value) -> Result<bool, Value> {
    if let Value::Bool(b) = v {
        std::mem::forget(v);
        Ok(b)
    } else {
        Err(v)
    }
}

/// Drops a value, without the out-of-line drop call when it is an inline kind (None,
/// bool, int, float) that owns nothing: most values overwritten in loops are ints.
/// The inline kinds are forgotten explicitly: an arm that merely does nothing still
/// leaves `v` to the drop glue at the end of the function, which is the call to avoid.
#[inline(always)]
pub fn discard(v: Value) {
    match v {
        // The reference counts of the commonest shared kinds are released inline; the
        // out-of-line drop runs only when one reaches zero.
        Value::Obj(o) => drop(o),
        Value::List(l) => drop(l),
        v if owns_nothing(&v) => std::mem::forget(v),
        v => drop(v),
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
    /// An operand, with an int taken out of it by its parts (`Ok`), anything else as is
    /// (`Err`): the callers' int paths then never copy a freshly written value whole.
    #[inline(always)]
    pub fn operand(&mut self, e: &Expr, env: &Env) -> PyResult<Result<i64, Value>> {
        if let Some(x) = peek_int(e, env) {
            return Ok(Ok(x));
        }
        match self.eval_operand(e, env) {
            Ok(v) => Ok(split_int(v)),
            Err(e) => Err(e),
        }
    }

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
                let a = self.operand(a, env)?;
                let b = self.operand(b, env)?;
                match (a, b) {
                    (Ok(x), Ok(y)) => match int_op(*op, x, y) {
                        Some(r) => Ok(Value::Int(r)),
                        None => self.binop(*op, &Value::Int(x), &Value::Int(y)),
                    },
                    (a, b) => {
                        let (a, b) = (as_value(a), as_value(b));
                        self.binop(*op, &a, &b)
                    }
                }
            }
            Expr::Compare(first, rest) if rest.len() == 1 => {
                let (op, second) = &rest[0];
                if let (Cmp::Op(o), Some(x)) = (op, peek_int(first, env)) {
                    if let Some(y) = peek_int(second, env) {
                        return Ok(Value::Bool(int_cmp(*o, x, y)));
                    }
                }
                let a = self.operand(first, env)?;
                let b = self.operand(second, env)?;
                match (op, a, b) {
                    (Cmp::Op(o), Ok(x), Ok(y)) => Ok(Value::Bool(int_cmp(*o, x, y))),
                    (_, a, b) => self.compare(*op, &as_value(a), &as_value(b)),
                }
            }
            Expr::Call(f, args) => self.eval_call(f, args, env),
            Expr::Attr(obj, name) => {
                let o = self.eval_operand(obj, env)?;
                match crate::lang::datamodel::attr::own_attr(&o, name) {
                    Some(v) => {
                        discard(o);
                        Ok(v)
                    }
                    None => self.get_attr(&o, name),
                }
            }
            _ => self.eval_slow(e, env),
        }
    }

    pub fn exec(&mut self, s: &Stmt, env: &Env) -> PyResult<Flow> {
        env.line.set(s.line);
        match &s.kind {
            StmtKind::Expr(e) => {
                match self.eval(e, env) {
                    Ok(v) => discard(v),
                    Err(e) => return Err(e),
                }
                Ok(Flow::Normal)
            }
            StmtKind::Assign(targets, value) if targets.len() == 1 => {
                let v = self.operand(value, env)?;
                match (&targets[0], &env.frame) {
                    (Expr::Name(Name::Local(i, _)), Some(f)) => set_slot_operand(f, *i, v),
                    (t, _) => self.assign(t, as_value(v), env)?,
                }
                Ok(Flow::Normal)
            }
            StmtKind::Return(v) => Ok(Flow::Return(match v {
                Some(e) => as_value(self.operand(e, env)?),
                None => Value::None,
            })),
            // `n += k` on an int local: read in place, written back to the same slot.
            StmtKind::AugAssign(target @ Expr::Name(Name::Local(slot, _)), op, value) => {
                let (Some(f), Some(x)) = (&env.frame, peek_int(target, env)) else {
                    return self.exec_slow(s, env);
                };
                let r = match self.operand(value, env)? {
                    Ok(y) => match int_op(*op, x, y) {
                        Some(r) => Ok(r),
                        None => Err(self.inplace(*op, &Value::Int(x), &Value::Int(y))?),
                    },
                    Err(y) => Err(self.inplace(*op, &Value::Int(x), &y)?),
                };
                set_slot_operand(f, *slot, r);
                Ok(Flow::Normal)
            }
            StmtKind::If(test, body, orelse) => {
                let t = match split_bool(self.eval(test, env)?) {
                    Ok(b) => b,
                    Err(other) => self.truthy(&other)?,
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

    /// A frame of `n` empty slots, reused from the pool when one is free. Pooled frames
    /// hold only empty slots (see `release_frame`), so one of the right size is ready.
    pub fn new_frame(&mut self, n: usize, parent: Option<Rc<Frame>>) -> Rc<Frame> {
        if let Some(mut f) = self.frame_pool.pop() {
            if let Some(m) = Rc::get_mut(&mut f) {
                m.parent = parent;
                let slots = m.slots.get_mut();
                if slots.len() != n {
                    slots.resize_with(n, || None);
                }
                return f;
            }
        }
        Frame::new(n, parent)
    }

    /// Returns a finished frame to the pool unless a closure or generator still holds it,
    /// with every slot emptied but the slot vector kept at its length.
    pub fn release_frame(&mut self, mut f: Rc<Frame>) {
        if self.frame_pool.len() < FRAME_POOL {
            if let Some(m) = Rc::get_mut(&mut f) {
                for slot in m.slots.get_mut().iter_mut() {
                    if slot.as_ref().is_none_or(owns_nothing) {
                        // SAFETY: the content owns nothing, so it needs no drop.
                        unsafe { std::ptr::write(slot, None) };
                    } else if let Some(v) = slot.take() {
                        drop(v);
                    }
                }
                m.parent = None;
                self.frame_pool.push(f);
            }
        }
    }
}
