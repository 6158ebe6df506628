"""Random access into encrypted files: a read-only, seekable binary file object over the
library's seekable decryptor, which authenticates the final chunk when the file opens and
decrypts only the chunks each read covers."""

import io


class EncryptedFile(io.RawIOBase):
    """The plaintext of an encrypted file, read at any offset.

    Made by ``combsiv.open_encrypted`` or ``combsiv.cobblestone.open_encrypted``. Reading a
    damaged chunk raises ``InvalidTag`` for that read only; the length (``size``, a seek
    from the end) is authenticated. Wrap it in ``io.BufferedReader`` for line reads.
    """

    def __init__(self, inner):
        super().__init__()
        self._inner = inner
        self._position = 0

    @property
    def size(self):
        """The plaintext length in bytes."""
        return self._inner.size

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        self._checkClosed()
        return self._position

    def seek(self, offset, whence=io.SEEK_SET):
        self._checkClosed()
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self.size}
        if whence not in base:
            raise ValueError(f"invalid whence ({whence!r})")
        position = base[whence] + offset
        if position < 0:
            raise OSError("negative seek position")
        self._position = position
        return position

    def read(self, size=-1):
        """Up to ``size`` bytes from the position (the rest of the file for -1 or None),
        decrypted straight into the bytes returned."""
        self._checkClosed()
        if size is None or size < 0:
            size = max(self.size - self._position, 0)
        data = self._inner.read(self._position, size)
        self._position += len(data)
        return data

    def readall(self):
        return self.read()

    def readinto(self, buffer):
        self._checkClosed()
        view = memoryview(buffer).cast("B")
        data = self._inner.read(self._position, len(view))
        view[: len(data)] = data
        self._position += len(data)
        return len(data)

    def ciphertext_range(self, start, length):
        """The ciphertext bytes ``(start, end)`` that hold ``length`` plaintext bytes from
        ``start``: what to fetch from an object store."""
        return self._inner.ciphertext_range(start, length)

    def close(self):
        self._inner = None if self.closed else self._inner
        super().close()


def read_range(encrypted, start, length):
    """``length`` bytes from ``start`` (fewer at the end) of an opened ``EncryptedFile``."""
    if start < 0 or length < 0:
        raise ValueError("start and length must not be negative")
    with encrypted:
        encrypted.seek(start)
        return encrypted.read(length)
