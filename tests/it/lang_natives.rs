//! The contract between the interpreter and natives, through a module loader of the
//! test's own: a user class deriving from a `NativeClass` (inherited native methods,
//! `super().__init__`, `isinstance` through native bases), natives calling back into
//! Python through `Ctx`, and native errors caught by name through the hierarchy.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use mirror_kernel::cell::{CollectSink, ExecuteRequest, Output};
use mirror_kernel::lang::{
    Args, Ctx, Interpreter, NativeClass, NativeFn, NativeModule, PyErr, PyResult, Value,
};

fn loader(name: &str, ctx: &mut dyn Ctx) -> Option<PyResult<Value>> {
    if name != "cbmod" {
        return None;
    }
    let callback = NativeClass::new("Callback", "keras.callbacks", "Callback()\nBase class.")
        .base("Base")
        .method("__init__", |_this, _a, _ctx| Ok(Value::None))
        .method("on_epoch_end", |_this, _a, _ctx| Ok(Value::None))
        .method("describe", |this, _a, ctx| {
            let n = ctx.getattr(this, "name")?;
            Ok(Value::from(format!("cb:{}", ctx.str(&n)?)))
        });
    let run = NativeFn::value("run", "run(callback)", |a: &Args, ctx: &mut dyn Ctx| {
        let cb = a.pos.first().cloned().unwrap_or(Value::None);
        for epoch in 0..3 {
            let m = ctx.getattr(&cb, "on_epoch_end")?;
            ctx.call(&m, Args::new(vec![Value::Int(epoch)]))?;
        }
        Ok(Value::None)
    });
    let fail = NativeFn::value("fail", "fail(kind)", |a: &Args, _ctx: &mut dyn Ctx| {
        let kind = a
            .pos
            .first()
            .map(|v| v.as_str().map(String::from))
            .transpose()?;
        Err(PyErr::new(
            kind.as_deref().unwrap_or("ValueError"),
            "shapes (2,) and (3,) differ",
        ))
    });
    // The classes a binding exposes as `tf.errors.*`, from the interpreter's hierarchy.
    let op_error = mirror_kernel::lang::exception_class(ctx, "OpError");
    let invalid = mirror_kernel::lang::exception_class(ctx, "InvalidArgumentError");
    Some(Ok(NativeModule::new("cbmod", "test natives")
        .with("OpError", op_error)
        .with("InvalidArgumentError", invalid)
        .with("Callback", callback.into_value())
        .with("run", run)
        .with("fail", fail)
        .into_value()))
}

fn run_cell(interp: &mut Interpreter, code: &str) -> (String, Option<(String, String)>) {
    let sink = CollectSink::default();
    let req = ExecuteRequest {
        code: code.into(),
        silent: false,
        store_history: true,
        allow_stdin: false,
        user_expressions: vec![],
    };
    let r = interp.execute(&req, &sink);
    let mut out = String::new();
    for o in sink.take() {
        if let Output::Stream { text, .. } = o {
            out.push_str(&text);
        }
    }
    (out, r.result.err().map(|e| (e.ename, e.evalue)))
}

#[test]
fn user_classes_extend_native_classes_and_natives_call_back() {
    let mut interp = Interpreter::new(Arc::new(AtomicBool::new(false)), loader);
    let code = "from cbmod import Callback, run\n\
class Mine(Callback):\n    def __init__(self):\n        super().__init__()\n        self.name = 'mine'\n        self.seen = []\n    def on_epoch_end(self, epoch):\n        self.seen.append(epoch)\n\
class Quiet(Callback):\n    pass\n\
m = Mine()\nrun(m)\nrun(Quiet())\nprint(m.seen, m.describe(), isinstance(m, Callback), isinstance(3, Callback))";
    let (out, err) = run_cell(&mut interp, code);
    assert_eq!(err, None, "{out}");
    assert_eq!(out, "[0, 1, 2] cb:mine True False\n");
}

#[test]
fn native_errors_match_except_clauses_by_name() {
    let mut interp = Interpreter::new(Arc::new(AtomicBool::new(false)), loader);
    let code = "import cbmod\n\
try:\n    cbmod.fail('InvalidArgumentError')\nexcept Exception as e:\n    print(type(e).__name__, e)\n\
try:\n    cbmod.fail('ValueError')\nexcept (TypeError, ValueError) as e:\n    print('value', e.args)\n\
try:\n    cbmod.fail('IndexError')\nexcept LookupError:\n    print('lookup')";
    let (out, err) = run_cell(&mut interp, code);
    assert_eq!(err, None, "{out}");
    assert_eq!(
        out,
        "InvalidArgumentError shapes (2,) and (3,) differ\nvalue ('shapes (2,) and (3,) differ',)\nlookup\n"
    );
    let (_, err) = run_cell(&mut interp, "cbmod.fail('ResourceExhaustedError')");
    assert_eq!(
        err,
        Some((
            "ResourceExhaustedError".into(),
            "shapes (2,) and (3,) differ".into()
        ))
    );
    // A dotted import the loader does not know is found as an attribute of its parent.
    let (out, err) = run_cell(&mut interp, "import cbmod.run as r\nfrom cbmod import fail\nprint(r is cbmod.run, fail.__class__ is not None)");
    assert_eq!(err, None);
    assert_eq!(out, "True True\n");
}

#[test]
fn tensorflow_errors_are_caught_through_op_error() {
    let mut interp = Interpreter::new(Arc::new(AtomicBool::new(false)), loader);
    let code = "import cbmod\n\
try:\n    cbmod.fail('InvalidArgumentError')\nexcept cbmod.OpError as e:\n    print(type(e), isinstance(e, cbmod.InvalidArgumentError))\n\
try:\n    cbmod.fail('NotFoundError')\nexcept cbmod.InvalidArgumentError:\n    print('wrong')\nexcept cbmod.OpError as e:\n    print(type(e).__name__, isinstance(e, cbmod.OpError))\n\
try:\n    cbmod.fail('ValueError')\nexcept cbmod.OpError:\n    print('wrong')\nexcept ValueError:\n    print('not an OpError')\n\
print(issubclass(cbmod.OpError, Exception), cbmod.OpError.__name__)";
    let (out, err) = run_cell(&mut interp, code);
    assert_eq!(err, None, "{out}");
    // What TensorFlow 2 prints for the same cell.
    assert_eq!(
        out,
        "<class 'tensorflow.python.framework.errors_impl.InvalidArgumentError'> True\n\
NotFoundError True\nnot an OpError\nTrue OpError\n"
    );
    // TensorFlow's names are not builtins.
    let (_, err) = run_cell(&mut interp, "OpError");
    assert_eq!(err.map(|e| e.0), Some("NameError".into()));
}
