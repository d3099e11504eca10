//! Where CUDA libraries live besides the dynamic loader's own path: the usual system
//! folders, `LD_LIBRARY_PATH`, and Python environments, whose `nvidia-*` wheels (installed
//! with PyTorch, for instance) put `libcublas.so.12`, `libnvrtc.so.12` and `libnccl.so.2`
//! under `site-packages/nvidia/<package>/lib` (CUDA 13 wheels: `nvidia/cu13/lib`).
//!
//! cudarc opens libraries by name only. Opening a wheel's library by full path first makes a
//! later open by name succeed, because the dynamic loader matches a requested name against
//! the SONAME of every library already loaded; the handles are kept for the whole process.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use libloading::Library;

/// Python `lib` folders that may hold `python3.X/site-packages`.
fn python_prefixes() -> Vec<PathBuf> {
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(p) = std::env::var_os(var) {
            prefixes.push(PathBuf::from(p).join("lib"));
        }
    }
    // The Python first on PATH may live in a venv that is not activated (VIRTUAL_ENV unset),
    // e.g. /opt/torch/.venv/bin/python3: its prefix is the folder above `bin`.
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("python3").exists() {
                if let Some(prefix) = dir.parent() {
                    prefixes.push(prefix.join("lib"));
                }
            }
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        prefixes.push(PathBuf::from(home).join(".local/lib"));
    }
    for p in ["/usr/local/lib", "/usr/lib", "/opt/conda/lib"] {
        prefixes.push(PathBuf::from(p));
    }
    prefixes
}

/// Every `site-packages/nvidia` (and `dist-packages/nvidia`) folder found.
fn nvidia_wheel_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for prefix in python_prefixes() {
        let Ok(entries) = std::fs::read_dir(&prefix) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with("python3") {
                for site in ["site-packages", "dist-packages"] {
                    let root = e.path().join(site).join("nvidia");
                    if root.is_dir() {
                        roots.push(root);
                    }
                }
            }
        }
    }
    roots
}

/// Folders to search for a library shipped by the wheel folder `package` (e.g. `nccl`,
/// `cublas`, `cuda_nvrtc`): `LD_LIBRARY_PATH`, system folders, then the wheels.
pub fn candidate_dirs(package: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    for d in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
        "/usr/local/cuda/lib64",
        "/usr/local/nccl/lib",
        "/opt/conda/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    for root in nvidia_wheel_roots() {
        dirs.push(root.join(package).join("lib"));
        dirs.push(root.join("cu13/lib"));
        dirs.push(root.join("cu12/lib"));
    }
    dirs
}

/// Opens a library by name or path; `None` when it cannot be loaded.
pub fn open(name: &Path) -> Option<Library> {
    // SAFETY: loading a CUDA library runs its initialisers, which only set up its own state.
    unsafe { Library::new(name) }.ok()
}

/// Finds the first of `files` in `candidate_dirs(package)` that loads, and keeps it loaded
/// for the rest of the process, so that cudarc's later open by SONAME finds it.
pub fn preload(package: &str, files: &[&str]) -> Option<PathBuf> {
    static KEPT: OnceLock<Mutex<Vec<Library>>> = OnceLock::new();
    for dir in candidate_dirs(package) {
        for f in files {
            let p = dir.join(f);
            if p.is_file() {
                if let Some(lib) = open(&p) {
                    let kept = KEPT.get_or_init(|| Mutex::new(Vec::new()));
                    kept.lock().unwrap_or_else(|e| e.into_inner()).push(lib);
                    return Some(p);
                }
            }
        }
    }
    None
}
