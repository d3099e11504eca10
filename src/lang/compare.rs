//! Comparisons: numbers across int/float/bool, strings, lexicographic sequences, dicts,
//! sets, then user `__eq__`/`__lt__`/... and native `compare`, as CPython orders them.

use super::exc::{PyErr, PyResult};
use super::object::CmpOp;
use super::runtime::{Instance, Set};
use super::value::Value;
use super::vm::Vm;

impl Vm<'_> {
    pub fn rich_compare(&mut self, op: CmpOp, a: &Value, b: &Value) -> PyResult<Value> {
        use Value::{Bool, Dict, Float, Int, List, Str, Tuple};
        let ord = match (a, b) {
            (Int(x), Int(y)) => Some(x.cmp(y)),
            (Int(_) | Float(_) | Bool(_), Int(_) | Float(_) | Bool(_)) => {
                let (x, y) = (a.as_float()?, b.as_float()?);
                match x.partial_cmp(&y) {
                    Some(o) => Some(o),
                    None => return Ok(Bool(op == CmpOp::Ne)),
                }
            }
            (Str(x), Str(y)) => Some(x.cmp(y)),
            (List(_), List(_)) | (Tuple(_), Tuple(_)) => {
                let (x, y) = (
                    a.as_seq().unwrap_or_default(),
                    b.as_seq().unwrap_or_default(),
                );
                return self.seq_compare(op, &x, &y);
            }
            _ => None,
        };
        if let Some(o) = ord {
            use std::cmp::Ordering::*;
            return Ok(Bool(match op {
                CmpOp::Eq => o == Equal,
                CmpOp::Ne => o != Equal,
                CmpOp::Lt => o == Less,
                CmpOp::Le => o != Greater,
                CmpOp::Gt => o == Greater,
                CmpOp::Ge => o != Less,
            }));
        }
        if let (Dict(x), Dict(y)) = (a, b) {
            if matches!(op, CmpOp::Eq | CmpOp::Ne) {
                let eq = self.dict_eq(&x.borrow().clone(), &y.borrow().clone())?;
                return Ok(Bool(eq == (op == CmpOp::Eq)));
            }
        }
        if let (Some(x), Some(y)) = (a.downcast::<Set>(), b.downcast::<Set>()) {
            let xs = x.items.borrow();
            let ys = y.items.borrow();
            let sub = xs.keys().all(|k| ys.contains_key(k));
            let sup = ys.keys().all(|k| xs.contains_key(k));
            return Ok(Bool(match op {
                CmpOp::Eq => sub && sup,
                CmpOp::Ne => !(sub && sup),
                CmpOp::Le => sub,
                CmpOp::Lt => sub && !sup,
                CmpOp::Ge => sup,
                CmpOp::Gt => sup && !sub,
            }));
        }
        let (name, rname) = match op {
            CmpOp::Eq => ("__eq__", "__eq__"),
            CmpOp::Ne => ("__ne__", "__ne__"),
            CmpOp::Lt => ("__lt__", "__gt__"),
            CmpOp::Le => ("__le__", "__ge__"),
            CmpOp::Gt => ("__gt__", "__lt__"),
            CmpOp::Ge => ("__ge__", "__le__"),
        };
        if let Some(v) = self.user_binop(a, name, b)? {
            return Ok(v);
        }
        if let Value::Native(o) = a {
            let o = o.clone();
            if let Some(v) = o.compare(op, b, self)? {
                return Ok(v);
            }
        }
        if let Some(v) = self.user_binop(b, rname, a)? {
            return Ok(v);
        }
        if op == CmpOp::Ne && a.downcast::<Instance>().is_some() {
            if let Some(v) = self.user_binop(a, "__eq__", b)? {
                return Ok(Bool(!self.truthy(&v)?));
            }
        }
        if let (Some(x), Some(y)) = (
            a.downcast::<super::runtime::Range>(),
            b.downcast::<super::runtime::Range>(),
        ) {
            let same = (x.start, x.stop, x.step) == (y.start, y.stop, y.step);
            return Ok(Bool(same == (op == CmpOp::Eq)));
        }
        match op {
            CmpOp::Eq => Ok(Bool(a.is(b))),
            CmpOp::Ne => Ok(Bool(!a.is(b))),
            _ => {
                let sym = match op {
                    CmpOp::Lt => "<",
                    CmpOp::Le => "<=",
                    CmpOp::Gt => ">",
                    _ => ">=",
                };
                Err(PyErr::type_error(format!(
                    "'{sym}' not supported between instances of '{}' and '{}'",
                    a.type_name(),
                    b.type_name()
                )))
            }
        }
    }

    fn seq_compare(&mut self, op: CmpOp, x: &[Value], y: &[Value]) -> PyResult<Value> {
        for (a, b) in x.iter().zip(y.iter()) {
            if !self.eq(a, b)? {
                if op == CmpOp::Eq {
                    return Ok(Value::Bool(false));
                }
                if op == CmpOp::Ne {
                    return Ok(Value::Bool(true));
                }
                return self.rich_compare(op, a, b);
            }
        }
        let (a, b) = (x.len(), y.len());
        Ok(Value::Bool(match op {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }))
    }

    fn dict_eq(&mut self, x: &super::value::Dict, y: &super::value::Dict) -> PyResult<bool> {
        if x.len() != y.len() {
            return Ok(false);
        }
        for (k, v) in x.items() {
            match y.get(k)? {
                Some(w) => {
                    if !self.eq(v, &w)? {
                        return Ok(false);
                    }
                }
                None => return Ok(false),
            }
        }
        Ok(true)
    }
}
