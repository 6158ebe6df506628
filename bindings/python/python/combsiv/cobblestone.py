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
)

__all__ = [
    "Cobblestone128Decryptor",
    "Cobblestone128Encryptor",
    "Cobblestone256Decryptor",
    "Cobblestone256Encryptor",
    "CobblestoneSiv128Decryptor",
    "CobblestoneSiv128Encryptor",
    "CobblestoneSiv256Decryptor",
    "CobblestoneSiv256Encryptor",
]
