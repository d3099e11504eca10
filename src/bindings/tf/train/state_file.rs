//! The `checkpoint` state file beside a run's checkpoints, in TensorFlow's text format (a
//! `CheckpointState` protocol buffer in text form), so `tf.train.latest_checkpoint`, a
//! checkpoint manager and TensorBoard-style tools find the newest checkpoint:
//!
//! ```text
//! model_checkpoint_path: "ckpt-3"
//! all_model_checkpoint_paths: "ckpt-2"
//! all_model_checkpoint_paths: "ckpt-3"
//! all_model_checkpoint_timestamps: 1796143909.5
//! all_model_checkpoint_timestamps: 1796143912.25
//! last_preserved_timestamp: 1796143900.0
//! ```
//!
//! Paths inside the directory are written relative to it, as TensorFlow writes them, and
//! read back joined to it. The file is replaced atomically.

use std::path::Path;

use crate::keras::saving::write_atomic;
use crate::keras::KResult;

/// The state file's name, as TensorFlow names it.
pub const STATE_FILE: &str = "checkpoint";

/// What the state file says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckpointState {
    pub latest: String,
    pub all: Vec<String>,
    pub timestamps: Vec<f64>,
    pub last_preserved: Option<f64>,
}

/// Seconds since the epoch, as TensorFlow's timestamps are.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `path` as the state file in `dir` names it: relative when it lies in `dir`.
fn relative(dir: &str, path: &str) -> String {
    let d = dir.trim_end_matches('/');
    match path.strip_prefix(&format!("{d}/")) {
        Some(rest) if !rest.contains('/') => rest.to_string(),
        _ => path.to_string(),
    }
}

/// A path the state file names, as a path a program opens: joined to `dir` unless absolute.
pub fn resolved(dir: &str, path: &str) -> String {
    if Path::new(path).is_absolute() {
        path.to_string()
    } else {
        Path::new(dir).join(path).display().to_string()
    }
}

/// The text of `s` (paths given as programs name them).
fn text(dir: &str, s: &CheckpointState) -> String {
    let quoted = |p: &str| serde_json::Value::from(relative(dir, p)).to_string();
    let mut out = format!("model_checkpoint_path: {}\n", quoted(&s.latest));
    for p in &s.all {
        out.push_str(&format!("all_model_checkpoint_paths: {}\n", quoted(p)));
    }
    for t in &s.timestamps {
        out.push_str(&format!("all_model_checkpoint_timestamps: {t}\n"));
    }
    if let Some(t) = s.last_preserved {
        out.push_str(&format!("last_preserved_timestamp: {t}\n"));
    }
    out
}

/// Writes the state file of `dir`.
pub fn write_state(dir: &str, s: &CheckpointState) -> KResult<()> {
    write_atomic(&Path::new(dir).join(STATE_FILE), text(dir, s).as_bytes())
}

/// Reads the state file of `dir`, with its paths joined to `dir`; `None` when there is none
/// or it cannot be read as one.
pub fn read_state(dir: &str) -> Option<CheckpointState> {
    let body = std::fs::read_to_string(Path::new(dir).join(STATE_FILE)).ok()?;
    let mut s = CheckpointState::default();
    let mut any = false;
    for line in body.lines() {
        let Some((field, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let path = || serde_json::from_str::<String>(value).ok();
        match field.trim() {
            "model_checkpoint_path" => {
                s.latest = resolved(dir, &path()?);
                any = true;
            }
            "all_model_checkpoint_paths" => s.all.push(resolved(dir, &path()?)),
            "all_model_checkpoint_timestamps" => s.timestamps.push(value.parse().ok()?),
            "last_preserved_timestamp" => s.last_preserved = value.parse().ok(),
            _ => {}
        }
    }
    any.then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_relative_paths() {
        let dir = std::env::temp_dir().join(format!("mk-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let d = dir.display().to_string();
        let s = CheckpointState {
            latest: format!("{d}/ckpt-2"),
            all: vec![format!("{d}/ckpt-1"), format!("{d}/ckpt-2")],
            timestamps: vec![1.5, 2.25],
            last_preserved: Some(1.0),
        };
        write_state(&d, &s).expect("write");
        let body = std::fs::read_to_string(dir.join(STATE_FILE)).expect("read");
        assert!(body.starts_with(
            "model_checkpoint_path: \"ckpt-2\"\nall_model_checkpoint_paths: \"ckpt-1\"\n"
        ));
        assert_eq!(read_state(&d), Some(s));
        assert_eq!(read_state(&format!("{d}/none")), None);
    }
}
