"""Batches against single calls and `cryptography`, the Sealer, files interoperating with the
`combsiv` CLI in both directions, the bounds calculator and backend reporting."""

import os
import pathlib
import random
import shutil
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.ciphers import aead as reference

import combsiv


def mixed_batch(rng, n):
    lengths = [0, 1, 15, 16, 17, 64, 100, 127, 128, 129, 1400, 1500, 5000]
    lengths += [rng.randrange(0, 3000) for _ in range(n - len(lengths))]
    rng.shuffle(lengths)
    return [rng.randbytes(12) for _ in lengths], [rng.randbytes(n) for n in lengths]


@pytest.mark.parametrize("cls,ref", [(combsiv.AESGCMSIV, reference.AESGCMSIV), (combsiv.AESGCM, reference.AESGCM)])
@pytest.mark.parametrize("bits", [128, 256])
def test_batches_equal_single_calls(cls, ref, bits, backend):
    rng = random.Random(bits)
    key = rng.randbytes(bits // 8)
    cipher = cls(key, backend=backend)
    nonces, messages = mixed_batch(rng, 60)
    aads = [rng.randbytes(rng.randrange(0, 40)) for _ in messages]
    for aad in (None, b"shared", aads):
        sealed = cipher.encrypt_many(nonces, messages, aad)
        each = aads if isinstance(aad, list) else [aad] * len(messages)
        assert sealed == [ref(key).encrypt(n, m, a) for n, m, a in zip(nonces, messages, each)]
        assert cipher.decrypt_many(nonces, sealed, aad) == messages
        # Any sequence and any bytes-like items.
        assert cipher.encrypt_many(tuple(map(bytearray, nonces)), map(memoryview, messages), aad) == sealed
    assert cipher.encrypt_many([], []) == []
    assert cipher.decrypt_many([], []) == []


@pytest.mark.parametrize("cls", [combsiv.AESGCMSIV, combsiv.AESGCM])
def test_batches_on_several_threads_equal_one_thread(cls, backend):
    rng = random.Random(11)
    cipher = cls(rng.randbytes(32), backend=backend)
    nonces, messages = mixed_batch(rng, 700)  # about 1 MB: the default cuts it too
    one = cipher.encrypt_many(nonces, messages, b"column", threads=1)
    for threads in (None, 0, 2, 3, 1000):
        assert cipher.encrypt_many(nonces, messages, b"column", threads=threads) == one
        assert cipher.decrypt_many(nonces, one, b"column", threads=threads) == messages
    forged = list(one)
    forged[-1] = bytes([forged[-1][0] ^ 1]) + forged[-1][1:]
    with pytest.raises(combsiv.InvalidTag) as info:
        cipher.decrypt_many(nonces, forged, b"column", threads=3)
    assert info.value.failed == [len(forged) - 1]


def _seal_in_child(key, nonces, messages, results):
    results.put(combsiv.AESGCMSIV(key).encrypt_many(nonces, messages, threads=2))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_forked_child_seals_batches_on_several_threads():
    # Batches keep helper threads; a child of fork() has their memory but not the threads,
    # and must start threads of its own instead of waiting on the parent's.
    import multiprocessing

    rng = random.Random(12)
    key = rng.randbytes(16)
    nonces, messages = mixed_batch(rng, 700)
    expected = combsiv.AESGCMSIV(key).encrypt_many(nonces, messages, threads=2)
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_seal_in_child, args=(key, nonces, messages, results))
    child.start()
    try:
        assert results.get(timeout=120) == expected
    finally:
        child.join(timeout=30)
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0


_FORK_WHILE_STARTING = """
import os, signal, sys, threading, time
import combsiv

cipher = combsiv.AESGCMSIV(bytes(16))
nonces, messages = [bytes(12)] * 16, [bytes(64 * 1024)] * 16

def batch():
    return cipher.encrypt_many(nonces, messages, threads=2)

first = threading.Thread(target=batch)  # starts the kept helper threads
first.start()
time.sleep(float(sys.argv[1]) / 1e6)
pid = os.fork()
if pid == 0:
    signal.alarm(20)  # a child that waits on threads it does not have ends here
    os._exit(0 if batch() == batch() else 1)
first.join()
_, status = os.waitpid(pid, 0)
sys.exit(0 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 1)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_child_forked_while_the_helpers_start_seals_batches():
    # A fork at any moment of the first batch, while its helper threads are being started
    # included, leaves a child whose batches complete. Fresh interpreters, so that the
    # helpers are started by the thread here; forks 0 to 3 ms into it, 10 microseconds
    # apart: the pool starts within tens of microseconds, which wider steps miss.
    failures = []
    for delay_us in range(0, 3000, 10):
        run = subprocess.run(
            [sys.executable, "-W", "ignore::DeprecationWarning", "-c", _FORK_WHILE_STARTING,
             str(delay_us)],
            capture_output=True, text=True, timeout=120,
        )
        if run.returncode != 0:
            failures.append((delay_us, run.returncode, run.stderr[-300:]))
    assert not failures


@pytest.mark.parametrize("cls", [combsiv.AESGCMSIV, combsiv.AESGCM])
def test_forged_batch_members_fail_alone(cls, backend):
    rng = random.Random(9)
    cipher = cls(rng.randbytes(32), backend=backend)
    nonces, messages = mixed_batch(rng, 30)
    sealed = cipher.encrypt_many(nonces, messages)
    forged = list(sealed)
    bad = [2, 7, 19]
    for i in bad:
        forged[i] = bytes([forged[i][0] ^ 1]) + forged[i][1:]
    forged[25] = forged[25][:10]  # shorter than a tag
    with pytest.raises(combsiv.InvalidTag) as info:
        cipher.decrypt_many(nonces, forged)
    assert info.value.failed == sorted(bad + [25])
    results = info.value.results
    for i, result in enumerate(results):
        if i in info.value.failed:
            assert result is None
        else:
            assert result == messages[i]


def test_batch_arguments_are_checked():
    cipher = combsiv.AESGCMSIV(bytes(32))
    with pytest.raises(ValueError, match="2 nonces for 1 messages"):
        cipher.encrypt_many([b"\0" * 12] * 2, [b"x"])
    with pytest.raises(ValueError, match="Nonce must be 12 bytes"):
        cipher.encrypt_many([b"\0" * 11], [b"x"])
    with pytest.raises(ValueError, match="associated data for"):
        cipher.encrypt_many([b"\0" * 12], [b"x"], [b"a", b"b"])
    with pytest.raises(TypeError):
        cipher.encrypt_many(b"\0" * 12, [b"x"])
    with pytest.raises(TypeError):
        cipher.encrypt_many([b"\0" * 12], ["text"])
    # GCM batches take every nonce length GCM takes.
    gcm = combsiv.AESGCM(bytes(32))
    nonces = [b"\1" * 8, b"\2" * 12, b"\3" * 100]
    sealed = gcm.encrypt_many(nonces, [b"a", b"bb", b"ccc"])
    assert sealed == [reference.AESGCM(bytes(32)).encrypt(n, m, None) for n, m in zip(nonces, [b"a", b"bb", b"ccc"])]
    assert gcm.decrypt_many(nonces, sealed) == [b"a", b"bb", b"ccc"]


def test_sealer_counts_and_refuses():
    sealer = combsiv.Sealer(bytes(32))
    sealed = sealer.seal(b"message", b"ad")
    assert len(sealed) == 12 + 7 + 16
    assert sealer.open(sealed, b"ad") == b"message"
    assert combsiv.AESGCMSIV(bytes(32)).decrypt(sealed[:12], sealed[12:], b"ad") == b"message"
    with pytest.raises(combsiv.InvalidTag):
        sealer.open(sealed, b"other")
    # One block of plaintext and one of associated data: the budget counts both.
    assert sealer.usage == (1, 2, 2)
    assert sealer.seal(b"x") != sealer.seal(b"x"), "nonces must be fresh"
    # A budget of 2^-200 is exhausted at once: refused before any work.
    tight = combsiv.Sealer(bytes(16), limit_log2=-200.0)
    with pytest.raises(combsiv.KeyExhausted):
        tight.seal(b"x")
    assert tight.usage == (0, 0, 0)


def test_bounds_calculator():
    page = combsiv.nonce_bound(2.0**64, 2.0**10, 2**10 * 16)
    assert not page.within(-32)
    assert round(page.log2) == -25
    assert page.dominant is not None
    assert len(page.terms) >= 3
    small = combsiv.random_nonce_bound(2.0**32, 1500)
    assert small.within() and small.log2 < -32
    huge = combsiv.nonce_bound(1, 1, 2**40 * 16)
    assert huge.exceeds_length_limit and not huge.within(0)


def test_backends_reported():
    available = combsiv.available_backends()
    assert "portable" in available
    assert combsiv.backend() in available
    assert combsiv.AESGCMSIV(bytes(32)).backend == combsiv.backend()


def keygen(cli, path):
    subprocess.run([cli, "keygen", "-o", str(path)], check=True)


def test_files_interoperate_with_the_cli_both_ways(tmp_path, combsiv_cli):
    keyfile = tmp_path / "k.key"
    keygen(combsiv_cli, keyfile)
    key = combsiv.load_key_file(keyfile)
    assert len(key) == 32
    rng = random.Random(1)
    for size in [0, 1, 1000, 300_000]:
        data = rng.randbytes(size)
        plain = tmp_path / f"plain{size}"
        plain.write_bytes(data)
        # Python encrypts, the CLI decrypts.
        combsiv.encrypt_file(plain, tmp_path / f"py{size}.cmb", key, chunk_size=4096)
        out = tmp_path / f"cli{size}.out"
        subprocess.run(
            [combsiv_cli, "decrypt", "-q", "-k", str(keyfile), "-i", str(tmp_path / f"py{size}.cmb"), "-o", str(out)],
            check=True,
        )
        assert out.read_bytes() == data
        # The CLI encrypts, Python decrypts.
        sealed = tmp_path / f"cli{size}.cmb"
        subprocess.run(
            [combsiv_cli, "encrypt", "-q", "-k", str(keyfile), "-i", str(plain), "-o", str(sealed)], check=True
        )
        assert combsiv.decrypt_file(sealed, tmp_path / f"py{size}.out", key) == size
        assert (tmp_path / f"py{size}.out").read_bytes() == data


def test_file_key_size_is_in_bits_as_generate_key_takes_it(tmp_path):
    key = os.urandom(32)
    (tmp_path / "plain").write_bytes(b"data" * 100)
    # The header's byte 9 is the algorithm: 1 AES-128-GCM-SIV, 2 AES-256-GCM-SIV.
    for kwargs, algorithm in [({}, 2), ({"key_size": 256}, 2), ({"key_size": 128}, 1), ({"aes128": True}, 1)]:
        sealed = tmp_path / f"sealed-{algorithm}-{len(kwargs)}"
        combsiv.encrypt_file(tmp_path / "plain", sealed, key, overwrite=True, **kwargs)
        assert sealed.read_bytes()[9] == algorithm
        combsiv.decrypt_file(sealed, tmp_path / "out", key, overwrite=True)
        assert (tmp_path / "out").read_bytes() == b"data" * 100
    for kwargs in [{"key_size": 192}, {"key_size": 16}, {"key_size": 256, "aes128": True}]:
        with pytest.raises(ValueError):
            combsiv.encrypt_file(tmp_path / "plain", tmp_path / "refused", key, **kwargs)
        assert not (tmp_path / "refused").exists()


def test_files_fail_cleanly(tmp_path):
    key = os.urandom(32)
    (tmp_path / "plain").write_bytes(b"secret data" * 1000)
    combsiv.encrypt_file(tmp_path / "plain", tmp_path / "sealed", key, chunk_size=1024)
    with pytest.raises(OSError):
        combsiv.encrypt_file(tmp_path / "plain", tmp_path / "sealed", key)
    combsiv.encrypt_file(tmp_path / "plain", tmp_path / "sealed", key, overwrite=True, key_size=128)
    with pytest.raises(combsiv.InvalidTag):
        combsiv.decrypt_file(tmp_path / "sealed", tmp_path / "out", os.urandom(32))
    assert not (tmp_path / "out").exists()
    damaged = bytearray((tmp_path / "sealed").read_bytes())
    damaged[-100] ^= 1
    (tmp_path / "damaged").write_bytes(damaged)
    with pytest.raises(combsiv.InvalidTag):
        combsiv.decrypt_file(tmp_path / "damaged", tmp_path / "out", key)
    assert not (tmp_path / "out").exists(), "a failed decryption left its output"
    with pytest.raises(ValueError):
        combsiv.encrypt_file(tmp_path / "plain", tmp_path / "x", b"short")
    (tmp_path / "plain").chmod(0o600)
    with pytest.raises(ValueError, match="longer than 4096 bytes"):
        combsiv.load_key_file(tmp_path / "plain")


def test_gcm_batches_refuse_a_repeated_nonce():
    nonce = b"\7" * 12
    with pytest.raises(ValueError, match="messages 0 and 2 have the same nonce"):
        combsiv.AESGCM(bytes(16)).encrypt_many([nonce, b"\1" * 12, nonce], [b"a", b"b", b"c"])
    # AES-GCM-SIV is built for it: the same message under one nonce just seals alike.
    sealed = combsiv.AESGCMSIV(bytes(16)).encrypt_many([nonce, nonce], [b"a", b"a"])
    assert sealed[0] == sealed[1]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0])
def test_bounds_refuse_counts_that_are_not_counts(bad):
    with pytest.raises(ValueError, match="finite number >= 0"):
        combsiv.nonce_bound(bad, 1.0, 64)
    with pytest.raises(ValueError, match="finite number >= 0"):
        combsiv.nonce_bound(1.0, bad, 64)
    with pytest.raises(ValueError, match="finite number >= 0"):
        combsiv.random_nonce_bound(bad, 64)


def test_the_build_checks_what_ci_asked_for():
    """CI installs the package with Rust's debug assertions and overflow checks in the
    binding's own code (COMBSIV_EXPECT_DEBUG_ASSERTIONS=1): the build must really have them."""
    expected = os.environ.get("COMBSIV_EXPECT_DEBUG_ASSERTIONS")
    if expected is None:
        pytest.skip("COMBSIV_EXPECT_DEBUG_ASSERTIONS is not set")
    assert combsiv._combsiv._debug_assertions() == (expected == "1")


def test_the_package_is_the_installed_wheel():
    """CI installs the abi3 manylinux wheel into a fresh environment without Rust
    (COMBSIV_EXPECT_WHEEL=1): the tests must run that, not a source tree's build."""
    if not os.environ.get("COMBSIV_EXPECT_WHEEL"):
        pytest.skip("COMBSIV_EXPECT_WHEEL is not set")
    import importlib.metadata
    import sysconfig

    package = pathlib.Path(combsiv.__file__).resolve().parent
    assert package.parent == pathlib.Path(sysconfig.get_paths()["platlib"]).resolve()
    wheel = importlib.metadata.distribution("combsiv").read_text("WHEEL")
    assert "Tag: cp39-abi3-manylinux" in wheel, wheel
    assert shutil.which("cargo") is None and shutil.which("rustc") is None
