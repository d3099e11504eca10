//! Bounds on recursion, so that no input recurses on the Rust stack without limit. Three
//! things recurse on a depth a cell chooses: Python calls, walks of nested values (repr,
//! comparison, hashing, pretty printing) and the evaluation of deeply nested expressions.
//! They share CPython's counter (`Vm::depth`, bounded by [`RECURSION_LIMIT`]) and its
//! wording (`RecursionError: maximum recursion depth exceeded in comparison`, `... while
//! getting the repr of an object`); a Python call also checks the Rust stack itself, since
//! the stack a call takes depends on the expressions it evaluates. A value that contains
//! itself is printed as CPython prints it (`[...]`, `{...}`): the containers being printed
//! are tracked as `Py_ReprEnter` does. Nesting in the source is bounded by the converter
//! (`convert::MAX_NESTING`), and dropping deep values by the trashcan (`trashcan`).

use super::exc::{PyErr, PyResult};
use super::value::Value;
use super::vm::Vm;

pub use super::vm::RECURSION_LIMIT;

/// What a Python call leaves free on the Rust stack at least: the evaluator's frames
/// between two calls (an expression nested up to the converter's bound, a repr or a
/// comparison of nested values up to the recursion limit) fit in it with room to spare.
const STACK_MARGIN: usize = 16 << 20;

/// CPython's `RecursionError`, with the context CPython names (`" in comparison"`).
pub fn recursion_error(context: &str) -> PyErr {
    PyErr::new(
        "RecursionError",
        format!("maximum recursion depth exceeded{context}"),
    )
}

/// Whether the Rust stack still has room for another Python call.
#[inline]
pub fn stack_has_room() -> bool {
    stacker::remaining_stack().is_none_or(|left| left > STACK_MARGIN)
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
        if self.depth >= RECURSION_LIMIT || !stack_has_room() {
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
