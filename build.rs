//! Compiles the C++ shim over Gloo (src/collective/gloo_shim.cc) when the `gloo` feature is
//! on, and links libgloo (Debian's `libgloo-dev`). Without the feature it does nothing, so the
//! default build needs no C++ library.

fn main() {
    println!("cargo:rerun-if-changed=src/collective/gloo_shim.cc");
    if std::env::var_os("CARGO_FEATURE_GLOO").is_none() {
        return;
    }
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .file("src/collective/gloo_shim.cc")
        .warnings(false)
        .compile("mk_gloo_shim");
    println!("cargo:rustc-link-lib=dylib=gloo");
    println!("cargo:rustc-link-lib=dylib=stdc++");
}
