"""encrypt_column/decrypt_column: Arrow columns in, Arrow columns out, on every backend."""

import os
import pathlib
import pickle
import subprocess
import sys

import pytest

pa = pytest.importorskip("pyarrow")

import combsiv
from combsiv import AESGCM, AESGCMSIV, InvalidTag, KeyExhausted

NONCE = bytes(range(12))
VALUES = [b"alpha", None, b"", b"x" * 15, b"y" * 16, b"z" * 17, b"q" * 1500, None, b"alpha"]
TYPES = [pa.binary(), pa.large_binary(), pa.binary_view()]
STRING_TYPES = [pa.string(), pa.large_string(), pa.string_view()]


def column(values, type=pa.binary()):
    if pa.types.is_string(type) or pa.types.is_large_string(type) or type == pa.string_view():
        values = [None if v is None else v.decode() for v in values]
    return pa.array(values, type=type)


@pytest.mark.parametrize("type", TYPES + STRING_TYPES, ids=str)
def test_round_trip_both_modes_every_type(backend, type):
    cipher = AESGCMSIV(bytes(range(32)), backend=backend)
    values = column(VALUES, type)
    for nonce in (None, NONCE):
        sealed = cipher.encrypt_column(values, nonce=nonce)
        assert isinstance(sealed, pa.Array)
        assert sealed.type == (pa.large_binary() if "large" in str(type) else pa.binary())
        assert sealed.null_count == 2
        opened = cipher.decrypt_column(sealed, nonce=nonce)
        assert opened.to_pylist() == VALUES


def test_rows_are_the_documented_formats(backend):
    """Randomized rows are Sealer's nonce || ciphertext || tag; deterministic rows are
    encrypt(nonce, value, aad) of the one nonce."""
    key = AESGCMSIV.generate_key(256)
    cipher = AESGCMSIV(key, backend=backend)
    sealer = combsiv.Sealer(key)
    values = column(VALUES)
    for row, value in zip(cipher.encrypt_column(values, associated_data=b"ssn").to_pylist(), VALUES):
        if value is None:
            assert row is None
            continue
        assert len(row) == 12 + len(value) + 16
        assert cipher.decrypt(row[:12], row[12:], b"ssn") == value
        assert sealer.open(row, b"ssn") == value
    fixed = cipher.encrypt_column(values, nonce=NONCE, associated_data=b"ssn").to_pylist()
    for row, value in zip(fixed, VALUES):
        assert row == (None if value is None else cipher.encrypt(NONCE, value, b"ssn"))


def test_deterministic_rows_repeat_and_randomized_rows_do_not():
    cipher = AESGCMSIV(bytes(16))
    values = column([b"same", b"same", b"other"])
    fixed = cipher.encrypt_column(values, nonce=NONCE).to_pylist()
    assert fixed[0] == fixed[1] != fixed[2]
    random = cipher.encrypt_column(values).to_pylist()
    assert random[0] != random[1]
    assert random[0][:12] != random[1][:12]


def test_random_nonces_are_distinct_across_chunks_runs_and_calls():
    cipher = AESGCMSIV(bytes(16))
    chunked = pa.chunked_array([column([b"v"] * 700), column([b"v"] * 300), column([b"v"] * 700)])
    nonces = [row[:12] for call in range(2) for row in cipher.encrypt_column(chunked).to_pylist()]
    assert len(set(nonces)) == len(nonces) == 3400


def test_matches_cryptography_row_by_row(backend):
    aead = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
    key = bytes(range(16))
    # Short rows are sealed as a batch, rows from 512 bytes one by one from the input.
    lengths = list(range(0, 200, 7)) + [511, 512, 513, 1024, 1500, 4097]
    values = column([os.urandom(n) for n in lengths])
    theirs = aead.AESGCMSIV(key)
    ours = AESGCMSIV(key, backend=backend)
    for row, value in zip(ours.encrypt_column(values, nonce=NONCE).to_pylist(), values.to_pylist()):
        assert row == theirs.encrypt(NONCE, value, None)
    gcm = AESGCM(key, backend=backend)
    for row, value in zip(gcm.encrypt_column(values, associated_data=b"a").to_pylist(), values.to_pylist()):
        assert aead.AESGCM(key).decrypt(row[:12], row[12:], b"a") == value


def test_aes_gcm_columns_are_randomized_only():
    cipher = AESGCM(bytes(16))
    values = column(VALUES)
    assert cipher.decrypt_column(cipher.encrypt_column(values)).to_pylist() == VALUES
    with pytest.raises(ValueError, match="randomized only"):
        cipher.encrypt_column(values, nonce=NONCE)


def test_zero_rows_empty_values_and_all_nulls():
    cipher = AESGCMSIV(bytes(16))
    for values in ([], [b""], [None, None], [b"", None, b""]):
        sealed = cipher.encrypt_column(pa.array(values, type=pa.binary()))
        assert len(sealed) == len(values)
        assert cipher.decrypt_column(sealed).to_pylist() == values


def test_sliced_arrays_with_a_non_zero_offset():
    cipher = AESGCMSIV(bytes(16))
    values = column([bytes([i]) * i for i in range(40)] + [None] * 9)
    for start, length in [(1, 5), (7, 30), (33, 16), (40, 9)]:
        part = values.slice(start, length)
        sealed = cipher.encrypt_column(part)
        assert cipher.decrypt_column(sealed).to_pylist() == part.to_pylist()
        # A slice of the sealed column opens as well (its offsets do not start at 0).
        assert cipher.decrypt_column(sealed.slice(2)).to_pylist() == part.to_pylist()[2:]


def test_chunked_arrays_keep_their_chunks():
    cipher = AESGCMSIV(bytes(16))
    chunked = pa.chunked_array([column(VALUES[:4]), column(VALUES[4:]), column([])])
    sealed = cipher.encrypt_column(chunked, associated_data=b"col")
    assert isinstance(sealed, pa.ChunkedArray)
    assert [len(c) for c in sealed.chunks] == [4, len(VALUES) - 4, 0]
    assert cipher.decrypt_column(sealed, associated_data=b"col").to_pylist() == VALUES


def test_associated_data_per_row():
    cipher = AESGCMSIV(bytes(16))
    # Row 1 is long enough to be sealed and opened from the input, not copied first.
    values = column([b"a", b"b" * 1500, None, b"c"])
    aad = pa.array(["row0", "row1", None, "row3"])
    sealed = cipher.encrypt_column(values, associated_data=aad)
    assert cipher.decrypt_column(sealed, associated_data=aad).to_pylist() == values.to_pylist()
    assert sealed[0].as_py()[12:] != cipher.encrypt(sealed[0].as_py()[:12], b"a", b"row1")
    swapped = pa.array(["row1", "row0", None, "row3"])
    with pytest.raises(InvalidTag) as failure:
        cipher.decrypt_column(sealed, associated_data=swapped)
    assert failure.value.failed == [0, 1]
    # Chunked differently from the values: rows are matched by their number in the column.
    chunked = pa.chunked_array([aad.slice(0, 1), aad.slice(1, 3)])
    opened = cipher.decrypt_column(pa.chunked_array([sealed.slice(0, 3), sealed.slice(3)]), associated_data=chunked)
    assert opened.to_pylist() == values.to_pylist()
    gcm = AESGCM(bytes(16))
    assert gcm.decrypt_column(gcm.encrypt_column(values, associated_data=aad), associated_data=aad).equals(values)
    with pytest.raises(ValueError, match="3 associated data for 4 rows"):
        cipher.encrypt_column(values, associated_data=pa.array(["a", "b", "c"]))
    with pytest.raises(ValueError, match="null at row 0"):
        cipher.encrypt_column(values, associated_data=pa.array([None, "b", "c", "d"]))


@pytest.mark.parametrize("row", [3, 6], ids=["short row", "long row"])
def test_a_flipped_bit_fails_only_its_row(backend, row):
    """Short rows are sealed and opened as a batch, long ones (1500 bytes) one by one from
    the input."""
    cipher = AESGCMSIV(bytes(16), backend=backend)
    sealed = cipher.encrypt_column(column(VALUES)).to_pylist()
    sealed[row] = sealed[row][:20] + bytes([sealed[row][20] ^ 1]) + sealed[row][21:]
    with pytest.raises(InvalidTag) as failure:
        cipher.decrypt_column(pa.array(sealed))
    assert failure.value.failed == [row]
    results = failure.value.results
    assert results.to_pylist() == VALUES[:row] + [None] + VALUES[row + 1 :]
    # The failed row's bytes are zeroed, not plaintext.
    offsets = memoryview(results.buffers()[1]).cast("i")
    assert set(results.buffers()[2].to_pybytes()[offsets[row] : offsets[row + 1]]) <= {0}


def test_wrong_key_fails_every_row_and_returns_no_plaintext():
    sealed = AESGCMSIV(bytes(16)).encrypt_column(column(VALUES))
    with pytest.raises(InvalidTag) as failure:
        AESGCMSIV(bytes(15) + b"\x01").decrypt_column(sealed)
    assert failure.value.failed == [i for i, v in enumerate(VALUES) if v is not None]
    assert failure.value.results.to_pylist() == [None] * len(VALUES)
    # The failed rows' bytes are zeroed, not plaintext.
    assert set(failure.value.results.buffers()[2].to_pybytes()) <= {0}


def test_rows_too_short_for_a_tag_fail_alone():
    cipher = AESGCMSIV(bytes(16))
    good = cipher.encrypt_column(column([b"ok"])).to_pylist()[0]
    with pytest.raises(InvalidTag) as failure:
        cipher.decrypt_column(pa.array([b"", good, b"\x00" * 27, b"\x00" * 15]))
    assert failure.value.failed == [0, 2, 3]
    assert failure.value.results.to_pylist() == [None, b"ok", None, None]
    with pytest.raises(InvalidTag) as failure:
        cipher.decrypt_column(pa.array([b"\x00" * 15]), nonce=NONCE)
    assert failure.value.failed == [0]


def test_the_budget_refuses_before_any_work():
    # One-block rows under random nonces: 3M / 2^96 dominates; this limit allows 64 rows.
    import math

    limit = math.log2(3 * 64) - 96 + 1e-6
    cipher = AESGCMSIV(bytes(16), limit_log2=limit)
    cipher.encrypt_column(column([b"x"] * 60))
    with pytest.raises(KeyExhausted):
        cipher.encrypt_column(column([b"x"] * 5))
    usage = cipher.column_usage
    assert usage["random_nonce_rows"] == 60
    assert usage["bound_log2"] <= limit
    cipher.encrypt_column(column([b"x"] * 4 + [None] * 100))
    assert cipher.column_usage["random_nonce_rows"] == 64
    # Deterministic rows count under their nonce; decryption costs nothing.
    fixed = AESGCMSIV(bytes(16))
    sealed = fixed.encrypt_column(column(VALUES), nonce=NONCE)
    fixed.decrypt_column(sealed, nonce=NONCE)
    assert fixed.column_usage["fixed_nonce_rows"] == len(VALUES) - 2
    assert fixed.column_usage["fixed_nonces"] == 1
    assert AESGCM(bytes(16), limit_log2=-200).column_usage["bound_log2"] == float("-inf")
    with pytest.raises(KeyExhausted):
        AESGCM(bytes(16), limit_log2=-200).encrypt_column(column([b"x"]))


def test_threads_do_not_change_the_result():
    cipher = AESGCMSIV(bytes(16))
    values = column([os.urandom(n % 1600) for n in range(3000)])
    one = cipher.encrypt_column(values, nonce=NONCE, threads=1)
    assert cipher.encrypt_column(values, nonce=NONCE, threads=4).equals(one)
    assert cipher.decrypt_column(one, nonce=NONCE, threads=3).equals(values)


def test_bad_arguments_raise_typed_errors():
    cipher = AESGCMSIV(bytes(16))
    with pytest.raises(TypeError, match="Arrow array or stream"):
        cipher.encrypt_column([b"a", b"b"])
    with pytest.raises(TypeError, match="binary or string"):
        cipher.encrypt_column(pa.array([1, 2, 3]))
    with pytest.raises(ValueError, match="12 bytes"):
        cipher.encrypt_column(column([b"a"]), nonce=b"short")
    with pytest.raises(TypeError, match="associated_data"):
        cipher.encrypt_column(column([b"a"]), associated_data=3)


def test_cipher_objects_never_carry_the_key_out():
    key = bytes(range(100, 116))
    for cipher in (AESGCMSIV(key), AESGCM(key)):
        assert key.hex() not in repr(cipher) and str(key) not in repr(cipher)
        with pytest.raises(TypeError):
            pickle.dumps(cipher)


def test_without_pyarrow_the_result_is_an_arrow_capsule_object(tmp_path):
    """With pyarrow absent, the result still has the Arrow PyCapsule interface, which
    Polars reads without a copy."""
    pytest.importorskip("polars")
    script = """
import sys
sys.modules["pyarrow"] = None
import polars as pl
import combsiv
cipher = combsiv.AESGCMSIV(bytes(16))
values = pl.Series("v", ["a", None, "ccc"])
sealed = cipher.encrypt_column(values)
assert not type(sealed).__module__.startswith("pyarrow"), type(sealed)
assert hasattr(sealed, "__arrow_c_stream__")
opened = pl.Series(cipher.decrypt_column(pl.Series(sealed))).cast(pl.String)
assert opened.to_list() == ["a", None, "ccc"], opened.to_list()
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def _rows_until_exhausted(cipher, **kwargs):
    """Seals one-byte rows until the cipher's budget refuses the next one; returns the count."""
    sealed, chunk = 0, 4096
    rows = pa.array([b"x"] * chunk, pa.binary())
    while chunk:
        try:
            cipher.encrypt_column(rows.slice(0, chunk), **kwargs)
            sealed += chunk
        except KeyExhausted:
            chunk //= 2
    return sealed


@pytest.mark.parametrize("cls", [AESGCMSIV, AESGCM])
def test_workers_within_their_split_stay_within_the_whole_budget(cls):
    # W workers, each with a budget of worker_limit_log2(W), seal all they may; the same rows
    # counted by one object with the whole limit must fit it (and nearly fill it). The
    # limits are tiny, so that a few thousand rows reach them.
    total = -81.0 if cls is AESGCMSIV else -73.0
    workers = 4
    each = cls.worker_limit_log2(workers, limit_log2=total)
    assert each == total - (1 if cls is AESGCMSIV else 2) * 2
    key = bytes(32)
    rows = sum(_rows_until_exhausted(cls(key, limit_log2=each)) for _ in range(workers))
    whole = cls(key, limit_log2=total)
    whole.encrypt_column(pa.array([b"x"] * rows, pa.binary()))  # within it
    assert whole.column_usage["bound_log2"] > total - 1.0
    if cls is AESGCM:
        # The split in proportion to the workers, right for AES-GCM-SIV's random nonces,
        # would let AES-GCM's workers take the key past its limit.
        linear = total - 2.0
        rows = sum(_rows_until_exhausted(cls(key, limit_log2=linear)) for _ in range(workers))
        with pytest.raises(KeyExhausted):
            cls(key, limit_log2=total).encrypt_column(pa.array([b"x"] * rows, pa.binary()))
    # Deterministic columns' bound grows with the square of the rows under their nonce
    # (the Rust tests recompute it for any number of workers).
    assert AESGCMSIV.worker_limit_log2(64, deterministic=True) == -32.0 - 12.0
    with pytest.raises(ValueError):
        AESGCM.worker_limit_log2(4, deterministic=True)
    with pytest.raises(ValueError):
        cls.worker_limit_log2(0)


def test_what_a_column_shows_and_per_row_associated_data():
    # Both modes keep nulls, order and exact lengths; deterministic rows are equal across
    # calls; a row moved to another row decrypts there unless per-row associated data names
    # each row, as the README shows (its snippet runs here).
    cipher = AESGCMSIV(bytes(32))
    values = pa.array([b"alice", None, b"bob", b"alice"], pa.binary())
    randomized = cipher.encrypt_column(values)
    deterministic = cipher.encrypt_column(values, nonce=NONCE)
    assert randomized.is_null().to_pylist() == [False, True, False, False]
    assert [None if v is None else len(v) for v in randomized.to_pylist()] == [33, None, 31, 33]
    assert [None if v is None else len(v) for v in deterministic.to_pylist()] == [21, None, 19, 21]
    assert deterministic[0] == deterministic[3] == cipher.encrypt_column(values, nonce=NONCE)[0]
    moved = pa.array([randomized[2].as_py(), None, randomized[0].as_py(), randomized[3].as_py()])
    assert cipher.decrypt_column(moved).to_pylist() == [b"bob", None, b"alice", b"alice"]

    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    snippet = next(
        block for block in readme.split("```python")[1:] if "associated_data=ids" in block
    ).split("```")[0]
    values = pa.array([b"078-05-1120", b"219-09-9999", b"457-55-5462"])
    scope = {"pa": pa, "cipher": cipher, "values": values}
    exec(snippet, scope)
    assert scope["opened"].to_pylist() == values.to_pylist()
    swapped = pa.array([scope["sealed"][1].as_py(), scope["sealed"][0].as_py(), scope["sealed"][2].as_py()])
    with pytest.raises(InvalidTag) as info:
        cipher.decrypt_column(swapped, associated_data=scope["ids"])
    assert info.value.failed == [0, 1]
