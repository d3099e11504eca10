//! The cluster as TensorFlow reads it from `TF_CONFIG`: the jobs (`chief`, `worker`, ...) with
//! their task addresses, this process's task (`type`, `index`), and what follows from them for
//! `MultiWorkerMirroredStrategy` (how many workers train, this worker's rank among them, which
//! one is the chief). Plain data parsed from JSON: it never opens a connection and never
//! imports the language; the bindings turn its errors into TensorFlow's exceptions.

use std::collections::BTreeMap;

/// `ClusterSpec`: each job's task addresses, by job name (sorted, as TF's `as_dict` shows
/// them), and the job names in the order `TF_CONFIG` gave them (as TF's `jobs` lists them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterSpec {
    pub jobs: BTreeMap<String, Vec<String>>,
    pub order: Vec<String>,
}

/// What `TF_CONFIG` says: the cluster and this process's task within it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TfConfig {
    pub cluster: ClusterSpec,
    pub task_type: Option<String>,
    pub task_id: Option<usize>,
    pub rpc_layer: Option<String>,
}

/// Why a `TF_CONFIG` cannot describe a cluster, as TensorFlow words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterError {
    /// TF raises `TypeError` for a job whose tasks are neither a list nor a dict.
    Type(String),
    /// TF raises `ValueError` for a task index the job does not have.
    Value(String),
}

/// The jobs whose tasks train under `MultiWorkerMirroredStrategy`, in rank order: the chief
/// first, then the workers, as TF's collective ranks them.
const TRAINING_JOBS: [&str; 2] = ["chief", "worker"];

impl ClusterSpec {
    /// The addresses of a job's tasks (empty for a job the cluster lacks).
    pub fn tasks(&self, job: &str) -> &[String] {
        self.jobs.get(job).map_or(&[], Vec::as_slice)
    }

    /// The address of task `index` of `job`: TF's `ValueError` when there is none.
    pub fn task_address(&self, job: &str, index: usize) -> Result<&str, ClusterError> {
        match self.jobs.get(job) {
            None => Err(ClusterError::Value(format!(
                "No such job in cluster: '{job}'"
            ))),
            Some(tasks) => tasks.get(index).map(String::as_str).ok_or_else(|| {
                ClusterError::Value(format!("No task with index {index} in job '{job}'"))
            }),
        }
    }

    /// How many processes train: the chief (if any) and every worker.
    pub fn num_workers(&self) -> usize {
        TRAINING_JOBS.iter().map(|j| self.tasks(j).len()).sum()
    }

    /// The training processes' addresses in rank order (chief, then workers).
    pub fn worker_addresses(&self) -> Vec<String> {
        TRAINING_JOBS
            .iter()
            .flat_map(|j| self.tasks(j).iter().cloned())
            .collect()
    }
}

impl TfConfig {
    /// Parses `TF_CONFIG`'s JSON document (already decoded). A missing `cluster` or `task` is
    /// an empty cluster or no task, as in TF; a job's tasks may be a list or a dict from
    /// indices to addresses.
    pub fn from_json(doc: &serde_json::Value) -> Result<TfConfig, ClusterError> {
        let mut cluster = ClusterSpec::default();
        if let Some(jobs) = doc.get("cluster").and_then(|c| c.as_object()) {
            for (job, tasks) in jobs {
                cluster.jobs.insert(job.clone(), job_tasks(job, tasks)?);
                cluster.order.push(job.clone());
            }
        }
        let task = doc.get("task");
        let task_type = task
            .and_then(|t| t.get("type"))
            .and_then(|v| v.as_str())
            .map(str::to_string);
        let task_id = task.and_then(|t| t.get("index")).and_then(index_of);
        let rpc_layer = doc
            .get("rpc_layer")
            .and_then(|v| v.as_str())
            .map(str::to_string);
        Ok(TfConfig {
            cluster,
            task_type,
            task_id,
            rpc_layer,
        })
    }

    /// `TFConfigClusterResolver.master()`: this task's address (with `rpc_layer://` in front
    /// when one is given), or `""` when the task is not a task of the cluster's jobs.
    pub fn master(&self, rpc_layer: Option<&str>) -> Result<String, ClusterError> {
        let (Some(ty), Some(id)) = (self.task_type.as_deref(), self.task_id) else {
            return Ok(String::new());
        };
        if !self.cluster.jobs.contains_key(ty) {
            return Ok(String::new());
        }
        let address = self.cluster.task_address(ty, id)?;
        Ok(match rpc_layer.or(self.rpc_layer.as_deref()) {
            Some(layer) if !layer.is_empty() => format!("{layer}://{address}"),
            _ => address.to_string(),
        })
    }

    /// This process's rank among the training processes (the chief is 0, then the workers),
    /// when its task is one of them and exists.
    pub fn worker_rank(&self) -> Option<usize> {
        let (ty, id) = (self.task_type.as_deref()?, self.task_id?);
        let mut offset = 0;
        for job in TRAINING_JOBS {
            let n = self.cluster.tasks(job).len();
            if job == ty {
                return (id < n).then_some(offset + id);
            }
            offset += n;
        }
        None
    }

    /// Whether this task is the chief: the `chief` task when the cluster has one, else worker
    /// 0 (TF's `multi_worker_util.is_chief`); a process without a cluster is its own chief.
    pub fn is_chief(&self) -> bool {
        if self.cluster.num_workers() == 0 {
            return true;
        }
        match (self.task_type.as_deref(), self.task_id) {
            (Some("chief"), _) => true,
            (Some("worker"), Some(0)) => self.cluster.tasks("chief").is_empty(),
            _ => false,
        }
    }
}

/// A job's tasks: a list of addresses, or a dict from indices to addresses (holes left out).
fn job_tasks(job: &str, tasks: &serde_json::Value) -> Result<Vec<String>, ClusterError> {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match tasks {
        serde_json::Value::Array(items) => Ok(items.iter().map(text).collect()),
        serde_json::Value::Object(map) => {
            let mut indexed: Vec<(usize, String)> = map
                .iter()
                .filter_map(|(k, v)| Some((k.parse().ok()?, text(v))))
                .collect();
            indexed.sort();
            Ok(indexed.into_iter().map(|(_, a)| a).collect())
        }
        _ => Err(ClusterError::Type(format!(
            "The tasks for job '{job}' must be a list or a dictionary from integers to strings."
        ))),
    }
}

/// A task index as TF accepts it: a whole number, or a string holding one.
fn index_of(v: &serde_json::Value) -> Option<usize> {
    match v {
        serde_json::Value::String(s) => s.trim().parse().ok(),
        other => other.as_u64().and_then(|n| usize::try_from(n).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> TfConfig {
        let doc: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        TfConfig::from_json(&doc).unwrap_or_default()
    }

    #[test]
    fn ranks_put_the_chief_first_then_the_workers() {
        let c = config(
            r#"{"cluster": {"worker": ["w0:1", "w1:2"], "chief": ["c:0"]},
                "task": {"type": "worker", "index": 1}}"#,
        );
        assert_eq!(c.cluster.num_workers(), 3);
        assert_eq!(c.worker_rank(), Some(2));
        assert!(!c.is_chief());
        assert_eq!(c.cluster.worker_addresses(), ["c:0", "w0:1", "w1:2"]);
        let w0 = config(
            r#"{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 0}}"#,
        );
        assert!(w0.is_chief());
        assert_eq!(w0.worker_rank(), Some(0));
        let out =
            config(r#"{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 4}}"#);
        assert_eq!(out.worker_rank(), None);
        assert!(out.master(None).is_err());
    }
}
