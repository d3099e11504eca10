//! Gloo through the C shim beside this file: a [`GlooContext`] is one rank of a group of
//! processes (or threads) that found each other through a [`Store`], and sums float32 buffers
//! across the group in place, every rank getting the same bits. Every Gloo error comes back as
//! a `String` (the shim catches every C++ exception); a rank that does not arrive or dies makes
//! the others fail once the context's timeout passes.

use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::rendezvous::Store;

#[repr(C)]
struct StoreCallbacks {
    user: *mut c_void,
    set: extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize) -> c_int,
    get: extern "C" fn(*mut c_void, *const c_char, usize, *mut *mut c_char, *mut usize) -> c_int,
    wait: extern "C" fn(*mut c_void, *const *const c_char, *const usize, usize, i64) -> c_int,
}

extern "C" {
    fn mk_gloo_new(
        rank: c_int,
        size: c_int,
        cb: *const StoreCallbacks,
        hostname: *const c_char,
        timeout_ms: i64,
        err: *mut c_char,
        err_len: usize,
    ) -> *mut c_void;
    fn mk_gloo_allreduce_f32(
        handle: *mut c_void,
        data: *mut f32,
        n: usize,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn mk_gloo_barrier(handle: *mut c_void, err: *mut c_char, err_len: usize) -> c_int;
    fn mk_gloo_free(handle: *mut c_void);
}

const ERR_LEN: usize = 1024;

/// The text the shim wrote into `buf`.
fn message(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(buf.get(..end).unwrap_or(&[])).into_owned()
}

/// # Safety
/// `ptr` must point to `len` readable bytes (or be anything when `len` is 0).
unsafe fn text<'a>(ptr: *const c_char, len: usize) -> &'a str {
    if len == 0 || ptr.is_null() {
        return "";
    }
    let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
    std::str::from_utf8(bytes).unwrap_or("")
}

/// The store behind a callback's `user` pointer.
///
/// # Safety
/// `user` must be the `&Arc<dyn Store>` that [`GlooContext::join`] passed, still alive.
unsafe fn store<'a>(user: *mut c_void) -> &'a Arc<dyn Store> {
    &*(user as *const Arc<dyn Store>)
}

extern "C" fn set_cb(
    user: *mut c_void,
    key: *const c_char,
    key_len: usize,
    data: *const c_char,
    data_len: usize,
) -> c_int {
    let done = catch_unwind(AssertUnwindSafe(|| unsafe {
        let value = if data_len == 0 || data.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(data.cast::<u8>(), data_len)
        };
        store(user).set(text(key, key_len), value).is_ok()
    }));
    c_int::from(!matches!(done, Ok(true)))
}

extern "C" fn get_cb(
    user: *mut c_void,
    key: *const c_char,
    key_len: usize,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> c_int {
    let done = catch_unwind(AssertUnwindSafe(|| unsafe {
        let Ok(Some(value)) = store(user).get(text(key, key_len)) else {
            return false;
        };
        // The shim frees this with free(3).
        let buf = libc::malloc(value.len().max(1)).cast::<u8>();
        if buf.is_null() {
            return false;
        }
        std::ptr::copy_nonoverlapping(value.as_ptr(), buf, value.len());
        *out = buf.cast::<c_char>();
        *out_len = value.len();
        true
    }));
    c_int::from(!matches!(done, Ok(true)))
}

extern "C" fn wait_cb(
    user: *mut c_void,
    keys: *const *const c_char,
    key_lens: *const usize,
    n: usize,
    timeout_ms: i64,
) -> c_int {
    let done = catch_unwind(AssertUnwindSafe(|| unsafe {
        let names: Vec<String> = (0..n)
            .map(|i| text(*keys.add(i), *key_lens.add(i)).to_string())
            .collect();
        let timeout = Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0));
        store(user).wait(&names, timeout).is_ok()
    }));
    c_int::from(!matches!(done, Ok(true)))
}

/// One rank of a Gloo group. The context is used by one thread at a time (a mutex guards it).
pub struct GlooContext {
    handle: Mutex<*mut c_void>,
    rank: usize,
    size: usize,
}

// The handle is only touched under its mutex; Gloo's context may move between threads.
unsafe impl Send for GlooContext {}
unsafe impl Sync for GlooContext {}

impl GlooContext {
    /// Joins the group as `rank` of `size`, Gloo's TCP transport bound to `hostname` (this
    /// worker's own address), finding the others through `store`. Returns once every rank has
    /// joined, or an error when `timeout` passes first; `timeout` also bounds every later
    /// collective call, so a rank that dies makes the others fail within it.
    pub fn join(
        rank: usize,
        size: usize,
        store: Arc<dyn Store>,
        hostname: &str,
        timeout: Duration,
    ) -> Result<GlooContext, String> {
        let host = CString::new(hostname).map_err(|_| format!("bad host name {hostname:?}"))?;
        let (r, s) = (
            c_int::try_from(rank).map_err(|e| e.to_string())?,
            c_int::try_from(size).map_err(|e| e.to_string())?,
        );
        let ms = i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX);
        let user: *const Arc<dyn Store> = &store;
        let cb = StoreCallbacks {
            user: user as *mut c_void,
            set: set_cb,
            get: get_cb,
            wait: wait_cb,
        };
        let mut err = [0u8; ERR_LEN];
        // The store outlives the call (it is borrowed here); the shim keeps no pointer to it
        // once the context is connected.
        let handle = unsafe {
            mk_gloo_new(
                r,
                s,
                &cb,
                host.as_ptr(),
                ms,
                err.as_mut_ptr().cast(),
                ERR_LEN,
            )
        };
        if handle.is_null() {
            return Err(message(&err));
        }
        Ok(GlooContext {
            handle: Mutex::new(handle),
            rank,
            size,
        })
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Sums `data` across every rank, in place.
    pub fn all_reduce_sum(&self, data: &mut [f32]) -> Result<(), String> {
        if data.is_empty() {
            return Ok(());
        }
        let handle = self.handle.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = [0u8; ERR_LEN];
        let status = unsafe {
            mk_gloo_allreduce_f32(
                *handle,
                data.as_mut_ptr(),
                data.len(),
                err.as_mut_ptr().cast(),
                ERR_LEN,
            )
        };
        if status == 0 {
            Ok(())
        } else {
            Err(message(&err))
        }
    }

    /// Returns once every rank has called it.
    pub fn barrier(&self) -> Result<(), String> {
        let handle = self.handle.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = [0u8; ERR_LEN];
        let status = unsafe { mk_gloo_barrier(*handle, err.as_mut_ptr().cast(), ERR_LEN) };
        if status == 0 {
            Ok(())
        } else {
            Err(message(&err))
        }
    }
}

impl Drop for GlooContext {
    fn drop(&mut self) {
        let handle = self.handle.get_mut().unwrap_or_else(|e| e.into_inner());
        if !handle.is_null() {
            unsafe { mk_gloo_free(*handle) };
            *handle = std::ptr::null_mut();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rendezvous::LocalStore;
    use super::*;

    /// Ranks as threads of one process: the sums are exact for small integers, and every
    /// rank holds the same bits.
    #[test]
    fn threads_sum_their_buffers_and_agree_bit_for_bit() {
        let store: Arc<dyn Store> = Arc::new(LocalStore::default());
        let size = 3;
        let results: Vec<Result<Vec<f32>, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..size)
                .map(|rank| {
                    let store = store.clone();
                    s.spawn(move || {
                        let ctx = GlooContext::join(
                            rank,
                            size,
                            store,
                            "127.0.0.1",
                            Duration::from_secs(20),
                        )?;
                        let mut data: Vec<f32> =
                            (0..1000).map(|i| (i * (rank + 1)) as f32 * 0.1).collect();
                        ctx.all_reduce_sum(&mut data)?;
                        ctx.barrier()?;
                        Ok(data)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())))
                .collect()
        });
        let first = match &results[0] {
            Ok(v) => v.clone(),
            Err(e) => panic!("rank 0: {e}"),
        };
        for (i, &x) in first.iter().enumerate() {
            let want = (0..size).map(|r| (i * (r + 1)) as f32 * 0.1).sum::<f32>();
            assert!(
                (x - want).abs() <= 1e-3 * want.abs().max(1.0),
                "{i}: {x} vs {want}"
            );
        }
        for r in &results {
            let bits: Vec<u32> = r
                .as_ref()
                .map_or(vec![], |v| v.iter().map(|x| x.to_bits()).collect());
            assert_eq!(bits, first.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_rank_that_never_arrives_is_an_error_within_the_timeout() {
        let store: Arc<dyn Store> = Arc::new(LocalStore::default());
        let start = std::time::Instant::now();
        let joined = GlooContext::join(0, 2, store, "127.0.0.1", Duration::from_secs(1));
        assert!(joined.is_err());
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}
