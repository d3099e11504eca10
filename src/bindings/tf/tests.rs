//! Unit tests of the `tensorflow` binding through [`StandIn`]: device reprs and layout
//! rules, strategy construction and its INFO line, scopes, `run`/`reduce`, the scope
//! mistakes, dtypes and `TensorShape`. Expected texts are what TensorFlow 2.16 prints.

use super::*;
use crate::lang::StandIn;
use crate::lang::{Args, PyErr};

fn tf(ctx: &mut StandIn) -> Value {
    module(ctx).unwrap_or(Value::None)
}

fn s(v: &str) -> Value {
    Value::str(v)
}

fn repr(ctx: &mut StandIn, v: &Value) -> String {
    ctx.repr(v).unwrap_or_else(|e| format!("<error {e}>"))
}

/// Splits the CPU into `n` logical devices, as a first cell would.
fn split_cpu(ctx: &mut StandIn, tf: &Value, n: usize) -> PyResult<Value> {
    let cpu = ctx.call_attr(tf, "config.list_physical_devices", vec![s("CPU")])?;
    let cpu0 = ctx.iterate(&cpu)?.remove(0);
    let cfg = ctx.attr(tf, "config.LogicalDeviceConfiguration")?;
    let mut configs = vec![];
    for _ in 0..n {
        configs.push(ctx.call(&cfg, Args::default())?);
    }
    ctx.call_attr(
        tf,
        "config.set_logical_device_configuration",
        vec![cpu0, Value::list(configs)],
    )
}

fn err_of(r: PyResult<Value>) -> PyErr {
    match r {
        Err(e) => e,
        Ok(v) => PyErr::new("NoError", format!("{v:?}")),
    }
}

#[test]
fn physical_and_logical_device_reprs() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    let cpus = ctx.call_attr(&tf, "config.list_physical_devices", vec![s("CPU")])?;
    assert_eq!(
        repr(&mut ctx, &cpus),
        "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"
    );
    let gpus = ctx.call_attr(&tf, "config.list_physical_devices", vec![s("GPU")])?;
    assert_eq!(repr(&mut ctx, &gpus), "[]");
    split_cpu(&mut ctx, &tf, 2)?;
    let logical = ctx.call_attr(&tf, "config.list_logical_devices", vec![s("CPU")])?;
    assert_eq!(
        repr(&mut ctx, &logical),
        "[LogicalDevice(name='/device:CPU:0', device_type='CPU'), \
         LogicalDevice(name='/device:CPU:1', device_type='CPU')]"
    );
    let cfg = ctx.call_attr(&tf, "config.LogicalDeviceConfiguration", vec![])?;
    assert_eq!(
        repr(&mut ctx, &cfg),
        "LogicalDeviceConfiguration(memory_limit=None, experimental_priority=None, \
         experimental_device_ordinal=None)"
    );
    Ok(())
}

#[test]
fn layout_freezes_after_first_use_but_same_layout_is_fine() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    split_cpu(&mut ctx, &tf, 2)?;
    ctx.call_attr(&tf, "config.list_logical_devices", vec![])?;
    split_cpu(&mut ctx, &tf, 2)?;
    let e = err_of(split_cpu(&mut ctx, &tf, 3));
    assert_eq!(e.type_name(), "RuntimeError");
    assert_eq!(
        e.message(),
        "Virtual devices cannot be modified after being initialized"
    );
    assert!(e.hint().is_some_and(|h| h.starts_with("Hint: ")));
    Ok(())
}

#[test]
fn cpu_memory_limit_and_unknown_device_are_value_errors() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    let cpu = ctx.call_attr(&tf, "config.list_physical_devices", vec![s("CPU")])?;
    let cpu0 = ctx.iterate(&cpu)?.remove(0);
    let cls = ctx.attr(&tf, "config.LogicalDeviceConfiguration")?;
    let limited = ctx.call(
        &cls,
        Args::default().with_kw("memory_limit", Value::Int(512)),
    )?;
    let e = err_of(ctx.call_attr(
        &tf,
        "config.set_logical_device_configuration",
        vec![cpu0, Value::list(vec![limited])],
    ));
    assert_eq!(e.type_name(), "ValueError");
    assert_eq!(
        e.message(),
        "Setting memory limit on CPU virtual devices is currently not supported"
    );
    let e = err_of(ctx.call_attr(
        &tf,
        "config.set_logical_device_configuration",
        vec![s("CPU:0"), Value::list(vec![])],
    ));
    assert_eq!(e.type_name(), "ValueError");
    assert!(e.message().starts_with("Unrecognized device: 'CPU:0'"));
    Ok(())
}

#[test]
fn mirrored_strategy_prints_info_and_counts_replicas() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    split_cpu(&mut ctx, &tf, 2)?;
    let strategy = ctx.call_attr(&tf, "distribute.MirroredStrategy", vec![])?;
    assert_eq!(
        ctx.take_stdout(),
        "INFO:tensorflow:Using MirroredStrategy with devices \
         ('/job:localhost/replica:0/task:0/device:CPU:0', \
         '/job:localhost/replica:0/task:0/device:CPU:1')\n"
    );
    let n = ctx.attr(&strategy, "num_replicas_in_sync")?;
    assert_eq!(n.as_int()?, 2);
    let wd = ctx.attr(&strategy, "extended.worker_devices")?;
    assert_eq!(
        repr(&mut ctx, &wd),
        "('/job:localhost/replica:0/task:0/device:CPU:0', \
         '/job:localhost/replica:0/task:0/device:CPU:1')"
    );
    assert!(repr(&mut ctx, &strategy).starts_with(
        "<tensorflow.python.distribute.mirrored_strategy.MirroredStrategy object at 0x"
    ));
    // Creating a strategy starts the runtime: the layout is now fixed.
    assert_eq!(
        err_of(split_cpu(&mut ctx, &tf, 4)).type_name(),
        "RuntimeError"
    );
    Ok(())
}

#[test]
fn one_device_default_has_a_one_tuple_info_line() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    // One logical CPU whatever MIRROR_LOGICAL_CPUS says in the test's environment.
    split_cpu(&mut ctx, &tf, 1)?;
    let strategy = ctx.call_attr(&tf, "distribute.MirroredStrategy", vec![])?;
    assert_eq!(
        ctx.take_stdout(),
        "INFO:tensorflow:Using MirroredStrategy with devices \
         ('/job:localhost/replica:0/task:0/device:CPU:0',)\n"
    );
    assert_eq!(ctx.attr(&strategy, "num_replicas_in_sync")?.as_int()?, 1);
    Ok(())
}

#[test]
fn explicit_devices_are_checked() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    split_cpu(&mut ctx, &tf, 2)?;
    let ms = ctx.attr(&tf, "distribute.MirroredStrategy")?;
    let st = ctx.call(
        &ms,
        Args::new(vec![Value::list(vec![s("/cpu:0"), s("/cpu:1")])]),
    )?;
    assert_eq!(ctx.attr(&st, "num_replicas_in_sync")?.as_int()?, 2);
    let dup = err_of(ctx.call(
        &ms,
        Args::new(vec![Value::list(vec![s("/cpu:0"), s("/cpu:0")])]),
    ));
    assert_eq!(dup.type_name(), "ValueError");
    assert_eq!(
        dup.message(),
        "No duplicates allowed in `devices` argument: ['/cpu:0', '/cpu:0']"
    );
    let gpu = err_of(ctx.call(&ms, Args::new(vec![Value::list(vec![s("/gpu:0")])])));
    assert_eq!(gpu.type_name(), "ValueError");
    let empty = err_of(ctx.call(&ms, Args::new(vec![Value::list(vec![])])));
    assert_eq!(empty.message(), "Must specify at least one device.");
    Ok(())
}

#[test]
fn scope_is_session_state_and_mixing_is_refused() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    let a = ctx.call_attr(&tf, "distribute.MirroredStrategy", vec![])?;
    let b = ctx.call_attr(&tf, "distribute.MirroredStrategy", vec![])?;
    let has = |ctx: &mut StandIn| ctx.call_attr(&tf, "distribute.has_strategy", vec![]);
    assert!(matches!(has(&mut ctx)?, Value::Bool(false)));
    let scope = ctx.call_attr(&a, "scope", vec![])?;
    let Value::Native(sc) = scope.clone() else {
        return Err(PyErr::type_error("scope is not a native"));
    };
    let bound = sc.enter(&scope, &mut ctx)?;
    assert!(bound.is(&a));
    assert!(matches!(has(&mut ctx)?, Value::Bool(true)));
    assert!(ctx
        .call_attr(&tf, "distribute.get_strategy", vec![])?
        .is(&a));
    let other = ctx.call_attr(&b, "scope", vec![])?;
    let Value::Native(osc) = other.clone() else {
        return Err(PyErr::type_error("scope is not a native"));
    };
    let e = err_of(osc.enter(&other, &mut ctx));
    assert_eq!(e.type_name(), "RuntimeError");
    let (ra, rb) = (repr(&mut ctx, &a), repr(&mut ctx, &b));
    assert_eq!(
        e.message(),
        format!("Mixing different tf.distribute.Strategy objects: {ra} is not {rb}")
    );
    assert!(e.hint().is_some_and(|h| h.starts_with("Hint: ")));
    sc.exit(None, &mut ctx)?;
    assert!(matches!(has(&mut ctx)?, Value::Bool(false)));
    let d1 = ctx.call_attr(&tf, "distribute.get_strategy", vec![])?;
    let d2 = ctx.call_attr(&tf, "distribute.get_strategy", vec![])?;
    assert!(d1.is(&d2));
    assert_eq!(ctx.attr(&d1, "num_replicas_in_sync")?.as_int()?, 1);
    Ok(())
}

#[test]
fn run_gives_per_replica_values_and_reduce_combines_them() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    split_cpu(&mut ctx, &tf, 2)?;
    let strategy = ctx.call_attr(&tf, "distribute.MirroredStrategy", vec![])?;
    let tf2 = tf.clone();
    // The replica's function: its id times the argument, read through the replica context.
    let step = crate::lang::NativeFn::value("step", "", move |args, ctx| {
        let get = ctx.getattr(&tf2, "distribute")?;
        let get = ctx.getattr(&get, "get_replica_context")?;
        let rc = ctx.call(&get, Args::default())?;
        // A replica's id is an int32 tensor there, as in TF.
        let id = ctx.getattr(&rc, "replica_id_in_sync_group")?;
        let id = super::convert::held_array(&id)
            .and_then(|a| a.to_i64_vec().1.first().copied())
            .unwrap_or(-1);
        let x = args
            .pos
            .first()
            .cloned()
            .unwrap_or(Value::Int(1))
            .as_int()?;
        Ok(Value::Int((id + 1) * x))
    });
    let run = ctx.attr(&strategy, "run")?;
    let per = ctx.call(
        &run,
        Args::new(vec![step]).with_kw("args", Value::tuple(vec![Value::Int(10)])),
    )?;
    assert_eq!(repr(&mut ctx, &per), "PerReplica:{\n  0: 10,\n  1: 20\n}");
    let sum = ctx.attr(&tf, "distribute.ReduceOp.SUM")?;
    let mean = ctx.attr(&tf, "distribute.ReduceOp.MEAN")?;
    assert_eq!(repr(&mut ctx, &sum), "<ReduceOp.SUM: 'SUM'>");
    let total = ctx.call_attr(&strategy, "reduce", vec![sum.clone(), per.clone()])?;
    assert_eq!(total.as_int()?, 30);
    let avg = ctx.call_attr(&strategy, "reduce", vec![mean, per.clone()])?;
    assert_eq!(avg.as_float()?, 15.0);
    let local = ctx.call_attr(&strategy, "experimental_local_results", vec![per])?;
    assert_eq!(repr(&mut ctx, &local), "(10, 20)");
    let e = err_of(ctx.call_attr(&strategy, "reduce", vec![sum, Value::Int(3)]));
    assert_eq!(e.type_name(), "ValueError");
    // Outside `run`, in the strategy's scope-less cross-replica view, the default context.
    let rc = ctx.call_attr(&tf, "distribute.get_replica_context", vec![])?;
    assert_eq!(ctx.attr(&rc, "num_replicas_in_sync")?.as_int()?, 1);
    Ok(())
}

#[test]
fn fit_scope_checks_name_the_mistake() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    let a = ctx.call_attr(&tf, "distribute.MirroredStrategy", vec![])?;
    let b = ctx.call_attr(&tf, "distribute.MirroredStrategy", vec![])?;
    let var = "<tf.Variable 'dense/kernel:0' shape=(5, 10) dtype=float32>";
    // Nothing distributed anywhere: one replica, no error.
    assert!(distribute::check_fit_scope(&mut ctx, None, None, var)?.is_none());
    // Built outside, compiled inside, fitted outside.
    let e = err_of(distribute::check_fit_scope(&mut ctx, None, Some(&a), var).map(|_| Value::None));
    assert_eq!(e.type_name(), "RuntimeError");
    assert!(e
        .message()
        .starts_with("Need to be inside \"with strategy.scope()\" for <"));
    ctx.state().get::<TfState>().dist.stack.push(a.clone());
    // Built outside, fitted inside.
    let e = err_of(distribute::check_fit_scope(&mut ctx, None, None, var).map(|_| Value::None));
    assert_eq!(e.type_name(), "ValueError");
    assert!(e.message().contains(var));
    assert!(e
        .hint()
        .is_some_and(|h| h.contains("with strategy.scope():")));
    // Built under `b`, fitted under `a`.
    let e = err_of(distribute::check_fit_scope(&mut ctx, Some(&b), None, var).map(|_| Value::None));
    assert!(e
        .message()
        .starts_with("Mixing different tf.distribute.Strategy objects"));
    // Built and fitted under `a`.
    let got = distribute::check_fit_scope(&mut ctx, Some(&a), Some(&a), var)?;
    assert!(got.is_some_and(|g| g.is(&a)));
    distribute::warn_compile_outside_scope(&mut ctx, None);
    let warn = ctx.stream(crate::cell::StreamName::Stderr);
    assert!(warn.starts_with("UserWarning: "), "{warn}");
    assert_eq!(warn.lines().count(), 1);
    Ok(())
}

#[test]
fn strategies_this_kernel_does_not_run_raise_tf_errors() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    let e = err_of(ctx.call_attr(&tf, "distribute.TPUStrategy", vec![]));
    assert_eq!(e.type_name(), "ValueError");
    assert!(e
        .message()
        .starts_with("Please provide a TPU Name to connect to."));
    assert!(e.hint().is_some_and(|h| h.contains("MirroredStrategy")));
    let e = err_of(ctx.call_attr(
        &tf,
        "distribute.experimental.ParameterServerStrategy",
        vec![],
    ));
    assert_eq!(e.type_name(), "TypeError");
    split_cpu(&mut ctx, &tf, 1)?;
    let nccl = ctx.call_attr(&tf, "distribute.NcclAllReduce", vec![])?;
    let ms = ctx.attr(&tf, "distribute.MirroredStrategy")?;
    let st = ctx.call(&ms, Args::default().with_kw("cross_device_ops", nccl))?;
    assert_eq!(ctx.attr(&st, "num_replicas_in_sync")?.as_int()?, 1);
    let mw = ctx.call_attr(&tf, "distribute.MultiWorkerMirroredStrategy", vec![])?;
    assert_eq!(mw.type_name(), "MultiWorkerMirroredStrategy");
    Ok(())
}

#[test]
fn dtypes_and_shapes_print_as_tf() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    let f32 = ctx.attr(&tf, "float32")?;
    assert_eq!(repr(&mut ctx, &f32), "tf.float32");
    assert_eq!(ctx.attr(&f32, "name")?.as_str()?, "float32");
    let Value::Native(o) = f32.clone() else {
        return Err(PyErr::type_error("dtype is not a native"));
    };
    let eq = o.compare(crate::lang::CmpOp::Eq, &s("float32"), &mut ctx)?;
    assert!(matches!(eq, Some(Value::Bool(true))));
    let shape = ctx.call_attr(
        &tf,
        "TensorShape",
        vec![Value::list(vec![Value::Int(5), Value::Int(10)])],
    )?;
    assert_eq!(repr(&mut ctx, &shape), "TensorShape([5, 10])");
    assert_eq!(ctx.str(&shape)?, "(5, 10)");
    let Value::Native(sh) = shape.clone() else {
        return Err(PyErr::type_error("shape is not a native"));
    };
    assert_eq!(sh.getitem(&Value::Int(-1), &mut ctx)?.as_int()?, 10);
    assert_eq!(
        sh.getitem(&Value::Int(2), &mut ctx)
            .map(|_| ())
            .err()
            .map(|e| e.type_name().to_string()),
        Some("IndexError".into())
    );
    let list = ctx.call_attr(&shape, "as_list", vec![])?;
    assert_eq!(repr(&mut ctx, &list), "[5, 10]");
    let one = ctx.call_attr(&tf, "TensorShape", vec![Value::list(vec![Value::None])])?;
    assert_eq!(ctx.str(&one)?, "(None,)");
    let unknown = ctx.call_attr(&tf, "TensorShape", vec![Value::None])?;
    assert_eq!(repr(&mut ctx, &unknown), "TensorShape(None)");
    let e = err_of(ctx.call_attr(&unknown, "as_list", vec![]));
    assert_eq!(
        e.message(),
        "as_list() is not defined on an unknown TensorShape."
    );
    Ok(())
}

#[test]
fn strategy_rich_repr_lists_its_devices() -> PyResult<()> {
    let mut ctx = StandIn::default();
    let tf = tf(&mut ctx);
    split_cpu(&mut ctx, &tf, 2)?;
    let st = ctx.call_attr(&tf, "distribute.MirroredStrategy", vec![])?;
    let b = ctx.rich(&st)?;
    let text = b.get("text/plain").and_then(|v| v.as_str()).unwrap_or("");
    assert_eq!(
        text,
        "MirroredStrategy with 2 replicas:\n  replica 0: /job:localhost/replica:0/task:0/device:CPU:0\n  \
         replica 1: /job:localhost/replica:0/task:0/device:CPU:1"
    );
    let html = b.get("text/html").and_then(|v| v.as_str()).unwrap_or("");
    assert!(html.contains("<code>/job:localhost/replica:0/task:0/device:CPU:1</code>"));
    Ok(())
}
