//! A read-only record with named fields that is also a tuple, as CPython's named tuples
//! and struct sequences are (`shutil.disk_usage`'s `usage(total=..., used=..., free=...)`,
//! `collections.namedtuple`'s instances): fields read by name or index, unpacking, `len`,
//! equality with tuples, `_asdict`, `_replace`, and its repr.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use crate::bindings::common::ItemIter;
use crate::lang::{CmpOp, Ctx, Dict, HashKey, NativeFn, Object, PyErr, PyResult, Value};

/// The position an integer index names in a sequence of `len` items (negative ones count
/// from the end), or the sequence's own `TypeError`/`IndexError` texts.
pub fn position(
    key: &Value,
    len: usize,
    out_of_range: &str,
    not_int: impl FnOnce(&str) -> String,
) -> PyResult<usize> {
    let i = match key {
        Value::Int(_) | Value::Bool(_) => key.as_int()?,
        other => return Err(PyErr::type_error(not_int(&other.type_name()))),
    };
    let n = len as i64;
    let at = if i < 0 { i + n } else { i };
    if at < 0 || at >= n {
        return Err(PyErr::index_error(out_of_range));
    }
    Ok(at as usize)
}

pub struct Record {
    pub type_name: String,
    pub fields: Vec<String>,
    pub values: Vec<Value>,
}

impl Record {
    pub fn value(type_name: &str, fields: &[&str], values: Vec<Value>) -> Value {
        Value::native(Record {
            type_name: type_name.into(),
            fields: fields.iter().map(|f| f.to_string()).collect(),
            values,
        })
    }
}

impl Object for Record {
    fn type_name(&self) -> String {
        self.type_name.clone()
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.type_name.clone(), "tuple".into()]
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let mut parts = vec![];
        for (f, v) in self.fields.iter().zip(&self.values) {
            parts.push(format!("{f}={}", ctx.repr(v)?));
        }
        Ok(format!("{}({})", self.type_name, parts.join(", ")))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let me = this.clone();
        match name {
            "_fields" => {
                return Ok(Some(Value::tuple(
                    self.fields.iter().map(|f| Value::str(f)).collect(),
                )))
            }
            "_asdict" => {
                return Ok(Some(NativeFn::value(
                    "_asdict",
                    "_asdict()\nReturn a new dict which maps field names to their values.",
                    move |a, _| {
                        a.bind("_asdict", &[], 0)?;
                        let mut d = Dict::default();
                        if let Some(r) = me.downcast::<Record>() {
                            for (f, v) in r.fields.iter().zip(&r.values) {
                                d.insert_str(f, v.clone());
                            }
                        }
                        Ok(Value::Dict(Rc::new(RefCell::new(d))))
                    },
                )))
            }
            "_replace" => return Ok(Some(NativeFn::value(
                "_replace",
                "_replace(**kwds)\nReturn a new record replacing specified fields with new values.",
                move |a, _| {
                    let Some(r) = me.downcast::<Record>() else {
                        return Ok(Value::None);
                    };
                    let mut values = r.values.clone();
                    let mut unknown = vec![];
                    for (k, v) in &a.kw {
                        match r.fields.iter().position(|f| f == k) {
                            Some(i) => values[i] = v.clone(),
                            None => unknown.push(crate::lang::str_repr(k)),
                        }
                    }
                    if !unknown.is_empty() {
                        return Err(PyErr::value_error(format!(
                            "Got unexpected field names: [{}]",
                            unknown.join(", ")
                        )));
                    }
                    Ok(Value::native(Record {
                        type_name: r.type_name.clone(),
                        fields: r.fields.clone(),
                        values,
                    }))
                },
            ))),
            _ => {}
        }
        Ok(self
            .fields
            .iter()
            .position(|f| f == name)
            .and_then(|i| self.values.get(i).cloned()))
    }
    fn setattr(&self, _name: &str, _v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        Err(PyErr::attribute_error("can't set attribute"))
    }
    fn dir(&self) -> Vec<String> {
        let mut d = self.fields.clone();
        d.extend(["_fields", "_asdict", "_replace"].map(String::from));
        d
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        Ok(Some(self.values.len()))
    }
    fn getitem(&self, key: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let at = position(key, self.values.len(), "tuple index out of range", |t| {
            format!("tuple indices must be integers or slices, not {t}")
        })?;
        Ok(self.values[at].clone())
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(ItemIter::value("tuple_iterator", self.values.clone()))
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let theirs = match other {
            Value::Tuple(t) => t.to_vec(),
            _ => match other.downcast::<Record>() {
                Some(r) => r.values.clone(),
                None => return Ok(None),
            },
        };
        if !matches!(op, CmpOp::Eq | CmpOp::Ne) {
            return Ok(None);
        }
        // The fields this module's records hold are numbers and strings, whose equality is
        // their hash key's (`1 == 1.0 == True` included).
        let mut same = theirs.len() == self.values.len();
        for (a, b) in self.values.iter().zip(&theirs) {
            match (HashKey::of(a), HashKey::of(b)) {
                (Ok(x), Ok(y)) => same &= x == y,
                _ => return Ok(None),
            }
        }
        Ok(Some(Value::Bool(same == (op == CmpOp::Eq))))
    }
    fn hash(&self) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let key = HashKey::of(&Value::tuple(self.values.clone())).ok()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        Some(h.finish())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
