//! The interpreter's own syntax tree. `convert` builds it from the parser's tree in one
//! pass, resolving every name to a local slot, an enclosing frame's slot, a class namespace
//! or the globals, so the evaluator never looks names up by string inside functions. Every
//! statement keeps its 1-based line for tracebacks. Nothing here evaluates anything.

use std::rc::Rc;

use crate::lang::values::object::{BinOp, CmpOp, UnaryOp};

/// Where a name lives, decided once at conversion time.
#[derive(Debug, Clone)]
pub enum Name {
    /// A slot of the running function's frame.
    Local(u32, Rc<str>),
    /// A slot of an enclosing function's frame, `depth` frames out.
    Outer(u32, u32, Rc<str>),
    /// A module-level (cell-level) name, or a builtin, with the index in the globals
    /// where it was last found (checked against the key before use, so always safe).
    Global(Rc<str>, std::cell::Cell<u32>),
    /// A name assigned in a class body: the class namespace, then the globals.
    Class(Rc<str>),
}

impl Name {
    pub fn global(name: Rc<str>) -> Name {
        Name::Global(name, std::cell::Cell::new(u32::MAX))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Op(CmpOp),
    In,
    NotIn,
    Is,
    IsNot,
}

#[derive(Debug)]
pub enum Arg {
    Pos(Expr),
    Star(Expr),
    Kw(Rc<str>, Expr),
    StarStar(Expr),
}

#[derive(Debug)]
pub enum FPart {
    Lit(Rc<str>),
    Value {
        expr: Expr,
        conv: Option<char>,
        spec: Vec<FPart>,
    },
}

#[derive(Debug)]
pub struct Comp {
    pub target: Expr,
    pub iter: Expr,
    pub ifs: Vec<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompKind {
    List,
    Set,
    Dict,
    Gen,
}

/// A comprehension: its own frame (`nlocals` slots); the first iterable is evaluated in
/// the enclosing scope, as in Python.
#[derive(Debug)]
pub struct CompDef {
    pub kind: CompKind,
    pub nlocals: usize,
    pub first_iter: Expr,
    pub gens: Vec<Comp>,
    pub elt: Expr,
    pub value: Option<Expr>,
}

#[derive(Debug)]
pub enum Expr {
    Const(crate::lang::Value),
    Name(Name),
    Attr(Box<Expr>, Rc<str>),
    Sub(Box<Expr>, Box<Expr>),
    Slice(Option<Box<Expr>>, Option<Box<Expr>>, Option<Box<Expr>>),
    Call(Box<Expr>, Vec<Arg>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Compare(Box<Expr>, Vec<(Cmp, Expr)>),
    IfExp(Box<Expr>, Box<Expr>, Box<Expr>),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Set(Vec<Expr>),
    /// Key `None` is a `**mapping` entry.
    Dict(Vec<(Option<Expr>, Expr)>),
    Starred(Box<Expr>),
    Lambda(Rc<FuncDef>),
    Comp(Rc<CompDef>),
    FStr(Vec<FPart>),
    Walrus(Name, Box<Expr>),
    /// `yield v` (false) or `yield from v` (true), inside a generator function.
    Yield(Option<Box<Expr>>, bool),
    /// A construct the interpreter does not support, with its description.
    Unsupported(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    Normal,
    KwOnly,
}

#[derive(Debug)]
pub struct Param {
    pub name: Rc<str>,
    pub slot: u32,
    pub default: Option<Expr>,
    pub kind: ParamKind,
}

/// The cell a function was defined in, for its traceback frames.
#[derive(Debug)]
pub struct Source {
    pub file: String,
    pub lines: Vec<String>,
}

#[derive(Debug)]
pub struct FuncDef {
    pub name: Rc<str>,
    /// Python's `__qualname__`: `C.method`, `outer.<locals>.inner`.
    pub qualname: Rc<str>,
    pub params: Vec<Param>,
    /// How many of `params` are positional (the rest are keyword-only).
    pub npos: usize,
    pub vararg: Option<(Rc<str>, u32)>,
    pub kwarg: Option<(Rc<str>, u32)>,
    pub nlocals: usize,
    pub body: Vec<Stmt>,
    pub is_generator: bool,
    pub doc: Option<String>,
    pub src: Rc<Source>,
}

#[derive(Debug)]
pub struct Handler {
    pub ty: Option<Expr>,
    pub name: Option<Name>,
    pub body: Vec<Stmt>,
    pub line: u32,
}

#[derive(Debug)]
pub struct Stmt {
    pub line: u32,
    pub kind: StmtKind,
}

#[derive(Debug)]
pub enum StmtKind {
    Expr(Expr),
    Assign(Vec<Expr>, Expr),
    AugAssign(Expr, BinOp, Expr),
    /// `target: annotation = value` at module or class level with a plain name target:
    /// the value (if any) is assigned, then the annotation is evaluated and recorded under
    /// that name in the namespace's `__annotations__` dict, as CPython does. Elsewhere an
    /// annotated assignment is a plain assignment (or nothing), as annotations of locals are
    /// never evaluated.
    Annotated {
        target: Expr,
        value: Option<Expr>,
        name: Rc<str>,
        annotation: Expr,
    },
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    While(Expr, Vec<Stmt>, Vec<Stmt>),
    For(Expr, Expr, Vec<Stmt>, Vec<Stmt>),
    FuncDef(Rc<FuncDef>, Vec<Expr>, Name),
    ClassDef {
        name: Rc<str>,
        bases: Vec<Expr>,
        body: Vec<Stmt>,
        decorators: Vec<Expr>,
        target: Name,
    },
    Return(Option<Expr>),
    Pass,
    Break,
    Continue,
    Raise(Option<Expr>, Option<Expr>),
    Try {
        body: Vec<Stmt>,
        handlers: Vec<Handler>,
        orelse: Vec<Stmt>,
        finally: Vec<Stmt>,
    },
    With(Vec<(Expr, Option<Expr>)>, Vec<Stmt>),
    Assert(Expr, Option<Expr>),
    Del(Vec<Expr>),
    /// `import a.b as c`: module path, and where it binds (the top name, or the alias).
    Import(Rc<str>, Option<Name>, Name),
    ImportFrom(Rc<str>, Vec<(Rc<str>, Name)>),
    ImportStar(Rc<str>),
    /// `%magic`, `!cmd`, `obj?`: the escape kind's marker and its text.
    Escape(&'static str, String),
    Nop,
}
