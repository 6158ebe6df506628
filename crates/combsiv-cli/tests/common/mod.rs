//! What the command-line tests share: the binary, a scratch directory with a key file, a
//! recognisable plaintext.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "each test file uses part of it; a test that cannot proceed should fail loudly"
)]

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command as StdCommand, Stdio};

use assert_cmd::Command;
use tempfile::TempDir;

pub fn combsiv() -> Command {
    Command::cargo_bin("combsiv").unwrap()
}

/// A scratch directory with a key file in it.
pub struct Scratch {
    pub dir: TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        let scratch = Scratch {
            dir: TempDir::new().unwrap(),
        };
        combsiv()
            .args(["keygen", "-o"])
            .arg(scratch.path("key"))
            .assert()
            .success();
        scratch
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes a file only its owner can read (as key and passphrase files must be).
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path(name);
        fs::write(&path, bytes).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        path
    }

    /// `combsiv <op> -k key -i <input> -o <output>`, ready to run (a path that is absolute
    /// stays as it is).
    pub fn command(&self, op: &str, input: &str, output: &str) -> Command {
        let mut command = combsiv();
        command
            .arg(op)
            .arg("-k")
            .arg(self.path("key"))
            .arg("-i")
            .arg(self.path(input))
            .arg("-o")
            .arg(self.path(output));
        command
    }

    /// `combsiv <op> -k key -i <input> -o <output> [extra...]`, run.
    pub fn run(
        &self,
        op: &str,
        input: &str,
        output: &str,
        extra: &[&str],
    ) -> assert_cmd::assert::Assert {
        self.command(op, input, output).args(extra).assert()
    }

    /// `combsiv encrypt -o out` reading stdin, once it has written `len` bytes to it and its
    /// temporary output file exists; stdin stays open (the run waits for more).
    pub fn encrypting_stdin_into_out(
        &self,
        len: usize,
    ) -> (std::process::Child, std::process::ChildStdin) {
        let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("combsiv"))
            .args(["encrypt", "-q", "-o"])
            .arg(self.path("out"))
            .arg("-k")
            .arg(self.path("key"))
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&pattern(len)).unwrap();
        let started = std::time::Instant::now();
        let temporary = || {
            fs::read_dir(self.dir.path())
                .unwrap()
                .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
        };
        while !temporary() && started.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(temporary(), "no temporary file appeared");
        (child, stdin)
    }

    /// Only these entries (besides the key) are in the directory: no temporary files left.
    pub fn assert_entries(&self, expected: &[&str]) {
        let mut names: Vec<String> = fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "key")
            .collect();
        names.sort();
        let mut expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        expected.sort();
        assert_eq!(names, expected);
    }
}

pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 131 + i / 977) as u8).collect()
}
