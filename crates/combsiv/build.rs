//! `cfg(vector_tiers)`: the target architecture has vector tiers (AES and carry-less
//! multiplication instructions with kernels of their own in `src/cpu/<arch>`), so the generic
//! kernels of `aes`, `field`, `aead` and `comb` are compiled. Elsewhere only the portable
//! backend exists. A new architecture's tiers add it here and nowhere outside `src/cpu`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(vector_tiers)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch == "x86_64" || arch == "aarch64" {
        println!("cargo::rustc-cfg=vector_tiers");
    }
}
