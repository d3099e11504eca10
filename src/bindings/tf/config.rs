//! `tf.config`: the physical devices (CPU:0 and the CUDA GPUs found at run time), the
//! logical devices a cell may split them into with `set_logical_device_configuration`, and
//! TF's rule that the layout freezes once the runtime has started (first op, first
//! strategy, first `list_logical_devices`). The layout lives in [`DeviceState`] inside the
//! session state; the environment variable `MIRROR_LOGICAL_CPUS` gives the default number
//! of logical CPU devices so a classroom machine shows several replicas.

use std::any::Any;
use std::collections::BTreeMap;

use super::{given, TfError, TfState};
use crate::lang::str_repr;
use crate::lang::{Args, CmpOp, Ctx, NativeClass, NativeModule, Object, PyResult, Value};

/// The environment variable naming the default count of logical CPU devices.
pub use crate::distribute::strategy::LOGICAL_CPUS_ENV;

/// One `tf.config.LogicalDeviceConfiguration`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogicalConfig {
    pub memory_limit: Option<i64>,
    pub priority: Option<i64>,
    pub ordinal: Option<i64>,
}

/// The device layout of the session.
#[derive(Debug, Default)]
pub struct DeviceState {
    /// `None` until a cell configures the CPU; then one entry per logical CPU device.
    cpu_split: Option<Vec<LogicalConfig>>,
    /// Logical splits of physical GPUs, by GPU index.
    gpu_split: BTreeMap<usize, Vec<LogicalConfig>>,
    /// GPUs hidden by `set_visible_devices`, by index.
    hidden_gpus: Vec<usize>,
    /// Once set, the layout can no longer change (TF's runtime context exists).
    initialized: bool,
}

impl DeviceState {
    fn cpu_count(&self) -> usize {
        match &self.cpu_split {
            Some(v) => v.len().max(1),
            None => default_cpu_count(),
        }
    }
}

/// The logical CPU count the kernel starts with: `MIRROR_LOGICAL_CPUS`, else one (the
/// distribute part owns the variable's parsing so both agree).
fn default_cpu_count() -> usize {
    crate::distribute::strategy::default_logical_cpus()
}

/// The names of the physical CUDA GPUs the cuda part found (probed once per process, and
/// quietly: a machine without a driver simply has none).
pub fn physical_gpu_names() -> Vec<String> {
    crate::device::cuda::gpu_names()
}

/// Marks the runtime as started: the logical layout is fixed from now on.
pub fn initialize(ctx: &mut dyn Ctx) {
    ctx.state().get::<TfState>().devices.initialized = true;
}

/// The logical devices as `(device_type, index)`, GPUs after CPUs as TF lists them.
/// Starts the runtime, as listing logical devices does in TF.
pub fn logical_devices(ctx: &mut dyn Ctx) -> Vec<(&'static str, usize)> {
    engine_devices(ctx)
        .iter()
        .map(|d| (d.kind.as_str(), d.index))
        .collect()
}

/// The logical devices as the engine needs them: kind, TF's logical index and the physical
/// device each is carved from (logical GPUs 0 and 1 may both live on physical GPU 0; a GPU
/// hidden by `set_visible_devices` is skipped but keeps its CUDA ordinal for the others).
/// Starts the runtime, as listing logical devices does in TF.
pub fn engine_devices(ctx: &mut dyn Ctx) -> Vec<EngineDevice> {
    initialize(ctx);
    let gpus = physical_gpu_names().len();
    let st = &ctx.state().get::<TfState>().devices;
    let mut out: Vec<EngineDevice> = (0..st.cpu_count()).map(EngineDevice::cpu).collect();
    let mut next_gpu = 0;
    for g in (0..gpus).filter(|g| !st.hidden_gpus.contains(g)) {
        let n = st.gpu_split.get(&g).map_or(1, |v| v.len().max(1));
        for _ in 0..n {
            out.push(EngineDevice::gpu(next_gpu, g));
            next_gpu += 1;
        }
    }
    out
}

/// The engine's description of one logical device.
pub use crate::device::DeviceSpec as EngineDevice;

/// How many physical GPUs this process sees (for error messages).
pub fn physical_gpu_count() -> usize {
    physical_gpu_names().len()
}

/// A `PhysicalDevice` or `LogicalDevice` (TF's namedtuples).
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceSpec {
    pub physical: bool,
    pub name: String,
    pub device_type: String,
}

impl DeviceSpec {
    fn physical(device_type: &str, i: usize) -> Value {
        Value::native(DeviceSpec {
            physical: true,
            name: format!("/physical_device:{device_type}:{i}"),
            device_type: device_type.into(),
        })
    }
    fn logical(device_type: &str, i: usize) -> Value {
        Value::native(DeviceSpec {
            physical: false,
            name: format!("/device:{device_type}:{i}"),
            device_type: device_type.into(),
        })
    }
    /// The index after the last colon (`/physical_device:GPU:1` is 1).
    fn index(&self) -> Option<usize> {
        self.name.rsplit(':').next()?.parse().ok()
    }
}

impl Object for DeviceSpec {
    fn type_name(&self) -> String {
        if self.physical {
            "PhysicalDevice"
        } else {
            "LogicalDevice"
        }
        .into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "{}(name={}, device_type={})",
            self.type_name(),
            str_repr(&self.name),
            str_repr(&self.device_type)
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "name" => Some(Value::str(&self.name)),
            "device_type" => Some(Value::str(&self.device_type)),
            _ => None,
        })
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let same = other.downcast::<DeviceSpec>().is_some_and(|o| o == self);
        Ok(match op {
            CmpOp::Eq => Some(Value::Bool(same)),
            CmpOp::Ne => Some(Value::Bool(!same)),
            _ => None,
        })
    }
    fn hash(&self) -> Option<u64> {
        Some(self.name.bytes().fold(1469598103934665603u64, |h, b| {
            (h ^ b as u64).wrapping_mul(1099511628211)
        }))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Object for LogicalConfig {
    fn type_name(&self) -> String {
        "LogicalDeviceConfiguration".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let show = |v: Option<i64>| v.map_or("None".to_string(), |n| n.to_string());
        Ok(format!(
            "LogicalDeviceConfiguration(memory_limit={}, experimental_priority={}, experimental_device_ordinal={})",
            show(self.memory_limit),
            show(self.priority),
            show(self.ordinal)
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let v = match name {
            "memory_limit" => self.memory_limit,
            "experimental_priority" => self.priority,
            "experimental_device_ordinal" => self.ordinal,
            _ => return Ok(None),
        };
        Ok(Some(v.map_or(Value::None, Value::Int)))
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let same = other.downcast::<LogicalConfig>().is_some_and(|o| o == self);
        Ok(match op {
            CmpOp::Eq => Some(Value::Bool(same)),
            CmpOp::Ne => Some(Value::Bool(!same)),
            _ => None,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn opt_int(slot: &Option<Value>) -> PyResult<Option<i64>> {
    given(slot).map(|v| v.as_int()).transpose()
}

fn device_type_arg(args: &Args, func: &str) -> PyResult<Option<String>> {
    let slots = args.bind(func, &["device_type"], 0)?;
    Ok(match given(&slots[0]) {
        Some(v) => Some(v.as_str()?.to_uppercase()),
        None => None,
    })
}

fn list_physical(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let want = device_type_arg(args, "list_physical_devices")?;
    let mut out = vec![];
    if want.as_deref().is_none_or(|t| t == "CPU") {
        out.push(DeviceSpec::physical("CPU", 0));
    }
    if want.as_deref().is_none_or(|t| t == "GPU") {
        for i in 0..physical_gpu_names().len() {
            out.push(DeviceSpec::physical("GPU", i));
        }
    }
    Ok(Value::list(out))
}

fn list_logical(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let want = device_type_arg(args, "list_logical_devices")?;
    let out = logical_devices(ctx)
        .into_iter()
        .filter(|(t, _)| want.as_deref().is_none_or(|w| w == *t))
        .map(|(t, i)| DeviceSpec::logical(t, i))
        .collect();
    Ok(Value::list(out))
}

/// The physical device an argument names, or TF's `ValueError: Unrecognized device`.
fn physical_arg(v: &Value, ctx: &mut dyn Ctx) -> PyResult<DeviceSpec> {
    let known = physical_gpu_names().len();
    match v.downcast::<DeviceSpec>() {
        Some(d)
            if d.physical
                && (d.device_type == "CPU" && d.index() == Some(0)
                    || d.device_type == "GPU" && d.index().is_some_and(|i| i < known)) =>
        {
            Ok(d.clone())
        }
        _ => {
            let shown = ctx.repr(v)?;
            Err(TfError::Value(format!(
                "Unrecognized device: {shown}\nHint: pass one of tf.config.list_physical_devices()."
            ))
            .into())
        }
    }
}

fn set_logical(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let slots = args.bind(
        "set_logical_device_configuration",
        &["device", "logical_devices"],
        2,
    )?;
    let dev = physical_arg(slots[0].as_ref().unwrap_or(&Value::None), ctx)?;
    let items = match slots[1].as_ref() {
        Some(v) if v.is_none() => vec![],
        Some(v) => ctx.iterate(v)?,
        None => vec![],
    };
    let mut configs = Vec::with_capacity(items.len());
    for item in &items {
        match item.downcast::<LogicalConfig>() {
            Some(c) => configs.push(c.clone()),
            None => {
                return Err(TfError::Type(format!(
                    "Expected a list of tf.config.LogicalDeviceConfiguration, got {}",
                    item.type_name()
                ))
                .into())
            }
        }
    }
    if dev.device_type == "CPU" && configs.iter().any(|c| c.memory_limit.is_some()) {
        return Err(TfError::Value(
            "Setting memory limit on CPU virtual devices is currently not supported".into(),
        )
        .into());
    }
    if dev.device_type == "GPU" && configs.iter().any(|c| c.memory_limit.is_none()) {
        return Err(TfError::Value(
            "Setting memory limit is required for GPU virtual devices".into(),
        )
        .into());
    }
    let st = &mut ctx.state().get::<TfState>().devices;
    let current = if dev.device_type == "CPU" {
        st.cpu_split.clone()
    } else {
        dev.index().and_then(|i| st.gpu_split.get(&i).cloned())
    };
    // TF lets a cell re-apply the very same layout after start-up; only a change is an error.
    if current.as_ref() == Some(&configs) {
        return Ok(Value::None);
    }
    if st.initialized {
        return Err(TfError::Runtime(
            "Virtual devices cannot be modified after being initialized\nHint: logical devices \
             are fixed once TensorFlow has run an op or built a strategy; restart the kernel \
             and configure devices in the first cell."
                .into(),
        )
        .into());
    }
    if dev.device_type == "CPU" {
        st.cpu_split = Some(configs);
    } else if let Some(i) = dev.index() {
        st.gpu_split.insert(i, configs);
    }
    Ok(Value::None)
}

fn get_logical(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let slots = args.bind("get_logical_device_configuration", &["device"], 1)?;
    let dev = physical_arg(slots[0].as_ref().unwrap_or(&Value::None), ctx)?;
    let st = &ctx.state().get::<TfState>().devices;
    let configs = if dev.device_type == "CPU" {
        st.cpu_split.clone()
    } else {
        dev.index().and_then(|i| st.gpu_split.get(&i).cloned())
    };
    Ok(match configs {
        Some(c) => Value::list(c.into_iter().map(Value::native).collect()),
        None => Value::None,
    })
}

fn logical_config_class() -> Value {
    NativeClass::new(
        "LogicalDeviceConfiguration",
        "tensorflow.python.eager.context",
        "LogicalDeviceConfiguration(memory_limit=None, experimental_priority=None, \
         experimental_device_ordinal=None)\n\nOne logical device carved out of a physical one.",
    )
    .constructor(|args, _ctx| {
        let s = args.bind(
            "LogicalDeviceConfiguration",
            &[
                "memory_limit",
                "experimental_priority",
                "experimental_device_ordinal",
            ],
            0,
        )?;
        Ok(Value::native(LogicalConfig {
            memory_limit: opt_int(&s[0])?,
            priority: opt_int(&s[1])?,
            ordinal: opt_int(&s[2])?,
        }))
    })
    .into_value()
}

fn set_visible(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let slots = args.bind("set_visible_devices", &["devices", "device_type"], 1)?;
    let dv = slots[0].clone().unwrap_or(Value::None);
    let list = match dv.as_seq() {
        Some(items) => items,
        None => vec![dv],
    };
    let mut visible = vec![];
    for d in &list {
        let spec = physical_arg(d, ctx)?;
        if spec.device_type == "GPU" {
            visible.extend(spec.index());
        }
    }
    let hidden: Vec<usize> = (0..physical_gpu_names().len())
        .filter(|g| !visible.contains(g))
        .collect();
    let st = &mut ctx.state().get::<TfState>().devices;
    if st.hidden_gpus == hidden {
        return Ok(Value::None);
    }
    if st.initialized {
        return Err(TfError::Runtime(
            "Visible devices cannot be modified after being initialized".into(),
        )
        .into());
    }
    st.hidden_gpus = hidden;
    Ok(Value::None)
}

fn memory_growth(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let slots = args.bind("set_memory_growth", &["device", "enable"], 2)?;
    let dev = physical_arg(slots[0].as_ref().unwrap_or(&Value::None), ctx)?;
    if dev.device_type != "GPU" {
        return Err(TfError::Value("Cannot set memory growth on non-GPU devices".into()).into());
    }
    Ok(Value::None)
}

/// `tf.config` with its `experimental` namespace.
pub fn module() -> Value {
    let f = super::func;
    let experimental = NativeModule::new("tensorflow.config.experimental", "")
        .with(
            "list_physical_devices",
            f("list_physical_devices", "", list_physical),
        )
        .with(
            "list_logical_devices",
            f("list_logical_devices", "", list_logical),
        )
        .with(
            "set_memory_growth",
            f("set_memory_growth", "", memory_growth),
        )
        .with(
            "get_memory_growth",
            f("get_memory_growth", "", |_, _| Ok(Value::Bool(false))),
        )
        .with(
            "set_virtual_device_configuration",
            f("set_virtual_device_configuration", "", set_logical),
        )
        .with("VirtualDeviceConfiguration", logical_config_class())
        .with(
            "set_visible_devices",
            f("set_visible_devices", "", set_visible),
        );
    NativeModule::new("tensorflow.config", "Devices and runtime configuration.")
        .with(
            "list_physical_devices",
            f(
                "list_physical_devices",
                "list_physical_devices(device_type=None)\n\nThe physical devices of this machine.",
                list_physical,
            ),
        )
        .with(
            "list_logical_devices",
            f(
                "list_logical_devices",
                "list_logical_devices(device_type=None)\n\nThe logical devices replicas run on.",
                list_logical,
            ),
        )
        .with(
            "set_logical_device_configuration",
            f(
                "set_logical_device_configuration",
                "set_logical_device_configuration(device, logical_devices)\n\nSplits a physical \
                 device into logical devices (before the runtime starts).",
                set_logical,
            ),
        )
        .with(
            "get_logical_device_configuration",
            f("get_logical_device_configuration", "", get_logical),
        )
        .with("LogicalDeviceConfiguration", logical_config_class())
        .with(
            "set_visible_devices",
            f("set_visible_devices", "", set_visible),
        )
        .with(
            "get_visible_devices",
            f("get_visible_devices", "", list_physical),
        )
        .with("experimental", experimental.into_value())
        .into_value()
}

/// `tf.device(name)`: a context manager naming where ops run. The kernel places every
/// eager op itself (replicas choose their own devices), so entering it changes nothing;
/// as in TF, the name must be a string and `with ... as d` binds `None`.
struct DeviceScope;

impl Object for DeviceScope {
    fn type_name(&self) -> String {
        "_EagerDeviceContext".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.eager.context._EagerDeviceContext object at {}>",
            super::address_of(self)
        ))
    }
    fn enter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(Value::None)
    }
    fn exit(&self, _error: Option<&crate::lang::PyErr>, _ctx: &mut dyn Ctx) -> PyResult<bool> {
        Ok(false)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tf.device(device_name)`.
pub fn device(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("device", &["device_name"], 1)?;
    match &s[0] {
        Some(Value::Str(_)) | Some(Value::None) => Ok(Value::native(DeviceScope)),
        Some(v) => {
            let shown = ctx.repr(v)?;
            Err(TfError::Value(format!(
                "Expecting a string device name. Got <class '{}'>({shown})",
                v.type_name()
            ))
            .into())
        }
        None => Ok(Value::native(DeviceScope)),
    }
}
