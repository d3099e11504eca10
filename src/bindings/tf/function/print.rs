//! `tf.print(*inputs, output_stream=sys.stderr, summarize=3, sep=' ', end='\n')`: TF's
//! template of the inputs (a string as itself, other Python values as `pprint` shows
//! them, dict keys sorted, a tensor as `tf.print` formats it, see `ops::format_tensor`).
//! Eagerly it prints at once; in a trace it is a step of the graph, so it prints on every
//! call. Its text goes to the cell's stderr by default, where a Jupyter notebook shows
//! TF's (the C++ stderr that ipykernel forwards), or to stdout with `sys.stdout`.

use super::super::convert::{numpy_array, tensor_of, variable_of};
use super::super::tensor::Tensor;
use super::super::TfError;
use super::trace;
use crate::bindings::tf::TfState;
use crate::cell::{Output, StreamName};
use crate::lang::str_repr;
use crate::lang::{Args, Ctx, NativeModule, PyResult, Value};
use crate::ops::{self, PrintPart, PrintSpec, PrintStream};

pub const DOC: &str = "print(*inputs, output_stream=sys.stderr, summarize=3, sep=' ', \
    end='\\n', name=None)\n\nPrints the inputs (tensors formatted as TensorFlow does) on \
    every call, also inside a tf.function.";

/// The cell output for a rendered print.
pub fn output(spec: &PrintSpec, text: String) -> Output {
    Output::Stream {
        name: match spec.stream {
            PrintStream::Stdout => StreamName::Stdout,
            PrintStream::Stderr => StreamName::Stderr,
        },
        text,
    }
}

fn is_tensor(v: &Value) -> bool {
    v.downcast::<Tensor>().is_some() || variable_of(v).is_some()
}

/// Adds the template of one input: `top` inputs that are strings print as themselves.
fn template(
    v: &Value,
    top: bool,
    parts: &mut Vec<PrintPart>,
    tensors: &mut Vec<ops::Tensor>,
    ctx: &mut dyn Ctx,
) -> PyResult<()> {
    let text = |parts: &mut Vec<PrintPart>, s: String| parts.push(PrintPart::Text(s));
    if is_tensor(v) || numpy_array(v).is_some() && !top {
        tensors.push(tensor_of(v, ctx)?);
        parts.push(PrintPart::Tensor(tensors.len() - 1));
        return Ok(());
    }
    match v {
        Value::Str(s) if top => text(parts, s.to_string()),
        Value::Str(s) => text(parts, str_repr(s)),
        Value::List(_) | Value::Tuple(_) => {
            let items = v.as_seq().unwrap_or_default();
            let list = matches!(v, Value::List(_));
            text(parts, if list { "[" } else { "(" }.into());
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    text(parts, ", ".into());
                }
                template(x, false, parts, tensors, ctx)?;
            }
            if !list && items.len() == 1 {
                text(parts, ",".into());
            }
            text(parts, if list { "]" } else { ")" }.into());
        }
        Value::Dict(d) => {
            let mut items: Vec<(Value, Value)> = d
                .borrow()
                .items()
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect();
            items.sort_by(|(a, _), (b, _)| match (a, b) {
                (Value::Str(x), Value::Str(y)) => x.cmp(y),
                (Value::Int(x), Value::Int(y)) => x.cmp(y),
                _ => std::cmp::Ordering::Equal,
            });
            text(parts, "{".into());
            for (i, (k, x)) in items.iter().enumerate() {
                if i > 0 {
                    text(parts, ", ".into());
                }
                let key = ctx.repr(k)?;
                text(parts, format!("{key}: "));
                template(x, false, parts, tensors, ctx)?;
            }
            text(parts, "}".into());
        }
        other => {
            let shown = ctx.repr(other)?;
            text(parts, shown);
        }
    }
    Ok(())
}

fn stream_of(v: &Value, ctx: &mut dyn Ctx) -> PyResult<PrintStream> {
    match v.downcast::<NativeModule>().map(|m| m.name.as_str()) {
        Some("stdout") => Ok(PrintStream::Stdout),
        Some("stderr") => Ok(PrintStream::Stderr),
        _ => {
            let shown = ctx.str(v)?;
            Err(TfError::Value(format!(
                "Unsupported output stream, logging level, or file.{shown}. Supported streams \
                 are sys.stdout, sys.stderr, tf.logging.info, tf.logging.warning, \
                 tf.logging.error. File needs to be in the form of 'file://<filepath>'."
            ))
            .into())
        }
    }
}

/// `tf.print(...)`.
pub fn tf_print(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let mut stream = PrintStream::Stderr;
    let mut summarize = 3;
    let mut sep = " ".to_string();
    let mut end = "\n".to_string();
    let mut unknown = Vec::new();
    for (k, v) in &args.kw {
        match k.as_str() {
            "output_stream" => stream = stream_of(v, ctx)?,
            "summarize" => summarize = if v.is_none() { 3 } else { v.as_int()? },
            "sep" => sep = v.as_str()?.to_string(),
            "end" => end = v.as_str()?.to_string(),
            "name" => {}
            _ => unknown.push(format!("{}: {}", str_repr(k), ctx.repr(v)?)),
        }
    }
    if !unknown.is_empty() {
        return Err(TfError::Value(format!(
            "Unrecognized keyword arguments for tf.print: {{{}}}",
            unknown.join(", ")
        ))
        .into());
    }
    let mut parts = Vec::new();
    let mut tensors = Vec::new();
    for (i, v) in args.pos.iter().enumerate() {
        if i > 0 {
            parts.push(PrintPart::Text(sep.clone()));
        }
        template(v, true, &mut parts, &mut tensors, ctx)?;
    }
    let spec = PrintSpec {
        parts,
        end,
        stream,
        summarize,
    };
    let arrays: Vec<&crate::tensor::NdArray> = tensors.iter().map(ops::Tensor::value).collect();
    let out = output(&spec, spec.render(&arrays));
    // Every graph being traced gets the step; the text shows once the trace is kept.
    for f in &ctx.state().get::<TfState>().tracing.frames {
        f.recorder.print(spec.clone(), &tensors);
    }
    trace::show(ctx, vec![out]);
    Ok(Value::None)
}
