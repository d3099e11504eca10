//! Compiling the kernels of `kernels.rs` with NVRTC (once per process) and loading them
//! into a context, with one handle per kernel so launches never look names up.

use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};

use super::kernels::SOURCE;
use crate::device::{DResult, DeviceError};

/// Threads per block for the element-wise kernels; rows go one warp each.
pub const BLOCK: u32 = 256;
/// The most replicas the single-GPU reduce kernel sums in one launch (its pointer table).
pub const MAX_LOCAL_REPLICAS: usize = 32;

/// Names of the kernels above, loaded from the module in this order.
const NAMES: [&str; 20] = [
    "act_fwd",
    "act_bwd",
    "add_bias",
    "sum_rows",
    "axpby",
    "mul",
    "sum_partial",
    "softmax_rows",
    "softmax_rows_grad",
    "loss_rows",
    "dropout_mask",
    "im2col",
    "col2im",
    "maxpool",
    "maxpool_grad",
    "opt_sgd",
    "opt_adam",
    "opt_rmsprop",
    "opt_adagrad",
    "local_reduce",
];

/// The PTX, compiled on first use and kept for the life of the process. A compile error is
/// kept too, so a broken toolkit is reported the same way every time without recompiling.
fn ptx() -> Result<Ptx, String> {
    static PTX: OnceLock<Result<Ptx, String>> = OnceLock::new();
    PTX.get_or_init(|| {
        let opts = CompileOptions {
            name: Some("mirror_kernels.cu".into()),
            ..Default::default()
        };
        compile_ptx_with_opts(SOURCE, opts)
            .map_err(|e| format!("NVRTC could not compile the kernels: {e}"))
    })
    .clone()
}

/// The compiled kernels, loaded into one context.
pub struct Kernels {
    _module: Arc<CudaModule>,
    funcs: Vec<CudaFunction>,
}

/// Which kernel to launch; the discriminant indexes [`NAMES`].
#[derive(Debug, Clone, Copy)]
pub enum K {
    ActFwd = 0,
    ActBwd,
    AddBias,
    SumRows,
    Axpby,
    Mul,
    SumPartial,
    Softmax,
    SoftmaxGrad,
    Loss,
    Dropout,
    Im2col,
    Col2im,
    Maxpool,
    MaxpoolGrad,
    Sgd,
    Adam,
    RmsProp,
    Adagrad,
    LocalReduce,
}

impl Kernels {
    /// Loads the process's PTX into `ctx` and looks every function up once.
    pub fn load(ctx: &Arc<CudaContext>) -> DResult<Arc<Kernels>> {
        let ptx = ptx().map_err(DeviceError::Cuda)?;
        let module = ctx.load_module(ptx).map_err(|e| {
            DeviceError::Cuda(format!(
                "the GPU driver refused the kernels ({e}); the NVRTC library may be newer than \
                 the driver supports: update the NVIDIA driver or put a matching libnvrtc first \
                 on LD_LIBRARY_PATH"
            ))
        })?;
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
