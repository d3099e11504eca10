//! numpy's `.npz` archives: `np.savez` (stored) and `np.savez_compressed` (deflated) write
//! one `.npy` member per array (keyword arrays under their names first, then positional
//! ones as `arr_0`, `arr_1`, ... as numpy orders them), and `np.load` of an archive gives
//! an [`NpzFile`]: `files`, `keys()`, `values()`, `items()`, `get`, `f[name]`, `in`,
//! `len`, iteration, `close` and `with`, with numpy's repr and `KeyError`. Arrays are read
//! when asked for, as numpy reads them. The `.npy` bytes are `tensor::npy` and
//! `keras::datasets::parse_npy`, shared with `np.save`/`np.load`.

use std::any::Any;
use std::io::{Cursor, Read, Write};

use crate::bindings::common::ItemIter;
use crate::lang::{io_err, str_repr, Args, Ctx, Object, PyErr, PyResult, Value};
use crate::tensor::npy;

use super::convert::to_array;

/// The members of an archive, kept as the bytes numpy wrote.
pub struct NpzFile {
    path: String,
    /// The keys: member names without their `.npy`.
    names: Vec<String>,
    /// The member names as stored, in the same order.
    members: Vec<String>,
    bytes: Vec<u8>,
}

/// Writes the arrays of `np.savez(file, *args, **kwds)` to `path` (".npz" appended when
/// missing, as numpy does).
pub fn savez(args: &Args, ctx: &mut dyn Ctx, compress: bool) -> PyResult<Value> {
    let name = if compress {
        "savez_compressed"
    } else {
        "savez"
    };
    let Some((file, rest)) = args.pos.split_first() else {
        return Err(PyErr::type_error(format!(
            "{name}() missing 1 required positional argument: 'file'"
        )));
    };
    let mut path = super::files::path_of(file, ctx)?;
    if !path.ends_with(".npz") {
        path.push_str(".npz");
    }
    let mut members: Vec<(String, Value)> = args.kw.clone();
    for (i, v) in rest.iter().enumerate() {
        let key = format!("arr_{i}");
        if members.iter().any(|(k, _)| *k == key) {
            return Err(PyErr::value_error(format!(
                "Cannot use un-named variables and keyword {key}"
            )));
        }
        members.push((key, v.clone()));
    }
    let method = if compress {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let zip_err = |e: zip::result::ZipError| PyErr::new("OSError", e.to_string());
    for (key, v) in &members {
        let a = to_array(v, None, ctx)?;
        w.start_file(format!("{key}.npy"), options)
            .map_err(zip_err)?;
        w.write_all(&npy::to_npy(&a))
            .map_err(|e| io_err(e, &path))?;
    }
    let bytes = w.finish().map_err(zip_err)?.into_inner();
    std::fs::write(&path, bytes).map_err(|e| io_err(e, &path))?;
    Ok(Value::None)
}

impl NpzFile {
    /// The archive `np.load` read from `path`, or numpy's error for a broken one.
    pub fn open(path: &str, bytes: Vec<u8>) -> PyResult<Value> {
        let z = zip::ZipArchive::new(Cursor::new(bytes.as_slice()))
            .map_err(|e| PyErr::new("BadZipFile", e.to_string()))?;
        let members: Vec<String> = z.file_names().map(str::to_string).collect();
        let names = members
            .iter()
            .map(|n| n.strip_suffix(".npy").unwrap_or(n).to_string())
            .collect();
        drop(z);
        Ok(Value::native(NpzFile {
            path: path.to_string(),
            names,
            members,
            bytes,
        }))
    }

    /// The array stored under `name`, or numpy's `KeyError`.
    fn array(&self, name: &str) -> PyResult<Value> {
        // str() of a KeyError is the repr of its argument, as CPython prints it.
        let missing =
            || PyErr::key_error(str_repr(&format!("{name} is not a file in the archive")));
        let Some(stored) = self
            .names
            .iter()
            .position(|n| n == name)
            .and_then(|i| self.members.get(i))
        else {
            return Err(missing());
        };
        let mut z = zip::ZipArchive::new(Cursor::new(self.bytes.as_slice()))
            .map_err(|e| PyErr::new("BadZipFile", e.to_string()))?;
        let mut member = z.by_name(stored).map_err(|_| missing())?;
        let mut buf = Vec::new();
        member
            .read_to_end(&mut buf)
            .map_err(|e| io_err(e, &self.path))?;
        super::files::npy_value(&self.path, &buf)
    }

    fn names_value(&self) -> Value {
        Value::list(self.names.iter().map(|n| Value::str(n)).collect())
    }
}

/// The attributes an `NpzFile` answers, for `dir()` and `getattr` alike.
const ATTRS: &[&str] = &["close", "files", "get", "items", "keys", "values"];

impl Object for NpzFile {
    fn type_name(&self) -> String {
        "NpzFile".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let mut keys = self
            .names
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if self.names.len() > 5 {
            keys.push_str("...");
        }
        let file = std::path::Path::new(&self.path)
            .file_name()
            .map_or(self.path.clone(), |f| f.to_string_lossy().to_string());
        Ok(format!("NpzFile {} with keys: {keys}", str_repr(&file)))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if name == "files" {
            return Ok(Some(self.names_value()));
        }
        if !ATTRS.contains(&name) {
            return Ok(None);
        }
        let me = this.clone();
        let method = name.to_string();
        Ok(Some(crate::lang::NativeFn::value(
            name,
            name,
            move |args, _ctx| {
                let Some(f) = me.downcast::<NpzFile>() else {
                    return Err(PyErr::type_error("NpzFile method on another object"));
                };
                match method.as_str() {
                    "close" => Ok(Value::None),
                    "keys" => Ok(f.names_value()),
                    "values" => Ok(Value::list(
                        f.names
                            .iter()
                            .map(|n| f.array(n))
                            .collect::<PyResult<_>>()?,
                    )),
                    "items" => Ok(Value::list(
                        f.names
                            .iter()
                            .map(|n| Ok(Value::tuple(vec![Value::str(n), f.array(n)?])))
                            .collect::<PyResult<_>>()?,
                    )),
                    _ => {
                        let s = args.bind("get", &["key", "default"], 1)?;
                        let key = s[0].as_ref().map_or(Ok(""), |v| v.as_str())?;
                        if f.names.iter().any(|n| n == key) {
                            f.array(key)
                        } else {
                            Ok(s[1].clone().unwrap_or(Value::None))
                        }
                    }
                }
            },
        )))
    }
    fn dir(&self) -> Vec<String> {
        ATTRS.iter().map(|a| a.to_string()).collect()
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        Ok(Some(self.names.len()))
    }
    fn getitem(&self, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        match key {
            Value::Str(s) => self.array(s),
            other => {
                let shown = ctx.str(other)?;
                Err(PyErr::key_error(str_repr(&format!(
                    "{shown} is not a file in the archive"
                ))))
            }
        }
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(ItemIter::list(
            self.names.iter().map(|n| Value::str(n)).collect(),
        ))
    }
    fn enter(&self, this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(this.clone())
    }
    fn exit(&self, _error: Option<&PyErr>, _ctx: &mut dyn Ctx) -> PyResult<bool> {
        Ok(false)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
