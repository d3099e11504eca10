//! numpy's file functions: `np.save` / `np.load` of `.npy` files (`np.load` of an `.npz`
//! archive and `np.savez` are `npz.rs`) and `np.loadtxt` /
//! `np.genfromtxt` of plain delimited numbers, with numpy's shapes (one row or one column
//! comes back 1-D) and errors. The `.npy` bytes are `tensor::npy` (writing) and
//! `keras::datasets::parse_npy` (reading, shared with the dataset loaders).

use std::path::Path;

use crate::bindings::common::arg;
use crate::keras::datasets::parse_npy;
use crate::lang::{io_err, Args, Ctx, NativeFn, NativeModule, PyErr, PyResult, Value};
use crate::tensor::{npy, DType, NdArray};

use super::convert::{array_value, dtype_arg, err, int_of, to_array};

type Native = fn(&Args, &mut dyn Ctx) -> PyResult<Value>;

pub fn register(m: &NativeModule) {
    let fns: [(&'static str, Native); 6] = [
        ("save", save),
        ("load", load),
        ("savez", |a, c| super::npz::savez(a, c, false)),
        ("savez_compressed", |a, c| super::npz::savez(a, c, true)),
        ("loadtxt", |a, c| text(a, c, false)),
        ("genfromtxt", |a, c| text(a, c, true)),
    ];
    for (name, f) in fns {
        m.set(name, NativeFn::value(name, name, f));
    }
}

pub(super) fn path_of(v: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        // `pathlib.Path` objects print as their path.
        other if other.type_name().ends_with("Path") => ctx.str(other),
        other => Err(PyErr::type_error(format!(
            "expected str, bytes or os.PathLike object, not {}",
            other.type_name()
        ))),
    }
}

fn save(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("save", &["file", "arr", "allow_pickle"], 2)?;
    let mut path = path_of(arg(&s, 0), ctx)?;
    if !path.ends_with(".npy") {
        path.push_str(".npy");
    }
    let a = to_array(arg(&s, 1), None, ctx)?;
    std::fs::write(&path, npy::to_npy(&a)).map_err(|e| io_err(e, &path))?;
    Ok(Value::None)
}

fn load(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "load",
        &[
            "file",
            "mmap_mode",
            "allow_pickle",
            "fix_imports",
            "encoding",
        ],
        1,
    )?;
    let path = path_of(arg(&s, 0), ctx)?;
    let bytes = std::fs::read(&path).map_err(|e| io_err(e, &path))?;
    // numpy tells the formats apart by their first bytes: a zip archive is an `.npz`.
    if bytes.starts_with(b"PK\x03\x04") {
        return super::npz::NpzFile::open(&path, bytes);
    }
    npy_value(&path, &bytes)
}

/// The array of one `.npy` file's bytes (read from `path`, named in errors).
pub(super) fn npy_value(path: &str, bytes: &[u8]) -> PyResult<Value> {
    if !bytes.starts_with(b"\x93NUMPY") {
        return Err(PyErr::value_error(format!(
            "This file contains pickled (object) data or is not a .npy file: {path}"
        )));
    }
    let a = parse_npy(Path::new(path), bytes).map_err(|e| PyErr::value_error(e.to_string()))?;
    let arr = a.into_ndarray().map_err(err)?;
    // The shared reader keeps booleans as bytes; the header says which they were.
    let header = String::from_utf8_lossy(bytes.get(..128).unwrap_or(bytes)).to_string();
    let arr = if header.contains("'|b1'") {
        arr.astype(DType::Bool)
    } else {
        arr
    };
    Ok(array_value(arr))
}

/// `np.loadtxt` (every field a number, else numpy's ValueError) and `np.genfromtxt`
/// (a missing or bad field is NaN).
fn text(args: &Args, ctx: &mut dyn Ctx, lenient: bool) -> PyResult<Value> {
    let name = if lenient { "genfromtxt" } else { "loadtxt" };
    let names: &[&str] = if lenient {
        &["fname", "dtype", "comments", "delimiter", "skip_header"]
    } else {
        &[
            "fname",
            "dtype",
            "comments",
            "delimiter",
            "skiprows",
            "unpack",
        ]
    };
    let s = args.bind(name, names, 1)?;
    let path = path_of(arg(&s, 0), ctx)?;
    let body = std::fs::read_to_string(&path).map_err(|e| io_err(e, &path))?;
    let dt = dtype_arg(arg(&s, 1), ctx)?.unwrap_or(DType::F64);
    let comment = match s[2].as_ref() {
        Some(Value::Str(c)) => Some(c.to_string()),
        Some(Value::None) => None,
        _ => Some("#".to_string()),
    };
    let delim = match s[3].as_ref() {
        Some(Value::Str(d)) => Some(d.to_string()),
        _ => None,
    };
    let skip = s[4].as_ref().map(int_of).transpose()?.unwrap_or(0).max(0) as usize;
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for line in body.lines().skip(skip) {
        let line = match &comment {
            Some(c) => line.split(c.as_str()).next().unwrap_or(""),
            None => line,
        };
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = match &delim {
            Some(d) => line.split(d.as_str()).collect(),
            None => line.split_whitespace().collect(),
        };
        let row = rows.len();
        let vals = fields
            .iter()
            .enumerate()
            .map(|(col, f)| match f.trim().parse::<f64>() {
                Ok(v) => Ok(v),
                Err(_) if lenient => Ok(f64::NAN),
                Err(_) => Err(PyErr::value_error(format!(
                    "could not convert string '{}' to {} at row {row}, column {}.",
                    f.trim(),
                    dt.name(),
                    col + 1
                ))),
            })
            .collect::<PyResult<Vec<f64>>>()?;
        if let Some(first) = rows.first() {
            if first.len() != vals.len() {
                return Err(PyErr::value_error(format!(
                    "the number of columns changed from {} to {} at row {}; use `usecols` to select a subset and avoid this error",
                    first.len(),
                    vals.len(),
                    row + 1
                )));
            }
        }
        rows.push(vals);
    }
    let cols = rows.first().map_or(0, Vec::len);
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    let mut a = NdArray::from_f64(&[rows.len(), cols], flat).map_err(err)?;
    if !lenient
        && s.get(5)
            .cloned()
            .flatten()
            .is_some_and(|v| matches!(v, Value::Bool(true)))
    {
        a = a.transpose(None).map_err(err)?;
    }
    // numpy squeezes the axes of length one (a single row or column is 1-D).
    let dims: Vec<i64> = a
        .shape()
        .iter()
        .filter(|&&d| d != 1)
        .map(|&d| d as i64)
        .collect();
    let a = a.reshape(&dims).map_err(err)?.astype(dt);
    Ok(array_value(a))
}
