"""AESGCMSIV and AESGCM against `cryptography` (random and boundary lengths, with and without
associated data, both key sizes), the official vectors, tampering, and every buffer type."""

import array
import random
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.ciphers import aead as reference

import combsiv
from conftest import load_vectors

PAIRS = [(combsiv.AESGCMSIV, reference.AESGCMSIV), (combsiv.AESGCM, reference.AESGCM)]
# Lengths around the kernels' block (16), short-path (8 blocks) and stride (128/256 bytes)
# boundaries, and random ones.
BOUNDARY = sorted(
    {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 95, 96, 97, 111, 112, 113, 127, 128, 129,
     255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 1500, 2048, 4095, 4096, 4097, 65536}
)


def random_lengths(rng, n=40):
    return [rng.randrange(0, 3000) for _ in range(n)] + [rng.randrange(0, 70000) for _ in range(4)]


@pytest.mark.parametrize("ours,theirs", PAIRS, ids=["AESGCMSIV", "AESGCM"])
@pytest.mark.parametrize("bits", [128, 256])
def test_matches_cryptography(ours, theirs, bits, backend):
    rng = random.Random(bits * 7 + len(backend))
    for length in BOUNDARY + random_lengths(rng):
        key = rng.randbytes(bits // 8)
        nonce = rng.randbytes(12)
        data = rng.randbytes(length)
        for aad in (None, b"", rng.randbytes(rng.choice([1, 16, 17, 100]))):
            expected = theirs(key).encrypt(nonce, data, aad)
            cipher = ours(key, backend=backend)
            assert cipher.backend == backend
            sealed = cipher.encrypt(nonce, data, aad)
            assert sealed == expected, (length, aad)
            assert cipher.decrypt(nonce, sealed, aad) == data
            assert theirs(key).decrypt(nonce, sealed, aad) == data


def test_gcm_takes_the_nonce_lengths_cryptography_takes(backend):
    rng = random.Random(3)
    key = rng.randbytes(32)
    for nonce_len in [8, 11, 12, 13, 16, 60, 128]:
        nonce = rng.randbytes(nonce_len)
        for length in [0, 1, 16, 100]:
            data = rng.randbytes(length)
            sealed = combsiv.AESGCM(key, backend=backend).encrypt(nonce, data, b"aad")
            assert sealed == reference.AESGCM(key).encrypt(nonce, data, b"aad")
            assert combsiv.AESGCM(key, backend=backend).decrypt(nonce, sealed, b"aad") == data
    for nonce_len in [0, 7, 129]:
        with pytest.raises(ValueError):
            combsiv.AESGCM(key).encrypt(b"\0" * nonce_len, b"x", None)


def test_rfc8452_vectors(backend):
    for v in load_vectors("rfc8452.json")["vectors"]:
        cipher = combsiv.AESGCMSIV(bytes.fromhex(v["key"]), backend=backend)
        nonce, aad = bytes.fromhex(v["nonce"]), bytes.fromhex(v["aad"])
        plaintext = bytes.fromhex(v["plaintext"])
        expected = bytes.fromhex(v["ciphertext_and_tag"])
        assert cipher.encrypt(nonce, plaintext, aad) == expected, v["id"]
        assert cipher.decrypt(nonce, expected, aad) == plaintext, v["id"]


def test_gcm_vectors(backend):
    file = load_vectors("gcm.json")
    for v in file["vectors"] + file["vectors_non_96bit_iv"]:
        cipher = combsiv.AESGCM(bytes.fromhex(v["key"]), backend=backend)
        nonce, aad = bytes.fromhex(v["nonce"]), bytes.fromhex(v["aad"])
        plaintext = bytes.fromhex(v["plaintext"])
        expected = bytes.fromhex(v["ciphertext_and_tag"])
        assert cipher.encrypt(nonce, plaintext, aad) == expected, v["id"]
        assert cipher.decrypt(nonce, expected, aad) == plaintext, v["id"]


@pytest.mark.parametrize("cls", [combsiv.AESGCMSIV, combsiv.AESGCM])
def test_every_tampering_raises_and_leaks_nothing(cls, backend):
    rng = random.Random(11)
    key, nonce = rng.randbytes(32), rng.randbytes(12)
    cipher = cls(key, backend=backend)
    for length in [0, 1, 16, 33, 300]:
        data = rng.randbytes(length)
        sealed = cipher.encrypt(nonce, data, b"ad")
        cases = []
        for i in range(len(sealed)):
            for bit in (0x01, 0x80):
                bad = bytearray(sealed)
                bad[i] ^= bit
                cases.append((nonce, bytes(bad), b"ad"))
        cases += [
            (nonce, sealed[:-1], b"ad"),
            (nonce, sealed + b"\0", b"ad"),
            (nonce, sealed, b"ae"),
            (nonce, sealed, None),
            (bytes([nonce[0] ^ 1]) + nonce[1:], sealed, b"ad"),
            (nonce, sealed[:15], b"ad"),
            (nonce, b"", b"ad"),
        ]
        for n, bad, aad in cases:
            with pytest.raises(combsiv.InvalidTag):
                cipher.decrypt(n, bad, aad)
            if len(bad) >= 16:
                buf = bytearray(b"\xa5" * (len(bad) - 16))
                with pytest.raises(combsiv.InvalidTag):
                    cipher.decrypt_into(n, bad, aad, buf)
                assert buf == bytearray(len(buf)), "unauthenticated plaintext left in the buffer"
        with pytest.raises(combsiv.InvalidTag):
            cls(rng.randbytes(32), backend=backend).decrypt(nonce, sealed, b"ad")


@pytest.mark.parametrize("cls", [combsiv.AESGCMSIV, combsiv.AESGCM])
def test_every_buffer_type(cls, backend):
    key = bytes(range(32))
    cipher = cls(bytearray(key), backend=backend)
    expected = cls(key).encrypt(b"n" * 12, b"hello world!", b"ad")
    inputs = [
        lambda b: b,
        bytearray,
        memoryview,
        lambda b: memoryview(bytearray(b)),
        lambda b: array.array("B", b),
        lambda b: memoryview(b"xx" + b + b"yy")[2:-2],
    ]
    for wrap in inputs:
        assert cipher.encrypt(wrap(b"n" * 12), wrap(b"hello world!"), wrap(b"ad")) == expected
        assert cipher.decrypt(wrap(b"n" * 12), wrap(expected), wrap(b"ad")) == b"hello world!"
    # *_into: writable buffers of exactly the right size; anything else is refused.
    for make in [bytearray, lambda n: memoryview(bytearray(n)), lambda n: array.array("B", bytes(n))]:
        out = make(len(expected))
        assert cipher.encrypt_into(b"n" * 12, b"hello world!", b"ad", out) == len(expected)
        assert bytes(out) == expected
        plain = make(12)
        assert cipher.decrypt_into(b"n" * 12, expected, b"ad", plain) == 12
        assert bytes(plain) == b"hello world!"
    for size in [len(expected) - 1, len(expected) + 1]:
        with pytest.raises(ValueError, match=f"buffer must be {len(expected)} bytes"):
            cipher.encrypt_into(b"n" * 12, b"hello world!", b"ad", bytearray(size))
    with pytest.raises(ValueError, match="buffer must be 12 bytes"):
        cipher.decrypt_into(b"n" * 12, expected, b"ad", bytearray(13))
    with pytest.raises((TypeError, BufferError)):
        cipher.encrypt_into(b"n" * 12, b"hello world!", b"ad", bytes(len(expected)))
    # One bytearray as input and output (in place): the input is read before it is written.
    shared = bytearray(b"hello world!" + bytes(16))
    assert cipher.encrypt_into(b"n" * 12, memoryview(shared)[:12], b"ad", shared) == len(expected)
    assert bytes(shared) == expected
    assert cipher.decrypt_into(b"n" * 12, shared, b"ad", memoryview(shared)[:12]) == 12
    assert bytes(shared[:12]) == b"hello world!"
    shifted = bytearray(b"xhello world!" + bytes(16))
    cipher.encrypt_into(b"n" * 12, memoryview(shifted)[1:13], b"ad", memoryview(shifted)[:-1])
    assert bytes(shifted[:-1]) == expected
    with pytest.raises(TypeError):
        cipher.encrypt(b"n" * 12, "text is not bytes", None)
    # A non-contiguous view is refused rather than misread.
    with pytest.raises((TypeError, BufferError, ValueError)):
        cipher.encrypt(b"n" * 12, memoryview(b"abcdefgh")[::2], None)


@pytest.mark.parametrize("cls,ref", PAIRS, ids=["AESGCMSIV", "AESGCM"])
def test_keys_and_nonces_are_checked_like_cryptography(cls, ref):
    for bits in (128, 256):
        key = cls.generate_key(bits)
        assert isinstance(key, bytes) and len(key) == bits // 8
        assert cls.generate_key(bits) != key
    for bad in (0, 64, 192, 512):
        with pytest.raises(ValueError):
            cls.generate_key(bad)
    with pytest.raises(TypeError):
        cls.generate_key("256")
    for length in (0, 15, 24, 31, 33):
        with pytest.raises(ValueError):
            cls(b"k" * length)
    with pytest.raises(TypeError):
        cls("a str key of 32 characters......")
    with pytest.raises(ValueError):
        cls(b"k" * 32, backend="no-such-backend")
    if cls is combsiv.AESGCMSIV:
        for nonce_len in (0, 11, 13, 16):
            with pytest.raises(ValueError, match="Nonce must be 12 bytes"):
                cls(b"k" * 32).encrypt(b"\0" * nonce_len, b"x", None)


def test_one_key_from_many_threads():
    import threading

    cipher = combsiv.AESGCMSIV(bytes(32))
    rng = random.Random(5)
    messages = [(rng.randbytes(12), rng.randbytes(rng.randrange(0, 20000))) for _ in range(64)]
    expected = [cipher.encrypt(n, m, b"t") for n, m in messages]
    errors = []

    def work():
        try:
            for _ in range(20):
                for (n, m), e in zip(messages, expected):
                    assert cipher.encrypt(n, m, b"t") == e
                    assert cipher.decrypt(n, e, b"t") == m
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_the_gil_is_released_during_a_large_call():
    import threading
    import time

    cipher = combsiv.AESGCMSIV(bytes(32))
    data = bytes(256 << 20)
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    time.sleep(0.01)
    start = time.perf_counter()
    cipher.encrypt(b"\0" * 12, data, None)
    end = time.perf_counter()
    done.set()
    thread.join()
    during = [t for t in ticks if start < t < end]
    # 256 MiB takes tens of milliseconds; a thread that held the GIL all along would let
    # the ticker in at most once or twice (the interpreter's switch interval is 5 ms).
    assert end - start > 0.02, "the call was too quick to tell"
    assert len(during) >= 3, f"{len(during)} ticks in {end - start:.3f} s"


@pytest.mark.parametrize("cls", [combsiv.AESGCMSIV, combsiv.AESGCM])
@pytest.mark.parametrize("length", [0, 5, 100, 1000, 5000])
def test_into_with_views_of_one_buffer(cls, length, backend):
    """The output of ``encrypt_into``/``decrypt_into`` may be a view of the data's own buffer:
    exactly in place, or shifted either way (``memoryview(buf)[16:]`` as the output of
    decrypting ``buf``). Each gives the plaintext, and a forgery leaves the output zeroed."""
    rng = random.Random(length)
    cipher = cls(rng.randbytes(32), backend=backend)
    nonce, aad, plaintext = rng.randbytes(12), b"ad", rng.randbytes(length)
    sealed = cipher.encrypt(nonce, plaintext, aad)
    n = len(plaintext)

    buf = bytearray(sealed)  # the plaintext 16 bytes after where the ciphertext starts
    assert cipher.decrypt_into(nonce, buf, aad, memoryview(buf)[16:]) == n
    assert bytes(buf[16 : 16 + n]) == plaintext
    buf = bytearray(16) + bytearray(sealed)  # 16 bytes before
    assert cipher.decrypt_into(nonce, memoryview(buf)[16:], aad, memoryview(buf)[:n]) == n
    assert bytes(buf[:n]) == plaintext
    buf = bytearray(sealed)  # in place
    assert cipher.decrypt_into(nonce, buf, aad, memoryview(buf)[:n]) == n
    assert bytes(buf[:n]) == plaintext

    buf = bytearray(plaintext) + bytearray(16)  # in place
    assert cipher.encrypt_into(nonce, memoryview(buf)[:n], aad, buf) == n + 16
    assert bytes(buf) == sealed
    buf = bytearray(16) + bytearray(plaintext)  # the data after where the output starts
    assert cipher.encrypt_into(nonce, memoryview(buf)[16:], aad, buf) == n + 16
    assert bytes(buf) == sealed
    buf = bytearray(plaintext) + bytearray(32)  # the data 16 bytes before the output
    assert cipher.encrypt_into(nonce, memoryview(buf)[:n], aad, memoryview(buf)[16:]) == n + 16
    assert bytes(buf[16:]) == sealed

    forged = bytearray(sealed)
    forged[-1] ^= 1
    with pytest.raises(combsiv.InvalidTag):
        cipher.decrypt_into(nonce, forged, aad, memoryview(forged)[16:])
    assert not any(forged[16 : 16 + n])


def test_invalid_tag_is_cryptographys_where_it_is_installed():
    """Code written for ``cryptography`` catches ``cryptography.exceptions.InvalidTag``; with
    ``cryptography`` installed that one ``except`` catches combsiv's too. Without it,
    combsiv's is an ``Exception`` of its own."""
    from cryptography.exceptions import InvalidTag as CryptographyInvalidTag

    assert issubclass(combsiv.InvalidTag, CryptographyInvalidTag)
    cipher = combsiv.AESGCMSIV(bytes(32))
    sealed = bytearray(cipher.encrypt(bytes(12), b"data", None))
    sealed[0] ^= 1
    for call in (
        lambda: cipher.decrypt(bytes(12), bytes(sealed), None),
        lambda: cipher.decrypt_many([bytes(12)], [bytes(sealed)]),
        lambda: combsiv.AESGCM(bytes(16)).decrypt(bytes(12), bytes(20), None),
    ):
        try:
            call()
        except CryptographyInvalidTag as error:
            assert isinstance(error, combsiv.InvalidTag)
        else:
            pytest.fail("no InvalidTag")
    without = subprocess.run(
        [sys.executable, "-c",
         "import sys; sys.modules['cryptography'] = None\n"
         "import combsiv\n"
         "assert combsiv.InvalidTag.__mro__[1] is Exception, combsiv.InvalidTag.__mro__\n"
         "try:\n"
         "    combsiv.AESGCMSIV(bytes(32)).decrypt(bytes(12), bytes(20), None)\n"
         "except combsiv.InvalidTag:\n"
         "    pass\n"],
        capture_output=True, text=True,
    )
    assert without.returncode == 0, without.stderr
