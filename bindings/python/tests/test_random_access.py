"""Whole files and random access in both formats: ``combsiv.cobblestone.encrypt_file`` and
``decrypt_file`` against ``cryptography``'s Cobblestone both ways, and ``open_encrypted`` /
``decrypt_range`` reading any range of a stream or C2SP file, from a path or a file object,
with the end authenticated first and a damaged chunk failing only the reads that touch it."""

import io
import os

import pytest
from cryptography import cobblestone as theirs

import combsiv
from combsiv import cobblestone as ours

CHUNK = 16384
SEALED = CHUNK + 16
HEADER = 56


def pattern(n):
    return bytes((i * 7 + i // 251) & 0xFF for i in range(n))


@pytest.fixture
def plain(tmp_path):
    data = pattern(5 * CHUNK + 1234)
    path = tmp_path / "plain"
    path.write_bytes(data)
    return path, data


@pytest.mark.parametrize("key_len", [16, 32])
def test_files_are_cobblestone_both_ways(tmp_path, plain, key_len):
    path, data = plain
    key = os.urandom(key_len)
    decryptor = {16: theirs.Cobblestone128Decryptor, 32: theirs.Cobblestone256Decryptor}
    encryptor = {16: theirs.Cobblestone128Encryptor, 32: theirs.Cobblestone256Encryptor}
    assert ours.encrypt_file(path, tmp_path / "ours", key, b"ctx") == len(data)
    d = decryptor[key_len](key, b"ctx")
    assert d.update((tmp_path / "ours").read_bytes()) + d.finalize() == data

    e = encryptor[key_len](key, b"ctx")
    (tmp_path / "theirs").write_bytes(e.update(data) + e.finalize())
    assert ours.decrypt_file(tmp_path / "theirs", tmp_path / "back", key, b"ctx") == len(data)
    assert (tmp_path / "back").read_bytes() == data
    assert ours.decrypt_range(tmp_path / "theirs", 3 * CHUNK - 5, 10, key, b"ctx") == (
        data[3 * CHUNK - 5 : 3 * CHUNK + 5]
    )


def test_file_failures_leave_nothing(tmp_path, plain):
    path, _ = plain
    key = os.urandom(32)
    ours.encrypt_file(path, tmp_path / "sealed", key, b"a", siv=True)
    with pytest.raises(combsiv.InvalidTag):
        ours.decrypt_file(tmp_path / "sealed", tmp_path / "out", key, b"b", siv=True)
    with pytest.raises(combsiv.InvalidTag):
        ours.decrypt_file(tmp_path / "sealed", tmp_path / "out", key, b"a")  # not SIV
    sealed = (tmp_path / "sealed").read_bytes()
    (tmp_path / "cut").write_bytes(sealed[: HEADER + 2 * SEALED])
    with pytest.raises(combsiv.InvalidTag):
        ours.decrypt_file(tmp_path / "cut", tmp_path / "out", key, b"a", siv=True)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="AES-192"):
        ours.encrypt_file(path, tmp_path / "x", os.urandom(24), b"")
    with pytest.raises(FileExistsError):
        ours.encrypt_file(path, tmp_path / "sealed", key, b"a")


def opened(kind, tmp_path, data, source):
    """An EncryptedFile over ``data`` in the format ``kind``, from a path or a BytesIO."""
    path = tmp_path / "plain"
    path.write_bytes(data)
    if kind == "stream":
        key = os.urandom(32)
        combsiv.encrypt_file(path, tmp_path / "sealed", key, chunk_size=1000)
        args = (key,)
        module = combsiv
    else:
        key = os.urandom(16)
        ours.encrypt_file(path, tmp_path / "sealed", key, b"ctx", siv=kind == "c2sp-siv")
        args = (key, b"ctx")
        module = ours
    file = tmp_path / "sealed"
    if source == "object":
        file = io.BytesIO(file.read_bytes())
    kwargs = {"siv": True} if kind == "c2sp-siv" else {}
    return module, file, args, kwargs


@pytest.mark.parametrize("kind", ["stream", "c2sp", "c2sp-siv"])
@pytest.mark.parametrize("source", ["path", "object"])
def test_any_range_reads_the_plaintext(tmp_path, kind, source):
    data = pattern(3 * CHUNK + 77)
    module, file, args, kwargs = opened(kind, tmp_path, data, source)
    with module.open_encrypted(file, *args, **kwargs) as f:
        assert f.size == len(data) and f.seekable() and f.readable()
        for start, length in [(0, 0), (0, 1), (999, 3), (CHUNK - 1, 2), (CHUNK, CHUNK),
                              (len(data) - 5, 100), (len(data) + 3, 4)]:
            f.seek(start)
            assert f.read(length) == data[start : start + length]
            assert f.tell() == min(start + length, max(start, len(data)))
        assert f.seek(-10, io.SEEK_END) == len(data) - 10
        assert f.read() == data[-10:]
        f.seek(0)
        assert f.read() == data
        buffer = bytearray(5)
        f.seek(2)
        assert f.readinto(buffer) == 5 and bytes(buffer) == data[2:7]
        with pytest.raises(OSError):
            f.seek(-1)
        start, end = f.ciphertext_range(CHUNK, 10)
        assert start < end
    if source == "object":
        file.seek(0)
    assert module.decrypt_range(file, 5000, 20_000, *args, **kwargs) == data[5000:25_000]
    reader = io.BufferedReader(module.open_encrypted(file, *args, **kwargs))
    assert reader.read(7) == data[:7]


@pytest.mark.parametrize("kind", ["stream", "c2sp"])
def test_a_damaged_file(tmp_path, kind):
    data = pattern(3 * CHUNK)
    module, file, args, kwargs = opened(kind, tmp_path, data, "path")
    sealed = bytearray(file.read_bytes())
    first_chunk = 80 if kind == "stream" else HEADER
    chunk = 1000 if kind == "stream" else CHUNK
    sealed[first_chunk + (chunk + 16) + 3] ^= 1  # chunk 1
    file.write_bytes(bytes(sealed))
    with module.open_encrypted(file, *args, **kwargs) as f:
        assert f.read(100) == data[:100]
        f.seek(2 * chunk)
        assert f.read(10) == data[2 * chunk : 2 * chunk + 10]
        f.seek(chunk - 5)
        with pytest.raises(combsiv.InvalidTag):
            f.read(10)
    # A truncated file does not open: the end is authenticated first.
    file.write_bytes(bytes(sealed[:-1]))
    with pytest.raises(combsiv.InvalidTag):
        module.open_encrypted(file, *args, **kwargs)
    with pytest.raises(combsiv.InvalidTag):
        module.decrypt_range(file, 0, 10, *args, **kwargs)
    file.write_bytes(bytes(sealed))
    wrong = (os.urandom(len(args[0])),) + args[1:]
    with pytest.raises(combsiv.InvalidTag):
        module.open_encrypted(file, *wrong, **kwargs)
