//! `--format c2sp` and `--range`: C2SP round trips and refusals, `cryptography`'s Cobblestone
//! output decrypted by the binary, and ranges of both formats.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test that cannot proceed should fail loudly"
)]

use std::fs;

mod common;

use common::{Scratch, combsiv, pattern};

/// The key file that holds `key` (32 bytes), in `combsiv keygen`'s format.
fn key_file_text(key: &[u8]) -> String {
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    format!("# combsiv key file v1\n{hex}\n")
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn c2sp_round_trips_files_and_pipes() {
    let scratch = Scratch::new();
    for format in ["c2sp", "c2sp-gcm-siv"] {
        for len in [0, 1, 16_383, 16_384, 16_385, 100_000] {
            fs::write(scratch.path("plain"), pattern(len)).unwrap();
            let c2sp = ["--format", format, "--context", "app v1", "-q", "-f"];
            scratch.run("encrypt", "plain", "sealed", &c2sp).success();
            let sealed = fs::read(scratch.path("sealed")).unwrap();
            assert_eq!(sealed.len(), 56 + len + 16 * (len / 16_384 + 1));
            scratch.run("decrypt", "sealed", "opened", &c2sp).success();
            assert_eq!(fs::read(scratch.path("opened")).unwrap(), pattern(len));
            // Through pipes (in order).
            let piped = combsiv()
                .args(["decrypt", "--format", format, "--context", "app v1", "-k"])
                .arg(scratch.path("key"))
                .write_stdin(sealed)
                .assert()
                .success();
            assert_eq!(piped.get_output().stdout, pattern(len));
        }
    }
}

#[test]
fn decrypts_what_cobblestone_wrote() {
    let vectors: serde_json::Value =
        serde_json::from_str(include_str!("../../combsiv/tests/vectors/c2sp.json")).unwrap();
    let scratch = Scratch::new();
    let mut checked = 0;
    for vector in vectors["from_cryptography"].as_array().unwrap() {
        // Key files hold 32 bytes: the AES-256 (Cobblestone-256) messages.
        if vector["aead"] != "AEAD_AES_256_GCM" {
            continue;
        }
        let key = unhex(vector["key"].as_str().unwrap());
        scratch.write("cobblestone.key", key_file_text(&key).as_bytes());
        fs::write(
            scratch.path("theirs"),
            unhex(vector["ciphertext"].as_str().unwrap()),
        )
        .unwrap();
        let context = String::from_utf8(unhex(vector["context"].as_str().unwrap())).unwrap();
        let len = vector["length"].as_u64().unwrap() as usize;
        combsiv()
            .args([
                "decrypt",
                "--format",
                "c2sp",
                "-f",
                "--context",
                &context,
                "-k",
            ])
            .arg(scratch.path("cobblestone.key"))
            .arg("-i")
            .arg(scratch.path("theirs"))
            .arg("-o")
            .arg(scratch.path("opened"))
            .assert()
            .success();
        let expected: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        assert_eq!(fs::read(scratch.path("opened")).unwrap(), expected);
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn c2sp_failures_leave_no_output() {
    let scratch = Scratch::new();
    fs::write(scratch.path("plain"), pattern(40_000)).unwrap();
    let c2sp = ["--format", "c2sp", "--context", "a"];
    scratch.run("encrypt", "plain", "sealed", &c2sp).success();
    let sealed = fs::read(scratch.path("sealed")).unwrap();
    // A wrong context, a cut, a flipped bit: exit 1 and nothing written.
    scratch
        .run(
            "decrypt",
            "sealed",
            "out",
            &["--format", "c2sp", "--context", "b"],
        )
        .code(1);
    fs::write(scratch.path("cut"), &sealed[..56 + 2 * 16_400]).unwrap();
    scratch.run("decrypt", "cut", "out", &c2sp).code(1);
    let mut flipped = sealed.clone();
    flipped[56 + 16_400 + 5] ^= 1;
    fs::write(scratch.path("flipped"), &flipped).unwrap();
    scratch.run("decrypt", "flipped", "out", &c2sp).code(1);
    scratch
        .run(
            "decrypt",
            "flipped",
            "out",
            &["--format", "c2sp", "--context", "a", "--range", "0:100"],
        )
        .success();
    scratch
        .run(
            "decrypt",
            "flipped",
            "out2",
            &[
                "--format",
                "c2sp",
                "--context",
                "a",
                "--range",
                "16000:17000",
            ],
        )
        .code(1);
    scratch.assert_entries(&["plain", "sealed", "cut", "flipped", "out"]);
    // Usage errors: exit 2.
    scratch
        .run(
            "encrypt",
            "plain",
            "x",
            &["--format", "c2sp", "--chunk-size", "4096"],
        )
        .code(2);
    scratch
        .run("encrypt", "plain", "x", &["--context", "a"])
        .code(2);
    scratch
        .run("encrypt", "plain", "x", &["--range", "0:1"])
        .code(2);
    scratch
        .run(
            "encrypt",
            "plain",
            "x",
            &["--format", "c2sp", "--key-size", "128"],
        )
        .code(2);
}

#[test]
fn c2sp_with_a_passphrase() {
    let scratch = Scratch::new();
    fs::write(scratch.path("plain"), pattern(20_000)).unwrap();
    let passphrase = scratch.write("pass", b"correct horse\n");
    let run = |op: &str, input: &str, output: &str, extra: &[&str]| {
        combsiv()
            .args([
                op,
                "--format",
                "c2sp-gcm-siv",
                "--key-size",
                "128",
                "--passphrase-file",
            ])
            .arg(&passphrase)
            .arg("-i")
            .arg(scratch.path(input))
            .arg("-o")
            .arg(scratch.path(output))
            .args(extra)
            .assert()
    };
    run("encrypt", "plain", "sealed", &[]).success();
    run("decrypt", "sealed", "opened", &[]).success();
    assert_eq!(fs::read(scratch.path("opened")).unwrap(), pattern(20_000));
    run("decrypt", "sealed", "part", &["--range", "19990:"]).success();
    assert_eq!(
        fs::read(scratch.path("part")).unwrap(),
        pattern(20_000)[19_990..]
    );
}

#[test]
fn ranges_of_both_formats() {
    let scratch = Scratch::new();
    let plain = pattern(300_000);
    fs::write(scratch.path("plain"), &plain).unwrap();
    scratch
        .run(
            "encrypt",
            "plain",
            "stream",
            &["--chunk-size", "1000", "-q"],
        )
        .success();
    scratch
        .run("encrypt", "plain", "c2sp", &["--format", "c2sp", "-q"])
        .success();
    for (file, format) in [("stream", "combsiv"), ("c2sp", "c2sp")] {
        for (range, expected) in [
            ("0:0", &plain[..0]),
            ("0:1", &plain[..1]),
            ("999:1001", &plain[999..1001]),
            ("16383:32769", &plain[16_383..32_769]),
            ("123456:", &plain[123_456..]),
            (":5000", &plain[..5000]),
            ("299999:400000", &plain[299_999..]),
            ("400000:", &plain[..0]),
        ] {
            let output = combsiv()
                .args(["decrypt", "--format", format, "--range", range, "-k"])
                .arg(scratch.path("key"))
                .arg("-i")
                .arg(scratch.path(file))
                .assert()
                .success();
            assert_eq!(output.get_output().stdout, expected, "{format} {range}");
        }
        // A range needs a file it can read by position.
        combsiv()
            .args(["decrypt", "--format", format, "--range", "0:10", "-k"])
            .arg(scratch.path("key"))
            .write_stdin(fs::read(scratch.path(file)).unwrap())
            .assert()
            .code(2);
    }
    // A truncated file answers no range, not even one far from the end.
    let sealed = fs::read(scratch.path("stream")).unwrap();
    fs::write(scratch.path("cut"), &sealed[..sealed.len() - 1]).unwrap();
    scratch
        .run("decrypt", "cut", "out", &["--range", "0:10"])
        .code(1);
    scratch
        .run("decrypt", "stream", "x", &["--range", "10:5"])
        .code(2);
}
