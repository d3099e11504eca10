//! `glob` (and the `fnmatch` matching it is built on): Unix shell-style wildcards `*`,
//! `?`, `[seq]`, `[!seq]`, with `**` spanning directories when `recursive=True`, following
//! CPython's algorithm (hidden names match only patterns that start with a dot; a pattern
//! without wildcards yields itself when the path exists). Directory entries are read in
//! sorted order, which is one of the orders CPython's `os.scandir` may produce.

use std::path::Path;

use super::path_arg;
use crate::bindings::common::{arg, ItemIter};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyResult, Value};

/// Whether `name` matches the shell pattern `pat` (`fnmatch.fnmatchcase`).
pub fn fnmatch(name: &str, pat: &str) -> bool {
    let n: Vec<char> = name.chars().collect();
    let p: Vec<char> = pat.chars().collect();
    // Iterative matching with one backtrack point for the last `*`, linear in practice.
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < n.len() {
        if j < p.len() {
            match p[j] {
                '*' => {
                    star = Some((j, i));
                    j += 1;
                    continue;
                }
                '?' => {
                    i += 1;
                    j += 1;
                    continue;
                }
                '[' => {
                    if let Some((hit, next)) = class_match(&p, j, n[i]) {
                        if hit {
                            i += 1;
                            j = next;
                            continue;
                        }
                    } else if n[i] == '[' {
                        i += 1;
                        j += 1;
                        continue;
                    }
                }
                c if c == n[i] => {
                    i += 1;
                    j += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sj, si)) => {
                j = sj + 1;
                i = si + 1;
                star = Some((sj, si + 1));
            }
            None => return false,
        }
    }
    p[j..].iter().all(|c| *c == '*')
}

/// The bracket expression starting at `p[j] == '['`: whether `c` is in it and the index
/// after it, or `None` when the bracket never closes (then `[` is a literal character).
fn class_match(p: &[char], j: usize, c: char) -> Option<(bool, usize)> {
    let mut k = j + 1;
    let negate = p.get(k) == Some(&'!');
    if negate {
        k += 1;
    }
    // A `]` right after the opening (or after `!`) is a member, not the end.
    let start = k;
    let mut hit = false;
    while k < p.len() && (p[k] != ']' || k == start) {
        if p.get(k + 1) == Some(&'-') && p.get(k + 2).is_some_and(|e| *e != ']') {
            hit |= p[k] <= c && c <= p[k + 2];
            k += 3;
        } else {
            hit |= p[k] == c;
            k += 1;
        }
    }
    if k >= p.len() {
        return None;
    }
    Some((hit != negate, k + 1))
}

fn has_magic(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// `os.path.split`: the head keeps no trailing slashes unless it is all slashes.
fn split(p: &str) -> (String, String) {
    let cut = p.rfind('/').map(|i| i + 1).unwrap_or(0);
    let (head, tail) = p.split_at(cut);
    let trimmed = head.trim_end_matches('/');
    let head = if trimmed.is_empty() { head } else { trimmed };
    (head.to_string(), tail.to_string())
}

/// `os.path.join(a, b)` for two parts.
fn join(a: &str, b: &str) -> String {
    if a.is_empty() || b.starts_with('/') {
        b.to_string()
    } else if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

struct Globber {
    root: Option<String>,
    recursive: bool,
    hidden: bool,
}

impl Globber {
    fn on_disk(&self, p: &str) -> String {
        match &self.root {
            Some(r) => join(r, p),
            None => p.to_string(),
        }
    }

    /// Sorted names in a directory (only subdirectories with `dironly`); unreadable: none.
    fn listdir(&self, dir: &str, dironly: bool) -> Vec<String> {
        let d = self.on_disk(if dir.is_empty() { "." } else { dir });
        let d = if d.is_empty() { ".".to_string() } else { d };
        let Ok(rd) = std::fs::read_dir(&d) else {
            return vec![];
        };
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter(|e| !dironly || e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn visible(&self, name: &str) -> bool {
        self.hidden || !name.starts_with('.')
    }

    fn glob1(&self, dir: &str, pat: &str, dironly: bool) -> Vec<String> {
        let names = self.listdir(dir, dironly);
        names
            .into_iter()
            .filter(|n| self.visible(n) || pat.starts_with('.'))
            .filter(|n| fnmatch(n, pat))
            .collect()
    }

    fn glob0(&self, dir: &str, base: &str) -> Vec<String> {
        let exists = if base.is_empty() {
            Path::new(&self.on_disk(dir)).is_dir()
        } else {
            let p = self.on_disk(&join(dir, base));
            std::fs::symlink_metadata(p).is_ok()
        };
        if exists {
            vec![base.to_string()]
        } else {
            vec![]
        }
    }

    fn glob2(&self, dir: &str, dironly: bool, ctx: &mut dyn Ctx) -> PyResult<Vec<String>> {
        let mut out = vec![String::new()];
        self.rlistdir(dir, dironly, &mut out, "", ctx)?;
        Ok(out)
    }

    fn rlistdir(
        &self,
        dir: &str,
        dironly: bool,
        out: &mut Vec<String>,
        prefix: &str,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        ctx.check_interrupt()?;
        for x in self.listdir(dir, dironly) {
            if !self.visible(&x) {
                continue;
            }
            let rel = join(prefix, &x);
            out.push(rel.clone());
            let path = if dir.is_empty() {
                x.clone()
            } else {
                join(dir, &x)
            };
            if std::fs::symlink_metadata(self.on_disk(&path)).is_ok_and(|m| m.is_dir()) {
                self.rlistdir(&path, dironly, out, &rel, ctx)?;
            }
        }
        Ok(())
    }

    fn iglob(&self, pathname: &str, dironly: bool, ctx: &mut dyn Ctx) -> PyResult<Vec<String>> {
        let (dirname, basename) = split(pathname);
        if !has_magic(pathname) {
            let found = if basename.is_empty() {
                Path::new(&self.on_disk(&dirname)).is_dir()
            } else {
                std::fs::symlink_metadata(self.on_disk(pathname)).is_ok()
            };
            return Ok(if found {
                vec![pathname.to_string()]
            } else {
                vec![]
            });
        }
        let rec = self.recursive && basename == "**";
        if dirname.is_empty() {
            return if rec {
                self.glob2("", dironly, ctx)
            } else {
                Ok(self.glob1("", &basename, dironly))
            };
        }
        let dirs = if dirname != pathname && has_magic(&dirname) {
            self.iglob(&dirname, true, ctx)?
        } else {
            vec![dirname]
        };
        let mut out = vec![];
        for d in dirs {
            let names = if !has_magic(&basename) {
                self.glob0(&d, &basename)
            } else if rec {
                self.glob2(&d, dironly, ctx)?
            } else {
                self.glob1(&d, &basename, dironly)
            };
            for n in names {
                out.push(if n.is_empty() {
                    if d.is_empty() || d.ends_with('/') {
                        d.clone()
                    } else {
                        format!("{d}/")
                    }
                } else {
                    join(&d, &n)
                });
            }
        }
        Ok(out)
    }
}

fn glob_call(name: &str, a: &Args, ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
    let s = a.bind(
        name,
        &[
            "pathname",
            "root_dir",
            "dir_fd",
            "recursive",
            "include_hidden",
        ],
        1,
    )?;
    let pathname = path_arg(s[0].as_ref(), name)?;
    let root = match arg(&s, 1) {
        Value::None => None,
        v => Some(path_arg(Some(v), name)?),
    };
    let g = Globber {
        root,
        recursive: ctx_truthy(arg(&s, 3)),
        hidden: ctx_truthy(arg(&s, 4)),
    };
    let mut found = g.iglob(&pathname, false, ctx)?;
    // A pattern starting with `**` also matched the empty path, which glob leaves out.
    if g.recursive && pathname.starts_with("**") && found.first().is_some_and(|f| f.is_empty()) {
        found.remove(0);
    }
    Ok(found.into_iter().map(Value::from).collect())
}

fn ctx_truthy(v: &Value) -> bool {
    match v {
        Value::None => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        _ => true,
    }
}

pub fn glob_module() -> Value {
    NativeModule::new("glob", "Filename globbing utility.")
        .with(
            "glob",
            NativeFn::value(
                "glob",
                "glob(pathname, *, root_dir=None, dir_fd=None, recursive=False, include_hidden=False)\nReturn a list of paths matching a pathname pattern.",
                |a, ctx| Ok(Value::list(glob_call("glob", a, ctx)?)),
            ),
        )
        .with(
            "iglob",
            NativeFn::value(
                "iglob",
                "iglob(pathname, *, root_dir=None, dir_fd=None, recursive=False, include_hidden=False)\nReturn an iterator which yields the paths matching a pathname pattern.",
                |a, ctx| Ok(ItemIter::value("generator", glob_call("iglob", a, ctx)?)),
            ),
        )
        .with(
            "escape",
            NativeFn::value(
                "escape",
                "escape(pathname)\nEscape all special characters.",
                |a, _| {
                    let s = a.bind("escape", &["pathname"], 1)?;
                    let p = path_arg(s[0].as_ref(), "escape")?;
                    let mut out = String::new();
                    for c in p.chars() {
                        if matches!(c, '*' | '?' | '[') {
                            out.push('[');
                            out.push(c);
                            out.push(']');
                        } else {
                            out.push(c);
                        }
                    }
                    Ok(Value::from(out))
                },
            ),
        )
        .with("has_magic", NativeFn::value("has_magic", "has_magic(s)", |a, _| {
            let s = a.bind("has_magic", &["s"], 1)?;
            Ok(Value::Bool(has_magic(arg(&s, 0).as_str()?)))
        }))
        .into_value()
}

pub fn fnmatch_module() -> Value {
    NativeModule::new("fnmatch", "Filename matching with shell patterns.")
        .with(
            "fnmatch",
            NativeFn::value("fnmatch", "fnmatch(name, pat)\nTest whether FILENAME matches PATTERN.", |a, _| {
                let s = a.bind("fnmatch", &["name", "pat"], 2)?;
                Ok(Value::Bool(fnmatch(arg(&s, 0).as_str()?, arg(&s, 1).as_str()?)))
            }),
        )
        .with(
            "fnmatchcase",
            NativeFn::value("fnmatchcase", "fnmatchcase(name, pat)\nTest whether FILENAME matches PATTERN, including case.", |a, _| {
                let s = a.bind("fnmatchcase", &["name", "pat"], 2)?;
                Ok(Value::Bool(fnmatch(arg(&s, 0).as_str()?, arg(&s, 1).as_str()?)))
            }),
        )
        .with(
            "filter",
            NativeFn::value("filter", "filter(names, pat)\nConstruct a list from those elements of the iterable NAMES that match PAT.", |a, ctx| {
                let s = a.bind("filter", &["names", "pat"], 2)?;
                let pat = arg(&s, 1).as_str()?.to_string();
                let mut out = vec![];
                for n in ctx.iterate(arg(&s, 0))? {
                    if fnmatch(n.as_str()?, &pat) {
                        out.push(n);
                    }
                }
                Ok(Value::list(out))
            }),
        )
        .into_value()
}
