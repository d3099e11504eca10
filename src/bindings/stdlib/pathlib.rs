//! `pathlib.Path`: a native path object with `/` joins, `name`/`suffix`/`parent`, existence
//! tests, `mkdir`, `read_text`/`write_text`, `iterdir` and single-directory `glob`.

use std::any::Any;
use std::path::PathBuf;

use super::{io_err, normalize, path_arg, split_ext};
use crate::lang::{
    Args, BinOp, Ctx, NativeClass, NativeFn, NativeModule, Object, PyErr, PyResult, Value,
};

type PathMethod = dyn Fn(&Args) -> PyResult<Value>;

/// `pathlib.Path`.
pub struct PyPath(pub PathBuf);

impl PyPath {
    fn value(p: PathBuf) -> Value {
        Value::native(PyPath(p))
    }
    fn text(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }
}

impl Object for PyPath {
    fn type_name(&self) -> String {
        "PosixPath".into()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["PosixPath".into(), "Path".into(), "PurePath".into()]
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("PosixPath('{}')", self.text()))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(self.text())
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        _ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        if op != BinOp::Div {
            return Ok(None);
        }
        let o = match path_arg(Some(other), "/") {
            Ok(o) => o,
            Err(_) => return Ok(None),
        };
        Ok(Some(if reflected {
            PyPath::value(PathBuf::from(o).join(&self.0))
        } else {
            PyPath::value(self.0.join(o))
        }))
    }
    fn compare(
        &self,
        op: crate::lang::CmpOp,
        other: &Value,
        _ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        let same = other
            .downcast::<PyPath>()
            .map(|p| p.0 == self.0)
            .unwrap_or(false);
        Ok(match op {
            crate::lang::CmpOp::Eq => Some(Value::Bool(same)),
            crate::lang::CmpOp::Ne => Some(Value::Bool(!same)),
            _ => None,
        })
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let p = self.0.clone();
        let text = self.text();
        let m = |n: &str, body: Box<PathMethod>| NativeFn::value(n, "", move |a, _| body(a));
        Ok(Some(match name {
            "name" => Value::from(
                p.file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
            "suffix" => Value::from(
                split_ext(
                    &p.file_name()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                )
                .1,
            ),
            "stem" => Value::from(
                split_ext(
                    &p.file_name()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                )
                .0,
            ),
            "parent" => PyPath::value(
                p.parent()
                    .map(|x| {
                        if x.as_os_str().is_empty() {
                            PathBuf::from(".")
                        } else {
                            x.to_path_buf()
                        }
                    })
                    .unwrap_or(p.clone()),
            ),
            "parts" => Value::tuple(
                p.components()
                    .map(|c| Value::from(c.as_os_str().to_string_lossy().into_owned()))
                    .collect(),
            ),
            "exists" => m(name, Box::new(move |_| Ok(Value::Bool(p.exists())))),
            "is_file" => m(name, Box::new(move |_| Ok(Value::Bool(p.is_file())))),
            "is_dir" => m(name, Box::new(move |_| Ok(Value::Bool(p.is_dir())))),
            "mkdir" => m(
                name,
                Box::new(move |a| {
                    let s = a.bind("mkdir", &["mode", "parents", "exist_ok"], 0)?;
                    let parents = matches!(s[1], Some(Value::Bool(true)));
                    let exist_ok = matches!(s[2], Some(Value::Bool(true)));
                    if p.exists() {
                        return if exist_ok {
                            Ok(Value::None)
                        } else {
                            Err(PyErr::new(
                                "FileExistsError",
                                format!("[Errno 17] File exists: '{}'", p.display()),
                            ))
                        };
                    }
                    let r = if parents {
                        std::fs::create_dir_all(&p)
                    } else {
                        std::fs::create_dir(&p)
                    };
                    r.map_err(|e| io_err(e, &p.to_string_lossy()))?;
                    Ok(Value::None)
                }),
            ),
            "read_text" => m(
                name,
                Box::new(move |_| {
                    std::fs::read_to_string(&p)
                        .map(Value::from)
                        .map_err(|e| io_err(e, &p.to_string_lossy()))
                }),
            ),
            "write_text" => m(
                name,
                Box::new(move |a| {
                    let s = match a.pos.first() {
                        Some(Value::Str(s)) => s.to_string(),
                        Some(v) => {
                            return Err(PyErr::type_error(format!(
                                "data must be str, not {}",
                                v.type_name()
                            )))
                        }
                        None => {
                            return Err(PyErr::type_error(
                                "write_text() missing 1 required positional argument: 'data'",
                            ))
                        }
                    };
                    std::fs::write(&p, &s).map_err(|e| io_err(e, &p.to_string_lossy()))?;
                    Ok(Value::Int(s.chars().count() as i64))
                }),
            ),
            "unlink" => m(
                name,
                Box::new(move |_| {
                    std::fs::remove_file(&p).map_err(|e| io_err(e, &p.to_string_lossy()))?;
                    Ok(Value::None)
                }),
            ),
            "iterdir" => m(
                name,
                Box::new(move |_| {
                    let mut out = vec![];
                    for e in std::fs::read_dir(&p).map_err(|e| io_err(e, &p.to_string_lossy()))? {
                        let e = e.map_err(|e| io_err(e, &p.to_string_lossy()))?;
                        out.push(PyPath::value(e.path()));
                    }
                    Ok(Value::list(out))
                }),
            ),
            "glob" => m(
                name,
                Box::new(move |a| {
                    let pat = path_arg(a.pos.first(), "glob")?;
                    let mut out = vec![];
                    if let Ok(rd) = std::fs::read_dir(&p) {
                        let mut names: Vec<PathBuf> =
                            rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                        names.sort();
                        for n in names {
                            let base = n
                                .file_name()
                                .map(|s| s.to_string_lossy().into_owned())
                                .unwrap_or_default();
                            if glob_match(&pat, &base) {
                                out.push(PyPath::value(n));
                            }
                        }
                    }
                    Ok(Value::list(out))
                }),
            ),
            "resolve" | "absolute" => m(
                name,
                Box::new(move |_| {
                    let cwd = std::env::current_dir().map_err(|e| io_err(e, "."))?;
                    Ok(PyPath::value(PathBuf::from(normalize(
                        &cwd.join(&p).to_string_lossy(),
                    ))))
                }),
            ),
            "with_suffix" => m(
                name,
                Box::new(move |a| {
                    let s = path_arg(a.pos.first(), "with_suffix")?;
                    Ok(PyPath::value(PathBuf::from(format!(
                        "{}{s}",
                        split_ext(&text).0
                    ))))
                }),
            ),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        [
            "name",
            "suffix",
            "stem",
            "parent",
            "parts",
            "exists",
            "is_file",
            "is_dir",
            "mkdir",
            "read_text",
            "write_text",
            "unlink",
            "iterdir",
            "glob",
            "resolve",
            "absolute",
            "with_suffix",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn hash(&self) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.hash(&mut h);
        Some(h.finish())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `*` and `?` wildcards, as `Path.glob` uses them within one directory.
fn glob_match(pat: &str, name: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let n: Vec<char> = name.chars().collect();
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some(('?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    go(&p, &n)
}

pub fn pathlib_module() -> Value {
    let cls = NativeClass::new(
        "Path",
        "pathlib",
        "Path(*segments)\nA file-system path; `/` joins segments.",
    )
    .base("PurePath")
    .constructor(|a, _| {
        let parts = a
            .pos
            .iter()
            .map(|v| path_arg(Some(v), "Path"))
            .collect::<PyResult<Vec<_>>>()?;
        let mut p = PathBuf::new();
        if parts.is_empty() {
            p.push(".");
        }
        for s in parts {
            p.push(s);
        }
        Ok(PyPath::value(p))
    });
    let cls = cls.into_value();
    NativeModule::new("pathlib", "Object-oriented file-system paths.")
        .with("Path", cls.clone())
        .with("PosixPath", cls)
        .into_value()
}
