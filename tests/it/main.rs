//! The integration tests: behaviour seen from outside the library, one module per subject
//! (the protocol over loopback sockets, cells through a real session, the engine against
//! Keras's reference numbers, the strategy's N-against-1 equivalence, the CUDA device against
//! the CPU device). They form one test crate so the library is linked once, not once per
//! file; `common` holds what several modules share. GPU modules skip with one line each on
//! a machine without a GPU. The tests that drive the kernel through real Jupyter clients
//! are in `tests/jupyter/`.

mod common;

mod architecture;
mod cuda_bench;
mod cuda_detect;
mod cuda_hostreduce;
mod cuda_kernels;
mod cuda_notebook;
mod cuda_ops;
mod cuda_ops_nn;
mod cuda_replicas;
mod cuda_strategy;
mod display_keras_text;
mod display_plot;
mod distribute_bench;
mod distribute_cluster;
mod distribute_devices;
mod distribute_isolation;
mod distribute_keras;
mod distribute_train;
mod distribute_workers;
mod engine_cifar;
mod engine_datasets;
mod engine_device;
mod engine_gradients;
mod engine_keras_reference;
mod engine_learning;
mod engine_replicas;
mod engine_saving;
mod engine_threads;
mod ipython_binding;
mod keras_backup;
mod keras_callbacks;
mod keras_custom_files;
mod keras_files;
mod keras_fit_access;
mod keras_fit_weights;
mod keras_get_file;
mod keras_graph;
mod keras_graph_files;
mod keras_layers;
mod keras_layers_conv1d;
mod keras_layers_lambda;
mod keras_layers_mask;
mod keras_layers_more;
mod keras_layers_recurrent;
mod keras_layers_sequence;
mod keras_layers_shaping;
mod keras_metrics_compile;
mod keras_metrics_more;
mod keras_multi_output;
mod keras_soft_targets;
mod lang_corpus;
mod lang_natives;
mod lang_session;
mod lang_stdlib;
mod lang_tables;
mod notebooks_run;
mod numpy_binding;
mod numpy_cells;
mod plt_binding;
mod plt_inline;
mod protocol_isolation;
mod protocol_loopback;
mod runner_e2e;
mod runner_outputs;
mod tensor_numpy_reference;
mod tf_checkpoint;
mod tf_custom_loop;
mod tf_data;
mod tf_data_ops;
mod tf_devices;
mod tf_function;
mod tf_gradients;
mod tf_keras_objects;
mod tf_nan;
mod tf_replica_context;
mod tf_saving;
mod tf_session;
mod tf_surface;
