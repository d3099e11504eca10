//! Imports: the module cache (the same object on re-import), the kernel's loader for
//! `tensorflow`/`numpy`/..., dotted names found as attributes of their top module, and the
//! interpreter's own `sys`, `math` and `time`.

use crate::cell::{Output, StreamName};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Ctx;
use crate::lang::values::value::Value;
use crate::lang::{NativeFn, NativeModule};

/// The modules the interpreter itself provides; the loader's come first in the listing.
const OWN: [&str; 3] = ["math", "time", "sys"];

impl Vm<'_> {
    pub fn import(&mut self, name: &str) -> PyResult<Value> {
        if let Some(m) = self.core.modules.get(name) {
            return Ok(m.clone());
        }
        let m = match name {
            "sys" => Some(Ok(sys_module(self))),
            "math" => Some(Ok(super::math::math_module())),
            "time" => Some(Ok(time_module())),
            _ => (self.core.loader)(name, self),
        };
        let v = match m {
            Some(r) => r?,
            None => match name.rsplit_once('.') {
                Some((parent, last)) => {
                    let p = self.import(parent).map_err(|_| self.not_found(name))?;
                    match self.try_attr(&p, last)? {
                        Some(v) => v,
                        None => return Err(self.not_found(name)),
                    }
                }
                None => return Err(self.not_found(name)),
            },
        };
        self.core.modules.insert(name.to_string(), v.clone());
        Ok(v)
    }

    fn not_found(&self, name: &str) -> PyErr {
        let provided: Vec<&str> = self.core.provided.iter().copied().chain(OWN).collect();
        PyErr::new(
            "ModuleNotFoundError",
            format!(
                "No module named '{name}'. This kernel provides: {}.",
                provided.join(", ")
            ),
        )
    }
}

fn stream(name: &str, which: StreamName) -> Value {
    let w = NativeFn::value("write", "write(text)", move |a, ctx: &mut dyn Ctx| {
        let text = match a.pos.first() {
            Some(Value::Str(s)) => s.to_string(),
            Some(v) => ctx.str(v)?,
            None => String::new(),
        };
        let n = text.chars().count();
        ctx.emit(Output::Stream { name: which, text });
        Ok(Value::Int(n as i64))
    });
    NativeModule::new(name, "A text stream of the running cell.")
        .with("write", w)
        .with(
            "flush",
            NativeFn::value("flush", "flush()", |_, _| Ok(Value::None)),
        )
        .into_value()
}

fn sys_module(vm: &mut Vm) -> Value {
    let modules = vm.core.modules.clone();
    let mut d = crate::lang::values::value::Dict::default();
    for (k, v) in modules {
        d.insert_str(&k, v);
    }
    NativeModule::new("sys", "System-specific parameters of the kernel.")
        .with("stdout", stream("stdout", StreamName::Stdout))
        .with("stderr", stream("stderr", StreamName::Stderr))
        .with("argv", Value::list(vec![Value::str("mirror-kernel")]))
        .with("version", Value::str("3.11.0 (mirror-kernel)"))
        .with(
            "version_info",
            Value::tuple(vec![Value::Int(3), Value::Int(11), Value::Int(0)]),
        )
        .with("platform", Value::str(std::env::consts::OS))
        .with("maxsize", Value::Int(i64::MAX))
        .with(
            "modules",
            Value::Dict(std::rc::Rc::new(std::cell::RefCell::new(d))),
        )
        .with(
            "getrecursionlimit",
            NativeFn::value("getrecursionlimit", "getrecursionlimit()", |_, _| {
                Ok(Value::Int(crate::lang::eval::vm::RECURSION_LIMIT as i64))
            }),
        )
        .into_value()
}

fn time_module() -> Value {
    let start = std::time::Instant::now();
    NativeModule::new("time", "Time access.")
        .with(
            "time",
            NativeFn::value(
                "time",
                "time() -> float\nSeconds since the Epoch.",
                |_, _| {
                    let t = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_secs_f64())
                        .unwrap_or(0.0);
                    Ok(Value::Float(t))
                },
            ),
        )
        .with(
            "perf_counter",
            NativeFn::value("perf_counter", "perf_counter() -> float", move |_, _| {
                Ok(Value::Float(start.elapsed().as_secs_f64()))
            }),
        )
        .with(
            "monotonic",
            NativeFn::value("monotonic", "monotonic() -> float", move |_, _| {
                Ok(Value::Float(start.elapsed().as_secs_f64()))
            }),
        )
        .with(
            "sleep",
            NativeFn::value(
                "sleep",
                "sleep(seconds)\nDelay execution; an interrupt ends it early.",
                |a, ctx| {
                    let secs = a
                        .pos
                        .first()
                        .map(|v| v.as_float())
                        .transpose()?
                        .unwrap_or(0.0);
                    if secs.is_nan() {
                        return Err(PyErr::value_error("Invalid value NaN (not a number)"));
                    }
                    if secs < 0.0 {
                        return Err(PyErr::value_error("sleep length must be non-negative"));
                    }
                    // CPython refuses what does not fit its clock (about 292 years).
                    let end = std::time::Duration::try_from_secs_f64(secs)
                        .ok()
                        .filter(|d| d.as_secs() < i64::MAX as u64 / 1_000_000_000)
                        .and_then(|d| std::time::Instant::now().checked_add(d))
                        .ok_or_else(|| {
                            PyErr::new(
                                "OverflowError",
                                "timestamp out of range for platform time_t",
                            )
                        })?;
                    loop {
                        ctx.check_interrupt()?;
                        let now = std::time::Instant::now();
                        if now >= end {
                            return Ok(Value::None);
                        }
                        std::thread::sleep((end - now).min(std::time::Duration::from_millis(5)));
                    }
                },
            ),
        )
        .into_value()
}
