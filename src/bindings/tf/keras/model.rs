//! `tf.keras.Sequential` and the functional `Model(inputs, outputs)` as one native: the
//! layer list, building (Keras names from the session's name scope, initial weights, one
//! engine replica or a mirrored trainer when a strategy's scope is active), `compile`,
//! weights, `model(x)`, `predict`, `evaluate`, and the scope checks Keras makes. `fit` and
//! the progress display are in `fit.rs`.

use std::any::Any;
use std::cell::{Cell, RefCell};

use super::super::convert::to_array;
use super::super::distribute::{active_strategy, warn_compile_outside_scope, Strategy};
use super::super::{bound, given, TfState};
use super::layers::{kerr, shape_arg, LayerObj};
use crate::distribute::keras_model::MirroredTrainer;
use crate::keras::{initial_weights, CompileConfig, HostArray, ModelConfig, Replica, Trainer};
use crate::lang::{Args, Ctx, Object, PyErr, PyResult, Value};
use crate::tensor::{DType, NdArray};

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
}

pub struct ModelObj {
    pub layers: RefCell<Vec<Value>>,
    pub input_shape: RefCell<Option<Vec<usize>>>,
    pub functional: bool,
    pub name: Option<String>,
    pub engine: RefCell<Option<Engine>>,
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
    /// The weights a callback sees while `fit` holds the engine.
    pub live: super::live::Live,
}

/// Session-wide Keras state: the automatic layer names and the weight seed counter.
#[derive(Default)]
pub struct KerasState {
    pub names: crate::keras::NameScope,
    pub seed: u64,
}

impl ModelObj {
    pub(crate) fn new(
        layers: Vec<Value>,
        input_shape: Option<Vec<usize>>,
        functional: bool,
        name: Option<String>,
        scope: Option<Value>,
    ) -> ModelObj {
        ModelObj {
            scope_at_creation: scope,
            layers: RefCell::new(layers),
            input_shape: RefCell::new(input_shape),
            functional,
            name,
            engine: RefCell::new(None),
            config: RefCell::new(None),
            compiled: RefCell::new(None),
            created_under: RefCell::new(None),
            compiled_under: RefCell::new(None),
            stop_training: Cell::new(false),
            loss_arg: RefCell::new(Value::None),
            live: Default::default(),
        }
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
        // While fit runs the engine is lent out, and so certainly built.
        self.engine.try_borrow().map_or(true, |e| e.is_some())
    }

    /// Builds the engine model for `input_shape` (without the batch axis).
    pub fn build(&self, this: &Value, input_shape: &[usize], ctx: &mut dyn Ctx) -> PyResult<()> {
        if self.is_built() {
            return Ok(());
        }
        let layers = self.layers.borrow().clone();
        let kinds: Vec<_> = layers
            .iter()
            .filter_map(|l| l.downcast::<LayerObj>())
            .filter_map(|l| l.kind.clone())
            .collect();
        let (mut cfg, seed) = {
            let st = &mut ctx.state().get::<TfState>().keras;
            st.seed += 1;
            let cfg = ModelConfig::named(&mut st.names, self.functional, input_shape, kinds)
                .map_err(kerr)?;
            (cfg, st.seed)
        };
        if let Some(n) = &self.name {
            cfg.name = n.clone();
        }
        let built: Vec<&LayerObj> = layers
            .iter()
            .filter_map(|l| l.downcast::<LayerObj>())
            .filter(|l| l.kind.is_some())
            .collect();
        for (spec, l) in cfg.layers.iter_mut().zip(&built) {
            if let Some(n) = l.name.borrow().clone() {
                spec.name = n;
            }
        }
        let plan = cfg.plan().map_err(kerr)?;
        let weights = initial_weights(&plan, seed);
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
        for (i, l) in built.iter().enumerate() {
            *l.name.borrow_mut() = cfg.layers.get(i).map(|s| s.name.clone());
            *l.owner.borrow_mut() = Some((this.clone(), i));
        }
        *self.created_under.borrow_mut() = strategy;
        *self.config.borrow_mut() = Some(cfg);
        *self.engine.borrow_mut() = Some(engine);
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

    pub fn with_engine<T>(&self, f: impl FnOnce(&mut Engine) -> PyResult<T>) -> PyResult<T> {
        let mut guard = self.engine.try_borrow_mut().map_err(|_| {
            PyErr::runtime_error("the model is busy training; read its weights after fit returns")
        })?;
        match guard.as_mut() {
            Some(e) => f(e),
            None => Err(PyErr::value_error(
                "This model has not yet been built. Build the model first by calling `build()` or by calling the model on a batch of data.",
            )),
        }
    }

    fn weights(&self) -> PyResult<Vec<HostArray>> {
        if let Some(ws) = self.live.read() {
            return Ok(ws);
        }
        self.with_engine(|e| e.trainer_ref().get_weights().map_err(kerr))
    }

    /// Runs the model forward on `x` (all rows), returning an array of the output shape.
    pub fn forward(
        &self,
        this: &Value,
        x: &Value,
        batch: usize,
        ctx: &mut dyn Ctx,
    ) -> PyResult<NdArray> {
        let a = to_array(x, Some(DType::F32), false, ctx)?;
        self.ensure_built(this, a.shape(), ctx)?;
        let (_, data) = a.to_f32_vec();
        let n = a.shape().first().copied().unwrap_or(0);
        let flag = ctx.interrupt_flag();
        let (out, shape) = self.with_engine(|e| {
            let t = e.trainer();
            let out = crate::keras::predict(t, &data, batch, Some(&flag)).map_err(kerr)?;
            Ok((out, t.plan().output_shape().to_vec()))
        })?;
        let mut dims = vec![n];
        dims.extend(shape);
        NdArray::from_f32(&dims, out).map_err(super::super::convert::tensor_err)
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
        let loss = super::losses::loss_arg(given(&s[1]), ctx)?;
        let metrics = match given(&s[2]) {
            None => vec![],
            Some(v) => super::metrics::metric_specs(v, ctx)?,
        };
        let mut cfg = CompileConfig::new(optimizer, &loss.0, &metrics).map_err(kerr)?;
        if loss.1 {
            cfg.loss = cfg.loss.with_logits();
        }
        let created = self.created_under.borrow().clone();
        if self.is_built() {
            warn_compile_outside_scope(ctx, created.as_ref());
            self.with_engine(|e| e.compile(&cfg))?;
        }
        *self.compiled_under.borrow_mut() = active_strategy(ctx);
        *self.compiled.borrow_mut() = Some(cfg);
        *self.loss_arg.borrow_mut() = given(&s[1]).cloned().unwrap_or(Value::None);
        super::optimizers::bind_to_model(given(&s[0]), this);
        Ok(Value::None)
    }
}

impl Object for ModelObj {
    fn type_name(&self) -> String {
        if self.functional {
            "Functional"
        } else {
            "Sequential"
        }
        .into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let name = self
            .config
            .borrow()
            .as_ref()
            .map(|c| c.name.clone())
            .unwrap_or_else(|| "sequential".into());
        Ok(format!(
            "<{} name={name}, built={}>",
            self.type_name(),
            self.is_built()
        ))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        // A model whose input shape is known is built before anyone looks inside it.
        if !self.is_built() && !matches!(name, "add" | "compile" | "build" | "name") {
            if let Some(shape) = self.known_input_shape() {
                self.build(this, &shape, ctx)?;
            }
        }
        Ok(Some(match name {
            "layers" => Value::list(
                self.layers
                    .borrow()
                    .iter()
                    .filter(|l| l.downcast::<LayerObj>().is_some_and(|l| l.kind.is_some()))
                    .cloned()
                    .collect(),
            ),
            "name" => Value::from(
                self.config
                    .borrow()
                    .as_ref()
                    .map(|c| c.name.clone())
                    .unwrap_or_else(|| "sequential".into()),
            ),
            "built" => Value::Bool(self.is_built()),
            "stop_training" => Value::Bool(self.stop_training.get()),
            "distribute_strategy" => match self.created_under.borrow().clone() {
                Some(s) => s,
                None => super::super::distribute::current_or_default(ctx),
            },
            "optimizer" => match self.compiled.borrow().as_ref() {
                Some(_) => Value::native(super::optimizers::BoundOptimizer {
                    model: this.clone(),
                }),
                None => Value::None,
            },
            "weights" | "trainable_variables" | "trainable_weights" | "variables" => {
                super::weights::weight_list(this, self, ctx)?
            }
            "output_shape" => {
                let cfg = self.config.borrow();
                let plan = cfg.as_ref().and_then(|c| c.plan().ok());
                let mut dims = vec![Value::None];
                dims.extend(
                    plan.map(|p| p.output_shape().to_vec())
                        .unwrap_or_default()
                        .into_iter()
                        .map(|d| Value::Int(d as i64)),
                );
                Value::tuple(dims)
            }
            "add" => bound::<ModelObj>(this, name, |m, _, a, _| {
                let s = a.bind("add", &["layer"], 1)?;
                let l = s[0].clone().unwrap_or(Value::None);
                if m.is_built() {
                    return Err(PyErr::runtime_error("this kernel cannot add layers to a model that is already built; add every layer before training"));
                }
                if let Some(shape) = l
                    .downcast::<LayerObj>()
                    .filter(|x| x.kind.is_none())
                    .and_then(|x| x.input_shape.clone())
                {
                    *m.input_shape.borrow_mut() = Some(shape);
                }
                m.layers.borrow_mut().push(l);
                Ok(Value::None)
            }),
            "build" => bound::<ModelObj>(this, name, |m, this, a, c| {
                let s = a.bind("build", &["input_shape"], 1)?;
                let shape = shape_arg(&super::models::strip_batch(
                    s[0].as_ref().unwrap_or(&Value::None),
                ))?;
                m.build(this, &shape, c)?;
                Ok(Value::None)
            }),
            "compile" => bound::<ModelObj>(this, name, |m, this, a, c| m.compile(this, a, c)),
            "get_weights" => bound::<ModelObj>(this, name, |m, _, _, _| {
                Ok(Value::list(
                    m.weights()?
                        .iter()
                        .map(super::weights::host_to_numpy)
                        .collect::<PyResult<_>>()?,
                ))
            }),
            "set_weights" => bound::<ModelObj>(this, name, |m, _, a, c| {
                let s = a.bind("set_weights", &["weights"], 1)?;
                let items = c.iterate(s[0].as_ref().unwrap_or(&Value::None))?;
                let mut hs = vec![];
                for it in &items {
                    let arr = to_array(it, Some(DType::F32), false, c)?;
                    let (shape, data) = arr.to_f32_vec();
                    hs.push(HostArray::new(shape, data));
                }
                if m.live.write(&hs)? {
                    return Ok(Value::None);
                }
                m.with_engine(|e| e.trainer().set_weights(&hs).map_err(kerr))?;
                Ok(Value::None)
            }),
            "count_params" => {
                bound::<ModelObj>(this, name, |m, _, _, _| {
                    let cfg = m.config.borrow();
                    let p = cfg.as_ref().ok_or_else(|| PyErr::value_error("You tried to call `count_params` on a model that has not been built."))?.plan().map_err(kerr)?;
                    Ok(Value::Int(p.param_count() as i64))
                })
            }
            "_layer_info" => bound::<ModelObj>(this, name, |m, _, a, _| m.layer_info(a)),
            "predict" | "fit" | "evaluate" | "summary" | "save" | "save_weights"
            | "load_weights" | "loss" => return super::fit::model_method(this, name),
            _ => return Ok(None),
        }))
    }
    fn setattr(&self, name: &str, v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "stop_training" => self.stop_training.set(v.as_bool_strict()?),
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
        let s = args.bind("__call__", &["inputs", "training", "mask"], 1)?;
        let x = s[0].clone().unwrap_or(Value::None);
        let out = self.forward(this, &x, 32, ctx)?;
        Ok(super::super::convert::tensor_value(out))
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.type_name(), "Model".into(), "Layer".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl ModelObj {
    /// What a layer asks its model: its weights, output shape, parameter count.
    fn layer_info(&self, a: &Args) -> PyResult<Value> {
        let index = a.pos.first().map_or(Ok(0), |v| v.as_int())? as usize;
        let what = a
            .pos
            .get(1)
            .map(|v| v.as_str().map(str::to_string))
            .transpose()?
            .unwrap_or_default();
        let cfg = self.config.borrow();
        let plan = cfg
            .as_ref()
            .ok_or_else(|| PyErr::value_error("model not built"))?
            .plan()
            .map_err(kerr)?;
        Ok(match what.as_str() {
            "output_shape" | "input_shape" => {
                let shapes = if what == "output_shape" {
                    &plan.out_shapes
                } else {
                    &plan.in_shapes
                };
                let mut dims = vec![Value::None];
                dims.extend(
                    shapes
                        .get(index)
                        .cloned()
                        .unwrap_or_default()
                        .into_iter()
                        .map(|d| Value::Int(d as i64)),
                );
                Value::tuple(dims)
            }
            "count_params" => Value::Int(plan.layer_params(index) as i64),
            _ => {
                let all = self.weights()?;
                let mine: Vec<Value> = plan
                    .vars
                    .iter()
                    .zip(&all)
                    .filter(|(v, _)| v.layer == index)
                    .map(|(_, w)| super::weights::host_to_numpy(w))
                    .collect::<PyResult<_>>()?;
                Value::list(mine)
            }
        })
    }
}
