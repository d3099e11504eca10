//! Expression half of the converter (see `convert.rs`): literals, operators, calls,
//! comprehensions (each with its own scope), lambdas and f-strings.

use std::rc::Rc;

use ruff_python_ast::{self as ra, Expr as RE, Stmt as RS};

use super::ast::*;
use super::convert::{binop, Converter, FnBody};
use super::scope::{Scope, ScopeKind};
use crate::lang::values::object::{CmpOp, UnaryOp};
use crate::lang::values::value::Value;

impl Converter {
    pub fn expr(&mut self, e: &RE) -> Expr {
        match e {
            RE::NumberLiteral(n) => match &n.value {
                ra::Number::Int(i) => match i.as_i64() {
                    Some(v) => Expr::Const(Value::Int(v)),
                    None => Expr::Unsupported("integers beyond 64 bits"),
                },
                ra::Number::Float(f) => Expr::Const(Value::Float(*f)),
                ra::Number::Complex { .. } => Expr::Unsupported("complex numbers"),
            },
            RE::StringLiteral(s) => Expr::Const(Value::str(s.value.to_str())),
            RE::BytesLiteral(_) => Expr::Unsupported("bytes literals"),
            RE::BooleanLiteral(b) => Expr::Const(Value::Bool(b.value)),
            RE::NoneLiteral(_) => Expr::Const(Value::None),
            RE::EllipsisLiteral(_) => Expr::Name(Name::global(Rc::from("Ellipsis"))),
            RE::Name(n) => Expr::Name(self.resolve(n.id.as_str())),
            RE::Attribute(a) => {
                Expr::Attr(Box::new(self.expr(&a.value)), Rc::from(a.attr.id.as_str()))
            }
            RE::Subscript(s) => {
                Expr::Sub(Box::new(self.expr(&s.value)), Box::new(self.expr(&s.slice)))
            }
            RE::Slice(s) => Expr::Slice(
                s.lower.as_ref().map(|x| Box::new(self.expr(x))),
                s.upper.as_ref().map(|x| Box::new(self.expr(x))),
                s.step.as_ref().map(|x| Box::new(self.expr(x))),
            ),
            RE::Call(c) => {
                let f = self.expr(&c.func);
                let mut args = vec![];
                for a in c.arguments.args.iter() {
                    args.push(match a {
                        RE::Starred(s) => Arg::Star(self.expr(&s.value)),
                        other => Arg::Pos(self.expr(other)),
                    });
                }
                for k in c.arguments.keywords.iter() {
                    args.push(match &k.arg {
                        Some(n) => Arg::Kw(Rc::from(n.id.as_str()), self.expr(&k.value)),
                        None => Arg::StarStar(self.expr(&k.value)),
                    });
                }
                Expr::Call(Box::new(f), args)
            }
            RE::BinOp(b) => Expr::Bin(
                binop(b.op),
                Box::new(self.expr(&b.left)),
                Box::new(self.expr(&b.right)),
            ),
            RE::UnaryOp(u) => {
                let v = Box::new(self.expr(&u.operand));
                match u.op {
                    ra::UnaryOp::Not => Expr::Not(v),
                    ra::UnaryOp::USub => match *v {
                        Expr::Const(Value::Int(i)) => Expr::Const(Value::Int(i.wrapping_neg())),
                        Expr::Const(Value::Float(f)) => Expr::Const(Value::Float(-f)),
                        v => Expr::Unary(UnaryOp::Neg, Box::new(v)),
                    },
                    ra::UnaryOp::UAdd => Expr::Unary(UnaryOp::Pos, v),
                    ra::UnaryOp::Invert => Expr::Unary(UnaryOp::Invert, v),
                }
            }
            RE::BoolOp(b) => {
                let mut vals: Vec<Expr> = b.values.iter().map(|v| self.expr(v)).collect();
                let mut acc = vals.pop().unwrap_or(Expr::Const(Value::None));
                while let Some(v) = vals.pop() {
                    acc = match b.op {
                        ra::BoolOp::And => Expr::And(Box::new(v), Box::new(acc)),
                        ra::BoolOp::Or => Expr::Or(Box::new(v), Box::new(acc)),
                    };
                }
                acc
            }
            RE::Compare(c) => {
                let left = self.expr(&c.left);
                let rest = c
                    .ops
                    .iter()
                    .zip(c.comparators.iter())
                    .map(|(op, e)| (cmp(*op), self.expr(e)))
                    .collect();
                Expr::Compare(Box::new(left), rest)
            }
            RE::If(i) => Expr::IfExp(
                Box::new(self.expr(&i.test)),
                Box::new(self.expr(&i.body)),
                Box::new(self.expr(&i.orelse)),
            ),
            RE::List(l) => Expr::List(l.elts.iter().map(|x| self.expr(x)).collect()),
            RE::Tuple(l) => Expr::Tuple(l.elts.iter().map(|x| self.expr(x)).collect()),
            RE::Set(l) => Expr::Set(l.elts.iter().map(|x| self.expr(x)).collect()),
            RE::Dict(d) => Expr::Dict(
                d.items
                    .iter()
                    .map(|it| (it.key.as_ref().map(|k| self.expr(k)), self.expr(&it.value)))
                    .collect(),
            ),
            RE::Starred(s) => Expr::Starred(Box::new(self.expr(&s.value))),
            RE::Lambda(l) => {
                let empty = ra::Parameters::default();
                let p = l.parameters.as_deref().unwrap_or(&empty);
                Expr::Lambda(self.funcdef("<lambda>", p, FnBody::Expr(&l.body)))
            }
            RE::ListComp(c) => self.comp(CompKind::List, &c.elt, None, &c.generators),
            RE::SetComp(c) => self.comp(CompKind::Set, &c.elt, None, &c.generators),
            RE::Generator(c) => self.comp(CompKind::Gen, &c.elt, None, &c.generators),
            RE::DictComp(c) => match &c.key {
                Some(k) => self.comp(CompKind::Dict, k, Some(&c.value), &c.generators),
                None => Expr::Unsupported("dict comprehension unpacking"),
            },
            RE::FString(f) => {
                let mut parts = vec![];
                for p in f.value.iter() {
                    match p {
                        ra::FStringPart::Literal(s) => parts.push(FPart::Lit(Rc::from(&*s.value))),
                        ra::FStringPart::FString(fs) => self.fparts(&fs.elements, &mut parts),
                    }
                }
                Expr::FStr(parts)
            }
            RE::Named(n) => {
                let target = match &*n.target {
                    RE::Name(x) => self.resolve(x.id.as_str()),
                    _ => return Expr::Unsupported("assignment expression target"),
                };
                Expr::Walrus(target, Box::new(self.expr(&n.value)))
            }
            RE::TString(_) => Expr::Unsupported("template strings"),
            RE::Await(_) => Expr::Unsupported("await"),
            RE::Yield(y) => Expr::Yield(y.value.as_ref().map(|v| Box::new(self.expr(v))), false),
            RE::YieldFrom(y) => Expr::Yield(Some(Box::new(self.expr(&y.value))), true),
            RE::IpyEscapeCommand(_) => Expr::Unsupported("an escape command inside an expression"),
        }
    }

    fn fparts(&mut self, elements: &ra::InterpolatedStringElements, out: &mut Vec<FPart>) {
        for el in elements.iter() {
            match el {
                ra::InterpolatedStringElement::Literal(l) => {
                    out.push(FPart::Lit(Rc::from(&*l.value)))
                }
                ra::InterpolatedStringElement::Interpolation(i) => {
                    let mut conv = match i.conversion {
                        ra::ConversionFlag::None => None,
                        ra::ConversionFlag::Str => Some('s'),
                        ra::ConversionFlag::Repr => Some('r'),
                        ra::ConversionFlag::Ascii => Some('a'),
                    };
                    if let Some(d) = &i.debug_text {
                        let start = i.expression.as_ref();
                        let text = &self.text;
                        let r = ruff_text_size::Ranged::range(start);
                        let src = text
                            .get(r.start().to_usize()..r.end().to_usize())
                            .unwrap_or("");
                        out.push(FPart::Lit(Rc::from(format!(
                            "{}{}{}",
                            d.leading(),
                            src,
                            d.trailing()
                        ))));
                        if conv.is_none() && i.format_spec.is_none() {
                            conv = Some('r');
                        }
                    }
                    let mut spec = vec![];
                    if let Some(s) = &i.format_spec {
                        self.fparts(&s.elements, &mut spec);
                    }
                    out.push(FPart::Value {
                        expr: self.expr(&i.expression),
                        conv,
                        spec,
                    });
                }
            }
        }
    }

    fn comp(
        &mut self,
        kind: CompKind,
        elt: &RE,
        value: Option<&RE>,
        gens: &[ra::Comprehension],
    ) -> Expr {
        let Some(first) = gens.first() else {
            return Expr::Unsupported("empty comprehension");
        };
        let first_iter = self.expr(&first.iter);
        let mut scope = Scope::new(ScopeKind::Comprehension);
        for g in gens {
            scope.scan_target(&g.target);
        }
        self.scopes.push(scope);
        let mut out = vec![];
        for (i, g) in gens.iter().enumerate() {
            out.push(Comp {
                target: self.expr(&g.target),
                iter: if i == 0 {
                    Expr::Const(Value::None)
                } else {
                    self.expr(&g.iter)
                },
                ifs: g.ifs.iter().map(|x| self.expr(x)).collect(),
            });
        }
        let elt = self.expr(elt);
        let value = value.map(|v| self.expr(v));
        let nlocals = self.scopes.last().map(|s| s.locals.len()).unwrap_or(0);
        self.scopes.pop();
        Expr::Comp(std::rc::Rc::new(CompDef {
            kind,
            nlocals,
            first_iter,
            gens: out,
            elt,
            value,
        }))
    }
}

fn cmp(op: ra::CmpOp) -> Cmp {
    use ra::CmpOp::*;
    match op {
        Eq => Cmp::Op(CmpOp::Eq),
        NotEq => Cmp::Op(CmpOp::Ne),
        Lt => Cmp::Op(CmpOp::Lt),
        LtE => Cmp::Op(CmpOp::Le),
        Gt => Cmp::Op(CmpOp::Gt),
        GtE => Cmp::Op(CmpOp::Ge),
        Is => Cmp::Is,
        IsNot => Cmp::IsNot,
        In => Cmp::In,
        NotIn => Cmp::NotIn,
    }
}

/// Whether a function body yields (not looking into nested functions).
pub fn contains_yield(body: &[RS]) -> bool {
    use ruff_python_ast::visitor::{self, Visitor};
    struct Finder(bool);
    impl<'a> Visitor<'a> for Finder {
        fn visit_stmt(&mut self, s: &'a RS) {
            match s {
                RS::FunctionDef(_) | RS::ClassDef(_) => {}
                _ => visitor::walk_stmt(self, s),
            }
        }
        fn visit_expr(&mut self, e: &'a RE) {
            match e {
                RE::Yield(_) | RE::YieldFrom(_) => self.0 = true,
                RE::Lambda(_) => {}
                _ => visitor::walk_expr(self, e),
            }
        }
    }
    let mut f = Finder(false);
    for s in body {
        f.visit_stmt(s);
    }
    f.0
}
