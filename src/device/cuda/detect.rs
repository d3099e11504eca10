//! Finding CUDA GPUs without ever panicking or printing. cudarc panics when a library it
//! needs is missing, so every library is probed with its `is_culib_present()` first; any
//! failure after that (no driver, no device, a driver too old) means "no GPU", silently.
//! The answer is computed once per process. Also the TensorFlow-style names of physical
//! GPUs that `tf.config.list_physical_devices('GPU')` shows.

use std::sync::OnceLock;

use cudarc::driver::{result, CudaContext};

/// What is known about one physical GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuInfo {
    /// The CUDA ordinal, which is also TensorFlow's index (`GPU:0`).
    pub index: usize,
    /// The marketing name the driver reports, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Total memory in bytes.
    pub total_memory: usize,
    /// Compute capability `(major, minor)`.
    pub compute_capability: (i32, i32),
}

impl GpuInfo {
    /// `/physical_device:GPU:0`, TensorFlow's name for a physical GPU.
    pub fn tf_name(&self) -> String {
        physical_device_name(self.index)
    }

    /// How TensorFlow prints the device:
    /// `PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')`.
    pub fn tf_repr(&self) -> String {
        format!(
            "PhysicalDevice(name='{}', device_type='GPU')",
            self.tf_name()
        )
    }
}

/// `/physical_device:GPU:{index}`.
pub fn physical_device_name(index: usize) -> String {
    format!("/physical_device:GPU:{index}")
}

/// Whether the driver, NVRTC and cuBLAS libraries can all be loaded. Only after this is true
/// may any other cudarc call be made.
pub fn libraries_present() -> bool {
    // SAFETY: these only try to dlopen the libraries by name and drop the handle.
    unsafe {
        cudarc::driver::sys::is_culib_present()
            && cudarc::nvrtc::sys::is_culib_present()
            && cudarc::cublas::sys::is_culib_present()
    }
}

fn probe() -> Vec<GpuInfo> {
    if !libraries_present() {
        return Vec::new();
    }
    // The libraries are present, so cudarc will not panic on loading them; a missing symbol
    // in a very old driver still would, so the probe runs under catch_unwind as a last guard
    // (and the default hook is not involved: nothing is printed unless it actually panics).
    let found = std::panic::catch_unwind(|| {
        let count = match CudaContext::device_count() {
            Ok(n) if n > 0 => n as usize,
            _ => return Vec::new(),
        };
        (0..count).filter_map(describe).collect::<Vec<_>>()
    });
    found.unwrap_or_default()
}

fn describe(index: usize) -> Option<GpuInfo> {
    let dev = result::device::get(i32::try_from(index).ok()?).ok()?;
    let name = result::device::get_name(dev).ok()?;
    // SAFETY: `dev` is a valid device handle from cuDeviceGet.
    let total_memory = unsafe { result::device::total_mem(dev) }.unwrap_or(0);
    let attr = |a| unsafe { result::device::get_attribute(dev, a) }.unwrap_or(0);
    use cudarc::driver::sys::CUdevice_attribute as A;
    let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    Some(GpuInfo {
        index,
        name,
        total_memory,
        compute_capability: (major, minor),
    })
}

/// Every physical GPU, probed once per process. Empty when there is none or CUDA is absent.
pub fn gpus() -> &'static [GpuInfo] {
    static GPUS: OnceLock<Vec<GpuInfo>> = OnceLock::new();
    GPUS.get_or_init(probe)
}

/// How many CUDA GPUs this process can use (0 without a driver, libraries or devices).
pub fn gpu_count() -> usize {
    gpus().len()
}

/// The driver's names of the GPUs, in ordinal order.
pub fn gpu_names() -> Vec<String> {
    gpus().iter().map(|g| g.name.clone()).collect()
}
