//! `shutil`: high-level file operations (copy, copyfile, copy2, copytree, rmtree, move,
//! which, disk_usage, ignore_patterns) over `std::fs`, returning what CPython returns and
//! raising its `OSError` subclasses with its messages.

use std::path::Path;

use super::glob::fnmatch;
use super::record::Record;
use super::{f, io_err, path_arg};
use crate::bindings::common::arg;
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyErr, PyResult, Value};

fn truthy(v: &Value) -> bool {
    match v {
        Value::None => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        _ => true,
    }
}

fn basename(p: &str) -> &str {
    p.trim_end_matches('/').rsplit('/').next().unwrap_or("")
}

fn join(a: &str, b: &str) -> String {
    if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

fn errno(code: i32, text: &str, path: &str) -> PyErr {
    let name = match code {
        21 => "IsADirectoryError",
        20 => "NotADirectoryError",
        17 => "FileExistsError",
        _ => "OSError",
    };
    PyErr::new(name, format!("[Errno {code}] {text}: '{path}'"))
}

/// `copyfile`'s checks and copy; `keep_times` also copies the modification time (`copy2`).
fn copy_contents(src: &str, dst: &str, keep_times: bool) -> PyResult<()> {
    let meta = std::fs::metadata(src).map_err(|e| io_err(e, src))?;
    if meta.is_dir() {
        return Err(errno(21, "Is a directory", src));
    }
    if Path::new(dst).is_dir() {
        return Err(errno(21, "Is a directory", dst));
    }
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(src), std::fs::canonicalize(dst)) {
        if a == b {
            return Err(PyErr::new(
                "SameFileError",
                format!("'{src}' and '{dst}' are the same file"),
            ));
        }
    }
    std::fs::copy(src, dst).map_err(|e| io_err(e, dst))?;
    if keep_times {
        if let Ok(t) = meta.modified() {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(dst)
                .map_err(|e| io_err(e, dst))?;
            f.set_modified(t).map_err(|e| io_err(e, dst))?;
        }
    }
    Ok(())
}

/// `copy`/`copy2`: into a directory under the source's name; returns the destination.
fn copy_into(a: &Args, name: &str, keep_times: bool) -> PyResult<Value> {
    let s = a.bind(name, &["src", "dst", "follow_symlinks"], 2)?;
    let src = path_arg(s[0].as_ref(), name)?;
    let dst_v = arg(&s, 1).clone();
    let dst = path_arg(Some(&dst_v), name)?;
    if Path::new(&dst).is_dir() {
        let target = join(&dst, basename(&src));
        copy_contents(&src, &target, keep_times)?;
        return Ok(Value::from(target));
    }
    copy_contents(&src, &dst, keep_times)?;
    Ok(dst_v)
}

fn copytree(
    src: &str,
    dst: &str,
    ignore: &Value,
    copy_fn: &Value,
    exist_ok: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<()> {
    ctx.check_interrupt()?;
    let mut names = vec![];
    for e in std::fs::read_dir(src).map_err(|e| io_err(e, src))? {
        let e = e.map_err(|e| io_err(e, src))?;
        names.push(e.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    let ignored: Vec<String> = if ignore.is_none() {
        vec![]
    } else {
        let listed = Value::list(names.iter().map(|n| Value::from(n.as_str())).collect());
        let r = ctx.call(ignore, Args::new(vec![Value::from(src), listed]))?;
        ctx.iterate(&r)?
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<PyResult<_>>()?
    };
    if Path::new(dst).exists() && !exist_ok {
        return Err(errno(17, "File exists", dst));
    }
    std::fs::create_dir_all(dst).map_err(|e| io_err(e, dst))?;
    for n in names.iter().filter(|n| !ignored.contains(n)) {
        let (s, d) = (join(src, n), join(dst, n));
        if Path::new(&s).is_dir() {
            copytree(&s, &d, ignore, copy_fn, exist_ok, ctx)?;
        } else if copy_fn.is_none() {
            copy_contents(&s, &d, true)?;
        } else {
            ctx.call(copy_fn, Args::new(vec![Value::from(s), Value::from(d)]))?;
        }
    }
    Ok(())
}

fn rmtree(a: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("rmtree", &["path", "ignore_errors", "onerror"], 1)?;
    let p = path_arg(s[0].as_ref(), "rmtree")?;
    let result = match std::fs::symlink_metadata(&p) {
        Ok(m) if m.file_type().is_symlink() => {
            Err(PyErr::os_error("Cannot call rmtree on a symbolic link"))
        }
        Ok(m) if !m.is_dir() => Err(errno(20, "Not a directory", &p)),
        Ok(_) => std::fs::remove_dir_all(&p).map_err(|e| io_err(e, &p)),
        Err(e) => Err(io_err(e, &p)),
    };
    match result {
        Err(_) if truthy(arg(&s, 1)) => Ok(Value::None),
        r => r.map(|_| Value::None),
    }
}

fn move_path(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("move", &["src", "dst", "copy_function"], 2)?;
    let src = path_arg(s[0].as_ref(), "move")?;
    let dst_v = arg(&s, 1).clone();
    let dst = path_arg(Some(&dst_v), "move")?;
    let (real, out) = if Path::new(&dst).is_dir() {
        let real = join(&dst, basename(&src));
        if Path::new(&real).exists() {
            return Err(PyErr::new(
                "Error",
                format!("Destination path '{real}' already exists"),
            ));
        }
        (real.clone(), Value::from(real))
    } else {
        (dst, dst_v)
    };
    std::fs::symlink_metadata(&src).map_err(|e| io_err(e, &src))?;
    if std::fs::rename(&src, &real).is_err() {
        // Another file system: copy, then remove the source.
        if Path::new(&src).is_dir() {
            copytree(&src, &real, &Value::None, &Value::None, false, ctx)?;
            std::fs::remove_dir_all(&src).map_err(|e| io_err(e, &src))?;
        } else {
            copy_contents(&src, &real, true)?;
            std::fs::remove_file(&src).map_err(|e| io_err(e, &src))?;
        }
    }
    Ok(out)
}

fn which(a: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    use std::os::unix::fs::PermissionsExt;
    let s = a.bind("which", &["cmd", "mode", "path"], 1)?;
    let cmd = path_arg(s[0].as_ref(), "which")?;
    let runnable = |p: &str| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if cmd.contains('/') {
        return Ok(if runnable(&cmd) {
            Value::from(cmd)
        } else {
            Value::None
        });
    }
    let path = match arg(&s, 2) {
        Value::None => std::env::var("PATH").unwrap_or_else(|_| "/bin:/usr/bin".into()),
        v => path_arg(Some(v), "which")?,
    };
    let mut seen = vec![];
    for dir in path.split(':') {
        let dir = if dir.is_empty() { "." } else { dir };
        if seen.contains(&dir) {
            continue;
        }
        seen.push(dir);
        let p = join(dir, &cmd);
        if runnable(&p) {
            return Ok(Value::from(p));
        }
    }
    Ok(Value::None)
}

fn disk_usage(a: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("disk_usage", &["path"], 1)?;
    let p = path_arg(s[0].as_ref(), "disk_usage")?;
    let c =
        std::ffi::CString::new(p.clone()).map_err(|_| PyErr::value_error("embedded null byte"))?;
    // SAFETY: `statvfs` is plain old data that the call fills in; `c` is a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io_err(std::io::Error::last_os_error(), &p));
    }
    let frsize = st.f_frsize as i64;
    let total = st.f_blocks as i64 * frsize;
    let free = st.f_bavail as i64 * frsize;
    let used = (st.f_blocks as i64 - st.f_bfree as i64) * frsize;
    Ok(Record::value(
        "usage",
        &["total", "used", "free"],
        vec![Value::Int(total), Value::Int(used), Value::Int(free)],
    ))
}

fn ignore_patterns(a: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let pats = a
        .pos
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(NativeFn::value(
        "_ignore_patterns",
        "_ignore_patterns(path, names)\nThe names that match one of the patterns.",
        move |a, ctx| {
            let s = a.bind("_ignore_patterns", &["path", "names"], 2)?;
            let mut out = vec![];
            for n in ctx.iterate(arg(&s, 1))? {
                if pats.iter().any(|p| fnmatch(n.as_str().unwrap_or(""), p)) {
                    out.push(n);
                }
            }
            Ok(Value::list(out))
        },
    ))
}

pub fn module(ctx: &mut dyn Ctx) -> Value {
    NativeModule::new("shutil", "Utility functions for copying and archiving files and directory trees.")
        .with("copyfile", f("copyfile", "copyfile(src, dst, *, follow_symlinks=True)\nCopy data from src to dst; return dst.", |a, _| {
            let s = a.bind("copyfile", &["src", "dst", "follow_symlinks"], 2)?;
            let src = path_arg(s[0].as_ref(), "copyfile")?;
            let dst = path_arg(s[1].as_ref(), "copyfile")?;
            copy_contents(&src, &dst, false)?;
            Ok(arg(&s, 1).clone())
        }))
        .with("copy", f("copy", "copy(src, dst, *, follow_symlinks=True)\nCopy data and mode bits (\"cp src dst\"). Return the file's destination.", |a, _| copy_into(a, "copy", false)))
        .with("copy2", f("copy2", "copy2(src, dst, *, follow_symlinks=True)\nCopy data and metadata. Return the file's destination.", |a, _| copy_into(a, "copy2", true)))
        .with("copytree", f("copytree", "copytree(src, dst, symlinks=False, ignore=None, copy_function=copy2, ignore_dangling_symlinks=False, dirs_exist_ok=False)\nRecursively copy a directory tree and return the destination directory.", |a, ctx| {
            let s = a.bind("copytree", &["src", "dst", "symlinks", "ignore", "copy_function", "ignore_dangling_symlinks", "dirs_exist_ok"], 2)?;
            let src = path_arg(s[0].as_ref(), "copytree")?;
            let dst = path_arg(s[1].as_ref(), "copytree")?;
            std::fs::metadata(&src).map_err(|e| io_err(e, &src))?;
            copytree(&src, &dst, arg(&s, 3), arg(&s, 4), truthy(arg(&s, 6)), ctx)?;
            Ok(arg(&s, 1).clone())
        }))
        .with("rmtree", f("rmtree", "rmtree(path, ignore_errors=False, onerror=None)\nRecursively delete a directory tree.", rmtree))
        .with("move", f("move", "move(src, dst, copy_function=copy2)\nRecursively move a file or directory to another location. Return the file or directory's destination.", move_path))
        .with("which", f("which", "which(cmd, mode=os.F_OK | os.X_OK, path=None)\nReturn the path to an executable which would be run if the given cmd was called, or None.", which))
        .with("disk_usage", f("disk_usage", "disk_usage(path)\nReturn disk usage statistics about the given path as a named tuple with the attributes 'total', 'used' and 'free', in bytes.", disk_usage))
        .with("ignore_patterns", f("ignore_patterns", "ignore_patterns(*patterns)\nA function usable as copytree()'s ignore argument that ignores names matching the glob-style patterns.", ignore_patterns))
        .with("Error", crate::lang::exception_class(ctx, "Error"))
        .with("SameFileError", crate::lang::exception_class(ctx, "SameFileError"))
        .into_value()
}
