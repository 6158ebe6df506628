"""Tink's AEAD wire format under cleartext Tink keysets (AES-GCM and AES-GCM-SIV keys, TINK
and RAW output prefixes): what Tink and BigQuery's AEAD functions write and read.

``Keyset.from_json(text)`` / ``Keyset.from_binary(data)`` read a keyset (encrypted keysets,
under a KMS key, are out of scope: decrypt them with Tink first); ``keyset.encrypt`` and
``keyset.decrypt`` take one value, ``encrypt_column`` / ``decrypt_column`` an Arrow column.
The primary key encrypts; any enabled key decrypts by its id. What a keyset holds that
combsiv does not read (another key type, the LEGACY or CRUNCHY prefix, an AES-192 key) is a
``ValueError`` that names it.
"""

from ._combsiv import Keyset
from .layouts import _binary, _bytes, _rows
from . import InvalidTag


def _per_row(associated_data, count):
    if associated_data is None or isinstance(associated_data, (bytes, bytearray, memoryview)):
        return [associated_data] * count
    rows = _rows(associated_data)
    if len(rows) != count:
        raise ValueError("one associated data value per row")
    return rows


def encrypt_column(values, keyset, associated_data=None):
    """Encrypts every row of an Arrow column (nulls stay null) as Tink does under the
    keyset's primary key. ``associated_data``: ``None``, one bytes-like value for every row,
    or a column with one per row."""
    rows = _rows(values)
    ads = _per_row(associated_data, len(rows))
    return _binary(
        [None if row is None else keyset.encrypt(_bytes(row), ad) for row, ad in zip(rows, ads)]
    )


def decrypt_column(values, keyset, associated_data=None):
    """Decrypts every row of a column Tink (or ``encrypt_column``) wrote; raises
    ``InvalidTag`` with ``failed`` (the row numbers) if any row is not authentic."""
    rows = _rows(values)
    ads = _per_row(associated_data, len(rows))
    out, failed = [], []
    for i, (row, ad) in enumerate(zip(rows, ads)):
        try:
            out.append(None if row is None else keyset.decrypt(row, ad))
        except InvalidTag:
            out.append(None)
            failed.append(i)
    if failed:
        error = InvalidTag(f"{len(failed)} of {len(rows)} rows are not authentic (the first: {failed[:10]})")
        error.failed = failed
        raise error
    return _binary(out)


__all__ = ["Keyset", "decrypt_column", "encrypt_column"]
