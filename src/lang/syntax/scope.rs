//! Scope analysis for the converter: which names a function (or class body, or
//! comprehension) binds, and which it declares `global` or `nonlocal`. Works on the
//! parser's tree, before conversion, and never descends into nested functions or classes
//! (their own names belong to them).

use std::collections::HashSet;

use indexmap::IndexSet;
use ruff_python_ast::{self as ra, Expr as RE, Stmt as RS};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    Module,
    Function,
    Class,
    Comprehension,
}

#[derive(Debug)]
pub struct Scope {
    pub kind: ScopeKind,
    pub locals: IndexSet<String>,
    pub globals: HashSet<String>,
    pub nonlocals: HashSet<String>,
}

impl Scope {
    pub fn new(kind: ScopeKind) -> Scope {
        Scope {
            kind,
            locals: IndexSet::new(),
            globals: HashSet::new(),
            nonlocals: HashSet::new(),
        }
    }

    pub fn slot(&self, name: &str) -> Option<u32> {
        if self.globals.contains(name) || self.nonlocals.contains(name) {
            return None;
        }
        self.locals.get_index_of(name).map(|i| i as u32)
    }

    /// Adds a binding name (used for parameters and for names found by `scan`).
    pub fn bind(&mut self, name: &str) {
        self.locals.insert(name.to_string());
    }

    /// Collects the names a body binds (assignment expressions included), then drops
    /// those declared global or nonlocal.
    pub fn scan(&mut self, body: &[RS]) {
        self.scan_body(body);
        for name in walrus_targets(body) {
            self.bind(&name);
        }
        let declared: Vec<String> = self
            .globals
            .iter()
            .chain(self.nonlocals.iter())
            .cloned()
            .collect();
        for d in declared {
            self.locals.shift_remove(&d);
        }
    }

    pub fn scan_target(&mut self, e: &RE) {
        match e {
            RE::Name(n) => self.bind(n.id.as_str()),
            RE::Tuple(t) => t.elts.iter().for_each(|x| self.scan_target(x)),
            RE::List(t) => t.elts.iter().for_each(|x| self.scan_target(x)),
            RE::Starred(s) => self.scan_target(&s.value),
            _ => {}
        }
    }

    fn scan_body(&mut self, body: &[RS]) {
        for s in body {
            self.scan_stmt(s);
        }
    }

    fn scan_stmt(&mut self, s: &RS) {
        match s {
            RS::FunctionDef(f) => self.bind(f.name.id.as_str()),
            RS::ClassDef(c) => self.bind(c.name.id.as_str()),
            RS::Assign(a) => a.targets.iter().for_each(|t| self.scan_target(t)),
            RS::AugAssign(a) => self.scan_target(&a.target),
            RS::AnnAssign(a) if a.value.is_some() => self.scan_target(&a.target),
            RS::For(f) => {
                self.scan_target(&f.target);
                self.scan_body(&f.body);
                self.scan_body(&f.orelse);
            }
            RS::While(w) => {
                self.scan_body(&w.body);
                self.scan_body(&w.orelse);
            }
            RS::If(i) => {
                self.scan_body(&i.body);
                for c in &i.elif_else_clauses {
                    self.scan_body(&c.body);
                }
            }
            RS::With(w) => {
                for it in &w.items {
                    if let Some(v) = &it.optional_vars {
                        self.scan_target(v);
                    }
                }
                self.scan_body(&w.body);
            }
            RS::Try(t) => {
                self.scan_body(&t.body);
                for h in &t.handlers {
                    let ra::ExceptHandler::ExceptHandler(h) = h;
                    if let Some(n) = &h.name {
                        self.bind(n.id.as_str());
                    }
                    self.scan_body(&h.body);
                }
                self.scan_body(&t.orelse);
                self.scan_body(&t.finalbody);
            }
            RS::Import(i) => {
                for a in &i.names {
                    match &a.asname {
                        Some(n) => self.bind(n.id.as_str()),
                        None => {
                            let top = a.name.id.split('.').next().unwrap_or("");
                            self.bind(top)
                        }
                    }
                }
            }
            RS::ImportFrom(i) => {
                for a in &i.names {
                    let n = a.asname.as_ref().unwrap_or(&a.name);
                    if n.id.as_str() != "*" {
                        self.bind(n.id.as_str());
                    }
                }
            }
            RS::Delete(d) => d.targets.iter().for_each(|t| self.scan_target(t)),
            RS::Global(g) => {
                for n in &g.names {
                    self.globals.insert(n.id.to_string());
                }
            }
            RS::Nonlocal(g) => {
                for n in &g.names {
                    self.nonlocals.insert(n.id.to_string());
                }
            }
            _ => {}
        }
    }
}

/// The names `:=` binds in a body, comprehensions included (they bind in the enclosing
/// function, as in Python), nested functions, classes and lambdas excluded.
fn walrus_targets(body: &[RS]) -> Vec<String> {
    use ruff_python_ast::visitor::{self, Visitor};
    struct Finder(Vec<String>);
    impl<'a> Visitor<'a> for Finder {
        fn visit_stmt(&mut self, s: &'a RS) {
            match s {
                RS::FunctionDef(_) | RS::ClassDef(_) => {}
                _ => visitor::walk_stmt(self, s),
            }
        }
        fn visit_expr(&mut self, e: &'a RE) {
            match e {
                RE::Named(n) => {
                    if let RE::Name(x) = &*n.target {
                        self.0.push(x.id.to_string());
                    }
                    visitor::walk_expr(self, e)
                }
                RE::Lambda(_) => {}
                _ => visitor::walk_expr(self, e),
            }
        }
    }
    let mut f = Finder(vec![]);
    for s in body {
        f.visit_stmt(s);
    }
    f.0
}
