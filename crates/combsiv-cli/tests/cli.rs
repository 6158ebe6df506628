//! The real `combsiv` binary: round trips, every tampering case of docs/FORMAT.md, refusals,
//! key files, passphrases, exit codes and messages.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test that cannot proceed should fail loudly"
)]

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};

use predicates::prelude::*;

mod common;

use common::{Scratch, combsiv, pattern};

const HEADER: usize = 80;

#[test]
fn round_trips_at_chunk_boundaries() {
    let s = Scratch::new();
    let chunk = 1024;
    let lengths = [
        0,
        1,
        chunk - 1,
        chunk,
        chunk + 1,
        3 * chunk,
        256 * 1024,
        256 * 1024 + 1,
    ];
    for len in lengths {
        for extra in [
            &["--chunk-size", "1KiB"][..],
            &[],
            &["--key-size", "128"],
            &["--aes128"],
        ] {
            let data = pattern(len);
            s.write("plain", &data);
            s.run("encrypt", "plain", "sealed", extra).success();
            let chunk_size = if extra.first() != Some(&"--chunk-size") {
                256 * 1024
            } else {
                chunk
            };
            let sealed = fs::read(s.path("sealed")).unwrap();
            // The header's algorithm byte: 1 AES-128-GCM-SIV, 2 AES-256-GCM-SIV.
            let aes128 = extra.contains(&"128") || extra.contains(&"--aes128");
            assert_eq!(sealed[9], if aes128 { 1 } else { 2 }, "{extra:?}");
            assert_eq!(
                sealed.len(),
                HEADER + len + 16 * (len / chunk_size + 1),
                "{len} {extra:?}"
            );
            // Mapped (the default for files) and read(2) agree.
            for how in [&[][..], &["--no-mmap"]] {
                s.run("decrypt", "sealed", "opened", how).success();
                assert_eq!(fs::read(s.path("opened")).unwrap(), data, "{len} {extra:?}");
                fs::remove_file(s.path("opened")).unwrap();
            }
            fs::remove_file(s.path("sealed")).unwrap();
            s.run("encrypt", "plain", "sealed", &["--no-mmap"])
                .success();
            s.run("decrypt", "sealed", "opened", &[]).success();
            assert_eq!(fs::read(s.path("opened")).unwrap(), data, "{len} {extra:?}");
            fs::remove_file(s.path("sealed")).unwrap();
            fs::remove_file(s.path("opened")).unwrap();
        }
    }
    s.assert_entries(&["plain"]);
}

#[test]
fn ten_mebibytes_through_pipes() {
    let s = Scratch::new();
    let data = pattern(10 << 20);
    let sealed = combsiv()
        .args(["encrypt", "-k"])
        .arg(s.path("key"))
        .write_stdin(data.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let opened = combsiv()
        .args(["decrypt", "-i", "-", "-o", "-", "-k"])
        .arg(s.path("key"))
        .write_stdin(sealed)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(opened == data);
}

/// Every way of damaging a stream that FORMAT.md section 6 lists: exit 1, a one-line reason
/// and a hint, and no output file.
#[test]
fn tampering_fails_with_exit_1_and_leaves_no_output() {
    let s = Scratch::new();
    let chunk = 1024;
    let data = pattern(5 * chunk + 100);
    s.write("plain", &data);
    s.run("encrypt", "plain", "sealed", &["--chunk-size", "1024"])
        .success();
    s.run("encrypt", "plain", "other", &["--chunk-size", "1024"])
        .success();
    let sealed = fs::read(s.path("sealed")).unwrap();
    let other = fs::read(s.path("other")).unwrap();
    let sealed_chunk = chunk + 16;
    let range = |i: usize| {
        let from = HEADER + i * sealed_chunk;
        from..(from + sealed_chunk).min(sealed.len())
    };
    let piece = |i: usize| sealed[range(i)].to_vec();
    let rebuild = |order: &[usize]| {
        let mut out = sealed[..HEADER].to_vec();
        for &i in order {
            out.extend(piece(i));
        }
        out
    };
    let flip = |at: usize| {
        let mut bad = sealed.clone();
        bad[at] ^= 1;
        bad
    };
    let mut splice = sealed.clone();
    splice[range(2)].copy_from_slice(&other[range(2)]);
    let mut foreign_header = other[..HEADER].to_vec();
    foreign_header.extend_from_slice(&sealed[HEADER..]);
    let mut appended_chunk = sealed.clone();
    appended_chunk.extend(piece(1));
    let mut appended_byte = sealed.clone();
    appended_byte.push(0);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("flipped magic", flip(0), "not a combsiv-encrypted file"),
        ("flipped chunk size", flip(13), "wrong key or passphrase"),
        ("flipped salt", flip(40), "wrong key or passphrase"),
        ("flipped header tag", flip(70), "wrong key or passphrase"),
        (
            "flipped ciphertext",
            flip(HEADER + 2 * sealed_chunk + 5),
            "chunk 2",
        ),
        (
            "flipped chunk tag",
            flip(HEADER + sealed_chunk - 1),
            "chunk 0",
        ),
        ("flipped final chunk", flip(sealed.len() - 20), "chunk 5"),
        ("swapped chunks", rebuild(&[0, 2, 1, 3, 4, 5]), "chunk 1"),
        ("dropped chunk", rebuild(&[0, 1, 3, 4, 5]), "chunk 2"),
        (
            "duplicated chunk",
            rebuild(&[0, 1, 1, 2, 3, 4, 5]),
            "chunk 2",
        ),
        (
            "dropped final chunk",
            rebuild(&[0, 1, 2, 3, 4]),
            "truncated after 5 chunks",
        ),
        (
            "cut at a chunk boundary",
            sealed[..HEADER + 2 * sealed_chunk].to_vec(),
            "truncated after 2 chunks",
        ),
        (
            "cut inside a chunk",
            sealed[..HEADER + 2 * sealed_chunk + 300].to_vec(),
            "chunk 2",
        ),
        ("cut inside the header", sealed[..50].to_vec(), "truncated"),
        ("empty file", Vec::new(), "not a combsiv-encrypted file"),
        ("appended byte", appended_byte, "chunk 5"),
        ("appended chunk", appended_chunk, "chunk 5"),
        ("chunk spliced from another file", splice, "chunk 2"),
        // A valid header and header tag, but its file key does not open these chunks.
        ("another file's header", foreign_header, "chunk 0"),
    ];
    for (name, bytes, reason) in cases {
        s.write("bad", &bytes);
        s.run("decrypt", "bad", "out", &[])
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(reason).and(predicate::str::contains("hint:")))
            .stderr(predicate::str::contains("panicked").not());
        assert!(!s.path("out").exists(), "{name}: output left behind");
        s.assert_entries(&["plain", "sealed", "other", "bad"]);
    }
}

#[test]
fn stdout_gets_only_verified_chunks_and_a_clear_failure() {
    let s = Scratch::new();
    let data = pattern(4 * 1024);
    s.write("plain", &data);
    s.run("encrypt", "plain", "sealed", &["--chunk-size", "1024"])
        .success();
    let sealed = fs::read(s.path("sealed")).unwrap();
    let cut = sealed[..HEADER + 2 * 1040].to_vec();
    let output = combsiv()
        .args(["decrypt", "-k"])
        .arg(s.path("key"))
        .write_stdin(cut)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "stdin is truncated after 2 chunks",
        ))
        .get_output()
        .stdout
        .clone();
    assert_eq!(output, data[..2048]);
}

#[test]
fn wrong_keys_and_passphrases_fail_cleanly() {
    let s = Scratch::new();
    s.write("plain", b"secret");
    s.write("pass", b"correct horse\n");
    s.write("wrong-pass", b"battery staple\n");
    s.run("encrypt", "plain", "sealed", &[]).success();
    combsiv()
        .args(["keygen", "-o"])
        .arg(s.path("key2"))
        .assert()
        .success();
    combsiv()
        .args(["decrypt", "-k"])
        .arg(s.path("key2"))
        .arg("-i")
        .arg(s.path("sealed"))
        .arg("-o")
        .arg(s.path("out"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("wrong key or passphrase"));
    assert!(!s.path("out").exists());

    let passphrase = |op: &str, file: &str, input: &str, output: &str| {
        combsiv()
            .args([op, "--passphrase-file"])
            .arg(s.path(file))
            .arg("-i")
            .arg(s.path(input))
            .arg("-o")
            .arg(s.path(output))
            .assert()
    };
    passphrase("encrypt", "pass", "plain", "locked").success();
    passphrase("decrypt", "wrong-pass", "locked", "out")
        .code(1)
        .stderr(predicate::str::contains("wrong key or passphrase"));
    assert!(!s.path("out").exists());
    passphrase("decrypt", "pass", "locked", "out").success();
    assert_eq!(fs::read(s.path("out")).unwrap(), b"secret");
    // A passphrase file where a key file is expected, and the other way round.
    s.run("decrypt", "locked", "out2", &[])
        .code(2)
        .stderr(predicate::str::contains("encrypted with a passphrase"));
    passphrase("decrypt", "pass", "sealed", "out2")
        .code(2)
        .stderr(predicate::str::contains("encrypted with a key file"));
    // No key at all.
    combsiv()
        .args(["encrypt", "-i"])
        .arg(s.path("plain"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no key given"));
    // Not a key file.
    combsiv()
        .args(["encrypt", "-k"])
        .arg(s.path("plain"))
        .arg("-i")
        .arg(s.path("plain"))
        .arg("-o")
        .arg(s.path("x"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a combsiv key file"));
}

#[test]
fn the_passphrase_format_vector_decrypts() {
    let text = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../combsiv/tests/vectors/stream.json"
    ))
    .unwrap();
    // The one vector with a passphrase: find its fields without a JSON dependency.
    let field = |name: &str| {
        let start = text.rfind(&format!("\"{name}\": \"")).unwrap() + name.len() + 5;
        let end = start + text[start..].find('"').unwrap();
        text[start..end].to_owned()
    };
    assert!(text.contains("\"passphrase\": \"combsiv format vector\""));
    let unhex = |s: String| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let s = Scratch::new();
    s.write("pass", b"combsiv format vector");
    s.write("sealed", &unhex(field("stream")));
    combsiv()
        .args(["decrypt", "--passphrase-file"])
        .arg(s.path("pass"))
        .arg("-i")
        .arg(s.path("sealed"))
        .assert()
        .success()
        .stdout(unhex(field("plaintext")));
}

#[test]
fn key_files_are_private_and_never_overwritten() {
    let s = Scratch::new();
    let key = s.path("key");
    assert_eq!(
        fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let text = fs::read_to_string(&key).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("# combsiv key file v1"));
    assert_eq!(lines[1].len(), 64);
    assert!(lines[1].bytes().all(|b| b.is_ascii_hexdigit()));
    combsiv()
        .args(["keygen", "-o"])
        .arg(&key)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("refusing to overwrite"));
    assert_eq!(fs::read_to_string(&key).unwrap(), text);
    // Two keys differ; keygen without -o prints one.
    let printed = combsiv()
        .arg("keygen")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_ne!(String::from_utf8(printed).unwrap(), text);
    // A key or passphrase file that others can read is refused (nothing is written) unless
    // the user says otherwise.
    s.write("plain", b"x");
    s.write("pass", b"a passphrase");
    for mode in [0o644, 0o640, 0o604] {
        fs::set_permissions(&key, fs::Permissions::from_mode(mode)).unwrap();
        s.run("encrypt", "plain", "sealed", &[])
            .code(2)
            .stderr(predicate::str::contains("can be read by other users"))
            .stderr(predicate::str::contains("--allow-insecure-key-file"));
        assert!(!s.path("sealed").exists());
    }
    fs::set_permissions(s.path("pass"), fs::Permissions::from_mode(0o644)).unwrap();
    combsiv()
        .args(["encrypt", "--passphrase-file"])
        .arg(s.path("pass"))
        .arg("-i")
        .arg(s.path("plain"))
        .arg("-o")
        .arg(s.path("locked"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("can be read by other users"));
    assert!(!s.path("locked").exists());
    s.run("encrypt", "plain", "sealed", &["--allow-insecure-key-file"])
        .success();
}

#[test]
fn key_and_passphrase_files_are_read_with_a_size_limit_and_strict_hex() {
    let s = Scratch::new();
    s.write("plain", b"x");
    // An endless "key file" fails at once instead of filling memory.
    for flag in ["-k", "--passphrase-file"] {
        combsiv()
            .args(["encrypt", "-o"])
            .arg(s.path("out"))
            .args([flag, "/dev/zero", "--allow-insecure-key-file", "-i"])
            .arg(s.path("plain"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is longer than"));
    }
    // A sign is not a hex digit, though u8::from_str_radix would take "+f".
    let plus = s.write("plus.key", "+f".repeat(32).as_bytes());
    fs::set_permissions(&plus, fs::Permissions::from_mode(0o600)).unwrap();
    combsiv()
        .args(["encrypt", "-o"])
        .arg(s.path("out"))
        .arg("-k")
        .arg(&plus)
        .arg("-i")
        .arg(s.path("plain"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a combsiv key file"));
    assert!(!s.path("out").exists());
}

#[test]
fn refuses_overwrite_same_file_and_missing_input() {
    let s = Scratch::new();
    s.write("plain", b"hello");
    s.write("existing", b"keep me");
    s.run("encrypt", "plain", "existing", &[]).code(2).stderr(
        predicate::str::contains("refusing to overwrite").and(predicate::str::contains("--force")),
    );
    assert_eq!(fs::read(s.path("existing")).unwrap(), b"keep me");
    s.run("encrypt", "plain", "existing", &["--force"])
        .success();
    s.run("decrypt", "existing", "opened", &[]).success();
    assert_eq!(fs::read(s.path("opened")).unwrap(), b"hello");
    s.run("encrypt", "plain", "plain", &["--force"])
        .code(2)
        .stderr(predicate::str::contains("same file"));
    assert_eq!(fs::read(s.path("plain")).unwrap(), b"hello");
    s.run("encrypt", "missing", "out", &[]).code(3).stderr(
        predicate::str::contains("cannot open")
            .and(predicate::str::contains("hint: check the path")),
    );
    // An output that cannot be created is named as such, not as the input.
    s.run("encrypt", "plain", "no-such-dir/out", &[])
        .code(3)
        .stderr(
            predicate::str::contains("cannot create").and(predicate::str::contains("no-such-dir")),
        );
    // A decryption that fails on an existing output with --force keeps the old file.
    s.write("garbage", &[0u8; 200]);
    s.run("decrypt", "garbage", "opened", &["--force"]).code(1);
    assert_eq!(fs::read(s.path("opened")).unwrap(), b"hello");
    s.assert_entries(&["plain", "existing", "opened", "garbage"]);
    // Writing to a device is allowed and does not replace it.
    s.run("encrypt", "plain", "unused", &[]).success();
    combsiv()
        .args(["encrypt", "-o", "/dev/null", "-k"])
        .arg(s.path("key"))
        .arg("-i")
        .arg(s.path("plain"))
        .assert()
        .success();
    assert!(Path::new("/dev/null").exists());
}

/// `-o` naming a block device (a disk) needs --force (only the refusal is run here: the
/// test never writes a device), and a FIFO that nothing reads is a clear I/O error at once,
/// not a run that waits forever.
#[test]
fn refuses_block_devices_without_force_and_fifos_without_a_reader() {
    use std::os::unix::fs::FileTypeExt;
    let s = Scratch::new();
    s.write("plain", b"hello");
    let disk = fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|path| fs::metadata(path).is_ok_and(|meta| meta.file_type().is_block_device()));
    if let Some(disk) = disk {
        s.run("encrypt", "plain", &disk.to_string_lossy(), &[])
            .code(2)
            .stderr(
                predicate::str::contains("block device")
                    .and(predicate::str::contains("hint: pass --force")),
            );
    }
    let made = StdCommand::new("mkfifo").arg(s.path("fifo")).status();
    assert!(made.unwrap().success());
    s.command("encrypt", "plain", "fifo")
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(3)
        .stderr(predicate::str::contains("nothing is reading the FIFO"));
    s.assert_entries(&["plain", "fifo"]);
}

/// Runs the Python `script` with `script_args`, then the combsiv binary and `args`; returns
/// the exit code and the script's stdout (what the terminal showed).
fn python(script: &str, script_args: &[&str], args: &[&str]) -> (i32, String) {
    let output = StdCommand::new("python3")
        .args(["-c", script])
        .args(script_args)
        .arg(assert_cmd::cargo::cargo_bin("combsiv"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// Runs `combsiv args` with stdin, stdout and stderr on a pseudo-terminal (Python's `pty`,
/// which CI machines have).
fn on_terminal(args: &[&str]) -> (i32, String) {
    const SPAWN: &str =
        "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))";
    python(SPAWN, &[], args)
}

#[test]
fn refuses_to_write_ciphertext_to_a_terminal() {
    let s = Scratch::new();
    let plain = s.write("plain", b"hello");
    let key = s.path("key");
    let (key, plain) = (key.to_str().unwrap(), plain.to_str().unwrap());
    let (code, text) = on_terminal(&["encrypt", "-k", key, "-i", plain]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("refusing to write ciphertext to a terminal"),
        "{text}"
    );
    // Plaintext to a terminal is fine.
    s.run("encrypt", "plain", "sealed", &[]).success();
    let sealed = s.path("sealed");
    let (code, text) = on_terminal(&["decrypt", "-k", key, "-i", sealed.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("hello"));
}

/// Runs `combsiv args` on a pseudo-terminal and types `answers` at its passphrase prompts;
/// returns the exit code and everything the terminal showed.
fn typing(args: &[&str], answers: &[&str]) -> (i32, String) {
    const TYPIST: &str = r#"
import os, pty, sys, termios, time
answers = sys.argv[1].split("\n")
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
shown = b""
def read(prompts=None):
    global shown
    while prompts is None or shown.count(b": ") < prompts:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            return
        if not chunk:
            return
        shown += chunk
for number, answer in enumerate(answers, 1):
    read(number)
    # Type only once the program has turned echo off, as a person would be slow enough to.
    deadline = time.time() + 10
    while termios.tcgetattr(fd)[3] & termios.ECHO and time.time() < deadline:
        time.sleep(0.005)
    os.write(fd, answer.encode() + b"\n")
read()
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(shown)
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    python(TYPIST, &[&answers.join("\n")], args)
}

#[test]
fn prompts_for_the_passphrase_without_echo() {
    let s = Scratch::new();
    let plain = s.write("plain", b"typed");
    let sealed = s.path("sealed");
    let (plain, sealed_text) = (plain.to_str().unwrap(), sealed.to_str().unwrap());
    let args = ["encrypt", "--passphrase", "-i", plain, "-o", sealed_text];
    let (code, shown) = typing(&args, &["tiger lily", "tiger lily"]);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("Passphrase: ") && shown.contains("Passphrase (again): "),
        "{shown}"
    );
    assert!(
        !shown.contains("tiger"),
        "the passphrase was echoed: {shown}"
    );
    s.write("pass", b"tiger lily\n");
    combsiv()
        .args(["decrypt", "--passphrase-file"])
        .arg(s.path("pass"))
        .arg("-i")
        .arg(&sealed)
        .assert()
        .success()
        .stdout("typed");
    let (code, shown) = typing(&["decrypt", "-p", "-i", sealed_text], &["tiger lily"]);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("typed") && !shown.contains("tiger"),
        "{shown}"
    );
    // A confirmation that differs writes nothing.
    let other = s.path("other");
    let args = ["encrypt", "-p", "-i", plain, "-o", other.to_str().unwrap()];
    let (code, shown) = typing(&args, &["one", "two"]);
    assert_eq!(code, 2, "{shown}");
    assert!(shown.contains("the passphrases differ"), "{shown}");
    assert!(!s.path("other").exists());
}

#[test]
fn interrupting_the_prompt_turns_echo_back_on() {
    const INTERRUPT: &str = r#"
import os, pty, signal, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
shown = b""
while b": " not in shown:
    shown += os.read(fd, 1024)
deadline = time.time() + 10
while termios.tcgetattr(fd)[3] & termios.ECHO and time.time() < deadline:
    time.sleep(0.005)
off = not termios.tcgetattr(fd)[3] & termios.ECHO
os.kill(pid, signal.SIGINT)
_, status = os.waitpid(pid, 0)
on = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
print(f"off during the prompt: {off}; on after: {on}")
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let s = Scratch::new();
    let plain = s.write("plain", b"x");
    let out = s.path("out");
    let args = [
        "encrypt",
        "-p",
        "-i",
        plain.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    let (code, shown) = python(INTERRUPT, &[], &args);
    assert_eq!(code, 130, "{shown}");
    assert!(
        shown.contains("off during the prompt: True; on after: True"),
        "{shown}"
    );
    s.assert_entries(&["plain"]);
}

#[test]
fn usage_errors_exit_2_without_debug_output() {
    combsiv().assert().code(2);
    combsiv().args(["encrypt", "--bogus"]).assert().code(2);
    combsiv()
        .args(["encrypt", "-k", "a", "--passphrase-file", "b"])
        .assert()
        .code(2);
    combsiv()
        .args(["encrypt", "-k", "a", "--chunk-size", "1GiB"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("out of range"));
    combsiv()
        .args(["bounds", "--nonces", "2^32"])
        .assert()
        .code(2);
    for key_size in [&["--aes128"][..], &["--key-size", "256"]] {
        combsiv()
            .args(["decrypt", "-k", "a"])
            .args(key_size)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "a file's header says how to decrypt it",
            ));
    }
    for refused in [
        &["--key-size", "192"][..],
        &["--key-size", "16"],
        &["--key-size", "256", "--aes128"],
    ] {
        combsiv()
            .args(["encrypt", "-k", "a"])
            .args(refused)
            .assert()
            .code(2);
    }
}

#[test]
fn bounds_checks_the_published_tables_and_tells_the_whole_truth() {
    combsiv()
        .args(["bounds", "--table"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "| 2^32 | 2^10 | 2^42 | 2^7.0 (>= 1: no guarantee) | NO | 2^22 | longer than RFC 8452 allows (2^32 blocks) |",
        ))
        .stdout(predicate::str::contains("| 2^64 | 2^10 | 2^10 | 2^-24.9 | NO | - |  |"))
        .stdout(predicate::str::contains("| 2^0 | 2^32 | 2^16 | 2^-33.0 | yes | 2^16 |  |"))
        .stdout(predicate::str::contains("| 2^32 | 2^29 | 2^-33.0 | yes | 2^29 |"));
    // Messages over RFC 8452's 2^32 blocks are outside the scheme, whatever the terms say.
    combsiv()
        .args(["bounds", "--nonces", "1", "--per-nonce", "1", "--max-blocks", "2^40"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 nonce x 1 message per nonce"))
        .stdout(predicate::str::contains(
            "advantage bound: none: messages over the 2^36-byte (2^32-block) limit; within 2^-32: NO",
        ));
    // Just over the limit prints with the digits that show it.
    combsiv()
        .args([
            "bounds",
            "--nonces",
            "1",
            "--per-nonce",
            "2^32",
            "--max-blocks",
            "92683",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "advantage bound: 2^-31.9998; within 2^-32: NO",
        ))
        .stdout(predicate::str::contains("confidentiality is lost outright"))
        .stdout(predicate::str::contains("assumes: no forgery attempts"));
    combsiv()
        .args([
            "bounds",
            "--nonces",
            "2^32",
            "--per-nonce",
            "64",
            "--max-bytes",
            "1MiB",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "advantage bound: 2^-53.0; within 2^-32: yes",
        ))
        .stdout(
            predicate::str::contains("per-nonce keys")
                .and(predicate::str::contains("<- dominates")),
        )
        .stdout(predicate::str::contains("AES-GCM with random nonces"));
    combsiv()
        .args([
            "bounds",
            "--random-nonces",
            "--messages",
            "2^34",
            "--max-bytes",
            "1500",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "messages of up to 1500 bytes (94 blocks)",
        ))
        .stdout(predicate::str::contains("within 2^-32: yes"))
        .stdout(predicate::str::contains(
            "AES-GCM with random nonces, same 2^34 messages: 2^-29.0; within 2^-32: NO",
        ));
}

#[test]
fn an_interrupted_run_leaves_no_temporary_file() {
    let s = Scratch::new();
    let (mut child, stdin) = s.encrypting_stdin_into_out(1 << 20);
    let killed = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    drop(stdin);
    s.assert_entries(&[]);
}

/// At least 1 GiB generated on the fly through both pipes; `cargo test --release -p
/// combsiv-cli -- --ignored` runs it.
#[test]
#[ignore = "slow: 1 GiB through the binary"]
fn one_gibibyte_round_trip() {
    let s = Scratch::new();
    let total: usize = 1 << 30;
    let block = pattern(1 << 20);
    let mut encrypt = StdCommand::new(assert_cmd::cargo::cargo_bin("combsiv"))
        .args(["encrypt", "-q", "-o"])
        .arg(s.path("sealed"))
        .arg("-k")
        .arg(s.path("key"))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = encrypt.stdin.take().unwrap();
    for _ in 0..total / block.len() {
        stdin.write_all(&block).unwrap();
    }
    drop(stdin);
    assert!(encrypt.wait().unwrap().success());
    let mut decrypt = StdCommand::new(assert_cmd::cargo::cargo_bin("combsiv"))
        .args(["decrypt", "-q", "-i"])
        .arg(s.path("sealed"))
        .arg("-k")
        .arg(s.path("key"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = decrypt.stdout.take().unwrap();
    let mut buf = vec![0u8; block.len()];
    for i in 0..total / block.len() {
        stdout.read_exact(&mut buf).unwrap();
        assert!(buf == block, "block {i} differs");
    }
    assert_eq!(stdout.read(&mut buf).unwrap(), 0);
    assert!(decrypt.wait().unwrap().success());
}

/// Without --force an existing file is never replaced, even one that appears while combsiv
/// runs (the output takes its name with link(2), which refuses an existing name): the
/// newcomer keeps its contents and no temporary file is left.
#[test]
fn a_target_that_appears_meanwhile_is_never_replaced() {
    let s = Scratch::new();
    let (child, stdin) = s.encrypting_stdin_into_out(1 << 16);
    fs::write(s.path("out"), b"precious").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("appeared while combsiv was running"),
        "{stderr}"
    );
    assert_eq!(fs::read(s.path("out")).unwrap(), b"precious");
    s.assert_entries(&["out"]);
}

/// 80 bytes of a stream whose header asks Argon2id for `(memory KiB, passes, lanes)`, with a
/// zero salt and a zero (wrong) header tag, then an empty final chunk's worth of zeros.
fn passphrase_stream(memory_kib: u32, passes: u32, lanes: u32) -> Vec<u8> {
    let mut bytes = b"combsiv\0".to_vec();
    bytes.extend_from_slice(&[1, 2, 1, 0]);
    bytes.extend_from_slice(&65536u32.to_le_bytes());
    for value in [memory_kib, passes, lanes] {
        bytes.extend_from_slice(&value.to_le_bytes());
    }
    bytes.extend_from_slice(&[0; 36 + 16 + 16]);
    bytes
}

/// A crafted header asking for a huge Argon2id cost is refused at once, before any key
/// derivation and before any output exists (the output's directory does not even exist, so
/// creating anything would fail with another message); raising the caps lets the reader
/// try, and the forged header tag then fails. A wrong key is also found before the output
/// is created.
#[test]
fn hostile_headers_and_wrong_keys_fail_before_any_output() {
    let s = Scratch::new();
    s.write("pass", b"a passphrase");
    let decrypt = |input: &str, extra: &[&str]| {
        combsiv()
            .args(["decrypt", "--passphrase-file"])
            .arg(s.path("pass"))
            .arg("-i")
            .arg(s.path(input))
            .arg("-o")
            .arg(s.path("missing/out"))
            .args(extra)
            .assert()
    };
    s.write("hostile", &passphrase_stream(4 << 20, 64, 16));
    let started = std::time::Instant::now();
    decrypt("hostile", &[])
        .code(1)
        .stderr(predicate::str::contains("more than this reader allows"))
        .stderr(predicate::str::contains("--max-argon2-memory"));
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    for (name, stream) in [
        ("memory", passphrase_stream(2 << 20, 1, 1)),
        ("passes", passphrase_stream(64, 11, 1)),
        ("lanes", passphrase_stream(64, 1, 5)),
    ] {
        s.write(name, &stream);
        decrypt(name, &[])
            .code(1)
            .stderr(predicate::str::contains("more than this reader allows"));
    }
    decrypt("lanes", &["--max-argon2-lanes", "8"])
        .code(1)
        .stderr(predicate::str::contains("wrong key or passphrase"));
    decrypt("passes", &["--max-argon2-passes", "11"])
        .code(1)
        .stderr(predicate::str::contains("wrong key or passphrase"));
    decrypt("memory", &["--max-argon2-memory", "1GiB"])
        .code(1)
        .stderr(predicate::str::contains("more than this reader allows"));
    // The caps are for reading; encrypt refuses them.
    s.write("plain", b"x");
    s.run("encrypt", "plain", "sealed", &["--max-argon2-lanes", "8"])
        .code(2)
        .stderr(predicate::str::contains("use them with decrypt"));
    // A wrong key file: found from the header tag, before the output is created.
    s.run("encrypt", "plain", "sealed", &[]).success();
    let other = s.path("other.key");
    combsiv()
        .args(["keygen", "-o"])
        .arg(&other)
        .assert()
        .success();
    combsiv()
        .args(["decrypt", "-k"])
        .arg(&other)
        .arg("-i")
        .arg(s.path("sealed"))
        .arg("-o")
        .arg(s.path("missing/out"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("wrong key or passphrase"));
}

/// `combsiv <op> -k key -i <input> >> <input>`: stdout appending to the input itself is
/// refused before anything is written, as `-o <input>` is.
#[test]
fn stdout_into_the_input_itself_is_refused() {
    let s = Scratch::new();
    let plain = s.write("plain", &pattern(5000));
    s.run("encrypt", "plain", "sealed", &[]).success();
    for (op, name) in [("encrypt", "plain"), ("decrypt", "sealed")] {
        let before = fs::read(s.path(name)).unwrap();
        let append = fs::OpenOptions::new()
            .append(true)
            .open(s.path(name))
            .unwrap();
        let output = StdCommand::new(assert_cmd::cargo::cargo_bin("combsiv"))
            .args([op, "-k"])
            .arg(s.path("key"))
            .arg("-i")
            .arg(s.path(name))
            .stdout(append)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{op}: {stderr}");
        assert!(stderr.contains("same file"), "{op}: {stderr}");
        assert_eq!(
            fs::read(s.path(name)).unwrap(),
            before,
            "{op} changed its input"
        );
    }
    drop(plain);
}

/// A file rewritten in place (same size) or truncated while it is encrypted or decrypted:
/// the run either finishes with an output that opens to what was read (the change came too
/// early or too late to matter), or fails with exit 3 and leaves no output, never a stream
/// that does not open, a SIGBUS, or a temporary file.
#[test]
fn an_input_that_changes_while_it_is_read_never_yields_a_bad_output() {
    let s = Scratch::new();
    let len = 64 << 20;
    s.write("plain", &pattern(len));
    s.run("encrypt", "plain", "sealed", &["-q"]).success();
    let mut refused = 0;
    for (op, input, truncate) in [
        ("encrypt", "plain", false),
        ("encrypt", "plain", true),
        ("decrypt", "sealed", false),
        ("decrypt", "sealed", true),
    ] {
        let original = fs::read(s.path(input)).unwrap();
        let child = StdCommand::new(assert_cmd::cargo::cargo_bin("combsiv"))
            .args([op, "-q", "--threads", "1", "-k"])
            .arg(s.path("key"))
            .arg("-i")
            .arg(s.path(input))
            .arg("-o")
            .arg(s.path("out"))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Change the input while the run reads it: truncate it once, or keep rewriting
        // parts of it in place until the run ends.
        let mut child = child;
        let file = fs::OpenOptions::new()
            .write(true)
            .open(s.path(input))
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        if truncate {
            file.set_len(original.len() as u64 / 2).unwrap();
        }
        let mut at = 0;
        while child.try_wait().unwrap().is_none() {
            if !truncate {
                use std::os::unix::fs::FileExt;
                file.write_all_at(&[0x5A; 4096], at).unwrap();
                at = (at + (1 << 20) + 4096) % (original.len() as u64 - 4096);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let output = child.wait_with_output().unwrap();
        let context = format!("{op} truncate={truncate}: {:?}", output.status);
        match output.status.code() {
            Some(0) => {
                // The output must be what some complete read of the input gives.
                let out = fs::read(s.path("out")).unwrap();
                if op == "encrypt" {
                    s.run("decrypt", "out", "check", &["-q", "--force"])
                        .success();
                } else {
                    assert_eq!(out.len(), len, "{context}");
                }
            }
            Some(3) | Some(1) => {
                refused += 1;
                assert!(!s.path("out").exists(), "{context}: output left behind");
            }
            _ => panic!("{context}: {}", String::from_utf8_lossy(&output.stderr)),
        }
        s.assert_entries(
            &["plain", "sealed"]
                .into_iter()
                .chain(s.path("out").exists().then_some("out"))
                .chain(s.path("check").exists().then_some("check"))
                .collect::<Vec<_>>(),
        );
        let _ = fs::remove_file(s.path("out"));
        let _ = fs::remove_file(s.path("check"));
        fs::write(s.path(input), &original).unwrap();
    }
    assert!(refused > 0, "no run noticed the change");
}

/// A key or passphrase file that belongs to another user (not root) could be replaced by
/// them with a key they know: refused unless --allow-insecure-key-file. (Needs root to give
/// a file away; skipped otherwise.)
#[test]
fn secret_files_of_another_user_are_refused() {
    let s = Scratch::new();
    s.write("plain", b"x");
    let passphrase = s.write("passphrase", b"correct horse\n");
    for file in [s.path("key"), passphrase.clone()] {
        if std::os::unix::fs::chown(&file, Some(12345), Some(12345)).is_err() {
            return;
        }
    }
    for flag in ["-k", "--passphrase-file"] {
        let file = if flag == "-k" {
            s.path("key")
        } else {
            passphrase.clone()
        };
        combsiv()
            .args(["encrypt", "-o"])
            .arg(s.path("out"))
            .arg(flag)
            .arg(&file)
            .arg("-i")
            .arg(s.path("plain"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("belongs to another user"));
        assert!(!s.path("out").exists());
    }
    s.run("encrypt", "plain", "out", &["--allow-insecure-key-file"])
        .success();
}

#[test]
fn help_is_the_manual_refusals_and_exit_codes_included() {
    combsiv()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--key-size 128"))
        .stdout(predicate::str::contains("Refused:"))
        .stdout(predicate::str::contains("Exit codes: 0 success"));
}
