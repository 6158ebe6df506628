"""combsiv: fast AES-GCM-SIV (RFC 8452) and AES-GCM.

``AESGCMSIV`` and ``AESGCM`` have the surface of ``cryptography``'s classes of the same
names (``cryptography.hazmat.primitives.ciphers.aead``), so that::

    from combsiv import AESGCMSIV, InvalidTag

replaces the ``cryptography`` import. On top of it: ``encrypt_many``/``decrypt_many`` for
batches, ``encrypt_column``/``decrypt_column`` for Arrow columns (pyarrow, Polars, pandas,
DuckDB, Spark, Dask), ``Sealer`` (random nonces and a usage budget), ``encrypt_file``/``decrypt_file`` in
the ``combsiv`` command-line tool's format, ``combsiv.cobblestone`` (C2SP chunked encryption,
as ``cryptography.cobblestone``), ``open_encrypted``/``decrypt_range`` (random access),
``combsiv.layouts`` (Spark's and ClickHouse's columns), ``combsiv.tink`` (Tink keysets and
wire format), and the AES-GCM-SIV usage bounds. Type stubs with
the full documentation are in ``__init__.pyi``.
"""

from ._combsiv import (
    AESGCM,
    AESGCMSIV,
    AlreadyFinalized,
    Bound,
    InvalidTag,
    KeyExhausted,
    Sealer,
    available_backends,
    backend,
    decrypt_file,
    encrypt_file,
    load_key_file,
    nonce_bound,
    random_nonce_bound,
)
from ._combsiv import _open_stream
from ._random_access import EncryptedFile, read_range


def open_encrypted(file, key):
    """Opens a file in the ``combsiv`` command-line tool's format (a path, or a binary file
    object with ``seek`` and ``read``) under its 32-byte master key, for reads at any offset:
    an ``EncryptedFile``. The final chunk is authenticated first (``InvalidTag`` for a wrong
    key or a truncated or damaged end)."""
    return EncryptedFile(_open_stream(file, key))


def decrypt_range(file, start, length, key):
    """``length`` plaintext bytes from ``start`` (fewer at the end) of a file in the
    ``combsiv`` format, decrypting only the chunks they lie in and the final chunk."""
    return read_range(open_encrypted(file, key), start, length)


__all__ = [
    "AESGCM",
    "AESGCMSIV",
    "AlreadyFinalized",
    "Bound",
    "InvalidTag",
    "KeyExhausted",
    "Sealer",
    "available_backends",
    "backend",
    "EncryptedFile",
    "decrypt_file",
    "decrypt_range",
    "encrypt_file",
    "load_key_file",
    "nonce_bound",
    "open_encrypted",
    "random_nonce_bound",
]
