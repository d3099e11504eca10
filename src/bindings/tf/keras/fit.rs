//! `model.fit`, `evaluate`, `predict`, their `*_on_batch` forms, `summary` and saving: arguments as flat f32 rows, the
//! engine's epoch loop run over the model's trainer (the compiled engine: one replica, or
//! the mirrored trainer of a strategy; or, for a model the engine does not run, the op
//! library's trainer of op_trainer.rs), the user's callbacks and Keras's progress through the
//! [`Bridge`] of bridge.rs. The layers' variables and the engine's weights are kept the
//! same: the engine takes any variable changed before a run, and the variables take the
//! engine's weights after `fit`. KeyboardInterrupt stops between steps and leaves the model
//! usable; a NaN or infinite loss stops after that batch with a warning (see nan.rs).
//!
//! Inputs reach the engine without copies where possible: a float32 array is read in place
//! (the engine gathers each batch straight from it), and any other array is converted once
//! and kept, by the array's identity, for the next `fit`, `evaluate` or `predict` on it while
//! the array is unchanged (arrays are copied on write, so a changed array is a new one).

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::super::convert::{held_array, numpy_array, numpy_value, to_array};
use super::super::data::iter::{dataset_arg, is_dataset, validation_pair};
use super::super::distribute::check_fit_scope;
use super::super::given;
use super::bridge::{Bridge, Display};
use super::callbacks::{new_history, set_attr, CallbackList};
use super::layers::handle::{layer_weights, LayerHandle};
use super::layers::kerr;
use super::model::{Engine, ModelKind, ModelObj};
use super::op_trainer::{OpModel, OpTrainer, SharedCtx};
use super::sample_weights::{example_weights, run_weighted, with_weights};
use crate::cell::Output;
use crate::display::progress::{keras_order, Mode, ProgressBar};
use crate::keras::{Callback, KResult, Trainer};
use crate::lang::{Args, Ctx, NativeFn, PyErr, PyResult, Value};
use crate::tensor::{DType, NdArray};

/// Keras's `verbose` argument: `'auto'` is 1 in a notebook.
fn verbose_arg(v: Option<&Value>) -> PyResult<u8> {
    match v {
        None | Some(Value::Str(_)) => Ok(1),
        Some(v) => Ok(v.as_int()?.clamp(0, 2) as u8),
    }
}

/// A data set argument as f32 rows: a float32 array's own values, or a conversion.
struct Rows {
    shape: Vec<usize>,
    data: RowData,
}

enum RowData {
    /// A float32 array, read in place.
    Shared(Held),
    Converted(Rc<Vec<f32>>),
}

impl Rows {
    fn values(&self) -> &[f32] {
        match &self.data {
            RowData::Shared(a) => a.array().as_f32_slice().unwrap_or(&[]),
            RowData::Converted(v) => v,
        }
    }
}

/// The array a data argument already holds, shared rather than copied: a numpy array's
/// (single-threaded, the cell's own) or a tensor's (thread-safe, the op library's).
enum Held {
    Numpy(Rc<NdArray>),
    Tensor(Arc<NdArray>),
}

impl Held {
    fn of(v: &Value) -> Option<Held> {
        match numpy_array(v) {
            Some(a) => Some(Held::Numpy(a)),
            None => held_array(v).map(Held::Tensor),
        }
    }

    fn array(&self) -> &NdArray {
        match self {
            Held::Numpy(a) => a,
            Held::Tensor(a) => a,
        }
    }

    /// A weak reference that upgrades while this very array lives.
    fn downgrade(&self) -> HeldWeak {
        match self {
            Held::Numpy(a) => HeldWeak::Numpy(Rc::downgrade(a)),
            Held::Tensor(a) => HeldWeak::Tensor(Arc::downgrade(a)),
        }
    }
}

enum HeldWeak {
    Numpy(std::rc::Weak<NdArray>),
    Tensor(std::sync::Weak<NdArray>),
}

impl HeldWeak {
    fn alive(&self) -> bool {
        match self {
            HeldWeak::Numpy(w) => w.strong_count() > 0,
            HeldWeak::Tensor(w) => w.strong_count() > 0,
        }
    }

    fn is(&self, a: &NdArray) -> bool {
        let p = match self {
            HeldWeak::Numpy(w) => w.as_ptr(),
            HeldWeak::Tensor(w) => w.as_ptr(),
        };
        std::ptr::eq(p, a)
    }
}

/// Session state: the f32 conversions of the last few non-float32 arrays, each kept while
/// its array lives unchanged (a weak reference that still upgrades to the same array).
#[derive(Default)]
struct Conversions {
    entries: Vec<(HeldWeak, Rc<Vec<f32>>)>,
}

/// How many conversions a session keeps: inputs and targets of training and validation.
const KEPT_CONVERSIONS: usize = 4;

fn rows(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Rows> {
    let Some(a) = Held::of(v) else {
        // Nested lists and other array-likes: converted each time, as numpy would.
        let (shape, data) = to_array(v, Some(DType::F32), false, ctx)?.to_f32_vec();
        return Ok(Rows {
            shape,
            data: RowData::Converted(Rc::new(data)),
        });
    };
    let shape = a.array().shape().to_vec();
    if a.array().as_f32_slice().is_some() {
        return Ok(Rows {
            shape,
            data: RowData::Shared(a),
        });
    }
    let kept = ctx.state().get::<Conversions>();
    kept.entries.retain(|(w, _)| w.alive());
    let hit = kept
        .entries
        .iter()
        .find(|(w, _)| w.is(a.array()))
        .map(|(_, data)| data.clone());
    let data = match hit {
        Some(data) => data,
        None => {
            let data = Rc::new(a.array().to_f32_vec().1);
            if kept.entries.len() >= KEPT_CONVERSIONS {
                kept.entries.remove(0);
            }
            kept.entries.push((a.downgrade(), data.clone()));
            data
        }
    };
    Ok(Rows {
        shape,
        data: RowData::Converted(data),
    })
}

/// A model's inputs as rows: one array, or, for a functional model, a list of arrays or
/// a dict keyed by input names, whose values are laid side by side in each example's row
/// (the op trainer splits them again, see `op_trainer.rs`).
fn input_rows(m: &ModelObj, v: &Value, ctx: &mut dyn Ctx) -> PyResult<Rows> {
    let Some(g) = m.graph.borrow().clone() else {
        return rows(v, ctx);
    };
    let parts = match v {
        Value::Dict(_) => g.bind_inputs(v)?,
        Value::List(_) | Value::Tuple(_) if g.inputs.len() > 1 => g.bind_inputs(v)?,
        _ => return rows(v, ctx),
    };
    if let [one] = parts.as_slice() {
        return rows(one, ctx);
    }
    side_by_side(&parts, "x", ctx)
}

/// A model's targets as rows: one array, or, for a functional model with several outputs,
/// a list, tuple or dict of arrays (one per output) laid side by side in each example's row
/// (the op trainer splits them per output, see `op_trainer.rs`).
fn target_rows(m: &ModelObj, y: &Value, ctx: &mut dyn Ctx) -> PyResult<Rows> {
    let Some(g) = m.running_graph().filter(|g| g.outputs.len() > 1) else {
        return rows(y, ctx);
    };
    let names = super::heads::output_names(&g, ctx)?;
    let parts = super::heads::bind_targets(y, &names)?;
    side_by_side(&parts, "y", ctx)
}

/// Arrays of one example count laid side by side in each example's row, with Keras's
/// error when the counts differ (`what` is `x` or `y`).
fn side_by_side(parts: &[Value], what: &str, ctx: &mut dyn Ctx) -> PyResult<Rows> {
    let parts = parts
        .iter()
        .map(|p| rows(p, ctx))
        .collect::<PyResult<Vec<_>>>()?;
    let counts: Vec<usize> = parts
        .iter()
        .map(|p| p.shape.first().copied().unwrap_or(0))
        .collect();
    let n = counts.first().copied().unwrap_or(0);
    if counts.iter().any(|&c| c != n) {
        let sizes: Vec<String> = counts
            .iter()
            .map(|c| format!("'{what}' sizes: {c}"))
            .collect();
        return Err(PyErr::value_error(format!(
            "Data cardinality is ambiguous. Make sure all arrays contain the same number of \
             samples.{}",
            sizes.join("\n")
        )));
    }
    let per: Vec<usize> = parts
        .iter()
        .map(|p| p.values().len().checked_div(n).unwrap_or(0))
        .collect();
    let width: usize = per.iter().sum();
    let mut data = Vec::with_capacity(n * width);
    for i in 0..n {
        for (p, k) in parts.iter().zip(&per) {
            data.extend_from_slice(p.values().get(i * k..(i + 1) * k).unwrap_or(&[]));
        }
    }
    Ok(Rows {
        shape: vec![n, width],
        data: RowData::Converted(Rc::new(data)),
    })
}

/// The model's first variable as Keras prints it, for the scope mistakes' messages.
fn first_variable(this: &Value, ctx: &mut dyn Ctx) -> String {
    let first = LayerHandle::of(this, ctx)
        .and_then(|h| layer_weights(&h, ctx, None).ok())
        .and_then(|w| w.into_iter().next());
    match first {
        Some(v) => ctx.repr(&v).unwrap_or_default(),
        None => "<no variables>".into(),
    }
}

/// The trainer a run uses: the compiled engine, or the op library's for other models.
enum Runner<'a, 'e> {
    Engine(&'e mut Engine),
    Op(Box<OpTrainer<'a>>),
}

impl Runner<'_, '_> {
    fn trainer(&mut self) -> &mut dyn Trainer {
        match self {
            Runner::Engine(e) => e.trainer(),
            Runner::Op(t) => t.as_mut(),
        }
    }
    /// The Python error a step of the op trainer raised, if any.
    fn take_err(&mut self) -> Option<PyErr> {
        match self {
            Runner::Op(t) => t.err.take(),
            Runner::Engine(_) => None,
        }
    }
}

/// Runs `f` with the model's trainer: the engine (after it takes any variable changed
/// since, and giving its weights back to the variables afterwards when `trains`), or the op
/// library's trainer for inputs of `input` (without the batch axis).
fn with_runner<'a, R>(
    m: &ModelObj,
    model: OpModel,
    input: &[usize],
    ctx: SharedCtx<'a>,
    trains: bool,
    f: impl FnOnce(&mut Runner<'a, '_>) -> PyResult<R>,
) -> PyResult<R> {
    if m.has_engine() {
        let r = m.with_engine(|e| {
            let mut runner = Runner::Engine(e);
            f(&mut runner)
        });
        if trains {
            m.pull_engine()?;
        }
        return r;
    }
    let t = OpTrainer::new(ctx, model, input)?;
    let mut runner = Runner::Op(Box::new(t));
    let r = f(&mut runner);
    match runner.take_err() {
        Some(e) => Err(e),
        None => r,
    }
}

fn fit(m: &ModelObj, this: &Value, mv: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "fit",
        &[
            "x",
            "y",
            "batch_size",
            "epochs",
            "verbose",
            "callbacks",
            "validation_split",
            "validation_data",
            "shuffle",
            "class_weight",
            "sample_weight",
            "initial_epoch",
            "steps_per_epoch",
        ],
        1,
    )?;
    let x = s[0].clone().unwrap_or(Value::None);
    let ds = dataset_arg(&x, given(&s[12]), ctx)?;
    let (x, y_ds) = ds
        .as_ref()
        .map_or((x.clone(), None), |d| (d.x.clone(), d.y.clone()));
    let xr = input_rows(m, &x, ctx)?;
    let y = y_ds.as_ref().or(given(&s[1])).ok_or_else(|| {
        PyErr::value_error(
            "fit needs targets: pass y (this kernel does not take datasets of (x, y) here yet)",
        )
    })?;
    let yr = target_rows(m, y, ctx)?;
    let ds_weight = ds.as_ref().and_then(|d| d.sample_weight.clone());
    let n = yr.shape.first().copied().unwrap_or(0);
    let mut weights = example_weights(
        m,
        ds_weight.as_ref().or(given(&s[10])),
        given(&s[9]),
        yr.values(),
        n,
        ctx,
    )?;
    m.ensure_built(this, &xr.shape, ctx)?;
    let created = m.created_under.borrow().clone();
    let compiled = m.compiled_under.borrow().clone();
    let first = first_variable(this, ctx);
    check_fit_scope(ctx, created.as_ref(), compiled.as_ref(), &first)?;
    if m.compiled.borrow().is_none() {
        return Err(kerr(crate::keras::KerasError::NotCompiled("training")));
    }
    let batch = match &ds {
        Some(d) => d.batch,
        None => given(&s[2]).map_or(Ok(32), |v| v.as_int())?.max(1) as usize,
    };
    let opts = crate::keras::FitOptions {
        epochs: given(&s[3]).map_or(Ok(1), |v| v.as_int())?.max(0) as usize,
        batch_size: batch,
        shuffle: match &ds {
            Some(d) => d.shuffle,
            None => given(&s[8]).map_or(Ok(true), |v| v.as_bool_strict())?,
        },
        validation_split: given(&s[6]).map_or(Ok(0.0), |v| v.as_float())? as f32,
        initial_epoch: given(&s[11]).map_or(Ok(0), |v| v.as_int())?.max(0) as usize,
        seed: ctx.execution_count(),
        on_nan: crate::keras::OnNaN::Stop,
    };
    let val = match given(&s[7]) {
        Some(v) if is_dataset(v) => {
            let (vx, vy, vw) = validation_pair(v, ctx)?;
            Some((input_rows(m, &vx, ctx)?, target_rows(m, &vy, ctx)?, vw))
        }
        Some(v) => {
            let items = v.as_seq().unwrap_or_default();
            let (Some(vx), Some(vy)) = (items.first(), items.get(1)) else {
                return Err(PyErr::value_error(
                    "validation_data must be a tuple (x_val, y_val)",
                ));
            };
            let vw = items.get(2).cloned();
            Some((input_rows(m, vx, ctx)?, target_rows(m, vy, ctx)?, vw))
        }
        None => None,
    };
    let val_weights = match &val {
        Some((_, vy, Some(vw))) => {
            let vn = vy.shape.first().copied().unwrap_or(0);
            example_weights(m, Some(vw), None, vy.values(), vn, ctx)?
        }
        _ => None,
    };
    if given(&s[9]).is_some() && given(&s[7]).is_none() {
        // Keras splits the validation examples off before it turns class weights into
        // sample weights, so they weigh one each.
        if let Some(w) = weights.as_mut() {
            let split = crate::keras::fit::validation_rows(n, opts.validation_split);
            let start = w.len().saturating_sub(split);
            w[start..].fill(1.0);
        }
    }
    let weighted = weights.is_some() || val_weights.is_some();
    let yw = weighted.then(|| with_weights(yr.values(), n, weights.as_deref()));
    let vyw = match (&val, weighted) {
        (Some((_, vy, _)), true) => {
            let vn = vy.shape.first().copied().unwrap_or(0);
            Some(with_weights(vy.values(), vn, val_weights.as_deref()))
        }
        _ => None,
    };
    let verbose = verbose_arg(given(&s[4]))?;
    let mut list = CallbackList::from_arg(given(&s[5]), ctx)?;
    let mut opts = opts;
    if super::nan::has_terminate_on_nan(&list.items) {
        // The callback prints Keras's message and sets stop_training itself.
        opts.on_nan = crate::keras::OnNaN::Continue;
    }
    let history = new_history();
    list.items.push(history.clone());
    let params = Value::dict_from(vec![
        ("verbose", Value::Int(verbose as i64)),
        ("epochs", Value::Int(opts.epochs as i64)),
    ]);
    list.set_model(ctx, this, &params)?;
    let resumed = list.resume(&mut |path| load_weights_from(m, this, mv, path, true, ctx))?;
    if let Some(epoch) = resumed {
        opts.initial_epoch = epoch;
    }
    m.stop_training.set(false);
    set_attr(ctx, this, "stop_training", Value::Bool(false))?;
    let flag = ctx.interrupt_flag();
    let input: Vec<usize> = xr.shape.get(1..).unwrap_or(&[]).to_vec();
    let model = OpModel::new(this, mv, ctx)?;
    let (result, bridge_err) = {
        let shared: SharedCtx<'_> = Rc::new(RefCell::new(&mut *ctx));
        let mut bridge = Bridge {
            ctx: shared.clone(),
            list,
            model: this.clone(),
            state: mv.clone(),
            err: None,
            verbose,
            epochs: opts.epochs,
            steps: 0,
            bar: None,
        };
        let result = with_runner(m, model, &input, shared, true, |r| {
            if let Runner::Engine(Engine::Mirrored(t)) = r {
                t.begin_fit(batch);
            }
            let data = crate::keras::Data {
                x: xr.values(),
                y: yw.as_deref().unwrap_or(yr.values()),
            };
            let validation = val.as_ref().map(|(vx, vy, _)| crate::keras::Data {
                x: vx.values(),
                y: vyw.as_deref().unwrap_or(vy.values()),
            });
            let mut cbs: [&mut dyn Callback; 1] = [&mut bridge];
            // A failed run is reported after the bridge's own error (below), as before.
            let mut outcome = None;
            run_weighted(r.trainer(), weighted, |t| {
                outcome = Some(crate::keras::fit(
                    t,
                    data,
                    validation,
                    &opts,
                    &mut cbs,
                    Some(&flag),
                ));
                Ok(())
            })?;
            outcome.ok_or_else(|| PyErr::runtime_error("fit did not run"))
        });
        (result, bridge.err.take())
    };
    // The interrupt flag is the session's to clear; this only reports it.
    if let Some(e) = bridge_err {
        return Err(e);
    }
    if let Some((epoch, batch)) = result?.map_err(kerr)?.invalid_loss {
        super::nan::warn_stopped(ctx, epoch, opts.epochs, batch);
    }
    Ok(history)
}

fn predict(
    m: &ModelObj,
    this: &Value,
    mv: &Value,
    args: &Args,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let s = args.bind(
        "predict",
        &["x", "batch_size", "verbose", "steps", "callbacks"],
        1,
    )?;
    let x = s[0].clone().unwrap_or(Value::None);
    let ds = dataset_arg(&x, given(&s[3]), ctx)?;
    let x = ds.as_ref().map_or(x, |d| d.x.clone());
    let batch = match &ds {
        Some(d) => d.batch,
        None => given(&s[1]).map_or(Ok(32), |v| v.as_int())?.max(1) as usize,
    };
    let verbose = verbose_arg(given(&s[2]))?;
    let start = Instant::now();
    let out = forward(m, this, mv, &x, batch, ctx)?;
    let n = out.shape().first().copied().unwrap_or(0);
    let steps = n.div_ceil(batch).max(1);
    final_frame(ctx, steps, &[], verbose, start.elapsed(), "predict");
    outputs_value(m, out, ctx)
}

/// `model.predict_on_batch(x)`: `predict` on all of `x` at once, without progress.
fn predict_on_batch(
    m: &ModelObj,
    this: &Value,
    mv: &Value,
    args: &Args,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let s = args.bind("predict_on_batch", &["x"], 1)?;
    let x = s[0].clone().unwrap_or(Value::None);
    let out = forward(m, this, mv, &x, usize::MAX, ctx)?;
    outputs_value(m, out, ctx)
}

/// The model's outputs as `predict` returns them: one array, or, for several outputs, one
/// array per output (see heads.rs).
fn outputs_value(m: &ModelObj, out: NdArray, ctx: &mut dyn Ctx) -> PyResult<Value> {
    match m.running_graph().filter(|g| g.outputs.len() > 1) {
        Some(g) => {
            let n = out.shape().first().copied().unwrap_or(0);
            let names = super::heads::output_names(&g, ctx)?;
            let shapes = super::heads::output_shapes(&g);
            let (_, data) = out.to_f32_vec();
            super::heads::split_outputs(&g, &names, n, &shapes, &data)
        }
        None => Ok(numpy_value(out)),
    }
}

/// `model.train_on_batch(x, y)` (`trains`) and `model.test_on_batch(x, y)`: one training
/// step, or one evaluation, on all of `x` at once, the logs returned as `evaluate` returns
/// them (Keras 3 resets the metrics first, so they are this batch's).
fn on_batch(
    m: &ModelObj,
    this: &Value,
    mv: &Value,
    args: &Args,
    trains: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let s = match trains {
        true => args.bind(
            "train_on_batch",
            &["x", "y", "sample_weight", "class_weight", "return_dict"],
            1,
        )?,
        false => args.bind(
            "test_on_batch",
            &["x", "y", "sample_weight", "return_dict"],
            1,
        )?,
    };
    let name = if trains {
        "train_on_batch"
    } else {
        "test_on_batch"
    };
    let class_weight = if trains { given(&s[3]) } else { None };
    let x = s[0].clone().unwrap_or(Value::None);
    let y = s[1].clone().unwrap_or(Value::None);
    let xr = input_rows(m, &x, ctx)?;
    let yr = target_rows(m, &y, ctx)?;
    let count = yr.shape.first().copied().unwrap_or(0);
    let weights = example_weights(m, given(&s[2]), class_weight, yr.values(), count, ctx)?;
    let yw = weights
        .as_deref()
        .map(|w| with_weights(yr.values(), count, Some(w)));
    m.ensure_built(this, &xr.shape, ctx)?;
    if trains {
        let created = m.created_under.borrow().clone();
        let compiled = m.compiled_under.borrow().clone();
        let first = first_variable(this, ctx);
        check_fit_scope(ctx, created.as_ref(), compiled.as_ref(), &first)?;
    }
    if m.compiled.borrow().is_none() {
        return Err(kerr(crate::keras::KerasError::NotCompiled(name)));
    }
    let n = xr.shape.first().copied().unwrap_or(0).max(1);
    let input: Vec<usize> = xr.shape.get(1..).unwrap_or(&[]).to_vec();
    let model = OpModel::new(this, mv, ctx)?;
    let data = crate::keras::Data {
        x: xr.values(),
        y: yw.as_deref().unwrap_or(yr.values()),
    };
    let logs = {
        let shared: SharedCtx<'_> = Rc::new(RefCell::new(&mut *ctx));
        with_runner(m, model, &input, shared, trains, |r| {
            run_weighted(r.trainer(), yw.is_some(), |t| match trains {
                true => crate::keras::train_on_batch(t, data),
                false => crate::keras::evaluate(t, data, n, None),
            })
        })?
    };
    let as_dict = s
        .last()
        .and_then(given)
        .is_some_and(|v| matches!(v, Value::Bool(true)));
    Ok(logs_value(&logs, as_dict))
}

/// Logs as `evaluate` returns them: with `return_dict` a dict, else the loss alone when it
/// is the only log, or the list of values in Keras's order.
fn logs_value(logs: &[(String, f64)], as_dict: bool) -> Value {
    if as_dict {
        // Keras 3 returns the logs through `tf.nest`, which orders a dict's keys.
        let mut pairs: Vec<(&str, Value)> = logs
            .iter()
            .map(|(k, v)| (k.as_str(), Value::Float(*v)))
            .collect();
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        return Value::dict_from(pairs);
    }
    match logs {
        [(_, only)] => Value::Float(*only),
        many => Value::list(many.iter().map(|(_, v)| Value::Float(*v)).collect()),
    }
}

/// Runs the model forward on every row of `x`, `batch` rows at a time.
pub fn forward(
    m: &ModelObj,
    this: &Value,
    mv: &Value,
    x: &Value,
    batch: usize,
    ctx: &mut dyn Ctx,
) -> PyResult<NdArray> {
    let xr = input_rows(m, x, ctx)?;
    m.ensure_built(this, &xr.shape, ctx)?;
    let n = xr.shape.first().copied().unwrap_or(0);
    let input: Vec<usize> = xr.shape.get(1..).unwrap_or(&[]).to_vec();
    let flag = ctx.interrupt_flag();
    let model = OpModel::new(this, mv, ctx)?;
    let shared: SharedCtx<'_> = Rc::new(RefCell::new(&mut *ctx));
    let (out, shape) = with_runner(m, model, &input, shared, false, |r| {
        let t = r.trainer();
        let out = crate::keras::predict(t, xr.values(), batch, Some(&flag)).map_err(kerr)?;
        Ok((out, t.plan().output_shape().to_vec()))
    })?;
    let mut dims = vec![n];
    dims.extend(shape);
    NdArray::from_f32(&dims, out).map_err(super::super::convert::tensor_err)
}

fn final_frame(
    ctx: &mut dyn Ctx,
    steps: usize,
    logs: &[(String, f64)],
    verbose: u8,
    elapsed: Duration,
    tag: &str,
) {
    let mut bar = ProgressBar::new(Some(steps), verbose, Mode::Notebook);
    if let Some(r) = bar.finish(steps, logs, elapsed) {
        Display::new(tag).show(ctx, &r, verbose);
    }
}

fn evaluate(
    m: &ModelObj,
    this: &Value,
    mv: &Value,
    args: &Args,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let s = args.bind(
        "evaluate",
        &[
            "x",
            "y",
            "batch_size",
            "verbose",
            "sample_weight",
            "steps",
            "callbacks",
            "return_dict",
        ],
        1,
    )?;
    let x = s[0].clone().unwrap_or(Value::None);
    let ds = dataset_arg(&x, given(&s[5]), ctx)?;
    let (x, y, w) = match &ds {
        Some(d) => (
            d.x.clone(),
            d.y.clone().unwrap_or(Value::None),
            d.sample_weight.clone(),
        ),
        None => (
            x,
            s[1].clone().unwrap_or(Value::None),
            given(&s[4]).cloned(),
        ),
    };
    let xr = input_rows(m, &x, ctx)?;
    let yr = target_rows(m, &y, ctx)?;
    let count = yr.shape.first().copied().unwrap_or(0);
    let weights = example_weights(m, w.as_ref(), None, yr.values(), count, ctx)?;
    let yw = weights
        .as_deref()
        .map(|w| with_weights(yr.values(), count, Some(w)));
    m.ensure_built(this, &xr.shape, ctx)?;
    if m.compiled.borrow().is_none() {
        return Err(kerr(crate::keras::KerasError::NotCompiled("evaluate")));
    }
    let batch = match &ds {
        Some(d) => d.batch,
        None => given(&s[2]).map_or(Ok(32), |v| v.as_int())?.max(1) as usize,
    };
    let verbose = verbose_arg(given(&s[3]))?;
    let flag = ctx.interrupt_flag();
    let start = Instant::now();
    let input: Vec<usize> = xr.shape.get(1..).unwrap_or(&[]).to_vec();
    let model = OpModel::new(this, mv, ctx)?;
    let logs = {
        let shared: SharedCtx<'_> = Rc::new(RefCell::new(&mut *ctx));
        with_runner(m, model, &input, shared, false, |r| {
            let data = crate::keras::Data {
                x: xr.values(),
                y: yw.as_deref().unwrap_or(yr.values()),
            };
            run_weighted(r.trainer(), yw.is_some(), |t| {
                crate::keras::evaluate(t, data, batch, Some(&flag))
            })
        })?
    };
    let steps = xr
        .shape
        .first()
        .copied()
        .unwrap_or(0)
        .div_ceil(batch)
        .max(1);
    final_frame(
        ctx,
        steps,
        &keras_order(&logs),
        verbose,
        start.elapsed(),
        "evaluate",
    );
    let as_dict = given(&s[7]).is_some_and(|v| matches!(v, Value::Bool(true)));
    Ok(logs_value(&logs, as_dict))
}

fn path_arg(args: &Args, name: &str) -> PyResult<String> {
    let s = args.bind(name, &["filepath", "overwrite", "save_format"], 1)?;
    Ok(s[0].as_ref().unwrap_or(&Value::None).as_str()?.to_string())
}

/// Saving needs the engine's description of the model.
fn not_savable(m: &ModelObj) -> PyErr {
    PyErr::not_implemented(format!(
        "saving model '{}' is not supported here: only a Sequential model or a functional \
         chain of built-in layers can be saved",
        m.name()
    ))
}

/// Runs `f` with the op library's trainer of a built model that the engine does not run
/// (one holding a normalization or a layer without variables), when the model is a chain
/// of built-in layers, the models the saving format describes.
pub(crate) fn with_op_trainer<R>(
    m: &ModelObj,
    this: &Value,
    mv: &Value,
    ctx: &mut dyn Ctx,
    f: impl FnOnce(&mut dyn Trainer) -> PyResult<R>,
) -> PyResult<R> {
    let input = m.input_shape.borrow().clone().filter(|_| m.is_built());
    let (Some(input), Some(_)) = (input, m.builtin_chain()) else {
        return Err(not_savable(m));
    };
    let model = OpModel::new(this, mv, ctx)?;
    let shared: SharedCtx<'_> = Rc::new(RefCell::new(&mut *ctx));
    let mut t = OpTrainer::new(shared, model, &input)?;
    let r = f(&mut t);
    match t.err.take() {
        Some(e) => Err(e),
        None => r,
    }
}

/// A model whose weights file is written from its objects (a graph that is not a chain, a
/// subclass, a model holding a user's layers), not from the engine's description.
fn described_by_objects(m: &ModelObj) -> bool {
    m.running_graph().is_some() || (!m.has_engine() && m.builtin_chain().is_none())
}

fn save(
    m: &ModelObj,
    this: &Value,
    mv: &Value,
    args: &Args,
    weights_only: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let path = path_arg(args, if weights_only { "save_weights" } else { "save" })?;
    if weights_only && described_by_objects(m) {
        super::saving::save_tracked_weights(m, this, &path, ctx)?;
        return Ok(Value::None);
    }
    if !weights_only && described_by_objects(m) {
        // A functional model keeps its graph (a chain holding a user's layer included);
        // a subclass or a Sequential holding a user's layer is described by its objects.
        if m.kind == ModelKind::Functional && m.graph.borrow().is_some() {
            super::saving::graph::save(m, this, &path, ctx)?;
        } else {
            super::saving::objects::save(m, this, &path, ctx)?;
        }
        return Ok(Value::None);
    }
    if !m.has_engine() {
        with_op_trainer(m, this, mv, ctx, |t| {
            save_trainer(t, &path, weights_only).map_err(kerr)
        })?;
        return Ok(Value::None);
    }
    if m.engine.try_borrow_mut().is_err() {
        // `fit` holds the engine (a callback saves): its bridge saves the running trainer
        // as soon as the callback's hook returns.
        let save = super::bridge::PendingSave { path, weights_only };
        m.pending_saves.borrow_mut().push(save);
        return Ok(Value::None);
    }
    m.with_engine(|e| save_trainer(e.trainer_ref(), &path, weights_only).map_err(kerr))?;
    Ok(Value::None)
}

/// Saves a trainer's model (`.keras`) or its weights (`.weights.h5`, with the optimizer's
/// state and current learning rate when compiled, as Keras 3's `save_weights` writes them).
pub fn save_trainer(t: &dyn Trainer, path: &str, weights_only: bool) -> KResult<()> {
    if weights_only {
        let state = match t.compiled() {
            Some(_) => Some(t.optimizer_state()?),
            None => None,
        };
        let optimizer = state.as_ref().map(|s| (s, t.learning_rate()));
        crate::keras::save_weights(Path::new(path), t.config(), &t.get_weights()?, optimizer)
    } else {
        let saved = crate::keras::SavedModel::from_trainer(t)?;
        crate::keras::save_model(Path::new(path), &saved)
    }
}

fn load_weights(
    m: &ModelObj,
    this: &Value,
    mv: &Value,
    args: &Args,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let path = path_arg(args, "load_weights")?;
    load_weights_from(m, this, mv, &path, false, ctx)?;
    Ok(Value::None)
}

/// `model.load_weights(path)`; `build` builds the optimizer first, as `BackupAndRestore`
/// does, so that the file's optimizer state is restored even before the first step.
pub(crate) fn load_weights_from(
    m: &ModelObj,
    this: &Value,
    mv: &Value,
    path: &str,
    build: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<()> {
    if described_by_objects(m) {
        return super::saving::load_tracked_weights(m, this, path, ctx);
    }
    let warning = if m.is_built() && !m.has_engine() {
        with_op_trainer(m, this, mv, ctx, |t| {
            restore_trainer(t, path, build).map_err(kerr)
        })?
    } else {
        if m.config.borrow().is_none() {
            return Err(PyErr::value_error(
                "Build the model before loading weights into it.",
            ));
        }
        let warning = m.with_engine(|e| restore_trainer(e.trainer(), path, build).map_err(kerr))?;
        m.pull_engine()?;
        warning
    };
    if let Some(w) = warning {
        super::schedules::warn(ctx, &w);
    }
    Ok(())
}

/// Puts a weights file into a trainer: the weights, then the optimizer's state. Keras loads
/// an optimizer's variables only into an optimizer that is built (it has taken a step, or
/// `build` asks for it); one that is not holds two variables (the step count and the
/// learning rate), and Keras warns and skips the file's variables unless they are two as
/// well. A file whose optimizer does not fit this one (another optimizer, another model) is
/// skipped with Keras's warning too. Returns that warning.
fn restore_trainer(t: &mut dyn Trainer, path: &str, build: bool) -> KResult<Option<String>> {
    let compile = t.compiled().cloned();
    let file = crate::keras::load_weights(Path::new(path), t.config(), compile.as_ref())?;
    t.set_weights(&file.weights)?;
    let (Some(compile), Some((held, state))) = (compile, file.optimizer) else {
        return Ok(None);
    };
    let built = build || t.optimizer_state()?.iterations > 0;
    match (built, state) {
        (true, Ok(s)) => t.set_optimizer_state(&s).map(|_| None),
        (true, Err(e)) => Ok(Some(e.to_string())),
        (false, _) if held != 2 => Ok(Some(format!(
            "Skipping variable loading for optimizer '{}', because it has 2 variables whereas the saved optimizer has {held} variables. ",
            crate::keras::saving::naming::snake_case(compile.optimizer.class_name())
        ))),
        (false, Ok(s)) => t.set_optimizer_state(&s).map(|_| None),
        // Both hold only a step count and a learning rate, of optimizers that differ.
        (false, Err(_)) => Ok(None),
    }
}

fn summary(this: &Value, m: &ModelObj, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let summary = super::summary::summary_of(this, m, ctx)?;
    ctx.emit(Output::DisplayData {
        data: summary.bundle(),
        metadata: Default::default(),
        display_id: None,
    });
    Ok(Value::None)
}

/// The model methods implemented here, for the model `this` (as Python sees it) whose
/// state is `mv`.
pub fn model_method(this: &Value, mv: &Value, name: &str) -> PyResult<Option<Value>> {
    type Method = fn(&ModelObj, &Value, &Value, &Args, &mut dyn Ctx) -> PyResult<Value>;
    let f: Method = match name {
        "fit" => fit,
        "predict" => predict,
        "evaluate" => evaluate,
        "train_on_batch" => |m, this, mv, a, c| on_batch(m, this, mv, a, true, c),
        "test_on_batch" => |m, this, mv, a, c| on_batch(m, this, mv, a, false, c),
        "predict_on_batch" => predict_on_batch,
        "summary" => |m, this, _, _, c| summary(this, m, c),
        "save" => |m, this, mv, a, c| save(m, this, mv, a, false, c),
        "save_weights" => |m, this, mv, a, c| save(m, this, mv, a, true, c),
        "load_weights" => load_weights,
        "loss" => {
            return Ok(Some(
                mv.downcast::<ModelObj>()
                    .map_or(Value::None, |m| m.loss_arg.borrow().clone()),
            ))
        }
        _ => return Ok(None),
    };
    let (this, mv) = (this.clone(), mv.clone());
    let label = name.to_string();
    Ok(Some(NativeFn::value(
        name,
        "",
        move |a, c| match mv.downcast::<ModelObj>() {
            Some(m) => f(m, &this, &mv, a, c),
            None => Err(PyErr::type_error(format!(
                "descriptor '{label}' requires a model"
            ))),
        },
    )))
}
