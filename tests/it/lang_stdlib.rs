//! The standard-library corpus: every cell of tests/fixtures/lang/stdlib/*.py runs through
//! a real session, one session per file, and what it prints (stdout, stderr) and the error
//! it ends in (type name and message) must equal what CPython 3.11 printed for the same
//! cells (tests/fixtures/lang/gen_stdlib.py wrote the JSON beside each file).

use mirror_kernel::session::Session;

use crate::common::cells::run;

/// The differences between one fixture file's cells and what the kernel printed.
fn differences(name: &str) -> (usize, Vec<String>) {
    let path = format!(
        "{}/tests/fixtures/lang/stdlib/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cells: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cells = cells.as_array().cloned().unwrap_or_default();
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let mut failures = vec![];
    for (i, cell) in cells.iter().enumerate() {
        let code = cell["code"].as_str().unwrap_or("");
        let shown = run(&session, code);
        let want_err = cell["error"].as_array().map(|e| {
            (
                e[0].as_str().unwrap_or("").to_string(),
                e[1].as_str().unwrap_or("").to_string(),
            )
        });
        let (want_out, want_stderr) = (
            cell["stdout"].as_str().unwrap_or(""),
            cell["stderr"].as_str().unwrap_or(""),
        );
        if shown.stdout != want_out || shown.stderr != want_stderr || shown.error != want_err {
            failures.push(format!(
                "{name}[{i}]:\n{code}\n  want out={want_out:?} err={want_stderr:?} error={want_err:?}\n  got  out={:?} err={:?} error={:?}",
                shown.stdout, shown.stderr, shown.error
            ));
        }
    }
    (cells.len(), failures)
}

fn matches_cpython(name: &str, at_least: usize) {
    let (n, failures) = differences(name);
    assert!(
        n >= at_least,
        "{name}: {n} cells, expected {at_least} or more"
    );
    assert!(
        failures.is_empty(),
        "{} of {n} cells differ from CPython:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn json_matches_cpython() {
    matches_cpython("json", 20);
}

#[test]
fn files_shutil_tempfile_glob_match_cpython() {
    matches_cpython("files", 20);
}

#[test]
fn string_and_itertools_match_cpython() {
    matches_cpython("iter", 20);
}

#[test]
fn operator_and_functools_match_cpython() {
    matches_cpython("func", 20);
}

#[test]
fn collections_match_cpython() {
    matches_cpython("collections", 20);
}

#[test]
fn math_additions_match_cpython() {
    matches_cpython("math", 10);
}

/// `zip`, `map`, `filter`, `enumerate`, `any` and `all` pull lazily, so endless
/// `itertools` sources work under them; `zip(strict=True)` raises CPython's errors.
#[test]
fn lazy_builtins_match_cpython() {
    matches_cpython("lazy_builtins", 12);
}

/// `Counter`, `defaultdict` and `OrderedDict` are dicts to the rest of the language, with
/// CPython's `__missing__`, reprs, methods, multiset arithmetic and errors.
#[test]
fn dict_subclasses_match_cpython() {
    matches_cpython("dicts", 25);
}

/// `re`: matching, groups, `findall`/`finditer`/`sub`/`split` with CPython 3.7+'s empty
/// matches, replacement templates, flags, and `re.error` texts with their positions.
#[test]
fn re_matches_cpython() {
    matches_cpython("re", 25);
}

/// `textwrap`: `wrap`/`fill` with hyphenated and long words, indents, `shorten`,
/// `dedent` and `indent`.
#[test]
fn textwrap_matches_cpython() {
    matches_cpython("textwrap", 10);
}

/// `io.StringIO`: reads, writes over and past the end, lines, `print(file=)`, `with`.
#[test]
fn stringio_matches_cpython() {
    matches_cpython("io", 9);
}

/// `copy.copy` and `copy.deepcopy`: shared references and cycles kept through the memo,
/// tuples of atoms returned as they are, dict subclasses kept, `__copy__`/`__deepcopy__`.
#[test]
fn copy_matches_cpython() {
    matches_cpython("copy", 8);
}

/// `datetime`: dates, datetimes and timedeltas with their reprs, strs, arithmetic and
/// comparisons, `strftime`/`strptime`/`fromisoformat`, and CPython's range errors.
#[test]
fn datetime_matches_cpython() {
    matches_cpython("datetime", 15);
}

/// `csv`: writers and readers over `StringIO` and lists of lines, quoting, dialect
/// options, `DictReader`/`DictWriter` with `restval`/`restkey`, and CPython's errors.
#[test]
fn csv_matches_cpython() {
    matches_cpython("csv", 9);
}

/// `pprint`: CPython's `PrettyPrinter` line breaking for dicts, lists, tuples, sets and
/// long strings, with `width`, `indent`, `compact`, `sort_dicts` and `stream`.
#[test]
fn pprint_matches_cpython() {
    matches_cpython("pprint", 7);
}

#[test]
fn typing_matches_cpython() {
    matches_cpython("typing", 17);
}

#[test]
fn generators_match_cpython() {
    matches_cpython("generators", 29);
}

#[test]
fn contextlib_matches_cpython() {
    matches_cpython("contextlib", 21);
}

#[test]
fn statistics_matches_cpython() {
    matches_cpython("statistics", 22);
}

#[test]
fn logging_matches_cpython() {
    matches_cpython("logging", 10);
}

#[test]
fn dataclasses_match_cpython() {
    matches_cpython("dataclasses", 13);
}

/// Every module the kernel lists as provided imports, and the error for a module it does
/// not provide lists each of them.
#[test]
fn every_provided_module_imports() {
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    for name in mirror_kernel::bindings::provided_modules() {
        let shown = run(&session, &format!("import {name}"));
        assert_eq!(shown.error, None, "import {name}");
    }
    let shown = run(&session, "import nosuchmodule");
    let (kind, text) = shown.error.unwrap_or_default();
    assert_eq!(kind, "ModuleNotFoundError");
    for name in mirror_kernel::bindings::provided_modules() {
        assert!(text.contains(name), "{name} is not listed in: {text}");
    }
}
