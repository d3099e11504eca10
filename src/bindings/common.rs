//! What the numpy and tf bindings share, so that neither copies the other: the iterator
//! over items a binding has already computed (an array's rows, a shape's dimensions, a
//! tape's watched variables) and the reading of bound arguments.

use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;

use crate::lang::{Ctx, Object, PyResult, Value};

/// The `i`th of a native's bound arguments (`Args::bind`), `None` when not given.
pub fn arg(s: &[Option<Value>], i: usize) -> &Value {
    s.get(i).and_then(|v| v.as_ref()).unwrap_or(&Value::None)
}

/// A native iterator over precomputed items, named as the library it stands in for names
/// its iterator (numpy's `iterator`, Python's `list_iterator`).
pub struct ItemIter {
    type_name: &'static str,
    items: RefCell<VecDeque<Value>>,
}

impl ItemIter {
    /// An iterator that `type()` names `type_name`.
    pub fn value(type_name: &'static str, items: impl Into<VecDeque<Value>>) -> Value {
        Value::native(ItemIter {
            type_name,
            items: RefCell::new(items.into()),
        })
    }

    /// Python's `list_iterator` over `items`.
    pub fn list(items: Vec<Value>) -> Value {
        ItemIter::value("list_iterator", items)
    }
}

impl Object for ItemIter {
    fn type_name(&self) -> String {
        self.type_name.into()
    }
    fn iter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn next(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(self.items.borrow_mut().pop_front())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
