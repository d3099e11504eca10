//! Architecture invariants of DESIGN.md, checked by reading the source: which module may
//! name which other module, and which modules may use ZeroMQ, the HMAC crates or cudarc.
//! A violation fails with the file and line, so a reviewer sees exactly what broke.

use std::fs;
use std::path::{Path, PathBuf};

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

/// Lines of code (not comments) that name `needle` as a path segment.
fn offending_lines(text: &str, needles: &[String]) -> Vec<(usize, String)> {
    let mut hits = vec![];
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if needles.iter().any(|n| {
            code.match_indices(n.as_str()).any(|(at, _)| {
                let after = code[at + n.len()..].chars().next();
                !matches!(after, Some(c) if c.is_alphanumeric() || c == '_')
            })
        }) {
            hits.push((i + 1, line.trim().to_string()));
        }
    }
    hits
}

fn check(
    forbidden_for: &[&str],
    names: &[&str],
    what: &str,
    file_filter: impl Fn(&Path) -> bool,
) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    let needles: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut errors = vec![];
    for f in files {
        let m = module_of(&src, &f);
        if !forbidden_for.contains(&m.as_str()) || !file_filter(&f) {
            continue;
        }
        let text = fs::read_to_string(&f).unwrap_or_default();
        for (line, code) in offending_lines(&text, &needles) {
            errors.push(format!("{}:{line}: {what}: {code}", f.display()));
        }
    }
    errors
}

#[test]
fn protocol_does_not_know_the_language_or_the_engine() {
    let names = [
        "crate::lang",
        "crate::bindings",
        "crate::keras",
        "crate::distribute",
        "crate::tensor",
        "crate::device",
    ];
    let errors = check(&["protocol"], &names, "protocol imports", |_| true);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn lang_does_not_know_the_protocol() {
    let errors = check(&["lang"], &["crate::protocol"], "lang imports", |_| true);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn engine_is_a_plain_library() {
    let names = ["crate::lang", "crate::bindings", "crate::protocol"];
    let errors = check(
        &["keras", "distribute", "tensor", "device"],
        &names,
        "engine imports",
        |_| true,
    );
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn only_device_cuda_knows_cudarc() {
    let all = [
        "bindings",
        "device",
        "display",
        "distribute",
        "keras",
        "lang",
        "lib",
        "main",
        "protocol",
        "runner",
        "session",
        "tensor",
    ];
    let errors = check(&all, &["cudarc"], "uses cudarc", |f| {
        !f.components().any(|c| c.as_os_str() == "cuda")
    });
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn only_protocol_knows_zeromq_and_signing() {
    let all = [
        "bindings",
        "device",
        "display",
        "distribute",
        "keras",
        "lang",
        "lib",
        "main",
        "runner",
        "session",
        "tensor",
    ];
    let names = ["zeromq", "hmac", "sha2"];
    let errors = check(&all, &names, "uses a protocol crate", |_| true);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_scanner_sees_a_violation() {
    // The checks above pass vacuously if the scanner never matches; prove it matches.
    let hits = offending_lines(
        "use crate::lang::Value;\n// crate::lang in a comment\nlet x = crate::language;",
        &["crate::lang".to_string()],
    );
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].0, 1);
}
