//! The CUDA C kernels compile with NVRTC, and NCCL loads and answers, on any machine that has
//! those libraries, GPU or not (NVRTC and `ncclGetVersion` need no device). Each test skips
//! with a one-line reason when its library is absent.

use mirror_kernel::device::cuda::{
    kernels_cubin, kernels_ptx, nccl_library, nccl_unique_id, nccl_version,
};

#[test]
fn kernels_compile_with_nvrtc() {
    let ptx = match kernels_ptx() {
        Ok(p) => p,
        Err(e) if e.contains("not installed") => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    for name in [
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
    ] {
        assert!(
            ptx.contains(&format!(".entry {name}(")),
            "kernel {name} is missing from the PTX"
        );
    }
}

#[test]
fn kernels_compile_to_native_code() {
    // Turing (the oldest architecture CUDA 13 still targets), Ampere and Hopper.
    for (major, minor) in [(7, 5), (8, 0), (9, 0)] {
        match kernels_cubin(major, minor) {
            Ok(bin) => assert!(
                bin.starts_with(b"\x7fELF"),
                "sm_{major}{minor} is not an ELF"
            ),
            Err(e) if e.contains("not installed") => {
                eprintln!("skipped: {e}");
                return;
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn nccl_loads_by_full_name() {
    let Some(path) = nccl_library() else {
        eprintln!("skipped: NCCL (libnccl.so.2) is not installed");
        return;
    };
    let v = nccl_version().expect("a loaded NCCL reports its version");
    assert!(v >= 2000, "NCCL {v} from {path}");
    let id = nccl_unique_id().expect("a unique id needs no GPU");
    assert!(
        id.iter().any(|b| *b != 0),
        "the id carries the bootstrap address"
    );
}
