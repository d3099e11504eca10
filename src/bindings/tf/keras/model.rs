//! A Keras model as one native ([`ModelObj`]): `Sequential`, the functional
//! `Model(inputs, outputs)`, and the state behind an instance of a user's `Model` subclass.
//! It holds its layers (which own their variables), its compile settings, and, for a chain
//! of built-in layers, the compiled engine (one `keras::Replica`, or a `MirroredTrainer`
//! under a strategy) that `fit`, `evaluate` and `predict` run on. The engine keeps its own
//! device copy of the weights for speed; [`EngineVars`] keeps it and the layers' variables
//! the same (a variable's version tells whether it changed since the engine copied it).
//! Models the engine cannot run (a subclass, or layers of a user's own) train through the
//! op library instead (`op_trainer.rs`). `fit` and the progress display are in `fit.rs`.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::super::distribute::{active_strategy, warn_compile_outside_scope, Strategy};
use super::super::{bound, given, TfState};
use super::layers::build::build_builtin;
use super::layers::call::{call_layer, in_call, mark_built};
use super::layers::graph::Graph;
use super::layers::handle::{layer_weights, LayerHandle};
use super::layers::layer::{common_attr, dims_text, Dims, LayerCore, LayerObj};
use super::layers::KerasTensor;
use super::layers::{kerr, shape_arg};
use super::variable::keras_variable;
use crate::distribute::keras_model::MirroredTrainer;
use crate::keras::{
    initial_weights, CompileConfig, HostArray, LayerSpec, ModelConfig, Replica, Trainer,
};
use crate::lang::{Args, Ctx, Object, PyErr, PyResult, Value};
use crate::tensor::NdArray;

/// The engine model behind a built Keras model.
pub enum Engine {
    Single(Box<Replica>),
    Mirrored(Box<MirroredTrainer>),
}

impl Engine {
    pub fn trainer(&mut self) -> &mut dyn Trainer {
        match self {
            Engine::Single(r) => r.as_mut(),
            Engine::Mirrored(m) => m.as_mut(),
        }
    }
    pub fn trainer_ref(&self) -> &dyn Trainer {
        match self {
            Engine::Single(r) => r.as_ref(),
            Engine::Mirrored(m) => m.as_ref(),
        }
    }
    fn compile(&mut self, c: &CompileConfig) -> PyResult<()> {
        match self {
            Engine::Single(r) => r.compile(c),
            Engine::Mirrored(m) => m.compile(c),
        }
        .map_err(kerr)
    }
    /// Every replica's weights (one list outside a strategy).
    fn replica_weights(&self) -> PyResult<Vec<Vec<HostArray>>> {
        match self {
            Engine::Single(r) => Ok(vec![r.get_weights().map_err(kerr)?]),
            Engine::Mirrored(m) => m.replica_weights().map_err(kerr),
        }
    }
}

/// The layers' variables in the engine's order, and the version of every copy the engine
/// last matched.
#[derive(Default)]
pub struct EngineVars {
    vars: Vec<Value>,
    seen: Vec<Vec<u64>>,
}

impl EngineVars {
    fn new(vars: Vec<Value>) -> EngineVars {
        let mut v = EngineVars { vars, seen: vec![] };
        v.mark();
        v
    }

    fn versions(&self) -> Vec<Vec<u64>> {
        self.vars
            .iter()
            .map(|v| {
                keras_variable(v)
                    .map(|k| k.copies().iter().map(|c| c.version()).collect())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Records the variables' current versions as the engine's.
    fn mark(&mut self) {
        self.seen = self.versions();
    }

    /// Whether a variable changed since the engine last matched it.
    pub fn stale(&self) -> bool {
        self.seen != self.versions()
    }

    /// The variables' values (first copies), in the engine's order.
    pub fn host(&self) -> PyResult<Vec<HostArray>> {
        self.vars
            .iter()
            .map(|v| {
                let k = keras_variable(v)
                    .and_then(|k| k.primary())
                    .ok_or_else(|| PyErr::runtime_error("a model variable has no value"))?;
                let (shape, data) = k.snapshot().to_f32_vec();
                Ok(HostArray::new(shape, data))
            })
            .collect()
    }

    /// Writes the variables into the engine when one changed.
    pub fn push(&mut self, t: &mut dyn Trainer) -> PyResult<()> {
        if self.vars.is_empty() || !self.stale() {
            return Ok(());
        }
        t.set_weights(&self.host()?).map_err(kerr)?;
        self.mark();
        Ok(())
    }

    /// Writes every replica's engine weights into that replica's copy of each variable.
    fn pull_replicas(&mut self, per_replica: &[Vec<HostArray>]) -> PyResult<()> {
        for (i, v) in self.vars.iter().enumerate() {
            let Some(k) = keras_variable(v) else {
                continue;
            };
            let copies = k.copies();
            for (r, copy) in copies.iter().enumerate() {
                let Some(h) = per_replica
                    .get(r)
                    .or(per_replica.first())
                    .and_then(|w| w.get(i))
                else {
                    continue;
                };
                let a = NdArray::from_f32(&h.shape, h.data.clone())
                    .map_err(super::super::convert::tensor_err)?;
                copy.store(a).map_err(super::super::eager::op_err)?;
            }
        }
        self.mark();
        Ok(())
    }

    /// Writes the engine's weights (the trainer's view) into the variables.
    pub fn pull_from(&mut self, t: &dyn Trainer) -> PyResult<()> {
        if self.vars.is_empty() {
            return Ok(());
        }
        let w = t.get_weights().map_err(kerr)?;
        self.pull_replicas(&[w])
    }
}

/// What kind of model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    Sequential,
    /// `Model(inputs, outputs)`.
    Functional,
    /// A user's subclass of `Model`: layers are what the instance tracks.
    Subclassed,
}

pub struct ModelObj {
    pub kind: ModelKind,
    pub core: Rc<LayerCore>,
    /// The layers of a `Sequential` or functional chain, in order.
    pub layers: RefCell<Vec<Value>>,
    /// The input shape without the batch axis, once known.
    pub input_shape: RefCell<Option<Vec<usize>>>,
    pub input_name: RefCell<Option<String>>,
    pub engine: RefCell<Option<Engine>>,
    pub engine_vars: RefCell<EngineVars>,
    pub config: RefCell<Option<ModelConfig>>,
    pub compiled: RefCell<Option<CompileConfig>>,
    pub created_under: RefCell<Option<Value>>,
    pub compiled_under: RefCell<Option<Value>>,
    pub stop_training: Cell<bool>,
    /// `compile`'s `loss` argument as given: Keras's `model.loss`.
    pub loss_arg: RefCell<Value>,
    /// The strategy whose scope was active when the model was made: Keras creates the
    /// variables under it, even when the model is built later.
    pub scope_at_creation: Option<Value>,
    /// The optimizer of a model trained through the op library (`op_trainer.rs`).
    pub op_training: RefCell<Option<super::op_trainer::OpTraining>>,
    /// A functional model's graph: its inputs and outputs, and its layer calls.
    pub graph: RefCell<Option<Rc<Graph>>>,
    /// Whether calls run the graph (it is not a plain chain that the engine runs).
    pub runs_graph: Cell<bool>,
    /// Saves a callback asked for while `fit` holds the engine, done by fit's bridge when
    /// the callback's hook returns.
    pub pending_saves: RefCell<Vec<super::bridge::PendingSave>>,
}

/// Session-wide Keras state: automatic names, the weight seed counter, and the name scope
/// and `training` flag of the layer calls running now.
#[derive(Default)]
pub struct KerasState {
    pub names: crate::keras::NameScope,
    pub seed: u64,
    /// The names of the layers (and models) whose call or build is running, outermost
    /// first: variables made meanwhile take them as their path's prefix.
    pub scope: Vec<String>,
    /// The `training` flag of each running call, innermost last.
    pub training: Vec<bool>,
}

/// The seed of the next weights a layer or model initializes: the session's count of
/// initializations, mixed with `tf.random.set_seed`'s global seed when one is set (which
/// restarts the count), so that seeding again gives the same weights, as in Keras.
pub fn next_weight_seed(ctx: &mut dyn Ctx) -> u64 {
    let st = ctx.state().get::<TfState>();
    st.keras.seed += 1;
    match st.random.global {
        None => st.keras.seed,
        Some(g) => (g ^ 0x6b65_7261_735f_7365).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ st.keras.seed,
    }
}

impl ModelObj {
    pub(crate) fn new(
        kind: ModelKind,
        name: String,
        layers: Vec<Value>,
        input_shape: Option<Vec<usize>>,
        scope: Option<Value>,
    ) -> ModelObj {
        ModelObj {
            kind,
            core: Rc::new(LayerCore::new(name)),
            scope_at_creation: scope,
            layers: RefCell::new(layers),
            input_shape: RefCell::new(input_shape),
            input_name: RefCell::new(None),
            engine: RefCell::new(None),
            engine_vars: RefCell::new(EngineVars::default()),
            config: RefCell::new(None),
            compiled: RefCell::new(None),
            created_under: RefCell::new(None),
            compiled_under: RefCell::new(None),
            stop_training: Cell::new(false),
            loss_arg: RefCell::new(Value::None),
            op_training: RefCell::new(None),
            graph: RefCell::new(None),
            runs_graph: Cell::new(false),
            pending_saves: RefCell::new(Vec::new()),
        }
    }

    /// The graph that calls of this model run, when it is not a chain.
    pub fn running_graph(&self) -> Option<Rc<Graph>> {
        if self.runs_graph.get() {
            self.graph.borrow().clone()
        } else {
            None
        }
    }

    pub fn name(&self) -> String {
        self.core.name()
    }

    /// The Keras class name: `Sequential`, `Functional`, or the subclass's.
    pub fn class_name(&self) -> &'static str {
        match self.kind {
            ModelKind::Sequential => "Sequential",
            ModelKind::Functional => "Functional",
            ModelKind::Subclassed => "Model",
        }
    }

    /// The layers a native model holds (a subclass's are tracked, see `handle.rs`).
    pub fn layer_values(&self) -> Vec<Value> {
        self.layers.borrow().clone()
    }

    pub(crate) fn known_input_shape(&self) -> Option<Vec<usize>> {
        if let Some(s) = self.input_shape.borrow().clone() {
            return Some(s);
        }
        let layers = self.layers.borrow();
        layers
            .first()
            .and_then(|l| l.downcast::<LayerObj>())
            .and_then(|l| l.input_shape.clone())
    }

    pub fn is_built(&self) -> bool {
        self.core.built.get()
    }

    /// Whether the compiled engine runs this model (a chain of built-in layers, each once).
    pub fn has_engine(&self) -> bool {
        // While fit runs the engine is lent out, and so certainly present.
        self.engine.try_borrow().map_or(true, |e| e.is_some())
    }

    /// Whether every layer is a built-in one the engine can run, each appearing once.
    fn engine_runs(&self) -> bool {
        let layers = self.layers.borrow();
        let all_builtin = layers.iter().all(|l| {
            l.downcast::<LayerObj>()
                .is_some_and(|o| o.kind().is_some_and(|k| k.on_engine()))
        });
        let distinct = layers
            .iter()
            .enumerate()
            .all(|(i, l)| !layers[..i].iter().any(|o| o.is(l)));
        self.kind != ModelKind::Subclassed && all_builtin && distinct && !self.runs_graph.get()
    }

    /// The layers as the engine's description, when the model is a plain chain of built-in
    /// layers (a `Sequential` or a functional chain, each layer once): what saving writes,
    /// whether the engine or the op library runs the model.
    pub fn builtin_chain(&self) -> Option<Vec<LayerSpec>> {
        let layers = self.layers.borrow();
        let distinct = layers
            .iter()
            .enumerate()
            .all(|(i, l)| !layers[..i].iter().any(|o| o.is(l)));
        if self.kind == ModelKind::Subclassed || self.runs_graph.get() || !distinct {
            return None;
        }
        layers
            .iter()
            .map(|l| {
                let obj = l.downcast::<LayerObj>()?;
                Some(LayerSpec {
                    name: obj.core.name(),
                    kind: obj.kind()?.clone(),
                })
            })
            .collect()
    }

    /// Builds the model for `input_shape` (without the batch axis).
    pub fn build(&self, this: &Value, input_shape: &[usize], ctx: &mut dyn Ctx) -> PyResult<()> {
        if self.is_built() {
            return Ok(());
        }
        // Keras makes the variables under the scope the model was created in.
        let enter = match (&self.scope_at_creation, active_strategy(ctx)) {
            (Some(s), None) => Some(s.clone()),
            _ => None,
        };
        if let Some(s) = &enter {
            ctx.state().get::<TfState>().dist.stack.push(s.clone());
        }
        let r = self.build_in_scope(this, input_shape, ctx);
        if enter.is_some() {
            ctx.state().get::<TfState>().dist.stack.pop();
        }
        r
    }

    fn build_in_scope(
        &self,
        this: &Value,
        input_shape: &[usize],
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        *self.input_shape.borrow_mut() = Some(input_shape.to_vec());
        if self.input_name.borrow().is_none() {
            let n = super::layers::base::unique_name(ctx, "input_layer");
            *self.input_name.borrow_mut() = Some(n);
        }
        let mut dims: Dims = vec![None];
        dims.extend(input_shape.iter().map(|d| Some(*d)));
        if !self.engine_runs() {
            return self.build_by_calling(this, &dims, ctx);
        }
        let layers = self.layers.borrow().clone();
        let specs = self.builtin_chain().unwrap_or_default();
        let cfg = ModelConfig {
            name: self.name(),
            input_shape: input_shape.to_vec(),
            input_name: self.input_name.borrow().clone().unwrap_or_default(),
            layers: specs,
            functional: self.kind == ModelKind::Functional,
        };
        let plan = cfg.plan().map_err(kerr)?;
        let seed = crate::bindings::tf::keras::model::next_weight_seed(ctx);
        let mut init = initial_weights(&plan, seed).into_iter();
        let name = self.name();
        in_call(ctx, &name, false, |ctx| {
            for (i, l) in layers.iter().enumerate() {
                let Some(obj) = l.downcast::<LayerObj>() else {
                    continue;
                };
                let n = plan.vars.iter().filter(|v| v.layer == i).count();
                let values: Vec<HostArray> = init.by_ref().take(n).collect();
                let mut input: Dims = vec![None];
                input.extend(plan.in_shapes[i].iter().map(|d| Some(*d)));
                if obj.core.built.get() {
                    check_shared(obj, &input)?;
                } else {
                    build_builtin(obj, l, &input, Some(values), ctx)?;
                }
            }
            Ok(())
        })?;
        let vars: Vec<Value> = layers
            .iter()
            .filter_map(|l| l.downcast::<LayerObj>())
            .flat_map(|l| l.core.weights.borrow().clone())
            .collect();
        let ev = EngineVars::new(vars);
        let weights = ev.host()?;
        let strategy = self.scope_at_creation.clone();
        let engine = match strategy.as_ref().and_then(|s| s.downcast::<Strategy>()) {
            Some(s) => {
                let core = super::models::strategy_core(s, ctx)?;
                let t = MirroredTrainer::new(
                    core,
                    &cfg,
                    &weights,
                    self.compiled.borrow().as_ref(),
                    seed,
                )
                .map_err(kerr)?;
                Engine::Mirrored(Box::new(t))
            }
            None => {
                let mut r = Replica::new(
                    &cfg,
                    &weights,
                    Box::new(crate::device::cpu::CpuDevice::new(0)),
                )
                .map_err(kerr)?;
                if let Some(c) = self.compiled.borrow().as_ref() {
                    r.compile(c).map_err(kerr)?;
                }
                Engine::Single(Box::new(r))
            }
        };
        *self.created_under.borrow_mut() = strategy;
        *self.config.borrow_mut() = Some(cfg);
        *self.engine.borrow_mut() = Some(engine);
        *self.engine_vars.borrow_mut() = ev;
        *self.core.build_shape.borrow_mut() = Some(dims.clone());
        let out: Dims = std::iter::once(None)
            .chain(plan.output_shape().iter().map(|d| Some(*d)))
            .collect();
        *self.core.output_shape.borrow_mut() = Some(out);
        self.core.built.set(true);
        let _ = this;
        Ok(())
    }

    /// Builds a model the engine does not run by calling it once on a batch of zeros
    /// (every layer builds at its first call, as Keras builds such models symbolically).
    fn build_by_calling(
        &self,
        this: &Value,
        dims: &[Option<usize>],
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        let zeros = |features: &[usize]| -> PyResult<Value> {
            let mut shape = vec![1];
            shape.extend(features);
            let a = NdArray::zeros(&shape, crate::tensor::DType::F32)
                .map_err(super::super::convert::tensor_err)?;
            Ok(super::super::convert::tensor_value(a))
        };
        // A graph of several inputs is called on a list of them.
        let x = match self.running_graph() {
            Some(g) if g.inputs.len() > 1 => Value::list(
                g.input_features()
                    .iter()
                    .map(|f| zeros(f))
                    .collect::<PyResult<_>>()?,
            ),
            _ => zeros(
                dims.get(1..)
                    .unwrap_or(&[])
                    .iter()
                    .map(|d| d.unwrap_or(1))
                    .collect::<Vec<_>>()
                    .as_slice(),
            )?,
        };
        *self.created_under.borrow_mut() = self.scope_at_creation.clone();
        let e = super::super::eager::context(ctx);
        e.pause();
        let r = call_layer(this, Args::new(vec![x]), ctx);
        super::super::eager::context(ctx).resume();
        r?;
        *self.core.build_shape.borrow_mut() = Some(dims.to_vec());
        // The call ran on one example; a graph's output keeps its symbolic batch axis.
        if let Some(g) = self.running_graph() {
            let out = g.outputs.first().and_then(|o| o.downcast::<KerasTensor>());
            if let Some(o) = out {
                *self.core.output_shape.borrow_mut() = Some(o.shape.clone());
            }
        }
        if let Some(h) = LayerHandle::of(this, ctx) {
            mark_built(&h, ctx)?;
        }
        Ok(())
    }

    /// Builds from the shape of a call's first input (`layer(x)` on an unbuilt model).
    pub fn build_for(
        &self,
        this: &Value,
        input: &[Option<usize>],
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        if self.is_built() {
            return Ok(());
        }
        let shape = self
            .known_input_shape()
            .unwrap_or_else(|| input.iter().skip(1).map(|d| d.unwrap_or(1)).collect());
        if self.engine_runs() {
            return self.build(this, &shape, ctx);
        }
        // Layers build as the call runs; remember what the model was built for.
        *self.input_shape.borrow_mut() = Some(shape);
        *self.core.build_shape.borrow_mut() = Some(input.to_vec());
        *self.created_under.borrow_mut() = self.scope_at_creation.clone();
        self.core.built.set(true);
        Ok(())
    }

    /// Builds from the data's shape when the model has no input shape yet.
    pub fn ensure_built(
        &self,
        this: &Value,
        data_shape: &[usize],
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        if self.is_built() {
            return Ok(());
        }
        let shape = self
            .known_input_shape()
            .unwrap_or_else(|| data_shape.get(1..).unwrap_or(&[]).to_vec());
        self.build(this, &shape, ctx)
    }

    /// `model(x)` on data: the layers in order, each through `layer(x)`.
    pub fn call_on(
        &self,
        _this: &Value,
        x: &Value,
        training: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Value> {
        if let Some(g) = self.running_graph() {
            return g.run(x, training, ctx);
        }
        let layers = self.layer_values();
        let mut h = x.clone();
        for l in &layers {
            let args = Args::new(vec![h]).with_kw("training", Value::Bool(training));
            h = call_layer(l, args, ctx)?;
        }
        Ok(h)
    }

    /// Runs `f` on the engine, after writing into it any variable changed since.
    pub fn with_engine<T>(&self, f: impl FnOnce(&mut Engine) -> PyResult<T>) -> PyResult<T> {
        let mut guard = self.engine.try_borrow_mut().map_err(|_| {
            PyErr::runtime_error("the model is busy training; read its weights after fit returns")
        })?;
        match guard.as_mut() {
            Some(e) => {
                self.engine_vars.borrow_mut().push(e.trainer())?;
                f(e)
            }
            None => Err(PyErr::value_error(
                "This model has not yet been built. Build the model first by calling `build()` or by calling the model on a batch of data.",
            )),
        }
    }

    /// Writes the engine's weights (every replica's) into the layers' variables: after
    /// `fit`, and whenever the engine trained.
    pub fn pull_engine(&self) -> PyResult<()> {
        let guard = self.engine.try_borrow().map_err(|_| {
            PyErr::runtime_error("the model is busy training; read its weights after fit returns")
        })?;
        if let Some(e) = guard.as_ref() {
            let per = e.replica_weights()?;
            self.engine_vars.borrow_mut().pull_replicas(&per)?;
        }
        Ok(())
    }

    /// The model's variables' values, in Keras order, as the engine's host arrays.
    pub fn host_weights(&self, this: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<HostArray>> {
        let h = LayerHandle::of(this, ctx).ok_or_else(|| PyErr::runtime_error("not a model"))?;
        layer_weights(&h, ctx, None)?
            .iter()
            .filter_map(keras_variable)
            .map(|k| {
                let a = k
                    .primary()
                    .map(|v| v.snapshot())
                    .ok_or_else(|| PyErr::runtime_error("a model variable has no value"))?;
                let (shape, data) = a.to_f32_vec();
                Ok(HostArray::new(shape, data))
            })
            .collect()
    }

    fn compile(&self, this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind(
            "compile",
            &[
                "optimizer",
                "loss",
                "metrics",
                "loss_weights",
                "weighted_metrics",
                "run_eagerly",
                "steps_per_execution",
                "jit_compile",
            ],
            0,
        )?;
        let optimizer = super::optimizers::optimizer_arg(given(&s[0]))?;
        let cfg = match self.running_graph().filter(|g| g.outputs.len() > 1) {
            Some(g) => {
                if given(&s[4]).is_some_and(|v| !v.is_none()) {
                    return Err(PyErr::not_implemented(
                        "weighted_metrics for a model with several outputs is not supported \
                         here; give them in `metrics` (they then count every example once)",
                    ));
                }
                let names = super::heads::output_names(&g, ctx)?;
                let heads = super::heads::compile_heads(
                    &names,
                    &super::heads::output_shapes(&g),
                    given(&s[1]),
                    given(&s[3]),
                    given(&s[2]),
                    ctx,
                )?;
                CompileConfig::with_heads(optimizer, heads).map_err(kerr)?
            }
            None => {
                let loss = super::losses::loss_arg(given(&s[1]), ctx)?;
                let metrics = match given(&s[2]) {
                    None => vec![],
                    Some(v) => super::metrics::metric_specs(v, ctx)?,
                };
                let mut cfg = CompileConfig::new(optimizer, &loss.0, &metrics).map_err(kerr)?;
                if loss.1 {
                    cfg.loss = cfg.loss.with_logits();
                }
                if let Some(v) = given(&s[4]).filter(|v| !v.is_none()) {
                    let weighted = super::metrics::metric_specs(v, ctx)?;
                    cfg.add_weighted_metrics(&weighted).map_err(kerr)?;
                }
                cfg
            }
        };
        let created = self.created_under.borrow().clone();
        if self.is_built() {
            warn_compile_outside_scope(ctx, created.as_ref());
        }
        if self.has_engine() && self.is_built() {
            self.with_engine(|e| e.compile(&cfg))?;
        }
        *self.op_training.borrow_mut() = None;
        *self.compiled_under.borrow_mut() = active_strategy(ctx);
        *self.compiled.borrow_mut() = Some(cfg);
        *self.loss_arg.borrow_mut() = given(&s[1]).cloned().unwrap_or(Value::None);
        super::optimizers::bind_to_model(given(&s[0]), this);
        Ok(Value::None)
    }

    /// The output shape (with the batch axis) once known.
    pub fn output_dims(&self) -> Option<Dims> {
        self.core.output_shape.borrow().clone()
    }
}

/// A layer built before (shared with another model) must take this model's input there.
fn check_shared(l: &LayerObj, input: &[Option<usize>]) -> PyResult<()> {
    if let Some(spec) = l.core.input_spec.borrow().as_ref() {
        spec.check(&l.core.name(), 0, input)?;
    }
    Ok(())
}

/// `model.get_layer(name=None, index=None)`.
fn get_layer(layers: &[Value], args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("get_layer", &["name", "index"], 0)?;
    if let Some(i) = given(&s[1]) {
        let i = i.as_int()?;
        return usize::try_from(i)
            .ok()
            .and_then(|i| layers.get(i).cloned())
            .ok_or_else(|| {
                PyErr::value_error(format!(
                    "Was asked to retrieve layer at index {i} but model only has {} layers.",
                    layers.len()
                ))
            });
    }
    let Some(name) = given(&s[0]) else {
        return Err(PyErr::value_error(
            "Provide either a layer name or layer index at `get_layer`.",
        ));
    };
    let name = name.as_str()?;
    let mut names = vec![];
    for l in layers {
        let n = LayerHandle::of(l, ctx)
            .map(|h| h.core.name())
            .unwrap_or_default();
        if n == name {
            return Ok(l.clone());
        }
        names.push(crate::lang::str_repr(&n));
    }
    Err(PyErr::value_error(format!(
        "No such layer: {name}. Existing layers are: [{}].",
        names.join(", ")
    )))
}

/// The attributes every model has, for native models and a subclass's instances alike.
pub fn model_attr(
    m: &ModelObj,
    mv: &Value,
    this: &Value,
    name: &str,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    let handle =
        LayerHandle::of(this, ctx).ok_or_else(|| PyErr::runtime_error("the model has no state"))?;
    Ok(Some(match name {
        "layers" => Value::list(model_layers(m, &handle, ctx)?),
        "get_layer" => {
            let h = handle.clone();
            let mv = mv.clone();
            crate::lang::NativeFn::value("get_layer", "", move |a, c| {
                let layers = match mv.downcast::<ModelObj>() {
                    Some(m) => model_layers(m, &h, c)?,
                    None => vec![],
                };
                get_layer(&layers, a, c)
            })
        }
        "stop_training" => Value::Bool(m.stop_training.get()),
        "inputs" | "outputs" | "input" | "output" if m.graph.borrow().is_some() => {
            let Some(g) = m.graph.borrow().clone() else {
                return Ok(None);
            };
            match name {
                "inputs" => Value::list(g.inputs.clone()),
                "outputs" => Value::list(g.outputs.clone()),
                // As given: one tensor, a list, or a dict.
                "input" => g.input_struct.clone(),
                _ => g.output_struct.clone(),
            }
        }
        "distribute_strategy" => match m.created_under.borrow().clone() {
            Some(s) => s,
            None => super::super::distribute::current_or_default(ctx),
        },
        "optimizer" => match m.compiled.borrow().as_ref() {
            Some(_) => Value::native(super::optimizers::BoundOptimizer { model: mv.clone() }),
            None => Value::None,
        },
        "compile" => {
            let mv = mv.clone();
            crate::lang::NativeFn::value("compile", "", move |a, c| {
                match mv.downcast::<ModelObj>() {
                    Some(m) => m.compile(&mv, a, c),
                    None => Ok(Value::None),
                }
            })
        }
        "output_shape" => match m.output_dims() {
            Some(d) => super::layers::layer::dims_value(&d),
            None => {
                return Err(PyErr::attribute_error(format!(
                    "The layer {} has never been called and thus has no defined output shape.",
                    m.name()
                )))
            }
        },
        "predict" | "fit" | "evaluate" | "train_on_batch" | "test_on_batch"
        | "predict_on_batch" | "summary" | "save" | "save_weights" | "load_weights" | "loss" => {
            return super::fit::model_method(this, mv, name)
        }
        _ => return common_attr(&handle, this, name, ctx),
    }))
}

/// `model.layers`: a native model's own list, or what a subclass tracks.
pub fn model_layers(m: &ModelObj, h: &LayerHandle, ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
    match m.kind {
        ModelKind::Subclassed => h.sublayers(ctx),
        // A functional model lists its input layers too, in the graph's order.
        ModelKind::Functional => match m.graph.borrow().as_ref() {
            Some(g) => Ok(g.layers()),
            None => Ok(m.layer_values()),
        },
        _ => Ok(m.layer_values()),
    }
}

impl Object for ModelObj {
    fn type_name(&self) -> String {
        self.class_name().into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<{} name={}, built={}>",
            self.type_name(),
            self.name(),
            if self.is_built() { "True" } else { "False" }
        ))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        // A model whose input shape is known is built before anyone looks inside it.
        if !self.is_built() && !matches!(name, "add" | "compile" | "build" | "name" | "built") {
            if let Some(shape) = self.known_input_shape() {
                self.build(this, &shape, ctx)?;
            }
        }
        match name {
            "add" => {
                return Ok(Some(bound::<ModelObj>(this, name, |m, _, a, _| {
                    let s = a.bind("add", &["layer"], 1)?;
                    let l = s[0].clone().unwrap_or(Value::None);
                    if m.is_built() {
                        return Err(PyErr::runtime_error("this kernel cannot add layers to a model that is already built; add every layer before training"));
                    }
                    if let Some(t) = l.downcast::<super::layers::KerasTensor>() {
                        *m.input_shape.borrow_mut() = Some(t.features());
                        if let super::layers::Source::Input(layer) = &t.source {
                            if let Some(x) = layer.downcast::<LayerObj>() {
                                *m.input_name.borrow_mut() = Some(x.core.name());
                            }
                        }
                        return Ok(Value::None);
                    }
                    if let Some(x) = l.downcast::<LayerObj>().filter(|x| x.kind().is_none()) {
                        if let Some(shape) = x.input_shape.clone() {
                            *m.input_shape.borrow_mut() = Some(shape);
                        }
                        *m.input_name.borrow_mut() = Some(x.core.name());
                        return Ok(Value::None);
                    }
                    m.layers.borrow_mut().push(l);
                    Ok(Value::None)
                })))
            }
            "build" => {
                return Ok(Some(bound::<ModelObj>(this, name, |m, this, a, c| {
                    let s = a.bind("build", &["input_shape"], 1)?;
                    let shape = shape_arg(&super::models::strip_batch(
                        s[0].as_ref().unwrap_or(&Value::None),
                    ))?;
                    m.build(this, &shape, c)?;
                    Ok(Value::None)
                })))
            }
            "__call__" => {
                return Ok(Some(bound::<ModelObj>(this, name, |_, this, a, c| {
                    call_layer(this, a.clone(), c)
                })))
            }
            "get_weights" => {
                return Ok(Some(bound::<ModelObj>(this, name, |m, this, _, c| {
                    Ok(Value::list(
                        m.host_weights(this, c)?
                            .iter()
                            .map(super::weights::host_to_numpy)
                            .collect::<PyResult<_>>()?,
                    ))
                })))
            }
            "count_params" if !self.is_built() => {
                return Ok(Some(bound::<ModelObj>(this, name, |m, _, _, _| {
                    Err(PyErr::value_error(format!(
                        "You tried to call `count_params` on layer '{}', but the layer isn't \
                         built. You can build it manually via: `layer.build(input_shape)`.",
                        m.name()
                    )))
                })))
            }
            _ => {}
        }
        model_attr(self, this, this, name, ctx)
    }
    fn setattr(&self, name: &str, v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "stop_training" => self.stop_training.set(v.as_bool_strict()?),
            "trainable" => self.core.trainable.set(v.as_bool_strict()?),
            _ => {
                return Err(PyErr::attribute_error(format!(
                    "can't set attribute '{name}' of a {} model here",
                    self.type_name()
                )))
            }
        }
        Ok(())
    }
    fn call(&self, this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        call_layer(this, args, ctx)
    }
    fn class_chain(&self) -> Vec<String> {
        vec![
            self.type_name(),
            "Model".into(),
            "Layer".into(),
            "Operation".into(),
        ]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A shape for messages: `(None, 4)`.
pub fn shape_text(d: &[Option<usize>]) -> String {
    dims_text(d)
}
