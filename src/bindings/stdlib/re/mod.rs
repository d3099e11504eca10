//! `re`: regular expressions with CPython's functions, flags, match objects and `re.error`
//! texts, run by the `regex` crate (linear time; look-around and backreferences, which it
//! cannot run, are refused with a `re.error` saying so). `syntax` reads Python's pattern
//! language, `pattern` is `re.Pattern` and `matched` is `re.Match`.

mod matched;
mod pattern;
mod syntax;

use pattern::{text_arg, Pattern, METHODS};
use syntax::{DOTALL, IGNORECASE, MULTILINE, VERBOSE};

use super::f;
use crate::bindings::common::arg;
use crate::lang::{Args, Ctx, NativeClass, NativeModule, PyErr, PyResult, Value};

/// The compiled pattern a `pattern` argument names: a `str` compiled with `flags`, or a
/// `Pattern` as it is.
fn compiled(pattern: &Value, flags: &Value) -> PyResult<Value> {
    if pattern.downcast::<Pattern>().is_some() {
        if !matches!(flags, Value::None | Value::Int(0)) {
            return Err(PyErr::value_error(
                "cannot process flags argument with a compiled pattern",
            ));
        }
        return Ok(pattern.clone());
    }
    let Value::Str(src) = pattern else {
        return Err(PyErr::type_error(
            "first argument must be string or compiled pattern",
        ));
    };
    let flags = match flags {
        Value::None => 0,
        v => v.as_int()?,
    };
    Ok(Value::native(Pattern::compile(src, flags)?))
}

/// `re.NAME(pattern, <the method's arguments>, flags=0)`: the function form of a
/// `Pattern` method, which compiles `pattern` and calls the method.
fn function(name: &'static str, params: &'static [&'static str], required: usize) -> Value {
    f(name, "", move |a, ctx| {
        let s = a.bind(name, params, required)?;
        let flags = arg(&s, params.len() - 1);
        let p = compiled(arg(&s, 0), flags)?;
        let rest: Vec<Value> = s[1..params.len() - 1]
            .iter()
            .map_while(|v| v.clone())
            .collect();
        let Some((_, body)) = METHODS.iter().find(|(n, _)| *n == name) else {
            return Ok(Value::None);
        };
        match p.downcast::<Pattern>() {
            Some(pat) => body(pat, &p, &Args::new(rest), ctx),
            None => Ok(Value::None),
        }
    })
}

/// `re.escape`: a backslash before each character special in a pattern, as CPython 3.7+.
fn escape(a: &Args, _: &mut dyn Ctx) -> PyResult<Value> {
    let s = a.bind("escape", &["pattern"], 1)?;
    let text = text_arg(arg(&s, 0))?;
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\x0b\x0c".contains(ch) {
            out.push('\\');
        }
        out.push(ch);
    }
    Ok(Value::from(out))
}

pub fn module(ctx: &mut dyn Ctx) -> Value {
    let mut m = NativeModule::new("re", "Support for regular expressions (RE).")
        .with(
            "compile",
            f("compile", "compile(pattern, flags=0)", |a, _| {
                let s = a.bind("compile", &["pattern", "flags"], 1)?;
                compiled(arg(&s, 0), arg(&s, 1))
            }),
        )
        .with("escape", f("escape", "escape(pattern)", escape))
        .with("error", crate::lang::exception_class(ctx, "error"))
        // The classes, for `isinstance`; patterns come from `compile`, matches from matching.
        .with(
            "Pattern",
            NativeClass::new("Pattern", "re", "Compiled regular expression object.").into_value(),
        )
        .with(
            "Match",
            NativeClass::new("Match", "re", "The result of re.match() and re.search().")
                .into_value(),
        );
    let functions: [(&str, &[&str], usize); 8] = [
        ("match", &["pattern", "string", "flags"], 2),
        ("search", &["pattern", "string", "flags"], 2),
        ("fullmatch", &["pattern", "string", "flags"], 2),
        ("findall", &["pattern", "string", "flags"], 2),
        ("finditer", &["pattern", "string", "flags"], 2),
        ("sub", &["pattern", "repl", "string", "count", "flags"], 3),
        ("subn", &["pattern", "repl", "string", "count", "flags"], 3),
        ("split", &["pattern", "string", "maxsplit", "flags"], 2),
    ];
    for (name, params, required) in functions {
        m = m.with(name, function(name, params, required));
    }
    for (long, short, bit) in [
        ("IGNORECASE", "I", IGNORECASE),
        ("MULTILINE", "M", MULTILINE),
        ("DOTALL", "S", DOTALL),
        ("VERBOSE", "X", VERBOSE),
    ] {
        m = m.with(long, Value::Int(bit)).with(short, Value::Int(bit));
    }
    m.into_value()
}
