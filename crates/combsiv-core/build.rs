//! `cfg(vector_tiers)`: the target architecture has vector tiers (AES and carry-less
//! multiplication instructions with kernels of their own in `src/cpu/<arch>`), so the generic
//! kernels of `aes`, `field` and `aead` (and combsiv-modes' `comb`) are compiled. Elsewhere
//! only the portable backend exists. A new architecture's tiers add it here and nowhere outside `src/cpu`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(vector_tiers)");
    // `cfg(all(test, owns_test_tier))`: code that `per_tier!` expands into this crate's own
    // unit tests, the only build with the test-only tier (the crates above expand it too).
    println!("cargo::rustc-check-cfg=cfg(owns_test_tier)");
    println!("cargo::rustc-cfg=owns_test_tier");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch == "x86_64" || arch == "aarch64" {
        println!("cargo::rustc-cfg=vector_tiers");
        // For the build scripts of the crates above (`DEP_COMBSIV_CORE_VECTOR_TIERS`).
        println!("cargo::metadata=vector_tiers=1");
    }
}
