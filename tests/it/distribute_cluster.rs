//! The cluster as TensorFlow reads it, against TF 2.21's own output
//! (tests/fixtures/tf/cluster_reference.json, written by make_cluster_reference.py beside it):
//! `TF_CONFIG` set in `os.environ` as the multi-worker tutorial sets it,
//! `TFConfigClusterResolver` and its `ClusterSpec`, TF's errors for a malformed `TF_CONFIG`,
//! `CommunicationOptions` / `CommunicationImplementation`, and a `MultiWorkerMirroredStrategy`
//! made on a cluster (its resolver, replicas over every worker, which worker checkpoints).
//! Making the strategy joins no collective (the first model built does), so one session per
//! cell suffices, as one process per cell did in TF.

use crate::common::cells::{every_cell_matches, stdout_and_displays, Fixture};

#[test]
fn the_cluster_reads_as_tensorflow_reads_it() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/tf/cluster_reference.json",
        tol: 0.0,
        warnings: "WARNING:tensorflow:",
        printed: stdout_and_displays,
    });
}
