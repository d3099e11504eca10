//! A user's `Layer` or `Model` subclass as Keras 3 serializes it: the base `get_config()`
//! (`name`, `trainable` and the dtype policy), `from_config(config)` (`cls(**config)`),
//! `get_build_config()` / `build_from_config()`, the entry `config.json` holds for such an
//! object (`module`, `class_name`, its `get_config()`, `registered_name` and
//! `build_config`), and the object made back from that entry with the class the registry
//! or `custom_objects` names, or Keras's "Could not locate class" error. The layer
//! machinery (calls, variables) is the layers binding's; the file format is
//! `keras::saving`'s.

use super::super::layers::call::{call_layer, mark_built};
use super::super::layers::handle::LayerHandle;
use super::super::layers::layer::json_value;
use super::registry::{registered_name, registered_object};
use crate::lang::{class_own_attr, is_user_class, signature, Args, Ctx, PyErr, PyResult, Value};
use crate::tensor::{DType, NdArray};
use serde_json::json;

/// The classes a user wrote between the instance's class and the native base, most
/// derived first.
fn user_classes(this: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
    let mut c = if is_user_class(this) {
        this.clone()
    } else {
        ctx.getattr(this, "__class__")?
    };
    let mut out = vec![];
    while is_user_class(&c) && out.len() < 64 {
        out.push(c.clone());
        c = ctx.getattr(&c, "__base__")?;
    }
    Ok(out)
}

/// The user's own definition of `name` nearest the instance's class, if any.
fn user_defined(this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
    Ok(user_classes(this, ctx)?
        .iter()
        .find_map(|c| class_own_attr(c, name)))
}

/// The dtype policy entry Keras's `Layer.get_config()` gives (float32 is the only policy
/// here).
fn dtype_policy() -> serde_json::Value {
    json!({"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
        "registered_name": null})
}

/// The parameters `Layer.__init__` itself takes, which the base config accounts for.
const BASE_INIT: &[&str] = &["self", "name", "trainable", "dtype"];

/// `Layer.get_config()` (Keras's `Operation.get_config` then `Layer.get_config`): `name`,
/// `trainable` and `dtype`. When the class does not override `get_config`, Keras fills the
/// config from the arguments `__init__` received (its automatic config): a layer that keeps
/// `Layer.__init__` adds `activity_regularizer` and `autocast`; other arguments are not
/// recorded here, so a class whose `__init__` takes them is told to override
/// `get_config()`; and `name` is left out when `__init__` could not take it back, as
/// Keras leaves it out.
pub fn base_get_config(this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let h = super::super::layers::base::ensure_core(this, ctx)?;
    let mut keep_name = true;
    // A layer whose class keeps `Layer.__init__` gets that initializer's arguments too.
    let mut layer_init = false;
    if user_defined(this, "get_config", ctx)?.is_none() {
        let init = user_defined(this, "__init__", ctx)?;
        layer_init = init.is_none() && h.model_value().is_none();
        if let Some(init) = init {
            let Some((sig, _)) = signature(&init) else {
                return Err(PyErr::runtime_error("__init__ is not a function"));
            };
            let extra: Vec<&str> = sig
                .params
                .iter()
                .map(|p| p.name.as_str())
                .filter(|n| !BASE_INIT.contains(n))
                .collect();
            if !extra.is_empty() || sig.vararg.is_some() {
                let class = this.type_name();
                return Err(PyErr::not_implemented(format!(
                    "Object {class} takes arguments in `__init__()` ({}) that its config must \
                     hold, and this kernel does not record them when the object is made, as \
                     Keras's automatic config does. Please implement `get_config()` returning \
                     them (config = super().get_config(); config.update(...)).",
                    extra.join(", ")
                )));
            }
            let has_name = sig.params.iter().any(|p| p.name == "name");
            keep_name = has_name || sig.kwarg.as_deref() == Some("kwargs");
        }
    }
    let mut c = serde_json::Map::new();
    if keep_name {
        c.insert("name".into(), json!(h.core.name()));
    }
    if layer_init {
        c.insert("activity_regularizer".into(), serde_json::Value::Null);
    }
    c.insert("trainable".into(), json!(h.core.trainable.get()));
    c.insert("dtype".into(), dtype_policy());
    if layer_init {
        c.insert("autocast".into(), json!(true));
    }
    Ok(json_value(&serde_json::Value::Object(c)))
}

/// The class a `from_config` call is for: the class itself, or an instance's class.
fn class_of(this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if is_user_class(this) {
        Ok(this.clone())
    } else {
        ctx.getattr(this, "__class__")
    }
}

/// `cls(**config)` with a dtype policy entry read back as its name, as Keras's
/// `Operation.from_config` passes it.
fn construct(cls: &Value, config: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Value::Dict(d) = config else {
        return Err(PyErr::type_error(format!(
            "from_config() argument after ** must be a mapping, not {}",
            config.type_name()
        )));
    };
    let mut args = Args::new(vec![]);
    for (k, v) in d.borrow().items() {
        let key = k.as_str()?.to_string();
        let v = match (&*key, v) {
            ("dtype", Value::Dict(p)) => p
                .borrow()
                .get_str("config")
                .and_then(|c| match c {
                    Value::Dict(c) => c.borrow().get_str("name"),
                    _ => None,
                })
                .unwrap_or_else(|| v.clone()),
            _ => v.clone(),
        };
        args = args.with_kw(&key, v);
    }
    ctx.call(cls, args)
}

/// `Layer.from_config(config)`: `cls(**config)`, an error becoming Keras's `TypeError`.
pub fn layer_from_config(this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("from_config", &["config"], 1)?;
    let config = s[0].clone().unwrap_or(Value::None);
    let cls = class_of(this, ctx)?;
    construct(&cls, &config, ctx).map_err(|e| {
        let name = ctx
            .getattr(&cls, "__name__")
            .ok()
            .and_then(|n| n.as_str().ok().map(str::to_string))
            .unwrap_or_default();
        let shown = ctx.repr(&config).unwrap_or_default();
        PyErr::type_error(format!(
            "Error when deserializing class '{name}' using config={shown}.\n\nException encountered: {}",
            e.message()
        ))
    })
}

/// `Model.from_config(config)` of a subclassed model: `cls(**config)`, a `TypeError`
/// becoming Keras's "Unable to revive model from config".
pub fn model_from_config(this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("from_config", &["config", "custom_objects"], 1)?;
    let config = s[0].clone().unwrap_or(Value::None);
    let cls = class_of(this, ctx)?;
    match construct(&cls, &config, ctx) {
        Err(e) if e.type_name() == "TypeError" => {
            let shown = ctx.repr(&config)?;
            let class = ctx.repr(&cls)?;
            let name = ctx.getattr(&cls, "__name__")?;
            Err(PyErr::type_error(format!(
                "Unable to revive model from config. When overriding the `get_config()` method, make sure that the returned config contains all items used as arguments in the  constructor to {class}, which is the default behavior. You can override this default behavior by defining a `from_config(cls, config)` class method to specify how to create an instance of {} from its config.\n\nReceived config={shown}\n\nError encountered during deserialization: {}",
                name.as_str()?,
                e.message()
            )))
        }
        r => r,
    }
}

/// The input shape a layer was built for, as `build_config` holds it.
fn build_shape(h: &LayerHandle) -> Option<serde_json::Value> {
    let dims = h.core.build_shape.borrow().clone()?;
    Some(serde_json::Value::Array(
        dims.iter().map(|d| json!(d)).collect(),
    ))
}

/// `get_build_config()`: `{"input_shape": ...}` of a built layer, else None.
pub fn get_build_config(this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let h = super::super::layers::base::ensure_core(this, ctx)?;
    Ok(match build_shape(&h) {
        Some(s) => json_value(&json!({ "input_shape": s })),
        None => Value::None,
    })
}

/// The dims of a shape value (a list or tuple of ints and Nones).
fn dims_of(shape: &Value) -> PyResult<Vec<Option<usize>>> {
    let items = shape
        .as_seq()
        .ok_or_else(|| PyErr::type_error("build_config's input_shape is not a list"))?;
    items
        .iter()
        .map(|d| match d {
            Value::None => Ok(None),
            d => usize::try_from(d.as_int()?)
                .map(Some)
                .map_err(|_| PyErr::value_error("a negative dimension in input_shape")),
        })
        .collect()
}

/// `build_from_config(config)`: a layer calls its `build(input_shape)`; a model whose
/// `build` is Keras's runs its `call` once on zeros of that shape (one sample where the
/// batch is unknown), as Keras builds a subclassed model by running it.
pub fn build_from_config(this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("build_from_config", &["config"], 1)?;
    let Some(Value::Dict(d)) = s[0].clone() else {
        return Ok(Value::None);
    };
    let Some(shape) = d.borrow().get_str("input_shape") else {
        return Ok(Value::None);
    };
    let h = super::super::layers::base::ensure_core(this, ctx)?;
    let dims = dims_of(&shape)?;
    let is_model = h.model_value().is_some();
    if is_model && user_defined(this, "build", ctx)?.is_none() {
        let concrete: Vec<usize> = dims.iter().map(|d| d.unwrap_or(1)).collect();
        let zeros = NdArray::zeros(&concrete, DType::F32)
            .map_err(crate::bindings::tf::convert::tensor_err)?;
        call_layer(
            this,
            Args::new(vec![crate::bindings::tf::convert::tensor_value(zeros)]),
            ctx,
        )?;
    } else {
        let tuple = Value::tuple(
            dims.iter()
                .map(|d| d.map_or(Value::None, |d| Value::Int(d as i64)))
                .collect(),
        );
        let build = ctx.getattr(this, "build")?;
        ctx.call(&build, Args::new(vec![tuple]))?;
        mark_built(&h, ctx)?;
    }
    *h.core.build_shape.borrow_mut() = Some(dims);
    Ok(Value::None)
}

/// A Python value of a config as JSON: None, bools, numbers, strings, lists, tuples and
/// dicts of them; anything else is Keras's error for an object without a config.
pub fn value_json(v: &Value, ctx: &mut dyn Ctx) -> PyResult<serde_json::Value> {
    Ok(match v {
        Value::None => serde_json::Value::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(x) => json!(x),
        Value::Str(s) => json!(s.to_string()),
        Value::List(_) | Value::Tuple(_) => {
            let mut out = vec![];
            for x in v.as_seq().unwrap_or_default() {
                out.push(value_json(&x, ctx)?);
            }
            serde_json::Value::Array(out)
        }
        Value::Dict(d) => {
            let items: Vec<(Value, Value)> = d
                .borrow()
                .items()
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect();
            let mut out = serde_json::Map::new();
            for (k, x) in items {
                let key = match &k {
                    Value::Str(s) => s.to_string(),
                    other => ctx.str(other)?,
                };
                out.insert(key, value_json(&x, ctx)?);
            }
            serde_json::Value::Object(out)
        }
        other => {
            let shown = ctx.repr(other)?;
            return Err(PyErr::type_error(format!(
                "Cannot serialize object {shown} of type <class '{}'>. To be serializable, a class must implement the `get_config()` method.",
                other.type_name()
            )));
        }
    })
}

/// The entry of `config.json` for a user's layer or model: `module` (None for a class
/// defined in the notebook, as Keras writes `__main__`), `class_name`, its `get_config()`,
/// `registered_name` and, once built, `build_config`.
pub fn entry(obj: &Value, ctx: &mut dyn Ctx) -> PyResult<serde_json::Value> {
    let cls = ctx.getattr(obj, "__class__")?;
    let module = ctx.getattr(&cls, "__module__")?;
    let module = match module.as_str() {
        Ok("__main__") | Err(_) => serde_json::Value::Null,
        Ok(m) => json!(m),
    };
    let class_name = ctx.getattr(&cls, "__name__")?.as_str()?.to_string();
    let get_config = ctx.getattr(obj, "get_config")?;
    let config = ctx.call(&get_config, Args::new(vec![]))?;
    if !matches!(config, Value::Dict(_)) {
        let shown = ctx.repr(&config)?;
        let me = ctx.repr(obj)?;
        return Err(PyErr::type_error(format!(
            "The `get_config()` method of {me} should return a dict. It returned: {shown}"
        )));
    }
    let mut out = serde_json::Map::new();
    out.insert("module".into(), module);
    out.insert("class_name".into(), json!(class_name));
    out.insert("config".into(), value_json(&config, ctx)?);
    out.insert("registered_name".into(), json!(registered_name(&cls, ctx)?));
    if let Some(s) = LayerHandle::of(obj, ctx).and_then(|h| build_shape(&h)) {
        out.insert("build_config".into(), json!({ "input_shape": s }));
    }
    Ok(serde_json::Value::Object(out))
}

/// Keras's `TypeError` for a model (`class_repr`, its entry `top`) whose layer could not be
/// made: `deserialize_keras_object` wraps the `TypeError` its `from_config` raised.
pub fn not_deserialized(
    class_repr: &str,
    top: &serde_json::Value,
    e: PyErr,
    ctx: &mut dyn Ctx,
) -> PyErr {
    if e.type_name() != "TypeError" {
        return e;
    }
    let full = ctx.repr(&json_value(top)).unwrap_or_default();
    PyErr::type_error(format!(
        "{class_repr} could not be deserialized properly. Please ensure that components that are Python object instances (layers, models, etc.) returned by `get_config()` are explicitly deserialized in the model's `from_config()` method.\n\nconfig={full}.\n\nException encountered: {}",
        e.message()
    ))
}

/// Keras's `TypeError` for a class that neither the registry nor `custom_objects` names.
fn not_located(class_name: &str, entry: &serde_json::Value, ctx: &mut dyn Ctx) -> PyErr {
    let full = ctx.repr(&json_value(entry)).unwrap_or_default();
    PyErr::type_error(format!(
        "Could not locate class '{class_name}'. Make sure custom classes and functions are decorated with `@keras.saving.register_keras_serializable()`. If they are already decorated, make sure they are all imported so that the decorator is run before trying to load them. Full object config: {full}"
    ))
}

/// The object an entry of `config.json` describes, made by its class's `from_config` and
/// built by its `build_from_config`, as Keras's `deserialize_keras_object` makes it. The
/// class is looked up by its registered name (the open `custom_object_scope`, the
/// registry, then `custom_objects`).
pub fn from_entry(
    entry: &serde_json::Value,
    custom_objects: Option<&Value>,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let class_name = entry
        .get("class_name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_string();
    let registered = entry
        .get("registered_name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or(&class_name)
        .to_string();
    let Some(cls) = registered_object(&registered, custom_objects, ctx) else {
        return Err(not_located(&class_name, entry, ctx));
    };
    let config = json_value(entry.get("config").unwrap_or(&json!({})));
    let from_config = ctx.getattr(&cls, "from_config")?;
    let obj = match ctx.call(&from_config, Args::new(vec![config])) {
        Ok(obj) => obj,
        Err(e) => {
            let class = ctx.str(&cls)?;
            return Err(not_deserialized(&class, entry, e, ctx));
        }
    };
    if let Some(b) = entry.get("build_config").filter(|b| !b.is_null()) {
        let built = match LayerHandle::of(&obj, ctx) {
            Some(h) => super::super::layers::call::is_built(&h, ctx),
            None => true,
        };
        if !built {
            let f = ctx.getattr(&obj, "build_from_config")?;
            ctx.call(&f, Args::new(vec![json_value(b)]))?;
        }
    }
    Ok(obj)
}
