//! Runtime choice of the widest vector instructions this CPU has. The host build targets
//! baseline x86-64 (SSE2); a loop handed to [`vectorized`] is compiled again with AVX2 and
//! with AVX-512 enabled and the best one runs. The loops stay plain Rust: the same source,
//! with only correctly rounded operations and no fused multiply-add contraction (Rust never
//! contracts), gives the same bits at every width, so a result never depends on the CPU a
//! replica runs on.

/// The widest vector extension available, detected once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Baseline,
    Avx2,
    Avx512,
}

/// What this CPU offers.
pub fn level() -> Level {
    static LEVEL: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Level::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Level::Avx2;
            }
        }
        Level::Baseline
    })
}

/// Runs `f` compiled for the widest vectors this CPU has. `f` should be a closure marked
/// `#[inline(always)]` whose loops call only inlined code, so that it is compiled inside the
/// wrapper that enables the wider instructions.
#[inline(always)]
pub fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        match level() {
            // SAFETY: `level` checked that this CPU has these extensions.
            Level::Avx512 => return unsafe { avx512(f) },
            // SAFETY: as above.
            Level::Avx2 => return unsafe { avx2(f) },
            Level::Baseline => {}
        }
    }
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")]
unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
