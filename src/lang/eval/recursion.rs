//! Bounds on recursion, so that no input recurses on the Rust stack without limit. Three
//! things recurse on a depth a cell chooses: Python calls, walks of nested values (repr,
//! comparison, hashing, pretty printing) and the evaluation of deeply nested expressions.
//! They share CPython's counter (`Vm::depth`, bounded by [`RECURSION_LIMIT`]) and its
//! wording (`RecursionError: maximum recursion depth exceeded in comparison`, `... while
//! getting the repr of an object`). A walk nests at most the limit, a few hundred bytes of
//! stack a level; a Python call, whose stack depends on the expressions it evaluates, also
//! makes sure of the stack it runs on ([`with_stack`]). A value that contains
//! itself is printed as CPython prints it (`[...]`, `{...}`): the containers being printed
//! are tracked as `Py_ReprEnter` does. Nesting in the source is bounded by the converter
//! (`convert::MAX_NESTING`), and dropping deep values by the trashcan (`trashcan`).

use super::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::value::Value;

pub use super::vm::RECURSION_LIMIT;

/// Every this many levels of Python calls, the stack left is checked.
pub const CALLS_PER_STACK_CHECK: usize = 8;

/// The stack a Python call must find left, else it runs on a new segment: the evaluator's
/// frames for [`CALLS_PER_STACK_CHECK`] calls, an expression nested as deep as the parser
/// allows (`parse::MAX_NESTING` levels of about 500 bytes) and a walk of nested values up
/// to the recursion limit all fit in it with room to spare.
pub(super) const RED_ZONE: usize = 4 << 20;

/// A new stack segment's size, enough for many levels of calls before the next one.
pub(super) const SEGMENT: usize = 64 << 20;

/// CPython's `RecursionError`, with the context CPython names (`" in comparison"`).
pub fn recursion_error(context: &str) -> PyErr {
    PyErr::new(
        "RecursionError",
        format!("maximum recursion depth exceeded{context}"),
    )
}

/// Runs `f` where at least [`RED_ZONE`] of stack is left: on the current stack when it
/// has that much, else on a new segment (`stacker`), so that Python recursion up to the
/// recursion limit never overflows whatever thread the interpreter runs on.
#[inline(always)]
pub fn with_stack<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// The identity of a container that can hold itself, for [`Vm::repr_enter`].
fn container_id(v: &Value) -> Option<usize> {
    match v {
        Value::List(l) => Some(std::rc::Rc::as_ptr(l) as *const u8 as usize),
        Value::Dict(d) => Some(std::rc::Rc::as_ptr(d) as *const u8 as usize),
        Value::Tuple(t) => Some(std::rc::Rc::as_ptr(t) as *const u8 as usize),
        _ => None,
    }
}

impl Vm<'_> {
    /// One level deeper into a walk of nested values; `context` words the error
    /// (`" in comparison"`). Every `enter` that succeeds is matched by a [`Vm::leave`].
    #[inline]
    pub fn enter(&mut self, context: &str) -> PyResult<()> {
        if self.depth >= RECURSION_LIMIT {
            return Err(recursion_error(context));
        }
        self.depth += 1;
        Ok(())
    }

    #[inline]
    pub fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Runs `f` one level deeper, as [`Vm::enter`] and [`Vm::leave`] around it.
    pub fn nested<T>(
        &mut self,
        context: &str,
        f: impl FnOnce(&mut Self) -> PyResult<T>,
    ) -> PyResult<T> {
        self.enter(context)?;
        let r = f(self);
        self.leave();
        r
    }

    /// `Py_ReprEnter`: false when `v` is already being printed further out (the caller
    /// then prints `[...]`); otherwise marks it until [`Vm::repr_leave`].
    pub fn repr_enter(&mut self, v: &Value) -> bool {
        let Some(id) = container_id(v) else {
            return true;
        };
        if self.repr_active.contains(&id) {
            return false;
        }
        self.repr_active.push(id);
        true
    }

    pub fn repr_leave(&mut self, v: &Value) {
        if let Some(id) = container_id(v) {
            if let Some(at) = self.repr_active.iter().rposition(|&x| x == id) {
                self.repr_active.remove(at);
            }
        }
    }
}
