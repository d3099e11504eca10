//! Small helper objects: `staticmethod`/`classmethod`/`property` wrappers, the object
//! `super()` returns, and method references on builtin values (`"a".upper`).

use std::any::Any;

use crate::lang::values::object::Object;
use crate::lang::values::value::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum WrapKind {
    Static,
    ClassMethod,
    Property,
}

/// Whether `v` is a property object.
pub fn is_property(v: &Value) -> bool {
    v.downcast::<Wrapper>()
        .is_some_and(|w| w.kind == WrapKind::Property)
}

pub struct Wrapper {
    pub kind: WrapKind,
    pub func: Value,
    pub setter: std::cell::RefCell<Option<Value>>,
    /// A property's attribute name, learnt when a class body defines it (Python's
    /// `__set_name__`); one attached to a class later stays nameless, as in CPython.
    pub name: std::cell::RefCell<Option<String>>,
}

impl Object for Wrapper {
    fn type_name(&self) -> String {
        match self.kind {
            WrapKind::Static => "staticmethod",
            WrapKind::ClassMethod => "classmethod",
            WrapKind::Property => "property",
        }
        .into()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

pub struct Super {
    pub owner: Value,
    pub this: Value,
}

impl Object for Super {
    fn type_name(&self) -> String {
        "super".into()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `value.name` for a builtin value's method, called later with the value prepended.
pub struct MethodRef {
    pub this: Value,
    pub name: String,
}

impl Object for MethodRef {
    fn type_name(&self) -> String {
        "builtin_function_or_method".into()
    }
    fn repr(
        &self,
        _ctx: &mut dyn crate::lang::values::object::Ctx,
    ) -> crate::lang::values::exc::PyResult<String> {
        Ok(format!(
            "<built-in method {} of {} object>",
            self.name,
            self.this.type_name()
        ))
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const MethodRef as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
