//! The distribution layer is a plain library: no file under src/distribute may use the
//! language, the bindings or the protocol, nor cudarc (only device/cuda may).

use std::path::Path;

#[test]
fn distribute_imports_no_language_bindings_protocol_or_cudarc() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/distribute");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for banned in [
                "crate::lang",
                "crate::bindings",
                "crate::protocol",
                "crate::session",
                "cudarc::",
            ] {
                assert!(
                    !code.contains(banned),
                    "{}:{}: uses {banned}",
                    path.display(),
                    n + 1
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} files checked");
}
