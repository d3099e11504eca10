//! IPython syntax: line magics (`%time`, `%timeit`, `%who`, `%whos`, `%reset -f`, `%pwd`,
//! `%cd`, `%env`, `%matplotlib`, `%tensorboard` as its extension runs it), cell magics
//! (`%%time`), shell escapes (`!ls`) and help (`obj?`), with IPython's `UsageError` for
//! unknown magics.

use std::rc::Rc;
use std::time::Instant;

use crate::cell::StreamName;
use crate::lang::eval::vm::{Env, Vm};
use crate::lang::syntax::parse::{Mode, Tree};
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::value::Value;

/// Splits `%%name args\nbody` into the body and the magic.
pub fn split_cell_magic(code: &str) -> (String, Option<(String, String)>) {
    let t = code.trim_start();
    if let Some(rest) = t.strip_prefix("%%") {
        let (first, body) = rest.split_once('\n').unwrap_or((rest, ""));
        let (name, arg) = first.split_once(' ').unwrap_or((first, ""));
        return (
            body.to_string(),
            Some((name.trim().to_string(), arg.trim().to_string())),
        );
    }
    (code.to_string(), None)
}

fn fmt_time(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.2} µs", s * 1e6)
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

pub fn cell_magic(vm: &mut Vm, name: &str, _arg: &str, body: &str) -> PyResult<()> {
    match name {
        "time" => {
            let t = Instant::now();
            let r = run_snippet(vm, body);
            let dt = t.elapsed().as_secs_f64();
            vm.write(
                StreamName::Stdout,
                &format!(
                    "CPU times: user {0}, sys: 0 ns, total: {0}\nWall time: {0}\n",
                    fmt_time(dt)
                ),
            );
            r
        }
        "capture" => {
            let r = run_snippet(vm, body);
            vm.out.clear();
            r
        }
        "writefile" => {
            std::fs::write(_arg, body).map_err(|e| PyErr::os_error(e.to_string()))?;
            vm.write(StreamName::Stdout, &format!("Writing {_arg}\n"));
            Ok(())
        }
        "bash" | "sh" | "script" => shell(vm, body),
        other => Err(PyErr::new(
            "UsageError",
            format!("Cell magic `%%{other}` not found."),
        )),
    }
}

fn run_snippet(vm: &mut Vm, code: &str) -> PyResult<()> {
    let body = compile_snippet(vm, code)?;
    let env = Env::top();
    vm.exec_block(&body, &env)?;
    Ok(())
}

fn compile_snippet(vm: &mut Vm, code: &str) -> PyResult<Vec<crate::lang::syntax::ast::Stmt>> {
    let tree = Tree::parse_checked(code, Mode::Ipython)?;
    let src = Rc::new(crate::lang::syntax::ast::Source {
        file: vm.file.clone(),
        lines: code.lines().map(String::from).collect(),
    });
    let mut conv = crate::lang::syntax::convert::Converter::new(code, src);
    Ok(conv.body(tree.suite()))
}

fn shell(vm: &mut Vm, cmd: &str) -> PyResult<()> {
    vm.flush();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .output()
        .map_err(|e| PyErr::os_error(e.to_string()))?;
    vm.write(StreamName::Stdout, &String::from_utf8_lossy(&out.stdout));
    vm.write(StreamName::Stderr, &String::from_utf8_lossy(&out.stderr));
    Ok(())
}

impl Vm<'_> {
    pub fn escape(&mut self, kind: &str, text: &str, env: &Env) -> PyResult<()> {
        let text = text.trim();
        match kind {
            "!" | "!!" => shell(self, text),
            "?" | "??" => {
                let name = text.trim_end_matches('?').trim_start_matches('?').trim();
                let v = run_expr(self, name, env)?;
                let doc = super::help::help_text(self, &v)?;
                self.pager.push(crate::display::plain(doc));
                Ok(())
            }
            "%" => self.line_magic(text, env),
            other => Err(PyErr::new(
                "SyntaxError",
                format!("unsupported escape '{other}'"),
            )),
        }
    }

    fn line_magic(&mut self, text: &str, _env: &Env) -> PyResult<()> {
        let (name, arg) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let arg = arg.trim();
        match name {
            "matplotlib" | "load_ext" | "config" | "autoreload" => Ok(()),
            // What the tensorboard extension's magic runs.
            "tensorboard" => {
                use crate::lang::values::object::Ctx;
                let notebook = self.import("tensorboard.notebook")?;
                let start = Ctx::getattr(self, &notebook, "start")?;
                Ctx::call(self, &start, crate::lang::Args::new(vec![Value::from(arg)]))?;
                Ok(())
            }
            "time" => {
                let t = Instant::now();
                let r = run_snippet(self, arg);
                let dt = t.elapsed().as_secs_f64();
                self.write(
                    StreamName::Stdout,
                    &format!(
                        "CPU times: user {0}, sys: 0 ns, total: {0}\nWall time: {0}\n",
                        fmt_time(dt)
                    ),
                );
                r
            }
            "timeit" => self.timeit(arg),
            "who" | "whos" => {
                let names: Vec<(String, Value)> = self
                    .core
                    .globals
                    .borrow()
                    .iter()
                    .filter(|(k, _)| !k.starts_with('_'))
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect();
                if names.is_empty() {
                    self.write(StreamName::Stdout, "Interactive namespace is empty.\n");
                    return Ok(());
                }
                if name == "who" {
                    let mut ns: Vec<String> = names.into_iter().map(|(k, _)| k).collect();
                    ns.sort();
                    self.write(StreamName::Stdout, &format!("{}\t\n", ns.join("\t ")));
                } else {
                    let mut out = format!(
                        "{:<10} {:<10} {}\n{}\n",
                        "Variable",
                        "Type",
                        "Data/Info",
                        "-".repeat(30)
                    );
                    for (k, v) in names {
                        let r = self.str_of(&v)?;
                        out.push_str(&format!("{:<10} {:<10} {}\n", k, v.type_name(), r));
                    }
                    self.write(StreamName::Stdout, &out);
                }
                Ok(())
            }
            "reset" => {
                self.core.globals.borrow_mut().clear();
                self.core.state.clear();
                Ok(())
            }
            "pwd" => {
                let d = std::env::current_dir().map_err(|e| PyErr::os_error(e.to_string()))?;
                self.show(Value::from(d.display().to_string()))
            }
            "cd" => {
                let target = if arg.is_empty() {
                    std::env::var("HOME").unwrap_or_else(|_| "/".into())
                } else {
                    arg.to_string()
                };
                std::env::set_current_dir(&target)
                    .map_err(|e| PyErr::os_error(format!("[Errno 2] {e}: '{target}'")))?;
                let d = std::env::current_dir().map_err(|e| PyErr::os_error(e.to_string()))?;
                self.write(StreamName::Stdout, &format!("{}\n", d.display()));
                Ok(())
            }
            "env" => {
                if let Some((k, v)) = arg.split_once('=') {
                    std::env::set_var(k.trim(), v.trim());
                    self.write(
                        StreamName::Stdout,
                        &format!("env: {}={}\n", k.trim(), v.trim()),
                    );
                    Ok(())
                } else if !arg.is_empty() {
                    let v = std::env::var(arg).unwrap_or_default();
                    self.show(Value::from(v))
                } else {
                    let mut d = crate::lang::values::value::Dict::default();
                    for (k, v) in std::env::vars() {
                        d.insert_str(&k, Value::from(v));
                    }
                    self.show(Value::Dict(Rc::new(std::cell::RefCell::new(d))))
                }
            }
            _ => Err(PyErr::new(
                "UsageError",
                format!("Line magic function `%{name}` not found."),
            )),
        }
    }

    /// `%timeit stmt`: like IPython, picks a loop count that takes at least 0.2 s, runs
    /// seven repeats and reports their mean and standard deviation per loop.
    fn timeit(&mut self, code: &str) -> PyResult<()> {
        let body = compile_snippet(self, code)?;
        let env = Env::top();
        let run = |vm: &mut Self, loops: u64| -> PyResult<f64> {
            let t = Instant::now();
            for _ in 0..loops {
                vm.exec_block(&body, &env)?;
            }
            Ok(t.elapsed().as_secs_f64())
        };
        let mut loops: u64 = 1;
        while run(self, loops)? < 0.2 && loops < 10_000_000 {
            loops *= 10;
        }
        let mut per = vec![];
        for _ in 0..7 {
            per.push(run(self, loops)? / loops as f64);
        }
        let mean = per.iter().sum::<f64>() / per.len() as f64;
        let sd = (per.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / per.len() as f64).sqrt();
        let digits = loops.to_string();
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(c);
        }
        let plural = if loops == 1 { "" } else { "s" };
        let text = format!(
            "{} ± {} per loop (mean ± std. dev. of 7 runs, {grouped} loop{plural} each)\n",
            fmt_time(mean),
            fmt_time(sd)
        );
        self.write(StreamName::Stdout, &text);
        Ok(())
    }

    fn show(&mut self, v: Value) -> PyResult<()> {
        let data = self.rich_of(&v)?;
        self.flush();
        self.sink.emit(crate::cell::Output::ExecuteResult {
            execution_count: self.core.count,
            data,
            metadata: Default::default(),
        });
        Ok(())
    }
}

fn run_expr(vm: &mut Vm, code: &str, env: &Env) -> PyResult<Value> {
    let tree = Tree::parse_checked(code, Mode::Expression)?;
    let Some(parsed) = tree.expr() else {
        return Err(PyErr::new("SyntaxError", "invalid syntax"));
    };
    let src = Rc::new(crate::lang::syntax::ast::Source {
        file: vm.file.clone(),
        lines: vec![code.to_string()],
    });
    let mut conv = crate::lang::syntax::convert::Converter::new(code, src);
    let e = conv.expr(parsed);
    drop(tree);
    vm.eval(&e, env)
}

pub fn eval_text(vm: &mut Vm, code: &str) -> PyResult<Value> {
    let env = Env::top();
    run_expr(vm, code, &env)
}
