"""combsiv: fast AES-GCM-SIV (RFC 8452) and AES-GCM.

``AESGCMSIV`` and ``AESGCM`` have the surface of ``cryptography``'s classes of the same
names (``cryptography.hazmat.primitives.ciphers.aead``), so that::

    from combsiv import AESGCMSIV, InvalidTag

replaces the ``cryptography`` import. On top of it: ``encrypt_many``/``decrypt_many`` for
batches, ``encrypt_column``/``decrypt_column`` for Arrow columns (pyarrow, Polars, pandas,
DuckDB, Spark, Dask), ``Sealer`` (random nonces and a usage budget), ``encrypt_file``/``decrypt_file`` in
the ``combsiv`` command-line tool's format, ``combsiv.cobblestone`` (C2SP chunked encryption,
as ``cryptography.cobblestone``), and the AES-GCM-SIV usage bounds. Type stubs with
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
    "decrypt_file",
    "encrypt_file",
    "load_key_file",
    "nonce_bound",
    "random_nonce_bound",
]
