"""Type stubs of ``combsiv.tink``: Tink's AEAD wire format under cleartext Tink keysets."""

from typing import Any, Optional, Union

Buffer = Union[bytes, bytearray, memoryview]

class Keyset:
    """A cleartext Tink keyset of ``AesGcmKey`` and ``AesGcmSivKey`` keys with TINK or RAW
    output prefixes. The primary key encrypts (``0x01 || key id || nonce || ciphertext ||
    tag`` for TINK, without the first five bytes for RAW); any enabled key decrypts."""

    @staticmethod
    def from_json(text: str) -> "Keyset":
        """Reads Tink's JSON form; ``ValueError`` naming what is not read."""
    @staticmethod
    def from_binary(data: Buffer) -> "Keyset":
        """Reads Tink's binary form (a serialized ``Keyset``)."""
    @property
    def primary_key_id(self) -> int: ...
    def encrypt(self, plaintext: Buffer, associated_data: Optional[Buffer] = None) -> bytes:
        """Encrypts under the primary key with a random 12-byte nonce."""
    def decrypt(self, ciphertext: Buffer, associated_data: Optional[Buffer] = None) -> bytes:
        """Decrypts with the enabled key the prefix names, or a RAW key; ``InvalidTag`` if
        none verifies it."""

def encrypt_column(values: Any, keyset: Keyset, associated_data: Any = None) -> Any:
    """Encrypts every row of an Arrow column (nulls stay null) under the primary key."""

def decrypt_column(values: Any, keyset: Keyset, associated_data: Any = None) -> Any:
    """Decrypts every row; ``InvalidTag`` with ``failed`` if any row is not authentic."""
