//! `tf.keras.models.load_model` / `tf.keras.saving.load_model`: a `.keras` archive (or a
//! legacy `.h5` file) back into a model, built under the active strategy's scope and compiled with its optimizer state
//! restored. The format and its file checks live in `keras::saving`; this file only
//! converts between the archive's contents and the model binding.

use std::path::Path;

pub mod custom;
pub mod graph;
pub mod objects;
pub mod registry;

use super::layers::handle::{LayerHandle, CORE_ATTR};
use super::layers::{kerr, Builtin, LayerObj};
use super::model::{model_layers, ModelKind, ModelObj};
use super::track::attributes;
use super::variable::keras_variable;
use crate::bindings::tf::distribute::active_strategy;
use crate::bindings::tf::{func, given};
use crate::keras::saving::hdf5::keras3::{LayerWeights, Loaded};
use crate::keras::HostArray;
use crate::keras::LayerKind;
use crate::keras::Trainer;
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};
use crate::tensor::NdArray;

/// `load_model(filepath, custom_objects=None, compile=True, safe_mode=True)`.
pub fn load_model(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "load_model",
        &["filepath", "custom_objects", "compile", "safe_mode"],
        1,
    )?;
    let path = s[0].as_ref().unwrap_or(&Value::None).as_str()?.to_string();
    let compile = match given(&s[2]) {
        Some(v) => v.as_bool_strict()?,
        None => true,
    };
    let custom_objects = given(&s[1]).cloned();
    let custom_objects = custom_objects.as_ref();
    if path.ends_with(".keras") {
        // A model that is a user's class or holds one is made through those classes; a
        // file that cannot be read is `load_any`'s to report.
        if let Ok((config, weights)) = crate::keras::saving::read_archive(Path::new(&path)) {
            if crate::keras::saving::holds_custom(&config) {
                if config.get("class_name").and_then(|c| c.as_str()) != Some("Functional") {
                    return objects::load(&path, &config, weights, compile, custom_objects, ctx);
                }
                let saved = crate::keras::saving::SavedGraph {
                    graph: crate::keras::saving::graph::GraphConfig::from_json(&config)
                        .map_err(kerr)?,
                    compile: config
                        .get("compile_config")
                        .filter(|c| c.as_object().is_some_and(|o| !o.is_empty()))
                        .cloned(),
                    weights,
                    legacy: false,
                };
                return graph::load(&path, &saved, compile, custom_objects, ctx).map_err(|e| {
                    // Keras shows the model's entry after `functional_from_config` has
                    // taken its graph out of `config`.
                    let mut shown = config.clone();
                    if let Some(c) = shown.get_mut("config").and_then(|c| c.as_object_mut()) {
                        c.clear();
                    }
                    custom::not_deserialized(
                        "<class 'keras.src.models.functional.Functional'>",
                        &shown,
                        e,
                        ctx,
                    )
                });
            }
        }
    }
    let saved = match crate::keras::saving::load_any(Path::new(&path)).map_err(kerr)? {
        crate::keras::saving::Loaded::Model(m) => m,
        crate::keras::saving::Loaded::Graph(g) => {
            return graph::load(&path, &g, compile, custom_objects, ctx)
        }
    };
    if let Some(note) = &saved.note {
        super::schedules::warn(ctx, note);
    }
    let layers: Vec<Value> = saved
        .config
        .layers
        .iter()
        .map(|spec| {
            Value::native(LayerObj::new(
                Builtin::Kind(spec.kind.clone()),
                None,
                spec.name.clone(),
            ))
        })
        .collect();
    let scope = active_strategy(ctx);
    let kind = if saved.config.functional {
        ModelKind::Functional
    } else {
        ModelKind::Sequential
    };
    let m = ModelObj::new(
        kind,
        saved.config.name.clone(),
        layers,
        Some(saved.config.input_shape.clone()),
        scope.clone(),
    );
    *m.input_name.borrow_mut() = Some(saved.config.input_name.clone());
    if compile {
        *m.compiled.borrow_mut() = saved.compile.clone();
        *m.compiled_under.borrow_mut() = scope;
    }
    let v = Value::native(m);
    let model = v
        .downcast::<ModelObj>()
        .ok_or_else(|| PyErr::runtime_error("load_model: the model was not made"))?;
    model.build(&v, &saved.config.input_shape, ctx)?;
    let restore = |t: &mut dyn Trainer| {
        t.set_weights(&saved.weights).map_err(kerr)?;
        if let (true, Some(opt)) = (compile, &saved.optimizer) {
            t.set_optimizer_state(opt).map_err(kerr)?;
        }
        Ok(())
    };
    if model.has_engine() {
        model.with_engine(|e| restore(e.trainer()))?;
        model.pull_engine()?;
    } else {
        // Normalizations and layers without variables run on the op library's trainer.
        super::fit::with_op_trainer(model, &v, &v, ctx, restore)?;
    }
    Ok(v)
}

/// `tf.keras.saving`: the functions Keras 3 keeps there.
pub fn saving_module() -> Value {
    let m = NativeModule::new("keras.saving", "Saving and loading Keras models.");
    for (name, f) in registry::members() {
        m.set(name, f);
    }
    m.with(
        "load_model",
        func(
            "load_model",
            "load_model(filepath, custom_objects=None, compile=True, safe_mode=True)",
            load_model,
        ),
    )
    .into_value()
}

/// One object a weights file holds: its path in Keras 3's layout, its name, its variables
/// and the object itself (for Keras's error messages). `again` marks a later path to an
/// object met before: saving skips it, loading tries it when the first path failed (Keras
/// marks only what loaded as visited, so a subclass's layer missing at its attribute's
/// path is looked for again under `layers/`).
#[derive(Clone)]
struct Saveable {
    path: String,
    name: String,
    vars: Vec<Value>,
    object: Value,
    again: bool,
}

/// Keras's `file_utils.join` of a path inside the file.
fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}/{name}")
    }
}

/// Nesting deeper than a program writes (or a cycle Keras's `visited` set would stop) ends
/// the walk here.
const MAX_DEPTH: usize = 64;

/// The walk over a model's objects: what it met, and the entries found so far.
#[derive(Default)]
struct Walk {
    seen: Vec<Value>,
    out: Vec<Saveable>,
}

impl Walk {
    fn push(&mut self, path: String, name: String, vars: Vec<Value>, object: &Value) {
        self.out.push(Saveable {
            path,
            name,
            vars,
            object: object.clone(),
            again: false,
        });
    }

    /// The objects of `v` and below as Keras's `_save_state` walks them: the object's own
    /// variables (trainable first, as `save_own_variables` lists them) at `path`; a
    /// Sequential or functional model's `layers` as a list; a subclass's attributes in
    /// sorted order (as `dir()` gives them, a subclassed model's `layers` among them), a
    /// layer under its attribute's name and a list, tuple or dict under the attribute's
    /// name; each object once, at the first path that reaches it (later ones marked
    /// `again`). A recurrent layer keeps its variables in its `cell`.
    fn object(&mut self, v: &Value, path: String, ctx: &mut dyn Ctx, depth: usize) -> PyResult<()> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        if self.seen.iter().any(|s| s.is(v)) {
            // The entries of the first path (a recurrent layer's two), at this one.
            let first: Vec<Saveable> = self
                .out
                .iter()
                .filter(|s| s.object.is(v) && !s.again)
                .cloned()
                .collect();
            let base = first.first().map_or(0, |f| f.path.len());
            for f in first {
                self.out.push(Saveable {
                    path: format!("{path}{}", f.path.get(base..).unwrap_or_default()),
                    again: true,
                    ..f
                });
            }
            return Ok(());
        }
        let Some(h) = LayerHandle::of(v, ctx) else {
            return Ok(());
        };
        self.seen.push(v.clone());
        let (trainable, frozen): (Vec<Value>, Vec<Value>) = h
            .own_weights(ctx)?
            .into_iter()
            .partition(|w| keras_variable(w).is_some_and(|k| k.trainable()));
        let vars: Vec<Value> = trainable.into_iter().chain(frozen).collect();
        let name = h.core().name();
        match v.downcast::<LayerObj>().and_then(|l| l.kind().cloned()) {
            Some(LayerKind::Recurrent(r)) => {
                self.push(path.clone(), name, vec![], v);
                self.push(join(&path, "cell"), r.cell_scope().to_string(), vars, v);
            }
            Some(LayerKind::Bidirectional(b)) => {
                // Each direction is a recurrent layer with its variables in its cell.
                self.push(path.clone(), name, vec![], v);
                let n = (2 + usize::from(b.forward.use_bias)).min(vars.len());
                let (fwd, bwd) = vars.split_at(n);
                for (sub, r, own, part) in [
                    ("forward_layer", &b.forward, &b.forward_name, fwd),
                    ("backward_layer", &b.backward, &b.backward_name, bwd),
                ] {
                    let at = join(&path, sub);
                    self.push(at.clone(), own.clone(), vec![], v);
                    self.push(
                        join(&at, "cell"),
                        r.cell_scope().to_string(),
                        part.to_vec(),
                        v,
                    );
                }
            }
            _ => self.push(path.clone(), name, vars, v),
        }
        let mut attrs = vec![];
        if let Some(m) = h.model_value().and_then(|mv| mv.downcast::<ModelObj>()) {
            let layers = Value::list(model_layers(m, &h, ctx)?);
            if m.kind != ModelKind::Subclassed {
                return self.list(&layers, &join(&path, "layers"), ctx, depth);
            }
            attrs.push(("layers".to_string(), layers));
        }
        if !h.is_subclass() {
            return Ok(());
        }
        for (attr, value) in attributes(v, ctx)? {
            if attr == CORE_ATTR || attr.starts_with("__") {
                continue;
            }
            match attrs.iter_mut().find(|(a, _)| *a == attr) {
                Some(a) => a.1 = value,
                None => attrs.push((attr, value)),
            }
        }
        attrs.sort_by(|a, b| a.0.cmp(&b.0));
        for (attr, value) in attrs {
            let at = join(&path, &attr);
            if container(&value).is_some() {
                self.list(&value, &at, ctx, depth)?;
            } else if LayerHandle::of(&value, ctx).is_some() {
                self.object(&value, at, ctx, depth + 1)?;
            }
        }
        Ok(())
    }

    /// A container's entries as Keras's `_save_container_state` names them: a layer by its
    /// snake-case class name, a list inside by `container`, each numbered within the
    /// container (`blocks/dense`, `blocks/dense_1`, `blocks/container`); anything else is
    /// not saved.
    fn list(&mut self, list: &Value, path: &str, ctx: &mut dyn Ctx, depth: usize) -> PyResult<()> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        let mut items = vec![];
        for item in container(list).unwrap_or_default() {
            if container(&item).is_some() {
                items.push((None, item));
            } else if LayerHandle::of(&item, ctx).is_some() {
                items.push((Some(item.type_name()), item));
            }
        }
        let classes = items
            .iter()
            .map(|(c, _)| c.as_deref().unwrap_or("container"));
        let keys = crate::keras::saving::naming::container_names(classes);
        for ((class, item), key) in items.iter().zip(keys) {
            let at = join(path, &key);
            match class {
                None => self.list(item, &at, ctx, depth + 1)?,
                Some(_) => self.object(item, at, ctx, depth + 1)?,
            }
        }
        Ok(())
    }
}

/// The items of a list, tuple or dict (its values), as Keras walks a container.
fn container(v: &Value) -> Option<Vec<Value>> {
    match v {
        Value::List(_) | Value::Tuple(_) => v.as_seq(),
        Value::Dict(d) => Some(d.borrow().items().map(|(_, x)| x.clone()).collect()),
        _ => None,
    }
}

/// The objects of the model `this` in Keras 3's weights layout.
fn saveables(this: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<Saveable>> {
    let mut walk = Walk::default();
    walk.object(this, String::new(), ctx, 0)?;
    Ok(walk.out)
}

/// `save_weights` of a model the engine does not describe (a functional graph that is not
/// a chain, a subclass, a model holding a user's layers) in Keras 3's layout.
pub fn save_tracked_weights(
    m: &ModelObj,
    this: &Value,
    path: &str,
    ctx: &mut dyn Ctx,
) -> PyResult<()> {
    let layers = tracked_layers(this, ctx)?;
    crate::keras::saving::save_layer_weights(Path::new(path), &m.name(), &layers).map_err(kerr)
}

/// The variables of each object of the model `this`, at its path in Keras 3's layout.
fn tracked_layers(this: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<LayerWeights>> {
    let mut layers = vec![];
    for s in saveables(this, ctx)?.into_iter().filter(|s| !s.again) {
        let mut held = Vec::with_capacity(s.vars.len());
        for v in &s.vars {
            let a = keras_variable(v)
                .and_then(|k| k.primary())
                .map(|c| c.snapshot())
                .ok_or_else(|| PyErr::runtime_error("a model variable has no value"))?;
            let (shape, data) = a.to_f32_vec();
            held.push(HostArray::new(shape, data));
        }
        layers.push(LayerWeights {
            path: s.path,
            name: s.name,
            vars: held,
        });
    }
    Ok(layers)
}

/// `load_weights` of such a model from Keras 3's layout: every variable of every object,
/// matched by the object's path, as Keras matches them; objects whose variables the file
/// does not hold are Keras's `ValueError` listing them.
pub fn load_tracked_weights(
    m: &ModelObj,
    this: &Value,
    path: &str,
    ctx: &mut dyn Ctx,
) -> PyResult<()> {
    load_tracked_from(m, this, ctx, |wanted| {
        crate::keras::saving::load_layer_weights(Path::new(path), wanted)
    })
}

/// Loads every object's variables from what `read` finds at the objects' paths (a
/// `.weights.h5` file, or the `model.weights.h5` of a `.keras` archive).
fn load_tracked_from(
    m: &ModelObj,
    this: &Value,
    ctx: &mut dyn Ctx,
    read: impl FnOnce(&[(String, Vec<Vec<usize>>)]) -> crate::keras::KResult<Vec<Loaded>>,
) -> PyResult<()> {
    if !m.is_built() {
        return Err(PyErr::value_error(
            "You are loading weights into a model that has not yet been built. Try building the model first by calling it on some data or by using `build()`.",
        ));
    }
    let objects = saveables(this, ctx)?;
    let wanted: Vec<(String, Vec<Vec<usize>>)> = objects
        .iter()
        .map(|s| {
            let shapes = s
                .vars
                .iter()
                .filter_map(keras_variable)
                .filter_map(|k| k.primary().map(|c| c.shape().to_vec()))
                .collect();
            (s.path.clone(), shapes)
        })
        .collect();
    let read = read(&wanted).map_err(kerr)?;
    // Keras's `error_msgs`: each object that did not load, with its repr and message, in
    // the order they first failed; a later path that loads it takes it off.
    let mut failed: Vec<(Value, String, String)> = vec![];
    let mut loaded: Vec<Value> = vec![];
    for (s, read) in objects.iter().zip(read) {
        if s.again && loaded.iter().any(|o| o.is(&s.object)) {
            continue;
        }
        let msg = match read {
            Loaded::Values(values) => {
                for (v, w) in s.vars.iter().zip(values) {
                    if let Some(k) = keras_variable(v) {
                        let a = NdArray::from_f32(&w.shape, w.data)
                            .map_err(super::super::convert::tensor_err)?;
                        k.store(&a)?;
                    }
                }
                failed.retain(|(o, _, _)| !o.is(&s.object));
                loaded.push(s.object.clone());
                continue;
            }
            Loaded::Count(held) => {
                let mut names = Vec::with_capacity(s.vars.len());
                for v in &s.vars {
                    let n = ctx.getattr(v, "name")?;
                    names.push(crate::lang::str_repr(&ctx.str(&n)?));
                }
                format!(
                    "Layer '{}' expected {} variables, but received {held} variables during loading. Expected: [{}]",
                    s.name,
                    s.vars.len(),
                    names.join(", ")
                )
            }
            Loaded::Unfit(why) => why,
        };
        match failed.iter_mut().find(|(o, _, _)| o.is(&s.object)) {
            Some(f) => f.2 = msg,
            None => failed.push((s.object.clone(), ctx.repr(&s.object)?, msg)),
        }
    }
    match failed.first() {
        None => Ok(()),
        Some((_, object, msg)) => {
            let all: Vec<&str> = failed.iter().map(|(_, o, _)| o.as_str()).collect();
            Err(PyErr::value_error(format!(
                "A total of {} objects could not be loaded. Example error message for object {object}:\n\n{msg}\n\nList of objects that could not be loaded:\n[{}]",
                failed.len(),
                all.join(", ")
            )))
        }
    }
}
