//! A minimal binding to NCCL, loaded at run time by full path. cudarc's own NCCL loader asks
//! only for `libnccl.so` and CUDA-numbered suffixes, while the runtime package and the pip
//! wheel (`nvidia-nccl-cu12`) ship `libnccl.so.2`; so this module finds the library itself
//! (the loader's own search, then the usual library folders, `LD_LIBRARY_PATH` and Python
//! environments' `site-packages/nvidia/nccl/lib`) and binds the handful of calls the
//! all-reduce needs. It knows nothing about tensors; `allreduce.rs` drives it.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library;

/// `ncclUniqueId`: the 128 opaque bytes every rank of one communicator must share.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct UniqueId {
    pub internal: [c_char; 128],
}

type Comm = *mut c_void;
type Res = c_int;
/// `ncclFloat32` and `ncclSum` from `nccl.h`; stable since NCCL 2.0.
const NCCL_FLOAT32: c_int = 7;
const NCCL_SUM: c_int = 0;

/// The entry points, resolved once from the loaded library.
pub struct Api {
    _lib: Library,
    pub path: PathBuf,
    get_unique_id: unsafe extern "C" fn(*mut UniqueId) -> Res,
    comm_init_all: unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> Res,
    comm_init_rank: unsafe extern "C" fn(*mut Comm, c_int, UniqueId, c_int) -> Res,
    all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        Comm,
        *mut c_void,
    ) -> Res,
    comm_destroy: unsafe extern "C" fn(Comm) -> Res,
    get_error_string: unsafe extern "C" fn(Res) -> *const c_char,
    get_version: unsafe extern "C" fn(*mut c_int) -> Res,
    group_start: unsafe extern "C" fn() -> Res,
    group_end: unsafe extern "C" fn() -> Res,
}

/// Folders where NCCL usually lives, besides what the dynamic loader already searches.
fn candidate_dirs() -> Vec<PathBuf> {
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
    // Python environments: the active venv or conda env, the user's site, the system ones.
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(p) = std::env::var_os(var) {
            prefixes.push(PathBuf::from(p).join("lib"));
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        prefixes.push(PathBuf::from(home).join(".local/lib"));
    }
    prefixes.push(PathBuf::from("/usr/local/lib"));
    prefixes.push(PathBuf::from("/usr/lib"));
    prefixes.push(PathBuf::from("/opt/conda/lib"));
    for prefix in prefixes {
        let Ok(entries) = std::fs::read_dir(&prefix) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            if name.to_string_lossy().starts_with("python3") {
                for site in ["site-packages", "dist-packages"] {
                    dirs.push(e.path().join(site).join("nvidia/nccl/lib"));
                }
            }
        }
    }
    dirs
}

fn open(name: &Path) -> Option<Library> {
    // SAFETY: loading NCCL runs its initialisers, which only set up its own state.
    unsafe { Library::new(name) }.ok()
}

fn locate() -> Option<(Library, PathBuf)> {
    if let Some(p) = std::env::var_os("MIRROR_NCCL_LIBRARY") {
        let p = PathBuf::from(p);
        if let Some(lib) = open(&p) {
            return Some((lib, p));
        }
    }
    for soname in ["libnccl.so.2", "libnccl.so"] {
        if let Some(lib) = open(Path::new(soname)) {
            return Some((lib, PathBuf::from(soname)));
        }
    }
    for dir in candidate_dirs() {
        for file in ["libnccl.so.2", "libnccl.so"] {
            let p = dir.join(file);
            if p.is_file() {
                if let Some(lib) = open(&p) {
                    return Some((lib, p));
                }
            }
        }
    }
    None
}

fn bind(lib: Library, path: PathBuf) -> Option<Api> {
    // SAFETY: each symbol is looked up under its C name and given the C signature that
    // nccl.h declares for it (NCCL 2.x; these have not changed since 2.0).
    unsafe {
        let get_unique_id = *lib.get(b"ncclGetUniqueId\0").ok()?;
        let comm_init_all = *lib.get(b"ncclCommInitAll\0").ok()?;
        let comm_init_rank = *lib.get(b"ncclCommInitRank\0").ok()?;
        let all_reduce = *lib.get(b"ncclAllReduce\0").ok()?;
        let comm_destroy = *lib.get(b"ncclCommDestroy\0").ok()?;
        let get_error_string = *lib.get(b"ncclGetErrorString\0").ok()?;
        let get_version = *lib.get(b"ncclGetVersion\0").ok()?;
        let group_start = *lib.get(b"ncclGroupStart\0").ok()?;
        let group_end = *lib.get(b"ncclGroupEnd\0").ok()?;
        Some(Api {
            _lib: lib,
            path,
            get_unique_id,
            comm_init_all,
            comm_init_rank,
            all_reduce,
            comm_destroy,
            get_error_string,
            get_version,
            group_start,
            group_end,
        })
    }
}

/// NCCL if it can be found and bound, searched once per process.
pub fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        let (lib, path) = locate()?;
        bind(lib, path)
    })
    .as_ref()
}

impl Api {
    fn check(&self, what: &str, r: Res) -> Result<(), String> {
        if r == 0 {
            return Ok(());
        }
        // SAFETY: ncclGetErrorString returns a static, NUL-terminated string for any code.
        let msg = unsafe {
            let p = (self.get_error_string)(r);
            if p.is_null() {
                String::from("unknown error")
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Err(format!("NCCL {what} failed: {msg} (code {r})"))
    }

    /// The library version as NCCL encodes it (e.g. 22105 for 2.21.5).
    pub fn version(&self) -> Option<i32> {
        let mut v: c_int = 0;
        // SAFETY: writes one int.
        let r = unsafe { (self.get_version)(&mut v) };
        (r == 0).then_some(v)
    }

    /// A fresh id for a new communicator (on the chief, in the multi-worker case).
    pub fn unique_id(&self) -> Result<UniqueId, String> {
        let mut id = UniqueId { internal: [0; 128] };
        // SAFETY: writes the 128-byte struct.
        let r = unsafe { (self.get_unique_id)(&mut id) };
        self.check("ncclGetUniqueId", r)?;
        Ok(id)
    }

    /// One communicator per listed device ordinal, created from this one thread.
    pub fn init_all(&self, ordinals: &[i32]) -> Result<Vec<RawComm>, String> {
        let n = c_int::try_from(ordinals.len()).map_err(|_| "too many GPUs".to_string())?;
        let mut comms: Vec<Comm> = vec![std::ptr::null_mut(); ordinals.len()];
        // SAFETY: `comms` has room for `n` handles and `ordinals` holds `n` device ids.
        let r = unsafe { (self.comm_init_all)(comms.as_mut_ptr(), n, ordinals.as_ptr()) };
        self.check("ncclCommInitAll", r)?;
        Ok(comms.into_iter().map(RawComm).collect())
    }

    /// Joins communicator `id` as `rank` of `nranks`; blocks until every rank has joined.
    /// The calling thread's current CUDA device must be the one this rank uses.
    pub fn init_rank(&self, nranks: usize, id: UniqueId, rank: usize) -> Result<RawComm, String> {
        let n = c_int::try_from(nranks).map_err(|_| "too many ranks".to_string())?;
        let r = c_int::try_from(rank).map_err(|_| "rank out of range".to_string())?;
        let mut comm: Comm = std::ptr::null_mut();
        // SAFETY: writes one handle; the id is passed by value as nccl.h declares.
        let res = unsafe { (self.comm_init_rank)(&mut comm, n, id, r) };
        self.check("ncclCommInitRank", res)?;
        Ok(RawComm(comm))
    }

    /// Brackets several `init_rank` calls made from one thread (one per local GPU).
    pub fn group_start(&self) -> Result<(), String> {
        // SAFETY: no arguments; NCCL keeps the group state per thread.
        let r = unsafe { (self.group_start)() };
        self.check("ncclGroupStart", r)
    }

    pub fn group_end(&self) -> Result<(), String> {
        // SAFETY: as above; closes the group opened by group_start on this thread.
        let r = unsafe { (self.group_end)() };
        self.check("ncclGroupEnd", r)
    }

    /// In-place f32 sum of `count` elements at device address `ptr`, enqueued on `stream`.
    ///
    /// # Safety
    /// `ptr` must address `count` f32 on the communicator's device, valid until the stream
    /// has run the operation, and `stream` must be a live stream of that device's context.
    pub unsafe fn all_reduce_in_place(
        &self,
        comm: &RawComm,
        ptr: u64,
        count: usize,
        stream: *mut c_void,
    ) -> Result<(), String> {
        let p = ptr as *mut c_void;
        let r = (self.all_reduce)(p, p, count, NCCL_FLOAT32, NCCL_SUM, comm.0, stream);
        self.check("ncclAllReduce", r)
    }

    pub fn destroy(&self, comm: RawComm) {
        // SAFETY: the handle came from init_all/init_rank and is destroyed once (by value).
        // A failure here leaves nothing to recover, so it is ignored.
        let _ = unsafe { (self.comm_destroy)(comm.0) };
    }
}

/// An NCCL communicator handle. NCCL allows a communicator to be used from any thread as
/// long as calls on it never overlap; `allreduce.rs` keeps each one behind a mutex.
pub struct RawComm(Comm);

// SAFETY: see the type's comment: the handle is an opaque pointer NCCL lets any thread use,
// and exclusive access is enforced by the owner's mutex.
unsafe impl Send for RawComm {}
