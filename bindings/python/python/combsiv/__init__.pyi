"""Type stubs and documentation of the combsiv package."""

from os import PathLike
import io
from typing import Any, BinaryIO, Optional, Protocol, Sequence, Tuple, TypedDict, Union

from typing_extensions import Buffer as _Buffer  # bytes, bytearray, memoryview, ...

BytesLike = _Buffer
AssociatedData = Optional[BytesLike]
BatchAssociatedData = Union[None, BytesLike, Sequence[BytesLike]]
StrPath = Union[str, "PathLike[str]"]

class ArrowArrayLike(Protocol):
    """pyarrow, Polars, pandas (Arrow dtypes), DuckDB, ...: the Arrow PyCapsule interface."""

    def __arrow_c_array__(self, requested_schema: Any = None) -> Tuple[Any, Any]: ...

class ArrowStreamLike(Protocol):
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...

ArrowColumn = Union[ArrowArrayLike, ArrowStreamLike]
ColumnAssociatedData = Union[None, BytesLike, ArrowColumn]

class ColumnUsage(TypedDict):
    random_nonce_rows: int
    fixed_nonce_rows: int
    fixed_nonces: int
    max_blocks: int
    bound_log2: float
    limit_log2: float

class AlreadyFinalized(Exception):
    """An incremental encryptor or decryptor (``combsiv.cobblestone``) was used after
    ``finalize``, or after it failed.

    Where ``cryptography`` is installed, a subclass of
    ``cryptography.exceptions.AlreadyFinalized``; otherwise of ``Exception``.
    """

class InvalidTag(Exception):
    """The data is not authentic under this key, nonce and associated data.

    Where ``cryptography`` is installed (when ``combsiv`` is imported), a subclass of
    ``cryptography.exceptions.InvalidTag``: code written for ``cryptography`` that catches
    that one catches this one too, with no second ``except``. Otherwise a subclass of
    ``Exception``.

    Raised by ``decrypt_many`` and ``decrypt_column`` too; then ``failed`` lists the indices
    of the messages (rows) that failed and ``results`` holds the plaintexts of the others:
    a list with ``None`` for failed messages, or the Arrow result with failed rows null. No
    plaintext of a failed message is ever returned.
    """

    failed: list[int]
    results: Any

class KeyExhausted(Exception):
    """A ``Sealer`` or ``encrypt_column`` refused to encrypt: the messages would take the
    key past its usage bound."""

class AESGCMSIV:
    """AES-GCM-SIV (RFC 8452): authenticated encryption that stays secure when a nonce
    repeats (a repeat only reveals whether two messages were equal).

    Same surface as ``cryptography``'s ``AESGCMSIV``: 16- or 32-byte keys (AES-192 is not
    offered: ``ValueError``), 12-byte nonces (``ValueError`` otherwise), ``encrypt`` returns
    ``ciphertext || tag``, ``decrypt`` raises ``InvalidTag``. Any bytes-like object is
    accepted for every input, and read once: anything but ``bytes`` is copied first (into the
    output, where the work then runs in place), so a buffer another thread writes mid-call
    cannot yield a ciphertext that never opens. Calls over 4 KiB release the GIL
    (``encrypt_into``/``decrypt_into``, which write your buffer, keep it). The key schedule
    is wiped when the object is freed.

    ``backend`` picks "portable", "aesni", "vaes", "avx512" or "armv8" (default: the fastest this CPU has).
    ``limit_log2`` is the usage budget of ``encrypt_column`` (an advantage bound of
    ``2**limit_log2``; the other calls take your nonces and are not counted).

    Cipher objects cannot be pickled and their ``repr`` never shows the key: send a key to
    another process yourself (and preferably only a way to find it, such as a key file path).
    """

    def __init__(self, key: BytesLike, backend: Optional[str] = None, *, limit_log2: float = -32.0) -> None: ...
    @staticmethod
    def generate_key(bit_length: int) -> bytes:
        """128 or 256 random bits from the operating system."""
    @property
    def backend(self) -> str: ...
    def encrypt(self, nonce: BytesLike, data: BytesLike, associated_data: AssociatedData) -> bytes: ...
    def decrypt(self, nonce: BytesLike, data: BytesLike, associated_data: AssociatedData) -> bytes: ...
    def encrypt_into(
        self, nonce: BytesLike, data: BytesLike, associated_data: AssociatedData, buf: BytesLike
    ) -> int:
        """Writes ``ciphertext || tag`` into ``buf``, which must be exactly ``len(data) + 16``
        bytes and writable (``ValueError`` otherwise); returns the length written. ``buf`` may
        share memory with ``data`` (in place, or shifted): ``data`` is read once, into
        ``buf``, before anything is written there."""
    def decrypt_into(
        self, nonce: BytesLike, data: BytesLike, associated_data: AssociatedData, buf: BytesLike
    ) -> int:
        """Writes the plaintext into ``buf`` (exactly ``len(data) - 16`` bytes); on
        ``InvalidTag`` the buffer is zeroed. ``buf`` may share memory with ``data``: in place
        (``memoryview(data)[:-16]``) or shifted (``memoryview(data)[16:]``, say)."""
    def encrypt_many(
        self,
        nonces: Sequence[BytesLike],
        messages: Sequence[BytesLike],
        associated_data: BatchAssociatedData = None,
        *,
        threads: Optional[int] = None,
    ) -> list[bytes]:
        """Encrypts every message under its nonce in one call (the library's ``seal_batch``):
        the Python overhead is paid once. ``associated_data`` is ``None``, one bytes-like
        object for every message, or a sequence with one per message. ``threads``: ``None``
        (or 0) uses one core per 256 KiB of messages, up to every core; a number uses that
        many threads. The result does not depend on it."""
    def decrypt_many(
        self,
        nonces: Sequence[BytesLike],
        messages: Sequence[BytesLike],
        associated_data: BatchAssociatedData = None,
        *,
        threads: Optional[int] = None,
    ) -> list[bytes]:
        """Decrypts every message; if any is not authentic, raises ``InvalidTag`` whose
        ``failed`` names them and whose ``results`` has the others' plaintexts."""
    def encrypt_column(
        self,
        values: ArrowColumn,
        nonce: Optional[BytesLike] = None,
        associated_data: ColumnAssociatedData = None,
        *,
        threads: Optional[int] = None,
    ) -> Any:
        """Encrypts every row of an Arrow column of binary, large binary, string, large string
        or view values, in one call with no Python object per row. Returns a
        ``pyarrow.Array`` of binary values (``large_binary`` for large input or a result over
        2 GiB); a ``pyarrow.ChunkedArray`` with the input's chunks for a stream
        (``__arrow_c_stream__``: Polars and pandas Series, chunked arrays); without pyarrow,
        an object with the Arrow PyCapsule interface. Nulls stay null; empty values are
        encrypted like any other.

        ``nonce=None``, randomized: each row gets a fresh random nonce and is
        ``nonce || ciphertext || tag`` (``Sealer``'s format). ``nonce=<12 bytes>``,
        deterministic: every row is ``ciphertext || tag`` under that nonce, so equal values
        give equal ciphertexts (joins, grouping and lookups work on the encrypted column).

        What an encrypted column still shows, in both modes: which rows are null, the row
        order, and each value's exact length (a ciphertext is 16 or 28 bytes longer).
        Deterministic columns also show which values are equal, within the column and
        across calls, columns and tables sealed with the same key and nonce; nothing more,
        because AES-GCM-SIV stays secure when a nonce repeats. And without per-row
        associated data, a row's ciphertext moved to another row (or table) still decrypts
        there: pass ``associated_data`` with one value per row that names the row (its
        primary key, say), and a moved ciphertext fails as ``InvalidTag``.

        ``associated_data``: ``None``, one bytes-like object for every row (say, the column's
        name), or an Arrow array with one value per row (not null where the value is not);
        the same must be given to ``decrypt_column``.

        Every row is counted against this key's budget (``limit_log2``, see
        ``column_usage``): a call whose rows would pass it raises ``KeyExhausted`` before any
        work. Randomized rows count as messages under random nonces, deterministic rows as
        messages under their one nonce. ``threads``: as in ``encrypt_many`` (in Spark or Dask
        tasks pass 1: the engine already runs one task per core)."""
    def decrypt_column(
        self,
        values: ArrowColumn,
        nonce: Optional[BytesLike] = None,
        associated_data: ColumnAssociatedData = None,
        *,
        threads: Optional[int] = None,
    ) -> Any:
        """Decrypts every row of a column made by ``encrypt_column`` with the same ``nonce``
        (``None`` for randomized rows) and ``associated_data``, into binary values (cast to
        string yourself: ``result.cast(pyarrow.string())``). If any row is not authentic,
        raises ``InvalidTag``: ``failed`` lists their row numbers and ``results`` is the
        result with those rows null (their bytes zeroed)."""
    @property
    def column_usage(self) -> ColumnUsage:
        """What ``encrypt_column`` has sealed under this object's key: rows under random
        nonces, rows under fixed nonces and how many nonces, the longest row in 16-byte
        blocks, and log2 of the advantage bound so far next to the limit. Per object: a key
        used by several processes (Spark or Dask workers) spends each one's budget; give
        each the ``limit_log2`` of ``worker_limit_log2``."""
    @staticmethod
    def worker_limit_log2(workers: int, *, deterministic: bool = False, limit_log2: float = -32.0) -> float:
        """The ``limit_log2`` to give each of ``workers`` processes that use one key with
        budgets of their own, so that together they stay within ``2**limit_log2``:
        ``limit_log2 - log2(workers)`` for randomized columns, whose bound grows with the
        rows, and ``limit_log2 - 2 * log2(workers)`` for deterministic ones (or a key used
        for both), whose bound grows with the square of the rows under one nonce::

            cipher = AESGCMSIV(key, limit_log2=AESGCMSIV.worker_limit_log2(64))
        """

class AESGCM:
    """AES-GCM (NIST SP 800-38D), with ``cryptography``'s ``AESGCM`` surface: 16- or 32-byte
    keys, nonces of 8 to 128 bytes (12 is the fast, recommended length). Never repeat a
    nonce under one key: a repeat reveals the XOR of two plaintexts and lets an attacker
    forge. Methods as in ``AESGCMSIV``; columns are randomized only (``encrypt_column``
    with a ``nonce`` raises ``ValueError``), and their budget is AES-GCM's random-nonce
    bound (nonce collisions: about 2**32 rows per key at the default limit), which grows
    with the square of the rows: split it between workers with ``worker_limit_log2``
    (``limit_log2 - 2 * log2(workers)``), not in proportion to them."""

    def __init__(self, key: BytesLike, backend: Optional[str] = None, *, limit_log2: float = -32.0) -> None: ...
    @staticmethod
    def generate_key(bit_length: int) -> bytes: ...
    @property
    def backend(self) -> str: ...
    def encrypt(self, nonce: BytesLike, data: BytesLike, associated_data: AssociatedData) -> bytes: ...
    def decrypt(self, nonce: BytesLike, data: BytesLike, associated_data: AssociatedData) -> bytes: ...
    def encrypt_into(
        self, nonce: BytesLike, data: BytesLike, associated_data: AssociatedData, buf: BytesLike
    ) -> int: ...
    def decrypt_into(
        self, nonce: BytesLike, data: BytesLike, associated_data: AssociatedData, buf: BytesLike
    ) -> int: ...
    def encrypt_many(
        self,
        nonces: Sequence[BytesLike],
        messages: Sequence[BytesLike],
        associated_data: BatchAssociatedData = None,
        *,
        threads: Optional[int] = None,
    ) -> list[bytes]:
        """As ``AESGCMSIV.encrypt_many``; a nonce repeated within the call raises
        ``ValueError`` (AES-GCM must never reuse a nonce under one key)."""
    def decrypt_many(
        self,
        nonces: Sequence[BytesLike],
        messages: Sequence[BytesLike],
        associated_data: BatchAssociatedData = None,
        *,
        threads: Optional[int] = None,
    ) -> list[bytes]: ...
    def encrypt_column(
        self,
        values: ArrowColumn,
        nonce: None = None,
        associated_data: ColumnAssociatedData = None,
        *,
        threads: Optional[int] = None,
    ) -> Any: ...
    def decrypt_column(
        self,
        values: ArrowColumn,
        nonce: None = None,
        associated_data: ColumnAssociatedData = None,
        *,
        threads: Optional[int] = None,
    ) -> Any: ...
    @property
    def column_usage(self) -> ColumnUsage: ...
    @staticmethod
    def worker_limit_log2(workers: int, *, deterministic: bool = False, limit_log2: float = -32.0) -> float:
        """The ``limit_log2`` to give each of ``workers`` processes sharing one key:
        ``limit_log2 - 2 * log2(workers)`` (``deterministic=True`` raises ``ValueError``)."""

class Sealer:
    """AES-GCM-SIV with a random 96-bit nonce per message and a usage budget: each ``seal``
    is counted (thread-safely), and one that would take the random-nonce advantage bound
    past ``2**limit_log2`` raises ``KeyExhausted`` before any work. ``seal`` returns
    ``nonce || ciphertext || tag``."""

    def __init__(self, key: BytesLike, limit_log2: float = -32.0) -> None: ...
    def seal(self, data: BytesLike, associated_data: AssociatedData = None) -> bytes: ...
    def open(self, sealed: BytesLike, associated_data: AssociatedData = None) -> bytes: ...
    @property
    def usage(self) -> Tuple[int, int, int]:
        """(messages, blocks, longest message in blocks) sealed so far."""
    @property
    def bound_log2(self) -> float: ...

class Bound:
    """An AES-GCM-SIV advantage bound (Gueron, Langley, Lindell): its terms and their sum."""

    @property
    def log2(self) -> float: ...
    @property
    def terms(self) -> list[Tuple[str, str, float]]:
        """(name, formula, log2) of every term."""
    @property
    def dominant(self) -> Optional[str]: ...
    @property
    def exceeds_length_limit(self) -> bool:
        """Messages over RFC 8452's 2**36 bytes: then no bound applies."""
    def within(self, limit_log2: float = -32.0) -> bool: ...

def nonce_bound(nonces: float, per_nonce: float, max_bytes: int) -> Bound:
    """The bound for ``nonces`` distinct nonces, each encrypting at most ``per_nonce``
    messages of at most ``max_bytes`` bytes. Counts must be finite and >= 0
    (``ValueError``)."""

def random_nonce_bound(messages: float, max_bytes: int) -> Bound:
    """The bound for ``messages`` messages of at most ``max_bytes`` bytes under random
    96-bit nonces. ``messages`` must be finite and >= 0 (``ValueError``)."""

def backend() -> str:
    """The backend new ciphers use on this CPU: "avx512", "vaes", "aesni", "armv8" or "portable"."""

def available_backends() -> list[str]:
    """Every backend this CPU can run."""

def encrypt_file(
    src: StrPath,
    dst: StrPath,
    key: BytesLike,
    *,
    chunk_size: int = 262144,
    key_size: Optional[int] = None,
    threads: int = 0,
    overwrite: bool = False,
    aes128: bool = False,
) -> int:
    """Encrypts ``src`` into a new file ``dst`` in the combsiv stream format (what
    ``combsiv encrypt -k KEYFILE`` writes) under a 32-byte master key; returns the plaintext
    length. ``key_size`` is the AES key size in bits, 128 or 256 (the default), as
    ``generate_key(bit_length)`` takes it; ``aes128=True`` is the older spelling of
    ``key_size=128``. Runs on all cores without the GIL. ``dst`` is written as the CLI writes it: a
    private (0600) temporary file beside it, fsynced and renamed (``overwrite``) or linked
    into place only when complete, so a failure leaves the old ``dst``; ``src`` itself as
    ``dst`` raises ``ValueError``, an existing ``dst`` without ``overwrite``
    ``FileExistsError``, a device is written in place, and a ``src`` that changes while it is
    read raises ``OSError`` (no output is kept)."""

def decrypt_file(
    src: StrPath, dst: StrPath, key: BytesLike, *, threads: int = 0, overwrite: bool = False
) -> int:
    """Decrypts a combsiv file (key-file encrypted) into ``dst``, written as ``encrypt_file``
    writes; raises ``InvalidTag`` for a wrong key or damaged data, and then leaves ``dst`` as
    it was (absent, or the old file): never unverified plaintext."""

def load_key_file(path: StrPath, *, allow_insecure: bool = False) -> bytes:
    """The 32-byte master key in a key file made by ``combsiv keygen``, read as the CLI reads
    one: at most 4 KiB (``ValueError``), and unless ``allow_insecure`` only a file no other
    user may read or write and that belongs to this user or root (``PermissionError``)."""

class EncryptedFile(io.RawIOBase):
    """The plaintext of an encrypted file (either format), read at any offset: a read-only,
    seekable binary file. The final chunk was authenticated when it opened, so ``size`` and
    seeks from the end are trustworthy; a read decrypts only the chunks it covers and raises
    ``InvalidTag`` if one of them was changed (other reads still work)."""

    @property
    def size(self) -> int:
        """The plaintext length in bytes."""
    def readinto(self, buffer: BytesLike) -> int: ...
    def seek(self, offset: int, whence: int = ...) -> int: ...
    def tell(self) -> int: ...
    def ciphertext_range(self, start: int, length: int) -> Tuple[int, int]:
        """The ciphertext bytes ``(start, end)`` that hold ``length`` plaintext bytes from
        ``start``: what a reader of an object store fetches (with the header and the final
        chunk, which opening reads)."""

def open_encrypted(file: Union[StrPath, BinaryIO], key: BytesLike) -> EncryptedFile:
    """Opens a file in the combsiv stream format (key-file encrypted; a path, or a binary
    file object with ``seek`` and ``read``) under its 32-byte master key for reads at any
    offset. ``InvalidTag`` for a wrong key or a truncated or damaged final chunk.

    >>> with combsiv.open_encrypted("data.cmbs", key) as f:
    ...     f.seek(-100, io.SEEK_END)
    ...     tail = f.read()
    """

def decrypt_range(
    file: Union[StrPath, BinaryIO], start: int, length: int, key: BytesLike
) -> bytes:
    """``length`` plaintext bytes from ``start`` (fewer at the end) of a combsiv file,
    decrypting only the chunks they lie in (and the final chunk, to authenticate the end)."""
