//! Converts the parser's statements into the interpreter's tree (`ast`), resolving names
//! against the scope stack as it goes. This file and `convert_expr.rs` are the only ones
//! that know `ruff_python_ast`, so a parser upgrade touches them alone.

use std::rc::Rc;

use ruff_python_ast::{self as ra, Stmt as RS};
use ruff_text_size::Ranged;

use super::ast::*;
use super::scope::{Scope, ScopeKind};

pub struct Converter {
    pub scopes: Vec<Scope>,
    /// The qualified-name prefix of the definition being converted: `C.` inside class
    /// `C`, `f.<locals>.` inside function `f` (Python's `__qualname__`).
    prefix: Vec<String>,
    line_starts: Vec<usize>,
    pub src: Rc<Source>,
    pub text: String,
}

impl Converter {
    pub fn new(text: &str, src: Rc<Source>) -> Converter {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        Converter {
            scopes: vec![Scope::new(ScopeKind::Module)],
            prefix: vec![],
            line_starts,
            src,
            text: text.to_string(),
        }
    }

    pub fn line_of(&self, offset: usize) -> u32 {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }

    pub fn line(&self, r: &impl Ranged) -> u32 {
        self.line_of(r.range().start().to_usize())
    }

    /// Resolves a name read or written in the innermost scope.
    pub fn resolve(&self, name: &str) -> Name {
        let rc = intern(name);
        let n = self.scopes.len();
        let Some(top) = self.scopes.last() else {
            return Name::global(rc);
        };
        match top.kind {
            ScopeKind::Module => Name::global(rc),
            ScopeKind::Class => {
                if top.locals.contains(name) && !top.globals.contains(name) {
                    Name::Class(rc)
                } else if top.globals.contains(name) {
                    Name::global(rc)
                } else {
                    self.resolve_free(rc, n - 1, 0)
                }
            }
            ScopeKind::Function | ScopeKind::Comprehension => {
                if top.globals.contains(name) {
                    return Name::global(rc);
                }
                if let Some(i) = top.slot(name) {
                    return Name::Local(i, rc);
                }
                self.resolve_free(rc, n - 1, 1)
            }
        }
    }

    fn resolve_free(&self, name: Rc<str>, below: usize, mut depth: u32) -> Name {
        for i in (0..below).rev() {
            let s = &self.scopes[i];
            match s.kind {
                ScopeKind::Class => continue,
                ScopeKind::Module => return Name::global(name),
                _ => {
                    if s.globals.contains(&*name) {
                        return Name::global(name);
                    }
                    if let Some(slot) = s.slot(&name) {
                        return if depth == 0 {
                            Name::Local(slot, name)
                        } else {
                            Name::Outer(depth, slot, name)
                        };
                    }
                    depth += 1;
                }
            }
        }
        Name::global(name)
    }

    pub fn body(&mut self, stmts: &[RS]) -> Vec<Stmt> {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &RS) -> Stmt {
        let line = self.line(s);
        let kind = match s {
            RS::Expr(e) => StmtKind::Expr(self.expr(&e.value)),
            RS::Assign(a) => {
                let value = self.expr(&a.value);
                StmtKind::Assign(a.targets.iter().map(|t| self.expr(t)).collect(), value)
            }
            RS::AnnAssign(a) => {
                let recorded = matches!(
                    self.scopes.last().map(|s| &s.kind),
                    Some(ScopeKind::Module | ScopeKind::Class)
                );
                match (&*a.target, recorded && a.simple) {
                    (ra::Expr::Name(n), true) => StmtKind::Annotated {
                        target: self.expr(&a.target),
                        value: a.value.as_ref().map(|v| self.expr(v)),
                        name: Rc::from(n.id.as_str()),
                        annotation: self.expr(&a.annotation),
                    },
                    _ => match &a.value {
                        Some(v) => StmtKind::Assign(vec![self.expr(&a.target)], self.expr(v)),
                        None => StmtKind::Pass,
                    },
                }
            }
            RS::AugAssign(a) => {
                StmtKind::AugAssign(self.expr(&a.target), binop(a.op), self.expr(&a.value))
            }
            RS::If(i) => {
                let mut orelse = vec![];
                // Elif chains become nested ifs, built from the last clause backwards.
                for c in i.elif_else_clauses.iter().rev() {
                    let body = self.body(&c.body);
                    orelse = match &c.test {
                        Some(t) => vec![Stmt {
                            line: self.line(c),
                            kind: StmtKind::If(self.expr(t), body, orelse),
                        }],
                        None => body,
                    };
                }
                StmtKind::If(self.expr(&i.test), self.body(&i.body), orelse)
            }
            RS::While(w) => {
                StmtKind::While(self.expr(&w.test), self.body(&w.body), self.body(&w.orelse))
            }
            RS::For(f) => StmtKind::For(
                self.expr(&f.target),
                self.expr(&f.iter),
                self.body(&f.body),
                self.body(&f.orelse),
            ),
            RS::FunctionDef(f) => {
                let decos = f
                    .decorator_list
                    .iter()
                    .map(|d| self.expr(&d.expression))
                    .collect();
                let def = self.funcdef(f.name.id.as_str(), &f.parameters, FnBody::Stmts(&f.body));
                StmtKind::FuncDef(def, decos, self.resolve(f.name.id.as_str()))
            }
            RS::ClassDef(c) => self.classdef(c),
            RS::Return(r) => StmtKind::Return(r.value.as_ref().map(|v| self.expr(v))),
            RS::Pass(_) => StmtKind::Pass,
            RS::Break(_) => StmtKind::Break,
            RS::Continue(_) => StmtKind::Continue,
            RS::Raise(r) => StmtKind::Raise(
                r.exc.as_ref().map(|e| self.expr(e)),
                r.cause.as_ref().map(|e| self.expr(e)),
            ),
            RS::Try(t) => StmtKind::Try {
                body: self.body(&t.body),
                handlers: t
                    .handlers
                    .iter()
                    .map(|h| {
                        let ra::ExceptHandler::ExceptHandler(h) = h;
                        Handler {
                            ty: h.type_.as_ref().map(|e| self.expr(e)),
                            name: h.name.as_ref().map(|n| self.resolve(n.id.as_str())),
                            body: self.body(&h.body),
                            line: self.line(h),
                        }
                    })
                    .collect(),
                orelse: self.body(&t.orelse),
                finally: self.body(&t.finalbody),
            },
            RS::With(w) => StmtKind::With(
                w.items
                    .iter()
                    .map(|i| {
                        (
                            self.expr(&i.context_expr),
                            i.optional_vars.as_ref().map(|v| self.expr(v)),
                        )
                    })
                    .collect(),
                self.body(&w.body),
            ),
            RS::Assert(a) => {
                StmtKind::Assert(self.expr(&a.test), a.msg.as_ref().map(|m| self.expr(m)))
            }
            RS::Delete(d) => StmtKind::Del(d.targets.iter().map(|t| self.expr(t)).collect()),
            RS::Import(i) => {
                let mut out = vec![];
                for a in &i.names {
                    let path: Rc<str> = Rc::from(a.name.id.as_str());
                    let k = match &a.asname {
                        Some(n) => StmtKind::Import(
                            path,
                            Some(self.resolve(n.id.as_str())),
                            self.resolve(n.id.as_str()),
                        ),
                        None => {
                            let top = a.name.id.split('.').next().unwrap_or("").to_string();
                            StmtKind::Import(path, None, self.resolve(&top))
                        }
                    };
                    out.push(Stmt { line, kind: k });
                }
                return if out.len() == 1 {
                    out.remove(0)
                } else {
                    Stmt {
                        line,
                        kind: StmtKind::If(
                            Expr::Const(crate::lang::Value::Bool(true)),
                            out,
                            vec![],
                        ),
                    }
                };
            }
            RS::ImportFrom(i) => {
                let m: Rc<str> = Rc::from(i.module.as_ref().map(|m| m.id.as_str()).unwrap_or(""));
                if i.names.iter().any(|a| a.name.id.as_str() == "*") {
                    StmtKind::ImportStar(m)
                } else {
                    StmtKind::ImportFrom(
                        m,
                        i.names
                            .iter()
                            .map(|a| {
                                let bound = a.asname.as_ref().unwrap_or(&a.name);
                                (
                                    Rc::from(a.name.id.as_str()),
                                    self.resolve(bound.id.as_str()),
                                )
                            })
                            .collect(),
                    )
                }
            }
            RS::Global(_) | RS::Nonlocal(_) => StmtKind::Nop,
            RS::IpyEscapeCommand(c) => StmtKind::Escape(escape_marker(c.kind), c.value.to_string()),
            RS::Match(_) => StmtKind::Expr(Expr::Unsupported("the match statement")),
            RS::TypeAlias(_) => StmtKind::Expr(Expr::Unsupported("the type statement")),
        };
        Stmt { line, kind }
    }

    fn classdef(&mut self, c: &ra::StmtClassDef) -> StmtKind {
        let decorators = c
            .decorator_list
            .iter()
            .map(|d| self.expr(&d.expression))
            .collect();
        let bases = match &c.arguments {
            Some(a) => a.args.iter().map(|e| self.expr(e)).collect(),
            None => vec![],
        };
        let target = self.resolve(c.name.id.as_str());
        let mut scope = Scope::new(ScopeKind::Class);
        scope.scan(&c.body);
        self.scopes.push(scope);
        self.prefix.push(format!("{}.", c.name.id));
        let body = self.body(&c.body);
        self.prefix.pop();
        self.scopes.pop();
        StmtKind::ClassDef {
            name: Rc::from(c.name.id.as_str()),
            bases,
            body,
            decorators,
            target,
        }
    }

    pub fn funcdef(&mut self, name: &str, p: &ra::Parameters, body: FnBody) -> Rc<FuncDef> {
        // Defaults are evaluated where the function is defined, so convert them first.
        let defaults: Vec<Option<Expr>> = p
            .posonlyargs
            .iter()
            .chain(p.args.iter())
            .chain(p.kwonlyargs.iter())
            .map(|a| a.default.as_ref().map(|d| self.expr(d)))
            .collect();
        let mut scope = Scope::new(ScopeKind::Function);
        let npos = p.posonlyargs.len() + p.args.len();
        for a in p.posonlyargs.iter().chain(p.args.iter()) {
            scope.bind(a.parameter.name.id.as_str());
        }
        for a in p.kwonlyargs.iter() {
            scope.bind(a.parameter.name.id.as_str());
        }
        if let Some(v) = &p.vararg {
            scope.bind(v.name.id.as_str());
        }
        if let Some(v) = &p.kwarg {
            scope.bind(v.name.id.as_str());
        }
        let mut is_generator = false;
        match &body {
            FnBody::Stmts(b) => {
                scope.scan(b);
                is_generator = super::convert_expr::contains_yield(b);
            }
            FnBody::Expr(_) => {}
        }
        let qualname: Rc<str> = Rc::from(format!("{}{name}", self.prefix.concat()));
        self.prefix.push(format!("{name}.<locals>."));
        self.scopes.push(scope);
        let params = p
            .posonlyargs
            .iter()
            .chain(p.args.iter())
            .chain(p.kwonlyargs.iter())
            .zip(defaults)
            .enumerate()
            .map(|(i, (a, default))| Param {
                name: Rc::from(a.parameter.name.id.as_str()),
                slot: i as u32,
                default,
                kind: if i < npos {
                    ParamKind::Normal
                } else {
                    ParamKind::KwOnly
                },
            })
            .collect::<Vec<_>>();
        let slot_of = |s: &Scope, n: &str| s.locals.get_index_of(n).unwrap_or(0) as u32;
        let top = self.scopes.last();
        let vararg = p.vararg.as_ref().and_then(|v| {
            top.map(|s| (Rc::from(v.name.id.as_str()), slot_of(s, v.name.id.as_str())))
        });
        let kwarg = p.kwarg.as_ref().and_then(|v| {
            top.map(|s| (Rc::from(v.name.id.as_str()), slot_of(s, v.name.id.as_str())))
        });
        let (body, doc) = match body {
            FnBody::Stmts(b) => {
                let doc = docstring(b);
                (self.body(b), doc)
            }
            FnBody::Expr(e) => {
                let line = self.line(e);
                let e = self.expr(e);
                (
                    vec![Stmt {
                        line,
                        kind: StmtKind::Return(Some(e)),
                    }],
                    None,
                )
            }
        };
        let nlocals = self.scopes.last().map(|s| s.locals.len()).unwrap_or(0);
        self.prefix.pop();
        self.scopes.pop();
        Rc::new(FuncDef {
            name: Rc::from(name),
            qualname,
            params,
            npos,
            vararg,
            kwarg,
            nlocals,
            body,
            is_generator,
            doc,
            src: self.src.clone(),
        })
    }
}

pub enum FnBody<'a> {
    Stmts(&'a [RS]),
    Expr(&'a ra::Expr),
}

fn docstring(body: &[RS]) -> Option<String> {
    match body.first() {
        Some(RS::Expr(e)) => match &*e.value {
            ra::Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
            _ => None,
        },
        _ => None,
    }
}

fn escape_marker(k: ra::IpyEscapeKind) -> &'static str {
    use ra::IpyEscapeKind::*;
    match k {
        Shell => "!",
        ShCap => "!!",
        Help => "?",
        Help2 => "??",
        Magic => "%",
        Magic2 => "%%",
        Quote => ",",
        Quote2 => ";",
        Paren => "/",
    }
}

pub fn binop(op: ra::Operator) -> crate::lang::BinOp {
    use crate::lang::BinOp as B;
    use ra::Operator::*;
    match op {
        Add => B::Add,
        Sub => B::Sub,
        Mult => B::Mul,
        MatMult => B::MatMul,
        Div => B::Div,
        Mod => B::Mod,
        Pow => B::Pow,
        LShift => B::LShift,
        RShift => B::RShift,
        BitOr => B::BitOr,
        BitXor => B::BitXor,
        BitAnd => B::BitAnd,
        FloorDiv => B::FloorDiv,
    }
}

thread_local! {
    /// Every name the converter has resolved, one shared string each.
    static NAMES: std::cell::RefCell<std::collections::HashSet<Rc<str>>> = Default::default();
}

/// The one shared string for `name` on this thread. Globals are keyed by the string of the
/// statement that first stored them, so with shared strings the cached global lookup
/// (`Vm::global_at`) confirms its key by pointer instead of comparing the text. The set
/// grows only with the distinct names a session's cells use.
fn intern(name: &str) -> Rc<str> {
    NAMES.with(|names| {
        let mut names = names.borrow_mut();
        if let Some(rc) = names.get(name) {
            return rc.clone();
        }
        let rc: Rc<str> = Rc::from(name);
        names.insert(rc.clone());
        rc
    })
}
