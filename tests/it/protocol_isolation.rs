//! The protocol's side of the architecture invariants: `src/protocol` imports nothing of
//! the language or the engine, and no other module under `src/` names ZeroMQ, HMAC or SHA-2.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn protocol_stays_apart_from_language_and_engine() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&root, &mut files);
    let forbidden_in_protocol = [
        "lang",
        "bindings",
        "keras",
        "distribute",
        "tensor",
        "device",
    ];
    let protocol_only = ["zeromq", "hmac", "sha2"];
    let mut broken = vec![];
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let in_protocol = rel.starts_with("protocol/");
        for line in text.lines().map(str::trim) {
            if line.starts_with("//") {
                continue;
            }
            if in_protocol {
                for m in forbidden_in_protocol {
                    if line.contains(&format!("crate::{m}::"))
                        || line.contains(&format!("crate::{m};"))
                    {
                        broken.push(format!("{rel}: {line}"));
                    }
                }
            } else {
                for c in protocol_only {
                    if line.contains(&format!("{c}::")) && line.starts_with("use ") {
                        broken.push(format!("{rel}: {line}"));
                    }
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "architecture invariants broken:\n{}",
        broken.join("\n")
    );
}
