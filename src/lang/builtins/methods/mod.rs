//! Methods of the builtin types, reached through the `MethodRef` values `getattr` hands out
//! (`"a b".split`, `xs.append`): the dispatch on the receiver's type, the few methods of
//! `int` and `float`, and the argument helpers the files here share.

mod dict;
mod sequence;
mod set;
mod str;

use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::Set;
use crate::lang::values::value::Value;

/// The `i`th positional argument, if given.
pub(super) fn arg(a: &Args, i: usize) -> Option<&Value> {
    a.pos.get(i)
}

/// The `i`th positional argument of method `m`, which it requires.
pub(super) fn need<'a>(a: &'a Args, i: usize, m: &str) -> PyResult<&'a Value> {
    a.pos
        .get(i)
        .ok_or_else(|| PyErr::type_error(format!("{m}() missing required argument")))
}

pub(super) fn no_method(v: &Value, name: &str) -> PyErr {
    PyErr::attribute_error(format!(
        "'{}' object has no attribute '{name}'",
        v.type_name()
    ))
}

impl Vm<'_> {
    pub fn call_method(&mut self, this: &Value, name: &str, a: Args) -> PyResult<Value> {
        match this {
            Value::Str(s) => self.str_method(s, name, &a),
            Value::List(l) => self.list_method(this, l, name, a),
            Value::Tuple(t) => {
                let items = t.to_vec();
                self.seq_common(&items, name, &a, "tuple")
            }
            Value::Dict(d) => self.dict_method(d, name, a),
            Value::Int(i) => match name {
                "bit_length" => Ok(Value::Int(64 - i.unsigned_abs().leading_zeros() as i64)),
                "conjugate" => Ok(this.clone()),
                _ => Err(no_method(this, name)),
            },
            Value::Float(x) => match name {
                "is_integer" => Ok(Value::Bool(x.fract() == 0.0)),
                "conjugate" => Ok(this.clone()),
                _ => Err(no_method(this, name)),
            },
            _ => {
                if let Some(s) = this.downcast::<Set>() {
                    return self.set_method(this, s, name, a);
                }
                if let Some(g) = this.downcast::<crate::lang::eval::generator::Generator>() {
                    return self.generator_method(this, g, name, a);
                }
                let m = self.get_attr(this, name)?;
                self.call_value(&m, a)
            }
        }
    }
}
