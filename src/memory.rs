//! The memory bound: the most bytes one allocation that a cell sizes may take, and whether a
//! request fits it now. Rust aborts the process when an allocation fails, and an allocation
//! the machine cannot back wakes the kernel's out-of-memory killer later, so every request a
//! cell sizes is held against this bound before it is tried: numpy and tf arrays (through
//! `tensor::check_alloc`, in numpy's words), the interpreter's strings and containers
//! (`lang`'s `memory`, CPython's `MemoryError`) and Keras's weights (TensorFlow's
//! `ResourceExhaustedError`). A leaf at the bottom floor, so that the engine and the
//! language both reach the one figure; it allocates nothing itself.

use std::sync::OnceLock;

/// The environment variable that sets the bound: bytes, or a number with a binary suffix
/// (`512M`, `2G`, `1T`). Tests and shared machines set it lower than the default.
pub const LIMIT_VARIABLE: &str = "MIRROR_MEMORY_LIMIT";

/// Requests from this size up are also checked against what the system has available at
/// that moment: a large allocation is rare and slow to fill, so reading `/proc/meminfo`
/// costs nothing that shows, while a small one is never the allocation that kills.
const CHECK_AVAILABLE_FROM: u128 = 64 << 20;

/// The most bytes one allocation may take: `MIRROR_MEMORY_LIMIT` when set, else half of
/// the machine's memory (or of the control group's limit, when that is lower), 8 GiB when
/// neither can be read. Read once per process.
pub fn memory_limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var(LIMIT_VARIABLE)
            .ok()
            .and_then(|s| parse_size(&s))
            .unwrap_or_else(|| match machine_memory() {
                Some(total) => total / 2,
                None => 8 << 30,
            })
    })
}

/// Whether `bytes` may be allocated now: within [`memory_limit`], and for a large request
/// also within the memory the system has available.
pub fn fits(bytes: u128) -> bool {
    if bytes > memory_limit() as u128 {
        return false;
    }
    if bytes < CHECK_AVAILABLE_FROM {
        return true;
    }
    match available_memory() {
        Some(free) => bytes <= free as u128,
        None => true,
    }
}

/// A byte count as numpy words it: binary units, three significant digits (`7.28 TiB`).
pub fn size_string(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let bits = 128 - bytes.leading_zeros() as usize;
    let mut unit = (bits.saturating_sub(1)).max(1) / 10;
    unit = unit.min(UNITS.len() - 1);
    let mut n = bytes as f64 / (1u128 << (unit * 10)) as f64;
    if n.round() == 1024.0 && unit + 1 < UNITS.len() {
        unit += 1;
        n /= 1024.0;
    }
    if unit == 0 {
        return format!("{} bytes", n as u64);
    }
    let digits = (2 - n.log10().floor() as i32).max(0) as usize;
    format!("{n:.digits$} {}", UNITS[unit])
}

/// `4096`, `512K`, `64M`, `2G`, `1T` (binary units; a trailing `B` or `iB` is allowed).
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 10),
        'M' | 'm' => (&t[..t.len() - 1], 20),
        'G' | 'g' => (&t[..t.len() - 1], 30),
        'T' | 't' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(1u64 << shift).filter(|&b| b > 0)
}

/// A field of `/proc/meminfo` in bytes.
fn meminfo(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// The control group's memory limit (cgroup v2, then v1), when one is set.
fn cgroup_limit() -> Option<u64> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let v2 = read("/sys/fs/cgroup/memory.max").and_then(|s| s.trim().parse::<u64>().ok());
    // cgroup v1 reports "no limit" as a number near 2^63.
    let v1 = read("/sys/fs/cgroup/memory/memory.limit_in_bytes")
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|&b| b < 1 << 60);
    v2.or(v1)
}

fn machine_memory() -> Option<u64> {
    match (meminfo("MemTotal:"), cgroup_limit()) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

/// What the system could hand out now: `MemAvailable`, less when the control group has
/// less room left.
fn available_memory() -> Option<u64> {
    let system = meminfo("MemAvailable:");
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    let group = match (
        read("/sys/fs/cgroup/memory.max"),
        read("/sys/fs/cgroup/memory.current"),
    ) {
        (Some(max), Some(used)) => Some(max.saturating_sub(used)),
        _ => None,
    };
    match (system, group) {
        (Some(s), Some(g)) => Some(s.min(g)),
        (s, g) => s.or(g),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("1T"), Some(1 << 40));
        assert_eq!(parse_size(" 3g "), Some(3 << 30));
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("99999999999T"), None);
    }

    #[test]
    fn the_bound_refuses_what_no_machine_holds() {
        assert!(fits(0));
        assert!(fits(1 << 20));
        assert!(!fits(1 << 62));
        assert!(!fits(u128::MAX));
    }

    #[test]
    fn sizes_are_worded_as_numpy_words_them() {
        assert_eq!(size_string(8 * 1_000_000_000_000), "7.28 TiB");
        assert_eq!(size_string(100), "100 bytes");
        assert_eq!(size_string(1 << 30), "1.00 GiB");
    }
}
