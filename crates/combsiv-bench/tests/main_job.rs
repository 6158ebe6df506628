//! README's main command in its shortest form: the benchmark runs on the portable backend and
//! prints every section's table.

#![allow(
    clippy::expect_used,
    reason = "a test that cannot proceed should fail loudly"
)]

use std::process::Command;

#[test]
fn quick_portable_run_prints_every_section() {
    let output = Command::new(env!("CARGO_BIN_EXE_combsiv-bench"))
        .args(["--quick", "--backend", "portable"])
        .output()
        .expect("the benchmark starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    for section in [
        "TSC cycles per byte",
        "| combsiv/portable | AES-128-GCM-SIV | encrypt |",
        "## The comb engine",
        "(c) AES-128-GCM-SIV seal, one message at a time vs seal_batch",
    ] {
        assert!(stdout.contains(section), "no {section:?} in\n{stdout}");
    }
}
