//! Comparisons: numbers across int/float/bool, strings, lexicographic sequences, dicts,
//! sets, then user `__eq__`/`__lt__`/... and native `compare`, as CPython orders them.

use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::CmpOp;
use crate::lang::values::runtime::{DictView, Instance, Set};
use crate::lang::values::value::{Dict, Value};

/// What CPython's `RecursionError` says when a comparison nests too deeply.
const COMPARE_CONTEXT: &str = " in comparison";

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
                return self.nested(COMPARE_CONTEXT, |vm| vm.seq_compare(op, a, b));
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
                let eq = self.nested(COMPARE_CONTEXT, |vm| vm.dict_eq(x, y))?;
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
        if let (Some(xs), Some(ys)) = (set_members(a), set_members(b)) {
            if a.downcast::<Set>().is_none() || b.downcast::<Set>().is_none() {
                return self.view_compare(op, a, &xs, b, &ys);
            }
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
            a.downcast::<crate::lang::values::runtime::Range>(),
            b.downcast::<crate::lang::values::runtime::Range>(),
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

    /// A dict's keys or items view against another such view or a set: set comparisons,
    /// decided by membership as CPython's `dictview_richcompare` does (so items views with
    /// unhashable values compare too).
    fn view_compare(
        &mut self,
        op: CmpOp,
        a: &Value,
        xs: &[Value],
        b: &Value,
        ys: &[Value],
    ) -> PyResult<Value> {
        let mut sub = xs.len() <= ys.len();
        for x in xs {
            if !sub {
                break;
            }
            sub = self.contains(b, x)?;
        }
        let mut sup = ys.len() <= xs.len();
        for y in ys {
            if !sup {
                break;
            }
            sup = self.contains(a, y)?;
        }
        Ok(Value::Bool(match op {
            CmpOp::Eq => sub && sup,
            CmpOp::Ne => !(sub && sup),
            CmpOp::Le => sub,
            CmpOp::Lt => sub && xs.len() < ys.len(),
            CmpOp::Ge => sup,
            CmpOp::Gt => sup && xs.len() > ys.len(),
        }))
    }

    /// `PyObject_RichCompareBool(a, b, Py_EQ)`: identical values are equal without being
    /// compared, which is what lets a list that contains itself equal itself.
    pub fn eq_or_same(&mut self, a: &Value, b: &Value) -> PyResult<bool> {
        if a.is(b) && !matches!(a, Value::Float(_)) {
            return Ok(true);
        }
        self.eq(a, b)
    }

    /// Two lists or two tuples, as CPython's `list_richcompare`: lengths first for `==`
    /// and `!=`, then the first pair of items that differ decides. Items are read by index,
    /// since an item's `__eq__` may change either sequence.
    fn seq_compare(&mut self, op: CmpOp, a: &Value, b: &Value) -> PyResult<Value> {
        let item = |v: &Value, i: usize| match v {
            Value::List(l) => l.borrow().get(i).cloned(),
            Value::Tuple(t) => t.get(i).cloned(),
            _ => None,
        };
        let len = |v: &Value| match v {
            Value::List(l) => l.borrow().len(),
            Value::Tuple(t) => t.len(),
            _ => 0,
        };
        if matches!(op, CmpOp::Eq | CmpOp::Ne) && len(a) != len(b) {
            return Ok(Value::Bool(op == CmpOp::Ne));
        }
        let mut i = 0;
        while let (Some(x), Some(y)) = (item(a, i), item(b, i)) {
            if !self.eq_or_same(&x, &y)? {
                return match op {
                    CmpOp::Eq => Ok(Value::Bool(false)),
                    CmpOp::Ne => Ok(Value::Bool(true)),
                    _ => self.rich_compare(op, &x, &y),
                };
            }
            i += 1;
            if i % 4096 == 0 {
                crate::lang::values::object::Ctx::check_interrupt(self)?;
            }
        }
        let (a, b) = (len(a), len(b));
        Ok(Value::Bool(match op {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }))
    }

    fn dict_eq(
        &mut self,
        x: &std::rc::Rc<std::cell::RefCell<Dict>>,
        y: &std::rc::Rc<std::cell::RefCell<Dict>>,
    ) -> PyResult<bool> {
        if x.borrow().len() != y.borrow().len() {
            return Ok(false);
        }
        let mut i = 0;
        loop {
            let Some((k, v)) = x
                .borrow()
                .map
                .get_index(i)
                .map(|(_, (k, v))| (k.clone(), v.clone()))
            else {
                return Ok(true);
            };
            let w = y.borrow().get(&k)?;
            match w {
                Some(w) => {
                    if !self.eq_or_same(&v, &w)? {
                        return Ok(false);
                    }
                }
                None => return Ok(false),
            }
            i += 1;
            if i % 4096 == 0 {
                crate::lang::values::object::Ctx::check_interrupt(self)?;
            }
        }
    }
}

/// The members of a set or of a dict's keys or items view (values views are not
/// set-like); `None` for anything else.
fn set_members(v: &Value) -> Option<Vec<Value>> {
    if let Some(view) = v.downcast::<DictView>() {
        return (view.kind != "values").then(|| view.values());
    }
    v.downcast::<Set>()
        .map(|s| s.items.borrow().values().cloned().collect())
}
