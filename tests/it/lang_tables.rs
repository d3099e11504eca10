//! One table per type: every method `dir()` advertises on a built-in value or an ndarray
//! (and every name of the numpy modules) works, and answers as CPython 3.11 / numpy 2.4
//! do for the same call on the same receiver; no name answers `hasattr` without being
//! listed. The reference is tests/fixtures/tables/tables.json (gen_tables.py beside it).

use mirror_kernel::session::Session;
use serde_json::Value as Json;

use crate::common::cells::{ok, run};

fn fixture() -> Json {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tables/tables.json"
    ))
    .expect("fixture is committed");
    serde_json::from_str(&text).expect("valid JSON")
}

/// The public names the kernel's `dir()` lists for an expression.
fn listed(s: &Session, expr: &str) -> Vec<String> {
    ok(
        s,
        &format!("for _n in dir({expr}):\n    if not _n.startswith('_'):\n        print(_n)"),
    )
    .lines()
    .map(str::to_string)
    .collect()
}

fn has(s: &Session, expr: &str, name: &str) -> bool {
    ok(s, &format!("print(hasattr({expr}, {name:?}))")).trim() == "True"
}

#[test]
fn every_listed_method_works_as_cpython_and_numpy_answer() {
    let f = fixture();
    let s = Session::start().expect("session starts");
    ok(&s, "import numpy as np");
    let mut failures = Vec::new();
    let types = f["types"].as_object().expect("types");
    for (ty, t) in types {
        let expr = t["receiver"].as_str().unwrap_or_default();
        let cases = t["methods"].as_array().expect("methods");
        let names = listed(&s, expr);
        if names.is_empty() {
            failures.push(format!("{ty}: dir() lists no methods"));
        }
        for name in &names {
            let Some(case) = cases.iter().find(|c| c["name"] == name.as_str()) else {
                failures.push(format!(
                    "{ty}.{name}: listed, but CPython/numpy has no such name"
                ));
                continue;
            };
            if !has(&s, expr, name) {
                failures.push(format!("{ty}.{name}: listed by dir() but hasattr is False"));
            }
            let code = match (case["args"].as_str(), case["repr"].as_str()) {
                (Some(args), Some(_)) => {
                    format!("_v = {expr}\n_r = _v.{name}(*{args})\nprint(repr((_r, _v)))")
                }
                (None, Some(_)) => format!("print(repr(({expr}).{name}))"),
                // No simple call works in CPython either: the attribute must still exist.
                _ => format!("getattr({expr}, {name:?})"),
            };
            let shown = run(&s, &code);
            let want = case["repr"].as_str().map(|r| format!("{r}\n"));
            let bad = match (&shown.error, want) {
                (Some(e), _) => Some(format!("raised {e:?}")),
                (None, Some(w)) if shown.stdout != w => {
                    Some(format!("printed {:?}, want {w:?}", shown.stdout))
                }
                _ => None,
            };
            if let Some(b) = bad {
                failures.push(format!("{ty}.{name}: {b}\n{code}"));
            }
        }
        // A name the kernel does not list must not answer hasattr either.
        for case in cases {
            let name = case["name"].as_str().unwrap_or_default();
            if !names.iter().any(|n| n == name) && has(&s, expr, name) {
                failures.push(format!("{ty}.{name}: hasattr is True but dir() omits it"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_listed_module_name_is_numpys_and_resolves() {
    let f = fixture();
    let s = Session::start().expect("session starts");
    ok(&s, "import numpy as np");
    let mut failures = Vec::new();
    for (module, real) in f["modules"].as_object().expect("modules") {
        let real: Vec<&str> = real
            .as_array()
            .expect("names")
            .iter()
            .filter_map(|n| n.as_str())
            .collect();
        let names = listed(&s, module);
        if names.is_empty() {
            failures.push(format!("{module}: dir() lists nothing"));
        }
        for name in &names {
            if !real.contains(&name.as_str()) {
                failures.push(format!("{module}.{name}: not a name numpy has"));
            }
            let shown = run(&s, &format!("getattr({module}, {name:?})"));
            if let Some(e) = shown.error {
                failures.push(format!("{module}.{name}: listed but getattr raised {e:?}"));
            }
        }
        for name in real {
            if !names.iter().any(|n| n == name) && has(&s, module, name) {
                failures.push(format!(
                    "{module}.{name}: hasattr is True but dir() omits it"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Methods of built-in types used as plain functions, as CPython allows.
#[test]
fn builtin_methods_work_unbound() {
    let s = Session::start().expect("session starts");
    let out = ok(
        &s,
        "words = ['banana', 'Apple', 'cherry']\nprint(sorted(words, key=str.lower))\n\
         xs = [1]\nlist.append(xs, 2)\nprint(xs, str.upper('a'), dict.get({'k': 1}, 'k'))",
    );
    assert_eq!(out, "['Apple', 'banana', 'cherry']\n[1, 2] A 1\n");
    let shown = run(&s, "str.lower(5)");
    assert_eq!(
        shown.error,
        Some((
            "TypeError".into(),
            "descriptor 'lower' for 'str' objects doesn't apply to a 'int' object".into()
        ))
    );
    let shown = run(&s, "str.lower()");
    assert_eq!(
        shown.error,
        Some((
            "TypeError".into(),
            "unbound method str.lower() needs an argument".into()
        ))
    );
}
