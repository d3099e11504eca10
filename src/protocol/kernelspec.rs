//! Installs and removes the Jupyter kernelspec `mirror`: a `kernel.json` whose argv runs
//! this binary, and the logos from `kernelspec/`, embedded at build time.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::ProtocolError;

pub const KERNEL_NAME: &str = "mirror";
pub const DISPLAY_NAME: &str = "Mirror (Keras, multi-GPU)";

const LOGOS: [(&str, &[u8]); 3] = [
    (
        "logo-32x32.png",
        include_bytes!("../../kernelspec/logo-32x32.png"),
    ),
    (
        "logo-64x64.png",
        include_bytes!("../../kernelspec/logo-64x64.png"),
    ),
    (
        "logo-svg.svg",
        include_bytes!("../../kernelspec/logo-svg.svg"),
    ),
];

/// Where Jupyter looks for kernels under a location choice.
#[derive(Debug, Clone)]
pub enum Location {
    /// The user's Jupyter data dir: `$JUPYTER_DATA_DIR`, else `~/.local/share/jupyter`.
    User,
    /// The active Python environment: `$VIRTUAL_ENV`, else `python3`'s `sys.prefix`.
    SysPrefix,
    /// `PREFIX/share/jupyter`.
    Prefix(PathBuf),
}

fn err(msg: impl Into<String>) -> ProtocolError {
    ProtocolError::Kernelspec(msg.into())
}

fn sys_prefix() -> Result<PathBuf, ProtocolError> {
    if let Some(v) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(v));
    }
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.prefix)"])
        .output()
        .map_err(|e| err(format!("cannot run python3 to find sys.prefix: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || text.is_empty() {
        return Err(err("python3 did not report sys.prefix"));
    }
    Ok(PathBuf::from(text))
}

/// The `kernels/mirror` folder for a location.
pub fn kernel_dir(location: &Location) -> Result<PathBuf, ProtocolError> {
    let data = match location {
        Location::User => match std::env::var_os("JUPYTER_DATA_DIR").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => {
                let home = std::env::var_os("HOME").ok_or_else(|| err("HOME is not set"))?;
                if cfg!(target_os = "macos") {
                    Path::new(&home).join("Library/Jupyter")
                } else {
                    match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
                        Some(x) => Path::new(&x).join("jupyter"),
                        None => Path::new(&home).join(".local/share/jupyter"),
                    }
                }
            }
        },
        Location::SysPrefix => sys_prefix()?.join("share/jupyter"),
        Location::Prefix(p) => p.join("share/jupyter"),
    };
    Ok(data.join("kernels").join(KERNEL_NAME))
}

/// The `kernel.json` text for a binary at `exe`.
pub fn kernel_json(exe: &Path, logical_cpus: Option<u32>) -> serde_json::Value {
    let mut spec = json!({
        "argv": [exe.to_string_lossy(), "kernel", "--connection-file", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "python",
        "interrupt_mode": "message",
        "metadata": {"debugger": false},
    });
    if let Some(n) = logical_cpus {
        spec["env"] = json!({ "MIRROR_LOGICAL_CPUS": n.to_string() });
    }
    spec
}

/// Writes the kernelspec; returns the folder it wrote.
pub fn install(location: &Location, logical_cpus: Option<u32>) -> Result<PathBuf, ProtocolError> {
    let dir = kernel_dir(location)?;
    let exe = std::env::current_exe()?;
    let exe = exe.canonicalize().unwrap_or(exe);
    std::fs::create_dir_all(&dir)?;
    let text = serde_json::to_string_pretty(&kernel_json(&exe, logical_cpus))?;
    std::fs::write(dir.join("kernel.json"), text + "\n")?;
    for (name, bytes) in LOGOS {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(dir)
}

/// Removes the kernelspec; returns the folder removed, or `None` if there was none.
pub fn uninstall(location: &Location) -> Result<Option<PathBuf>, ProtocolError> {
    let dir = kernel_dir(location)?;
    if !dir.exists() {
        return Ok(None);
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(Some(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_json_runs_this_binary_with_message_interrupts() {
        let spec = kernel_json(Path::new("/opt/bin/mirror-kernel"), Some(4));
        assert_eq!(spec["argv"][0], "/opt/bin/mirror-kernel");
        assert_eq!(spec["argv"][3], "{connection_file}");
        assert_eq!(spec["interrupt_mode"], "message");
        assert_eq!(spec["env"]["MIRROR_LOGICAL_CPUS"], "4");
        assert!(kernel_json(Path::new("x"), None).get("env").is_none());
    }

    #[test]
    fn prefix_install_writes_spec_and_logos() {
        let root = std::env::temp_dir().join(format!("mirror-spec-{}", uuid::Uuid::new_v4()));
        let dir = install(&Location::Prefix(root.clone()), None).unwrap();
        assert_eq!(dir, root.join("share/jupyter/kernels/mirror"));
        assert!(dir.join("kernel.json").is_file());
        assert!(dir.join("logo-64x64.png").is_file());
        assert_eq!(
            uninstall(&Location::Prefix(root.clone())).unwrap(),
            Some(dir)
        );
        let _ = std::fs::remove_dir_all(root);
    }
}
