//! `typing`: the names annotations use (`List`, `Dict`, `Tuple`, `Set`, `Optional`,
//! `Union`, `Any`, `Callable`, `Sequence`, `Iterable`, `ClassVar`, `Final`, ...), subscriptable with CPython
//! 3.11's reprs (`typing.Dict[str, int]`, `typing.Optional[int]`), `Union`'s flattening
//! and de-duplication, and its TypeError texts for wrong arity or subscripting twice;
//! `cast`, `get_args` and `TYPE_CHECKING`. Forms only describe types: nothing checks them.

use std::any::Any as StdAny;

use super::f;
use crate::lang::{Args, CmpOp, Ctx, NativeModule, Object, PyErr, PyResult, Value};

/// What a bare form accepts inside `[...]`.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `List[T]`, `Dict[K, V]`: exactly this many parameters; `instead` names the builtin
    /// that calling the form points to.
    Generic(usize, Option<&'static str>),
    /// `Tuple[T, ...]`, `Tuple[()]`: any number.
    Tuple,
    /// `Callable[[A, B], R]`, `Callable[..., R]`.
    Callable,
    Union,
    Optional,
    Any,
}

/// A `typing` form, bare (`args` is `None`) or subscripted.
struct Form {
    name: &'static str,
    kind: Kind,
    args: Option<Vec<Value>>,
}

/// The forms, by name.
const FORMS: &[(&str, Kind)] = &[
    ("List", Kind::Generic(1, Some("list"))),
    ("Dict", Kind::Generic(2, Some("dict"))),
    ("Set", Kind::Generic(1, Some("set"))),
    ("FrozenSet", Kind::Generic(1, Some("frozenset"))),
    ("Type", Kind::Generic(1, Some("type"))),
    ("Sequence", Kind::Generic(1, None)),
    ("Iterable", Kind::Generic(1, None)),
    ("Iterator", Kind::Generic(1, None)),
    ("Mapping", Kind::Generic(2, None)),
    ("Tuple", Kind::Tuple),
    ("Callable", Kind::Callable),
    ("Union", Kind::Union),
    ("Optional", Kind::Optional),
    ("Any", Kind::Any),
    ("ClassVar", Kind::Generic(1, None)),
    ("Final", Kind::Generic(1, None)),
];

fn form(name: &'static str, kind: Kind, args: Vec<Value>) -> Value {
    Value::native(Form {
        name,
        kind,
        args: Some(args),
    })
}

/// How typing shows a parameter: a class by its (module-qualified, unless builtin) name,
/// `None` as `NoneType`, `...` as itself, a string as a forward reference.
fn arg_repr(v: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
    match v {
        Value::None => return Ok("NoneType".into()),
        Value::Str(_) => return Ok(format!("ForwardRef({})", ctx.repr(v)?)),
        Value::List(l) => {
            let items = l.borrow().clone();
            let parts = items
                .iter()
                .map(|x| arg_repr(x, ctx))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(format!("[{}]", parts.join(", ")));
        }
        _ => {}
    }
    let r = ctx.repr(v)?;
    Ok(
        match r
            .strip_prefix("<class '")
            .and_then(|s| s.strip_suffix("'>"))
        {
            Some(name) => name.to_string(),
            None if r == "Ellipsis" => "...".into(),
            None => r,
        },
    )
}

/// The parameters `Union[...]` keeps: nested unions flattened, repeats dropped, in order.
fn union_args(key: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
    let given = match key {
        Value::Tuple(t) => t.to_vec(),
        v => vec![v.clone()],
    };
    let mut out: Vec<Value> = vec![];
    for v in given {
        let flat = match v.downcast::<Form>() {
            Some(Form {
                kind: Kind::Union,
                args: Some(a),
                ..
            }) => a.clone(),
            _ => vec![v],
        };
        for x in flat {
            let mut seen = false;
            for o in &out {
                if same(o, &x, ctx)? {
                    seen = true;
                    break;
                }
            }
            if !seen {
                out.push(x);
            }
        }
    }
    Ok(out)
}

fn same(a: &Value, b: &Value, ctx: &mut dyn Ctx) -> PyResult<bool> {
    let eq = ctx.compare(CmpOp::Eq, a, b)?;
    ctx.truthy(&eq)
}

/// `Union[...]` over `args`: one parameter is the parameter itself.
fn union_of(args: Vec<Value>) -> PyResult<Value> {
    match args.len() {
        0 => Err(PyErr::type_error("Cannot take a Union of no types.")),
        1 => Ok(args.into_iter().next().unwrap_or(Value::None)),
        _ => Ok(form("Union", Kind::Union, args)),
    }
}

impl Form {
    fn subscript(&self, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        if self.args.is_some() {
            return Err(PyErr::type_error(format!(
                "{} is not a generic class",
                self.repr(ctx)?
            )));
        }
        let items = match key {
            Value::Tuple(t) => t.to_vec(),
            v => vec![v.clone()],
        };
        match self.kind {
            Kind::Any => Err(PyErr::type_error("type 'Any' is not subscriptable")),
            Kind::Generic(n, _) => {
                if items.len() != n {
                    let which = if items.len() < n { "few" } else { "many" };
                    return Err(PyErr::type_error(format!(
                        "Too {which} arguments for typing.{}; actual {}, expected {n}",
                        self.name,
                        items.len()
                    )));
                }
                Ok(form(self.name, self.kind, items))
            }
            Kind::Tuple => Ok(form(self.name, self.kind, items)),
            Kind::Callable => {
                let bad =
                    || PyErr::type_error("Callable must be used as Callable[[arg, ...], result].");
                let [params, result] = items.as_slice() else {
                    return Err(bad());
                };
                Ok(form(
                    self.name,
                    self.kind,
                    vec![params.clone(), result.clone()],
                ))
            }
            Kind::Union => union_of(union_args(key, ctx)?),
            Kind::Optional => {
                if let Value::Tuple(_) = key {
                    return Err(PyErr::type_error(format!(
                        "typing.Optional requires a single type. Got {}.",
                        ctx.repr(key)?
                    )));
                }
                union_of(union_args(
                    &Value::tuple(vec![key.clone(), Value::None]),
                    ctx,
                )?)
            }
        }
    }
}

impl Object for Form {
    fn type_name(&self) -> String {
        match (self.kind, &self.args) {
            (Kind::Any, _) => "_AnyMeta",
            (Kind::Union | Kind::Optional, None) => "_SpecialForm",
            (Kind::Union, Some(_)) => "_UnionGenericAlias",
            (Kind::Callable, Some(_)) => "_CallableGenericAlias",
            (_, Some(_)) => "_GenericAlias",
            (_, None) => "_SpecialGenericAlias",
        }
        .into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let Some(args) = &self.args else {
            return Ok(format!("typing.{}", self.name));
        };
        let shown = |vs: &[Value], ctx: &mut dyn Ctx| -> PyResult<String> {
            let parts = vs
                .iter()
                .map(|v| arg_repr(v, ctx))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(parts.join(", "))
        };
        Ok(match (self.kind, args.as_slice()) {
            (Kind::Union, [x, Value::None]) | (Kind::Union, [Value::None, x]) => {
                format!("typing.Optional[{}]", arg_repr(x, ctx)?)
            }
            (Kind::Tuple, []) => "typing.Tuple[()]".into(),
            (Kind::Callable, [params, result]) => {
                let params = match params {
                    Value::List(l) => {
                        let items = l.borrow().clone();
                        format!("[{}]", shown(&items, ctx)?)
                    }
                    Value::Tuple(t) if t.is_empty() => "[]".into(),
                    v => match arg_repr(v, ctx)? {
                        dots if dots == "..." => dots,
                        one => format!("[{one}]"),
                    },
                };
                format!("typing.Callable[{params}, {}]", arg_repr(result, ctx)?)
            }
            (_, vs) => format!("typing.{}[{}]", self.name, shown(vs, ctx)?),
        })
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match (name, &self.args) {
            ("__args__", Some(a)) => Some(Value::tuple(a.clone())),
            ("_name", _) => Some(Value::str(self.name)),
            _ => None,
        })
    }
    fn getitem(&self, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        self.subscript(key, ctx)
    }
    fn call(&self, _this: &Value, _args: Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Err(PyErr::type_error(match self.kind {
            Kind::Any => "Any cannot be instantiated".to_string(),
            Kind::Generic(_, Some(b)) => {
                format!(
                    "Type {} cannot be instantiated; use {b}() instead",
                    self.name
                )
            }
            _ => format!("Cannot instantiate typing.{}", self.name),
        }))
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let Some(o) = other.downcast::<Form>() else {
            return Ok(None);
        };
        if !matches!(op, CmpOp::Eq | CmpOp::Ne) {
            return Ok(None);
        }
        let mut eq = o.name == self.name;
        match (&self.args, &o.args) {
            (Some(a), Some(b)) if eq && a.len() == b.len() => {
                // A union is a set of types; other forms compare in order.
                for (x, y) in a.iter().zip(b) {
                    let found = if self.kind == Kind::Union {
                        let mut any = false;
                        for y in b {
                            any = any || same(x, y, ctx)?;
                        }
                        any
                    } else {
                        same(x, y, ctx)?
                    };
                    eq = eq && found;
                }
            }
            (None, None) => {}
            _ => eq = false,
        }
        Ok(Some(Value::Bool(eq == (op == CmpOp::Eq))))
    }
    fn hash(&self) -> Option<u64> {
        // Equal forms share a name; the name alone keeps hashing consistent with `==`.
        Some(
            self.name
                .bytes()
                .fold(7u64, |h, b| h.wrapping_mul(31) ^ b as u64),
        )
    }
    fn as_any(&self) -> &dyn StdAny {
        self
    }
}

pub fn module() -> Value {
    let m = NativeModule::new("typing", "Support for type hints.");
    for (name, kind) in FORMS {
        m.set(
            name,
            Value::native(Form {
                name,
                kind: *kind,
                args: None,
            }),
        );
    }
    m.set("TYPE_CHECKING", Value::Bool(false));
    m.set(
        "cast",
        f(
            "cast",
            "cast(typ, val)\nCast a value to a type (returns it unchanged).",
            |a, _| {
                let s = a.bind("cast", &["typ", "val"], 2)?;
                Ok(s[1].clone().unwrap_or(Value::None))
            },
        ),
    );
    m.set(
        "get_args",
        f(
            "get_args",
            "get_args(tp)\nThe parameters of a subscripted form.",
            |a, _| {
                let s = a.bind("get_args", &["tp"], 1)?;
                let args = s[0]
                    .as_ref()
                    .and_then(|v| v.downcast::<Form>())
                    .and_then(|f| f.args.clone())
                    .unwrap_or_default();
                Ok(Value::tuple(args))
            },
        ),
    );
    m.into_value()
}
