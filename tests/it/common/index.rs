//! The index objects the interpreter passes to a native's `getitem`: a slice
//! (`start:stop:step`) and the ellipsis, for tests that drive a binding through a
//! `StandIn` rather than a session.

use std::any::Any;

use mirror_kernel::lang::{Ctx, Object, PyResult, Value};

/// `start:stop:step`, as the interpreter's slice objects answer attribute lookups.
pub struct Slice(pub Option<i64>, pub Option<i64>, pub Option<i64>);
impl Object for Slice {
    fn type_name(&self) -> String {
        "slice".into()
    }
    fn getattr(&self, _t: &Value, name: &str, _c: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let v = match name {
            "start" => self.0,
            "stop" => self.1,
            _ => self.2,
        };
        Ok(Some(v.map_or(Value::None, Value::Int)))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
pub struct Ellipsis;
impl Object for Ellipsis {
    fn type_name(&self) -> String {
        "ellipsis".into()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
