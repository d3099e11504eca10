//! `tf.Module` and `tf.name_scope`. A module (a user's subclass, or `tf.Module()` itself)
//! collects what its attributes hold as TensorFlow does: `variables`,
//! `trainable_variables`, `non_trainable_variables` and `submodules` walk the attributes
//! in sorted order of their names (lists in order, dicts by sorted key), each value once,
//! the module's own leaves first and then each submodule's, recursively; the results are
//! tuples. `name` is the given name or the class name in snake case; `name_scope` is a
//! `tf.name_scope` of that name, and a `tf.Variable` made inside a name scope carries it
//! as its name's prefix (`outer/v:0`).

use std::any::Any;
use std::cell::RefCell;

use indexmap::IndexMap;

use super::convert::variable_of;
use super::keras::layers::base::snake_case;
use super::keras::variable::KerasVariable;
use super::variable::{MirroredVariable, Variable};
use super::{address_of, given};
use crate::lang::{Args, Ctx, NativeClass, Object, PyErr, PyResult, Value};

/// The name scopes entered now (`with tf.name_scope(...)`, `with module.name_scope`),
/// outermost first.
#[derive(Default)]
pub struct NameScopes {
    pub stack: Vec<String>,
}

/// The prefix the active name scopes give a new variable's name (`outer/inner/`).
pub fn scope_prefix(ctx: &mut dyn Ctx) -> String {
    ctx.state()
        .get::<NameScopes>()
        .stack
        .iter()
        .map(|s| format!("{s}/"))
        .collect()
}

/// `tf.name_scope(name)`: a context manager whose `name` is `name/`.
pub struct NameScope {
    pub name: String,
}

impl Object for NameScope {
    fn type_name(&self) -> String {
        "name_scope".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.framework.ops.name_scope_v2 object at {}>",
            address_of(self)
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "name" => Some(Value::from(format!("{}/", self.name))),
            _ => None,
        })
    }
    fn enter(&self, _this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        ctx.state()
            .get::<NameScopes>()
            .stack
            .push(self.name.clone());
        Ok(Value::from(format!("{}{}/", prefix_below(ctx), self.name)))
    }
    fn exit(&self, _error: Option<&PyErr>, ctx: &mut dyn Ctx) -> PyResult<bool> {
        ctx.state().get::<NameScopes>().stack.pop();
        Ok(false)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The scopes entered before the innermost one.
fn prefix_below(ctx: &mut dyn Ctx) -> String {
    let stack = &ctx.state().get::<NameScopes>().stack;
    let n = stack.len().saturating_sub(1);
    stack[..n].iter().map(|s| format!("{s}/")).collect()
}

/// `tf.name_scope(name)`.
pub fn name_scope(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("name_scope", &["name"], 1)?;
    let name = s[0].as_ref().unwrap_or(&Value::None).as_str()?.to_string();
    Ok(Value::native(NameScope { name }))
}

/// `tf.Module()` made directly: a plain module whose attributes are set from outside.
pub struct ModuleObj {
    pub name: String,
    pub attrs: RefCell<IndexMap<String, Value>>,
}

impl Object for ModuleObj {
    fn type_name(&self) -> String {
        "Module".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.module.module.Module object at {}>",
            address_of(self)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if let Some(v) = self.attrs.borrow().get(name) {
            return Ok(Some(v.clone()));
        }
        module_property(this, name, ctx).map(Some).or_else(|e| {
            if PROPERTIES.contains(&name) {
                Err(e)
            } else {
                Ok(None)
            }
        })
    }
    fn setattr(&self, name: &str, v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        if PROPERTIES.contains(&name) {
            return Err(PyErr::attribute_error(format!(
                "property '{name}' of 'Module' object has no setter"
            )));
        }
        self.attrs.borrow_mut().insert(name.to_string(), v);
        Ok(())
    }
    fn dir(&self) -> Vec<String> {
        let mut v: Vec<String> = self.attrs.borrow().keys().cloned().collect();
        v.extend(PROPERTIES.iter().map(|s| s.to_string()));
        v
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["Module".into(), "AutoTrackable".into()]
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const ModuleObj as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The attribute holding a subclass instance's name, as TF keeps it.
const NAME_ATTR: &str = "_name";

const PROPERTIES: &[&str] = &[
    "name",
    "name_scope",
    "variables",
    "trainable_variables",
    "non_trainable_variables",
    "submodules",
];

/// A module's attributes, as `vars(module)` lists them.
pub fn attributes(m: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<(String, Value)>> {
    if let Some(o) = m.downcast::<ModuleObj>() {
        return Ok(o
            .attrs
            .borrow()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect());
    }
    super::keras::track::attributes(m, ctx)
}

/// Whether `v` is a module: `tf.Module()` or an instance of a subclass.
pub fn is_module(v: &Value, ctx: &mut dyn Ctx) -> bool {
    if v.downcast::<ModuleObj>().is_some() {
        return true;
    }
    matches!(v, Value::Obj(_))
        && super::keras::track::attributes(v, ctx)
            .is_ok_and(|a| a.iter().any(|(k, _)| k == NAME_ATTR))
        && v.type_name() != "type"
        && ctx
            .getattr(v, "__class__")
            .ok()
            .is_some_and(|c| module_class_chain(&c, ctx))
}

/// Whether a class derives from `tf.Module` (its chain of bases reaches the native class).
fn module_class_chain(cls: &Value, ctx: &mut dyn Ctx) -> bool {
    let mut cur = cls.clone();
    for _ in 0..64 {
        if cur
            .downcast::<NativeClass>()
            .is_some_and(|n| n.name == "Module")
        {
            return true;
        }
        match ctx.getattr(&cur, "__base__") {
            Ok(b) if !b.is_none() => cur = b,
            _ => return false,
        }
    }
    false
}

fn is_variable(v: &Value) -> bool {
    v.downcast::<Variable>().is_some()
        || v.downcast::<MirroredVariable>().is_some()
        || v.downcast::<KerasVariable>().is_none() && variable_of(v).is_some()
}

/// The leaves of one attribute value, as `tf.nest.flatten` lists them.
fn leaves(v: &Value, out: &mut Vec<Value>, depth: usize) {
    if depth > 32 {
        return;
    }
    match v {
        Value::List(_) | Value::Tuple(_) => {
            for item in v.as_seq().unwrap_or_default() {
                leaves(&item, out, depth + 1);
            }
        }
        Value::Dict(d) => {
            let mut items: Vec<(String, Value)> = d
                .borrow()
                .items()
                .map(|(k, x)| (format!("{k:?}"), x.clone()))
                .collect();
            items.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, x) in items {
                leaves(&x, out, depth + 1);
            }
        }
        other => out.push(other.clone()),
    }
}

/// TensorFlow's `_flatten_module`: the values `keep` accepts, each once.
fn flatten(
    m: &Value,
    keep: &dyn Fn(&Value, &mut dyn Ctx) -> bool,
    ctx: &mut dyn Ctx,
    seen: &mut Vec<Value>,
    out: &mut Vec<Value>,
    depth: usize,
) -> PyResult<()> {
    if depth > 64 {
        return Ok(());
    }
    let mut attrs = attributes(m, ctx)?;
    attrs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut submodules = vec![];
    for (_, v) in attrs {
        let mut ls = vec![];
        leaves(&v, &mut ls, 0);
        for leaf in ls {
            if seen.iter().any(|s| s.is(&leaf)) {
                continue;
            }
            seen.push(leaf.clone());
            if keep(&leaf, ctx) {
                out.push(leaf.clone());
            }
            if is_module(&leaf, ctx) {
                submodules.push(leaf);
            }
        }
    }
    for sub in submodules {
        flatten(&sub, keep, ctx, seen, out, depth + 1)?;
    }
    Ok(())
}

fn collect(
    m: &Value,
    keep: &dyn Fn(&Value, &mut dyn Ctx) -> bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let mut out = vec![];
    let mut seen = vec![m.clone()];
    flatten(m, keep, ctx, &mut seen, &mut out, 0)?;
    Ok(Value::tuple(out))
}

fn trainable(v: &Value) -> bool {
    variable_of(v).is_some_and(|x| x.trainable())
}

/// The module's name: its own, or what its `__init__` recorded.
fn module_name(m: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
    if let Some(o) = m.downcast::<ModuleObj>() {
        return Ok(o.name.clone());
    }
    let attrs = super::keras::track::attributes(m, ctx)?;
    match attrs.iter().find(|(k, _)| k == NAME_ATTR) {
        Some((_, Value::Str(s))) => Ok(s.to_string()),
        _ => Ok(snake_case(&m.type_name())),
    }
}

fn module_property(this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Value> {
    match name {
        "name" => module_name(this, ctx).map(Value::from),
        "name_scope" => Ok(Value::native(NameScope {
            name: module_name(this, ctx)?,
        })),
        "variables" => collect(this, &|v, _| is_variable(v), ctx),
        "trainable_variables" => collect(this, &|v, _| is_variable(v) && trainable(v), ctx),
        "non_trainable_variables" => collect(this, &|v, _| is_variable(v) && !trainable(v), ctx),
        "submodules" => collect(this, &|v, c| is_module(v, c), ctx),
        _ => Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute '{name}'",
            this.type_name()
        ))),
    }
}

/// The name a module gets: `name=`, else its class's name in snake case.
fn name_arg(args: &Args, class: &str) -> PyResult<String> {
    let s = args.bind("Module", &["name"], 0)?;
    let name = match given(&s[0]) {
        Some(v) => v.as_str()?.to_string(),
        None => snake_case(class),
    };
    if !name
        .chars()
        .enumerate()
        .all(|(i, c)| c.is_ascii_alphanumeric() || c == '_' || (i > 0 && c == '.'))
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(PyErr::value_error(format!(
            "'{name}' is not a valid module name. Module names must be valid Python \
             identifiers (e.g. a valid class name)."
        )));
    }
    Ok(name)
}

/// `tf.Module`.
pub fn class() -> Value {
    let mut c = NativeClass::new(
        "Module",
        "tensorflow.python.module.module",
        "Module(name=None)",
    )
    .base("AutoTrackable")
    .constructor(|args, _ctx| {
        let name = name_arg(args, "Module")?;
        Ok(Value::native(ModuleObj {
            name,
            attrs: RefCell::new(IndexMap::new()),
        }))
    })
    .method("__init__", |this, args, ctx| {
        let name = name_arg(args, &this.type_name())?;
        ctx.setattr(this, NAME_ATTR, Value::from(name))?;
        Ok(Value::None)
    });
    for &p in PROPERTIES {
        c = c.property(p, move |this, _, ctx| module_property(this, p, ctx));
    }
    c.into_value()
}
