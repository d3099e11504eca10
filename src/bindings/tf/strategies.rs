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
use super::enums::{member_of, EnumClass, EnumValue};
use super::values::ReduceOpEnum;
use super::{address_of, bound, given, TfError, TfState};
use crate::bindings::stdlib::session_env;
use crate::device::DeviceKind;
use crate::distribute::cluster::{ClusterError, ClusterSpec, TfConfig};
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

/// `TF_CONFIG` as the session sees it (`os.environ`, else the process's environment), parsed
/// as TensorFlow parses it: text that is not JSON is CPython's `JSONDecodeError`, a job whose
/// tasks are not a list TF's `TypeError`. Unset, it is an empty cluster.
pub fn tf_config(ctx: &mut dyn Ctx) -> PyResult<TfConfig> {
    let text = session_env(ctx, "TF_CONFIG").unwrap_or_else(|| "{}".into());
    let doc: serde_json::Value = match serde_json::from_str(&text) {
        Ok(doc) => doc,
        // CPython's parser words the error (and places it) as TF's `json.loads` does.
        Err(e) => {
            crate::bindings::stdlib::json::loads_text(&Value::from(text))?;
            return Err(TfError::Value(format!("TF_CONFIG is not JSON: {e}")).into());
        }
    };
    TfConfig::from_json(&doc).map_err(cluster_error)
}

fn cluster_error(e: ClusterError) -> crate::lang::PyErr {
    match e {
        ClusterError::Type(text) => TfError::Type(text).into(),
        ClusterError::Value(text) => TfError::Value(text).into(),
    }
}

/// `tf.distribute.experimental.CommunicationImplementation`.
pub const COMMUNICATION: EnumClass = EnumClass {
    name: "CommunicationImplementation",
    members: &[
        ("AUTO", EnumValue::Str("AUTO")),
        ("RING", EnumValue::Str("RING")),
        ("NCCL", EnumValue::Str("NCCL")),
    ],
};

/// `tf.distribute.experimental.CommunicationOptions`: which collective implementation the
/// cross-worker all-reduce uses. The engine picks the one that fits the devices (the CPU
/// collective for CPUs, NCCL for GPUs), which is what `AUTO` means in TF; `RING` and `NCCL`
/// are accepted and shown.
pub struct CommunicationOptions {
    pub implementation: &'static str,
    pub bytes_per_pack: i64,
    pub timeout_seconds: Option<f64>,
}

impl Object for CommunicationOptions {
    fn type_name(&self) -> String {
        "Options".into()
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "implementation" => COMMUNICATION.member(self.implementation),
            "bytes_per_pack" => Some(Value::Int(self.bytes_per_pack)),
            "timeout_seconds" => Some(self.timeout_seconds.map_or(Value::None, Value::Float)),
            _ => None,
        })
    }
    fn dir(&self) -> Vec<String> {
        ["implementation", "bytes_per_pack", "timeout_seconds"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["Options".into(), "_OptionsExported".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn communication_options(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "CommunicationOptions",
        &["bytes_per_pack", "timeout_seconds", "implementation"],
        0,
    )?;
    let bytes_per_pack = match given(&s[0]) {
        None => 0,
        Some(v) => v.as_int()?,
    };
    if bytes_per_pack < 0 {
        return Err(TfError::Value(format!(
            "Argument `bytes_per_pack` must be >=0, Received {bytes_per_pack}."
        ))
        .into());
    }
    let timeout_seconds = match given(&s[1]) {
        None => None,
        Some(Value::Int(i)) => Some(*i as f64),
        Some(Value::Float(f)) => Some(*f),
        Some(v) => {
            return Err(TfError::Type(format!(
                "timeout_seconds must be a number, not {}",
                v.type_name()
            ))
            .into())
        }
    };
    let implementation = match given(&s[2]) {
        None => "AUTO",
        // TF takes a member's name in any case (`"ring"`), through the enum's own lookup.
        Some(Value::Str(name)) => {
            let member = COMMUNICATION.call(
                &Value::None,
                Args::new(vec![Value::from(name.to_uppercase())]),
                ctx,
            )?;
            member_of(&member, &COMMUNICATION).unwrap_or("AUTO")
        }
        Some(v) => member_of(v, &COMMUNICATION).ok_or_else(|| {
            TfError::Value(
                "Argument `implementation` must be instance of \
                 `tf.distribute.experimental.CommunicationImplementation`."
                    .into(),
            )
        })?,
    };
    Ok(Value::native(CommunicationOptions {
        implementation,
        bytes_per_pack,
        timeout_seconds,
    }))
}

/// `tf.distribute.cluster_resolver.TFConfigClusterResolver`: reads `TF_CONFIG` at every
/// access, as TF does, with the task type, id and rpc layer given to the constructor taking
/// precedence.
pub struct TfConfigResolver {
    task_type: Option<String>,
    task_id: Option<usize>,
    rpc_layer: Option<String>,
    environment: Option<String>,
}

impl TfConfigResolver {
    /// The cluster and this task, with the constructor's overrides applied.
    pub fn config(&self, ctx: &mut dyn Ctx) -> PyResult<TfConfig> {
        let mut c = tf_config(ctx)?;
        if self.task_type.is_some() {
            c.task_type = self.task_type.clone();
        }
        if self.task_id.is_some() {
            c.task_id = self.task_id;
        }
        if self.rpc_layer.is_some() {
            c.rpc_layer = self.rpc_layer.clone();
        }
        Ok(c)
    }
}

fn opt_str(v: &Option<String>) -> Value {
    v.as_deref().map_or(Value::None, Value::str)
}

fn opt_text(slot: &Option<Value>) -> PyResult<Option<String>> {
    given(slot).map(|v| Ok(v.as_str()?.to_string())).transpose()
}

fn opt_index(slot: &Option<Value>) -> PyResult<Option<usize>> {
    given(slot)
        .map(|v| {
            let i = v.as_int()?;
            usize::try_from(i).map_err(|_| {
                TfError::Value(format!("task_id must be non-negative, got {i}")).into()
            })
        })
        .transpose()
}

impl Object for TfConfigResolver {
    fn type_name(&self) -> String {
        "TFConfigClusterResolver".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.distribute.cluster_resolver.tfconfig_cluster_resolver.\
             TFConfigClusterResolver object at {}>",
            address_of(self)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "task_type" => opt_str(&self.config(ctx)?.task_type),
            "task_id" => self
                .config(ctx)?
                .task_id
                .map_or(Value::None, |i| Value::Int(i as i64)),
            "rpc_layer" => opt_str(&self.config(ctx)?.rpc_layer),
            "environment" => opt_str(&self.environment),
            "cluster_spec" => bound::<TfConfigResolver>(this, "cluster_spec", |r, _, a, c| {
                a.bind("cluster_spec", &[], 0)?;
                Ok(Value::native(ClusterSpecObj(r.config(c)?.cluster)))
            }),
            "master" => bound::<TfConfigResolver>(this, "master", |r, _, a, c| {
                let s = a.bind("master", &["task_type", "task_id", "rpc_layer"], 0)?;
                let mut config = r.config(c)?;
                if let Some(t) = opt_text(&s[0])? {
                    config.task_type = Some(t);
                }
                if let Some(i) = opt_index(&s[1])? {
                    config.task_id = Some(i);
                }
                let layer = opt_text(&s[2])?;
                Ok(Value::from(
                    config.master(layer.as_deref()).map_err(cluster_error)?,
                ))
            }),
            "num_accelerators" => {
                bound::<TfConfigResolver>(this, "num_accelerators", |_, _, a, _| {
                    a.bind(
                        "num_accelerators",
                        &["task_type", "task_id", "config_proto"],
                        0,
                    )?;
                    let gpus = super::config::physical_gpu_count();
                    let pairs = if gpus > 0 {
                        vec![("GPU", Value::Int(gpus as i64))]
                    } else {
                        vec![]
                    };
                    Ok(Value::dict_from(pairs))
                })
            }
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        [
            "cluster_spec",
            "environment",
            "master",
            "num_accelerators",
            "rpc_layer",
            "task_id",
            "task_type",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["TFConfigClusterResolver".into(), "ClusterResolver".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn tf_config_resolver(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "TFConfigClusterResolver",
        &["task_type", "task_id", "rpc_layer", "environment"],
        0,
    )?;
    Ok(Value::native(TfConfigResolver {
        task_type: opt_text(&s[0])?,
        task_id: opt_index(&s[1])?,
        rpc_layer: opt_text(&s[2])?,
        environment: opt_text(&s[3])?,
    }))
}

/// `tf.train.ClusterSpec` as a resolver returns it.
pub struct ClusterSpecObj(pub ClusterSpec);

impl ClusterSpecObj {
    fn as_dict(&self) -> Value {
        let mut d = crate::lang::Dict::default();
        for (job, tasks) in &self.0.jobs {
            d.insert_str(
                job,
                Value::list(tasks.iter().map(|t| Value::str(t)).collect()),
            );
        }
        Value::Dict(std::rc::Rc::new(std::cell::RefCell::new(d)))
    }
    fn job<'a>(&'a self, args: &Args, name: &str) -> PyResult<(String, &'a [String])> {
        let s = args.bind(name, &["job_name"], 1)?;
        let job = s[0].clone().unwrap_or(Value::None).as_str()?.to_string();
        match self.0.jobs.get(&job) {
            Some(tasks) => Ok((job, tasks.as_slice())),
            None => Err(TfError::Value(format!("No such job in cluster: '{job}'")).into()),
        }
    }
}

impl Object for ClusterSpecObj {
    fn type_name(&self) -> String {
        "ClusterSpec".into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("ClusterSpec({})", ctx.repr(&self.as_dict())?))
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        Ok(Some(!self.0.jobs.is_empty()))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "jobs" => Value::list(self.0.order.iter().map(|j| Value::str(j)).collect()),
            "as_dict" => bound::<ClusterSpecObj>(this, "as_dict", |c, _, a, _| {
                a.bind("as_dict", &[], 0)?;
                Ok(c.as_dict())
            }),
            "num_tasks" => bound::<ClusterSpecObj>(this, "num_tasks", |c, _, a, _| {
                Ok(Value::Int(c.job(a, "num_tasks")?.1.len() as i64))
            }),
            "task_indices" => bound::<ClusterSpecObj>(this, "task_indices", |c, _, a, _| {
                let n = c.job(a, "task_indices")?.1.len();
                Ok(Value::list((0..n as i64).map(Value::Int).collect()))
            }),
            "job_tasks" => bound::<ClusterSpecObj>(this, "job_tasks", |c, _, a, _| {
                let tasks = c.job(a, "job_tasks")?.1;
                Ok(Value::list(tasks.iter().map(|t| Value::str(t)).collect()))
            }),
            "task_address" => bound::<ClusterSpecObj>(this, "task_address", |c, _, a, _| {
                let s = a.bind("task_address", &["job_name", "task_index"], 2)?;
                let job = s[0].clone().unwrap_or(Value::None).as_str()?.to_string();
                let index = opt_index(&s[1])?.unwrap_or(0);
                let address = c.0.task_address(&job, index).map_err(cluster_error)?;
                Ok(Value::str(address))
            }),
            _ => return Ok(None),
        }))
    }
    fn dir(&self) -> Vec<String> {
        [
            "as_dict",
            "job_tasks",
            "jobs",
            "num_tasks",
            "task_address",
            "task_indices",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `MultiWorkerMirroredStrategy(cluster_resolver=None, communication_options=None)`: one
/// replica per local device on every worker `TF_CONFIG` (or the given resolver) names. The
/// cross-worker collective is joined when the first model is built under the strategy, as
/// TF joins it at the first collective; constructing it connects to nothing.
fn multi_worker(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "MultiWorkerMirroredStrategy",
        &["cluster_resolver", "communication_options"],
        0,
    )?;
    let resolver = match given(&s[0]) {
        None => Value::native(TfConfigResolver {
            task_type: None,
            task_id: None,
            rpc_layer: None,
            environment: None,
        }),
        Some(v) if v.downcast::<TfConfigResolver>().is_some() => v.clone(),
        Some(v) => {
            return Err(TfError::Value(format!(
                "cluster_resolver must be a tf.distribute.cluster_resolver.\
                 TFConfigClusterResolver, not {}",
                v.type_name()
            ))
            .into())
        }
    };
    let (implementation, timeout) = match given(&s[1]) {
        None => ("AUTO", None),
        Some(v) => match v.downcast::<CommunicationOptions>() {
            Some(o) => (
                o.implementation,
                o.timeout_seconds
                    .filter(|t| t.is_finite() && *t > 0.0)
                    .map(std::time::Duration::from_secs_f64),
            ),
            None => {
                return Err(TfError::Value(
                    "communication_options must be an instance of \
                     tf.distribute.experimental.CommunicationOptions"
                        .into(),
                )
                .into())
            }
        },
    };
    let config = match resolver.downcast::<TfConfigResolver>() {
        Some(r) => r.config(ctx)?,
        None => TfConfig::default(),
    };
    let devices = default_devices(ctx);
    let workers = config.cluster.num_workers();
    if workers > 1 {
        if config.worker_rank().is_none() {
            // TF's error for an index the job lacks, else ours for a task outside the workers.
            config.master(None).map_err(cluster_error)?;
            return Err(TfError::Value(format!(
                "MultiWorkerMirroredStrategy trains on the cluster's chief and worker tasks, \
                 but TF_CONFIG's task is {:?} {:?}.\nHint: set \"task\": {{\"type\": \
                 \"worker\", \"index\": i}} with i below the number of workers ({workers}).",
                config.task_type, config.task_id
            ))
            .into());
        }
        let ty = config.task_type.clone().unwrap_or_default();
        let id = config.task_id.unwrap_or_default();
        let local: Vec<String> = devices
            .iter()
            .map(|d| format!("/job:{ty}/task:{id}/device:{}", d.short_name()))
            .collect();
        let spec = ctx.repr(&ClusterSpecObj(config.cluster.clone()).as_dict())?;
        super::tf_log(
            ctx,
            20,
            &format!(
                "MultiWorkerMirroredStrategy with cluster_spec = {spec}, \
                 task_type = '{ty}', task_id = {id}, num_workers = {workers}, local_devices = \
                 {}, communication = CommunicationImplementation.{implementation}",
                devices_tuple_text(&local)
            ),
        );
    } else {
        let local: Vec<String> = devices
            .iter()
            .map(|d| format!("/device:{}", d.short_name()))
            .collect();
        super::tf_log(
            ctx,
            20,
            &format!(
                "Single-worker MultiWorkerMirroredStrategy with local_devices = \
                 {}, communication = CommunicationImplementation.{implementation}",
                devices_tuple_text(&local)
            ),
        );
    }
    let strategy = Strategy::new(StrategyKind::MultiWorkerMirrored, devices, None).in_cluster(
        resolver,
        config,
        implementation,
        timeout,
    );
    Ok(Value::native(strategy))
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
            "CommunicationOptions",
            NativeClass::new(
                "CommunicationOptions",
                "tensorflow.python.distribute.collective_util",
                "CommunicationOptions(bytes_per_pack=0, timeout_seconds=None, \
                 implementation=CommunicationImplementation.AUTO)",
            )
            .constructor(communication_options)
            .into_value(),
        )
        .with("CommunicationImplementation", Value::native(COMMUNICATION))
        .with("CollectiveCommunication", Value::native(COMMUNICATION))
        .with(
            "CentralStorageStrategy",
            class("CentralStorageStrategy", "", parameter_server),
        );
    let resolver_cls = NativeClass::new(
        "TFConfigClusterResolver",
        "tensorflow.python.distribute.cluster_resolver.tfconfig_cluster_resolver",
        "TFConfigClusterResolver(task_type=None, task_id=None, rpc_layer=None, \
         environment=None)\n\nThe cluster and this task from the TF_CONFIG environment \
         variable.",
    )
    .base("ClusterResolver")
    .constructor(tf_config_resolver)
    .into_value();
    let cluster_resolver = NativeModule::new("tensorflow.distribute.cluster_resolver", "")
        .with("TFConfigClusterResolver", resolver_cls);
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
        .with("cluster_resolver", cluster_resolver.into_value())
        .into_value()
}
