//! Unit tests of `tf.Tensor`, `tf.Variable` and the tensor functions: the printed forms
//! are TensorFlow 2.16's (numpy 1.x scalars inside), the dtype rules TF's.

use super::*;
use crate::lang::StandIn;
use crate::lang::{Args, BinOp, PyErr};

fn setup() -> (StandIn, Value) {
    let mut ctx = StandIn::default();
    let tf = module(&mut ctx).unwrap_or(Value::None);
    (ctx, tf)
}

fn floats(rows: &[&[f64]]) -> Value {
    Value::list(
        rows.iter()
            .map(|r| Value::list(r.iter().map(|x| Value::Float(*x)).collect()))
            .collect(),
    )
}

fn native(v: &Value) -> PyResult<std::rc::Rc<dyn Object>> {
    match v {
        Value::Native(o) => Ok(o.clone()),
        _ => Err(PyErr::type_error("not a native")),
    }
}

#[test]
fn tensor_str_and_repr_match_tf() -> PyResult<()> {
    let (mut ctx, tf) = setup();
    let t = ctx.call_attr(&tf, "constant", vec![floats(&[&[1.0, 2.0], &[3.0, 4.0]])])?;
    assert_eq!(
        ctx.str(&t)?,
        "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"
    );
    assert_eq!(
        ctx.repr(&t)?,
        "<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1., 2.],\n       [3., 4.]], dtype=float32)>"
    );
    let s = ctx.call_attr(&tf, "constant", vec![Value::Float(3.0)])?;
    assert_eq!(ctx.str(&s)?, "tf.Tensor(3.0, shape=(), dtype=float32)");
    assert_eq!(
        ctx.repr(&s)?,
        "<tf.Tensor: shape=(), dtype=float32, numpy=3.0>"
    );
    let i = ctx.call_attr(
        &tf,
        "constant",
        vec![Value::list(vec![Value::Int(1), Value::Int(2)])],
    )?;
    assert_eq!(
        ctx.repr(&i)?,
        "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>"
    );
    assert_eq!(ctx.str(&i)?, "tf.Tensor([1 2], shape=(2,), dtype=int32)");
    let shape = ctx.attr(&t, "shape")?;
    assert_eq!(ctx.repr(&shape)?, "TensorShape([2, 2])");
    let dt = ctx.attr(&t, "dtype")?;
    assert_eq!(ctx.repr(&dt)?, "tf.float32");
    Ok(())
}

#[test]
fn operators_follow_tf_dtype_rules() -> PyResult<()> {
    let (mut ctx, tf) = setup();
    let t = ctx.call_attr(
        &tf,
        "constant",
        vec![Value::list(vec![Value::Float(1.0), Value::Float(2.0)])],
    )?;
    let o = native(&t)?;
    let sum = o
        .binop(BinOp::Add, &Value::Float(0.5), false, &mut ctx)?
        .unwrap_or(Value::None);
    assert_eq!(
        ctx.repr(&sum)?,
        "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1.5, 2.5], dtype=float32)>"
    );
    let rsub = o
        .binop(BinOp::Sub, &Value::Int(10), true, &mut ctx)?
        .unwrap_or(Value::None);
    assert_eq!(
        ctx.str(&rsub)?,
        "tf.Tensor([9. 8.], shape=(2,), dtype=float32)"
    );
    let d = ctx.call_attr(
        &tf,
        "constant",
        vec![Value::list(vec![Value::Float(1.0), Value::Float(2.0)])],
    )?;
    let f64 = ctx.attr(&tf, "float64")?;
    let f64t = ctx.call_attr(&tf, "cast", vec![d, f64])?;
    let e = o
        .binop(BinOp::Add, &f64t, false, &mut ctx)
        .err()
        .unwrap_or(PyErr::new("none", ""));
    assert_eq!(e.type_name(), "InvalidArgumentError");
    assert!(e.message().starts_with(
        "cannot compute AddV2 as input #1(zero-based) was expected to be a float tensor but is a double tensor [Op:AddV2] name: "
    ));
    // TF 2.21 converts a float that cannot join an int32 tensor as a float32 tensor, and
    // the op refuses the pair.
    let ints = ctx.call_attr(&tf, "constant", vec![Value::list(vec![Value::Int(1)])])?;
    let e = native(&ints)?
        .binop(BinOp::Mul, &Value::Float(0.5), false, &mut ctx)
        .err();
    assert_eq!(
        e.map(|e| e.message().to_string()).as_deref(),
        Some(
            "cannot compute Mul as input #1(zero-based) was expected to be a int32 tensor but \
             is a float tensor [Op:Mul] name: "
        )
    );
    Ok(())
}

#[test]
fn reductions_and_matmul_keep_tf_dtypes() -> PyResult<()> {
    let (mut ctx, tf) = setup();
    let ints = ctx.call_attr(
        &tf,
        "constant",
        vec![Value::list(vec![Value::Int(1), Value::Int(2)])],
    )?;
    let mean = ctx.call_attr(&tf, "reduce_mean", vec![ints.clone()])?;
    assert_eq!(
        ctx.repr(&mean)?,
        "<tf.Tensor: shape=(), dtype=int32, numpy=1>"
    );
    let sum = ctx.call_attr(&tf, "reduce_sum", vec![ints])?;
    assert_eq!(ctx.str(&sum)?, "tf.Tensor(3, shape=(), dtype=int32)");
    let m = ctx.call_attr(&tf, "constant", vec![floats(&[&[1.0, 2.0], &[3.0, 4.0]])])?;
    let p = ctx.call_attr(&tf, "matmul", vec![m.clone(), m.clone()])?;
    assert_eq!(
        ctx.str(&p)?,
        "tf.Tensor(\n[[ 7. 10.]\n [15. 22.]], shape=(2, 2), dtype=float32)"
    );
    let f = ctx.attr(&tf, "reduce_sum")?;
    let cols = ctx.call(
        &f,
        Args::new(vec![m.clone()]).with_kw("axis", Value::Int(0)),
    )?;
    assert_eq!(
        ctx.str(&cols)?,
        "tf.Tensor([4. 6.], shape=(2,), dtype=float32)"
    );
    let x = ctx.call_attr(
        &tf,
        "constant",
        vec![Value::list(vec![Value::Float(0.0), Value::Float(0.0)])],
    )?;
    let sm = ctx.call_attr(&tf, "nn.softmax", vec![x])?;
    assert_eq!(
        ctx.str(&sm)?,
        "tf.Tensor([0.5 0.5], shape=(2,), dtype=float32)"
    );
    let x = ctx.call_attr(
        &tf,
        "constant",
        vec![Value::list(vec![Value::Float(-1.0), Value::Float(2.0)])],
    )?;
    let relu = ctx.call_attr(&tf, "nn.relu", vec![x])?;
    assert_eq!(
        ctx.str(&relu)?,
        "tf.Tensor([0. 2.], shape=(2,), dtype=float32)"
    );
    let z = ctx.call_attr(
        &tf,
        "zeros",
        vec![Value::tuple(vec![Value::Int(2), Value::Int(3)])],
    )?;
    let zs = ctx.attr(&z, "shape")?;
    assert_eq!(ctx.repr(&zs)?, "TensorShape([2, 3])");
    let sh = ctx.call_attr(&tf, "shape", vec![z])?;
    assert_eq!(
        ctx.repr(&sh)?,
        "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>"
    );
    Ok(())
}

#[test]
fn variables_assign_and_print_as_tf() -> PyResult<()> {
    let (mut ctx, tf) = setup();
    let v = ctx.call_attr(
        &tf,
        "Variable",
        vec![Value::list(vec![Value::Float(1.0), Value::Float(2.0)])],
    )?;
    assert_eq!(
        ctx.repr(&v)?,
        "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    );
    let r = ctx.call_attr(
        &v,
        "assign_add",
        vec![Value::list(vec![Value::Float(1.0), Value::Float(1.0)])],
    )?;
    assert_eq!(
        ctx.repr(&r)?,
        "<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, numpy=array([2., 3.], dtype=float32)>"
    );
    let read = ctx.call_attr(&v, "read_value", vec![])?;
    assert_eq!(
        ctx.str(&read)?,
        "tf.Tensor([2. 3.], shape=(2,), dtype=float32)"
    );
    let e = ctx
        .call_attr(&v, "assign", vec![Value::list(vec![Value::Float(1.0)])])
        .err();
    assert_eq!(
        e.map(|e| e.type_name().to_string()).as_deref(),
        Some("ValueError")
    );
    assert_eq!(ctx.attr(&v, "name")?.as_str()?, "Variable:0");
    Ok(())
}

#[test]
fn variables_in_a_strategy_scope_are_mirrored() -> PyResult<()> {
    let (mut ctx, tf) = setup();
    let cpu = ctx.call_attr(&tf, "config.list_physical_devices", vec![Value::str("CPU")])?;
    let cpu0 = ctx.iterate(&cpu)?.remove(0);
    let cfg = ctx.attr(&tf, "config.LogicalDeviceConfiguration")?;
    let two = vec![
        ctx.call(&cfg, Args::default())?,
        ctx.call(&cfg, Args::default())?,
    ];
    ctx.call_attr(
        &tf,
        "config.set_logical_device_configuration",
        vec![cpu0, Value::list(two)],
    )?;
    let st = ctx.call_attr(&tf, "distribute.MirroredStrategy", vec![])?;
    let scope = ctx.call_attr(&st, "scope", vec![])?;
    native(&scope)?.enter(&scope, &mut ctx)?;
    let v = ctx.call_attr(&tf, "Variable", vec![Value::Float(1.0)])?;
    native(&scope)?.exit(None, &mut ctx)?;
    assert_eq!(v.type_name(), "MirroredVariable");
    assert_eq!(
        ctx.repr(&v)?,
        "MirroredVariable:{\n  0: <tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>,\n  \
         1: <tf.Variable 'Variable/replica_1:0' shape=() dtype=float32, numpy=1.0>\n}"
    );
    ctx.call_attr(&v, "assign", vec![Value::Float(5.0)])?;
    let parts = ctx.attr(&v, "values")?;
    for p in ctx.iterate(&parts)? {
        let r = ctx.call_attr(&p, "read_value", vec![])?;
        assert_eq!(ctx.str(&r)?, "tf.Tensor(5.0, shape=(), dtype=float32)");
    }
    let outside = ctx.call_attr(&tf, "Variable", vec![Value::Float(1.0)])?;
    assert_eq!(outside.type_name(), "ResourceVariable");
    Ok(())
}
