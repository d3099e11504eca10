//! The interpreter as the session sees it: runs a cell (parse, convert, execute statement
//! by statement, show the final expression as the execute result), formats uncaught
//! exceptions as IPython does, and answers completion, inspection and `is_complete`.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use indexmap::IndexMap;

use super::vm::{Core, Env, Vm};
use crate::cell::{
    Completion, ErrorInfo, ExecuteReply, ExecuteRequest, HistoryEntry, IsComplete, Output, Sink,
};
use crate::display::MimeBundle;
use crate::lang::ipython::traceback::error_info;
use crate::lang::syntax::ast::{Expr, Source, StmtKind};
use crate::lang::syntax::convert::Converter;
use crate::lang::syntax::errors::syntax_error_info;
use crate::lang::syntax::parse::Mode;
use crate::lang::syntax::parse::Tree;
use crate::lang::values::exc::{Frame, PyErr};
use crate::lang::ModuleLoader;

pub struct Interpreter {
    pub core: Core,
    /// Runs after every non-silent cell while its output still flows: the plotting
    /// binding shows the figures a cell left open, as the inline backend does.
    cell_end: Option<fn(&mut dyn crate::lang::values::object::Ctx)>,
}

/// A sink that drops everything (completion and inspection run without a cell).
struct NullSink;
impl Sink for NullSink {
    fn emit(&self, _output: Output) {}
    fn input(&self, _prompt: &str, _password: bool) -> Option<String> {
        None
    }
}

impl Interpreter {
    pub fn new(interrupt: Arc<AtomicBool>, modules: ModuleLoader) -> Interpreter {
        let mut exc = crate::lang::values::exceptions::make_classes();
        let builtins = crate::lang::builtins::namespace::make_builtins(&exc);
        // After the builtins: TensorFlow's classes are reached through `tf.errors` only.
        crate::lang::values::exceptions::add_tf_classes(&mut exc);
        crate::lang::values::exceptions::add_stdlib_classes(&mut exc);
        Interpreter {
            core: Core {
                globals: Rc::new(RefCell::new(IndexMap::default())),
                builtins,
                interrupt,
                loader: modules,
                provided: vec![],
                modules: Default::default(),
                state: Default::default(),
                count: 0,
                history: vec![],
                exc_classes: exc,
                hidden: vec![],
                sources: Default::default(),
            },
            cell_end: None,
        }
    }

    /// Names the modules the loader provides, for the error of an import it cannot find.
    pub fn set_provided_modules(&mut self, names: Vec<&'static str>) {
        self.core.provided = names;
    }

    /// Sets the hook that runs at the end of every non-silent cell.
    pub fn set_cell_end_hook(&mut self, hook: fn(&mut dyn crate::lang::values::object::Ctx)) {
        self.cell_end = Some(hook);
    }

    pub fn execution_count(&self) -> u64 {
        self.core.count
    }

    pub fn history(&self) -> Vec<HistoryEntry> {
        self.core.history.clone()
    }

    pub fn execute(&mut self, req: &ExecuteRequest, sink: &dyn Sink) -> ExecuteReply {
        if req.store_history && !req.silent {
            self.core.count += 1;
            self.core.history.push(HistoryEntry {
                session: 1,
                line: self.core.count,
                input: req.code.clone(),
            });
        }
        let count = self.core.count;
        let file = format!("Cell In[{count}]");
        let cell_end = self.cell_end;
        let mut vm = Vm::new(&mut self.core, sink, file, req.allow_stdin);
        let result = run_cell(&mut vm, &req.code, req.silent);
        if let (Some(hook), false) = (cell_end, req.silent) {
            hook(&mut vm);
        }
        vm.flush();
        let pager = std::mem::take(&mut vm.pager);
        let mut user_expressions = vec![];
        for (name, code) in &req.user_expressions {
            let r = eval_snippet(&mut vm, code);
            user_expressions.push((name.clone(), r));
        }
        vm.flush();
        ExecuteReply {
            execution_count: count,
            result,
            pager,
            user_expressions,
        }
    }

    pub fn complete(&mut self, code: &str, cursor: usize) -> Completion {
        let sink = NullSink;
        let mut vm = Vm::new(&mut self.core, &sink, String::new(), false);
        crate::lang::ipython::complete::complete(&mut vm, code, cursor)
    }

    pub fn inspect(&mut self, code: &str, cursor: usize, _detail: u8) -> Option<MimeBundle> {
        let sink = NullSink;
        let mut vm = Vm::new(&mut self.core, &sink, String::new(), false);
        crate::lang::ipython::complete::inspect(&mut vm, code, cursor)
    }
}

fn eval_snippet(vm: &mut Vm, code: &str) -> Result<MimeBundle, ErrorInfo> {
    let src = Rc::new(Source {
        file: "<user_expression>".into(),
        lines: vec![code.to_string()],
    });
    let tree = Tree::parse(code, Mode::Expression);
    if let Some(e) = tree.error() {
        return Err(syntax_error_info(code, e, "<user_expression>"));
    }
    if let Some(e) = tree.nesting_error() {
        return Err(error_info(vm, e));
    }
    let Some(parsed) = tree.expr() else {
        return Err(error_info(vm, PyErr::new("SyntaxError", "invalid syntax")));
    };
    let mut conv = Converter::new(code, src);
    let e = conv.expr(parsed);
    let env = Env::top();
    let v = vm.eval(&e, &env).map_err(|e| error_info(vm, e))?;
    vm.rich_of(&v).map_err(|e| error_info(vm, e))
}

fn run_cell(vm: &mut Vm, code: &str, silent: bool) -> Result<(), ErrorInfo> {
    let file = vm.file.clone();
    let lines: Vec<String> = code.lines().map(String::from).collect();
    let src = Rc::new(Source {
        file: file.clone(),
        lines,
    });
    let (code, cell_magic) = crate::lang::ipython::magics::split_cell_magic(code);
    if let Some((name, arg)) = cell_magic {
        return crate::lang::ipython::magics::cell_magic(vm, &name, &arg, &code)
            .map_err(|e| error_info(vm, e));
    }
    let tree = Tree::parse(&code, Mode::Ipython);
    if let Some(e) = tree.error() {
        return Err(syntax_error_info(&code, e, &file));
    }
    if let Some(e) = tree.nesting_error() {
        return Err(error_info(vm, e));
    }
    vm.core.sources.insert(file.clone(), src.clone());
    let mut conv = Converter::new(&code, src.clone());
    let body = conv.body(tree.suite());
    drop(tree);
    let env = Env::top();
    let n = body.len();
    let trailing_semicolon = code.trim_end().ends_with(';');
    for (i, stmt) in body.iter().enumerate() {
        let last = i + 1 == n;
        let r = match (&stmt.kind, last) {
            (StmtKind::Expr(e), true)
                if !trailing_semicolon && !silent && !matches!(e, Expr::Unsupported(_)) =>
            {
                env.line.set(stmt.line);
                vm.eval(e, &env).and_then(|v| show_result(vm, v))
            }
            _ => vm.exec(stmt, &env).map(|_| ()),
        };
        if let Err(mut e) = r {
            let line = env.line.get() as usize;
            let source = src
                .lines
                .get(line.saturating_sub(1))
                .cloned()
                .unwrap_or_default();
            e.0.traceback.insert(
                0,
                Frame {
                    file: file.clone(),
                    function: None,
                    line,
                    source,
                },
            );
            vm.flush();
            return Err(error_info(vm, e));
        }
    }
    Ok(())
}

fn show_result(vm: &mut Vm, v: crate::lang::values::value::Value) -> Result<(), PyErr> {
    if v.is_none() {
        return Ok(());
    }
    let data = vm.rich_of(&v)?;
    vm.core.globals.borrow_mut().insert(Rc::from("_"), v);
    vm.flush();
    vm.sink.emit(Output::ExecuteResult {
        execution_count: vm.core.count,
        data,
        metadata: Default::default(),
    });
    Ok(())
}

/// Whether a cell is complete, from the parser alone.
pub fn is_complete(code: &str) -> IsComplete {
    crate::lang::syntax::errors::is_complete(code)
}
