//! Parsing a cell with astral's parser, with the nesting of the tree bounded before anything
//! walks it. The parser itself grows its stack as it needs (it uses `stacker`), but the
//! tree it returns is dropped, visited and converted by recursive code, and a cell of a
//! million `not`s or `1+1+...` nests a million deep. As CPython does, a tree nested deeper
//! than [`MAX_NESTING`] is refused with `RecursionError: maximum recursion depth exceeded
//! during compilation`; the measure walks the tree on a stack that grows on demand, and a
//! tree that deep is never dropped (dropping recurses once per level): it is leaked, which
//! costs the memory of that one cell's source. Every parse of user text goes through here.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr as RE, Mod, Stmt as RS};
pub use ruff_python_parser::Mode;
use ruff_python_parser::{ParseError, ParseOptions, Parsed};

use crate::lang::eval::recursion::recursion_error;
use crate::lang::values::exc::{PyErr, PyResult};

/// The deepest nesting of expressions and statements a cell may have, about CPython's
/// (three times its recursion limit, less what the compiler itself takes).
pub const MAX_NESTING: usize = 2990;

/// A parsed cell whose nesting has been measured.
pub struct Tree {
    /// Always `Some` until dropped.
    parsed: Option<Parsed<Mod>>,
    too_deep: bool,
}

impl Tree {
    /// Parses `code` in `mode` (`Ipython` for a cell, `Expression` for an expression).
    pub fn parse(code: &str, mode: Mode) -> Tree {
        let parsed = ruff_python_parser::parse_unchecked(code, ParseOptions::from(mode));
        let too_deep = nesting_exceeds(parsed.syntax(), MAX_NESTING);
        Tree {
            parsed: Some(parsed),
            too_deep,
        }
    }

    /// Parses code the interpreter runs on a cell's behalf (a magic's statement or
    /// expression): a syntax error or a nesting too deep to walk is the exception to raise.
    pub fn parse_checked(code: &str, mode: Mode) -> PyResult<Tree> {
        let tree = Tree::parse(code, mode);
        if let Some(e) = tree.error() {
            return Err(PyErr::new("SyntaxError", super::errors::message(code, e)));
        }
        match tree.nesting_error() {
            Some(e) => Err(e),
            None => Ok(tree),
        }
    }

    /// The first syntax error, which CPython reports before anything else.
    pub fn error(&self) -> Option<&ParseError> {
        self.parsed.as_ref()?.errors().first()
    }

    /// CPython's compile-time `RecursionError` when the tree nests too deeply to walk.
    pub fn nesting_error(&self) -> Option<PyErr> {
        self.too_deep
            .then(|| recursion_error(" during compilation"))
    }

    /// The statements of a module; empty for an expression.
    pub fn suite(&self) -> &[RS] {
        match self.parsed.as_ref().map(|p| p.syntax()) {
            Some(Mod::Module(m)) => &m.body,
            _ => &[],
        }
    }

    /// The expression parsed in `Expression` mode.
    pub fn expr(&self) -> Option<&RE> {
        match self.parsed.as_ref().map(|p| p.syntax()) {
            Some(Mod::Expression(e)) => Some(&e.body),
            _ => None,
        }
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if self.too_deep {
            // Dropping recurses once per level of the tree; see the module note.
            std::mem::forget(self.parsed.take());
        }
    }
}

/// Whether `module` nests deeper than `limit`, measured on a stack that grows on demand.
fn nesting_exceeds(module: &Mod, limit: usize) -> bool {
    struct Depth {
        now: usize,
        limit: usize,
        exceeded: bool,
    }
    impl Depth {
        fn deeper(&mut self, levels: usize, walk: impl FnOnce(&mut Self)) {
            if self.exceeded {
                return;
            }
            self.now += levels;
            if self.now > self.limit {
                self.exceeded = true;
            } else {
                stacker::maybe_grow(64 << 10, 1 << 20, || walk(self));
            }
            self.now -= levels;
        }
    }
    impl<'a> Visitor<'a> for Depth {
        fn visit_stmt(&mut self, s: &'a RS) {
            self.deeper(1, |d| visitor::walk_stmt(d, s));
        }
        fn visit_expr(&mut self, e: &'a RE) {
            // A boolean chain becomes one nested node per operand in the evaluator's tree.
            let levels = match e {
                RE::BoolOp(b) => b.values.len().max(1),
                _ => 1,
            };
            self.deeper(levels, |d| visitor::walk_expr(d, e));
        }
    }
    let mut d = Depth {
        now: 0,
        limit,
        exceeded: false,
    };
    match module {
        Mod::Module(m) => d.visit_body(&m.body),
        Mod::Expression(e) => d.visit_expr(&e.body),
    }
    d.exceeded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_nesting_is_a_compile_time_recursion_error() {
        for code in [
            format!("x = {}1", "-".repeat(5000)),
            format!("x = {}1", "1+".repeat(5000)),
            format!("x = {}1", "not ".repeat(5000)),
            format!("x = f{}", "()".repeat(5000)),
            format!("x = {}1", "1 and ".repeat(5000)),
            format!("x = {}{}", "[".repeat(5000), "]".repeat(5000)),
        ] {
            let t = Tree::parse(&code, Mode::Ipython);
            assert!(t.error().is_none(), "{}", &code[..20]);
            let e = t.nesting_error().expect("too deep");
            assert_eq!(e.type_name(), "RecursionError");
            assert_eq!(
                e.message(),
                "maximum recursion depth exceeded during compilation"
            );
        }
        let fine = format!("x = {}1", "1+".repeat(2000));
        assert!(Tree::parse(&fine, Mode::Ipython).nesting_error().is_none());
        let wide = format!("x = [{}]", "1, ".repeat(100_000));
        assert!(Tree::parse(&wide, Mode::Ipython).nesting_error().is_none());
    }

    #[test]
    fn a_million_levels_are_measured_and_refused_without_overflowing() {
        let code = format!("x = {}1", "1+".repeat(1_000_000));
        let t = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let t = Tree::parse(&code, Mode::Ipython);
                t.nesting_error().is_some()
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(t);
    }
}
