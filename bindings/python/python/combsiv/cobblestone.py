"""C2SP chunked encryption (https://c2sp.org/chunked-encryption): ``cryptography.cobblestone``'s
classes, so that::

    from combsiv.cobblestone import Cobblestone128Encryptor, Cobblestone128Decryptor

replaces the ``cryptography`` import, and what either writes the other reads. The
``CobblestoneSiv*`` classes run the same construction over AES-GCM-SIV (combsiv's
instantiation, named ``AEAD_AES_*_GCM_SIV`` in its key derivation), which ``cryptography``
does not read. Type stubs with the documentation are in ``cobblestone.pyi``.
"""

from ._combsiv import (
    Cobblestone128Decryptor,
    Cobblestone128Encryptor,
    Cobblestone256Decryptor,
    Cobblestone256Encryptor,
    CobblestoneSiv128Decryptor,
    CobblestoneSiv128Encryptor,
    CobblestoneSiv256Decryptor,
    CobblestoneSiv256Encryptor,
    _aead_name,
    _c2sp_decrypt_file,
    _c2sp_encrypt_file,
    _open_c2sp,
)
from ._random_access import EncryptedFile, read_range


def encrypt_file(src, dst, key, context, *, siv=False, threads=0, overwrite=False):
    """Encrypts the file ``src`` into ``dst`` as one message (Cobblestone-128 or -256 by the
    key's length; with ``siv=True``, AES-GCM-SIV) on every core; returns the plaintext
    length. ``dst`` is complete, or not there at all."""
    return _c2sp_encrypt_file(
        src, dst, key, context, siv=siv, threads=threads, overwrite=overwrite
    )


def decrypt_file(src, dst, key, context, *, siv=False, threads=0, overwrite=False):
    """Decrypts the message in the file ``src`` into ``dst`` on every core; returns the
    plaintext length. ``InvalidTag`` for a wrong key or context (before ``dst`` exists) or a
    damaged or truncated file (nothing unverified is left at ``dst``)."""
    return _c2sp_decrypt_file(
        src, dst, key, context, siv=siv, threads=threads, overwrite=overwrite
    )


def open_encrypted(file, key, context, *, siv=False):
    """Opens a message (a path, or a binary file object with ``seek`` and ``read``) for
    reads at any offset: an ``EncryptedFile``. The commitment and the final chunk are
    checked first."""
    return EncryptedFile(_open_c2sp(file, _aead_name(len(key), siv=siv), key, context))


def decrypt_range(file, start, length, key, context, *, siv=False):
    """``length`` plaintext bytes from ``start`` (fewer at the end) of a message, decrypting
    only the chunks they lie in and the final chunk."""
    return read_range(open_encrypted(file, key, context, siv=siv), start, length)


__all__ = [
    "Cobblestone128Decryptor",
    "Cobblestone128Encryptor",
    "Cobblestone256Decryptor",
    "Cobblestone256Encryptor",
    "CobblestoneSiv128Decryptor",
    "CobblestoneSiv128Encryptor",
    "CobblestoneSiv256Decryptor",
    "CobblestoneSiv256Encryptor",
    "EncryptedFile",
    "decrypt_file",
    "decrypt_range",
    "encrypt_file",
    "open_encrypted",
]
