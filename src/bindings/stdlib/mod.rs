//! The `os`, `os.path` and `pathlib` modules: the file-system basics notebooks use to
//! find data and save models (getcwd, listdir, makedirs, environ, path joins and tests,
//! `Path` with `/`, `exists`, `mkdir`, `read_text`, `write_text`, `glob`), and the
//! standard-library modules notebooks import beside them, a file (or folder) each: `json`,
//! `shutil`, `tempfile`, `glob`, `fnmatch`, `string`, `itertools`, `functools`,
//! `operator`, `collections` (`deque`, `namedtuple`; its dict subclasses `Counter`,
//! `defaultdict` and `OrderedDict` in `mappings`), `random` (CPython's streams), `re`,
//! `textwrap`, `io` (`StringIO`), `copy`, `datetime`, `csv`, `pprint`, `typing`,
//! `contextlib`, `statistics`, `logging` and `dataclasses`. [`NAMES`] is the
//! one list of them. Plain wrappers over `std::fs`; errors become
//! `FileNotFoundError`/`OSError` with CPython's wording.

mod collections;
mod contextlib;
mod copy;
mod csv;
mod dataclasses;
mod datetime;
mod functools;
mod glob;
mod io;
mod itertools;
pub mod json;
pub(crate) mod logging;
mod mappings;
mod operator;
mod pathlib;
mod pprint;
pub mod random;
mod re;
pub(crate) mod record;
mod shutil;
mod statistics;
mod string;
mod tempfile;
mod textwrap;
mod typing;

use std::path::Path as StdPath;

use pathlib::{pathlib_module, PyPath};

use crate::lang::{Args, Ctx, NativeFn, NativeModule, Object, PyErr, PyResult, Value};

pub(crate) fn io_err(e: std::io::Error, path: &str) -> PyErr {
    let code = e.raw_os_error().unwrap_or(0);
    // CPython picks the subclass from the errno.
    let name = match (e.kind(), code) {
        (std::io::ErrorKind::NotFound, _) => "FileNotFoundError",
        (std::io::ErrorKind::PermissionDenied, _) => "PermissionError",
        (std::io::ErrorKind::AlreadyExists, _) => "FileExistsError",
        (_, 20) => "NotADirectoryError",
        (_, 21) => "IsADirectoryError",
        _ => "OSError",
    };
    let msg = e.to_string();
    let msg = msg.split(" (os error").next().unwrap_or(&msg).to_string();
    PyErr::new(name, format!("[Errno {code}] {msg}: '{path}'"))
}

/// A path argument: a `str` or a `Path`.
pub(crate) fn path_arg(v: Option<&Value>, func: &str) -> PyResult<String> {
    match v {
        Some(Value::Str(s)) => Ok(s.to_string()),
        Some(v) => match v.downcast::<PyPath>() {
            Some(p) => Ok(p.0.to_string_lossy().into_owned()),
            None => Err(PyErr::type_error(format!(
                "{func}: path should be string or PathLike, not {}",
                v.type_name()
            ))),
        },
        None => Err(PyErr::type_error(format!(
            "{func}() missing required argument 'path'"
        ))),
    }
}

fn f(
    name: &str,
    doc: &str,
    body: impl Fn(&Args, &mut dyn Ctx) -> PyResult<Value> + 'static,
) -> Value {
    NativeFn::value(name, doc, body)
}

/// One method of a native's table: its name and body, which gets the object, the value
/// wrapping it, and the call's arguments. The table, declared once per type, drives both
/// `getattr` ([`bound_method`]) and `dir()` ([`method_names`]).
pub(crate) type Method<T> = (
    &'static str,
    fn(&T, &Value, &Args, &mut dyn Ctx) -> PyResult<Value>,
);

/// The method `name` of `table` bound to `this`, which wraps a `T`.
pub(crate) fn bound_method<T: Object>(
    this: &Value,
    table: &'static [Method<T>],
    name: &str,
) -> Option<Value> {
    let (n, body) = table.iter().find(|(n, _)| *n == name)?;
    let (me, body) = (this.clone(), *body);
    Some(f(n, "", move |a, ctx| match me.downcast::<T>() {
        Some(x) => body(x, &me, a, ctx),
        None => Ok(Value::None),
    }))
}

pub(crate) fn method_names<T>(table: &[Method<T>]) -> Vec<String> {
    table.iter().map(|(n, _)| n.to_string()).collect()
}

pub(crate) fn split_ext(p: &str) -> (String, String) {
    let base_start = p.rfind('/').map(|i| i + 1).unwrap_or(0);
    let base = &p[base_start..];
    let trimmed = base.trim_start_matches('.');
    let lead = base.len() - trimmed.len();
    match trimmed.rfind('.') {
        Some(i) => {
            let cut = base_start + lead + i;
            (p[..cut].to_string(), p[cut..].to_string())
        }
        None => (p.to_string(), String::new()),
    }
}

fn join(parts: &[String]) -> String {
    let mut out = String::new();
    for p in parts {
        if p.starts_with('/') || out.is_empty() {
            out = p.clone();
        } else if out.ends_with('/') {
            out.push_str(p);
        } else {
            out.push('/');
            out.push_str(p);
        }
    }
    out
}

fn path_module() -> Value {
    NativeModule::new("posixpath", "Common pathname manipulations.")
        .with(
            "join",
            f("join", "join(a, *p)\nJoin path components.", |a, _| {
                let parts = a
                    .pos
                    .iter()
                    .map(|v| path_arg(Some(v), "join"))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(Value::from(join(&parts)))
            }),
        )
        .with(
            "exists",
            f("exists", "exists(path)", |a, _| {
                Ok(Value::Bool(
                    StdPath::new(&path_arg(a.pos.first(), "exists")?).exists(),
                ))
            }),
        )
        .with(
            "isfile",
            f("isfile", "isfile(path)", |a, _| {
                Ok(Value::Bool(
                    StdPath::new(&path_arg(a.pos.first(), "isfile")?).is_file(),
                ))
            }),
        )
        .with(
            "isdir",
            f("isdir", "isdir(path)", |a, _| {
                Ok(Value::Bool(
                    StdPath::new(&path_arg(a.pos.first(), "isdir")?).is_dir(),
                ))
            }),
        )
        .with(
            "basename",
            f("basename", "basename(p)", |a, _| {
                let p = path_arg(a.pos.first(), "basename")?;
                Ok(Value::str(p.rsplit('/').next().unwrap_or("")))
            }),
        )
        .with(
            "dirname",
            f("dirname", "dirname(p)", |a, _| {
                let p = path_arg(a.pos.first(), "dirname")?;
                Ok(Value::str(match p.rfind('/') {
                    Some(0) => "/",
                    Some(i) => &p[..i],
                    None => "",
                }))
            }),
        )
        .with(
            "splitext",
            f("splitext", "splitext(p)", |a, _| {
                let (r, e) = split_ext(&path_arg(a.pos.first(), "splitext")?);
                Ok(Value::tuple(vec![Value::from(r), Value::from(e)]))
            }),
        )
        .with(
            "abspath",
            f("abspath", "abspath(path)", |a, _| {
                let p = path_arg(a.pos.first(), "abspath")?;
                let cwd = std::env::current_dir().map_err(|e| io_err(e, "."))?;
                Ok(Value::from(normalize(&cwd.join(p).to_string_lossy())))
            }),
        )
        .with(
            "getsize",
            f("getsize", "getsize(filename)", |a, _| {
                let p = path_arg(a.pos.first(), "getsize")?;
                let m = std::fs::metadata(&p).map_err(|e| io_err(e, &p))?;
                Ok(Value::Int(m.len() as i64))
            }),
        )
        .with("sep", Value::str("/"))
        .into_value()
}

/// Removes `.` and `..` components, as `os.path.abspath` does.
pub(crate) fn normalize(p: &str) -> String {
    let mut parts: Vec<&str> = vec![];
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The session's `os.environ`, kept when `os` is first imported so that other modules read
/// what the cells set there (TensorFlow reads `TF_CONFIG` from it).
#[derive(Default)]
pub struct SessionEnviron(Option<Value>);

/// A variable of the environment as the session sees it: `os.environ` once a cell imported
/// `os`, else the process's own environment.
pub fn session_env(ctx: &mut dyn Ctx, name: &str) -> Option<String> {
    match &ctx.state().get::<SessionEnviron>().0 {
        Some(Value::Dict(d)) => d.borrow().get_str(name).and_then(|v| match v {
            Value::Str(s) => Some(s.to_string()),
            _ => None,
        }),
        _ => std::env::var(name).ok(),
    }
}

fn environ() -> Value {
    let mut d = crate::lang::Dict::default();
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    vars.sort();
    for (k, v) in vars {
        d.insert_str(&k, Value::from(v));
    }
    Value::Dict(std::rc::Rc::new(std::cell::RefCell::new(d)))
}

fn os_module(ctx: &mut dyn Ctx) -> Value {
    let env = environ();
    ctx.state().get::<SessionEnviron>().0 = Some(env.clone());
    NativeModule::new(
        "os",
        "Operating system interfaces: files, directories, environment.",
    )
    .with("path", path_module())
    .with("sep", Value::str("/"))
    .with("name", Value::str("posix"))
    .with("environ", env)
    .with(
        "getcwd",
        f(
            "getcwd",
            "getcwd()\nReturn the current working directory.",
            |_, _| {
                let d = std::env::current_dir().map_err(|e| io_err(e, "."))?;
                Ok(Value::from(d.to_string_lossy().into_owned()))
            },
        ),
    )
    .with(
        "chdir",
        f("chdir", "chdir(path)", |a, _| {
            let p = path_arg(a.pos.first(), "chdir")?;
            std::env::set_current_dir(&p).map_err(|e| io_err(e, &p))?;
            Ok(Value::None)
        }),
    )
    .with(
        "listdir",
        f(
            "listdir",
            "listdir(path='.')\nNames of the entries in a directory.",
            |a, _| {
                let p = match a.pos.first() {
                    Some(v) => path_arg(Some(v), "listdir")?,
                    None => ".".into(),
                };
                let mut names = vec![];
                for e in std::fs::read_dir(&p).map_err(|e| io_err(e, &p))? {
                    let e = e.map_err(|e| io_err(e, &p))?;
                    names.push(Value::from(e.file_name().to_string_lossy().into_owned()));
                }
                Ok(Value::list(names))
            },
        ),
    )
    .with(
        "makedirs",
        f("makedirs", "makedirs(name, exist_ok=False)", |a, _| {
            let s = a.bind("makedirs", &["name", "mode", "exist_ok"], 1)?;
            let p = path_arg(s[0].as_ref(), "makedirs")?;
            let exist_ok = matches!(s[2], Some(Value::Bool(true)));
            if StdPath::new(&p).exists() && !exist_ok {
                return Err(PyErr::new(
                    "FileExistsError",
                    format!("[Errno 17] File exists: '{p}'"),
                ));
            }
            std::fs::create_dir_all(&p).map_err(|e| io_err(e, &p))?;
            Ok(Value::None)
        }),
    )
    .with(
        "mkdir",
        f("mkdir", "mkdir(path)", |a, _| {
            let p = path_arg(a.pos.first(), "mkdir")?;
            std::fs::create_dir(&p).map_err(|e| io_err(e, &p))?;
            Ok(Value::None)
        }),
    )
    .with(
        "remove",
        f("remove", "remove(path)", |a, _| {
            let p = path_arg(a.pos.first(), "remove")?;
            std::fs::remove_file(&p).map_err(|e| io_err(e, &p))?;
            Ok(Value::None)
        }),
    )
    .with(
        "getenv",
        f("getenv", "getenv(key, default=None)", |a, _| {
            let k = path_arg(a.pos.first(), "getenv")?;
            Ok(match std::env::var(&k) {
                Ok(v) => Value::from(v),
                Err(_) => a.pos.get(1).cloned().unwrap_or(Value::None),
            })
        }),
    )
    .with(
        "close",
        f(
            "close",
            "close(fd)\nClose a file descriptor that tempfile.mkstemp opened.",
            |a, ctx| {
                let s = a.bind("close", &["fd"], 1)?;
                let fd = crate::bindings::common::arg(&s, 0).as_int()?;
                let open = &mut ctx.state().get::<tempfile::OpenFds>().0;
                match i32::try_from(fd).ok().and_then(|fd| open.remove(&fd)) {
                    Some(_file) => Ok(Value::None),
                    None => Err(PyErr::os_error("[Errno 9] Bad file descriptor")),
                }
            },
        ),
    )
    .with(
        "cpu_count",
        f("cpu_count", "cpu_count()", |_, _| {
            Ok(Value::Int(
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1) as i64,
            ))
        }),
    )
    .into_value()
}

/// The standard-library modules this folder provides, as `import` names them.
pub const NAMES: &[&str] = &[
    "os",
    "os.path",
    "pathlib",
    "json",
    "shutil",
    "tempfile",
    "glob",
    "fnmatch",
    "string",
    "itertools",
    "functools",
    "operator",
    "collections",
    "random",
    "re",
    "textwrap",
    "io",
    "copy",
    "datetime",
    "csv",
    "pprint",
    "typing",
    "contextlib",
    "statistics",
    "logging",
    "dataclasses",
];

pub fn module(name: &str, ctx: &mut dyn Ctx) -> PyResult<Value> {
    Ok(match name {
        "os" => os_module(ctx),
        "os.path" => path_module(),
        "json" => json::module(ctx),
        "shutil" => shutil::module(ctx),
        "tempfile" => tempfile::module(),
        "glob" => glob::glob_module(),
        "fnmatch" => glob::fnmatch_module(),
        "string" => string::module(),
        "itertools" => itertools::module(),
        "functools" => functools::module(),
        "operator" => operator::module(),
        "collections" => collections::module(),
        "random" => random::module(ctx)?,
        "re" => re::module(ctx),
        "typing" => typing::module(),
        "contextlib" => contextlib::module(),
        "statistics" => statistics::module(ctx),
        "logging" => logging::module(),
        "dataclasses" => dataclasses::module(ctx),
        "textwrap" => textwrap::module(),
        "io" => io::module(),
        "copy" => copy::module(),
        "datetime" => datetime::module(),
        "csv" => csv::module(ctx),
        "pprint" => pprint::module(),
        _ => pathlib_module(),
    })
}
