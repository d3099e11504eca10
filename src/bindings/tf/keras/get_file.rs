//! `tf.keras.utils.get_file`, as Keras 3.15 resolves it: the cache folder
//! (`cache_dir`, else `$KERAS_HOME` or `~/.keras`; `/tmp/.keras` when that folder is not a
//! writable directory), `cache_subdir`, the file name taken from the origin when not
//! given, the `_archive` / `_extracted` names Keras uses when extracting, a cached file
//! used as it is, and extraction of tar (plain or gzipped) and zip archives. The kernel
//! has no network: a `file://` origin is copied with Keras's progress line, and any other
//! origin fails with the exception urllib's failed lookup gives Keras, plus a hint naming
//! where to put the file. `file_hash`/`md5_hash` cannot be checked here (no hash
//! functions outside the protocol part) and are refused with a clear error rather than
//! ignored. Nothing here trains or touches tensors.

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::super::{given, print_line};
use crate::display::progress::{Mode, ProgressBar};
use crate::lang::{io_err, Args, Ctx, PyErr, PyResult, Value};

/// An optional string argument.
fn opt_str(slot: &Option<Value>) -> PyResult<Option<String>> {
    given(slot)
        .map(|v| v.as_str().map(str::to_string))
        .transpose()
}

/// A truthy flag argument.
fn flag(slot: &Option<Value>, ctx: &mut dyn Ctx) -> PyResult<bool> {
    match given(slot) {
        Some(v) => ctx.truthy(v),
        None => Ok(false),
    }
}

/// `os.path.expanduser` for a leading `~`.
fn expand_user(p: &str) -> PathBuf {
    match (p.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(p),
    }
}

/// `os.access(path, os.W_OK)`: the folder exists and is not read-only.
fn writable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| !m.permissions().readonly())
}

fn io_error(e: std::io::Error, path: &Path) -> PyErr {
    io_err(e, &path.to_string_lossy())
}

/// The file name Keras takes from an origin: the last segment of the URL's path.
fn name_from_origin(origin: &str) -> String {
    let after_scheme = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    let path = match origin.split_once("://") {
        Some(_) => after_scheme.find('/').map_or("", |i| &after_scheme[i..]),
        None => after_scheme,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    path.rsplit('/').next().unwrap_or("").to_string()
}

/// Fetches `origin` into `target`, as `urlretrieve` does for Keras: a `file://` origin is
/// copied (with the progress line Keras prints), anything else needs a network this
/// kernel does not have.
fn fetch(origin: &str, target: &Path, ctx: &mut dyn Ctx) -> PyResult<()> {
    let failure = |detail: String| {
        PyErr::new(
            "Exception",
            format!("URL fetch failure on {origin}: None -- {detail}"),
        )
    };
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Err(PyErr::value_error(format!("unknown url type: '{origin}'")));
    };
    if scheme != "file" {
        return Err(PyErr::new(
            "Exception",
            format!(
                "URL fetch failure on {origin}: None -- [Errno -3] Temporary failure in name \
                 resolution\nHint: this kernel has no network; download the file elsewhere and \
                 put it at {}, where get_file finds it in the cache.",
                target.display()
            ),
        ));
    }
    let source = PathBuf::from(rest.strip_prefix("localhost").unwrap_or(rest));
    let size = match fs::metadata(&source) {
        Ok(m) => m.len() as usize,
        Err(e) => {
            let errno = e.raw_os_error().unwrap_or(2);
            return Err(failure(format!(
                "[Errno {errno}] No such file or directory: '{}'",
                source.display()
            )));
        }
    };
    let mut bar = ProgressBar::new(Some(size), 1, Mode::Notebook);
    if let Err(e) = fs::copy(&source, target) {
        let _ = fs::remove_file(target);
        return Err(failure(io_error(e, &source).message().to_string()));
    }
    if let Some(r) = bar.finish_now(size, &[]) {
        print_line(ctx, &r.plain);
    }
    Ok(())
}

/// A relative path that stays inside the folder it is extracted to (Keras filters the
/// others out of an archive).
fn safe_relative(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    p.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then(|| p.to_path_buf())
}

/// The bytes of a tar archive, ungzipped when gzipped; `None` when it is not a tar.
fn tar_bytes(path: &Path) -> Option<Vec<u8>> {
    let raw = fs::read(path).ok()?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .ok()?;
        out
    } else {
        raw
    };
    (bytes.get(257..262) == Some(b"ustar")).then_some(bytes)
}

/// A NUL-terminated text field of a tar header.
fn field(h: &[u8], from: usize, to: usize) -> String {
    let f = h.get(from..to).unwrap_or(&[]);
    let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
    String::from_utf8_lossy(&f[..end]).trim().to_string()
}

/// Unpacks the regular files and folders of a ustar archive under `dir`.
fn untar(bytes: &[u8], dir: &Path) -> std::io::Result<()> {
    let mut at = 0;
    while let Some(h) = bytes.get(at..at + 512) {
        if h.iter().all(|&b| b == 0) {
            break;
        }
        let prefix = field(h, 345, 500);
        let base = field(h, 0, 100);
        let name = if prefix.is_empty() {
            base
        } else {
            format!("{prefix}/{base}")
        };
        let size = usize::from_str_radix(&field(h, 124, 136), 8).unwrap_or(0);
        let kind = h.get(156).copied().unwrap_or(b'0');
        let data = bytes.get(at + 512..at + 512 + size).unwrap_or(&[]);
        if let Some(rel) = safe_relative(&name) {
            let out = dir.join(rel);
            match kind {
                b'0' | 0 => {
                    if let Some(parent) = out.parent() {
                        fs::create_dir_all(parent)?;
                    }
                    fs::write(&out, data)?;
                }
                b'5' => fs::create_dir_all(&out)?,
                // Links, devices and pax headers are left out, as an untrusted archive's
                // links could point outside the folder.
                _ => {}
            }
        }
        at += 512 + size.div_ceil(512) * 512;
    }
    Ok(())
}

/// Keras's `extract_archive`: tries each format in turn; false when none matches.
fn extract(archive: &Path, dir: &Path, formats: &[&str]) -> PyResult<bool> {
    for f in formats {
        match *f {
            "tar" => {
                if let Some(bytes) = tar_bytes(archive) {
                    fs::create_dir_all(dir).map_err(|e| io_error(e, dir))?;
                    untar(&bytes, dir).map_err(|e| io_error(e, dir))?;
                    return Ok(true);
                }
            }
            "zip" => {
                let Ok(file) = fs::File::open(archive) else {
                    continue;
                };
                let Ok(mut z) = zip::ZipArchive::new(file) else {
                    continue;
                };
                fs::create_dir_all(dir).map_err(|e| io_error(e, dir))?;
                z.extract(dir).map_err(|e| {
                    PyErr::new(
                        "zipfile.BadZipFile",
                        format!("{e}: '{}'", archive.display()),
                    )
                })?;
                return Ok(true);
            }
            other => return Err(PyErr::new("NotImplementedError", other.to_string())),
        }
    }
    Ok(false)
}

/// `keras.utils.get_file(fname=None, origin=None, untar=False, md5_hash=None,
/// file_hash=None, cache_subdir='datasets', hash_algorithm='auto', extract=False,
/// archive_format='auto', cache_dir=None, force_download=False)`.
pub fn get_file(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "get_file",
        &[
            "fname",
            "origin",
            "untar",
            "md5_hash",
            "file_hash",
            "cache_subdir",
            "hash_algorithm",
            "extract",
            "archive_format",
            "cache_dir",
            "force_download",
        ],
        0,
    )?;
    let Some(origin) = opt_str(&s[1])? else {
        return Err(PyErr::value_error(
            "Please specify the \"origin\" argument (URL of the file to download).",
        ));
    };
    if given(&s[3]).is_some() || given(&s[4]).is_some() {
        return Err(PyErr::new(
            "NotImplementedError",
            "get_file cannot check file_hash or md5_hash in this kernel; leave them out \
             (the cached file is then used as it is).",
        ));
    }
    let untar_flag = flag(&s[2], ctx)?;
    let extract_flag = flag(&s[7], ctx)?;
    let force = flag(&s[10], ctx)?;
    let subdir = opt_str(&s[5])?.unwrap_or_else(|| "datasets".into());
    let base = match opt_str(&s[9])? {
        Some(d) => expand_user(&d),
        None => {
            let data = crate::keras::datasets::cache_dir();
            data.parent().map_or(data.clone(), Path::to_path_buf)
        }
    };
    let base = if writable(&base) {
        base
    } else {
        PathBuf::from("/tmp/.keras")
    };
    let datadir = base.join(&subdir);
    fs::create_dir_all(&datadir).map_err(|e| io_error(e, &datadir))?;
    let provided = opt_str(&s[0])?.filter(|f| !f.is_empty());
    let fname = match &provided {
        Some(f) if f.contains('/') => {
            return Err(PyErr::value_error(format!(
                "Paths are no longer accepted as the `fname` argument. To specify the \
                 file's parent directory, use the `cache_dir` argument. Received: fname={f}"
            )))
        }
        Some(f) => f.clone(),
        None => {
            let f = name_from_origin(&origin);
            if f.is_empty() {
                return Err(PyErr::value_error(format!(
                    "Can't parse the file name from the origin provided: '{origin}'.Please \
                     specify the `fname` argument."
                )));
            }
            f
        }
    };
    let unpack = extract_flag || untar_flag;
    let (target, extraction_dir) = match (&provided, fname.find('.')) {
        (Some(_), Some(dot)) if unpack => (
            datadir.join(&fname),
            Some(datadir.join(format!("{}_extracted", &fname[..dot]))),
        ),
        _ if unpack => (
            datadir.join(format!("{fname}_archive")),
            Some(datadir.join(&fname)),
        ),
        _ => (datadir.join(&fname), None),
    };
    if force || !target.exists() {
        print_line(ctx, &format!("Downloading data from {origin}"));
        fetch(&origin, &target, ctx)?;
    }
    let Some(dir) = extraction_dir else {
        return Ok(Value::str(target.to_string_lossy().as_ref()));
    };
    // `archive_format`: left out means "auto" (tar, then zip); `None` extracts nothing.
    let formats: Vec<&str> = match (&s[8], untar_flag) {
        (_, true) => vec!["tar"],
        (None, false) => vec!["tar", "zip"],
        (Some(Value::None), false) => vec![],
        (Some(v), false) => match v.as_str()? {
            "auto" => vec!["tar", "zip"],
            one => vec![one],
        },
    };
    if !extract(&target, &dir, &formats)? {
        super::schedules::warn(ctx, "Could not extract archive.");
    }
    Ok(Value::str(dir.to_string_lossy().as_ref()))
}
