//! `tempfile`: uniquely named temporary files and directories (gettempdir, mkdtemp,
//! mkstemp, TemporaryDirectory), named as CPython names them (`tmp` + eight characters
//! from `[a-z0-9_]`) and created exclusively, so two never collide. The descriptors
//! `mkstemp` opens are kept in the session and closed by `os.close`.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

use rand::Rng;

use super::{f, io_err, path_arg};
use crate::bindings::common::arg;
use crate::lang::{Ctx, NativeClass, NativeFn, NativeModule, Object, PyErr, PyResult, Value};

/// The files `mkstemp` opened, by descriptor, until `os.close` closes them. Only these
/// descriptors are closed by `os.close`: the kernel's own (its sockets) are not the
/// notebook's to close.
#[derive(Default)]
pub struct OpenFds(pub HashMap<i32, File>);

const NAME_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_";

fn gettempdir() -> String {
    std::env::temp_dir().to_string_lossy().into_owned()
}

/// `(suffix, prefix, dir)` as given or CPython's defaults (`""`, `"tmp"`, gettempdir()).
fn naming(s: &[Option<Value>], func: &str) -> PyResult<(String, String, String)> {
    let text = |i: usize, default: &str| -> PyResult<String> {
        match arg(s, i) {
            Value::None => Ok(default.to_string()),
            v => path_arg(Some(v), func),
        }
    };
    Ok((text(0, "")?, text(1, "tmp")?, text(2, &gettempdir())?))
}

/// Tries random names until `create` succeeds on one that did not exist.
fn create_unique<T>(
    (suffix, prefix, dir): &(String, String, String),
    create: impl Fn(&str) -> std::io::Result<T>,
) -> PyResult<(String, T)> {
    let mut rng = rand::thread_rng();
    for _ in 0..10000 {
        let name: String = (0..8)
            .map(|_| NAME_CHARS[rng.gen_range(0..NAME_CHARS.len())] as char)
            .collect();
        let path = if dir.ends_with('/') {
            format!("{dir}{prefix}{name}{suffix}")
        } else {
            format!("{dir}/{prefix}{name}{suffix}")
        };
        match create(&path) {
            Ok(t) => return Ok((path, t)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(e, &path)),
        }
    }
    Err(PyErr::new(
        "FileExistsError",
        "[Errno 17] No usable temporary file name found",
    ))
}

fn mkdtemp(s: &[Option<Value>], func: &str) -> PyResult<String> {
    let names = naming(s, func)?;
    let (path, ()) = create_unique(&names, |p| std::fs::DirBuilder::new().mode(0o700).create(p))?;
    Ok(path)
}

/// `TemporaryDirectory`: removed by `cleanup()`, at the end of its `with` block, or when
/// the object goes away, as CPython's finalizer does.
pub struct TempDir {
    name: String,
    ignore_errors: bool,
    removed: RefCell<bool>,
}

impl TempDir {
    fn cleanup(&self) -> PyResult<()> {
        if self.removed.replace(true) {
            return Ok(());
        }
        match std::fs::remove_dir_all(&self.name) {
            Err(e) if !self.ignore_errors && e.kind() != std::io::ErrorKind::NotFound => {
                Err(io_err(e, &self.name))
            }
            _ => Ok(()),
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !*self.removed.borrow() {
            let _ = std::fs::remove_dir_all(&self.name);
        }
    }
}

impl Object for TempDir {
    fn type_name(&self) -> String {
        "TemporaryDirectory".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<TemporaryDirectory {}>",
            crate::lang::str_repr(&self.name)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "name" => Some(Value::from(self.name.as_str())),
            "cleanup" => {
                let this = this.clone();
                Some(NativeFn::value("cleanup", "cleanup()", move |_, _| {
                    if let Some(t) = this.downcast::<TempDir>() {
                        t.cleanup()?;
                    }
                    Ok(Value::None)
                }))
            }
            _ => None,
        })
    }
    fn dir(&self) -> Vec<String> {
        vec!["name".into(), "cleanup".into()]
    }
    fn enter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(Value::from(self.name.as_str()))
    }
    fn exit(&self, _error: Option<&PyErr>, _ctx: &mut dyn Ctx) -> PyResult<bool> {
        self.cleanup()?;
        Ok(false)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

pub fn module() -> Value {
    let temp_dir = NativeClass::new(
        "TemporaryDirectory",
        "tempfile",
        "TemporaryDirectory(suffix=None, prefix=None, dir=None, ignore_cleanup_errors=False)\nCreate and return a temporary directory; `with` gives its name and removes it at the end.",
    )
    .constructor(|a, _| {
        let s = a.bind(
            "TemporaryDirectory",
            &["suffix", "prefix", "dir", "ignore_cleanup_errors"],
            0,
        )?;
        let name = mkdtemp(&s, "TemporaryDirectory")?;
        Ok(Value::native(TempDir {
            name,
            ignore_errors: matches!(arg(&s, 3), Value::Bool(true)),
            removed: RefCell::new(false),
        }))
    });
    NativeModule::new("tempfile", "Temporary files and directories.")
        .with("gettempdir", f("gettempdir", "gettempdir()\nReturns tempfile.tempdir as str.", |_, _| Ok(Value::from(gettempdir()))))
        .with("gettempprefix", f("gettempprefix", "gettempprefix()\nThe default prefix for temporary directories as string.", |_, _| Ok(Value::str("tmp"))))
        .with("mkdtemp", f("mkdtemp", "mkdtemp(suffix=None, prefix=None, dir=None)\nUser-callable function to create and return a unique temporary directory. The caller is responsible for deleting it.", |a, _| {
            let s = a.bind("mkdtemp", &["suffix", "prefix", "dir"], 0)?;
            Ok(Value::from(mkdtemp(&s, "mkdtemp")?))
        }))
        .with("mkstemp", f("mkstemp", "mkstemp(suffix=None, prefix=None, dir=None, text=False)\nUser-callable function to create and return a unique temporary file: (an OS-level handle, its absolute path). The caller closes it with os.close.", |a, ctx| {
            let s = a.bind("mkstemp", &["suffix", "prefix", "dir", "text"], 0)?;
            let names = naming(&s, "mkstemp")?;
            let (path, file) = create_unique(&names, |p| {
                std::fs::OpenOptions::new().read(true).write(true).create_new(true).mode(0o600).open(p)
            })?;
            let fd = file.as_raw_fd();
            ctx.state().get::<OpenFds>().0.insert(fd, file);
            Ok(Value::tuple(vec![Value::Int(fd as i64), Value::from(path)]))
        }))
        .with("TemporaryDirectory", temp_dir.into_value())
        .into_value()
}
