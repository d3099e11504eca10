//! `operator`: Python's operators as functions (`add`, `mul`, `lt`, `getitem`, ...) and
//! the callables `itemgetter`, `attrgetter` and `methodcaller`, computed by the
//! interpreter's own operator rules so that they agree with `a + b` in a cell.

use std::any::Any;

use super::f;
use crate::bindings::common::arg;
use crate::lang::{Args, BinOp, CmpOp, Ctx, NativeModule, Object, PyErr, PyResult, Value};

/// An operator of two operands: arithmetic and bitwise, or a comparison.
#[derive(Clone, Copy)]
enum Op {
    Bin(BinOp),
    Cmp(CmpOp),
}

/// The two-operand functions: name, operator, and its symbol for the help text.
const BINARY: &[(&str, Op, &str)] = &[
    ("add", Op::Bin(BinOp::Add), "+"),
    ("sub", Op::Bin(BinOp::Sub), "-"),
    ("mul", Op::Bin(BinOp::Mul), "*"),
    ("truediv", Op::Bin(BinOp::Div), "/"),
    ("floordiv", Op::Bin(BinOp::FloorDiv), "//"),
    ("mod", Op::Bin(BinOp::Mod), "%"),
    ("pow", Op::Bin(BinOp::Pow), "**"),
    ("matmul", Op::Bin(BinOp::MatMul), "@"),
    ("and_", Op::Bin(BinOp::BitAnd), "&"),
    ("or_", Op::Bin(BinOp::BitOr), "|"),
    ("xor", Op::Bin(BinOp::BitXor), "^"),
    ("lshift", Op::Bin(BinOp::LShift), "<<"),
    ("rshift", Op::Bin(BinOp::RShift), ">>"),
    ("eq", Op::Cmp(CmpOp::Eq), "=="),
    ("ne", Op::Cmp(CmpOp::Ne), "!="),
    ("lt", Op::Cmp(CmpOp::Lt), "<"),
    ("le", Op::Cmp(CmpOp::Le), "<="),
    ("gt", Op::Cmp(CmpOp::Gt), ">"),
    ("ge", Op::Cmp(CmpOp::Ge), ">="),
];

/// Exactly two positional arguments, as the C functions of `operator` take them.
fn two<'a>(a: &'a Args, name: &str) -> PyResult<(&'a Value, &'a Value)> {
    if !a.kw.is_empty() {
        return Err(PyErr::type_error(format!(
            "{name}() takes no keyword arguments"
        )));
    }
    match a.pos.as_slice() {
        [x, y] => Ok((x, y)),
        other => Err(PyErr::type_error(format!(
            "{name} expected 2 arguments, got {}",
            other.len()
        ))),
    }
}

/// `itemgetter`, `attrgetter` and `methodcaller`: what they fetch, and their repr.
enum Getter {
    Items(Vec<Value>),
    Attrs(Vec<String>),
    Method(String, Args),
}

struct GetterFn(Getter);

impl Object for GetterFn {
    fn type_name(&self) -> String {
        match self.0 {
            Getter::Items(_) => "itemgetter",
            Getter::Attrs(_) => "attrgetter",
            Getter::Method(..) => "methodcaller",
        }
        .into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let parts = match &self.0 {
            Getter::Items(keys) => keys
                .iter()
                .map(|k| ctx.repr(k))
                .collect::<PyResult<Vec<_>>>()?,
            Getter::Attrs(names) => names.iter().map(|n| crate::lang::str_repr(n)).collect(),
            Getter::Method(name, args) => {
                let mut p = vec![crate::lang::str_repr(name)];
                for v in &args.pos {
                    p.push(ctx.repr(v)?);
                }
                for (k, v) in &args.kw {
                    p.push(format!("{k}={}", ctx.repr(v)?));
                }
                p
            }
        };
        Ok(format!(
            "operator.{}({})",
            self.type_name(),
            parts.join(", ")
        ))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let name = self.type_name();
        let obj = match args.pos.as_slice() {
            [o] if args.kw.is_empty() => o.clone(),
            _ if !args.kw.is_empty() => {
                return Err(PyErr::type_error(format!(
                    "{name}() takes no keyword arguments"
                )))
            }
            other => {
                return Err(PyErr::type_error(format!(
                    "{name} expected 1 argument, got {}",
                    other.len()
                )))
            }
        };
        match &self.0 {
            Getter::Items(keys) => {
                let got = keys
                    .iter()
                    .map(|k| ctx.getitem(&obj, k))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(one_or_tuple(got))
            }
            Getter::Attrs(names) => {
                let mut got = vec![];
                for n in names {
                    let mut v = obj.clone();
                    for part in n.split('.') {
                        v = ctx.getattr(&v, part)?;
                    }
                    got.push(v);
                }
                Ok(one_or_tuple(got))
            }
            Getter::Method(name, a) => {
                let m = ctx.getattr(&obj, name)?;
                ctx.call(&m, a.clone())
            }
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn one_or_tuple(mut got: Vec<Value>) -> Value {
    if got.len() == 1 {
        got.remove(0)
    } else {
        Value::tuple(got)
    }
}

pub fn module() -> Value {
    let mut m = NativeModule::new(
        "operator",
        "Operator interface: functions corresponding to the intrinsic operators of Python.",
    );
    for (name, op, sym) in BINARY {
        let (name, op) = (*name, *op);
        m = m.with(
            name,
            f(
                name,
                &format!("{name}(a, b, /)\nSame as a {sym} b."),
                move |a, ctx| {
                    let (x, y) = two(a, name)?;
                    match op {
                        Op::Bin(op) => ctx.binop(op, x, y),
                        Op::Cmp(op) => ctx.compare(op, x, y),
                    }
                },
            ),
        );
    }
    m.with("concat", f("concat", "concat(a, b, /)\nSame as a + b, for a and b sequences.", |a, ctx| {
        let (x, y) = two(a, "concat")?;
        if matches!(x, Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::None) {
            return Err(PyErr::type_error(format!("'{}' object can't be concatenated", x.type_name())));
        }
        ctx.binop(BinOp::Add, x, y)
    }))
    .with("getitem", f("getitem", "getitem(a, b, /)\nSame as a[b].", |a, ctx| {
        let (x, y) = two(a, "getitem")?;
        ctx.getitem(x, y)
    }))
    .with("contains", f("contains", "contains(a, b, /)\nSame as b in a (note reversed operands).", |a, ctx| {
        let (x, y) = two(a, "contains")?;
        Ok(Value::Bool(ctx.contains(x, y)?))
    }))
    .with("not_", f("not_", "not_(a, /)\nSame as not a.", |a, ctx| {
        let s = a.bind("not_", &["a"], 1)?;
        Ok(Value::Bool(!ctx.truthy(arg(&s, 0))?))
    }))
    .with("truth", f("truth", "truth(a, /)\nReturn True if a is true, False otherwise.", |a, ctx| {
        let s = a.bind("truth", &["a"], 1)?;
        Ok(Value::Bool(ctx.truthy(arg(&s, 0))?))
    }))
    .with("is_", f("is_", "is_(a, b, /)\nSame as a is b.", |a, _| {
        let (x, y) = two(a, "is_")?;
        Ok(Value::Bool(x.is(y)))
    }))
    .with("is_not", f("is_not", "is_not(a, b, /)\nSame as a is not b.", |a, _| {
        let (x, y) = two(a, "is_not")?;
        Ok(Value::Bool(!x.is(y)))
    }))
    .with("itemgetter", f("itemgetter", "itemgetter(item, ...)\nReturn a callable object that fetches the given item(s) from its operand.", |a, _| {
        if a.pos.is_empty() {
            return Err(PyErr::type_error("itemgetter expected 1 argument, got 0"));
        }
        Ok(Value::native(GetterFn(Getter::Items(a.pos.clone()))))
    }))
    .with("attrgetter", f("attrgetter", "attrgetter(attr, ...)\nReturn a callable object that fetches the given attribute(s) from its operand.", |a, _| {
        if a.pos.is_empty() {
            return Err(PyErr::type_error("attrgetter expected 1 argument, got 0"));
        }
        let names = a.pos.iter().map(|v| match v {
            Value::Str(s) => Ok(s.to_string()),
            _ => Err(PyErr::type_error("attribute name must be a string")),
        }).collect::<PyResult<Vec<_>>>()?;
        Ok(Value::native(GetterFn(Getter::Attrs(names))))
    }))
    .with("methodcaller", f("methodcaller", "methodcaller(name, /, *args, **kwargs)\nReturn a callable object that calls the given method on its operand.", |a, _| {
        let name = match a.pos.first() {
            Some(Value::Str(s)) => s.to_string(),
            Some(_) => return Err(PyErr::type_error("method name must be a string")),
            None => return Err(PyErr::type_error("methodcaller needs at least one argument, the method name")),
        };
        let rest = Args { pos: a.pos[1..].to_vec(), kw: a.kw.clone() };
        Ok(Value::native(GetterFn(Getter::Method(name, rest))))
    }))
    .into_value()
}
