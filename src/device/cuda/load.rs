//! Compiling the kernels of `kernels.rs` with NVRTC (once per process and GPU architecture)
//! and loading them into a context, with one handle per kernel so launches never look names
//! up. Native code (CUBIN) is preferred; portable PTX is the fallback.

use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};

use super::kernels::source;
use crate::device::{DResult, DeviceError};

/// Threads per block for the element-wise kernels; rows go one warp each.
pub const BLOCK: u32 = 256;
/// The most replicas the single-GPU reduce kernel sums in one launch (its pointer table).
pub const MAX_LOCAL_REPLICAS: usize = 32;

/// The PTX, compiled on first use and kept for the life of the process. A compile error is
/// kept too, so a broken toolkit is reported the same way every time without recompiling.
fn ptx() -> Result<Ptx, String> {
    static PTX: OnceLock<Result<Ptx, String>> = OnceLock::new();
    PTX.get_or_init(|| {
        let opts = CompileOptions {
            name: Some("mirror_kernels.cu".into()),
            ..Default::default()
        };
        compile_ptx_with_opts(source(), opts)
            .map_err(|e| format!("NVRTC could not compile the kernels: {e}"))
    })
    .clone()
}

/// The compiled kernels, loaded into one context.
pub struct Kernels {
    _module: Arc<CudaModule>,
    funcs: Vec<CudaFunction>,
}

/// Declares the kernels once: the handle a launch names and the function in `kernels.rs`.
macro_rules! kernel_table {
    ($($variant:ident => $name:literal,)*) => {
        /// Which kernel to launch; the discriminant indexes [`NAMES`].
        #[derive(Debug, Clone, Copy)]
        pub enum K {
            $($variant,)*
        }

        /// Names of the kernels in `kernels.rs`, loaded from the module in this order.
        const NAMES: &[&str] = &[$($name,)*];
    };
}

kernel_table! {
    ActFwd => "act_fwd",
    ActBwd => "act_bwd",
    AddBias => "add_bias",
    SumRows => "sum_rows",
    Axpby => "axpby",
    Mul => "mul",
    SumPartial => "sum_partial",
    Softmax => "softmax_rows",
    SoftmaxGrad => "softmax_rows_grad",
    Loss => "loss_rows",
    Dropout => "dropout_mask",
    Im2col => "im2col",
    Col2im => "col2im",
    Maxpool => "maxpool",
    MaxpoolGrad => "maxpool_grad",
    Sgd => "opt_sgd",
    Adam => "opt_adam",
    RmsProp => "opt_rmsprop",
    Adagrad => "opt_adagrad",
    LocalReduce => "local_reduce",
    BiasAct => "bias_act",
    MaxpoolBwd => "maxpool_bwd",
    Avgpool => "avgpool",
    AvgpoolBwd => "avgpool_bwd",
}

/// A CUBIN for compute capability `major.minor`, compiled once per architecture per
/// process. Native code loads on any driver of the same CUDA major version, while PTX needs a
/// driver at least as new as the NVRTC that wrote it (a pip-installed NVRTC is often newer).
fn cubin(major: i32, minor: i32) -> Result<Vec<u8>, String> {
    type Cache = Mutex<HashMap<(i32, i32), Result<Vec<u8>, String>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    map.entry((major, minor))
        .or_insert_with(|| compile_cubin(&format!("sm_{major}{minor}")))
        .clone()
}

fn compile_cubin(arch: &str) -> Result<Vec<u8>, String> {
    use cudarc::nvrtc::{result, sys};
    let src = CString::new(source()).map_err(|e| e.to_string())?;
    let prog = result::create_program(&src, None).map_err(|e| e.to_string())?;
    let opts = [format!("--gpu-architecture={arch}")];
    // SAFETY: `prog` is a live program; the buffers are sized by NVRTC's own size calls, and
    // the program is destroyed exactly once below.
    let out = unsafe {
        match result::compile_program(prog, &opts) {
            Ok(()) => {
                let mut size = 0usize;
                sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .and_then(|_| {
                        let mut bin = vec![0u8; size];
                        sys::nvrtcGetCUBIN(prog, bin.as_mut_ptr().cast::<c_char>())
                            .result()
                            .map(|_| bin)
                    })
                    .map_err(|e| e.to_string())
            }
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| {
                        let bytes: Vec<u8> = l.iter().map(|c| *c as u8).collect();
                        String::from_utf8_lossy(&bytes)
                            .trim_end_matches('\0')
                            .to_string()
                    })
                    .unwrap_or_default();
                Err(format!("NVRTC could not compile for {arch}: {e} {log}"))
            }
        }
    };
    // SAFETY: destroys the program created above, once.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

impl Kernels {
    /// Loads the kernels into `ctx`: native code for the GPU's architecture first, the
    /// process's PTX (JIT-compiled by the driver) when NVRTC cannot target that GPU.
    pub fn load(ctx: &Arc<CudaContext>) -> DResult<Arc<Kernels>> {
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| DeviceError::Cuda(format!("reading the compute capability: {e}")))?;
        let native = cubin(major, minor).and_then(|bin| {
            ctx.load_module(Ptx::from_binary(bin))
                .map_err(|e| format!("the driver refused native code for sm_{major}{minor}: {e}"))
        });
        let module = match native {
            Ok(m) => m,
            Err(native_err) => {
                let ptx = ptx().map_err(DeviceError::Cuda)?;
                ctx.load_module(ptx).map_err(|e| {
                    DeviceError::Cuda(format!(
                        "the GPU driver refused the kernels ({native_err}; PTX: {e}); the NVRTC \
                         library may be newer than the driver supports: update the NVIDIA \
                         driver or put a matching libnvrtc first on LD_LIBRARY_PATH"
                    ))
                })?
            }
        };
        let funcs = NAMES
            .iter()
            .map(|n| module.load_function(n))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| DeviceError::Cuda(format!("loading a kernel: {e}")))?;
        Ok(Arc::new(Kernels {
            _module: module,
            funcs,
        }))
    }

    pub fn get(&self, k: K) -> &CudaFunction {
        // The vector has one entry per `K` variant by construction, so the index is valid.
        &self.funcs[k as usize]
    }
}

/// The PTX text of all kernels, compiled by NVRTC (cached like the real compile). An error
/// when NVRTC is absent or rejects the source. Lets tests and diagnostics check the kernels
/// on machines that have NVRTC but no GPU.
pub fn kernels_ptx() -> Result<String, String> {
    if !super::detect::nvrtc_present() {
        return Err("NVRTC (libnvrtc) is not installed".into());
    }
    ptx().map(|p| p.to_src())
}

/// The native code of all kernels for compute capability `major.minor`, as the device would
/// load it (cached). For tests and diagnostics on machines with NVRTC but no GPU.
pub fn kernels_cubin(major: i32, minor: i32) -> Result<Vec<u8>, String> {
    if !super::detect::nvrtc_present() {
        return Err("NVRTC (libnvrtc) is not installed".into());
    }
    cubin(major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_every_kernel_of_the_source_once() {
        let src = source();
        let defined: Vec<&str> = src
            .split("extern \"C\" __global__ void ")
            .skip(1)
            .filter_map(|rest| rest.split('(').next())
            .collect();
        let mut listed = NAMES.to_vec();
        let mut found = defined.clone();
        listed.sort_unstable();
        found.sort_unstable();
        assert_eq!(listed, found);
        assert_eq!(NAMES[K::BiasAct as usize], "bias_act");
    }
}
