//! Every classroom notebook under `notebooks/` runs start to finish without an error
//! through the notebook runner, and each code cell that plots shows a PNG.

use std::path::Path;

use mirror_kernel::runner::run_notebook;
use serde_json::Value;

#[test]
fn classroom_notebooks_run_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("notebooks");
    let out_dir = std::env::temp_dir().join(format!("mk-notebooks-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    let mut ran = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("ipynb") {
            continue;
        }
        let out = out_dir.join(path.file_name().unwrap());
        let timeout = Some(std::time::Duration::from_secs(600));
        if let Err(e) = run_notebook(&path, Some(&out), false, timeout, false) {
            panic!("{}: {e}", path.display());
        }
        let nb: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        for cell in nb["cells"].as_array().unwrap() {
            let src = cell["source"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| {
                    cell["source"]
                        .as_array()
                        .map(|l| l.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default()
                });
            if src.contains("plt.show()") {
                let has_png = cell["outputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|o| o["data"].get("image/png").is_some());
                assert!(
                    has_png,
                    "{}: a plotting cell shows no image:\n{src}",
                    path.display()
                );
            }
        }
        ran += 1;
    }
    assert!(ran > 0, "no notebooks found");
    std::fs::remove_dir_all(&out_dir).ok();
}
