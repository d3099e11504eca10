//! `tf.keras.callbacks`: the `Callback` base class users subclass (do-nothing hooks, with
//! `self.model` set before training), the [`CallbackList`] that fit/evaluate/predict use to
//! call every hook with a Keras-style `logs` dict, `History`, `LambdaCallback` (any hook),
//! `ProgbarLogger` and `RemoteMonitor` (refused: no network). The callbacks with rules of
//! their own are `Rule`s in their files (`schedules.rs`, `checkpoint.rs`, `plateau.rs`,
//! `csv_logger.rs`, `tensorboard.rs`, `nan.rs`). Everything reaches the model through Python
//! attribute access, so a callback sees the same model object the cell holds.

use std::any::Any;
use std::cell::RefCell;

use super::super::{address_of, bound, func, given};
use crate::display::{plain, MimeBundle};
use crate::lang::{Args, Ctx, Dict, NativeClass, NativeModule, Object, PyErr, PyResult, Value};

/// Every hook Keras calls, with the argument names it passes.
pub const HOOKS: &[&str] = &[
    "on_train_begin",
    "on_train_end",
    "on_epoch_begin",
    "on_epoch_end",
    "on_train_batch_begin",
    "on_train_batch_end",
    "on_batch_begin",
    "on_batch_end",
    "on_test_begin",
    "on_test_end",
    "on_test_batch_begin",
    "on_test_batch_end",
    "on_predict_begin",
    "on_predict_end",
    "on_predict_batch_begin",
    "on_predict_batch_end",
];

/// `obj.name = v` for a native or an interpreter object.
pub fn set_attr(ctx: &mut dyn Ctx, obj: &Value, name: &str, v: Value) -> PyResult<()> {
    match obj {
        Value::Native(o) => o.clone().setattr(name, v, ctx),
        // Instances of user classes (a `Callback` subclass) follow the interpreter's rules.
        Value::Obj(_) => ctx.setattr(obj, name, v),
        other => Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute '{name}'",
            other.type_name()
        ))),
    }
}

/// A Python float from any number-like value (a float, an int, a scalar tensor or array).
pub fn to_f64(ctx: &mut dyn Ctx, v: &Value) -> PyResult<f64> {
    if let Ok(x) = v.as_float() {
        return Ok(x);
    }
    let text = ctx.str(v)?;
    text.trim().parse::<f64>().map_err(|_| {
        PyErr::type_error(format!(
            "float() argument must be a string or a real number, not '{}'",
            v.type_name()
        ))
    })
}

/// The `logs` dict handed to callbacks: names in the order given, values as Python floats.
pub fn logs_dict(logs: &[(String, f64)]) -> Value {
    let mut d = Dict::default();
    for (k, v) in logs {
        d.insert_str(k, Value::Float(*v));
    }
    Value::Dict(std::rc::Rc::new(RefCell::new(d)))
}

/// The callbacks of one fit/evaluate/predict call, in Keras's order: the user's, then the
/// `History` that `fit` returns.
pub struct CallbackList {
    pub items: Vec<Value>,
}

impl CallbackList {
    /// The user's `callbacks=` argument (None, a list, or one callback).
    pub fn from_arg(arg: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<CallbackList> {
        let items = match arg {
            None => vec![],
            Some(v) => match v.as_seq() {
                Some(items) => items,
                None if v.downcast::<CallbackObj>().is_some() => vec![v.clone()],
                None => ctx.iterate(v)?,
            },
        };
        Ok(CallbackList { items })
    }

    /// Sets `model` (and `params`) on every callback, as Keras does before training.
    pub fn set_model(&self, ctx: &mut dyn Ctx, model: &Value, params: &Value) -> PyResult<()> {
        for cb in &self.items {
            let f = ctx.getattr(cb, "set_model")?;
            ctx.call(&f, Args::new(vec![model.clone()]))?;
            let f = ctx.getattr(cb, "set_params")?;
            ctx.call(&f, Args::new(vec![params.clone()]))?;
        }
        Ok(())
    }

    /// Whether some callback may read the model's weights in its batch hooks: a user's
    /// callback or LambdaCallback with batch hooks, or a rule that says so (a checkpoint
    /// every N batches). Fit keeps the layers' variables current at each batch only then,
    /// as copying them costs a step's worth of memory traffic.
    pub fn reads_weights_per_batch(&self) -> bool {
        self.items
            .iter()
            .any(|cb| match cb.downcast::<CallbackObj>() {
                None => true,
                Some(c) => match &c.kind {
                    Kind::Base | Kind::History { .. } => false,
                    Kind::Lambda(hooks) => hooks.iter().any(|(h, _)| h.contains("batch")),
                    Kind::Rule(r) => r.reads_weights_per_batch(),
                },
            })
    }

    /// The epoch a restoring callback continues from, after it loaded its weights through
    /// `load` (see `Rule::resume`); the last such callback has the final word, as each sets
    /// Keras's `model._initial_epoch` in turn.
    pub fn resume(&self, load: &mut dyn FnMut(&str) -> PyResult<()>) -> PyResult<Option<usize>> {
        let mut epoch = None;
        for cb in &self.items {
            if let Some(Kind::Rule(r)) = cb.downcast::<CallbackObj>().map(|c| &c.kind) {
                epoch = r.resume(load)?.or(epoch);
            }
        }
        Ok(epoch)
    }

    /// Calls `hook(*pos, logs=logs)` on every callback in order; the first error ends it.
    pub fn call(
        &self,
        ctx: &mut dyn Ctx,
        hook: &str,
        pos: Vec<Value>,
        logs: &Value,
    ) -> PyResult<()> {
        for cb in &self.items {
            Self::call_one(ctx, cb, hook, pos.clone(), logs)?;
        }
        Ok(())
    }

    /// Calls `hook(*pos, logs=logs)` on one callback.
    pub fn call_one(
        ctx: &mut dyn Ctx,
        cb: &Value,
        hook: &str,
        pos: Vec<Value>,
        logs: &Value,
    ) -> PyResult<()> {
        let f = ctx.getattr(cb, hook)?;
        ctx.call(&f, Args::new(pos).with_kw("logs", logs.clone()))?;
        Ok(())
    }
}

/// The hooks of the base class. Train/test batch hooks forward to `on_batch_*` as Keras's
/// base class does, so a subclass that overrides only `on_batch_end` is still called.
fn base_hook(name: &'static str) -> impl Fn(&Value, &Args, &mut dyn Ctx) -> PyResult<Value> {
    move |this, args, ctx| {
        let forward = match name {
            "on_train_batch_begin" => Some("on_batch_begin"),
            "on_train_batch_end" => Some("on_batch_end"),
            _ => None,
        };
        if let Some(target) = forward {
            let f = ctx.getattr(this, target)?;
            ctx.call(&f, args.clone())?;
        }
        Ok(Value::None)
    }
}

/// `tf.keras.callbacks.Callback`: subclassable, with `set_model`/`set_params` and no-op hooks.
pub fn callback_class() -> Value {
    let mut cls = NativeClass::new(
        "Callback",
        "keras.src.callbacks.callback",
        "Callback()\n\nBase class for training callbacks: override on_epoch_end(self, epoch, \
         logs=None) and friends; self.model is the model being trained.",
    )
    .constructor(|args, _ctx| {
        args.bind("Callback", &[], 0)?;
        Ok(CallbackObj::value(Kind::Base))
    })
    .method("__init__", |_, _, _| Ok(Value::None))
    .method("set_model", |this, args, ctx| {
        let s = args.bind("set_model", &["model"], 1)?;
        set_attr(ctx, this, "model", s[0].clone().unwrap_or(Value::None))?;
        Ok(Value::None)
    })
    .method("set_params", |this, args, ctx| {
        let s = args.bind("set_params", &["params"], 1)?;
        set_attr(ctx, this, "params", s[0].clone().unwrap_or(Value::None))?;
        Ok(Value::None)
    });
    for h in HOOKS {
        cls = cls.method(h, base_hook(h));
    }
    cls.into_value()
}

/// The state of a built-in callback. `schedules.rs` adds the rule-driven kinds.
pub enum Kind {
    /// A plain `Callback()`.
    Base,
    History {
        history: Value,
        epoch: Value,
    },
    /// `LambdaCallback(on_epoch_end=..., ...)`: hook name to user function.
    Lambda(Vec<(String, Value)>),
    Rule(Box<dyn super::schedules::Rule>),
}

/// A built-in callback instance: its model, params and kind-specific state.
pub struct CallbackObj {
    pub model: RefCell<Value>,
    pub params: RefCell<Value>,
    pub kind: Kind,
}

impl CallbackObj {
    pub fn value(kind: Kind) -> Value {
        Value::native(CallbackObj {
            model: RefCell::new(Value::None),
            params: RefCell::new(Value::dict_from(vec![])),
            kind,
        })
    }

    fn class_name(&self) -> String {
        match &self.kind {
            Kind::Base => "Callback".into(),
            Kind::History { .. } => "History".into(),
            Kind::Lambda(_) => "LambdaCallback".into(),
            Kind::Rule(r) => r.class_name().into(),
        }
    }

    /// Runs one hook for this callback's kind.
    fn hook(&self, name: &str, args: &Args, ctx: &mut dyn Ctx) -> PyResult<()> {
        match &self.kind {
            Kind::Base => Ok(()),
            Kind::History { history, epoch } => {
                if name == "on_train_begin" {
                    if let Value::List(l) = epoch {
                        l.borrow_mut().clear();
                    }
                }
                if name != "on_epoch_end" {
                    return Ok(());
                }
                let s = args.bind(name, &["epoch", "logs"], 1)?;
                if let Value::List(l) = epoch {
                    l.borrow_mut().push(s[0].clone().unwrap_or(Value::None));
                }
                let (Some(Value::Dict(logs)), Value::Dict(h)) = (given(&s[1]), history) else {
                    return Ok(());
                };
                for (k, v) in logs.borrow().items() {
                    let existing = h.borrow().get(k)?;
                    match existing {
                        Some(Value::List(list)) => list.borrow_mut().push(v.clone()),
                        _ => h
                            .borrow_mut()
                            .insert(k.clone(), Value::list(vec![v.clone()]))?,
                    }
                }
                Ok(())
            }
            Kind::Lambda(hooks) => {
                // Keras's LambdaCallback passes positional arguments only.
                let target = match name {
                    "on_train_batch_begin" => "on_batch_begin",
                    "on_train_batch_end" => "on_batch_end",
                    other => other,
                };
                if let Some((_, f)) = hooks.iter().find(|(h, _)| h == target) {
                    let mut pos = args.pos.clone();
                    pos.extend(args.kw.iter().map(|(_, v)| v.clone()));
                    ctx.call(f, Args::new(pos))?;
                }
                Ok(())
            }
            Kind::Rule(rule) => {
                let model = self.model.borrow().clone();
                rule.hook(name, args, &model, ctx)
            }
        }
    }
}

impl Object for CallbackObj {
    fn type_name(&self) -> String {
        self.class_name()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let module = match &self.kind {
            Kind::History { .. } => "keras.src.callbacks.history",
            Kind::Base => "keras.src.callbacks.callback",
            Kind::Lambda(_) => "keras.src.callbacks.lambda_callback",
            Kind::Rule(r) => r.module_path(),
        };
        Ok(format!(
            "<{module}.{} object at {}>",
            self.class_name(),
            address_of(self)
        ))
    }
    fn rich(&self, ctx: &mut dyn Ctx) -> PyResult<Option<MimeBundle>> {
        let Kind::History { history, .. } = &self.kind else {
            return Ok(None);
        };
        let mut b = plain(self.repr(ctx)?);
        let mut html = String::from(
            "<div><b>History</b><table><tr><th>key</th><th>epochs</th><th>last</th></tr>",
        );
        if let Value::Dict(d) = history {
            let rows: Vec<(Value, Value)> = d
                .borrow()
                .items()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (k, v) in rows {
                let vals = v.as_seq().unwrap_or_default();
                let last = match vals.last() {
                    Some(x) => format!("{:.4}", to_f64(ctx, x).unwrap_or(f64::NAN)),
                    None => String::new(),
                };
                html.push_str(&format!(
                    "<tr><td><code>{}</code></td><td>{}</td><td>{last}</td></tr>",
                    ctx.str(&k)?,
                    vals.len()
                ));
            }
        }
        html.push_str("</table></div>");
        b.insert("text/html".into(), serde_json::Value::String(html));
        Ok(Some(b))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if HOOKS.contains(&name) {
            let hook = name.to_string();
            return Ok(Some(bound::<CallbackObj>(
                this,
                name,
                move |cb, _, args, ctx| {
                    cb.hook(&hook, args, ctx)?;
                    Ok(Value::None)
                },
            )));
        }
        Ok(Some(match (name, &self.kind) {
            ("model", _) => self.model.borrow().clone(),
            ("params", _) => self.params.borrow().clone(),
            ("set_model", _) => bound::<CallbackObj>(this, name, |cb, _, args, _| {
                let s = args.bind("set_model", &["model"], 1)?;
                *cb.model.borrow_mut() = s[0].clone().unwrap_or(Value::None);
                Ok(Value::None)
            }),
            ("set_params", _) => bound::<CallbackObj>(this, name, |cb, _, args, _| {
                let s = args.bind("set_params", &["params"], 1)?;
                *cb.params.borrow_mut() = s[0].clone().unwrap_or(Value::None);
                Ok(Value::None)
            }),
            ("history", Kind::History { history, .. }) => history.clone(),
            ("epoch", Kind::History { epoch, .. }) => epoch.clone(),
            (other, Kind::Rule(r)) => match r.attr(other) {
                Some(v) => v,
                None => return Ok(None),
            },
            _ => return Ok(None),
        }))
    }
    fn setattr(&self, name: &str, v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "model" => *self.model.borrow_mut() = v,
            "params" => *self.params.borrow_mut() = v,
            _ => {
                return Err(PyErr::attribute_error(format!(
                    "'{}' object attribute '{name}' is read-only",
                    self.class_name()
                )))
            }
        }
        Ok(())
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.class_name(), "Callback".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A fresh `History`, as fit makes one per call.
pub fn new_history() -> Value {
    CallbackObj::value(Kind::History {
        history: Value::dict_from(vec![]),
        epoch: Value::list(vec![]),
    })
}

/// `LambdaCallback(on_epoch_begin=None, on_epoch_end=None, on_train_begin=None,
/// on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None, **kwargs)`: Keras
/// 3.15 sets every keyword as an attribute, so any hook (`on_test_end=...`,
/// `on_batch_end=...`) can be given; this accepts the hook names.
fn lambda_callback(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    const NAMED: [&str; 6] = [
        "on_epoch_begin",
        "on_epoch_end",
        "on_train_begin",
        "on_train_end",
        "on_train_batch_begin",
        "on_train_batch_end",
    ];
    if args.pos.len() > NAMED.len() {
        return Err(PyErr::type_error(format!(
            "LambdaCallback.__init__() takes from 1 to 7 positional arguments but {} were given",
            args.pos.len() + 1
        )));
    }
    let given_pos = NAMED
        .iter()
        .map(|n| n.to_string())
        .zip(args.pos.iter().cloned());
    let mut hooks: Vec<(String, Value)> = vec![];
    for (name, f) in given_pos.chain(args.kw.iter().cloned()) {
        if !HOOKS.contains(&name.as_str()) {
            return Err(PyErr::type_error(format!(
                "LambdaCallback got an unexpected keyword argument '{name}': only hooks \
                 (on_epoch_end, on_train_batch_begin, on_test_end, ...) are accepted here"
            )));
        }
        let name = name.replace("train_batch", "batch");
        if hooks.iter().any(|(h, _)| *h == name) {
            return Err(PyErr::type_error(format!(
                "LambdaCallback.__init__() got multiple values for argument '{name}'"
            )));
        }
        if !matches!(f, Value::None) {
            hooks.push((name, f));
        }
    }
    Ok(CallbackObj::value(Kind::Lambda(hooks)))
}

/// `ProgbarLogger()`: fit draws Keras's progress bar itself (one bar, at the `verbose` fit
/// was given, as Keras draws one whether or not this callback is in the list), so the
/// callback has nothing of its own to do.
struct ProgbarLogger;

impl super::schedules::Rule for ProgbarLogger {
    fn class_name(&self) -> &'static str {
        "ProgbarLogger"
    }
    fn module_path(&self) -> &'static str {
        "keras.src.callbacks.progbar_logger"
    }
    fn hook(&self, _: &str, _: &Args, _: &Value, _: &mut dyn Ctx) -> PyResult<()> {
        Ok(())
    }
    fn attr(&self, _name: &str) -> Option<Value> {
        None
    }
}

fn progbar_logger(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    args.bind("ProgbarLogger", &[], 0)?;
    Ok(CallbackObj::value(Kind::Rule(Box::new(ProgbarLogger))))
}

/// `RemoteMonitor` posts each epoch's logs to an HTTP server; the kernel has no network,
/// so it is refused when made rather than failing quietly at every epoch.
fn remote_monitor(_args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    Err(PyErr::not_implemented(
        "RemoteMonitor sends each epoch's logs to an HTTP server, and this kernel has no \
         network access. Use CSVLogger or TensorBoard to keep the logs in files instead.",
    ))
}

/// `tf.keras.callbacks`.
pub fn module() -> Value {
    let history = NativeClass::new("History", "keras.src.callbacks.history", "History()")
        .base("Callback")
        .constructor(|args, _| {
            args.bind("History", &[], 0)?;
            Ok(new_history())
        })
        .into_value();
    let m = NativeModule::new("keras.callbacks", "Training callbacks.")
        .with("Callback", callback_class())
        .with("History", history)
        .with(
            "LambdaCallback",
            func(
                "LambdaCallback",
                "LambdaCallback(on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, \
                 on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None, \
                 **kwargs)",
                lambda_callback,
            ),
        )
        .with(
            "ProgbarLogger",
            func("ProgbarLogger", "ProgbarLogger()", progbar_logger),
        )
        .with(
            "RemoteMonitor",
            func(
                "RemoteMonitor",
                "RemoteMonitor(root='http://localhost:9000', path='/publish/epoch/end/', \
                 field='data', headers=None, send_as_json=False)",
                remote_monitor,
            ),
        );
    super::schedules::register(&m);
    super::nan::register(&m);
    m.into_value()
}
