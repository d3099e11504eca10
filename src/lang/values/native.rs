//! Building blocks for bindings: a native function ([`NativeFn`]), a module of named
//! values ([`NativeModule`]), and a native class ([`NativeClass`]) that user classes may
//! subclass (`class MyCallback(tf.keras.callbacks.Callback)`). They implement [`Object`]
//! like any other native, so the interpreter treats them uniformly.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use super::exc::{PyErr, PyResult};
use super::object::{Args, Ctx, Object};
use super::value::Value;

type NativeBody = dyn Fn(&Args, &mut dyn Ctx) -> PyResult<Value>;

/// A function implemented in Rust. `doc` starts with the signature line, as `help()` shows.
pub struct NativeFn {
    pub name: String,
    pub doc: String,
    pub body: Rc<NativeBody>,
}

impl NativeFn {
    pub fn value(
        name: &str,
        doc: &str,
        body: impl Fn(&Args, &mut dyn Ctx) -> PyResult<Value> + 'static,
    ) -> Value {
        Value::native(NativeFn {
            name: name.to_string(),
            doc: doc.to_string(),
            body: Rc::new(body),
        })
    }
}

impl Object for NativeFn {
    fn type_name(&self) -> String {
        "builtin_function_or_method".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<built-in function {}>", self.name))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        (self.body)(&args, ctx)
    }
    fn doc(&self) -> Option<String> {
        Some(self.doc.clone())
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const NativeFn as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A module: a named namespace of values, e.g. `numpy` or `tensorflow.keras.layers`.
pub struct NativeModule {
    pub name: String,
    pub doc: String,
    pub attrs: RefCell<IndexMap<String, Value>>,
}

impl NativeModule {
    pub fn new(name: &str, doc: &str) -> NativeModule {
        NativeModule {
            name: name.to_string(),
            doc: doc.to_string(),
            attrs: RefCell::new(IndexMap::new()),
        }
    }

    /// Adds (or replaces) an attribute; returns `self` for chaining while building.
    pub fn with(self, name: &str, v: Value) -> NativeModule {
        self.attrs.borrow_mut().insert(name.to_string(), v);
        self
    }

    pub fn set(&self, name: &str, v: Value) {
        self.attrs.borrow_mut().insert(name.to_string(), v);
    }

    pub fn into_value(self) -> Value {
        Value::native(self)
    }
}

impl Object for NativeModule {
    fn type_name(&self) -> String {
        "module".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<module '{}'>", self.name))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "__name__" {
            return Ok(Some(Value::str(&self.name)));
        }
        Ok(self.attrs.borrow().get(name).cloned())
    }
    fn setattr(&self, name: &str, v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        self.set(name, v);
        Ok(())
    }
    fn dir(&self) -> Vec<String> {
        self.attrs.borrow().keys().cloned().collect()
    }
    fn doc(&self) -> Option<String> {
        Some(self.doc.clone())
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const NativeModule as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

type Method = dyn Fn(&Value, &Args, &mut dyn Ctx) -> PyResult<Value>;

/// A class implemented in Rust. Calling it runs `construct`. User classes may derive from
/// it: the interpreter then makes a plain instance, and attributes the user class does not
/// define are found in `properties` (computed from the instance on every read, as a Python
/// `property` is) and then `methods` (called with the instance as `this`), so a subclass of
/// `Callback` inherits do-nothing `on_epoch_end` and friends and a subclass of a Keras
/// `Layer` reads its `weights`. `bases` lists the names of native base classes for
/// `isinstance` and `issubclass`.
pub struct NativeClass {
    pub name: String,
    /// The dotted module path shown in reprs, e.g. `keras.src.callbacks.callback`.
    pub module: String,
    pub doc: String,
    pub bases: Vec<String>,
    pub construct: Option<Rc<NativeBody>>,
    pub methods: IndexMap<String, Rc<Method>>,
    /// Read-only properties of instances: the getter gets the instance as `this`.
    pub properties: IndexMap<String, Rc<Method>>,
    /// Attributes of the class itself (static methods such as
    /// `tf.data.Dataset.from_tensor_slices`), read as `Class.name`.
    pub statics: IndexMap<String, Value>,
}

impl NativeClass {
    pub fn new(name: &str, module: &str, doc: &str) -> NativeClass {
        NativeClass {
            name: name.to_string(),
            module: module.to_string(),
            doc: doc.to_string(),
            bases: vec![],
            construct: None,
            methods: IndexMap::new(),
            properties: IndexMap::new(),
            statics: IndexMap::new(),
        }
    }

    /// Adds an attribute of the class itself, e.g. a static constructor.
    pub fn static_attr(mut self, name: &str, value: Value) -> NativeClass {
        self.statics.insert(name.to_string(), value);
        self
    }

    pub fn base(mut self, name: &str) -> NativeClass {
        self.bases.push(name.to_string());
        self
    }

    pub fn constructor(
        mut self,
        body: impl Fn(&Args, &mut dyn Ctx) -> PyResult<Value> + 'static,
    ) -> NativeClass {
        self.construct = Some(Rc::new(body));
        self
    }

    pub fn method(
        mut self,
        name: &str,
        body: impl Fn(&Value, &Args, &mut dyn Ctx) -> PyResult<Value> + 'static,
    ) -> NativeClass {
        self.methods.insert(name.to_string(), Rc::new(body));
        self
    }

    /// A read-only property of instances, computed from the instance on every read.
    pub fn property(
        mut self,
        name: &str,
        getter: impl Fn(&Value, &Args, &mut dyn Ctx) -> PyResult<Value> + 'static,
    ) -> NativeClass {
        self.properties.insert(name.to_string(), Rc::new(getter));
        self
    }

    /// An attribute an instance of a subclass inherits from this class: a property's
    /// value, or a method bound to `this`.
    pub fn instance_attr(
        &self,
        this: &Value,
        name: &str,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        if let Some(getter) = self.properties.get(name).cloned() {
            return getter(this, &Args::default(), ctx).map(Some);
        }
        Ok(self.bound(this, name))
    }

    /// A method of this class bound to `this`, as a callable value.
    pub fn bound(&self, this: &Value, name: &str) -> Option<Value> {
        let m = self.methods.get(name)?.clone();
        let this = this.clone();
        Some(NativeFn::value(name, "", move |args, ctx| {
            m(&this, args, ctx)
        }))
    }

    pub fn into_value(self) -> Value {
        Value::native(self)
    }
}

impl Object for NativeClass {
    fn type_name(&self) -> String {
        "type".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<class '{}.{}'>", self.module, self.name))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        match &self.construct {
            Some(c) => c(&args, ctx),
            None => Err(PyErr::type_error(format!(
                "cannot create '{}' instances",
                self.name
            ))),
        }
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "__name__" => Some(Value::str(&self.name)),
            "__module__" => Some(Value::str(&self.module)),
            _ => self.statics.get(name).cloned(),
        })
    }
    fn dir(&self) -> Vec<String> {
        self.statics
            .keys()
            .chain(self.methods.keys())
            .chain(self.properties.keys())
            .cloned()
            .collect()
    }
    fn doc(&self) -> Option<String> {
        Some(self.doc.clone())
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const NativeClass as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
