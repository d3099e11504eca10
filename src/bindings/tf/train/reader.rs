//! `tf.train.list_variables` and `tf.train.load_variable`: what a checkpoint holds, read
//! without restoring it. Either takes a checkpoint's prefix or a directory, whose latest
//! checkpoint (by its state file) is read, as TensorFlow's do.

use super::checkpoint::{bundle_error, path_arg};
use super::manager::latest_checkpoint;
use crate::bindings::tf::convert::numpy_value;
use crate::bindings::tf::func;
use crate::keras::saving::bundle::{read_bundle, Entry};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};

/// The key TF lists for the object graph it stores beside the values (an empty shape).
const OBJECT_GRAPH_KEY: &str = "_CHECKPOINTABLE_OBJECT_GRAPH";

/// The entries of the checkpoint at `path`: a prefix, or a directory's latest checkpoint.
fn entries(path: &str) -> PyResult<Vec<Entry>> {
    let prefix = if std::path::Path::new(path).is_dir() {
        latest_checkpoint(path).ok_or_else(|| {
            PyErr::value_error(format!(
                "Couldn't find 'checkpoint' file or checkpoints in given directory {path}"
            ))
        })?
    } else {
        path.to_string()
    };
    read_bundle(&prefix).map_err(bundle_error)
}

fn list_variables(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("list_variables", &["ckpt_dir_or_file"], 1)?;
    let path = path_arg(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
    let mut listed: Vec<(String, Vec<usize>)> = entries(&path)?
        .into_iter()
        .map(|e| (e.key, e.value.shape().to_vec()))
        .collect();
    listed.push((OBJECT_GRAPH_KEY.into(), vec![]));
    listed.sort();
    Ok(Value::list(
        listed
            .into_iter()
            .map(|(k, shape)| {
                let dims = shape.into_iter().map(|d| Value::Int(d as i64)).collect();
                Value::tuple(vec![Value::from(k), Value::list(dims)])
            })
            .collect(),
    ))
}

fn load_variable(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("load_variable", &["ckpt_dir_or_file", "name"], 2)?;
    let path = path_arg(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
    let name = path_arg(s[1].as_ref().unwrap_or(&Value::None), ctx)?;
    // TF drops a variable name's `:0`.
    let key = name.strip_suffix(":0").unwrap_or(&name);
    entries(&path)?
        .into_iter()
        .find(|e| e.key == key)
        .map(|e| numpy_value(e.value))
        .ok_or_else(|| {
            PyErr::new(
                "NotFoundError",
                format!("Key {key} not found in checkpoint"),
            )
        })
}

/// The functions this file gives `tf.train`.
pub fn functions() -> [(&'static str, Value); 2] {
    [
        (
            "list_variables",
            func(
                "list_variables",
                "list_variables(ckpt_dir_or_file)\nThe (name, shape) of every value a checkpoint holds.",
                list_variables,
            ),
        ),
        (
            "load_variable",
            func(
                "load_variable",
                "load_variable(ckpt_dir_or_file, name)\nOne value a checkpoint holds, as a numpy array.",
                load_variable,
            ),
        ),
    ]
}
