"""Other engines' column layouts, as separate functions per engine: each engine's layout
needs its own inputs (ClickHouse keeps the IV in a column of its own; Spark puts it in the
value), so one ``layout=`` argument would take arguments that mean something for some
layouts only. Every function takes and returns Arrow columns (anything ``pyarrow.array``
accepts, or an Arrow array), keeps nulls null, and raises ``InvalidTag`` (with ``failed``,
the row numbers) if a row is not authentic.

- Spark: ``aes_encrypt(value, key, 'GCM')``, Spark's default mode, writes
  ``IV (12) || ciphertext || tag (16)`` with a random IV: what ``AESGCM.encrypt_column``
  writes with ``nonce=None``. ``spark_encrypt`` / ``spark_decrypt`` are those, with the key
  checked as Spark's.
- ClickHouse: ``encrypt('aes-128-gcm' | 'aes-256-gcm', value, key, iv[, aad])`` writes
  ``ciphertext || tag`` and the IV is kept beside it, in a column of its own. An empty value
  encrypts to its 16-byte tag (ClickHouse in chdb 4.4.0, as measured by the tests). Its
  ``decrypt`` returns an empty value for an empty string, which carries no tag and so proves
  nothing: ``clickhouse_decrypt`` refuses such a row as not authentic.

AES-192, which both engines accept, is refused: combsiv has no AES-192.
"""

from . import AESGCM, InvalidTag

NONCE_LEN = 12
TAG_LEN = 16


def _cipher(key):
    key = bytes(key)
    if len(key) == 24:
        raise ValueError("AES-192 keys (24 bytes) are not supported: combsiv has no AES-192")
    if len(key) not in (16, 32):
        raise ValueError("key must be 16 or 32 bytes (AES-128 or AES-256)")
    return AESGCM(key)


def _pyarrow():
    try:
        import pyarrow
    except ImportError as error:  # pragma: no cover - pyarrow is the column calls' engine
        raise ImportError("the column layouts need pyarrow") from error
    return pyarrow


def _rows(values):
    pa = _pyarrow()
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        values = pa.array(values)
    return values.to_pylist()


def _binary(rows):
    pa = _pyarrow()
    return pa.array(rows, type=pa.binary())


def spark_encrypt(values, key, associated_data=None, *, threads=None):
    """Encrypts a column as Spark's ``aes_encrypt(value, key, 'GCM'[, 'DEFAULT', iv, aad])``
    with a random IV per row: ``IV || ciphertext || tag``; Spark's ``aes_decrypt(value, key,
    'GCM')`` reads it."""
    return _cipher(key).encrypt_column(values, None, associated_data, threads=threads)


def spark_decrypt(values, key, associated_data=None, *, threads=None):
    """Decrypts a column written by Spark's ``aes_encrypt(value, key, 'GCM')`` (or by
    ``spark_encrypt``) into binary values."""
    return _cipher(key).decrypt_column(values, None, associated_data, threads=threads)


def clickhouse_encrypt(values, key, ivs=None, associated_data=None):
    """Encrypts a column as ClickHouse's ``encrypt('aes-N-gcm', value, key, iv[, aad])``:
    returns ``(ciphertexts, ivs)``, each row ``ciphertext || tag`` beside its 12-byte IV. ``ivs=None`` draws a random IV per row; given IVs must be distinct
    (AES-GCM must never reuse one under a key). ``associated_data``: one bytes-like value for
    every row, or ``None``."""
    import os

    cipher = _cipher(key)
    rows = _rows(values)
    ivs = [os.urandom(NONCE_LEN) for _ in rows] if ivs is None else _rows(ivs)
    if len(ivs) != len(rows):
        raise ValueError("one IV per row")
    live = [i for i, row in enumerate(rows) if row is not None]
    sealed = cipher.encrypt_many(
        [_iv(ivs[i]) for i in live],
        [_bytes(rows[i]) for i in live],
        associated_data,
    )
    out = [None] * len(rows)
    for i, row in zip(live, sealed):
        out[i] = row
    return _binary(out), _binary([None if iv is None else bytes(iv) for iv in ivs])


def clickhouse_decrypt(values, key, ivs, associated_data=None):
    """Decrypts a column written by ClickHouse's ``encrypt('aes-N-gcm', value, key, iv)``
    (or ``clickhouse_encrypt``) with its IV column, into binary values. An empty string (no
    tag) is not authentic."""
    cipher = _cipher(key)
    rows, ivs = _rows(values), _rows(ivs)
    if len(ivs) != len(rows):
        raise ValueError("one IV per row")
    live = [i for i, row in enumerate(rows) if row is not None]
    out = [None] * len(rows)
    try:
        opened = cipher.decrypt_many([_iv(ivs[i]) for i in live], [rows[i] for i in live], associated_data)
    except InvalidTag as error:
        failed = [live[i] for i in error.failed]
        raised = InvalidTag(
            f"{len(failed)} of {len(rows)} rows are not authentic (the first: {failed[:10]})"
        )
        raised.failed = failed
        raise raised from None
    for i, row in zip(live, opened):
        out[i] = row
    return _binary(out)


def _iv(iv):
    if iv is None or len(iv) != NONCE_LEN:
        raise ValueError("each IV must be 12 bytes (ClickHouse's GCM IVs of other lengths are not supported)")
    return bytes(iv)


def _bytes(value):
    return value.encode() if isinstance(value, str) else bytes(value)
