//! `Lazy`: an iterator that computes each item when asked, through a step closure that
//! pulls from its sources via `Ctx`. The builtins `zip`, `map`, `filter` and `enumerate`
//! and the `itertools` module build on it, so endless sources (`itertools.count()`) work
//! under them as in CPython. It owns no iteration rule of its own beyond "once exhausted,
//! stays exhausted" and refusing to re-enter a running step.

use std::any::Any;
use std::cell::{Cell, RefCell};

use super::exc::{PyErr, PyResult};
use super::object::{Ctx, Object};
use super::value::Value;

type Step = dyn FnMut(&mut dyn Ctx) -> PyResult<Option<Value>>;

/// One lazy iterator: `step` yields the next item or `None` when it is exhausted.
pub struct Lazy {
    type_name: &'static str,
    /// The module shown in the repr (`itertools`); `None` for builtins.
    module: Option<&'static str>,
    step: RefCell<Box<Step>>,
    done: Cell<bool>,
}

impl Lazy {
    /// A lazy iterator of type `type_name` (from `module`, or a builtin for `None`).
    pub fn value(
        module: Option<&'static str>,
        type_name: &'static str,
        step: impl FnMut(&mut dyn Ctx) -> PyResult<Option<Value>> + 'static,
    ) -> Value {
        Value::native(Lazy {
            type_name,
            module,
            step: RefCell::new(Box::new(step)),
            done: Cell::new(false),
        })
    }
}

impl Object for Lazy {
    fn type_name(&self) -> String {
        self.type_name.into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(match self.module {
            Some(m) => format!("<{m}.{} object>", self.type_name),
            None => format!(
                "<{} object at 0x{:x}>",
                self.type_name, self as *const Lazy as usize
            ),
        })
    }
    fn iter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn next(&self, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if self.done.get() {
            return Ok(None);
        }
        // A step that reaches this iterator again (through a user function) would need
        // it twice at once; Python calls that a running generator.
        let mut step = self
            .step
            .try_borrow_mut()
            .map_err(|_| PyErr::value_error("generator already executing"))?;
        let item = step(ctx)?;
        if item.is_none() {
            self.done.set(true);
        }
        Ok(item)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
