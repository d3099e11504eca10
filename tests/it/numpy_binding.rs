//! The `np` binding driven through the native object API (as the interpreter drives it),
//! compared with what numpy 2 printed for the same operations
//! (tests/fixtures/numpy/binding_cases.json, made by gen_binding_cases.py).

use crate::common::floats;
use crate::common::index::{Ellipsis, Slice};

use std::collections::HashMap;

use mirror_kernel::lang::{Args, BinOp, CmpOp, Ctx, PyErr, PyResult, StandIn, Value};

struct T {
    ctx: StandIn,
    np: Value,
}

fn ints(v: &[i64]) -> Value {
    Value::list(v.iter().map(|&i| Value::Int(i)).collect())
}
fn tup(v: &[i64]) -> Value {
    Value::tuple(v.iter().map(|&i| Value::Int(i)).collect())
}
fn sl(a: Option<i64>, b: Option<i64>, c: Option<i64>) -> Value {
    Value::Obj(std::rc::Rc::new(Slice(a, b, c)))
}

impl T {
    fn new() -> T {
        let mut ctx = StandIn::default();
        let np = mirror_kernel::bindings::numpy::module(&mut ctx).expect("module loads");
        T { ctx, np }
    }
    fn attr(&mut self, v: &Value, path: &str) -> Value {
        let mut cur = v.clone();
        for part in path.split('.') {
            cur = self.ctx.getattr(&cur, part).expect("attribute exists");
        }
        cur
    }
    fn np(&mut self, path: &str, pos: Vec<Value>, kw: Vec<(&str, Value)>) -> PyResult<Value> {
        let np = self.np.clone();
        let f = self.attr(&np, path);
        self.call(&f, pos, kw)
    }
    fn call(&mut self, f: &Value, pos: Vec<Value>, kw: Vec<(&str, Value)>) -> PyResult<Value> {
        let mut args = Args::new(pos);
        for (k, v) in kw {
            args = args.with_kw(k, v);
        }
        self.ctx.call(f, args)
    }
    fn m(
        &mut self,
        v: &Value,
        name: &str,
        pos: Vec<Value>,
        kw: Vec<(&str, Value)>,
    ) -> PyResult<Value> {
        let f = self.attr(v, name);
        self.call(&f, pos, kw)
    }
    fn arr(&mut self, v: Value) -> Value {
        self.np("array", vec![v], vec![]).expect("array builds")
    }
    fn arange(&mut self, n: i64) -> Value {
        self.np("arange", vec![Value::Int(n)], vec![])
            .expect("arange")
    }
    fn dt(&mut self, name: &str) -> Value {
        let np = self.np.clone();
        self.attr(&np, name)
    }
    fn bin(&mut self, a: &Value, op: BinOp, b: &Value) -> PyResult<Value> {
        if let Value::Native(o) = a {
            if let Some(v) = o.binop(op, b, false, &mut self.ctx)? {
                return Ok(v);
            }
        }
        let Value::Native(o) = b else {
            return Err(PyErr::type_error("unsupported"));
        };
        Ok(o.binop(op, a, true, &mut self.ctx)?.expect("reflected op"))
    }
    fn cmp(&mut self, a: &Value, op: CmpOp, b: &Value) -> Value {
        let Value::Native(o) = a else {
            panic!("not native")
        };
        o.compare(op, b, &mut self.ctx).unwrap().unwrap()
    }
    fn get(&mut self, a: &Value, key: Value) -> PyResult<Value> {
        let Value::Native(o) = a else {
            panic!("not native")
        };
        o.getitem(&key, &mut self.ctx)
    }
    fn repr(&mut self, r: PyResult<Value>) -> String {
        match r {
            Ok(v) => self.ctx.repr(&v).unwrap(),
            Err(e) => format!("{}: {}", e.type_name(), e.message()),
        }
    }
}

fn run(t: &mut T, name: &str) -> PyResult<Value> {
    use BinOp::*;
    let none = Value::None;
    Ok(match name {
        "u8_div" => {
            let u8t = t.dt("uint8");
            let a = t.np("array", vec![ints(&[0, 128, 255])], vec![("dtype", u8t)])?;
            t.bin(&a, Div, &Value::Float(255.0))?
        }
        "f32_mul" => {
            let f = t.dt("float32");
            let a = t.np("array", vec![floats(&[1.5, 2.0])], vec![("dtype", f)])?;
            t.bin(&a, Mul, &Value::Float(2.0))?
        }
        "sum_f64" => {
            let a = t.arr(floats(&[1.5, 2.5]));
            t.m(&a, "sum", vec![], vec![])?
        }
        "float32_scalar" => t.np("float32", vec![Value::Float(2.5)], vec![])?,
        "mean_axis" => {
            let a = t.arange(12);
            let b = t.m(&a, "reshape", vec![Value::Int(3), Value::Int(4)], vec![])?;
            t.m(&b, "mean", vec![], vec![("axis", Value::Int(0))])?
        }
        "rev_step" => {
            let a = t.arange(10);
            t.get(&a, sl(None, None, Some(-2)))?
        }
        "column" => {
            let a = t.arange(12);
            let b = t.m(&a, "reshape", vec![Value::Int(3), Value::Int(4)], vec![])?;
            t.get(&b, Value::tuple(vec![sl(None, None, None), Value::Int(0)]))?
        }
        "mask" => {
            let a = t.arange(10);
            let m = t.cmp(&a, CmpOp::Gt, &Value::Int(5));
            t.get(&a, m)?
        }
        "setitem" => {
            let a = t.np("zeros", vec![tup(&[2, 3])], vec![])?;
            let Value::Native(o) = &a else { unreachable!() };
            o.setitem(
                &Value::tuple(vec![sl(None, None, None), Value::Int(1)]),
                Value::Int(7),
                &mut t.ctx,
            )?;
            a
        }
        "broadcast_err" => {
            let a = t.np("zeros", vec![tup(&[2, 3])], vec![])?;
            let b = t.np("zeros", vec![Value::Int(4)], vec![])?;
            t.bin(&a, Add, &b)?
        }
        "truth_err" => {
            let a = t.arange(3);
            let Value::Native(o) = &a else { unreachable!() };
            o.truthy(&mut t.ctx)?;
            a
        }
        "rand" | "randint" | "normal" | "choice" | "shuffle" | "choice_p" | "permutation"
        | "uniform" | "randn_scalar" => {
            let seed = match name {
                "randint" => 42,
                "normal" => 1,
                "choice" => 3,
                "choice_p" => 5,
                "permutation" => 7,
                "uniform" => 2,
                _ => 0,
            };
            t.np("random.seed", vec![Value::Int(seed)], vec![])?;
            match name {
                "rand" => t.np("random.rand", vec![Value::Int(2), Value::Int(3)], vec![])?,
                "randint" => t.np(
                    "random.randint",
                    vec![Value::Int(0), Value::Int(10)],
                    vec![("size", Value::Int(5))],
                )?,
                "normal" => t.np(
                    "random.normal",
                    vec![Value::Float(2.0), Value::Float(0.5)],
                    vec![("size", Value::Int(4))],
                )?,
                "choice" => t.np(
                    "random.choice",
                    vec![Value::Int(10), Value::Int(4)],
                    vec![("replace", Value::Bool(false))],
                )?,
                "choice_p" => t.np(
                    "random.choice",
                    vec![Value::Int(3)],
                    vec![("size", Value::Int(6)), ("p", floats(&[0.2, 0.5, 0.3]))],
                )?,
                "permutation" => t.np("random.permutation", vec![Value::Int(6)], vec![])?,
                "uniform" => t.np(
                    "random.uniform",
                    vec![Value::Int(-1), Value::Int(1)],
                    vec![("size", tup(&[2, 2]))],
                )?,
                "randn_scalar" => t.np("random.randn", vec![], vec![])?,
                _ => {
                    let x = t.arange(8);
                    t.np("random.shuffle", vec![x.clone()], vec![])?;
                    x
                }
            }
        }
        "matmul" => {
            let a = t.arr(Value::list(vec![floats(&[1., 2.]), floats(&[3., 4.])]));
            let b = t.arr(Value::list(vec![floats(&[5.]), floats(&[6.])]));
            t.bin(&a, MatMul, &b)?
        }
        "std_int" => {
            let a = t.arr(ints(&[1, 2, 3, 4]));
            t.m(&a, "std", vec![], vec![])?
        }
        "argmax_axis" => {
            let a = t.arr(Value::list(vec![ints(&[1, 5, 2]), ints(&[7, 0, 3])]));
            t.m(&a, "argmax", vec![], vec![("axis", Value::Int(1))])?
        }
        "concat" => {
            let a = t.np("ones", vec![tup(&[2, 2])], vec![])?;
            let b = t.np("zeros", vec![tup(&[1, 2])], vec![])?;
            t.np("concatenate", vec![Value::list(vec![a, b])], vec![])?
        }
        "stack" => {
            let a = t.arange(3);
            let b = t.bin(&a, Mul, &Value::Int(2))?;
            t.np(
                "stack",
                vec![Value::list(vec![a, b])],
                vec![("axis", Value::Int(1))],
            )?
        }
        "where" => {
            let a = t.arange(5);
            let c = t.cmp(&a, CmpOp::Gt, &Value::Int(2));
            t.np(
                "where",
                vec![c, Value::Float(1.0), Value::Float(-1.0)],
                vec![],
            )?
        }
        "astype_str" => {
            let a = t.arr(floats(&[1.7, -2.2]));
            t.m(&a, "astype", vec![Value::str("int32")], vec![])?
        }
        "unique" => {
            let a = t.arr(ints(&[3, 1, 2, 3, 1]));
            t.np("unique", vec![a], vec![])?
        }
        "clip" => {
            let a = t.arange(6);
            t.np("clip", vec![a, Value::Int(1), Value::Int(4)], vec![])?
        }
        "linspace_f32" => {
            let f = t.dt("float32");
            t.np(
                "linspace",
                vec![Value::Int(0), Value::Int(1), Value::Int(4)],
                vec![("dtype", f)],
            )?
        }
        "newaxis" => {
            let a = t.arange(3);
            let b = t.get(&a, Value::tuple(vec![sl(None, None, None), none]))?;
            let c = t.arange(2);
            t.bin(&b, Mul, &c)?
        }
        "int_index" => {
            let a = t.arange(10);
            t.get(&a, ints(&[1, 3, -1]))?
        }
        "dtype_repr" => {
            let a = t.arange(3);
            t.attr(&a, "dtype")
        }
        "cumsum" => {
            let a = t.arr(Value::list(vec![ints(&[1, 2]), ints(&[3, 4])]));
            t.np("cumsum", vec![a], vec![("axis", Value::Int(0))])?
        }
        "ellipsis" => {
            let a = t.arange(24);
            let b = t.m(
                &a,
                "reshape",
                vec![Value::Int(2), Value::Int(3), Value::Int(4)],
                vec![],
            )?;
            t.get(
                &b,
                Value::tuple(vec![Value::Obj(std::rc::Rc::new(Ellipsis)), Value::Int(1)]),
            )?
        }
        "exp_f64" => {
            let a = t.arr(floats(&[0., 1., -2.5]));
            t.np("exp", vec![a], vec![])?
        }
        "round" => {
            let a = t.arr(floats(&[0.5, 1.5, 2.675]));
            t.np("round", vec![a, Value::Int(2)], vec![])?
        }
        "keepdims" => {
            let a = t.np("arange", vec![Value::Float(6.0)], vec![])?;
            let b = t.m(&a, "reshape", vec![Value::Int(2), Value::Int(3)], vec![])?;
            t.m(
                &b,
                "sum",
                vec![],
                vec![("axis", Value::Int(1)), ("keepdims", Value::Bool(true))],
            )?
        }
        "transpose" => {
            let a = t.arange(6);
            let b = t.m(&a, "reshape", vec![Value::Int(2), Value::Int(3)], vec![])?;
            t.attr(&b, "T")
        }
        "bool_and" => {
            let a = t.arange(4);
            let p = t.cmp(&a, CmpOp::Gt, &Value::Int(1));
            let q = t.cmp(&a, CmpOp::Lt, &Value::Int(3));
            t.bin(&p, BitAnd, &q)?
        }
        "reflected_pow" => {
            let a = t.arange(4);
            t.bin(&Value::Int(2), Pow, &a)?
        }
        "int_scalar" => {
            let a = t.arange(5);
            t.get(&a, Value::Int(2))?
        }
        "big_2d" => {
            let a = t.arange(2000);
            t.m(&a, "reshape", vec![Value::Int(40), Value::Int(50)], vec![])?
        }
        "index_err" => {
            let a = t.arange(3);
            t.get(&a, Value::Int(5))?
        }
        "reshape_err" | "reshape_err2" => {
            let a = t.arange(6);
            let dims = if name == "reshape_err" {
                [4, -1]
            } else {
                [-1, 4]
            };
            t.m(
                &a,
                "reshape",
                dims.iter().map(|&d| Value::Int(d)).collect(),
                vec![],
            )?
        }
        "f32_plus_f64_scalar" => {
            let a = t.np("float32", vec![Value::Float(1.5)], vec![])?;
            let b = t.np("float64", vec![Value::Float(2.0)], vec![])?;
            t.bin(&a, Add, &b)?
        }
        "f32_scalar_plus_float" => {
            let a = t.np("float32", vec![Value::Float(1.5)], vec![])?;
            t.bin(&a, Add, &Value::Float(2.0))?
        }
        "var_ddof" => {
            let a = t.arr(floats(&[1., 2., 4.]));
            t.np("var", vec![a], vec![("ddof", Value::Int(1))])?
        }
        "eye_int" => {
            let i = t.dt("int32");
            t.np("eye", vec![Value::Int(3)], vec![("dtype", i)])?
        }
        "max_empty_err" => {
            let a = t.np("zeros", vec![Value::Int(0)], vec![])?;
            t.m(&a, "max", vec![], vec![])?
        }
        "full_int" => t.np("full", vec![tup(&[2, 2]), Value::Int(7)], vec![])?,
        "zeros_like_f32" => {
            let f = t.dt("float32");
            let a = t.np("ones", vec![Value::Int(3)], vec![("dtype", f)])?;
            t.np("zeros_like", vec![a], vec![])?
        }
        "hstack" | "vstack" => {
            let a = t.arange(2);
            let b = t.arange(3);
            let c = t.arange(3);
            let items = if name == "hstack" {
                vec![a, b]
            } else {
                vec![b, c]
            };
            t.np(name, vec![Value::list(items)], vec![])?
        }
        "mul_list" => {
            let a = t.arange(3);
            t.bin(&a, Mul, &ints(&[2, 3, 4]))?
        }
        "neg_f32" => {
            let f = t.dt("float32");
            let a = t.np("array", vec![floats(&[1., -2.])], vec![("dtype", f)])?;
            let Value::Native(o) = &a else { unreachable!() };
            o.unary(mirror_kernel::lang::UnaryOp::Neg, &mut t.ctx)?
        }
        "uint8_overflow_err" => {
            let u = t.dt("uint8");
            let a = t.np("array", vec![ints(&[1])], vec![("dtype", u)])?;
            t.bin(&a, Add, &Value::Int(300))?
        }
        "allclose" => t.np(
            "allclose",
            vec![floats(&[1.0, 2.0]), floats(&[1.0, 2.0000001])],
            vec![],
        )?,
        "isclose" => {
            let a = t.arr(floats(&[1.0, 2.0]));
            let b = t.arr(floats(&[1.0, 2.1]));
            t.np("isclose", vec![a, b], vec![])?
        }
        other => panic!("no Rust side for case {other}"),
    })
}

#[test]
fn binding_matches_numpy() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/numpy/binding_cases.json"
    ))
    .expect("fixture is committed");
    let cases: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let cases = cases["cases"].as_object().expect("cases");
    let mut failures: HashMap<String, (String, String)> = HashMap::new();
    for (name, want) in cases {
        let mut t = T::new();
        let r = run(&mut t, name);
        let got = t.repr(r);
        let want = want.as_str().unwrap_or_default().to_string();
        if got != want {
            failures.insert(name.clone(), (got, want));
        }
    }
    let report: Vec<String> = failures
        .iter()
        .map(|(n, (g, w))| format!("{n}:\n  got:   {g}\n  numpy: {w}"))
        .collect();
    assert!(
        failures.is_empty(),
        "{} mismatches\n{}",
        failures.len(),
        report.join("\n")
    );
}
