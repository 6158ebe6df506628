//! `cfg(vector_tiers)` exactly where combsiv-core has it: the comb engine's generic kernels
//! are compiled where the core has vector tiers (its build script decides, and passes the
//! answer up as `DEP_COMBSIV_CORE_VECTOR_TIERS`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(vector_tiers)");
    if std::env::var_os("DEP_COMBSIV_CORE_VECTOR_TIERS").is_some() {
        println!("cargo::rustc-cfg=vector_tiers");
    }
}
