//! Where `OutputFile` lets output go: decided from what opening the path found, never from a
//! check that the name could outdate.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use combsiv::stream::{OutputFile, StreamError};

/// Writes `bytes` through the output planned at `path`, as the stream functions do.
fn write_through(path: &Path, overwrite: bool, bytes: &[u8]) -> Result<(), StreamError> {
    let mut output = OutputFile::plan(path, None, overwrite)?.create()?;
    output.file().write_all(bytes)?;
    output.commit()
}

/// `path` flips between a symbolic link to `/dev/null` (written in place) and one to a
/// regular file (refused without overwriting) while outputs are planned and written there:
/// whatever the name says when it is checked, the regular file is never written.
#[test]
fn a_name_swapped_after_the_check_never_sends_output_into_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    fs::write(&victim, b"precious").unwrap();
    let out = dir.path().join("out");
    symlink("/dev/null", &out).unwrap();
    let stop = AtomicBool::new(false);
    let (mut in_place, mut refused) = (0u32, 0u32);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let staged = dir.path().join("staged");
            for target in [Path::new("/dev/null"), victim.as_path()].iter().cycle() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                symlink(target, &staged).unwrap();
                fs::rename(&staged, &out).unwrap();
            }
        });
        for _ in 0..20_000 {
            match write_through(&out, false, b"XXXX") {
                Ok(()) => in_place += 1,
                Err(StreamError::OutputExists(_)) => refused += 1,
                Err(other) => panic!("{other}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert_eq!(fs::read(&victim).unwrap(), b"precious");
    assert!(in_place > 0 && refused > 0, "{in_place} {refused}");
}

/// A symbolic link is judged by the file it names: to a device, that device is written in
/// place; to a regular file, it is an existing file, and overwriting replaces the link (the
/// file it named stays as it was).
#[test]
fn a_symbolic_link_is_judged_by_what_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let to_null = dir.path().join("to-null");
    symlink("/dev/null", &to_null).unwrap();
    write_through(&to_null, false, b"gone").unwrap();
    assert!(fs::symlink_metadata(&to_null).unwrap().is_symlink());

    let file = dir.path().join("file");
    fs::write(&file, b"kept").unwrap();
    let to_file = dir.path().join("to-file");
    symlink(&file, &to_file).unwrap();
    assert!(matches!(
        write_through(&to_file, false, b"new"),
        Err(StreamError::OutputExists(_))
    ));
    write_through(&to_file, true, b"new").unwrap();
    assert_eq!(fs::read(&file).unwrap(), b"kept");
    assert!(!fs::symlink_metadata(&to_file).unwrap().is_symlink());
    assert_eq!(fs::read(&to_file).unwrap(), b"new");

    // A link that names nothing is a name taken: refused, or replaced when overwriting.
    let dangling = dir.path().join("dangling");
    symlink(dir.path().join("nothing"), &dangling).unwrap();
    assert!(matches!(
        write_through(&dangling, false, b"new"),
        Err(StreamError::OutputExists(_))
    ));
    assert!(!dir.path().join("nothing").exists());
}

/// The first block device under /dev, if the system shows one.
fn block_device() -> Option<PathBuf> {
    fs::read_dir("/dev")
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| fs::metadata(path).is_ok_and(|meta| meta.file_type().is_block_device()))
}

/// A block device is a disk: only `overwrite` writes over it (this test only plans, and
/// never writes one). Character devices stay allowed without it.
#[test]
fn block_devices_need_overwrite() {
    assert!(OutputFile::plan(Path::new("/dev/null"), None, false).is_ok());
    let Some(disk) = block_device() else {
        eprintln!("no block device under /dev: nothing to check");
        return;
    };
    match OutputFile::plan(&disk, None, false) {
        Err(StreamError::BlockDevice(path)) => assert_eq!(path, disk),
        other => panic!("{}: {other:?}", disk.display()),
    }
    let overwriting = OutputFile::plan(&disk, None, true);
    assert!(
        !matches!(overwriting, Err(StreamError::BlockDevice(_))),
        "{overwriting:?}"
    );
}

/// A FIFO that nothing reads is refused at once (it would block forever); with a reader it
/// is written in place, with ordinary blocking writes.
#[test]
fn a_fifo_without_a_reader_is_refused_and_one_with_a_reader_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    let (sent, result) = mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || sent.send(OutputFile::plan(&path, None, false).map(|_| ())));
    match result.recv_timeout(Duration::from_secs(10)) {
        Ok(Err(StreamError::NoReader(path))) => assert_eq!(path, fifo),
        Ok(other) => panic!("{other:?}"),
        Err(_) => panic!("planning a FIFO without a reader hung"),
    }

    let reader = {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&fifo)
            .unwrap()
    };
    let big = vec![7u8; 1 << 20];
    std::thread::scope(|scope| {
        let reading = scope.spawn(|| {
            let mut reader = reader;
            let mut got = Vec::new();
            let mut buf = [0u8; 65536];
            loop {
                match std::io::Read::read(&mut reader, &mut buf) {
                    // 0 before the writer came, and after it left.
                    Ok(0) if !got.is_empty() => return got,
                    Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                    Ok(_) => std::thread::sleep(Duration::from_millis(1)),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        });
        // More than a pipe holds: the writes must wait for the reader, not fail.
        write_through(&fifo, false, &big).unwrap();
        assert_eq!(reading.join().unwrap(), big);
    });
}
