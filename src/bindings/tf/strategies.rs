//! The strategy constructors of `tf.distribute`: `MirroredStrategy` (all GPUs, else all
//! logical CPUs), `OneDeviceStrategy`, `MultiWorkerMirroredStrategy` (one local worker when
//! TF_CONFIG names no cluster), the cross-device-ops classes it accepts, and the strategies
//! this kernel does not run (TPU, parameter server), which raise TF's errors plus a pointer
//! to the strategy to use instead. Also the module-level functions (`get_strategy`, ...).

use std::any::Any;

use super::config::{engine_devices, EngineDevice};
use super::distribute::{
    current_or_default, devices_tuple_text, full_device_name, replica_context, Strategy,
    StrategyKind,
};
use super::values::ReduceOpEnum;
use super::{address_of, given, print_line, TfError, TfState};
use crate::device::DeviceKind;
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyResult, Value};

/// A device string as users write it (`/cpu:0`, `GPU:1`, `/device:CPU:0`, or TF's full
/// `/job:localhost/replica:0/task:0/device:CPU:0`) as `(device_type, index)`.
pub fn parse_device(s: &str) -> Option<(&'static str, usize)> {
    let last = s.rsplit('/').next()?;
    let last = last.strip_prefix("device:").unwrap_or(last);
    let (ty, idx) = last.split_once(':')?;
    let ty = match ty.to_ascii_uppercase().as_str() {
        "CPU" => "CPU",
        "GPU" => "GPU",
        _ => return None,
    };
    Some((ty, idx.parse().ok()?))
}

/// The devices a strategy asked for by name, checked against the logical devices: names
/// that are not devices, a CPU mixed with a GPU, duplicates and devices that do not exist
/// are `ValueError`s with a hint.
fn named_devices(items: &[Value], ctx: &mut dyn Ctx) -> PyResult<Vec<EngineDevice>> {
    let mut texts = Vec::with_capacity(items.len());
    let mut wanted: Vec<(&'static str, usize)> = vec![];
    for item in items {
        let text = match item {
            Value::Str(s) => s.to_string(),
            other => ctx.getattr(other, "name")?.as_str()?.to_string(),
        };
        let dev = parse_device(&text).ok_or_else(|| {
            TfError::Value(format!(
                "Device {text:?} is not a device name TensorFlow understands.\nHint: write \
                 devices as '/gpu:0' or '/cpu:0'; tf.config.list_logical_devices() lists them."
            ))
        })?;
        texts.push(text);
        wanted.push(dev);
    }
    let first_kind = wanted.first().map(|d| d.0);
    let mixed = wanted
        .iter()
        .zip(&texts)
        .find(|(d, _)| Some(d.0) != first_kind);
    if let (Some((_, other)), Some(first)) = (mixed, texts.first()) {
        return Err(TfError::Value(format!(
            "MirroredStrategy cannot mix CPU and GPU devices ({first:?} and {other:?}): every \
             replica must compute the same way so that the mirrored variables stay \
             identical.\nHint: pass only GPUs (tf.config.list_logical_devices('GPU')) or only \
             CPUs (tf.config.list_logical_devices('CPU'))."
        ))
        .into());
    }
    let available = engine_devices(ctx);
    let mut out: Vec<EngineDevice> = vec![];
    for (text, (ty, index)) in texts.iter().zip(&wanted) {
        if out
            .iter()
            .any(|d| d.kind.as_str() == *ty && d.index == *index)
        {
            let shown: Vec<String> = items.iter().map(|v| ctx.repr(v)).collect::<PyResult<_>>()?;
            return Err(TfError::Value(format!(
                "No duplicates allowed in `devices` argument: [{}]",
                shown.join(", ")
            ))
            .into());
        }
        match available
            .iter()
            .find(|d| d.kind.as_str() == *ty && d.index == *index)
        {
            Some(d) => out.push(d.clone()),
            None => return Err(missing_device(text, ty, &available).into()),
        }
    }
    Ok(out)
}

/// The error for a device name that parses but names no logical device of this kernel.
fn missing_device(text: &str, ty: &str, available: &[EngineDevice]) -> TfError {
    let same: Vec<String> = available
        .iter()
        .filter(|d| d.kind.as_str() == ty)
        .map(|d| format!("'/{}'", d.short_name().to_lowercase()))
        .collect();
    let listed = if same.is_empty() {
        "none".to_string()
    } else {
        same.join(", ")
    };
    if ty == "GPU" {
        let physical = super::config::physical_gpu_count();
        TfError::Value(format!(
            "Device {text:?} does not exist: this machine has {physical} GPU{} (logical GPU \
             devices: {listed}).\nHint: tf.config.list_physical_devices('GPU') lists the GPUs \
             that exist and tf.config.list_logical_devices('GPU') the devices a strategy can \
             use; MirroredStrategy() without `devices` takes every GPU, or the CPU when there \
             is none.",
            if physical == 1 { "" } else { "s" }
        ))
    } else {
        TfError::Value(format!(
            "Device {text:?} does not exist (logical CPU devices: {listed}).\nHint: \
             tf.config.list_logical_devices('CPU') lists them; split the CPU with \
             tf.config.set_logical_device_configuration to get more."
        ))
    }
}

/// Every GPU when there is one, else every logical CPU: the devices a default
/// `MirroredStrategy()` mirrors over.
fn default_devices(ctx: &mut dyn Ctx) -> Vec<EngineDevice> {
    let all = engine_devices(ctx);
    let gpus: Vec<EngineDevice> = all
        .iter()
        .filter(|d| d.kind == DeviceKind::Gpu)
        .cloned()
        .collect();
    if gpus.is_empty() {
        all.into_iter()
            .filter(|d| d.kind == DeviceKind::Cpu)
            .collect()
    } else {
        gpus
    }
}

fn make(kind: StrategyKind, engine: Vec<EngineDevice>, ops: Option<String>) -> Value {
    Value::native(Strategy::new(kind, engine, ops))
}

fn cross_ops_name(slot: &Option<Value>) -> PyResult<Option<String>> {
    match given(slot) {
        None => Ok(None),
        Some(v) => match v.downcast::<CrossDeviceOps>() {
            Some(c) => Ok(Some(c.name.to_string())),
            None => Err(TfError::Value(format!(
                "cross_device_ops must be a tf.distribute.CrossDeviceOps (NcclAllReduce, \
                 HierarchicalCopyAllReduce or ReductionToOneDevice), not {}",
                v.type_name()
            ))
            .into()),
        },
    }
}

fn mirrored(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("MirroredStrategy", &["devices", "cross_device_ops"], 0)?;
    let devices = match given(&s[0]) {
        None => default_devices(ctx),
        Some(v) => {
            let items = match v.as_seq() {
                Some(items) => items,
                None => ctx.iterate(v)?,
            };
            if items.is_empty() {
                return Err(TfError::Value("Must specify at least one device.".into()).into());
            }
            named_devices(&items, ctx)?
        }
    };
    let ops = cross_ops_name(&s[1])?;
    let names: Vec<String> = devices
        .iter()
        .map(|d| full_device_name(d.kind.as_str(), d.index))
        .collect();
    super::tf_log(
        ctx,
        20,
        &format!(
            "Using MirroredStrategy with devices {}",
            devices_tuple_text(&names)
        ),
    );
    Ok(make(StrategyKind::Mirrored, devices, ops))
}

fn one_device(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("OneDeviceStrategy", &["device"], 1)?;
    let v = s[0].clone().unwrap_or(Value::None);
    let devices = named_devices(&[v], ctx)?;
    Ok(make(StrategyKind::OneDevice, devices, None))
}

/// The worker count TF_CONFIG describes (`cluster.worker` plus a `chief`), if it is set.
fn tf_config_workers() -> Option<usize> {
    let text = std::env::var("TF_CONFIG").ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let cluster = json.get("cluster")?;
    let count = |k: &str| {
        cluster
            .get(k)
            .and_then(|v| v.as_array())
            .map_or(0, |a| a.len())
    };
    Some(count("worker") + count("chief"))
}

fn multi_worker(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    args.bind(
        "MultiWorkerMirroredStrategy",
        &["cluster_resolver", "communication_options"],
        0,
    )?;
    if tf_config_workers().is_some_and(|n| n > 1) {
        return Err(TfError::NotImplemented(
            "TF_CONFIG describes a cluster of several workers; this kernel trains on the \
             devices of one machine.\nHint: use tf.distribute.MirroredStrategy() on this \
             machine, or unset TF_CONFIG to run MultiWorkerMirroredStrategy as one local worker."
                .into(),
        )
        .into());
    }
    let devices = default_devices(ctx);
    let local: Vec<String> = devices
        .iter()
        .map(|d| format!("/device:{}", d.short_name()))
        .collect();
    print_line(
        ctx,
        &format!(
            "INFO:tensorflow:Single-worker MultiWorkerMirroredStrategy with local_devices = {}, \
             communication = CommunicationImplementation.AUTO",
            devices_tuple_text(&local)
        ),
    );
    Ok(make(StrategyKind::MultiWorkerMirrored, devices, None))
}

fn tpu(_args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    Err(TfError::Value(
        "Please provide a TPU Name to connect to.\nHint: TPUStrategy needs Cloud TPU hardware; \
         this kernel trains on GPUs or CPU threads: use tf.distribute.MirroredStrategy() for \
         the devices of one machine."
            .into(),
    )
    .into())
}

fn parameter_server(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    if args.pos.is_empty() && !args.kw.iter().any(|(k, _)| k == "cluster_resolver") {
        return Err(TfError::Type(
            "ParameterServerStrategyV2.__init__() missing 1 required positional argument: \
             'cluster_resolver'\nHint: parameter-server training needs a cluster of ps and \
             worker machines; on one machine use tf.distribute.MirroredStrategy()."
                .into(),
        )
        .into());
    }
    Err(TfError::Value(
        "ParameterServerStrategy needs a cluster with \"ps\" and \"worker\" jobs, which this \
         kernel does not run.\nHint: for synchronous data-parallel training on one machine use \
         tf.distribute.MirroredStrategy()."
            .into(),
    )
    .into())
}

/// `NcclAllReduce`, `HierarchicalCopyAllReduce`, `ReductionToOneDevice`: accepted and shown;
/// the engine picks the all-reduce that fits the devices it has.
pub struct CrossDeviceOps {
    pub name: &'static str,
}

impl Object for CrossDeviceOps {
    fn type_name(&self) -> String {
        self.name.into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.distribute.cross_device_ops.{} object at {}>",
            self.name,
            address_of(self)
        ))
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.name.into(), "CrossDeviceOps".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn cross_ops_class(name: &'static str, params: &'static [&'static str]) -> Value {
    NativeClass::new(name, "tensorflow.python.distribute.cross_device_ops", "")
        .base("CrossDeviceOps")
        .constructor(move |args, _ctx| {
            args.bind(name, params, 0)?;
            Ok(Value::native(CrossDeviceOps { name }))
        })
        .into_value()
}

fn class(name: &str, doc: &str, body: fn(&Args, &mut dyn Ctx) -> PyResult<Value>) -> Value {
    NativeClass::new(name, "tensorflow.python.distribute", doc)
        .base("Strategy")
        .constructor(body)
        .into_value()
}

/// `tf.distribute`.
pub fn module() -> Value {
    let mirrored_cls = class(
        "MirroredStrategy",
        "MirroredStrategy(devices=None, cross_device_ops=None)\n\nSynchronous training with \
         one replica per device (all GPUs, else all logical CPUs) and a gradient all-reduce \
         every step.",
        mirrored,
    );
    let mwms = class(
        "MultiWorkerMirroredStrategy",
        "MultiWorkerMirroredStrategy(cluster_resolver=None, communication_options=None)",
        multi_worker,
    );
    let ps = class("ParameterServerStrategy", "", parameter_server);
    let tpu_cls = class("TPUStrategy", "", tpu);
    let experimental = NativeModule::new("tensorflow.distribute.experimental", "")
        .with("MultiWorkerMirroredStrategy", mwms.clone())
        .with("ParameterServerStrategy", ps.clone())
        .with("TPUStrategy", tpu_cls.clone())
        .with(
            "CentralStorageStrategy",
            class("CentralStorageStrategy", "", parameter_server),
        );
    let f = super::func;
    NativeModule::new("tensorflow.distribute", "Distribution strategies.")
        .with("MirroredStrategy", mirrored_cls)
        .with(
            "OneDeviceStrategy",
            class("OneDeviceStrategy", "OneDeviceStrategy(device)", one_device),
        )
        .with("MultiWorkerMirroredStrategy", mwms)
        .with("TPUStrategy", tpu_cls)
        .with("ParameterServerStrategy", ps)
        .with(
            "Strategy",
            NativeClass::new(
                "Strategy",
                "tensorflow.python.distribute.distribute_lib",
                "",
            )
            .into_value(),
        )
        .with(
            "NcclAllReduce",
            cross_ops_class("NcclAllReduce", &["num_packs"]),
        )
        .with(
            "HierarchicalCopyAllReduce",
            cross_ops_class("HierarchicalCopyAllReduce", &["num_packs"]),
        )
        .with(
            "ReductionToOneDevice",
            cross_ops_class(
                "ReductionToOneDevice",
                &["reduce_to_device", "accumulation_fn"],
            ),
        )
        .with("ReduceOp", Value::native(ReduceOpEnum))
        .with(
            "get_strategy",
            f("get_strategy", "get_strategy()", |a, ctx| {
                a.bind("get_strategy", &[], 0)?;
                Ok(current_or_default(ctx))
            }),
        )
        .with(
            "has_strategy",
            f("has_strategy", "has_strategy()", |a, ctx| {
                a.bind("has_strategy", &[], 0)?;
                Ok(Value::Bool(
                    super::distribute::active_strategy(ctx).is_some(),
                ))
            }),
        )
        .with(
            "in_cross_replica_context",
            f("in_cross_replica_context", "", |_, ctx| {
                let st = &ctx.state().get::<TfState>().dist;
                Ok(Value::Bool(
                    !st.stack.is_empty() && replica_context(ctx).is_none(),
                ))
            }),
        )
        .with(
            "get_replica_context",
            f("get_replica_context", "", |_, ctx| Ok(replica_context(ctx))),
        )
        .with("experimental", experimental.into_value())
        .into_value()
}
