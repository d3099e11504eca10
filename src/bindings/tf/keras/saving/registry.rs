//! Keras's registry of a user's classes (`keras.src.saving.object_registration`):
//! `register_keras_serializable(package, name)` records a class under `"package>Name"`,
//! `get_registered_name` / `get_registered_object` look it up, `get_custom_objects()` is
//! the global dict itself (a user may add to it), and `custom_object_scope` /
//! `CustomObjectScope` makes a dict of names the first place looked at while its `with`
//! block runs. Loading a model finds a user's class here ([`resolve`]) and raises Keras's
//! "Could not locate class" when it is nowhere. This file holds the session's registry
//! and nothing of the file format.

use std::cell::RefCell;

use crate::bindings::tf::{func, given};
use crate::lang::{Args, Ctx, NativeClass, NativeFn, Object, PyErr, PyResult, Value};

/// The session's registry, in the interpreter's state.
#[derive(Default)]
struct Registry {
    /// `GLOBAL_CUSTOM_OBJECTS`: the dict `get_custom_objects()` returns, made at first use.
    objects: Option<Value>,
    /// `GLOBAL_CUSTOM_NAMES`: each registered object with its registered name.
    names: Vec<(Value, String)>,
    /// `custom_objects_scope_dict`: the dict of the innermost open `custom_object_scope`.
    scope: Option<Value>,
}

/// The global dict of registered objects.
fn global_objects(ctx: &mut dyn Ctx) -> Value {
    ctx.state()
        .get::<Registry>()
        .objects
        .get_or_insert_with(|| Value::dict_from(vec![]))
        .clone()
}

/// `d[name]` of a dict value, when it is a dict holding `name`.
fn lookup(d: &Value, name: &str) -> Option<Value> {
    match d {
        Value::Dict(d) => d.borrow().get_str(name),
        _ => None,
    }
}

/// A shallow copy of a dict (`dict.copy()`), or an empty dict for `None`.
fn copy_dict(v: &Value) -> PyResult<Value> {
    match v {
        Value::None => Ok(Value::dict_from(vec![])),
        Value::Dict(d) => {
            let mut out = crate::lang::Dict::default();
            for (k, x) in d.borrow().items() {
                out.insert(k.clone(), x.clone())?;
            }
            Ok(Value::Dict(std::rc::Rc::new(RefCell::new(out))))
        }
        other => Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute 'copy'",
            other.type_name()
        ))),
    }
}

/// Keras's `get_registered_object(name, custom_objects, module_objects)`: the open scope's
/// dict first, then the registered objects, then `custom_objects`.
pub fn registered_object(
    name: &str,
    custom_objects: Option<&Value>,
    ctx: &mut dyn Ctx,
) -> Option<Value> {
    let scope = ctx.state().get::<Registry>().scope.clone();
    if let Some(v) = scope.as_ref().and_then(|s| lookup(s, name)) {
        return Some(v);
    }
    if let Some(v) = lookup(&global_objects(ctx), name) {
        return Some(v);
    }
    custom_objects.and_then(|c| lookup(c, name))
}

/// Keras's `get_registered_name(obj)`: the name it was registered under, else its
/// `__name__`.
pub fn registered_name(obj: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
    let known = ctx
        .state()
        .get::<Registry>()
        .names
        .iter()
        .find(|(o, _)| o.is(obj))
        .map(|(_, n)| n.clone());
    match known {
        Some(n) => Ok(n),
        None => {
            let n = ctx.getattr(obj, "__name__")?;
            Ok(n.as_str()?.to_string())
        }
    }
}

/// `register_keras_serializable(package="Custom", name=None)`: a decorator that records
/// its argument under `"package>name"` (the class's `__name__` when `name` is None).
fn register(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("register_keras_serializable", &["package", "name"], 0)?;
    let package = match given(&s[0]) {
        Some(v) => v.as_str()?.to_string(),
        None => "Custom".to_string(),
    };
    let name = given(&s[1])
        .map(|v| v.as_str().map(str::to_string))
        .transpose()?;
    Ok(NativeFn::value(
        "decorator",
        "decorator(arg)",
        move |a, ctx| {
            let s = a.bind("decorator", &["arg"], 1)?;
            let arg = s[0].clone().unwrap_or(Value::None);
            let class_name = match &name {
                Some(n) => n.clone(),
                None => ctx.getattr(&arg, "__name__")?.as_str()?.to_string(),
            };
            let registered = format!("{package}>{class_name}");
            let is_class =
                crate::lang::is_user_class(&arg) || arg.downcast::<NativeClass>().is_some();
            if is_class && ctx.getattr(&arg, "get_config").is_err() {
                return Err(PyErr::value_error(
                    "Cannot register a class that does not have a get_config() method.",
                ));
            }
            if let Value::Dict(d) = global_objects(ctx) {
                d.borrow_mut().insert_str(&registered, arg.clone());
            }
            let names = &mut ctx.state().get::<Registry>().names;
            match names.iter_mut().find(|(o, _)| o.is(&arg)) {
                Some(e) => e.1 = registered,
                None => names.push((arg.clone(), registered)),
            }
            Ok(arg)
        },
    ))
}

fn get_registered_name(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("get_registered_name", &["obj"], 1)?;
    let obj = s[0].clone().unwrap_or(Value::None);
    Ok(Value::str(&registered_name(&obj, ctx)?))
}

fn get_registered_object(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "get_registered_object",
        &["name", "custom_objects", "module_objects"],
        1,
    )?;
    let name = s[0].as_ref().unwrap_or(&Value::None).as_str()?.to_string();
    if let Some(v) = registered_object(&name, given(&s[1]), ctx) {
        return Ok(v);
    }
    Ok(given(&s[2])
        .and_then(|m| lookup(m, &name))
        .unwrap_or(Value::None))
}

fn get_custom_objects(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    args.bind("get_custom_objects", &[], 0)?;
    Ok(global_objects(ctx))
}

/// A `CustomObjectScope`: entering it makes a copy of its dict the scope's dict (the one
/// it replaces is kept, and put back on leaving).
struct Scope {
    objects: Value,
    backup: RefCell<Option<Value>>,
}

impl Object for Scope {
    fn type_name(&self) -> String {
        "CustomObjectScope".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<keras.src.saving.object_registration.CustomObjectScope object at 0x{:x}>",
            self as *const Scope as usize
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok((name == "custom_objects").then(|| self.objects.clone()))
    }
    fn enter(&self, this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let open = copy_dict(&self.objects)?;
        let st = ctx.state().get::<Registry>();
        *self.backup.borrow_mut() = st.scope.replace(open);
        Ok(this.clone())
    }
    fn exit(&self, _error: Option<&PyErr>, ctx: &mut dyn Ctx) -> PyResult<bool> {
        let backup = self.backup.borrow_mut().take();
        ctx.state().get::<Registry>().scope = backup;
        Ok(false)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `CustomObjectScope(custom_objects)` (also spelled `custom_object_scope`).
fn scope_class() -> Value {
    NativeClass::new(
        "CustomObjectScope",
        "keras.src.saving.object_registration",
        "CustomObjectScope(custom_objects)",
    )
    .constructor(|args, _ctx| {
        let s = args.bind("CustomObjectScope", &["custom_objects"], 1)?;
        let objects = match s[0].clone().unwrap_or(Value::None) {
            Value::None => Value::dict_from(vec![]),
            v => v,
        };
        Ok(Value::native(Scope {
            objects,
            backup: RefCell::new(None),
        }))
    })
    .into_value()
}

/// The registry's functions, as `keras.saving` and `keras.utils` both show them.
pub fn members() -> Vec<(&'static str, Value)> {
    let scope = scope_class();
    vec![
        (
            "register_keras_serializable",
            func(
                "register_keras_serializable",
                "register_keras_serializable(package='Custom', name=None)",
                register,
            ),
        ),
        (
            "get_registered_name",
            func(
                "get_registered_name",
                "get_registered_name(obj)",
                get_registered_name,
            ),
        ),
        (
            "get_registered_object",
            func(
                "get_registered_object",
                "get_registered_object(name, custom_objects=None, module_objects=None)",
                get_registered_object,
            ),
        ),
        (
            "get_custom_objects",
            func(
                "get_custom_objects",
                "get_custom_objects()",
                get_custom_objects,
            ),
        ),
        ("CustomObjectScope", scope.clone()),
        ("custom_object_scope", scope),
    ]
}
