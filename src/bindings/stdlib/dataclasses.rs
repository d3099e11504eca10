//! `dataclasses`: the `@dataclass` decorator (with or without arguments), `field()`,
//! `Field`, `fields()`, `asdict()`, `astuple()`, `replace()`, `is_dataclass()`, `MISSING`
//! and `FrozenInstanceError`, with CPython 3.11's rules and messages. The decorator reads the
//! class's own `__annotations__` (recorded by the interpreter for class bodies), gathers the
//! fields of dataclass bases first, and adds natives for `__init__`, `__repr__`, `__eq__`,
//! the ordering methods and `__match_args__` where the class does not define them itself,
//! so an instance prints, compares and binds its arguments as CPython's would.
//!
//! `frozen=True`, `unsafe_hash=True` and `slots=True` are refused with a
//! `NotImplementedError`: the interpreter's classes cannot override `__setattr__` or feed a
//! user `__hash__` into dict keys, so those promises could not be kept. `InitVar` and
//! `KW_ONLY` are left out for the same reason as any name this module cannot honour.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use super::f;
use crate::lang::{
    class_own_attr, class_own_items, is_user_class, not_implemented, remove_class_attr, Args,
    CmpOp, Ctx, HashKey, NativeModule, Object, PyErr, PyResult, Value,
};

/// The session's one `MISSING` sentinel, so `f.default is MISSING` holds across imports.
#[derive(Default)]
struct DataclassState {
    missing: Option<Value>,
    /// The instances whose `__repr__` is running, so a cycle prints `...` as CPython's
    /// `recursive_repr` makes it.
    repr_active: Vec<usize>,
}

/// `dataclasses.MISSING`: "no default given".
struct Missing;

impl Object for Missing {
    fn type_name(&self) -> String {
        "_MISSING_TYPE".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<dataclasses._MISSING_TYPE object at {:#x}>",
            self as *const _ as usize
        ))
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const _ as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn missing(ctx: &mut dyn Ctx) -> Value {
    let st = ctx.state().get::<DataclassState>();
    st.missing
        .get_or_insert_with(|| Value::native(Missing))
        .clone()
}

fn is_missing(v: &Value) -> bool {
    v.downcast::<Missing>().is_some()
}

/// One field, as `field()` describes it and the decorator completes it (name and type).
struct Field {
    name: RefCell<Option<String>>,
    type_: RefCell<Option<Value>>,
    default: Option<Value>,
    default_factory: Option<Value>,
    init: bool,
    repr: bool,
    /// `None`, `True` or `False`, as given.
    hash: Value,
    compare: bool,
    metadata: Value,
    /// `None` until the decorator settles it from its own `kw_only`.
    kw_only: RefCell<Option<bool>>,
}

impl Field {
    fn name(&self) -> String {
        self.name.borrow().clone().unwrap_or_default()
    }
}

impl Object for Field {
    fn type_name(&self) -> String {
        "Field".into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let m = missing(ctx);
        let show = |v: &Option<Value>, ctx: &mut dyn Ctx| match v {
            Some(v) => ctx.repr(v),
            None => ctx.repr(&m),
        };
        let name = match &*self.name.borrow() {
            Some(n) => format!("'{n}'"),
            None => "None".into(),
        };
        let ty = show(&self.type_.borrow().clone(), ctx)?;
        let ty = if self.type_.borrow().is_none() {
            "None".into()
        } else {
            ty
        };
        let kw_only = match *self.kw_only.borrow() {
            Some(b) => py_bool(b).into(),
            None => ctx.repr(&m)?,
        };
        Ok(format!(
            "Field(name={name},type={ty},default={},default_factory={},init={},repr={},\
             hash={},compare={},metadata=mappingproxy({}),kw_only={kw_only},_field_type=_FIELD)",
            show(&self.default, ctx)?,
            show(&self.default_factory, ctx)?,
            py_bool(self.init),
            py_bool(self.repr),
            ctx.repr(&self.hash)?,
            py_bool(self.compare),
            ctx.repr(&self.metadata)?,
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let m = missing(ctx);
        Ok(Some(match name {
            "name" => self
                .name
                .borrow()
                .as_deref()
                .map_or(Value::None, Value::str),
            "type" => self.type_.borrow().clone().unwrap_or(Value::None),
            "default" => self.default.clone().unwrap_or(m),
            "default_factory" => self.default_factory.clone().unwrap_or(m),
            "init" => Value::Bool(self.init),
            "repr" => Value::Bool(self.repr),
            "hash" => self.hash.clone(),
            "compare" => Value::Bool(self.compare),
            "metadata" => self.metadata.clone(),
            "kw_only" => self.kw_only.borrow().map_or(m, Value::Bool),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        FIELD_ATTRS.iter().map(|s| s.to_string()).collect()
    }
    /// A field stored on a class is data, not a method.
    fn bind_instance(&self, this: &Value, _instance: &Value) -> Option<Value> {
        Some(this.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

const FIELD_ATTRS: &[&str] = &[
    "compare",
    "default",
    "default_factory",
    "hash",
    "init",
    "kw_only",
    "metadata",
    "name",
    "repr",
    "type",
];

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// An argument that is absent or `MISSING`.
fn given(v: &Option<Value>) -> Option<Value> {
    v.clone().filter(|v| !is_missing(v))
}

fn flag(v: &Option<Value>, default: bool, ctx: &mut dyn Ctx) -> PyResult<bool> {
    match v {
        Some(v) => ctx.truthy(v),
        None => Ok(default),
    }
}

/// `field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, hash=None,
/// compare=True, metadata=None, kw_only=MISSING)`.
fn field(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if !a.pos.is_empty() {
        return Err(PyErr::type_error(format!(
            "field() takes 0 positional arguments but {} were given",
            a.pos.len()
        )));
    }
    let s = Args {
        pos: vec![],
        kw: a.kw.clone(),
    }
    .bind(
        "field",
        &[
            "default",
            "default_factory",
            "init",
            "repr",
            "hash",
            "compare",
            "metadata",
            "kw_only",
        ],
        0,
    )?;
    let default = given(&s[0]);
    let default_factory = given(&s[1]);
    if default.is_some() && default_factory.is_some() {
        return Err(PyErr::new(
            "ValueError",
            "cannot specify both default and default_factory",
        ));
    }
    let kw_only = match given(&s[7]) {
        Some(v) => Some(ctx.truthy(&v)?),
        None => None,
    };
    Ok(Value::native(Field {
        name: RefCell::new(None),
        type_: RefCell::new(None),
        default,
        default_factory,
        init: flag(&s[2], true, ctx)?,
        repr: flag(&s[3], true, ctx)?,
        hash: s[4].clone().unwrap_or(Value::None),
        compare: flag(&s[5], true, ctx)?,
        metadata: match &s[6] {
            Some(Value::None) | None => Value::dict_from(vec![]),
            Some(m) => m.clone(),
        },
        kw_only: RefCell::new(kw_only),
    }))
}

/// What the decorator was asked for.
struct Params {
    init: bool,
    repr: bool,
    eq: bool,
    order: bool,
    match_args: bool,
    kw_only: bool,
}

const PARAMS: &[&str] = &[
    "init",
    "repr",
    "eq",
    "order",
    "unsafe_hash",
    "frozen",
    "match_args",
    "kw_only",
    "slots",
    "weakref_slot",
];

/// `@dataclass`, `@dataclass(...)` and `dataclass(cls, ...)`.
fn dataclass(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if a.pos.len() > 1 {
        return Err(PyErr::type_error(format!(
            "dataclass() takes from 0 to 1 positional arguments but {} were given",
            a.pos.len()
        )));
    }
    let kw = Args {
        pos: vec![],
        kw: a.kw.clone(),
    };
    let s = kw.bind("dataclass", PARAMS, 0)?;
    for (i, why) in [
        (
            4,
            "unsafe_hash=True is not supported by this kernel: its classes cannot give dict \
             keys a __hash__ of their own",
        ),
        (
            5,
            "frozen=True is not supported by this kernel: its classes cannot override \
             __setattr__",
        ),
        (8, "slots=True is not supported by this kernel's classes"),
        (
            9,
            "weakref_slot=True is not supported by this kernel's classes",
        ),
    ] {
        if flag(&s[i], false, ctx)? {
            return Err(PyErr::new("NotImplementedError", why));
        }
    }
    let params = Rc::new(Params {
        init: flag(&s[0], true, ctx)?,
        repr: flag(&s[1], true, ctx)?,
        eq: flag(&s[2], true, ctx)?,
        order: flag(&s[3], false, ctx)?,
        match_args: flag(&s[6], true, ctx)?,
        kw_only: flag(&s[7], false, ctx)?,
    });
    match a.pos.first() {
        Some(cls) if !cls.is_none() => process(cls, &params, ctx),
        _ => Ok(f(
            "wrap",
            "wrap(cls)\nMakes cls a dataclass with the arguments given to dataclass().",
            move |a, ctx| {
                let s = a.bind("wrap", &["cls"], 1)?;
                process(s[0].as_ref().unwrap_or(&Value::None), &params, ctx)
            },
        )),
    }
}

/// The `Field` natives of a dataclass (or instance), in definition order.
fn class_fields(cls: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Vec<Value>>> {
    let Ok(Value::Dict(d)) = ctx.getattr(cls, "__dataclass_fields__") else {
        return Ok(None);
    };
    let values: Vec<Value> = d.borrow().items().map(|(_, v)| v.clone()).collect();
    Ok(Some(values))
}

fn as_field(v: &Value) -> Option<&Field> {
    v.downcast::<Field>()
}

/// Turns `cls` into a dataclass: gathers the fields, checks them, and adds the methods.
fn process(cls: &Value, params: &Rc<Params>, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if !is_user_class(cls) {
        return Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute '__dict__'",
            cls.type_name()
        )));
    }
    let class_name = ctx.getattr(cls, "__name__")?;
    let class_name = ctx.str(&class_name)?;
    // Fields of dataclass bases come first, the farthest base's first, as CPython walks
    // the MRO backwards.
    let mut bases = vec![];
    let mut b = ctx.getattr(cls, "__base__").unwrap_or(Value::None);
    while is_user_class(&b) {
        bases.push(b.clone());
        b = ctx.getattr(&b, "__base__").unwrap_or(Value::None);
    }
    let mut fields: Vec<Value> = vec![];
    for base in bases.iter().rev() {
        if let Some(Value::Dict(d)) = class_own_attr(base, "__dataclass_fields__") {
            for (_, fv) in d.borrow().items() {
                let Some(fld) = as_field(fv) else { continue };
                let name = fld.name();
                match fields
                    .iter()
                    .position(|x| as_field(x).is_some_and(|x| x.name() == name))
                {
                    Some(i) => fields[i] = fv.clone(),
                    None => fields.push(fv.clone()),
                }
            }
        }
    }
    let annotations: Vec<(String, Value)> = match class_own_attr(cls, "__annotations__") {
        Some(Value::Dict(d)) => d
            .borrow()
            .items()
            .map(|(k, v)| Ok((ctx.str(k)?, v.clone())))
            .collect::<PyResult<_>>()?,
        _ => vec![],
    };
    for (name, ty) in annotations {
        if ctx.repr(&ty)?.starts_with("typing.ClassVar") {
            continue;
        }
        let default = ctx.getattr(cls, &name).ok();
        let fv = match &default {
            Some(d) if as_field(d).is_some() => d.clone(),
            _ => Value::native(Field {
                name: RefCell::new(None),
                type_: RefCell::new(None),
                default: default.clone(),
                default_factory: None,
                init: true,
                repr: true,
                hash: Value::None,
                compare: true,
                metadata: Value::dict_from(vec![]),
                kw_only: RefCell::new(None),
            }),
        };
        let Some(fld) = as_field(&fv) else { continue };
        *fld.name.borrow_mut() = Some(name.clone());
        *fld.type_.borrow_mut() = Some(ty);
        if fld.kw_only.borrow().is_none() {
            *fld.kw_only.borrow_mut() = Some(params.kw_only);
        }
        if let Some(d) = &fld.default {
            // CPython refuses a default whose type is unhashable (list, dict, set): every
            // instance would share the one object.
            if !matches!(d, Value::Tuple(_)) && HashKey::of(d).is_err() {
                let ty = match class_of(d, ctx) {
                    Some(c) => ctx.repr(&c)?,
                    None => format!("<class '{}'>", d.type_name()),
                };
                return Err(PyErr::new(
                    "ValueError",
                    format!(
                        "mutable default {ty} for field {name} is not allowed: use default_factory"
                    ),
                ));
            }
        }
        if default.as_ref().and_then(as_field).is_some() {
            match &fld.default {
                Some(d) => ctx.setattr(cls, &name, d.clone())?,
                None => remove_class_attr(cls, &name),
            }
        }
        match fields
            .iter()
            .position(|x| as_field(x).is_some_and(|x| x.name() == name))
        {
            Some(i) => fields[i] = fv.clone(),
            None => fields.push(fv.clone()),
        }
    }
    // A `field()` without an annotation is a mistake CPython reports.
    for name in own_field_markers(cls) {
        if !fields
            .iter()
            .any(|x| as_field(x).is_some_and(|x| x.name() == name))
        {
            return Err(PyErr::type_error(format!(
                "'{name}' is a field but has no type annotation"
            )));
        }
    }
    let table = Value::dict_from(vec![]);
    if let Value::Dict(d) = &table {
        for fv in &fields {
            if let Some(fld) = as_field(fv) {
                d.borrow_mut().insert_str(&fld.name(), fv.clone());
            }
        }
    }
    ctx.setattr(cls, "__dataclass_fields__", table)?;
    let fields = Rc::new(fields);
    let method = |kind: Kind| {
        Value::native(Method {
            kind,
            class_name: class_name.clone(),
            fields: fields.clone(),
        })
    };
    if params.init {
        check_order(&fields)?;
        set_new(cls, "__init__", method(Kind::Init), ctx)?;
    }
    if params.repr {
        set_new(cls, "__repr__", method(Kind::Repr), ctx)?;
    }
    if params.eq {
        set_new(cls, "__eq__", method(Kind::Compare(CmpOp::Eq)), ctx)?;
    }
    if params.order {
        if !params.eq {
            return Err(PyErr::new("ValueError", "eq must be true if order is true"));
        }
        for (name, op) in [
            ("__lt__", CmpOp::Lt),
            ("__le__", CmpOp::Le),
            ("__gt__", CmpOp::Gt),
            ("__ge__", CmpOp::Ge),
        ] {
            if class_own_attr(cls, name).is_some() {
                return Err(PyErr::type_error(format!(
                    "Cannot overwrite attribute {name} in class {class_name}. Consider using \
                     functools.total_ordering"
                )));
            }
            ctx.setattr(cls, name, method(Kind::Compare(op)))?;
        }
    }
    // With `eq` and no `__hash__` of its own, a dataclass's instances are unhashable: equal
    // instances could otherwise hash differently.
    if params.eq && class_own_attr(cls, "__hash__").is_none() {
        ctx.setattr(cls, "__hash__", Value::None)?;
    }
    if params.match_args {
        let names = fields
            .iter()
            .filter_map(|x| as_field(x))
            .filter(|x| x.init && !x.kw_only.borrow().unwrap_or(false))
            .map(|x| Value::str(&x.name()))
            .collect();
        set_new(cls, "__match_args__", Value::tuple(names), ctx)?;
    }
    Ok(cls.clone())
}

/// The names bound to `field()` markers in the class body itself.
fn own_field_markers(cls: &Value) -> Vec<String> {
    class_own_items(cls)
        .into_iter()
        .filter(|(_, v)| as_field(v).is_some())
        .map(|(k, _)| k)
        .collect()
}

/// Sets `name` on the class unless the class body defined it (CPython's
/// `_set_new_attribute`).
fn set_new(cls: &Value, name: &str, v: Value, ctx: &mut dyn Ctx) -> PyResult<()> {
    if class_own_attr(cls, name).is_none() {
        ctx.setattr(cls, name, v)?;
    }
    Ok(())
}

/// A positional `__init__` parameter without a default may not follow one with a default.
fn check_order(fields: &[Value]) -> PyResult<()> {
    let mut seen_default = false;
    for fld in fields.iter().filter_map(|x| as_field(x)) {
        if !fld.init || fld.kw_only.borrow().unwrap_or(false) {
            continue;
        }
        let has_default = fld.default.is_some() || fld.default_factory.is_some();
        if has_default {
            seen_default = true;
        } else if seen_default {
            return Err(PyErr::type_error(format!(
                "non-default argument '{}' follows default argument",
                fld.name()
            )));
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Kind {
    Init,
    Repr,
    Compare(CmpOp),
}

/// A method the decorator added; the interpreter binds it to the instance like a function.
struct Method {
    kind: Kind,
    class_name: String,
    fields: Rc<Vec<Value>>,
}

impl Method {
    fn fields(&self) -> impl Iterator<Item = &Field> {
        self.fields.iter().filter_map(|x| as_field(x))
    }

    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Init => "__init__",
            Kind::Repr => "__repr__",
            Kind::Compare(CmpOp::Eq) => "__eq__",
            Kind::Compare(CmpOp::Lt) => "__lt__",
            Kind::Compare(CmpOp::Le) => "__le__",
            Kind::Compare(CmpOp::Gt) => "__gt__",
            Kind::Compare(_) => "__ge__",
        }
    }

    /// `__init__(self, a, b=1, *, c)`: binds as a Python function would, with CPython's
    /// messages, then sets each field and calls `__post_init__`.
    fn init(&self, this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<()> {
        let qual = format!("{}.__init__", self.class_name);
        let init: Vec<&Field> = self.fields().filter(|x| x.init).collect();
        let positional: Vec<&Field> = init
            .iter()
            .copied()
            .filter(|x| !x.kw_only.borrow().unwrap_or(false))
            .collect();
        let given = args.pos.len().saturating_sub(1);
        if given > positional.len() {
            let with_default = positional
                .iter()
                .filter(|x| x.default.is_some() || x.default_factory.is_some())
                .count();
            let most = positional.len() + 1;
            let least = most - with_default;
            let takes = if least == most {
                format!("{most} positional argument{}", plural(most))
            } else {
                format!("from {least} to {most} positional arguments")
            };
            let were = if given + 1 == 1 { "was" } else { "were" };
            return Err(PyErr::type_error(format!(
                "{qual}() takes {takes} but {} {were} given",
                given + 1
            )));
        }
        let mut values: Vec<Option<Value>> = vec![None; init.len()];
        for (i, v) in args.pos.iter().skip(1).enumerate() {
            let Some(fld) = positional.get(i) else { break };
            if let Some(j) = init.iter().position(|x| std::ptr::eq(*x, *fld)) {
                values[j] = Some(v.clone());
            }
        }
        for (k, v) in &args.kw {
            let Some(j) = init.iter().position(|x| x.name() == *k) else {
                return Err(PyErr::type_error(format!(
                    "{qual}() got an unexpected keyword argument '{k}'"
                )));
            };
            if values[j].is_some() {
                return Err(PyErr::type_error(format!(
                    "{qual}() got multiple values for argument '{k}'"
                )));
            }
            values[j] = Some(v.clone());
        }
        for kw_only in [false, true] {
            let absent: Vec<String> = init
                .iter()
                .zip(&values)
                .filter(|(x, v)| {
                    v.is_none()
                        && x.default.is_none()
                        && x.default_factory.is_none()
                        && x.kw_only.borrow().unwrap_or(false) == kw_only
                })
                .map(|(x, _)| format!("'{}'", x.name()))
                .collect();
            if !absent.is_empty() {
                let kind = if kw_only {
                    "keyword-only"
                } else {
                    "positional"
                };
                return Err(PyErr::type_error(format!(
                    "{qual}() missing {} required {kind} argument{}: {}",
                    absent.len(),
                    plural(absent.len()),
                    name_list(&absent)
                )));
            }
        }
        for (fld, v) in init.iter().zip(values) {
            let v = match (v, &fld.default, &fld.default_factory) {
                (Some(v), _, _) => v,
                (None, Some(d), _) => d.clone(),
                (None, None, Some(factory)) => ctx.call(factory, Args::new(vec![]))?,
                (None, None, None) => continue,
            };
            ctx.setattr(this, &fld.name(), v)?;
        }
        // A field left out of `__init__` with a factory still gets a fresh value.
        for fld in self.fields().filter(|x| !x.init) {
            if let Some(factory) = &fld.default_factory {
                let v = ctx.call(factory, Args::new(vec![]))?;
                ctx.setattr(this, &fld.name(), v)?;
            }
        }
        if let Ok(post) = ctx.getattr(this, "__post_init__") {
            ctx.call(&post, Args::new(vec![]))?;
        }
        Ok(())
    }

    fn repr(&self, this: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
        let id = match this {
            Value::Obj(o) | Value::Native(o) => Rc::as_ptr(o) as *const () as usize,
            _ => 0,
        };
        if ctx
            .state()
            .get::<DataclassState>()
            .repr_active
            .contains(&id)
        {
            return Ok("...".into());
        }
        ctx.state().get::<DataclassState>().repr_active.push(id);
        let parts = self.repr_parts(this, ctx);
        ctx.state().get::<DataclassState>().repr_active.pop();
        let cls = ctx.getattr(this, "__class__")?;
        let name = ctx.getattr(&cls, "__qualname__")?;
        let name = ctx.str(&name)?;
        Ok(format!("{name}({})", parts?.join(", ")))
    }

    fn repr_parts(&self, this: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<String>> {
        let mut parts = vec![];
        for fld in self.fields().filter(|x| x.repr) {
            let name = fld.name();
            let v = ctx.getattr(this, &name)?;
            parts.push(format!("{name}={}", ctx.repr(&v)?));
        }
        Ok(parts)
    }

    /// The compared fields of `v` as a tuple.
    fn key(&self, v: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let mut items = vec![];
        for fld in self.fields().filter(|x| x.compare) {
            items.push(ctx.getattr(v, &fld.name())?);
        }
        Ok(Value::tuple(items))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`, as CPython lists missing arguments.
fn name_list(names: &[String]) -> String {
    match names {
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
        [] => String::new(),
    }
}

impl Object for Method {
    fn type_name(&self) -> String {
        "function".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<function {}.{} at {:#x}>",
            self.class_name,
            self.name(),
            self as *const _ as usize
        ))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let Some(this) = args.pos.first().cloned() else {
            return Err(PyErr::type_error(format!(
                "{}.{}() missing 1 required positional argument: 'self'",
                self.class_name,
                self.name()
            )));
        };
        match self.kind {
            Kind::Init => {
                self.init(&this, &args, ctx)?;
                Ok(Value::None)
            }
            Kind::Repr => Ok(Value::str(&self.repr(&this, ctx)?)),
            Kind::Compare(op) => {
                let Some(other) = args.pos.get(1) else {
                    return Err(PyErr::type_error(format!(
                        "{}.{}() missing 1 required positional argument: 'other'",
                        self.class_name,
                        self.name()
                    )));
                };
                let same = match (class_of(&this, ctx), class_of(other, ctx)) {
                    (Some(mine), Some(theirs)) => mine.is(&theirs),
                    _ => false,
                };
                if !same {
                    return Ok(not_implemented());
                }
                let (a, b) = (self.key(&this, ctx)?, self.key(other, ctx)?);
                ctx.compare(op, &a, &b)
            }
        }
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const _ as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The class of an instance of a user class; `None` for the builtin kinds, which are never
/// the class of a dataclass instance.
fn class_of(v: &Value, ctx: &mut dyn Ctx) -> Option<Value> {
    match v {
        Value::Obj(_) => ctx.getattr(v, "__class__").ok(),
        _ => None,
    }
}

/// Whether `v` is a dataclass instance (not the class itself).
fn is_instance(v: &Value, ctx: &mut dyn Ctx) -> PyResult<bool> {
    Ok(!is_user_class(v) && class_fields(v, ctx)?.is_some())
}

/// `asdict`/`astuple`: dataclasses, lists, tuples and dicts are rebuilt recursively,
/// anything else deep-copied, as CPython's `_asdict_inner` does.
fn convert(v: &Value, as_dict: bool, ctx: &mut dyn Ctx) -> PyResult<Value> {
    ctx.check_interrupt()?;
    if is_instance(v, ctx)? {
        let fields = class_fields(v, ctx)?.unwrap_or_default();
        let mut pairs = vec![];
        for fv in &fields {
            let Some(fld) = as_field(fv) else { continue };
            let name = fld.name();
            let item = ctx.getattr(v, &name)?;
            pairs.push((name, convert(&item, as_dict, ctx)?));
        }
        return Ok(if as_dict {
            let d = Value::dict_from(vec![]);
            if let Value::Dict(dd) = &d {
                for (k, x) in pairs {
                    dd.borrow_mut().insert_str(&k, x);
                }
            }
            d
        } else {
            Value::tuple(pairs.into_iter().map(|(_, x)| x).collect())
        });
    }
    match v {
        Value::List(_) => {
            let items: Vec<Value> = v.as_seq().unwrap_or_default();
            let out = items
                .iter()
                .map(|x| convert(x, as_dict, ctx))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(Value::list(out))
        }
        Value::Tuple(t) => {
            let items: Vec<Value> = t.iter().cloned().collect();
            let out = items
                .iter()
                .map(|x| convert(x, as_dict, ctx))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(Value::tuple(out))
        }
        Value::Dict(d) => {
            let pairs: Vec<(Value, Value)> = d
                .borrow()
                .items()
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect();
            let out = Value::dict_from(vec![]);
            if let Value::Dict(o) = &out {
                for (k, x) in pairs {
                    let k = convert(&k, as_dict, ctx)?;
                    let x = convert(&x, as_dict, ctx)?;
                    o.borrow_mut().insert(k, x)?;
                }
            }
            Ok(out)
        }
        other => super::copy::deepcopy(other, ctx),
    }
}

fn one_arg(a: &Args, func: &str) -> PyResult<Value> {
    let s = a.bind(func, &["obj"], 1)?;
    Ok(s[0].clone().unwrap_or(Value::None))
}

fn replace(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some(obj) = a.pos.first() else {
        return Err(PyErr::type_error(
            "replace() missing 1 required positional argument: 'obj'",
        ));
    };
    if a.pos.len() > 1 {
        return Err(PyErr::type_error(format!(
            "replace() takes 1 positional argument but {} were given",
            a.pos.len()
        )));
    }
    if !is_instance(obj, ctx)? {
        return Err(PyErr::type_error(
            "replace() should be called on dataclass instances",
        ));
    }
    let mut changes = a.kw.clone();
    for fv in class_fields(obj, ctx)?.unwrap_or_default() {
        let Some(fld) = as_field(&fv) else { continue };
        let name = fld.name();
        let named = changes.iter().any(|(k, _)| *k == name);
        if !fld.init {
            if named {
                return Err(PyErr::new(
                    "ValueError",
                    format!(
                        "field {name} is declared with init=False, it cannot be specified with \
                         replace()"
                    ),
                ));
            }
            continue;
        }
        if !named {
            let v = ctx.getattr(obj, &name)?;
            changes.push((name, v));
        }
    }
    let cls = ctx.getattr(obj, "__class__")?;
    ctx.call(
        &cls,
        Args {
            pos: vec![],
            kw: changes,
        },
    )
}

pub fn module(ctx: &mut dyn Ctx) -> Value {
    let error = crate::lang::exception_class(ctx, "FrozenInstanceError");
    NativeModule::new(
        "dataclasses",
        "Generates __init__, __repr__ and comparisons for classes of annotated fields.",
    )
    .with(
        "dataclass",
        f(
            "dataclass",
            "dataclass(cls=None, /, *, init=True, repr=True, eq=True, order=False, \
             unsafe_hash=False, frozen=False, match_args=True, kw_only=False, slots=False, \
             weakref_slot=False)\nAdds dunder methods based on the fields defined in the class.",
            dataclass,
        ),
    )
    .with(
        "field",
        f(
            "field",
            "field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, \
             hash=None, compare=True, metadata=None, kw_only=MISSING)\nReturn an object to \
             identify dataclass fields.",
            field,
        ),
    )
    .with(
        "fields",
        f(
            "fields",
            "fields(class_or_instance)\nReturn a tuple describing the fields of this dataclass.",
            |a, ctx| {
                let s = a.bind("fields", &["class_or_instance"], 1)?;
                let v = s[0].clone().unwrap_or(Value::None);
                match class_fields(&v, ctx)? {
                    Some(fs) => Ok(Value::tuple(fs)),
                    None => Err(PyErr::type_error(
                        "must be called with a dataclass type or instance",
                    )),
                }
            },
        ),
    )
    .with(
        "asdict",
        f(
            "asdict",
            "asdict(obj, *, dict_factory=dict)\nReturn the fields of a dataclass instance as a \
             new dictionary mapping field names to field values.",
            |a, ctx| {
                let v = one_arg(a, "asdict")?;
                if !is_instance(&v, ctx)? {
                    return Err(PyErr::type_error(
                        "asdict() should be called on dataclass instances",
                    ));
                }
                convert(&v, true, ctx)
            },
        ),
    )
    .with(
        "astuple",
        f(
            "astuple",
            "astuple(obj, *, tuple_factory=tuple)\nReturn the fields of a dataclass instance \
             as a new tuple of field values.",
            |a, ctx| {
                let v = one_arg(a, "astuple")?;
                if !is_instance(&v, ctx)? {
                    return Err(PyErr::type_error(
                        "astuple() should be called on dataclass instances",
                    ));
                }
                convert(&v, false, ctx)
            },
        ),
    )
    .with(
        "replace",
        f(
            "replace",
            "replace(obj, /, **changes)\nReturn a new object replacing specified fields with \
             new values.",
            replace,
        ),
    )
    .with(
        "is_dataclass",
        f(
            "is_dataclass",
            "is_dataclass(obj)\nReturns True if obj is a dataclass or an instance of a \
             dataclass.",
            |a, ctx| {
                let v = one_arg(a, "is_dataclass")?;
                Ok(Value::Bool(class_fields(&v, ctx)?.is_some()))
            },
        ),
    )
    .with("MISSING", missing(ctx))
    .with("FrozenInstanceError", error)
    .into_value()
}
