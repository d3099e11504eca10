//! Any Keras layer as the code around it sees it ([`LayerHandle`]): a built-in layer, a
//! native model (`Sequential`, a functional model), or an instance of a user's subclass of
//! `Layer` or `Model`, each with its [`LayerCore`]. Collecting variables the way Keras does
//! lives here: a layer's `weights` are its own variables, then each sublayer's, each once;
//! `trainable_weights` and `non_trainable_weights` follow the `trainable` flags down the
//! tree.

use std::rc::Rc;

use super::super::model::ModelObj;
use super::super::track;
use super::super::variable::keras_variable;
use super::lambda::LambdaLayer;
use super::layer::{LayerCore, LayerObj};
use crate::lang::{Ctx, Object, PyResult, Value};

/// The attribute of a subclass instance that holds its core.
pub const CORE_ATTR: &str = "_keras_core";

/// The core of a user's `Layer` subclass instance, kept in [`CORE_ATTR`].
pub struct LayerState(pub Rc<LayerCore>);

impl Object for LayerState {
    fn type_name(&self) -> String {
        "LayerState".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<LayerState of {}>", self.0.name()))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// What kind of layer a handle holds.
#[derive(Clone)]
pub enum HandleKind {
    /// A built-in layer (`LayerObj`).
    Builtin,
    /// A model: the `ModelObj` value (the handle's `this` itself for `Sequential` and
    /// functional models; held in [`CORE_ATTR`] for a subclass of `Model`).
    Model(Value),
    /// An instance of a user's `Layer` subclass.
    Custom,
    /// A `Lambda` layer (`lambda.rs`): a native whose call is a Python function.
    Lambda,
}

/// A layer and its core.
#[derive(Clone)]
pub struct LayerHandle {
    pub this: Value,
    pub core: Rc<LayerCore>,
    pub kind: HandleKind,
}

impl LayerHandle {
    /// The handle of a value that is a layer or a model, if it is one.
    pub fn of(v: &Value, ctx: &mut dyn Ctx) -> Option<LayerHandle> {
        if let Some(l) = v.downcast::<LayerObj>() {
            return Some(LayerHandle {
                this: v.clone(),
                core: l.core.clone(),
                kind: HandleKind::Builtin,
            });
        }
        if let Some(l) = v.downcast::<LambdaLayer>() {
            return Some(LayerHandle {
                this: v.clone(),
                core: l.core.clone(),
                kind: HandleKind::Lambda,
            });
        }
        if let Some(m) = v.downcast::<ModelObj>() {
            return Some(LayerHandle {
                this: v.clone(),
                core: m.core.clone(),
                kind: HandleKind::Model(v.clone()),
            });
        }
        if !matches!(v, Value::Obj(_)) {
            return None;
        }
        let core = instance_core(v, ctx)?;
        Self::with_core(v, &core)
    }

    /// The handle of an instance whose core value is `core`.
    pub fn with_core(this: &Value, core: &Value) -> Option<LayerHandle> {
        if let Some(s) = core.downcast::<LayerState>() {
            return Some(LayerHandle {
                this: this.clone(),
                core: s.0.clone(),
                kind: HandleKind::Custom,
            });
        }
        core.downcast::<ModelObj>().map(|m| LayerHandle {
            this: this.clone(),
            core: m.core.clone(),
            kind: HandleKind::Model(core.clone()),
        })
    }

    pub fn core(&self) -> &LayerCore {
        &self.core
    }

    pub fn is_model(&self) -> bool {
        matches!(self.kind, HandleKind::Model(_))
    }

    /// The native model state of a model handle.
    pub fn model_value(&self) -> Option<&Value> {
        match &self.kind {
            HandleKind::Model(m) => Some(m),
            _ => None,
        }
    }

    /// Whether this is an instance of a user's subclass (its `call` is Python).
    pub fn is_subclass(&self) -> bool {
        matches!(self.this, Value::Obj(_))
    }

    /// The `trainable` flag as Python sees it (a subclass may have set the attribute).
    pub fn trainable(&self, ctx: &mut dyn Ctx) -> bool {
        if self.is_subclass() {
            if let Ok(v) = ctx.getattr(&self.this, "trainable") {
                if let Ok(b) = v.as_bool_strict() {
                    return b;
                }
            }
        }
        self.core.trainable.get()
    }

    /// The layers directly inside this one: a native model's layers, or what a subclass
    /// instance tracks in its attributes.
    pub fn sublayers(&self, ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
        if self.is_subclass() {
            return Ok(track::tracked(&self.this, ctx)?.layers);
        }
        match &self.kind {
            HandleKind::Model(m) => Ok(m
                .downcast::<ModelObj>()
                .map(|m| m.layer_values())
                .unwrap_or_default()),
            _ => Ok(vec![]),
        }
    }

    /// The variables this layer made, plus those a subclass tracks in its attributes
    /// (`self.w = keras.Variable(...)`).
    pub fn own_weights(&self, ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
        let mut own = self.core.weights.borrow().clone();
        if self.is_subclass() {
            for v in track::tracked(&self.this, ctx)?.variables {
                if !own.iter().any(|w| w.is(&v)) {
                    own.push(v);
                }
            }
        }
        Ok(own)
    }
}

/// The core value a subclass instance holds, if it holds one.
pub fn instance_core(v: &Value, ctx: &mut dyn Ctx) -> Option<Value> {
    let dict = ctx.getattr(v, "__dict__").ok()?;
    match dict {
        Value::Dict(d) => d.borrow().get_str(CORE_ATTR),
        _ => None,
    }
}

fn push_unique(out: &mut Vec<Value>, items: Vec<Value>) {
    for w in items {
        if !out.iter().any(|o| o.is(&w)) {
            out.push(w);
        }
    }
}

fn is_trainable_variable(v: &Value) -> bool {
    keras_variable(v).is_some_and(|k| k.trainable())
}

/// A layer's variables as Keras lists them: all (`None`), trainable (`Some(true)`) or
/// non-trainable (`Some(false)`).
pub fn layer_weights(
    h: &LayerHandle,
    ctx: &mut dyn Ctx,
    trainable: Option<bool>,
) -> PyResult<Vec<Value>> {
    let mut out = vec![];
    collect(h, ctx, trainable, &mut out, 0)?;
    Ok(out)
}

/// Keras nests layers only as deep as a program writes them; a cycle through attributes
/// (a layer holding its parent) stops here rather than recursing forever.
const MAX_DEPTH: usize = 64;

fn collect(
    h: &LayerHandle,
    ctx: &mut dyn Ctx,
    want: Option<bool>,
    out: &mut Vec<Value>,
    depth: usize,
) -> PyResult<()> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let trainable = h.trainable(ctx);
    let own = h.own_weights(ctx)?;
    match want {
        None => push_unique(out, own),
        Some(true) if !trainable => return Ok(()),
        Some(true) => push_unique(out, own.into_iter().filter(is_trainable_variable).collect()),
        Some(false) if !trainable => {
            let mut all = vec![];
            collect(h, ctx, None, &mut all, depth)?;
            push_unique(out, all);
            return Ok(());
        }
        Some(false) => push_unique(
            out,
            own.into_iter()
                .filter(|v| !is_trainable_variable(v))
                .collect(),
        ),
    }
    for sub in h.sublayers(ctx)? {
        if let Some(s) = LayerHandle::of(&sub, ctx) {
            collect(&s, ctx, want, out, depth + 1)?;
        }
    }
    Ok(())
}
