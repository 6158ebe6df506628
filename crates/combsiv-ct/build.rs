//! Compiles the memcheck client-request shim (valgrind's macros are C preprocessor code).

fn main() {
    println!("cargo::rerun-if-changed=src/memcheck.c");
    cc::Build::new()
        .file("src/memcheck.c")
        .compile("combsiv_memcheck");
}
