//! `IPython` and `IPython.display`: `display` (any value, through its rich bundle, with an
//! optional `display_id` that later updates replace in place), `update_display`,
//! `clear_output`, `DisplayHandle`, and the rich wrappers `HTML`, `Markdown`, `Math`,
//! `Latex`, `SVG` and `Image` (PNG or JPEG from a file). It only builds bundles and emits
//! outputs; the front end (Jupyter or the notebook runner) decides how they look.

use std::any::Any;

use base64::Engine;

use crate::cell::Output;
use crate::display::{html_escape, MimeBundle};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, Object, PyErr, PyResult, Value};

fn kw<'a>(args: &'a Args, name: &str) -> Option<&'a Value> {
    args.kw
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .filter(|v| !v.is_none())
}

/// A new display id, as IPython makes them (32 hex digits).
fn new_display_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The bundle for `obj`, or `obj` itself when `raw=True` hands a ready bundle (a dict).
fn bundle_of(obj: &Value, raw: bool, ctx: &mut dyn Ctx) -> PyResult<MimeBundle> {
    if raw {
        if let Value::Dict(d) = obj {
            let mut b = MimeBundle::new();
            for (k, v) in d.borrow().items() {
                let key = ctx.str(k)?;
                let value = match v {
                    Value::Str(s) => serde_json::Value::String(s.to_string()),
                    other => serde_json::Value::String(ctx.str(other)?),
                };
                b.insert(key, value);
            }
            return Ok(b);
        }
    }
    ctx.rich(obj)
}

fn display_id_arg(args: &Args) -> PyResult<Option<String>> {
    match kw(args, "display_id") {
        None | Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some(new_display_id())),
        Some(Value::Str(s)) => Ok(Some(s.to_string())),
        Some(other) => Err(PyErr::type_error(format!(
            "display_id must be True or a str, not {}",
            other.type_name()
        ))),
    }
}

fn raw_arg(args: &Args) -> PyResult<bool> {
    kw(args, "raw")
        .map(Value::as_bool_strict)
        .transpose()
        .map(|r| r.unwrap_or(false))
}

/// `display(*objs, display_id=None, raw=False, clear=False)`.
fn display(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let id = display_id_arg(args)?;
    let raw = raw_arg(args)?;
    if kw(args, "clear").map(Value::as_bool_strict).transpose()? == Some(true) {
        ctx.emit(Output::ClearOutput { wait: true });
    }
    for obj in &args.pos {
        let data = bundle_of(obj, raw, ctx)?;
        ctx.emit(Output::DisplayData {
            data,
            metadata: Default::default(),
            display_id: id.clone(),
        });
    }
    Ok(match id {
        Some(id) => Value::native(DisplayHandle { id }),
        None => Value::None,
    })
}

/// `update_display(obj, display_id=...)`.
fn update_display(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some(Value::Str(id)) = kw(args, "display_id") else {
        return Err(PyErr::type_error(
            "update_display() missing 1 required keyword-only argument: 'display_id'",
        ));
    };
    let id = id.to_string();
    let Some(obj) = args.pos.first() else {
        return Err(PyErr::type_error(
            "update_display() missing 1 required positional argument: 'obj'",
        ));
    };
    let data = bundle_of(obj, raw_arg(args)?, ctx)?;
    ctx.emit(Output::UpdateDisplayData {
        data,
        metadata: Default::default(),
        display_id: id,
    });
    Ok(Value::None)
}

/// What `display(..., display_id=True)` returns.
pub struct DisplayHandle {
    pub id: String,
}

impl Object for DisplayHandle {
    fn type_name(&self) -> String {
        "DisplayHandle".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<DisplayHandle display_id={}>", self.id))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let id = self.id.clone();
        Ok(Some(match name {
            "display_id" => Value::str(&id),
            "display" => NativeFn::value("display", "display(obj)", move |a, c| {
                display(&with_id(a, &id), c)
            }),
            "update" => NativeFn::value("update", "update(obj)", move |a, c| {
                update_display(&with_id(a, &id), c)
            }),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        vec!["display_id".into(), "display".into(), "update".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn with_id(args: &Args, id: &str) -> Args {
    let mut a = args.clone();
    a.kw.retain(|(k, _)| k != "display_id");
    a.kw.push(("display_id".into(), Value::str(id)));
    a
}

/// A value with a fixed rich bundle: `HTML`, `Markdown`, `Image`, ...
pub struct Rich {
    class: &'static str,
    bundle: MimeBundle,
    /// The text handed in, for `.data`.
    data: Value,
}

impl Object for Rich {
    fn type_name(&self) -> String {
        self.class.into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<IPython.core.display.{} object>", self.class))
    }
    fn rich(&self, ctx: &mut dyn Ctx) -> PyResult<Option<MimeBundle>> {
        let mut b = self.bundle.clone();
        b.insert(
            "text/plain".into(),
            serde_json::Value::String(self.repr(ctx)?),
        );
        Ok(Some(b))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "data" => Some(self.data.clone()),
            _ => None,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn text_arg(class: &str, args: &Args, ctx: &mut dyn Ctx) -> PyResult<String> {
    match args.pos.first().or_else(|| kw(args, "data")) {
        Some(Value::Str(s)) => Ok(s.to_string()),
        Some(v) => ctx.str(v),
        None => match kw(args, "filename") {
            Some(f) => {
                let path = ctx.str(f)?;
                std::fs::read_to_string(&path)
                    .map_err(|e| PyErr::new("FileNotFoundError", format!("{e}: '{path}'")))
            }
            None => Err(PyErr::type_error(format!(
                "{class}() needs data or filename"
            ))),
        },
    }
}

fn text_class(class: &'static str, mime: &'static str, wrap: fn(&str) -> String) -> Value {
    NativeFn::value(
        class,
        &format!("{class}(data=None, filename=None)"),
        move |a, c| {
            let text = text_arg(class, a, c)?;
            let mut bundle = MimeBundle::new();
            bundle.insert(mime.into(), serde_json::Value::String(wrap(&text)));
            Ok(Value::native(Rich {
                class,
                bundle,
                data: Value::str(&text),
            }))
        },
    )
}

/// `Image(filename=...)` or `Image('path.png')`: PNG or JPEG, recognised by content.
fn image(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let source = args
        .pos
        .first()
        .or_else(|| kw(args, "filename"))
        .or_else(|| kw(args, "data"))
        .ok_or_else(|| {
            PyErr::value_error("No image data found. Expecting filename, url, or data.")
        })?;
    if kw(args, "url").is_some() {
        return Err(PyErr::not_implemented("Image(url=...) cannot fetch from the network here; download the file and pass filename="));
    }
    let path = ctx.str(source)?;
    let bytes = std::fs::read(&path)
        .map_err(|e| PyErr::new("FileNotFoundError", format!("{e}: '{path}'")))?;
    let mime = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        "image/jpeg"
    } else {
        return Err(PyErr::value_error(format!(
            "Cannot embed '{path}': only PNG and JPEG images are supported"
        )));
    };
    let mut bundle = MimeBundle::new();
    bundle.insert(
        mime.into(),
        serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(&bytes)),
    );
    Ok(Value::native(Rich {
        class: "Image",
        bundle,
        data: Value::str(&path),
    }))
}

fn display_module() -> NativeModule {
    let m = NativeModule::new(
        "IPython.display",
        "Rich display of values in the front end.",
    );
    m.set(
        "display",
        NativeFn::value(
            "display",
            "display(*objs, display_id=None, raw=False)",
            display,
        ),
    );
    m.set(
        "update_display",
        NativeFn::value(
            "update_display",
            "update_display(obj, *, display_id)",
            update_display,
        ),
    );
    m.set(
        "clear_output",
        NativeFn::value("clear_output", "clear_output(wait=False)", |a, c| {
            let wait = match a.pos.first().or_else(|| kw(a, "wait")) {
                Some(v) => v.as_bool_strict()?,
                None => false,
            };
            c.emit(Output::ClearOutput { wait });
            Ok(Value::None)
        }),
    );
    m.set(
        "DisplayHandle",
        NativeFn::value("DisplayHandle", "DisplayHandle(display_id=None)", |a, _| {
            let id = match a.pos.first().or_else(|| kw(a, "display_id")) {
                Some(Value::Str(s)) => s.to_string(),
                _ => new_display_id(),
            };
            Ok(Value::native(DisplayHandle { id }))
        }),
    );
    m.set("HTML", text_class("HTML", "text/html", str::to_string));
    m.set(
        "Markdown",
        text_class("Markdown", "text/markdown", str::to_string),
    );
    m.set("Latex", text_class("Latex", "text/latex", str::to_string));
    m.set(
        "Math",
        text_class("Math", "text/latex", |s| {
            format!("$\\displaystyle {}$", s.trim().trim_matches('$'))
        }),
    );
    m.set("SVG", text_class("SVG", "image/svg+xml", str::to_string));
    m.set("Pretty", text_class("Pretty", "text/plain", str::to_string));
    m.set(
        "Code",
        text_class("Code", "text/html", |s| {
            format!("<pre>{}</pre>", html_escape(s))
        }),
    );
    m.set(
        "Image",
        NativeFn::value(
            "Image",
            "Image(data=None, filename=None, format=None)",
            image,
        ),
    );
    m
}

/// The module object for `IPython` or `IPython.display`.
pub fn module(name: &str, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let disp = display_module().into_value();
    if name == "IPython.display" {
        return Ok(disp);
    }
    let top = NativeModule::new("IPython", "The parts of IPython a kernel cell can use.");
    top.set("display", disp);
    top.set(
        "version_info",
        Value::tuple(vec![
            Value::Int(8),
            Value::Int(24),
            Value::Int(0),
            Value::str(""),
        ]),
    );
    top.set("__version__", Value::str("8.24.0"));
    Ok(top.into_value())
}
