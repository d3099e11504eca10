//! `logging`: named loggers in a dotted hierarchy (`getLogger`, levels, `setLevel`,
//! `propagate`, `disabled`), `basicConfig`, the module-level `debug`/`info`/`warning`/
//! `error`/`critical`/`log`, `disable`, `getLevelName`, and the handlers notebooks attach
//! (`StreamHandler` to the cell's stderr, stdout or any object with `write`; `NullHandler`)
//! with `Formatter`'s `%`-style formats, with CPython 3.11's records, reprs and errors. A
//! record goes to every handler up the hierarchy as CPython sends it, and to CPython's
//! last-resort handler (the bare message on stderr, WARNING and above) when none exists.
//! The loggers live in the session state, so `%reset` forgets them. Records carry no
//! source location (the interpreter gives natives none): a format naming `lineno`,
//! `filename`, `funcName`, `module` or `pathname` is refused with a message that says so.

use std::any::Any;
use std::cell::{Cell, RefCell};

use super::{f, Method};
use crate::bindings::common::arg;
use crate::cell::{Output, StreamName};
use crate::lang::{Args, BinOp, Ctx, NativeClass, NativeModule, Object, PyErr, PyResult, Value};

const LEVELS: &[(i64, &str)] = &[
    (50, "CRITICAL"),
    (40, "ERROR"),
    (30, "WARNING"),
    (20, "INFO"),
    (10, "DEBUG"),
    (0, "NOTSET"),
];

/// `basicConfig`'s format when none is given.
const BASIC_FORMAT: &str = "%(levelname)s:%(name)s:%(message)s";

/// Record fields CPython has and this kernel cannot fill.
const LOCATION_FIELDS: &[&str] = &["pathname", "filename", "module", "lineno", "funcName"];

/// The session's loggers: the root first, then every named logger in creation order.
#[derive(Default)]
struct Loggers {
    all: Vec<(String, Value)>,
    /// `logging.disable(level)`: records at this level or below are dropped everywhere.
    disabled_at: i64,
    /// When the session's logging started, for `relativeCreated`.
    start: Option<std::time::Instant>,
}

struct Logger {
    name: String,
    level: Cell<i64>,
    handlers: RefCell<Vec<Value>>,
    propagate: Cell<bool>,
    disabled: Cell<bool>,
}

enum Sink {
    /// The cell's stderr (`StreamHandler()`), named so in the repr.
    Stderr,
    /// An object with `write` (sys.stdout, a StringIO, an open file).
    Stream(Value),
    Null,
}

struct Handler {
    sink: Sink,
    level: Cell<i64>,
    formatter: RefCell<Option<Value>>,
}

struct Formatter {
    fmt: String,
    datefmt: Option<String>,
}

fn level_name(level: i64) -> String {
    LEVELS
        .iter()
        .find(|(n, _)| *n == level)
        .map_or_else(|| format!("Level {level}"), |(_, name)| name.to_string())
}

/// The level a name stands for (`_nameToLevel`, which also knows `WARN` and `FATAL`).
fn level_of_name(name: &str) -> Option<i64> {
    match name {
        "WARN" => Some(30),
        "FATAL" => Some(50),
        _ => LEVELS.iter().find(|(_, n)| *n == name).map(|(l, _)| *l),
    }
}

/// A level given as an int or a registered name (`setLevel("INFO")`), with CPython's
/// errors.
fn level_arg(v: &Value, ctx: &mut dyn Ctx) -> PyResult<i64> {
    match v {
        Value::Int(n) => Ok(*n),
        Value::Bool(b) => Ok(*b as i64),
        Value::Str(s) => match level_of_name(s) {
            Some(n) => Ok(n),
            None => Err(PyErr::value_error(format!(
                "Unknown level: {}",
                ctx.repr(v)?
            ))),
        },
        other => Err(PyErr::type_error(format!(
            "Level not an integer or a valid string: {}",
            ctx.repr(other)?
        ))),
    }
}

fn loggers(ctx: &mut dyn Ctx) -> &mut Loggers {
    let st = ctx.state().get::<Loggers>();
    if st.all.is_empty() {
        st.all.push(("root".into(), new_logger("root", 30)));
        st.start = Some(std::time::Instant::now());
    }
    st
}

fn new_logger(name: &str, level: i64) -> Value {
    Value::native(Logger {
        name: name.into(),
        level: Cell::new(level),
        handlers: RefCell::new(vec![]),
        propagate: Cell::new(true),
        disabled: Cell::new(false),
    })
}

fn root(ctx: &mut dyn Ctx) -> Value {
    loggers(ctx).all[0].1.clone()
}

/// `logging.getLogger(name)`: the one logger of that name, made on first use
/// (`tf.get_logger()` is the one named `tensorflow`).
pub(crate) fn get_logger(name: Option<&str>, ctx: &mut dyn Ctx) -> Value {
    let st = loggers(ctx);
    let name = match name {
        None | Some("") | Some("root") => return st.all[0].1.clone(),
        Some(n) => n,
    };
    if let Some((_, v)) = st.all.iter().find(|(n, _)| n == name) {
        return v.clone();
    }
    let v = new_logger(name, 0);
    st.all.push((name.to_string(), v.clone()));
    v
}

/// Whether a line the kernel logs as TensorFlow would (`INFO:tensorflow:...`) at `level`
/// shows: the `tensorflow` logger decides once a cell set its level; until then INFO and
/// above show, as they do in a notebook. `logging.disable` and `disabled` apply too.
pub(crate) fn tf_enabled(level: i64, ctx: &mut dyn Ctx) -> bool {
    let logger = get_logger(Some("tensorflow"), ctx);
    let Some(l) = logger.downcast::<Logger>() else {
        return true;
    };
    let threshold = match l.level.get() {
        0 => 20,
        own => own,
    };
    !l.disabled.get() && loggers(ctx).disabled_at < level && level >= threshold
}

/// The nearest existing ancestor of `name` in the dotted hierarchy (`a.b` for `a.b.c`),
/// else the root.
fn parent_of(name: &str, ctx: &mut dyn Ctx) -> Option<Value> {
    if name == "root" {
        return None;
    }
    let st = loggers(ctx);
    let mut cut = name;
    while let Some(i) = cut.rfind('.') {
        cut = &cut[..i];
        if let Some((_, v)) = st.all.iter().find(|(n, _)| n == cut) {
            return Some(v.clone());
        }
    }
    Some(st.all[0].1.clone())
}

fn effective_level(logger: &Logger, ctx: &mut dyn Ctx) -> i64 {
    let mut level = logger.level.get();
    let mut up = parent_of(&logger.name, ctx);
    while level == 0 {
        let Some(p) = up else { break };
        let Some(l) = p.downcast::<Logger>() else {
            break;
        };
        level = l.level.get();
        up = parent_of(&l.name, ctx);
    }
    level
}

fn enabled_for(logger: &Logger, level: i64, ctx: &mut dyn Ctx) -> bool {
    !logger.disabled.get()
        && loggers(ctx).disabled_at < level
        && level >= effective_level(logger, ctx)
}

/// The `%(field)s` names a format uses.
fn fields_of(fmt: &str) -> Vec<&str> {
    fmt.match_indices("%(")
        .filter_map(|(i, _)| {
            let rest = &fmt[i + 2..];
            rest.find(')').map(|j| &rest[..j])
        })
        .collect()
}

/// A record's text through `formatter` (CPython's default `%(message)s` when none).
fn format_record(
    formatter: Option<&Formatter>,
    record: &[(&str, Value)],
    ctx: &mut dyn Ctx,
) -> PyResult<String> {
    let fmt = formatter.map_or("%(message)s", |f| f.fmt.as_str());
    let mut fields: Vec<(&str, Value)> = record.to_vec();
    for field in fields_of(fmt) {
        if LOCATION_FIELDS.contains(&field) {
            return Err(PyErr::new(
                "NotImplementedError",
                format!(
                    "the logging field '{field}' is not available in this kernel: its log \
                     records carry no source location"
                ),
            ));
        }
        if field == "asctime" {
            let now = chrono::Local::now();
            let text = match formatter.and_then(|f| f.datefmt.as_deref()) {
                Some(datefmt) => super::datetime::format::strftime(&now.naive_local(), datefmt),
                None => format!(
                    "{},{:03}",
                    now.format("%Y-%m-%d %H:%M:%S"),
                    now.timestamp_subsec_millis()
                ),
            };
            fields.push(("asctime", Value::from(text)));
        }
    }
    let dict = Value::dict_from(fields);
    let text = ctx.binop(BinOp::Mod, &Value::str(fmt), &dict)?;
    ctx.str(&text)
}

/// `msg % args` as `LogRecord.getMessage` computes it (a lone dict argument is the mapping).
fn message(msg: &Value, args: &[Value], ctx: &mut dyn Ctx) -> PyResult<String> {
    let text = ctx.str(msg)?;
    if args.is_empty() {
        return Ok(text);
    }
    let operand = match args {
        [d @ Value::Dict(_)] => d.clone(),
        _ => Value::tuple(args.to_vec()),
    };
    let out = ctx.binop(BinOp::Mod, &Value::str(&text), &operand)?;
    ctx.str(&out)
}

/// Writes `text` and a newline where `handler` sends its records.
fn write(handler: &Handler, text: String, ctx: &mut dyn Ctx) -> PyResult<()> {
    match &handler.sink {
        Sink::Stderr => ctx.emit(Output::Stream {
            name: StreamName::Stderr,
            text: text + "\n",
        }),
        Sink::Stream(stream) => {
            let w = ctx.getattr(stream, "write")?;
            ctx.call(&w, Args::new(vec![Value::from(text + "\n")]))?;
        }
        Sink::Null => {}
    }
    Ok(())
}

/// `logger.log(level, msg, *args)`: the record, if the logger takes it, to every handler
/// up the hierarchy (stopping where `propagate` is false), or to the last resort.
fn log(logger: &Value, level: i64, msg: &Value, args: &[Value], ctx: &mut dyn Ctx) -> PyResult<()> {
    let Some(me) = logger.downcast::<Logger>() else {
        return Ok(());
    };
    if !enabled_for(me, level, ctx) {
        return Ok(());
    }
    let text = message(msg, args, ctx)?;
    let now = chrono::Local::now();
    let relative = loggers(ctx)
        .start
        .map_or(0.0, |s| s.elapsed().as_secs_f64() * 1000.0);
    let record: Vec<(&str, Value)> = vec![
        ("name", Value::str(&me.name)),
        ("msg", msg.clone()),
        ("args", Value::tuple(args.to_vec())),
        ("levelname", Value::from(level_name(level))),
        ("levelno", Value::Int(level)),
        ("message", Value::from(text)),
        ("created", Value::Float(now.timestamp_micros() as f64 / 1e6)),
        ("msecs", Value::Float(now.timestamp_subsec_millis() as f64)),
        ("relativeCreated", Value::Float(relative)),
        ("thread", Value::Int(0)),
        ("threadName", Value::str("MainThread")),
        ("process", Value::Int(std::process::id() as i64)),
        ("processName", Value::str("MainProcess")),
    ];
    let mut found = false;
    let mut at = Some(logger.clone());
    while let Some(cur) = at {
        let Some(l) = cur.downcast::<Logger>() else {
            break;
        };
        let handlers = l.handlers.borrow().clone();
        for h in &handlers {
            found = true;
            if let Some(handler) = h.downcast::<Handler>() {
                if level >= handler.level.get() {
                    let fmt = handler.formatter.borrow().clone();
                    let text = format_record(
                        fmt.as_ref().and_then(|f| f.downcast::<Formatter>()),
                        &record,
                        ctx,
                    )?;
                    write(handler, text, ctx)?;
                }
            }
        }
        if !l.propagate.get() {
            break;
        }
        at = parent_of(&l.name, ctx);
    }
    if !found && level >= 30 {
        let text = format_record(None, &record, ctx)?;
        ctx.emit(Output::Stream {
            name: StreamName::Stderr,
            text: text + "\n",
        });
    }
    Ok(())
}

/// `logger.log(level, msg, *args)`.
fn log_call(logger: &Value, a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some((level, rest)) = a.pos.split_first() else {
        return Err(PyErr::type_error(
            "Logger.log() missing 2 required positional arguments: 'level' and 'msg'",
        ));
    };
    let Value::Int(level) = level else {
        return Err(PyErr::type_error("level must be an integer"));
    };
    at_level(logger, *level, &Args::new(rest.to_vec()), ctx)
}

/// A logging method taking `(msg, *args)` at a fixed level (`info`, `warning`, ...).
fn at_level(logger: &Value, level: i64, a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some((msg, rest)) = a.pos.split_first() else {
        return Err(PyErr::type_error(
            "Logger.log() missing 1 required positional argument: 'msg'",
        ));
    };
    log(logger, level, msg, rest, ctx)?;
    Ok(Value::None)
}

const LOGGER_METHODS: &[Method<Logger>] = &[
    ("debug", |_, me, a, ctx| at_level(me, 10, a, ctx)),
    ("info", |_, me, a, ctx| at_level(me, 20, a, ctx)),
    ("warning", |_, me, a, ctx| at_level(me, 30, a, ctx)),
    ("warn", |_, me, a, ctx| at_level(me, 30, a, ctx)),
    ("error", |_, me, a, ctx| at_level(me, 40, a, ctx)),
    ("critical", |_, me, a, ctx| at_level(me, 50, a, ctx)),
    ("fatal", |_, me, a, ctx| at_level(me, 50, a, ctx)),
    ("log", |_, me, a, ctx| log_call(me, a, ctx)),
    ("setLevel", |l, _, a, ctx| {
        let s = a.bind("setLevel", &["level"], 1)?;
        l.level.set(level_arg(arg(&s, 0), ctx)?);
        Ok(Value::None)
    }),
    ("getEffectiveLevel", |l, _, a, ctx| {
        a.bind("getEffectiveLevel", &[], 0)?;
        Ok(Value::Int(effective_level(l, ctx)))
    }),
    ("isEnabledFor", |l, _, a, ctx| {
        let s = a.bind("isEnabledFor", &["level"], 1)?;
        let level = arg(&s, 0).as_int()?;
        Ok(Value::Bool(enabled_for(l, level, ctx)))
    }),
    ("addHandler", |l, _, a, _| {
        let s = a.bind("addHandler", &["hdlr"], 1)?;
        let h = arg(&s, 0).clone();
        let mut hs = l.handlers.borrow_mut();
        if !hs.iter().any(|x| x.is(&h)) {
            hs.push(h);
        }
        Ok(Value::None)
    }),
    ("removeHandler", |l, _, a, _| {
        let s = a.bind("removeHandler", &["hdlr"], 1)?;
        let h = arg(&s, 0);
        l.handlers.borrow_mut().retain(|x| !x.is(h));
        Ok(Value::None)
    }),
    ("hasHandlers", |_, me, a, ctx| {
        a.bind("hasHandlers", &[], 0)?;
        let mut at = Some(me.clone());
        while let Some(cur) = at {
            let Some(l) = cur.downcast::<Logger>() else {
                break;
            };
            if !l.handlers.borrow().is_empty() {
                return Ok(Value::Bool(true));
            }
            if !l.propagate.get() {
                break;
            }
            at = parent_of(&l.name, ctx);
        }
        Ok(Value::Bool(false))
    }),
    ("getChild", |l, _, a, ctx| {
        let s = a.bind("getChild", &["suffix"], 1)?;
        let suffix = ctx.str(arg(&s, 0))?;
        let name = if l.name == "root" {
            suffix
        } else {
            format!("{}.{suffix}", l.name)
        };
        Ok(get_logger(Some(&name), ctx))
    }),
];

impl Object for Logger {
    fn type_name(&self) -> String {
        if self.name == "root" {
            "RootLogger"
        } else {
            "Logger"
        }
        .into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let level = level_name(effective_level(self, ctx));
        Ok(format!("<{} {} ({level})>", self.type_name(), self.name))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "name" => Some(Value::str(&self.name)),
            "level" => Some(Value::Int(self.level.get())),
            "handlers" => Some(Value::list(self.handlers.borrow().clone())),
            "propagate" => Some(Value::Bool(self.propagate.get())),
            "disabled" => Some(Value::Bool(self.disabled.get())),
            "parent" => Some(parent_of(&self.name, ctx).unwrap_or(Value::None)),
            _ => super::bound_method(this, LOGGER_METHODS, name),
        })
    }
    fn setattr(&self, name: &str, v: Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "propagate" => self.propagate.set(ctx.truthy(&v)?),
            "disabled" => self.disabled.set(ctx.truthy(&v)?),
            "level" => self.level.set(level_arg(&v, ctx)?),
            _ => {
                return Err(PyErr::attribute_error(format!(
                    "'{}' object attribute '{name}' cannot be set here",
                    self.type_name()
                )))
            }
        }
        Ok(())
    }
    fn dir(&self) -> Vec<String> {
        let mut d = super::method_names(LOGGER_METHODS);
        d.extend(
            [
                "name",
                "level",
                "handlers",
                "propagate",
                "disabled",
                "parent",
            ]
            .map(String::from),
        );
        d
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

const HANDLER_METHODS: &[Method<Handler>] = &[
    ("setLevel", |h, _, a, ctx| {
        let s = a.bind("setLevel", &["level"], 1)?;
        h.level.set(level_arg(arg(&s, 0), ctx)?);
        Ok(Value::None)
    }),
    ("setFormatter", |h, _, a, _| {
        let s = a.bind("setFormatter", &["fmt"], 1)?;
        *h.formatter.borrow_mut() = match arg(&s, 0) {
            Value::None => None,
            v => Some(v.clone()),
        };
        Ok(Value::None)
    }),
    ("flush", |_, _, a, _| {
        a.bind("flush", &[], 0)?;
        Ok(Value::None)
    }),
    ("close", |_, _, a, _| {
        a.bind("close", &[], 0)?;
        Ok(Value::None)
    }),
];

impl Object for Handler {
    fn type_name(&self) -> String {
        match self.sink {
            Sink::Null => "NullHandler",
            _ => "StreamHandler",
        }
        .into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let level = level_name(self.level.get());
        Ok(match &self.sink {
            Sink::Null => format!("<NullHandler ({level})>"),
            // The cell's stderr is named `stderr`, as a Jupyter kernel's stream is.
            Sink::Stderr => format!("<StreamHandler stderr ({level})>"),
            Sink::Stream(s) => {
                // CPython shows the stream's `name` when it has one.
                let name = match ctx.getattr(s, "name") {
                    Ok(n) => format!("{} ", ctx.str(&n)?),
                    Err(_) => String::new(),
                };
                format!("<StreamHandler {name}({level})>")
            }
        })
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "level" => Some(Value::Int(self.level.get())),
            "formatter" => Some(self.formatter.borrow().clone().unwrap_or(Value::None)),
            "stream" => match &self.sink {
                Sink::Stream(s) => Some(s.clone()),
                _ => None,
            },
            _ => super::bound_method(this, HANDLER_METHODS, name),
        })
    }
    fn dir(&self) -> Vec<String> {
        let mut d = super::method_names(HANDLER_METHODS);
        d.extend(["level", "formatter"].map(String::from));
        d
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Object for Formatter {
    fn type_name(&self) -> String {
        "Formatter".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<logging.Formatter object at {:#x}>",
            self as *const _ as usize
        ))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn handler(sink: Sink) -> Value {
    Value::native(Handler {
        sink,
        level: Cell::new(0),
        formatter: RefCell::new(None),
    })
}

/// `stream` of a `StreamHandler`: `None` is the cell's stderr.
fn stream_sink(v: &Value) -> Sink {
    match v {
        Value::None => Sink::Stderr,
        s => Sink::Stream(s.clone()),
    }
}

fn formatter(fmt: Option<String>, datefmt: Option<String>, style: &str) -> PyResult<Value> {
    if style != "%" {
        return Err(PyErr::new(
            "NotImplementedError",
            format!("logging formats in style '{style}' are not supported here; use '%'"),
        ));
    }
    Ok(Value::native(Formatter {
        fmt: fmt.unwrap_or_else(|| "%(message)s".into()),
        datefmt,
    }))
}

fn opt_str(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<String>> {
    match v {
        Value::None => Ok(None),
        v => ctx.str(v).map(Some),
    }
}

/// `logging.basicConfig(**kwargs)`: a handler with a formatter on the root logger, unless
/// it has one already (or `force=True` replaces them), as CPython does it.
fn basic_config(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    const KNOWN: &[&str] = &[
        "level", "format", "datefmt", "style", "stream", "handlers", "force", "filename",
        "filemode", "encoding", "errors",
    ];
    if !a.pos.is_empty() {
        return Err(PyErr::type_error(format!(
            "basicConfig() takes 0 positional arguments but {} {} given",
            a.pos.len(),
            if a.pos.len() == 1 { "was" } else { "were" }
        )));
    }
    let kw = |name: &str| a.kw.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let root = root(ctx);
    let Some(r) = root.downcast::<Logger>() else {
        return Ok(Value::None);
    };
    let force = match kw("force") {
        Some(v) => ctx.truthy(&v)?,
        None => false,
    };
    if force {
        r.handlers.borrow_mut().clear();
    }
    if !r.handlers.borrow().is_empty() {
        return Ok(Value::None);
    }
    if kw("filename").is_some() {
        return Err(PyErr::new(
            "NotImplementedError",
            "logging.basicConfig(filename=...) is not supported here; pass \
             stream=open(filename, 'a') instead",
        ));
    }
    let handlers = match (kw("handlers"), kw("stream")) {
        (Some(_), Some(_)) => {
            return Err(PyErr::value_error(
                "'stream' or 'filename' should not be specified together with 'handlers'",
            ))
        }
        (Some(hs), None) => ctx.iterate(&hs)?,
        (None, stream) => vec![handler(stream_sink(&stream.unwrap_or(Value::None)))],
    };
    let fmt = match kw("format") {
        Some(v) => opt_str(&v, ctx)?,
        None => None,
    };
    let datefmt = match kw("datefmt") {
        Some(v) => opt_str(&v, ctx)?,
        None => None,
    };
    let style = match kw("style") {
        Some(v) => ctx.str(&v)?,
        None => "%".into(),
    };
    let shared = formatter(
        Some(fmt.unwrap_or_else(|| BASIC_FORMAT.into())),
        datefmt,
        &style,
    )?;
    for h in &handlers {
        if let Some(handler) = h.downcast::<Handler>() {
            let mut f = handler.formatter.borrow_mut();
            if f.is_none() {
                *f = Some(shared.clone());
            }
        }
        r.handlers.borrow_mut().push(h.clone());
    }
    if let Some(level) = kw("level") {
        r.level.set(level_arg(&level, ctx)?);
    }
    // Like CPython, unknown arguments are reported only when there was something to
    // configure, and after configuring it.
    let unknown: Vec<&str> =
        a.kw.iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| !KNOWN.contains(k))
            .collect();
    if !unknown.is_empty() {
        return Err(PyErr::value_error(format!(
            "Unrecognised argument(s): {}",
            unknown.join(", ")
        )));
    }
    Ok(Value::None)
}

/// A module-level logging function: configures the root logger first if it has no
/// handler, as CPython's do.
fn module_level(level: Option<i64>, a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let root = root(ctx);
    if root
        .downcast::<Logger>()
        .is_some_and(|r| r.handlers.borrow().is_empty())
    {
        basic_config(&Args::new(vec![]), ctx)?;
    }
    match level {
        Some(level) => at_level(&root, level, a, ctx),
        None => log_call(&root, a, ctx),
    }
}

pub fn module() -> Value {
    let mut m = NativeModule::new("logging", "Logging package for Python.");
    for (n, name) in LEVELS {
        m = m.with(name, Value::Int(*n));
    }
    m.with("WARN", Value::Int(30))
        .with("FATAL", Value::Int(50))
        .with("BASIC_FORMAT", Value::str(BASIC_FORMAT))
        .with(
            "getLogger",
            f("getLogger", "getLogger(name=None)", |a, ctx| {
                let s = a.bind("getLogger", &["name"], 0)?;
                let name = match arg(&s, 0) {
                    Value::None => None,
                    Value::Str(s) => Some(s.to_string()),
                    _ => return Err(PyErr::type_error("A logger name must be a string")),
                };
                Ok(get_logger(name.as_deref(), ctx))
            }),
        )
        .with(
            "basicConfig",
            f("basicConfig", "basicConfig(**kwargs)", basic_config),
        )
        .with(
            "debug",
            f("debug", "debug(msg, *args)", |a, ctx| {
                module_level(Some(10), a, ctx)
            }),
        )
        .with(
            "info",
            f("info", "info(msg, *args)", |a, ctx| {
                module_level(Some(20), a, ctx)
            }),
        )
        .with(
            "warning",
            f("warning", "warning(msg, *args)", |a, ctx| {
                module_level(Some(30), a, ctx)
            }),
        )
        .with(
            "error",
            f("error", "error(msg, *args)", |a, ctx| {
                module_level(Some(40), a, ctx)
            }),
        )
        .with(
            "critical",
            f("critical", "critical(msg, *args)", |a, ctx| {
                module_level(Some(50), a, ctx)
            }),
        )
        .with(
            "log",
            f("log", "log(level, msg, *args)", |a, ctx| {
                module_level(None, a, ctx)
            }),
        )
        .with(
            "disable",
            f("disable", "disable(level=CRITICAL)", |a, ctx| {
                let s = a.bind("disable", &["level"], 0)?;
                let level = match arg(&s, 0) {
                    Value::None => 50,
                    v => level_arg(v, ctx)?,
                };
                loggers(ctx).disabled_at = level;
                Ok(Value::None)
            }),
        )
        .with(
            "getLevelName",
            f("getLevelName", "getLevelName(level)", |a, _| {
                let s = a.bind("getLevelName", &["level"], 1)?;
                Ok(match arg(&s, 0) {
                    Value::Int(n) => Value::from(level_name(*n)),
                    Value::Str(name) => level_of_name(name)
                        .map_or_else(|| Value::from(format!("Level {name}")), Value::Int),
                    other => Value::from(format!("Level {}", other.type_name())),
                })
            }),
        )
        .with(
            "StreamHandler",
            NativeClass::new(
                "StreamHandler",
                "logging",
                "A handler that writes to a stream.",
            )
            .constructor(|a, _| {
                let s = a.bind("StreamHandler", &["stream"], 0)?;
                Ok(handler(stream_sink(arg(&s, 0))))
            })
            .into_value(),
        )
        .with(
            "NullHandler",
            NativeClass::new("NullHandler", "logging", "A handler that does nothing.")
                .constructor(|a, _| {
                    a.bind("NullHandler", &[], 0)?;
                    Ok(handler(Sink::Null))
                })
                .into_value(),
        )
        .with(
            "Formatter",
            NativeClass::new("Formatter", "logging", "Formats a log record as text.")
                .constructor(|a, ctx| {
                    let s = a.bind("Formatter", &["fmt", "datefmt", "style", "validate"], 0)?;
                    let style = match arg(&s, 2) {
                        Value::None => "%".to_string(),
                        v => ctx.str(v)?,
                    };
                    formatter(opt_str(arg(&s, 0), ctx)?, opt_str(arg(&s, 1), ctx)?, &style)
                })
                .into_value(),
        )
        .into_value()
}
