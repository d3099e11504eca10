//! Unit tests of the callbacks' rules, against what Keras 3 does with the same logs: when
//! EarlyStopping stops and which weights it restores, what LearningRateScheduler sets and
//! prints, which paths ModelCheckpoint writes. The model is a small recording double that
//! answers the attribute calls a callback makes (`get_weights`, `optimizer`, `save`).

use std::any::Any;
use std::cell::RefCell;

use super::callbacks::{logs_dict, CallbackList};
use crate::cell::StreamName;
use crate::lang::StandIn;
use crate::lang::{Args, Ctx, NativeFn, Object, PyErr, PyResult, Value};

/// Records what callbacks do to a model: weights are the epoch they were taken at.
#[derive(Default)]
struct Recorder {
    weights: RefCell<i64>,
    restored: RefCell<Option<Value>>,
    stop: RefCell<bool>,
    lr: RefCell<f64>,
    saved: RefCell<Vec<String>>,
}

impl Object for Recorder {
    fn type_name(&self) -> String {
        "Recorder".into()
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let me = this.clone();
        let with = move |f: fn(&Recorder, &Args) -> PyResult<Value>| {
            let me = me.clone();
            NativeFn::value("m", "", move |a, _| match me.downcast::<Recorder>() {
                Some(r) => f(r, a),
                None => Ok(Value::None),
            })
        };
        Ok(Some(match name {
            "get_weights" => with(|r, _| Ok(Value::Int(*r.weights.borrow()))),
            "set_weights" => with(|r, a| {
                *r.restored.borrow_mut() = a.pos.first().cloned();
                Ok(Value::None)
            }),
            "save" | "save_weights" => with(|r, a| {
                let p = a
                    .pos
                    .first()
                    .map(|v| v.as_str().map(str::to_string))
                    .transpose()?;
                r.saved.borrow_mut().extend(p);
                Ok(Value::None)
            }),
            "optimizer" | "model" => this.clone(),
            "learning_rate" => Value::Float(*self.lr.borrow()),
            "stop_training" => Value::Bool(*self.stop.borrow()),
            _ => return Ok(None),
        }))
    }
    fn setattr(&self, name: &str, v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "stop_training" => *self.stop.borrow_mut() = v.as_bool_strict()?,
            "learning_rate" => *self.lr.borrow_mut() = v.as_float()?,
            _ => return Err(PyErr::attribute_error(name.to_string())),
        }
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn setup(ctx: &mut StandIn, cb: &str, args: Args) -> PyResult<(Value, Value, CallbackList)> {
    let keras = super::module();
    let cls = ctx.attr(&keras, &format!("callbacks.{cb}"))?;
    let cb = ctx.call(&cls, args)?;
    let model = Value::native(Recorder {
        lr: RefCell::new(0.01),
        ..Recorder::default()
    });
    let list = CallbackList {
        items: vec![cb.clone()],
    };
    list.set_model(ctx, &model, &Value::dict_from(vec![]))?;
    list.call(ctx, "on_train_begin", vec![], &Value::None)?;
    Ok((cb, model, list))
}

/// Runs epochs with the given values of `key` until the model asks to stop.
fn run_epochs(
    ctx: &mut StandIn,
    list: &CallbackList,
    model: &Value,
    key: &str,
    values: &[f64],
) -> PyResult<usize> {
    let mut ran = 0;
    for (e, v) in values.iter().enumerate() {
        let logs = logs_dict(&[(key.to_string(), *v)]);
        if let Some(r) = model.downcast::<Recorder>() {
            *r.weights.borrow_mut() = e as i64;
        }
        list.call(ctx, "on_epoch_begin", vec![Value::Int(e as i64)], &logs)?;
        list.call(ctx, "on_epoch_end", vec![Value::Int(e as i64)], &logs)?;
        ran += 1;
        if model
            .downcast::<Recorder>()
            .is_some_and(|r| *r.stop.borrow())
        {
            break;
        }
    }
    list.call(ctx, "on_train_end", vec![], &Value::None)?;
    Ok(ran)
}

#[test]
fn early_stopping_waits_patience_epochs_and_restores_the_best() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let args = Args::default()
        .with_kw("monitor", Value::str("loss"))
        .with_kw("patience", Value::Int(2))
        .with_kw("verbose", Value::Int(1))
        .with_kw("restore_best_weights", Value::Bool(true));
    let (cb, model, list) = setup(&mut ctx, "EarlyStopping", args)?;
    let ran = run_epochs(
        &mut ctx,
        &list,
        &model,
        "loss",
        &[1.0, 0.9, 0.95, 0.97, 0.5],
    )?;
    assert_eq!(ran, 4);
    assert_eq!(ctx.attr(&cb, "stopped_epoch")?.as_int()?, 3);
    let restored = model
        .downcast::<Recorder>()
        .and_then(|r| r.restored.borrow().clone());
    assert_eq!(restored.map(|v| v.as_int()).transpose()?, Some(1));
    assert_eq!(
        ctx.stream(StreamName::Stdout),
        // Keras 3.15 says it stopped, then restores when training ends.
        "Epoch 4: early stopping\nRestoring model weights from the end of the best epoch: 2.\n"
    );
    Ok(())
}

#[test]
fn early_stopping_on_a_missing_metric_warns_and_keeps_going() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let (_, model, list) = setup(&mut ctx, "EarlyStopping", Args::default())?;
    assert_eq!(
        run_epochs(&mut ctx, &list, &model, "loss", &[1.0, 2.0, 3.0])?,
        3
    );
    let err = ctx.stream(StreamName::Stderr);
    assert!(err.starts_with(
        "UserWarning: Early stopping conditioned on metric `val_loss` which is not available. \
         Available metrics are: loss\n"
    ));
    Ok(())
}

#[test]
fn learning_rate_scheduler_sets_the_rate_and_logs_it() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let halve = NativeFn::value("halve", "", |a, _| {
        let lr = a.pos.get(1).map_or(Ok(0.0), |v| v.as_float())?;
        Ok(Value::Float(lr * 0.5))
    });
    let args = Args::new(vec![halve]).with_kw("verbose", Value::Int(1));
    let (_, model, list) = setup(&mut ctx, "LearningRateScheduler", args)?;
    let logs = logs_dict(&[("loss".into(), 1.0)]);
    list.call(&mut ctx, "on_epoch_begin", vec![Value::Int(0)], &logs)?;
    list.call(&mut ctx, "on_epoch_end", vec![Value::Int(0)], &logs)?;
    assert_eq!(
        model.downcast::<Recorder>().map(|r| *r.lr.borrow()),
        Some(0.005)
    );
    assert_eq!(
        ctx.stream(StreamName::Stdout),
        "\nEpoch 1: LearningRateScheduler setting learning rate to 0.005.\n"
    );
    let Value::Dict(d) = &logs else {
        return Err(PyErr::type_error("logs"));
    };
    assert_eq!(
        d.borrow()
            .get_str("learning_rate")
            .map(|v| v.as_float())
            .transpose()?,
        Some(0.005)
    );
    // A schedule that answers an int is refused, as Keras refuses it.
    let int_rate = NativeFn::value("one", "", |_, _| Ok(Value::Int(1)));
    let (_, _, list) = setup(&mut ctx, "LearningRateScheduler", Args::new(vec![int_rate]))?;
    let e = list.call(&mut ctx, "on_epoch_begin", vec![Value::Int(0)], &logs);
    assert_eq!(
        e.err().map(|e| e.message().to_string()).as_deref(),
        Some("The output of the `schedule` function should be a float. Got: 1")
    );
    Ok(())
}

#[test]
fn model_checkpoint_formats_paths_and_saves_only_improvements() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let args = Args::new(vec![Value::str("ckpt-{epoch:02d}-{val_loss:.2f}.keras")])
        .with_kw("save_best_only", Value::Bool(true));
    let (_, model, list) = setup(&mut ctx, "ModelCheckpoint", args)?;
    run_epochs(&mut ctx, &list, &model, "val_loss", &[0.5, 0.7, 0.25])?;
    let saved = model
        .downcast::<Recorder>()
        .map(|r| r.saved.borrow().clone())
        .unwrap_or_default();
    assert_eq!(
        saved,
        vec![
            "ckpt-01-0.50.keras".to_string(),
            "ckpt-03-0.25.keras".to_string()
        ]
    );
    let keras = super::module();
    let cls = ctx.attr(&keras, "callbacks.ModelCheckpoint")?;
    let e = ctx.call(&cls, Args::new(vec![Value::str("best.h6")]));
    assert_eq!(
        e.err().map(|e| e.message().to_string()).as_deref(),
        Some("The filepath provided must end in `.keras` (Keras model format). Received: filepath=best.h6")
    );
    Ok(())
}

#[test]
fn history_collects_each_epochs_logs() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let (cb, model, list) = setup(&mut ctx, "History", Args::default())?;
    run_epochs(&mut ctx, &list, &model, "loss", &[0.5, 0.25])?;
    let h = ctx.attr(&cb, "history")?;
    let Value::Dict(d) = &h else {
        return Err(PyErr::type_error("history"));
    };
    let loss = d
        .borrow()
        .get_str("loss")
        .and_then(|v| v.as_seq())
        .unwrap_or_default();
    assert_eq!(
        loss.iter()
            .map(|v| v.as_float())
            .collect::<PyResult<Vec<_>>>()?,
        vec![0.5, 0.25]
    );
    let epochs = ctx.attr(&cb, "epoch")?;
    assert_eq!(ctx.repr(&epochs)?, "[0, 1]");
    let rich = ctx.rich(&cb)?;
    assert!(rich
        .get("text/plain")
        .and_then(|v| v.as_str())
        .is_some_and(|t| t.starts_with("<keras.src.callbacks.history.History object at 0x")));
    assert!(rich
        .get("text/html")
        .and_then(|v| v.as_str())
        .is_some_and(|t| t.contains("<code>loss</code>")));
    Ok(())
}

#[test]
fn python_float_reprs() {
    use crate::lang::float_repr as r;
    assert_eq!(r(0.005), "0.005");
    assert_eq!(r(1e-05), "1e-05");
    assert_eq!(r(0.00025), "0.00025");
    assert_eq!(r(1.0), "1.0");
    assert_eq!(r(-2.5), "-2.5");
    assert_eq!(r(123456789.0), "123456789.0");
    assert_eq!(r(1e16), "1e+16");
    assert_eq!(r(0.1 + 0.2), "0.30000000000000004");
    assert_eq!(r(f64::INFINITY), "inf");
}
