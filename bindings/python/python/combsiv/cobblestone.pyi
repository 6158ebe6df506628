"""Type stubs of ``combsiv.cobblestone``: C2SP chunked encryption, one message at a time.

A message is ``salt (24) || commitment (32) || chunks``; every chunk holds 16 KiB of plaintext
and a 16-byte tag, but the last, which is shorter (possibly empty). ``update`` returns what is
ready, ``finalize`` the rest; a decryptor returns a chunk's plaintext only once its tag
verifies, raises ``InvalidTag`` for a wrong key or context and for a changed, reordered or
truncated message, and after any failure or ``finalize`` raises ``AlreadyFinalized``.
"""

from os import PathLike
from typing import BinaryIO, Union

from . import EncryptedFile

Buffer = Union[bytes, bytearray, memoryview]
StrPath = Union[str, "PathLike[str]"]

class Cobblestone128Encryptor:
    """Encrypts one message: Cobblestone-128: HKDF-Expand with SHA-512 and AES-128-GCM."""

    def __init__(self, key: Buffer, context: Buffer) -> None:
        """``key``: 16 random bytes (``generate_key``); ``context`` is bound into the
        message's keys and must be given to the decryptor too (may be empty)."""
    @staticmethod
    def generate_key() -> bytes:
        """16 random bytes from the OS."""
    def update(self, data: Buffer) -> bytes:
        """The ciphertext ready after ``data``: the header the first time, then every
        whole chunk."""
    def update_into(self, data: Buffer, buf: Buffer) -> int:
        """``update`` into ``buf`` (large enough, or ``ValueError``); returns the bytes written."""
    def finalize(self) -> bytes:
        """The final chunk (and the header if not returned yet)."""

class Cobblestone128Decryptor:
    """Decrypts one message: Cobblestone-128: HKDF-Expand with SHA-512 and AES-128-GCM."""

    def __init__(self, key: Buffer, context: Buffer) -> None: ...
    def update(self, data: Buffer) -> bytes:
        """The plaintext of every chunk ``data`` completes, each once it is authentic."""
    def update_into(self, data: Buffer, buf: Buffer) -> int:
        """``update`` into ``buf`` (large enough, or ``ValueError``); returns the bytes written."""
    def finalize(self) -> bytes:
        """The final chunk's plaintext; ``InvalidTag`` if the message is truncated."""

class Cobblestone256Encryptor:
    """Encrypts one message: Cobblestone-256: HKDF-Expand with SHA-512 and AES-256-GCM."""

    def __init__(self, key: Buffer, context: Buffer) -> None:
        """``key``: 32 random bytes (``generate_key``); ``context`` is bound into the
        message's keys and must be given to the decryptor too (may be empty)."""
    @staticmethod
    def generate_key() -> bytes:
        """32 random bytes from the OS."""
    def update(self, data: Buffer) -> bytes:
        """The ciphertext ready after ``data``: the header the first time, then every
        whole chunk."""
    def update_into(self, data: Buffer, buf: Buffer) -> int:
        """``update`` into ``buf`` (large enough, or ``ValueError``); returns the bytes written."""
    def finalize(self) -> bytes:
        """The final chunk (and the header if not returned yet)."""

class Cobblestone256Decryptor:
    """Decrypts one message: Cobblestone-256: HKDF-Expand with SHA-512 and AES-256-GCM."""

    def __init__(self, key: Buffer, context: Buffer) -> None: ...
    def update(self, data: Buffer) -> bytes:
        """The plaintext of every chunk ``data`` completes, each once it is authentic."""
    def update_into(self, data: Buffer, buf: Buffer) -> int:
        """``update`` into ``buf`` (large enough, or ``ValueError``); returns the bytes written."""
    def finalize(self) -> bytes:
        """The final chunk's plaintext; ``InvalidTag`` if the message is truncated."""

class CobblestoneSiv128Encryptor:
    """Encrypts one message: The construction over AES-128-GCM-SIV (not read by ``cryptography``)."""

    def __init__(self, key: Buffer, context: Buffer) -> None:
        """``key``: 16 random bytes (``generate_key``); ``context`` is bound into the
        message's keys and must be given to the decryptor too (may be empty)."""
    @staticmethod
    def generate_key() -> bytes:
        """16 random bytes from the OS."""
    def update(self, data: Buffer) -> bytes:
        """The ciphertext ready after ``data``: the header the first time, then every
        whole chunk."""
    def update_into(self, data: Buffer, buf: Buffer) -> int:
        """``update`` into ``buf`` (large enough, or ``ValueError``); returns the bytes written."""
    def finalize(self) -> bytes:
        """The final chunk (and the header if not returned yet)."""

class CobblestoneSiv128Decryptor:
    """Decrypts one message: The construction over AES-128-GCM-SIV (not read by ``cryptography``)."""

    def __init__(self, key: Buffer, context: Buffer) -> None: ...
    def update(self, data: Buffer) -> bytes:
        """The plaintext of every chunk ``data`` completes, each once it is authentic."""
    def update_into(self, data: Buffer, buf: Buffer) -> int:
        """``update`` into ``buf`` (large enough, or ``ValueError``); returns the bytes written."""
    def finalize(self) -> bytes:
        """The final chunk's plaintext; ``InvalidTag`` if the message is truncated."""

class CobblestoneSiv256Encryptor:
    """Encrypts one message: The construction over AES-256-GCM-SIV (not read by ``cryptography``)."""

    def __init__(self, key: Buffer, context: Buffer) -> None:
        """``key``: 32 random bytes (``generate_key``); ``context`` is bound into the
        message's keys and must be given to the decryptor too (may be empty)."""
    @staticmethod
    def generate_key() -> bytes:
        """32 random bytes from the OS."""
    def update(self, data: Buffer) -> bytes:
        """The ciphertext ready after ``data``: the header the first time, then every
        whole chunk."""
    def update_into(self, data: Buffer, buf: Buffer) -> int:
        """``update`` into ``buf`` (large enough, or ``ValueError``); returns the bytes written."""
    def finalize(self) -> bytes:
        """The final chunk (and the header if not returned yet)."""

class CobblestoneSiv256Decryptor:
    """Decrypts one message: The construction over AES-256-GCM-SIV (not read by ``cryptography``)."""

    def __init__(self, key: Buffer, context: Buffer) -> None: ...
    def update(self, data: Buffer) -> bytes:
        """The plaintext of every chunk ``data`` completes, each once it is authentic."""
    def update_into(self, data: Buffer, buf: Buffer) -> int:
        """``update`` into ``buf`` (large enough, or ``ValueError``); returns the bytes written."""
    def finalize(self) -> bytes:
        """The final chunk's plaintext; ``InvalidTag`` if the message is truncated."""

def encrypt_file(
    src: StrPath,
    dst: StrPath,
    key: Buffer,
    context: Buffer,
    *,
    siv: bool = False,
    threads: int = 0,
    overwrite: bool = False,
) -> int:
    """Encrypts the file ``src`` into ``dst`` as one message on every core: Cobblestone-128
    or -256 by the key's length (16 or 32 bytes; 24, AES-192, is refused), or with
    ``siv=True`` the construction over AES-GCM-SIV. Returns the plaintext length. ``dst`` is
    written beside under a temporary name and renamed when complete (``overwrite`` to
    replace an existing file)."""

def decrypt_file(
    src: StrPath,
    dst: StrPath,
    key: Buffer,
    context: Buffer,
    *,
    siv: bool = False,
    threads: int = 0,
    overwrite: bool = False,
) -> int:
    """Decrypts the message in ``src`` into ``dst`` on every core; returns the plaintext
    length. ``InvalidTag`` for a wrong key or context (checked before ``dst`` is created) or
    a changed or truncated message; on failure nothing unverified is left at ``dst``."""

def open_encrypted(
    file: Union[StrPath, BinaryIO], key: Buffer, context: Buffer, *, siv: bool = False
) -> EncryptedFile:
    """Opens a message (a path, or a binary file object with ``seek`` and ``read``) for
    reads at any offset; the commitment and the final chunk are checked first."""

def decrypt_range(
    file: Union[StrPath, BinaryIO],
    start: int,
    length: int,
    key: Buffer,
    context: Buffer,
    *,
    siv: bool = False,
) -> bytes:
    """``length`` plaintext bytes from ``start`` (fewer at the end) of a message, decrypting
    only the chunks they lie in and the final chunk."""
