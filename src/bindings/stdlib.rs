//! The `stdlib` binding (being built).
use crate::lang::{Ctx, PyErr, PyResult, Value};

pub fn module(_name: &str, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    Err(PyErr::new("ModuleNotFoundError", "not yet available"))
}
