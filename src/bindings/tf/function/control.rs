//! `tf.cond` and `tf.while_loop`, run eagerly: the predicate's value picks the branch and
//! drives the loop, as in TF's eager mode. Inside a trace, a predicate that depends on
//! the function's inputs is a value read (`trace.rs`), so the function runs eagerly on
//! every call and the answers stay TF's.

use super::super::tensor::{array_truthy, Tensor};
use super::trace;
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};

pub const COND_DOC: &str = "cond(pred, true_fn=None, false_fn=None, name=None)\n\nReturns \
    true_fn() if the predicate pred is true else false_fn().";

pub const WHILE_DOC: &str = "while_loop(cond, body, loop_vars, shape_invariants=None, \
    parallel_iterations=10, back_prop=True, swap_memory=False, maximum_iterations=None, \
    name=None)\n\nRepeats body while the condition cond is true.";

/// The truth of a predicate (a Python value or a scalar tensor).
fn truth(v: &Value, what: &str, ctx: &mut dyn Ctx) -> PyResult<bool> {
    if let Some(t) = v.downcast::<Tensor>() {
        trace::value_read(ctx, &t.tensor, what);
        return Ok(array_truthy(t.tensor.value())?.unwrap_or(true));
    }
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Int(i) => Ok(*i != 0),
        Value::None => Ok(false),
        other => {
            let a = super::super::convert::to_array(other, None, false, ctx)?;
            Ok(array_truthy(&a)?.unwrap_or(true))
        }
    }
}

pub fn cond(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("cond", &["pred", "true_fn", "false_fn", "name"], 1)?;
    let pred = s[0].clone().unwrap_or(Value::None);
    let branch = if truth(&pred, "tf.cond", ctx)? {
        &s[1]
    } else {
        &s[2]
    };
    match branch.as_ref().filter(|f| !f.is_none()) {
        Some(f) => ctx.call(f, Args::default()),
        None => Err(PyErr::type_error("true_fn and false_fn must be callable.")),
    }
}

pub fn while_loop(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "while_loop",
        &[
            "cond",
            "body",
            "loop_vars",
            "shape_invariants",
            "parallel_iterations",
            "back_prop",
            "swap_memory",
            "maximum_iterations",
            "name",
        ],
        3,
    )?;
    let cond = s[0].clone().unwrap_or(Value::None);
    let body = s[1].clone().unwrap_or(Value::None);
    let init = s[2].clone().unwrap_or(Value::None);
    let max = match s[7].as_ref() {
        Some(Value::None) | None => None,
        Some(v) => Some(v.as_int()?),
    };
    let (mut vars, container) = match &init {
        Value::List(_) => (init.as_seq().unwrap_or_default(), 1),
        Value::Tuple(_) => (init.as_seq().unwrap_or_default(), 2),
        other => (vec![other.clone()], 0),
    };
    let mut n = 0i64;
    loop {
        ctx.check_interrupt()?;
        if max.is_some_and(|m| n >= m) {
            break;
        }
        let c = ctx.call(&cond, Args::new(vars.clone()))?;
        if !truth(&c, "tf.while_loop", ctx)? {
            break;
        }
        let out = ctx.call(&body, Args::new(vars.clone()))?;
        vars = match (&out, container) {
            (Value::List(_) | Value::Tuple(_), 1 | 2) => out.as_seq().unwrap_or_default(),
            (other, _) => vec![other.clone()],
        };
        n += 1;
    }
    Ok(match container {
        1 => Value::list(vars),
        2 => Value::tuple(vars),
        _ => vars.into_iter().next().unwrap_or(Value::None),
    })
}
