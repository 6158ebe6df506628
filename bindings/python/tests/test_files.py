"""encrypt_file and decrypt_file keep the CLI's guarantees (the same library code writes the
output): the input is never destroyed, the old output survives a failure, decrypted files
are private, devices are written in place, and a killed run leaves no output."""

import os
import signal
import stat
import subprocess
import sys
import time

import pytest

import combsiv


@pytest.fixture
def key():
    return os.urandom(32)


def test_encrypting_a_file_onto_itself_is_refused(tmp_path, key):
    plain = tmp_path / "p"
    plain.write_bytes(b"precious" * 1000)
    with pytest.raises(ValueError, match="same file"):
        combsiv.encrypt_file(plain, plain, key, overwrite=True)
    assert plain.read_bytes() == b"precious" * 1000
    sealed = tmp_path / "s"
    combsiv.encrypt_file(plain, sealed, key)
    with pytest.raises(ValueError, match="same file"):
        combsiv.decrypt_file(sealed, sealed, key, overwrite=True)
    assert combsiv.decrypt_file(sealed, tmp_path / "back", key) == 8000


def test_a_failed_decryption_keeps_the_previous_output(tmp_path, key):
    (tmp_path / "p").write_bytes(b"data" * 5000)
    combsiv.encrypt_file(tmp_path / "p", tmp_path / "s", key, chunk_size=1024)
    (tmp_path / "out").write_bytes(b"the old output")
    damaged = bytearray((tmp_path / "s").read_bytes())
    damaged[-50] ^= 1
    (tmp_path / "damaged").write_bytes(damaged)
    with pytest.raises(combsiv.InvalidTag):
        combsiv.decrypt_file(tmp_path / "damaged", tmp_path / "out", key, overwrite=True)
    assert (tmp_path / "out").read_bytes() == b"the old output"
    with pytest.raises(FileExistsError):
        combsiv.decrypt_file(tmp_path / "s", tmp_path / "out", key)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged", "out", "p", "s"]


def test_outputs_are_private_and_replace_atomically(tmp_path, key):
    (tmp_path / "p").write_bytes(b"x" * 100_000)
    combsiv.encrypt_file(tmp_path / "p", tmp_path / "s", key)
    combsiv.decrypt_file(tmp_path / "s", tmp_path / "out", key)
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o600
    (tmp_path / "out").write_bytes(b"old")
    inode = (tmp_path / "out").stat().st_ino
    combsiv.decrypt_file(tmp_path / "s", tmp_path / "out", key, overwrite=True)
    assert (tmp_path / "out").read_bytes() == b"x" * 100_000
    assert (tmp_path / "out").stat().st_ino != inode, "written in place, not replaced"


def test_devices_are_written_in_place_and_kept(tmp_path, key):
    (tmp_path / "p").write_bytes(b"y" * 10_000)
    combsiv.encrypt_file(tmp_path / "p", "/dev/null", key)
    combsiv.encrypt_file(tmp_path / "p", tmp_path / "s", key)
    combsiv.decrypt_file(tmp_path / "s", "/dev/null", key)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


KILLED_DECRYPTION = """
import sys, combsiv
combsiv.decrypt_file(sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3]), threads=1)
"""


def test_a_killed_decryption_leaves_no_output(tmp_path, key):
    (tmp_path / "p").write_bytes(os.urandom(1 << 20) * 256)
    combsiv.encrypt_file(tmp_path / "p", tmp_path / "s", key)
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_DECRYPTION, str(tmp_path / "s"), str(out), key.hex()]
    )
    started = time.monotonic()
    while not any(p.name.endswith(".tmp") for p in tmp_path.iterdir()):
        assert time.monotonic() - started < 30, "the decryption never started its output"
        assert child.poll() is None, "the decryption ended before it could be killed"
        time.sleep(0.001)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert not out.exists(), "a killed decryption left (partial) plaintext at its output"


def test_key_files_are_read_as_the_cli_reads_them(tmp_path, combsiv_cli):
    path = tmp_path / "k"
    subprocess.run([combsiv_cli, "keygen", "-o", str(path)], check=True)
    assert len(combsiv.load_key_file(path)) == 32
    path.chmod(0o644)
    with pytest.raises(PermissionError, match="other users"):
        combsiv.load_key_file(path)
    assert len(combsiv.load_key_file(path, allow_insecure=True)) == 32
    big = tmp_path / "big"
    big.write_bytes(b"#" * 5000)
    big.chmod(0o600)
    with pytest.raises(ValueError, match="longer than 4096"):
        combsiv.load_key_file(big)
    if os.geteuid() == 0:
        path.chmod(0o600)
        os.chown(path, 12345, 12345)
        with pytest.raises(PermissionError, match="another user"):
            combsiv.load_key_file(path)


def test_block_devices_need_overwrite_and_fifos_a_reader(tmp_path, key):
    # A block device is a disk: FileExistsError without overwrite=True (only the refusal is
    # run here). A FIFO that nothing reads fails at once instead of waiting forever.
    (tmp_path / "p").write_bytes(b"data")
    def is_disk(path):
        try:
            return stat.S_ISBLK(os.stat(path).st_mode)
        except OSError:
            return False

    disks = [path for path in sorted(f"/dev/{name}" for name in os.listdir("/dev")) if is_disk(path)]
    if disks:
        with pytest.raises(FileExistsError, match="block device"):
            combsiv.encrypt_file(tmp_path / "p", disks[0], key)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(BrokenPipeError, match="nothing is reading"):
        combsiv.encrypt_file(tmp_path / "p", fifo, key)
    assert time.monotonic() - started < 10
    assert sorted(os.listdir(tmp_path)) == ["fifo", "p"]
