//! The architecture invariants of ARCHITECTURE.md, checked by reading the source: every
//! top-level module lives on a floor, and a module may name only modules on floors below
//! its own (so no two modules import each other, directly or through a third); the
//! protocol knows neither the language nor the engine; the engine is a plain library; and
//! only the modules that own them use cudarc, ZeroMQ and the signing crates. A violation
//! fails with the file and line, so a reviewer sees exactly what broke.

use std::fs;
use std::path::{Path, PathBuf};

/// The floors, from the bottom. A module may import the modules of lower floors only;
/// modules that share a floor may not import each other. `lib` and `main` stand on top.
const FLOORS: &[&[&str]] = &[
    &["device", "memory", "collective"],
    &["tensor"],
    &["ops"],
    &["keras"],
    &["distribute"],
    &["display"],
    &["cell"],
    &["lang"],
    &["bindings"],
    &["session"],
    &["protocol", "runner", "bench"],
    &["lib", "main"],
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a source file belongs to (`src/keras/model.rs` → `keras`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

fn ident_at(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// Every top-level module that a source text names through `crate::`, with its 1-based
/// line: plain paths (`crate::lang::Value`) and grouped imports (`use crate::{lang::Value,
/// tensor}`, across lines) alike. Line comments are ignored.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = vec![];
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if matches!(before, Some(c) if c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The first segment of every item of the group, at the group's own depth.
            let mut depth = 0usize;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        if depth == 0 {
                            let name = ident_at(&group[i..]);
                            found.push((line_of(at + "crate::{".len() + i), name.to_string()));
                        }
                    }
                    _ => {}
                }
            }
        } else {
            found.push((line_of(at), ident_at(rest).to_string()));
        }
    }
    found
}

/// Each source file with its top-level module and text.
fn sources() -> Vec<(PathBuf, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let m = module_of(&src, &f);
            let text = fs::read_to_string(&f).unwrap_or_default();
            (f, m, text)
        })
        .collect()
}

/// The imports in `text` (of module `module`) that break the floors, as messages.
fn upward_imports(file: &Path, module: &str, text: &str) -> Vec<String> {
    let Some(own) = floor_of(module) else {
        return vec![format!(
            "{}: module `{module}` has no floor in tests/it/architecture.rs",
            file.display()
        )];
    };
    let mut errors = vec![];
    for (line, target) in crate_paths(text) {
        if target == module {
            continue;
        }
        match floor_of(&target) {
            Some(f) if f < own => {}
            Some(f) => errors.push(format!(
                "{}:{line}: `{module}` (floor {own}) imports `{target}` (floor {f}): every \
                 arrow must point down",
                file.display()
            )),
            // Items of the crate root (macros exported with #[macro_export]) are not modules.
            None => {}
        }
    }
    errors
}

#[test]
fn every_arrow_points_down() {
    let mut errors = vec![];
    for (file, module, text) in sources() {
        errors.extend(upward_imports(&file, &module, &text));
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Modules that `module` must never name, though some of them stand lower: the protocol
/// stays testable without the language or the engine, and the engine stays a plain library
/// that a Rust program could use without Jupyter or Python.
fn forbidden_for(module: &str) -> &'static [&'static str] {
    match module {
        "protocol" => &[
            "lang",
            "bindings",
            "keras",
            "distribute",
            "ops",
            "tensor",
            "device",
        ],
        "lang" => &["protocol", "keras", "distribute", "ops", "tensor", "device"],
        "device" | "collective" | "tensor" | "ops" | "keras" | "distribute" | "display" => {
            &["lang", "bindings", "protocol", "session", "cell"]
        }
        _ => &[],
    }
}

#[test]
fn the_protocol_and_the_engine_keep_apart() {
    let mut errors = vec![];
    for (file, module, text) in sources() {
        for (line, target) in crate_paths(&text) {
            if forbidden_for(&module).contains(&target.as_str()) {
                errors.push(format!(
                    "{}:{line}: `{module}` must not import `{target}`",
                    file.display()
                ));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Lines of code (not comments) that name an external crate `name` as a path.
fn uses_crate(text: &str, name: &str) -> Vec<usize> {
    let mut hits = vec![];
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let named = code.match_indices(name).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            let after = code[at + name.len()..].chars().next();
            !matches!(before, Some(c) if c.is_alphanumeric() || c == '_' || c == ':')
                && matches!(after, Some(':'))
        });
        if named {
            hits.push(i + 1);
        }
    }
    hits
}

/// Whether `file` lies under the folders `path` (consecutive components, e.g. lang/syntax).
fn in_folder(file: &Path, path: &[&str]) -> bool {
    let parts: Vec<_> = file.components().map(|c| c.as_os_str()).collect();
    parts
        .windows(path.len())
        .any(|w| w.iter().zip(path).all(|(a, b)| **a == **b))
}

/// Whether a file (of a top-level module) may use an external crate.
type Owner = fn(&Path, &str) -> bool;

#[test]
fn external_crates_stay_with_their_owners() {
    // cudarc only in device/cuda; ZeroMQ and the signing crates only in the protocol; the
    // Python parser only in lang/syntax.
    let owners: &[(&str, Owner)] = &[
        ("cudarc", |f, _| {
            f.components().any(|c| c.as_os_str() == "cuda")
        }),
        ("zeromq", |_, m| m == "protocol"),
        ("hmac", |_, m| m == "protocol"),
        ("sha2", |_, m| m == "protocol"),
        // The parser's tree and errors are converted at once in lang/syntax, so a parser
        // upgrade touches that folder alone.
        ("ruff_python_parser", |f, _| {
            in_folder(f, &["lang", "syntax"])
        }),
        ("ruff_python_ast", |f, _| in_folder(f, &["lang", "syntax"])),
        ("ruff_text_size", |f, _| in_folder(f, &["lang", "syntax"])),
    ];
    let mut errors = vec![];
    for (file, module, text) in sources() {
        for (name, allowed) in owners {
            if allowed(&file, &module) {
                continue;
            }
            for line in uses_crate(&text, name) {
                errors.push(format!("{}:{line}: `{module}` uses {name}", file.display()));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_scanner_sees_violations() {
    // The checks above pass vacuously if the scanner never matches; prove that it does.
    let text =
        "use crate::lang::Value;\n// crate::bindings in a comment\nlet x = crate::language;\n\
                use crate::{\n    display::MimeBundle,\n    session::{Session, Output},\n};\n";
    let names: Vec<(usize, String)> = crate_paths(text);
    assert_eq!(
        names,
        vec![
            (1, "lang".to_string()),
            (3, "language".to_string()),
            (5, "display".to_string()),
            (6, "session".to_string()),
        ]
    );
    let errors = upward_imports(Path::new("src/tensor/x.rs"), "tensor", text);
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("`tensor` (floor 1) imports `lang`"));
    assert!(
        upward_imports(Path::new("src/lang/x.rs"), "lang", "use crate::display::X;").is_empty()
    );
    assert_eq!(
        uses_crate("use cudarc::driver;\nlet a = mycudarc::x;", "cudarc"),
        vec![1]
    );
}
