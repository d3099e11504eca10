//! The language as the session drives it: tracebacks and syntax errors (lines, carets,
//! CPython's messages), recursion and memory bounds, interrupts, IPython syntax, display,
//! input, and the console helpers (is_complete, complete, inspect).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use mirror_kernel::cell::{
    CollectSink, ErrorInfo, ExecuteReply, ExecuteRequest, IsComplete, Output, StreamName,
};
use mirror_kernel::session::Session;

fn request(code: &str) -> ExecuteRequest {
    ExecuteRequest {
        code: code.into(),
        silent: false,
        store_history: true,
        allow_stdin: false,
        user_expressions: vec![],
    }
}

fn exec(s: &Session, code: &str) -> (ExecuteReply, Vec<Output>) {
    let sink = Arc::new(CollectSink::default());
    let reply = s.execute_blocking(request(code), Box::new(sink.clone()));
    (reply, sink.take())
}

fn stdout(outs: &[Output]) -> String {
    outs.iter()
        .filter_map(|o| match o {
            Output::Stream {
                name: StreamName::Stdout,
                text,
            } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn err(r: &ExecuteReply) -> ErrorInfo {
    r.result.clone().expect_err("the cell should fail")
}

/// Traceback lines without ANSI colour codes.
fn plain_tb(e: &ErrorInfo) -> String {
    let joined = e.traceback.join("\n");
    let mut out = String::new();
    let mut chars = joined.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// IPython 9.18's traceback for this cell (run as In[2], colours off), the reference.
const IPYTHON_TB: &str = "\
---------------------------------------------------------------------------
ZeroDivisionError                         Traceback (most recent call last)
Cell In[2], line 8
      6 y = 2
      7 z = 3
----> 8 f(y)
      9 w = 4

Cell In[2], line 4, in f(a)
      2 b = 1
      3 c = 2
----> 4 return a / 0

ZeroDivisionError: division by zero";

#[test]
fn traceback_points_at_cell_lines_and_call_chain() {
    let s = Session::start().unwrap();
    exec(&s, "x = 1");
    let cell = "def f(a):\n    b = 1\n    c = 2\n    return a / 0\n\ny = 2\nz = 3\nf(y)\nw = 4\n";
    let (r, _) = exec(&s, cell);
    let e = err(&r);
    assert_eq!(
        (e.ename.as_str(), e.evalue.as_str()),
        ("ZeroDivisionError", "division by zero")
    );
    assert_eq!(plain_tb(&e), IPYTHON_TB);
    // A function defined in one cell and failing from another names its own cell.
    let (r, _) = exec(&s, "f(3)");
    let tb = plain_tb(&err(&r));
    assert!(tb.contains("Cell In[3], line 1\n----> 1 f(3)"), "{tb}");
    assert!(tb.contains("Cell In[2], line 4, in f(a)"), "{tb}");
}

#[test]
fn syntax_errors_use_cpython_wording_and_carets() {
    let s = Session::start().unwrap();
    let (r, _) = exec(&s, "x = 1\nprint((x, 2)\n");
    let e = err(&r);
    assert_eq!(e.ename, "SyntaxError");
    assert_eq!(e.evalue, "'(' was never closed");
    let tb = plain_tb(&e);
    assert!(tb.contains("line 2"), "{tb}");
    assert!(tb.contains("print((x, 2)"), "{tb}");
    // The caret sits under the unclosed bracket (column 5 of the line).
    let caret_line = tb.lines().find(|l| l.trim() == "^").expect("caret line");
    assert_eq!(caret_line.find('^'), Some(4 + 5), "{tb}");
    let (r, _) = exec(&s, "for i in range(3)\n    pass");
    assert_eq!(err(&r).ename, "SyntaxError");
    let (r, _) = exec(&s, "s = 'abc");
    assert_eq!(err(&r).evalue, "unterminated string literal");
}

#[test]
fn recursion_and_memory_are_bounded_and_the_session_lives() {
    let s = Session::start().unwrap();
    let (r, _) = exec(&s, "def down(n):\n    return down(n + 1)\ndown(0)");
    let e = err(&r);
    assert_eq!(e.ename, "RecursionError");
    assert!(e.evalue.starts_with("maximum recursion depth exceeded"));
    let (r, _) = exec(&s, "big = [0] * (10 ** 10)");
    assert_eq!(err(&r).ename, "MemoryError");
    let (r, _) = exec(&s, "s = 'x' * (10 ** 12)");
    assert_eq!(err(&r).ename, "MemoryError");
    let (r, _) = exec(&s, "2 ** 64");
    assert_eq!(err(&r).ename, "OverflowError");
    // Generators are lazy: an endless one gives its first items, and finite ones still
    // work afterwards.
    let (r, outs) = exec(
        &s,
        "def count():\n    i = 0\n    while True:\n        yield i\n        i += 1\nc = count()\nprint(next(c), next(c))",
    );
    assert!(r.result.is_ok());
    assert_eq!(stdout(&outs), "0 1\n");
    let (r, outs) = exec(
        &s,
        "def two():\n    yield 1\n    yield 2\nprint(list(two()), next(two()))",
    );
    assert!(r.result.is_ok());
    assert_eq!(stdout(&outs), "[1, 2] 1\n");
    let (r, outs) = exec(&s, "print(down.__name__)");
    assert!(r.result.is_ok());
    assert_eq!(stdout(&outs), "down\n");
}

#[test]
fn interrupt_ends_a_loop_and_keeps_state() {
    let s = Session::start().unwrap();
    exec(&s, "kept = 41");
    let flag = s.interrupt_flag();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let (r, _) = exec(&s, "n = 0\nwhile True:\n    n += 1");
    t.join().unwrap();
    assert_eq!(err(&r).ename, "KeyboardInterrupt");
    let (r, outs) = exec(&s, "print(kept + 1, n > 0)");
    assert!(r.result.is_ok());
    assert_eq!(stdout(&outs), "42 True\n");
}

#[test]
fn ipython_syntax_and_results() {
    let s = Session::start().unwrap();
    let (r, _) = exec(&s, "%foo");
    let e = err(&r);
    assert_eq!(
        (e.ename.as_str(), e.evalue.as_str()),
        ("UsageError", "Line magic function `%foo` not found.")
    );
    let (r, outs) = exec(&s, "%matplotlib inline\n!echo hello\nv = 3\nv * 2");
    assert!(r.result.is_ok());
    assert_eq!(stdout(&outs), "hello\n");
    let result = outs.iter().find_map(|o| match o {
        Output::ExecuteResult {
            execution_count,
            data,
            ..
        } => Some((*execution_count, data["text/plain"].clone())),
        _ => None,
    });
    assert_eq!(result, Some((r.execution_count, serde_json::json!("6"))));
    let (_, outs) = exec(&s, "v * 2;");
    assert!(outs.is_empty());
    let (_, outs) = exec(&s, "%who");
    assert_eq!(stdout(&outs), "v\t\n");
    let (_, outs) = exec(&s, "%timeit sum(range(10))");
    assert!(
        stdout(&outs).contains(" per loop (mean ± std. dev. of 7 runs, "),
        "{:?}",
        stdout(&outs)
    );
    let (r, outs) = exec(&s, "%%time\nw = sum(range(10))");
    assert!(r.result.is_ok());
    assert!(stdout(&outs).contains("Wall time:"));
    let (r, _) = exec(&s, "len?");
    assert!(r.result.is_ok());
    let pager = r
        .pager
        .first()
        .and_then(|b| b.get("text/plain"))
        .and_then(|v| v.as_str())
        .unwrap_or("");
    assert!(pager.contains("Return the number of items"), "{pager}");
    let (r, _) = exec(&s, "import nosuchthing");
    let e = err(&r);
    assert_eq!(e.ename, "ModuleNotFoundError");
    assert!(
        e.evalue.starts_with("No module named 'nosuchthing'") && e.evalue.contains("tensorflow")
    );
    let (r, outs) = exec(
        &s,
        "import math, sys\nimport math as m2\nprint(m2 is math, 'math' in sys.modules or True)",
    );
    assert!(r.result.is_ok());
    assert_eq!(stdout(&outs), "True True\n");
    let (_, outs) = exec(&s, "display(1, 'a')");
    let shown: Vec<_> = outs
        .iter()
        .filter_map(|o| match o {
            Output::DisplayData { data, .. } => Some(data["text/plain"].clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        shown,
        vec![serde_json::json!("1"), serde_json::json!("'a'")]
    );
    let (r, _) = exec(&s, "input('name? ')");
    assert_eq!(err(&r).ename, "StdinNotImplementedError");
}

#[test]
fn input_reads_from_the_front_end() {
    let s = Session::start().unwrap();
    let sink = Arc::new(CollectSink::default());
    sink.stdin_lines.lock().unwrap().push_back("Ada".into());
    let mut req = request("n = input('name? ')\nprint('hi', n)");
    req.allow_stdin = true;
    let r = s.execute_blocking(req, Box::new(sink.clone()));
    assert!(r.result.is_ok());
    assert_eq!(stdout(&sink.take()), "hi Ada\n");
}

#[test]
fn is_complete_follows_the_parser() {
    let indent = IsComplete::Incomplete {
        indent: "    ".into(),
    };
    assert_eq!(Session::is_complete("x = 1"), IsComplete::Complete);
    assert_eq!(Session::is_complete("for i in range(3):"), indent);
    assert_eq!(Session::is_complete("def f(x):"), indent);
    assert!(matches!(
        Session::is_complete("x = (1,\n 2"),
        IsComplete::Incomplete { .. }
    ));
    assert!(matches!(
        Session::is_complete("s = '''abc"),
        IsComplete::Incomplete { .. }
    ));
    assert_eq!(Session::is_complete("x = )"), IsComplete::Invalid);
}

/// IPython's `check_complete` answers for statements continued in brackets (a
/// continuation line's indent does not open a block; an indented statement does), as
/// IPython 8/9's TransformerManager gives them.
#[test]
fn is_complete_matches_ipython_for_continued_lines() {
    let incomplete = |n: usize| IsComplete::Incomplete {
        indent: " ".repeat(n),
    };
    let cases = [
        ("x = [1,\n 2]", IsComplete::Complete),
        ("x = (1,\n   2)", IsComplete::Complete),
        ("d = {1:\n  2}", IsComplete::Complete),
        ("f(1,\n  2)", IsComplete::Complete),
        ("print(1,\n      2)\n", IsComplete::Complete),
        ("s = \"\"\"a\n  b\"\"\"", IsComplete::Complete),
        ("x = 1 + \\\n  2", IsComplete::Complete),
        ("def f():\n  return [1,\n 2]", incomplete(1)),
        ("if x:\n    y = [1,\n2]", incomplete(0)),
        ("def f(x):\n  x*2", incomplete(2)),
        ("for i in [1,\n  2]:\n    pass", incomplete(4)),
    ];
    for (code, want) in cases {
        assert_eq!(Session::is_complete(code), want, "{code:?}");
    }
}

#[test]
fn completion_and_inspection() {
    let s = Session::start().unwrap();
    exec(&s, "import math\nmy_value = 3\nclass K:\n    def method_one(self):\n        'Does one thing.'\n        return 1
k = K()");
    let complete = |code: &str, cursor: usize| {
        let (tx, rx) = mpsc::channel();
        s.complete(code.into(), cursor, move |c| {
            let _ = tx.send(c);
        });
        rx.recv().unwrap()
    };
    let c = complete("my_v", 4);
    assert_eq!(c.matches, vec!["my_value".to_string()]);
    assert_eq!((c.cursor_start, c.cursor_end), (0, 4));
    let c = complete("x = math.sq", 11);
    assert_eq!(c.matches, vec!["sqrt".to_string()]);
    assert_eq!((c.cursor_start, c.cursor_end), (9, 11));
    let c = complete("k.meth", 6);
    assert_eq!(c.matches, vec!["method_one".to_string()]);
    // Cursors count code points, not bytes.
    let c = complete("é = pri", 7);
    assert!(c.matches.contains(&"print".to_string()));
    assert_eq!(c.cursor_start, 4);
    let (tx, rx) = mpsc::channel();
    s.inspect("K.method_one".into(), 5, 0, move |b| {
        let _ = tx.send(b);
    });
    let b = rx.recv().unwrap().expect("inspection finds the method");
    let text = b["text/plain"].as_str().unwrap_or("");
    assert!(
        text.contains("method_one(self)") && text.contains("Does one thing."),
        "{text}"
    );
}

#[test]
fn integer_bounds_and_literals() {
    let s = Session::start().unwrap();
    let (r, _) = exec(&s, "x = 123456789012345678901234567890");
    assert_eq!(err(&r).ename, "OverflowError");
    let (r, _) = exec(&s, "9223372036854775807 * 2");
    assert_eq!(err(&r).ename, "OverflowError");
    let (r, outs) = exec(&s, "print(9223372036854775807, -9223372036854775807 - 1)");
    assert!(r.result.is_ok());
    assert_eq!(stdout(&outs), "9223372036854775807 -9223372036854775808\n");
}

/// IPython 9.18's traceback for a function with every kind of parameter (colours off).
const IPYTHON_TB_PARAMS: &str = "\
---------------------------------------------------------------------------
ZeroDivisionError                         Traceback (most recent call last)
Cell In[1], line 3
      1 def g(a, b=2, *args, c='x', **kw):
      2     return a / 0
----> 3 g(1)

Cell In[1], line 2, in g(a, b, c, *args, **kw)
      1 def g(a, b=2, *args, c='x', **kw):
----> 2     return a / 0

ZeroDivisionError: division by zero";

#[test]
fn traceback_names_every_parameter_and_keeps_the_def_line() {
    let s = Session::start().unwrap();
    let (r, _) = exec(
        &s,
        "def g(a, b=2, *args, c='x', **kw):\n    return a / 0\ng(1)",
    );
    assert_eq!(plain_tb(&err(&r)), IPYTHON_TB_PARAMS);
}

#[test]
fn interrupt_while_a_generator_is_suspended_keeps_it() {
    let s = Session::start().unwrap();
    let (r, _) = exec(
        &s,
        "def nat():\n    n = 0\n    while True:\n        yield n\n        n += 1\ng = nat()\nprint(next(g))",
    );
    assert!(r.result.is_ok());
    let flag = s.interrupt_flag();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let (r, _) = exec(&s, "while True:\n    pass");
    t.join().unwrap();
    assert_eq!(err(&r).ename, "KeyboardInterrupt");
    // The generator, suspended through the interrupt, resumes in a later cell where it
    // stopped, and the recursion depth it shared with its callers is whole again.
    let code = "print(next(g), next(g))\ndef r(n):\n    return 0 if n == 0 else 1 + r(n - 1)\nprint(r(900))";
    let (r, outs) = exec(&s, code);
    assert!(r.result.is_ok(), "{:?}", r.result);
    assert_eq!(stdout(&outs), "1 2\n900\n");
}

#[test]
fn interrupt_inside_a_generator_body_ends_it() {
    let s = Session::start().unwrap();
    let flag = s.interrupt_flag();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let code = "def spin():\n    yield 1\n    while True:\n        pass\ng = spin()\nfor x in g:\n    pass";
    let (r, _) = exec(&s, code);
    t.join().unwrap();
    assert_eq!(err(&r).ename, "KeyboardInterrupt");
    let (r, outs) = exec(&s, "print(next(g, 'over'))");
    assert!(r.result.is_ok(), "{:?}", r.result);
    assert_eq!(stdout(&outs), "over\n");
}

#[test]
fn generators_dropped_while_suspended_unwind_cleanly() {
    let s = Session::start().unwrap();
    // Each loop turn drops the previous generator while it waits at a yield, inside a
    // handler and a delegation, holding values; then a generator that is never resumed
    // again is dropped with the session's names.
    let code = "\
def inner(xs):
    try:
        raise KeyError('k')
    except KeyError:
        yield xs
def outer(i):
    data = [i] * 100
    yield from inner(data)
total = 0
for i in range(5000):
    g = outer(i)
    total += len(next(g))
print(total)
e = (x for x in range(10))
print(next(e))
del g, e
";
    let (r, outs) = exec(&s, code);
    assert!(r.result.is_ok(), "{:?}", r.result);
    assert_eq!(stdout(&outs), "500000\n0\n");
    let (r, outs) = exec(&s, "try:\n    raise ValueError('v')\nexcept ValueError:\n    g = outer(1)\n    next(g)\n    raise");
    assert_eq!(err(&r).ename, "ValueError");
    let (r, outs2) = exec(&s, "print(len(next(outer(2))))");
    assert!(r.result.is_ok(), "{:?}", r.result);
    assert_eq!(stdout(&outs2), "100\n");
    drop(outs);
}
